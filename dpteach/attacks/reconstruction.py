"""Dinur-Nissim reconstruction: too many too-accurate answers give the database away.

The database is a secret bit per person, d in {0,1}^n. A query is a subset S of the
people and its true answer is the subset sum d(S) = sum_{i in S} d_i; the curator adds
noise. Dinur & Nissim (2003) showed (seed 004 states the results):

* noise bounded by E on all 2^n subset answers lets an (exponential-time) attacker
  rebuild d up to 4E wrong positions (:func:`reconstruct_exhaustive`); noise n/401
  therefore leaves 99% of the bits exposed;
* noise o(sqrt(n)) on about n log^2 n *random* subset queries is also blatantly
  non-private, and the attack is an efficient linear program (:func:`reconstruct_lp`);
  least squares (:func:`reconstruct_lsq`) works as well against Gaussian noise.

Dwork, McSherry & Talwar (2007) analyse the L1 (LP) decoder; Dwork & Roth (2014) section
8.1 presents both attacks. Taught in notebook 03.
"""

from __future__ import annotations

import math

import numpy as np

from .._support.validate import (Bits, PositiveInt, Real, Rng, Using, Values, checked, valid_bits,
                                 valid_positive_int, valid_real, valid_rng, valid_values)
from .._support.lazy import lazy_module
from ..mechanisms import laplace_mechanism

# the solvers (and scipy.linalg, threadpoolctl) load when an attack first solves
_solvers = lazy_module("dpteach.attacks._solvers")

__all__ = ["random_subset_queries", "answer_queries", "noisy_answers", "reconstruct_lsq", "textbook_lp",
           "reconstruct_lp", "lp_decode", "LPResult", "subset_sums", "bounded_noise_answers",
           "decoy_answers", "consistent_candidates", "reconstruct_exhaustive", "fraction_agree",
           "phase_transition", "exhaustive_sweep", "RandomQuerySweep", "dp_defence_sweep"]

MAX_EXHAUSTIVE_N = 24


# ----------------------------------------------------------------------------- queries
@checked(m=PositiveInt(), n=PositiveInt(), rng=Rng())
def random_subset_queries(m, n, *, rng=None) -> np.ndarray:
    """An m x n 0/1 matrix (int8): row j is a random subset, each person in with
    probability 1/2 independently (Dinur & Nissim 2003, the random-query attack)."""
    return rng.integers(0, 2, size=(m, n), dtype=np.int8)


def _valid_queries(queries, name="queries") -> np.ndarray:
    if isinstance(queries, (str, bytes)):
        raise TypeError(f"{name} must be a 0/1 matrix, got a string")
    q = np.asarray(queries)
    if q.ndim != 2:
        raise ValueError(f"{name} must be a two-dimensional m x n matrix, got shape {q.shape}")
    if q.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {q.shape}")
    if q.dtype.kind == "b":
        return q.astype(np.int8)
    if q.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a 0/1 matrix, got dtype {q.dtype}")
    if q.dtype != np.int8:
        bad = (q != 0) & (q != 1)
        if bad.any():
            raise ValueError(f"{name} must contain only 0 and 1, got {q[bad].flat[0]!r}")
        q = q.astype(np.int8)
    elif ((q != 0) & (q != 1)).any():
        raise ValueError(f"{name} must contain only 0 and 1")
    return q


def _valid_answers(answers, m, name="answers") -> np.ndarray:
    a = valid_values(answers, name)
    if a.ndim != 1 or a.shape[0] != m:
        raise ValueError(f"{name} must be a vector of {m} answers (one per query row), "
                         f"got shape {a.shape}")
    return a


@checked(queries=Using(_valid_queries), secret=Bits())
def answer_queries(queries, secret) -> np.ndarray:
    """The exact answers Q d: for each query row, how many selected people have bit 1."""
    if secret.ndim != 1 or secret.shape[0] != queries.shape[1]:
        raise ValueError(f"secret must have one bit per query column ({queries.shape[1]}), "
                         f"got shape {secret.shape}")
    return queries.astype(np.int64) @ secret.astype(np.int64)


def _valid_noise(noise, name):
    if noise not in ("gaussian", "laplace", "uniform"):
        raise ValueError(f"{name} must be 'gaussian', 'laplace' or 'uniform', got {noise!r}")
    return noise


