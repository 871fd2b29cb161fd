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

import contextlib
import math
import os
import warnings

import numpy as np
from scipy import linalg
from threadpoolctl import ThreadpoolController

from .._checks import (check_bits, check_positive_int, check_real,
                       check_rng, check_values)

__all__ = ["random_subset_queries", "answer_queries", "noisy_answers", "reconstruct_lsq", "textbook_lp",
           "reconstruct_lp", "lp_decode", "LPResult", "subset_sums", "bounded_noise_answers",
           "decoy_answers", "consistent_candidates", "reconstruct_exhaustive", "fraction_agree",
           "phase_transition"]

MAX_EXHAUSTIVE_N = 24
_ROW_DROP = 1e-6
_ROW_DROP_REFINED = 1e-8
_REFINE_MAX = 8


# ----------------------------------------------------------------------------- queries
def random_subset_queries(m, n, *, rng=None) -> np.ndarray:
    """An m x n 0/1 matrix (int8): row j is a random subset, each person in with
    probability 1/2 independently (Dinur & Nissim 2003, the random-query attack)."""
    m = check_positive_int(m, "m")
    n = check_positive_int(n, "n")
    rng = check_rng(rng)
    return rng.integers(0, 2, size=(m, n), dtype=np.int8)


def _check_queries(queries, name="queries") -> np.ndarray:
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


def _check_answers(answers, m, name="answers") -> np.ndarray:
    a = check_values(name, answers)
    if a.ndim != 1 or a.shape[0] != m:
        raise ValueError(f"{name} must be a vector of {m} answers (one per query row), "
                         f"got shape {a.shape}")
    return a


def answer_queries(queries, secret) -> np.ndarray:
    """The exact answers Q d: for each query row, how many selected people have bit 1."""
    q = _check_queries(queries)
    d = check_bits(secret, "secret")
    if d.ndim != 1 or d.shape[0] != q.shape[1]:
        raise ValueError(f"secret must have one bit per query column ({q.shape[1]}), "
                         f"got shape {d.shape}")
    return q.astype(np.int64) @ d.astype(np.int64)


def noisy_answers(queries, secret, scale, *, noise="gaussian", rng=None) -> np.ndarray:
    """Q d plus independent noise per answer: ``"gaussian"`` N(0, scale^2),
    ``"laplace"`` Lap(scale) or ``"uniform"`` U(-scale, scale) (noise bounded by scale)."""
    exact = answer_queries(queries, secret).astype(float)
    scale = check_real("scale", scale, low=0.0)
    rng = check_rng(rng)
    if noise == "gaussian":
        z = rng.normal(0.0, scale, size=exact.shape)
    elif noise == "laplace":
        z = rng.laplace(0.0, scale, size=exact.shape)
    elif noise == "uniform":
        z = rng.uniform(-scale, scale, size=exact.shape)
    else:
        raise ValueError(f"noise must be 'gaussian', 'laplace' or 'uniform', got {noise!r}")
    return exact + z


def fraction_agree(guess, secret) -> float:
    """The fraction of positions where two bit vectors agree."""
    g = check_bits(guess, "guess")
    d = check_bits(secret, "secret")
    if g.shape != d.shape:
        raise ValueError(f"guess and secret must have the same shape, got {g.shape} and {d.shape}")
    return float(np.mean(g == d))