@checked(scale=Real(low=0.0), rng=Rng(), noise=Using(_valid_noise))
def noisy_answers(queries, secret, scale, *, noise="gaussian", rng=None) -> np.ndarray:
    """Q d plus independent noise per answer: ``"gaussian"`` N(0, scale^2),
    ``"laplace"`` Lap(scale) (the kit's Laplace mechanism with b = scale: for these
    counts, of sensitivity 1, epsilon = 1/scale per answer) or ``"uniform"``
    U(-scale, scale) (noise bounded by scale)."""
    exact = answer_queries(queries, secret).astype(float)
    if noise == "laplace":
        return laplace_mechanism(exact, scale, 1.0, rng=rng)
    if noise == "gaussian":
        return exact + rng.normal(0.0, scale, size=exact.shape)
    return exact + rng.uniform(-scale, scale, size=exact.shape)             # noise == "uniform"


@checked(guess=Bits(), secret=Bits())
def fraction_agree(guess, secret) -> float:
    """The fraction of positions where two bit vectors agree."""
    if guess.shape != secret.shape:
        raise ValueError(f"guess and secret must have the same shape, got {guess.shape} and "
                         f"{secret.shape}")
    return float(np.mean(guess == secret))


# ------------------------------------------------------------------------ least squares
@checked(queries=Using(_valid_queries))
def reconstruct_lsq(queries, answers) -> np.ndarray:
    """Least-squares reconstruction, rounded: x = argmin ||Q x - a||_2, then bit i is 1
    when x_i >= 1/2.

    x solves the normal equations (Q^T Q) x = Q^T a. Against Gaussian noise of standard
    deviation sigma with m random queries each estimate has an error of standard
    deviation about 2 sigma / sqrt(m - n) (the mean of an inverse Wishart matrix); with
    m = 4n that is 2 sigma / sqrt(3n), so noise well below sqrt(n) exposes almost every
    bit (notebook 03). How the equations are solved (an exact Gram matrix and Cholesky;
    for large Q, preconditioned conjugate gradients) is in ``_solvers.py``.
    """
    a = _valid_answers(answers, queries.shape[0])       # one answer per query
    x = _solvers.lsq_cg(queries, a) if queries.size >= _solvers.CG_MIN_SIZE else None
    if x is None:                       # small Q, or conjugate gradients did not converge
        x = _solvers.lsq_gram(queries, a)
    return (x >= 0.5).astype(np.int8)


# --------------------------------------------------------------------------- L1 decoding
#   primal (P):  min  ||a - Q x||_1            over 0 <= x <= 1
#   dual   (D):  max  a^T y - sum_i max(0, (Q^T y)_i)   over -1 <= y <= 1
# For every x in the box and y in [-1,1]^m, D(y) <= min P <= P(x) (weak duality:
# ||r||_1 >= y^T r and -(Q^T y)^T x >= -sum_i max(0, (Q^T y)_i)), so a pair (x, y) with
# P(x) = D(y) proves x optimal. That pair is the certificate every solve returns.

def reconstruct_lp(queries, answers, *, solver="highs") -> np.ndarray:
    """LP (L1) decoding, rounded: x = argmin_{0 <= x <= 1} ||Q x - a||_1, bit i = [x_i >= 1/2].

    Dinur & Nissim (2003) use a feasibility LP; the L1 objective (Dwork, McSherry & Talwar
    2007) needs no noise bound and survives a constant fraction of arbitrarily wrong
    answers. Solved to optimality by :func:`lp_decode` (scipy's HiGHS by default;
    ``solver="ipm"`` for n in the thousands). Notebook 03.
    """
    return lp_decode(queries, answers, solver=solver).bits


def _valid_solver(solver, name):
    if not isinstance(solver, str) or solver not in ("highs", "ipm"):
        raise ValueError(f"{name} must be 'highs' or 'ipm', got {solver!r}")
    return solver


@checked(queries=Using(_valid_queries), tol=Real(low=0.0, low_open=True),
         max_iter=PositiveInt(), solver=Using(_valid_solver))
def lp_decode(queries, answers, *, solver="highs", tol=1e-10, max_iter=100) -> LPResult:
    """Solve the L1-decoding LP and certify the answer; returns an :class:`LPResult`.

    ``solver="highs"`` hands the dual (D) to ``scipy.optimize.linprog(method="highs")``
    as an LP in (y, t): max a^T y - sum(t) s.t. Q^T y <= t, t >= 0, -1 <= y <= 1. Its n
    constraints' multipliers are the primal x. HiGHS solves this form faster than the
    primal ones (the equality form of :func:`textbook_lp`, or variables (x, e) with
    -e <= Qx - a <= e); benchmarks/bench_reconstruction.py times all three.
    ``solver="ipm"`` uses a specialised interior-point method (``_solvers.py``) that
    stops at a relative gap ``tol`` or after ``max_iter`` iterations; it is for n = 1000
    and more (benchmarks/bench_reconstruction.py).
    """
    from scipy import optimize
    m, n = queries.shape
    a = _valid_answers(answers, m)              # one answer per query
    if solver == "highs":
        qf = queries.astype(np.float64)
        res = optimize.linprog(np.concatenate([-a, np.ones(n)]),        # minimise -D
                               A_ub=np.hstack([qf.T, -np.eye(n)]), b_ub=np.zeros(n),
                               bounds=[(-1.0, 1.0)] * m + [(0.0, None)] * n, method="highs")
        if res.status != 0:  # pragma: no cover - (D) is always feasible and bounded
            raise RuntimeError(f"HiGHS failed: {res.message}")
        y, x = res.x[:m], -res.ineqlin.marginals
        return LPResult(queries, a, x, y, res.nit, f"HiGHS: {res.message}")
    x, y, iterations = _solvers.ipm_l1_decode(queries, a, tol, max_iter)       # solver == "ipm"
    return LPResult(queries, a, x, y, iterations, "interior point")


class LPResult:
    """A solved L1-decoding LP with its certificate.

    ``x`` in [0,1]^n and its rounding ``bits``; ``y`` in [-1,1]^m; ``primal`` = P(x) =
    ||a - Q x||_1 and ``dual`` = D(y), both recomputed here from x and y, so the optimum
    lies in [dual, primal] whatever the solver did; ``gap`` = primal - dual (>= 0, up to
    rounding); ``iterations`` and ``message`` come from the solver.
    """

    def __init__(self, q, a, x, y, iterations, message):
        qf = q.astype(np.float64)
        self.x = np.clip(x, 0.0, 1.0)
        self.y = np.clip(y, -1.0, 1.0)
        self.bits = (self.x >= 0.5).astype(np.int8)
        self.primal = float(np.abs(a - qf @ self.x).sum())
        self.dual = float(a @ self.y - np.maximum(qf.T @ self.y, 0.0).sum())
        self.gap = self.primal - self.dual
        self.iterations = int(iterations)
        self.message = message

    @property
    def relative_gap(self) -> float:
        return self.gap / max(1.0, abs(self.primal))

    def __repr__(self):
        return (f"LPResult(primal={self.primal:.10g}, gap={self.gap:.3g}, "
                f"iterations={self.iterations})")


@checked(queries=Using(_valid_queries))
def textbook_lp(queries, answers):
    """The primal (P) as it is usually written, solved by scipy's HiGHS: returns
    (x, optimal value) of ``min sum(u + v)  s.t.  Q x + u - v = a,  0 <= x <= 1,
    u, v >= 0``. A second formulation, used by the tests and notebook 03 to cross-check
    :func:`lp_decode`.
    """
    from scipy import optimize, sparse
    m, n = queries.shape
    a = _valid_answers(answers, m)              # one answer per query
    c = np.concatenate([np.zeros(n), np.ones(2 * m)])
    eye = sparse.identity(m, format="csr")
    a_eq = sparse.hstack([sparse.csr_matrix(queries.astype(np.float64)), eye, -eye], format="csr")
    bounds = [(0.0, 1.0)] * n + [(0.0, None)] * (2 * m)
    res = optimize.linprog(c, A_eq=a_eq, b_eq=a, bounds=bounds, method="highs")
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"HiGHS failed: {res.message}")
    return res.x[:n], float(res.fun)