# ------------------------------------------------------------------------ least squares
def reconstruct_lsq(queries, answers) -> np.ndarray:
    """Least-squares reconstruction, rounded: x = argmin ||Q x - a||_2, then bit i is 1
    when x_i >= 1/2.

    Solves the normal equations (Q^T Q) x = Q^T a. Small problems form the Gram matrix
    Q^T Q, exact in float32 for a 0/1 matrix (whole numbers below 2^24), and factorise
    it in float64 (Cholesky). Large ones use preconditioned conjugate gradients, which
    only multiply by Q and Q^T: writing Q = C + 1 mu^T (mu the column means),
    Q^T Q = C^T C + m mu mu^T, and diag(C^T C) + m mu mu^T, inverted by the
    Sherman-Morrison formula, is an excellent preconditioner for random subset queries
    (a few dozen float64 products with Q instead of n^2 m / 2 multiply-adds).
    If the iteration stalls (unusual query matrices) the exact Gram route is used.

    Against Gaussian noise of standard deviation sigma with m random queries each
    estimate has an error of standard deviation about 2 sigma / sqrt(m - n) (the mean of
    an inverse Wishart matrix); with m = 4n that is 2 sigma / sqrt(3n), so noise well
    below sqrt(n) exposes almost every bit (notebook 03).
    """
    q = _check_queries(queries)
    m, n = q.shape
    a = _check_answers(answers, m)
    x = None
    if m * n >= _CG_MIN_SIZE:
        x = _lsq_cg(q, a)
    if x is None:
        x = _lsq_gram(q, a)
    return (x >= 0.5).astype(np.int8)


_CG_MIN_SIZE = 1_000_000


def _small(m, n):
    """Small enough that numpy's own loops beat a (possibly multithreaded) BLAS call."""
    return n * n * m <= _SMALL_WORK


_SMALL_WORK = 3_000_000


def _weighted_gram(mat):
    """mat^T mat; numpy's einsum loop for small matrices (no BLAS thread start-up),
    BLAS (syrk) for large ones."""
    if _small(*mat.shape):
        return np.einsum("ji,jk->ik", mat, mat)
    return mat.T @ mat


def _lsq_gram(q, a):
    if _small(*q.shape):
        qd = q.astype(np.float64)
        gram = np.einsum("ji,jk->ik", qd, qd)       # exact integers, numpy's own loop
    else:
        qf = q.astype(np.float32)
        gram = (qf.T @ qf).astype(np.float64)       # exact integers (below 2^24)
    rhs = q.T.astype(np.float64) @ a
    try:
        return linalg.cho_solve(linalg.cho_factor(gram, check_finite=False), rhs,
                                check_finite=False)
    except linalg.LinAlgError:
        return linalg.lstsq(gram, rhs, check_finite=False)[0]


def _lsq_cg(q, a, *, rtol=1e-10, max_iter=300):
    """Preconditioned CG on Q^T Q x = Q^T a; None if it does not converge."""
    m, n = q.shape
    mu = q.mean(axis=0, dtype=np.float64)
    d = m * mu * (1.0 - mu)
    if (d <= 0).any():
        return None                  # a column that is all 0 or all 1: no preconditioner
    qf = q.astype(np.float64)
    dinv_mu = mu / d
    coef = m / (1.0 + m * (mu @ dinv_mu))

    def precond(r):
        z = r / d
        return z - dinv_mu * (coef * (mu @ z))

    x, converged = _pcg(lambda v: qf.T @ (qf @ v), precond, qf.T @ a, rtol=rtol,
                        max_iter=max_iter)
    return x if converged else None


def _pcg(apply, precond, b, *, rtol, max_iter):
    """Preconditioned conjugate gradients for apply(x) = b (symmetric positive definite),
    started from precond(b); returns (x, whether ||b - apply(x)|| <= rtol ||b||)."""
    x = precond(b)
    r = b - apply(x)
    target = rtol * np.linalg.norm(b)
    z = precond(r)
    p = z.copy()
    rz = r @ z
    for _ in range(max_iter):
        if np.linalg.norm(r) <= target or rz <= 0:
            break
        ap = apply(p)
        alpha = rz / (p @ ap)
        x += alpha * p
        r -= alpha * ap
        z = precond(r)
        rz_new = r @ z
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x, bool(np.linalg.norm(r) <= target)


# --------------------------------------------------------------------------- L1 decoding
class LPResult:
    """The L1-decoding LP solved by :func:`lp_decode`.

    ``x`` is the LP optimum in [0,1]^n, ``bits`` its rounding, ``primal`` = ||a - Q x||_1,
    ``dual`` a certified lower bound on the optimum (from a dual point y in [-1,1]^m),
    ``gap`` = primal - dual (>= 0; the optimum lies in [dual, primal]), ``iterations``.
    """

    def __init__(self, x, y, primal, dual, iterations):
        self.x = x
        self.y = y
        self.bits = (x >= 0.5).astype(np.int8)
        self.primal = float(primal)
        self.dual = float(dual)
        self.gap = float(primal - dual)
        self.iterations = int(iterations)

    @property
    def relative_gap(self) -> float:
        return self.gap / max(1.0, abs(self.primal))

    def __repr__(self):
        return (f"LPResult(primal={self.primal:.10g}, gap={self.gap:.3g}, "
                f"iterations={self.iterations})")