# ------------------------------------------------------------------ all 2^n subsets
def _popcount_swar(x):
    """Set bits of each uint32 entry by the classic shift-and-mask sum (numpy < 2.0 has
    no ``np.bitwise_count``); returns uint8 like it."""
    x = np.asarray(x, dtype=np.uint32)
    x = x - ((x >> np.uint32(1)) & np.uint32(0x55555555))
    x = (x & np.uint32(0x33333333)) + ((x >> np.uint32(2)) & np.uint32(0x33333333))
    x = (x + (x >> np.uint32(4))) & np.uint32(0x0F0F0F0F)
    return ((x * np.uint32(0x01010101)) >> np.uint32(24)).astype(np.uint8)


_popcount = getattr(np, "bitwise_count", _popcount_swar)


def _valid_small_secret(secret, name):
    d = valid_bits(secret, name)
    if d.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {d.shape}")
    if d.shape[0] > MAX_EXHAUSTIVE_N:
        raise ValueError(f"{name} must have at most {MAX_EXHAUSTIVE_N} bits for all 2^n "
                         f"subsets, got {d.shape[0]}")
    return d


@checked(secret=Using(_valid_small_secret))
def subset_sums(secret) -> np.ndarray:
    """All 2^n exact subset sums of a bit vector: entry ``mask`` is the number of ones
    among the people whose bit is set in ``mask`` (person i <-> bit i). n <= 24."""
    n = secret.shape[0]
    code = int(sum(int(b) << i for i, b in enumerate(secret)))
    masks = np.arange(1 << n, dtype=np.uint32)
    return _popcount(masks & np.uint32(code)).astype(np.int64)


@checked(noise_bound=Real(low=0.0, high=1e300), rng=Rng())
def bounded_noise_answers(secret, noise_bound, *, rng=None) -> np.ndarray:
    """All 2^n subset sums, each plus independent U(-E, E) noise (noise bounded by E)."""
    exact = subset_sums(secret).astype(float)
    return exact + rng.uniform(-noise_bound, noise_bound, size=exact.shape)


@checked(secret=Bits(), noise_bound=Real(low=0.0, high=1e300), rng=Rng())
def decoy_answers(secret, noise_bound, *, rng=None):
    """Adversarial bounded noise: answers steered towards a decoy database.

    The decoy differs from the secret in floor(2E) ones turned to zeros and floor(2E)
    zeros turned to ones (as many as exist; chosen at random), so it is up to 4E
    positions away. Every answer is moved from the truth towards the decoy's subset sum
    by at most E. Then the decoy is consistent with all answers within E, so the
    consistent-candidate attack can end up 4E positions off (its 4E bound is tight for
    that attack), and any attacker is at least 2E off in one of the two worlds (secret or
    decoy) that these answers cannot tell apart (notebook 03). Returns (answers, decoy).
    """
    d, e = secret, noise_bound
    k = int(math.floor(2 * e + 1e-12))
    ones = np.flatnonzero(d == 1)
    zeros = np.flatnonzero(d == 0)
    decoy = d.copy()
    decoy[rng.permutation(ones)[: min(k, ones.size)]] = 0
    decoy[rng.permutation(zeros)[: min(k, zeros.size)]] = 1
    exact = subset_sums(d).astype(float)
    diff = subset_sums(decoy) - exact
    return exact + np.clip(diff, -e, e), decoy


def _valid_subset_answers(subset_answers, name):
    a = valid_values(subset_answers, name)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (length 2^n), got shape {a.shape}")
    size = a.shape[0]
    if size & (size - 1):
        raise ValueError(f"{name} must have length 2^n (one answer per subset), "
                         f"got length {size}")
    n = _people(a)
    if n > MAX_EXHAUSTIVE_N:
        raise ValueError(f"{name} has 2^{n} entries; at most n = {MAX_EXHAUSTIVE_N} "
                         f"people are supported")
    if n == 0:
        raise ValueError(f"{name} must have length 2^n with n >= 1, got length 1")
    return a


def _people(subset_answers):
    """n, for the 2^n answers of all subsets of n people."""
    return subset_answers.shape[0].bit_length() - 1


def _valid_few_subset_answers(subset_answers, name):
    a = _valid_subset_answers(subset_answers, name)
    if _people(a) > 14:
        raise ValueError(f"consistent_candidates lists every candidate; n must be <= 14, "
                         f"got {_people(a)}")
    return a


def _half_survivors(answers_half, k, e, slack):
    """Candidates c on k people (as integer masks) with |c(S) - a(S)| <= E for every
    subset S of those k people."""
    cands = np.arange(1 << k, dtype=np.uint32)
    subsets = np.arange(1 << k, dtype=np.uint32)
    keep = np.ones(cands.size, dtype=bool)
    block = max(1, (1 << 22) >> k)
    for start in range(0, cands.size, block):
        c = cands[start:start + block]
        sums = _popcount(c[:, None] & subsets[None, :])
        keep[start:start + block] = (np.abs(sums - answers_half[None, :]) <= e + slack).all(axis=1)
    return cands[keep]


@checked(subset_answers=Using(_valid_few_subset_answers), noise_bound=Real(low=0.0, high=1e300))
def consistent_candidates(subset_answers, noise_bound) -> np.ndarray:
    """Every database c in {0,1}^n with |c(S) - a(S)| <= E for all 2^n subsets S
    (a k x n array of bits; person i is bit i of the mask). For small n (at most 14):
    it filters the two halves first, then checks every surviving pair."""
    n = _people(subset_answers)
    found = [c for c in _consistent_codes(subset_answers, n, noise_bound, first_only=False)]
    return _codes_to_bits(np.array(found, dtype=np.int64), n)


def _codes_to_bits(codes, n):
    codes = np.asarray(codes, dtype=np.int64).reshape(-1)
    return ((codes[:, None] >> np.arange(n)) & 1).astype(np.int8)


def _consistent_codes(a, n, e, *, first_only):
    """Yield integer masks of the candidates consistent with every answer within E.

    Split the people into a low half A (bits 0..ka-1) and a high half B. Any consistent
    candidate is consistent on the subsets inside A and inside B, which filters each
    half alone (2^k candidates against 2^k subsets). For a surviving low half c_A the
    answers a(S_A u S_B) - c_A(S_A) must all lie within E of c_B(S_B), so each S_B
    gives an interval [max_SA(...) - E, min_SA(...) + E] for c_B(S_B); the surviving
    high halves are checked against those 2^kb intervals at once. Never 4^n pairs.
    """
    slack = 1e-9 * max(1.0, e, float(np.abs(a).max()))
    ka = (n + 1) // 2
    kb = n - ka
    table = a.reshape(1 << kb, 1 << ka)              # table[S_B, S_A]
    surv_a = _half_survivors(table[0], ka, e, slack)
    surv_b = _half_survivors(table[:, 0], kb, e, slack) if kb else np.zeros(1, np.uint32)
    if surv_a.size == 0 or surv_b.size == 0:
        return
    # try the low halves that fit their own answers best first
    pop_a = _popcount(surv_a[:, None] & np.arange(1 << ka, dtype=np.uint32)[None, :])
    order = np.argsort(np.abs(pop_a - table[0][None, :]).max(axis=1), kind="stable")
    subsets_b = np.arange(1 << kb, dtype=np.uint32)
    sums_b = _popcount(surv_b[:, None] & subsets_b[None, :])   # (|surv_b|, 2^kb)
    for idx in order:
        ca = surv_a[idx]
        resid = table - pop_a[idx][None, :]                      # a(S) - c_A(S_A)
        lo = resid.max(axis=1) - e - slack
        hi = resid.min(axis=1) + e + slack
        if (lo > hi).any():
            continue
        ok = ((sums_b >= lo[None, :]) & (sums_b <= hi[None, :])).all(axis=1)
        for cb in surv_b[ok]:
            yield int(ca) | (int(cb) << ka)
            if first_only:
                return


@checked(subset_answers=Using(_valid_subset_answers), noise_bound=Real(low=0.0, high=1e300))
def reconstruct_exhaustive(subset_answers, noise_bound) -> np.ndarray:
    """Dinur & Nissim's exhaustive attack: return a database c in {0,1}^n whose subset
    sums are all within E of the answers, |c(S) - a(S)| <= E for all 2^n subsets S.

    ``subset_answers[mask]`` answers the subset whose bit i is set when person i is in it
    (length 2^n, n <= 24). If every answer is within E of the truth d, then c and d
    differ in at most 4E positions: on S1 = {c=1, d=0} both are within E of one answer,
    so |S1| = c(S1) - d(S1) <= 2E, and likewise for S0 = {c=0, d=1} (Dinur & Nissim
    2003; seed 004). In particular E < 1/2 recovers d exactly, and E = n/401 leaves fewer
    than 1% of the bits wrong. The candidates are filtered half by half (see
    ``_consistent_codes``), so n = 20 takes a fraction of a second, not 4^20 comparisons.
    Raises ValueError if no candidate fits, i.e. the noise exceeded E.
    """
    n = _people(subset_answers)
    for code in _consistent_codes(subset_answers, n, noise_bound, first_only=True):
        return _codes_to_bits([code], n)[0]
    raise ValueError(f"no database is consistent with every answer within "
                     f"noise_bound={noise_bound:g}: "
                     f"the noise must have been larger than the stated bound")