def _lp_objectives(qf, a, x, y):
    """Certified primal value ||a - Qx||_1 (x in the box) and dual value
    a^T y - sum_i max(0, (Q^T y)_i) (y in [-1,1]^m); every such pair brackets the optimum."""
    xb = np.clip(x, 0.0, 1.0)
    yb = np.clip(y, -1.0, 1.0)
    primal = np.abs(a - qf @ xb).sum()
    dual = a @ yb - np.maximum(qf.T @ yb, 0.0).sum()
    return primal, dual


_BLAS = []


def _blas():
    """The loaded BLAS libraries' thread pools (looked up once: it takes ~10 ms)."""
    if not _BLAS:
        _BLAS.append(ThreadpoolController().select(user_api="blas"))
    return _BLAS[0]


def _blas_threads(*, big_product=False):
    """How many threads the LP's BLAS calls should use.

    On a machine with two cores or fewer, every BLAS call but the normal matrix product
    runs on one thread: OpenBLAS's second thread gains little on a matrix-vector product
    or a 1000 x 1000 factorisation, and while it waits for work it competes with the
    interpreter for the other core (measured on a 2-core machine, n = 1000, m = 4n: 4.8 s
    with one thread throughout, 6.2 s with two). The normal matrix product is large
    enough to use both (0.19 s on one thread, 0.11 s on two). Elsewhere keep the default.
    """
    cores = os.cpu_count() or 1
    if cores > 2:
        return None
    return cores if big_product else 1


#: below this many matrix entries the BLAS calls are too small for threads to matter
_SMALL_LP = 200_000


def _blas_limit(threads):
    return contextlib.nullcontext() if threads is None else _blas().limit(limits=threads)


def lp_decode(queries, answers, *, tol=1e-10, max_iter=100) -> LPResult:
    """Solve the L1-decoding LP  min_{0 <= x <= 1} ||a - Q x||_1  to optimality.

    The LP, in the textbook equality form, is
    ``min sum(u + v)  s.t.  Q x + u - v = a,  0 <= x <= 1,  u, v >= 0``; its dual is
    ``max a^T y - sum_i max(0, (Q^T y)_i)`` over ``-1 <= y <= 1``.
    This is a primal-dual interior-point method (Mehrotra predictor-corrector, plus up to
    two of Gondzio's centrality correctors per iteration) specialised to that structure:
    the Newton system is reduced to n x n normal equations (F + Q^T E^{-1} Q) dx = rhs,
    with diagonal E (m) and F (n), never the (2m + n)-variable system a general solver
    factorises. The normal matrix is one BLAS product of the rows whose weight is not
    negligible, in float32 until the relative gap reaches 1e-4 and in float64 after that,
    when conjugate gradients on the exact system polish each direction. The method stops
    when the certified gap between ||a - Qx||_1 and the dual bound at the current y is at
    most ``tol * max(1, ||a - Qx||_1)``; near the end it also tries to guess the optimal
    vertex (a crossover) and keeps it when that certifies the optimum. The same LP
    solved by scipy's HiGHS gives the same optimum (tests and
    benchmarks/bench_reconstruction.py check this).
    """
    q = _check_queries(queries)
    m, n = q.shape
    a = _check_answers(answers, m)
    tol = check_real("tol", tol, low=0.0, low_open=True)
    max_iter = check_positive_int(max_iter, "max_iter")
    if m * n < _SMALL_LP:                 # a panel's size: thread-pool set-up would dominate
        return _lp_decode(q, a, tol, max_iter)
    with _blas_limit(_blas_threads()):
        return _lp_decode(q, a, tol, max_iter)


def _lp_decode(q, a, tol, max_iter):
    m, n = q.shape
    qf = q.astype(np.float64)
    qt = np.ascontiguousarray(qf.T)
    q32 = q.astype(np.float32)

    # A strictly feasible start: x = s = 1/2; u - v = r = a - Qx with u, v >= theta
    # (theta = mean |r|, so that u p and v q are of the size of the residuals); y = 0,
    # p = q = 1; z = w = theta (Q^T y - z + w = 0).
    x = np.full(n, 0.5)
    s = 1.0 - x
    r = a - qf @ x
    theta = max(1.0, float(np.mean(np.abs(r))))
    u = np.maximum(r, 0.0) + theta
    v = u - r
    y = np.zeros(m)
    p = 1.0 - y
    qq = 1.0 + y
    g = qt @ y
    z = np.maximum(g, 0.0) + theta
    w = z - g
    n_pairs = 2 * n + 2 * m

    best = None
    it = 0
    for it in range(1, max_iter + 1):
        primal, dual = _lp_objectives(qf, a, x, y)
        if best is None or primal - dual < best[0]:
            best = (primal - dual, x.copy(), y.copy(), primal, dual)
        rel = (primal - dual) / max(1.0, abs(primal))
        if rel <= tol:
            break
        if rel <= _CROSSOVER_FROM:
            # crossover: guess the optimal vertex from the iterate and certify it
            vertex = _crossover(qf, qt, a, x, s, w, z, u, v, p, qq)
            if vertex is not None:
                xv, yv, pv, dv_ = vertex
                if pv - dv_ < best[0]:
                    best = (pv - dv_, xv, yv, pv, dv_)
                if pv - dv_ <= tol * max(1.0, abs(pv)):
                    break
        # residuals (zero in exact arithmetic: the method starts feasible)
        rp = a - qf @ x - u + v
        rs = 1.0 - x - s
        rx = -(qt @ y - z + w)
        ru = 1.0 - y - p
        rv = 1.0 + y - qq
        mu = (x @ w + s @ z + u @ p + v @ qq) / n_pairs

        e_diag = u / p + v / qq
        f_diag = z / s + w / x
        inv_e = 1.0 / e_diag
        normal = _NormalEquations(qf, qt, q32, inv_e, f_diag, refine=rel <= _REFINE_FROM)

        def solve(c1, c2, c3, c4):
            h1 = rp - (c3 - u * ru) / p + (c4 - v * rv) / qq
            h2 = rx - c1 / x + (c2 - z * rs) / s
            dx = normal.solve(qt @ (inv_e * h1) - h2)
            dy = inv_e * (h1 - qf @ dx)
            ds = rs - dx
            dw = (c1 - w * dx) / x
            dz = (c2 - z * ds) / s
            dp = ru - dy
            dq = rv + dy
            du = (c3 - u * dp) / p
            dv = (c4 - v * dq) / qq
            return dx, ds, du, dv, dy, dw, dz, dp, dq

        # predictor (affine scaling)
        aff = solve(-x * w, -s * z, -u * p, -v * qq)
        ap, ad = (min(1.0, t) for t in _step_lengths(x, s, u, v, w, z, p, qq, aff))
        dx, ds, du, dv, dy, dw, dz, dp, dq = aff
        mu_aff = ((x + ap * dx) @ (w + ad * dw) + (s + ap * ds) @ (z + ad * dz)
                  + (u + ap * du) @ (p + ad * dp) + (v + ap * dv) @ (qq + ad * dq)) / n_pairs
        sigma = (mu_aff / mu) ** 3
        # corrector (Mehrotra): centring plus the second-order term
        cen = sigma * mu
        rhs = (cen - x * w - dx * dw, cen - s * z - ds * dz,
               cen - u * p - du * dp, cen - v * qq - dv * dq)
        step = solve(*rhs)
        ap, ad = _step_lengths(x, s, u, v, w, z, p, qq, step)
        # Gondzio's centrality correctors: each costs one more solve with the same
        # factor (cheap next to forming it) and lengthens the steps, so fewer
        # iterations -- fewer normal matrices -- are needed
        for _ in range(_CORRECTORS):
            if min(ap, ad) >= 1.0:
                break
            tp, td = min(1.0, ap + _CORRECTOR_REACH), min(1.0, ad + _CORRECTOR_REACH)
            dx, ds, du, dv, dy, dw, dz, dp, dq = step
            lo, hi = 0.1 * cen, 10.0 * cen
            extra = []
            for prim, dprim, dual_, ddual in ((x, dx, w, dw), (s, ds, z, dz), (u, du, p, dp),
                                              (v, dv, qq, dq)):
                prod = (prim + tp * dprim) * (dual_ + td * ddual)
                extra.append(np.maximum(np.clip(prod, lo, hi) - prod, -hi))
            trial_rhs = tuple(c + t for c, t in zip(rhs, extra))
            trial = solve(*trial_rhs)
            tap, tad = _step_lengths(x, s, u, v, w, z, p, qq, trial)
            if min(tap, tad) < min(ap, ad) + 0.1 * _CORRECTOR_REACH:
                break
            step, rhs, ap, ad = trial, trial_rhs, tap, tad
        ap, ad = min(1.0, 0.9995 * ap), min(1.0, 0.9995 * ad)
        dx, ds, du, dv, dy, dw, dz, dp, dq = step
        x = x + ap * dx
        s = s + ap * ds
        u = u + ap * du
        v = v + ap * dv
        y = y + ad * dy
        w = w + ad * dw
        z = z + ad * dz
        p = p + ad * dp
        qq = qq + ad * dq
    else:
        primal, dual = _lp_objectives(qf, a, x, y)
        if primal - dual < best[0]:
            best = (primal - dual, x.copy(), y.copy(), primal, dual)
    _, xb, yb, primal, dual = best
    return LPResult(np.clip(xb, 0.0, 1.0), np.clip(yb, -1.0, 1.0), primal, dual, it)