# ------------------------------------------------------------------- phase transition
def _valid_ns(ns, name):
    return [valid_positive_int(k, name) for k in np.atleast_1d(ns)]


def _valid_ratios(ratios, name):
    ratios = valid_values(ratios, name)
    if (ratios < 0).any():
        raise ValueError(f"{name} must be >= 0")
    return ratios


def _valid_method(method, name):
    if method not in ("lsq", "lp"):
        raise ValueError(f"{name} must be 'lsq' or 'lp', got {method!r}")
    return method


@checked(ns=Using(_valid_ns), ratios=Using(_valid_ratios), queries_per_person=PositiveInt(),
         trials=PositiveInt(maximum=10 ** 4), prevalence=Real(low=0.0, high=1.0),
         method=Using(_valid_method), rng=Rng())
def phase_transition(ns, ratios, *, queries_per_person=4, method="lsq", trials=3,
                     prevalence=0.5, rng=None, progress=None):
    """Fraction of bits recovered against the noise, for several database sizes.

    For each n in ``ns`` and each ratio r in ``ratios``: a random secret (ones with
    probability ``prevalence``), m = queries_per_person * n random subset queries, answers
    with Gaussian noise of standard deviation sigma = r * sqrt(n), reconstruction by
    ``method`` ("lsq" or "lp"); the mean fraction of agreeing bits over ``trials`` runs.
    Returns a pandas DataFrame (columns n, ratio, sigma, fraction). ``progress`` may wrap
    the loop (e.g. dpteach.notebook.progress). Notebook 03 plots it.
    """
    import pandas as pd

    solver = reconstruct_lsq if method == "lsq" else reconstruct_lp
    jobs = [(n, r) for n in ns for r in ratios]
    rows = []
    for n, r in (progress(jobs) if progress else jobs):
        fr = []
        for _ in range(trials):
            d = (rng.random(n) < prevalence).astype(np.int8)
            qm = random_subset_queries(queries_per_person * n, n, rng=rng)
            ans = noisy_answers(qm, d, r * math.sqrt(n), rng=rng)
            fr.append(fraction_agree(solver(qm, ans), d))
        rows.append((n, float(r), float(r * math.sqrt(n)), float(np.mean(fr))))
    return pd.DataFrame(rows, columns=["n", "ratio", "sigma", "fraction"])


def _valid_grid(grid, name):
    return [valid_real(e, name, low=0.0, high=1e300) for e in valid_values(grid, name).ravel()]


@checked(n=PositiveInt(maximum=MAX_EXHAUSTIVE_N), grid=Using(_valid_grid), rng=Rng())
def exhaustive_sweep(n, grid, *, rng=None):
    """For each E: the worst Hamming distance to the truth among all databases consistent
    with (a) answers steered to a decoy and (b) uniform noise in [-E, E]; and how many
    databases are consistent (notebook 03's exhaustive panel).
    Returns three arrays over ``grid``: worst_decoy, worst_uniform, count_decoy."""
    d = (rng.random(n) < 0.5).astype(np.int8)
    worst_decoy, worst_unif, count_decoy = [], [], []
    for e in grid:
        answers, _ = decoy_answers(d, e, rng=rng)
        cands = consistent_candidates(answers, e)
        worst_decoy.append(int((cands != d).sum(axis=1).max()))
        count_decoy.append(len(cands))
        cands = consistent_candidates(bounded_noise_answers(d, e, rng=rng), e)
        worst_unif.append(int((cands != d).sum(axis=1).max()))
    return np.array(worst_decoy), np.array(worst_unif), np.array(count_decoy)