_CROSSOVER_FROM = 1e-6      # relative gap below which vertex guesses are worth a try
_REFINE_FROM = 1e-4         # relative gap below which search directions are refined
_CORRECTORS = 2             # at most this many centrality correctors per iteration
_CORRECTOR_REACH = 0.3      # each aims to lengthen the steps by this much


class _NormalEquations:
    """The interior-point normal equations (F + Q^T E^-1 Q) dx = rhs, n x n.

    The matrix is one BLAS product over the rows whose weight is not negligible next to
    the largest, factorised by Cholesky. Far from the optimum (``refine=False``) it is
    formed in float32: Q is 0/1, so only the weights are rounded, and the direction only
    steers the search (the certificate is computed in float64). Near the optimum the
    weights spread over many orders of magnitude and float32 directions stall the method
    at a relative gap of about 1e-5, so ``refine=True`` forms it in float64 (from even
    fewer rows by then) and uses the factor as the preconditioner of conjugate gradients
    on the exact system, which also restores the rows left out.
    """

    def __init__(self, qf, qt, q32, inv_e, f_diag, *, refine):
        self.qf, self.qt, self.inv_e, self.f_diag, self.refine = qf, qt, inv_e, f_diag, refine
        keep = inv_e > (_ROW_DROP_REFINED if refine else _ROW_DROP) * inv_e.max()
        self.kept = int(keep.sum())
        attempts = dict.fromkeys(((np.float64 if refine else np.float32, 0.0),
                                  (np.float64, 0.0), (np.float64, 1e-12), (np.float64, 1e-8)))
        for dtype, ridge in attempts:
            source = q32 if dtype == np.float32 else qf
            rows = source if self.kept == len(keep) else source[keep]
            scaled = rows * np.sqrt(inv_e[keep]).astype(dtype)[:, None]
            small = qf.size < _SMALL_LP
            with _blas_limit(None if small else _blas_threads(big_product=True)):
                normal = _weighted_gram(scaled)
            diag = np.diag_indices_from(normal)
            normal[diag] += f_diag.astype(dtype) + dtype(ridge) * normal[diag].max()
            try:
                self.factor = linalg.cho_factor(normal, overwrite_a=True, check_finite=False)
                return
            except linalg.LinAlgError:
                continue
        raise linalg.LinAlgError("the interior-point normal equations could not be factorised")

    def matvec(self, v):
        return self.f_diag * v + self.qt @ (self.inv_e * (self.qf @ v))

    def precondition(self, r):
        return linalg.cho_solve(self.factor, r, check_finite=False)

    def solve(self, rhs):
        if not self.refine:
            return self.precondition(rhs)
        # conjugate gradients on the exact system, preconditioned by the factor
        return _pcg(self.matvec, self.precondition, rhs, rtol=1e-12, max_iter=_REFINE_MAX)[0]


def _crossover(qf, qt, a, x, s, w, z, u, v, p, qq):
    """Guess the optimal vertex from an interior iterate; return the best certified
    (x, y, primal, dual) among a few guesses, or None.

    A vertex of the L1 LP has each x_i free, at 0 or at 1, and (without degeneracy) as
    many zero-residual answers (rows) as free x_i. Near the optimum, free x_i have both
    x_i/w_i and s_i/z_i large; zero-residual rows have max(u_j, v_j)/min(p_j, q_j) small.
    For k free variables, solving Q[Z, F] x_F = a_Z - Q[Z, U] 1 gives x; the dual point
    takes y_j = sign(r_j) off Z and solves Q[Z, F]^T y_Z = -Q[not Z, F]^T y_notZ, so that
    (Q^T y)_F = 0. Each guess is certified by its duality gap; k is tried at the two
    indicator counts and a few values between them.
    """
    m, n = qf.shape
    freeness = np.minimum(x / w, s / z)
    score = np.maximum(u, v) / np.minimum(p, qq)
    var_order = np.argsort(-freeness, kind="stable")
    row_order = np.argsort(score, kind="stable")
    k_var = int((freeness > 1.0).sum())
    k_row = int((score < 1.0).sum())
    tried = set()
    best = None
    lo, hi = sorted((k_var, k_row))
    # the true count lies between the two indicators' counts, usually; try a few
    guesses = [k_var, k_row] + list(np.unique(np.linspace(lo, hi, 8).round().astype(int)))
    for k in guesses:
        if k in tried or k < 0 or k > min(m, n):
            continue
        tried.add(k)
        free = np.zeros(n, dtype=bool)
        free[var_order[:k]] = True
        upper = ~free & (s < x)
        rows = row_order[:k]
        xv = np.where(upper, 1.0, 0.0)
        yv = np.zeros(m)
        if k:
            b = qf[np.ix_(rows, np.flatnonzero(free))]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", linalg.LinAlgWarning)
                    lu = linalg.lu_factor(b, check_finite=False)
            except (linalg.LinAlgError, ValueError):
                continue
            if not np.all(np.isfinite(lu[0])) or np.min(np.abs(np.diag(lu[0]))) < 1e-9:
                continue
            xv[free] = linalg.lu_solve(lu, a[rows] - qf[rows] @ upper.astype(float),
                                       check_finite=False)
        xv = np.clip(xv, 0.0, 1.0)
        r = a - qf @ xv
        others = np.ones(m, dtype=bool)
        others[rows] = False
        yv[others] = np.sign(r[others])
        if k:
            yv[rows] = linalg.lu_solve(lu, -(qt[free] @ yv), trans=1, check_finite=False)
        yv = np.clip(yv, -1.0, 1.0)
        primal, dual = _lp_objectives(qf, a, xv, yv)
        if best is None or primal - dual < best[2] - best[3]:
            best = (xv, yv, primal, dual)
    return best


def _step_lengths(x, s, u, v, w, z, p, qq, step):
    """The longest primal and dual steps along ``step`` that keep every variable
    non-negative (may exceed 1, or be infinite)."""
    dx, ds, du, dv, dy, dw, dz, dp, dq = step

    def longest(vals, dirs):
        neg = dirs < 0
        if not neg.any():
            return np.inf
        return float(np.min(-vals[neg] / dirs[neg]))

    ap = min(longest(x, dx), longest(s, ds), longest(u, du), longest(v, dv))
    ad = min(longest(w, dw), longest(z, dz), longest(p, dp), longest(qq, dq))
    return ap, ad