class RandomQuerySweep:
    """One population, one stream of m = max(per_person)·n random queries and one
    Gaussian noise vector (from ``rng``); the m/n = q setting uses the first q·n of them.
    Each m/n (``per_person[i]``) is swept over every σ/√n in ``ratios`` once, when first
    asked for (16 solves, about 40 ms): ``fraction(i)[method][j]`` (share of bits LP
    decoding or least squares recovers) and ``guess(i, method, j)``. Notebook 03."""

    def __init__(self, n, ratios, per_person, *, rng=None):
        n = valid_positive_int(n, "n", maximum=10**5)
        ratios = valid_values(ratios, "ratios")
        if ratios.ndim != 1 or (ratios < 0).any():
            raise ValueError("ratios must be a 1-D list of noise ratios sigma/sqrt(n) >= 0")
        per_person = [valid_positive_int(q, "per_person", maximum=100) for q in per_person]
        rng = valid_rng(rng)
        self.n = n
        self.ratios, self.per_person = np.asarray(ratios, float), tuple(per_person)
        self.d = (rng.random(n) < 0.5).astype(np.int8)
        self.base = rng.standard_normal(max(self.per_person) * n)
        self.queries = random_subset_queries(max(self.per_person) * n, n, rng=rng)
        self.exact = answer_queries(self.queries, self.d).astype(float)
        self._done = {}

    def _sweep(self, i):
        if i not in self._done:
            rows = self.per_person[i] * self.n
            q = self.queries[:rows]
            frac = {"lsq": np.zeros(len(self.ratios)), "lp": np.zeros(len(self.ratios))}
            guesses = {}
            for j, r in enumerate(self.ratios):
                a = self.exact[:rows] + r * np.sqrt(self.n) * self.base[:rows]
                for method, fn in (("lsq", reconstruct_lsq), ("lp", reconstruct_lp)):
                    # at m >= 4n the interior-point path is the faster one (m = 8n: 10 ms
                    # against HiGHS's 16 ms per solve), which keeps a first move in budget
                    g = fn(q, a, solver="ipm") if method == "lp" and rows >= 4 * self.n else fn(q, a)
                    guesses[method, j] = g
                    frac[method][j] = np.mean(g == self.d)
            self._done[i] = frac, guesses
        return self._done[i]

    def fraction(self, i):
        return self._sweep(i)[0]

    def guess(self, i, method, j):
        return self._sweep(i)[1][method, j]


@checked(n=PositiveInt(maximum=10**5), m=PositiveInt(maximum=10**6),
         trials=PositiveInt(maximum=10**4), prevalence=Real(low=0.0, high=1.0),
         log_epsilons=Values(), rng=Rng())
def dp_defence_sweep(n, m, trials, prevalence, log_epsilons, *, rng=None):
    """Fraction recovered by least squares when each of m counting queries is answered
    with Lap(m/ε) (a total budget ε split evenly; each count has sensitivity 1).

    The least-squares estimate is linear in the answers, so for answers exact + s·z
    (z unit Laplace noise, s = m/ε) it is x_exact + s·x_z: two solves per population
    serve every ε on the grid; bit i is guessed 1 when the estimate is >= 1/2, as in
    :func:`reconstruct_lsq`. ε runs over 10**log_epsilons. Returns (mean fraction per ε,
    the first population, its guesses per ε). Notebook 03's defence panel."""
    log_epsilons = log_epsilons.ravel()
    fr = np.zeros((len(log_epsilons), trials))
    scales = m / 10.0 ** log_epsilons
    for t in range(trials):
        d = (rng.random(n) < prevalence).astype(np.int8)
        q = random_subset_queries(m, n, rng=rng)
        exact = answer_queries(q, d).astype(float)
        z = laplace_mechanism(0.0, 1.0, 1.0, rng=rng, size=m)   # unit Laplace noise
        x = _solvers.lsq_gram(q, np.column_stack([exact, z]))  # reconstruct_lsq's normal equations
        guesses = (x[:, 0] + scales[:, None] * x[:, 1] >= 0.5).astype(np.int8)
        fr[:, t] = np.mean(guesses == d, axis=1)
        if t == 0:
            d0, shown = d, list(guesses)
    return fr.mean(axis=1), d0, shown