def reconstruct_lp(queries, answers) -> np.ndarray:
    """LP (L1) decoding, rounded: x = argmin_{0 <= x <= 1} ||Q x - a||_1, bit i = [x_i >= 1/2].

    Dinur & Nissim (2003) use a feasibility LP; the L1 objective (Dwork, McSherry & Talwar
    2007) needs no noise bound and survives a constant fraction of arbitrarily wrong
    answers. The LP is solved to optimality (certified duality gap <= 1e-10 relative) by
    :func:`lp_decode`, a specialised interior-point method several times faster than
    scipy.optimize.linprog(method="highs") on the same LP (notebook 03).
    """
    return lp_decode(queries, answers).bits


def textbook_lp(queries, answers):
    """The reference: the equality-form L1 LP solved by scipy's HiGHS.

    ``min sum(e+ + e-)  s.t.  Q x + e+ - e- = a,  0 <= x <= 1,  e+, e- >= 0``.
    Returns (x, optimal value). Used by the tests and the benchmark as ground truth.
    """
    from scipy import optimize, sparse

    q = _check_queries(queries)
    m, n = q.shape
    a = _check_answers(answers, m)
    c = np.concatenate([np.zeros(n), np.ones(2 * m)])
    eye = sparse.identity(m, format="csr")
    a_eq = sparse.hstack([sparse.csr_matrix(q.astype(np.float64)), eye, -eye], format="csr")
    bounds = [(0.0, 1.0)] * n + [(0.0, None)] * (2 * m)
    res = optimize.linprog(c, A_eq=a_eq, b_eq=a, bounds=bounds, method="highs")
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"HiGHS failed: {res.message}")
    return res.x[:n], float(res.fun)


# ------------------------------------------------------------------ all 2^n subsets
def _masks_popcount(k):
    return np.bitwise_count(np.arange(1 << k, dtype=np.uint32)).astype(np.int64)


def subset_sums(secret) -> np.ndarray:
    """All 2^n exact subset sums of a bit vector: entry ``mask`` is the number of ones
    among the people whose bit is set in ``mask`` (person i <-> bit i). n <= 24."""
    d = check_bits(secret, "secret")
    if d.ndim != 1:
        raise ValueError(f"secret must be one-dimensional, got shape {d.shape}")
    n = d.shape[0]
    if n > MAX_EXHAUSTIVE_N:
        raise ValueError(f"secret must have at most {MAX_EXHAUSTIVE_N} bits for all 2^n "
                         f"subsets, got {n}")
    code = int(sum(int(b) << i for i, b in enumerate(d)))
    masks = np.arange(1 << n, dtype=np.uint32)
    return np.bitwise_count(masks & np.uint32(code)).astype(np.int64)


def _check_noise_bound(noise_bound):
    return check_real("noise_bound", noise_bound, low=0.0, high=1e300)


def bounded_noise_answers(secret, noise_bound, *, rng=None) -> np.ndarray:
    """All 2^n subset sums, each plus independent U(-E, E) noise (noise bounded by E)."""
    e = _check_noise_bound(noise_bound)
    rng = check_rng(rng)
    exact = subset_sums(secret).astype(float)
    return exact + rng.uniform(-e, e, size=exact.shape)


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
    d = check_bits(secret, "secret").copy()
    e = _check_noise_bound(noise_bound)
    rng = check_rng(rng)
    k = int(math.floor(2 * e + 1e-12))
    ones = np.flatnonzero(d == 1)
    zeros = np.flatnonzero(d == 0)
    decoy = d.copy()
    decoy[rng.permutation(ones)[: min(k, ones.size)]] = 0
    decoy[rng.permutation(zeros)[: min(k, zeros.size)]] = 1
    exact = subset_sums(d).astype(float)
    diff = subset_sums(decoy) - exact
    return exact + np.clip(diff, -e, e), decoy


def _check_subset_answers(subset_answers):
    a = check_values("subset_answers", subset_answers)
    if a.ndim != 1:
        raise ValueError(f"subset_answers must be one-dimensional (length 2^n), got shape {a.shape}")
    size = a.shape[0]
    if size & (size - 1):
        raise ValueError(f"subset_answers must have length 2^n (one answer per subset), "
                         f"got length {size}")
    n = size.bit_length() - 1
    if n > MAX_EXHAUSTIVE_N:
        raise ValueError(f"subset_answers has 2^{n} entries; at most n = {MAX_EXHAUSTIVE_N} "
                         f"people are supported")
    if n == 0:
        raise ValueError("subset_answers must have length 2^n with n >= 1, got length 1")
    return a, n


def _half_survivors(answers_half, k, e, slack):
    """Candidates c on k people (as integer masks) with |c(S) - a(S)| <= E for every
    subset S of those k people."""
    cands = np.arange(1 << k, dtype=np.uint32)
    subsets = np.arange(1 << k, dtype=np.uint32)
    keep = np.ones(cands.size, dtype=bool)
    block = max(1, (1 << 22) >> k)
    for start in range(0, cands.size, block):
        c = cands[start:start + block]
        sums = np.bitwise_count(c[:, None] & subsets[None, :])
        keep[start:start + block] = (np.abs(sums - answers_half[None, :]) <= e + slack).all(axis=1)
    return cands[keep]


def consistent_candidates(subset_answers, noise_bound) -> np.ndarray:
    """Every database c in {0,1}^n with |c(S) - a(S)| <= E for all 2^n subsets S
    (a k x n array of bits; person i is bit i of the mask). For small n (at most 14):
    it filters the two halves first, then checks every surviving pair."""
    a, n = _check_subset_answers(subset_answers)
    e = _check_noise_bound(noise_bound)
    if n > 14:
        raise ValueError(f"consistent_candidates lists every candidate; n must be <= 14, got {n}")
    found = [c for c in _consistent_codes(a, n, e, first_only=False)]
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
    pop_a = np.bitwise_count(surv_a[:, None] & np.arange(1 << ka, dtype=np.uint32)[None, :])
    order = np.argsort(np.abs(pop_a - table[0][None, :]).max(axis=1), kind="stable")
    subsets_b = np.arange(1 << kb, dtype=np.uint32)
    sums_b = np.bitwise_count(surv_b[:, None] & subsets_b[None, :])   # (|surv_b|, 2^kb)
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
    a, n = _check_subset_answers(subset_answers)
    e = _check_noise_bound(noise_bound)
    for code in _consistent_codes(a, n, e, first_only=True):
        return _codes_to_bits([code], n)[0]
    raise ValueError(f"no database is consistent with every answer within noise_bound={e:g}: "
                     f"the noise must have been larger than the stated bound")


# ------------------------------------------------------------------- phase transition
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

    ns = [check_positive_int(k, "ns") for k in np.atleast_1d(ns)]
    ratios = check_values("ratios", ratios)
    if (ratios < 0).any():
        raise ValueError("ratios must be >= 0")
    qpp = check_positive_int(queries_per_person, "queries_per_person")
    trials = check_positive_int(trials, "trials", maximum=10 ** 4)
    prevalence = check_real("prevalence", prevalence, low=0.0, high=1.0)
    if method not in ("lsq", "lp"):
        raise ValueError(f"method must be 'lsq' or 'lp', got {method!r}")
    solver = reconstruct_lsq if method == "lsq" else reconstruct_lp
    rng = check_rng(rng)
    jobs = [(n, r) for n in ns for r in ratios]
    rows = []
    for n, r in (progress(jobs) if progress else jobs):
        fr = []
        for _ in range(trials):
            d = (rng.random(n) < prevalence).astype(np.int8)
            qm = random_subset_queries(qpp * n, n, rng=rng)
            ans = noisy_answers(qm, d, r * math.sqrt(n), rng=rng)
            fr.append(fraction_agree(solver(qm, ans), d))
        rows.append((n, float(r), float(r * math.sqrt(n)), float(np.mean(fr))))
    return pd.DataFrame(rows, columns=["n", "ratio", "sigma", "fraction"])
