"""A10 Task 3's checks: one multiplicative-weights update and one round of MWEM
(:mod:`.a10_local_synthetic` states the tasks)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..exercises import ALPHA
from ._student import (UNSOLVED, call, entries, fail, field, float_array, forbid, g, is_unsolved,
                       laplace_fit, number, ok, opening, short)

T3_FORBIDDEN = ("dpteach.synthetic:multiplicative_weights_update", "dpteach.synthetic:_mw_step")


# ------------------------------------------------------------------ Task 3
def t3_request(rng):
    """Five hidden (A, q, m): q a range or a subset, neither empty nor full; m - q(A) of
    both signs and at least 0.05 n in size."""
    from ...synthetic import multiplicative_weights_update
    cases, truth = [], []
    for sign in rng.permutation([1.0, -1.0, 1.0, -1.0, rng.choice([-1.0, 1.0])]):
        size = int(rng.integers(6, 40))
        n = float(rng.choice([200.0, 1000.0, 5000.0, 20000.0]))
        a = rng.gamma(2.0, size=size)
        a = np.round(n * a / a.sum(), 4)
        if rng.random() < 0.5:
            lo = int(rng.integers(0, size - 1))
            hi = int(rng.integers(lo, size - 1 if lo == 0 else size))
            q = ((np.arange(size) >= lo) & (np.arange(size) <= hi)).astype(float)
        else:
            q = np.zeros(size)
            q[rng.choice(size, int(rng.integers(1, size)), replace=False)] = 1.0
        total = float(a.sum())
        qa = float(q @ a)
        m = float(np.round(qa + sign * rng.uniform(0.05, 0.5) * total, 3))
        cases.append({"synthetic": a.tolist(), "query": q.astype(int).tolist(),
                      "measurement": m})
        truth.append(multiplicative_weights_update(a, q, m).tolist())
    return {"cases": cases}, {"updated": truth}


def mw_slips(a, q, m):
    """hint -> the update with that slip."""
    a, q = np.asarray(a, dtype=float), np.asarray(q, dtype=float)
    n, c = a.sum(), m - q @ a

    def scaled(exponent, to=n):                  # to * a e^exponent / sum, in log space
        with np.errstate(divide="ignore"):
            w = np.log(a) + exponent
        w = np.exp(w - w.max())
        return to * w / w.sum()
    return {
        "scale the result to the total n of the synthetic histogram (renormalise)":
            a * np.exp(q * c / (2 * n)),
        "scale to the total n, not to 1: the synthetic data keep n records":
            scaled(q * c / (2 * n), 1.0),
        "the sign: cells of the query grow when the measurement is above q(A)":
            scaled(-q * c / (2 * n)),
        "the exponent is q(v)·(m - q(A))/(2n): the factor 1/2 is missing": scaled(q * c / n),
        "the exponent is divided by 2n: the total n is missing": scaled(q * c / 2),
    }


def t3_collect(answers, req):
    fn = answers.get("mw_update")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    out = []
    with forbid(*T3_FORBIDDEN, code=[fn]) as guard:
        for c in req["cases"]:
            value, problem = call(fn, np.array(c["synthetic"]), np.array(c["query"]),
                                  c["measurement"])
            if problem is not None:
                return problem
            arr = float_array(value, (len(c["synthetic"]),))
            out.append(arr if arr is not None else short(value))
    return {"updated": out, "called_library": bool(guard.used)}


def t3_judge(data, req, truth):
    key = "Task 3a"
    bad = opening(key, data, "Hint: A(v)·exp(q(v)(m - q(A))/(2n)), then scale to total n.",
                  library="your function calls dp.synthetic.multiplicative_weights_update (notebook 20's "
                          "answer); the task is to write the update yourself.")
    if bad is not None:
        return bad
    expected, cases = field(truth, "updated", []), field(req, "cases", [])
    found, bad = entries(key, data, "updated", len(expected), len(cases))
    if bad is not None:
        return bad
    for c, f, want in zip(cases, found, expected):
        a = np.array(c["synthetic"], dtype=float)
        want = np.asarray(want, dtype=float)
        shown = (f"mw_update(<{a.size} cells, total {g(a.sum())}>, <a query of "
                 f"{int(np.sum(c['query']))} cells>, {g(c['measurement'])})")
        arr = float_array(f, a.shape)
        if arr is None:
            return fail(key, f"{shown} returned {short(f)}; expected a finite array of "
                             f"{a.size} non-negative counts.", "type")
        n = float(a.sum())
        if not np.allclose(arr, want, rtol=1e-9, atol=1e-9 * n):
            hint = next((h for h, s in mw_slips(a, c["query"], c["measurement"]).items()
                         if np.allclose(arr, s, rtol=1e-6, atol=1e-6 * n)),
                        "A'(v) is proportional to A(v)·exp(q(v)·(m - q(A))/(2n)), with the "
                        "same total n as A")
            i = int(np.argmax(np.abs(arr - want)))
            return fail(key, f"{shown}: cell {i} came back as {g(arr[i], 6)}, the update gives "
                             f"{g(want[i], 6)} (your total {g(arr.sum(), 6)}, expected "
                             f"{g(n, 6)}): {hint}.", "wrong")
    gaps = [c["measurement"] - float(np.dot(c["query"], c["synthetic"])) for c in cases]
    return ok(key, f"exact on {len(cases)} hidden updates (m - q(A) from {g(min(gaps), 4)} to "
                   f"{g(max(gaps), 4)}).")


# ------------------------------------------------------------------ Task 3b: MWEM's two scales
_T3B_CALLS = 2000
T3B_FORBIDDEN = ("dpteach:mwem", "dpteach.synthetic:mwem", "dpteach.synthetic:mwem_rounds",
                "dpteach.synthetic:mwem_selection_probabilities")


def mwem_selection(scores, epsilon, iterations, factor=1.0):
    """P(q) proportional to exp((epsilon / 2T) |q(A) - q(x)| / 2), times ``factor`` in the
    exponent (a slip's)."""
    w = factor * epsilon / (4.0 * iterations) * np.asarray(scores, dtype=float)
    w = np.exp(w - w.max())
    return w / w.sum()


def mwem_slips(scores, epsilon, iterations):
    """hint -> (selection probabilities, measurement noise scale) of a round with that slip."""
    p = mwem_selection(scores, epsilon, iterations)
    scale = 2.0 * iterations / epsilon
    k = len(scores)
    top = np.zeros(k)
    top[int(np.argmax(scores))] = 1.0
    return {
        "the query is chosen by the exponential mechanism, not uniformly":
            (np.full(k, 1.0 / k), scale),
        "the query is chosen by the exponential mechanism, not as the worst one (no noise)":
            (top, scale),
        "the selection's exponent has a factor 1/2 too few: P(q) ∝ exp((ε/2T)·score/2)":
            (mwem_selection(scores, epsilon, iterations, 2.0), scale),
        "the selection's exponent has two factors 1/2 too few: P(q) ∝ exp((ε/2T)·score/2)":
            (mwem_selection(scores, epsilon, iterations, 4.0), scale),
        "the selection's exponent has a factor 1/2 too many: P(q) ∝ exp((ε/2T)·score/2)":
            (mwem_selection(scores, epsilon, iterations, 0.5), scale),
        "each round has ε/T, not ε: the selection's exponent is (ε/2T)·score/2":
            (mwem_selection(scores, epsilon, iterations, float(iterations)), scale),
        "the measurement's noise is Lap(2T/ε) (half of ε/T), not Lap(T/ε)": (p, scale / 2),
        "the measurement's noise is Lap(2T/ε): each round has ε/T, half of it to measure":
            (p, 2.0 / epsilon),
        "the measurement's noise is Lap(2T/ε), not Lap(1/ε)": (p, 1.0 / epsilon),
        "the measurement's noise is Lap(2T/ε), not Lap(4T/ε)": (p, 2 * scale),
    }


def t3b_request(rng):
    """A hidden histogram, synthetic histogram and workload, with (epsilon, T) chosen so
    that the selection is far from uniform and far from the worst query; redrawn until
    every slip's selection is off by 0.15 in some query's probability or its noise scale
    by a factor 1.6."""
    for _ in range(2000):
        size = int(rng.integers(8, 20))
        n = int(rng.choice([500, 1000, 2000, 5000]))
        x = rng.multinomial(n, rng.dirichlet(np.full(size, 0.7))).astype(float)
        synthetic = np.round(rng.dirichlet(np.full(size, 3.0)) * n, 3)
        k = int(rng.integers(5, 10))
        q = np.zeros((k, size))
        for row in q:
            lo = int(rng.integers(0, size - 1))
            row[lo:int(rng.integers(lo + 1, size + 1))] = 1.0
        if len({tuple(r) for r in q}) < k:
            continue
        scores = np.abs(q @ synthetic - q @ x)
        spread = float(scores.max() - scores.min())
        if spread <= 0:
            continue
        iterations = int(rng.integers(2, 11))
        eps = float(np.round(4 * iterations * rng.uniform(1.5, 3.0) / spread, 4))
        if not 0.01 <= eps <= 10:
            continue
        p = mwem_selection(scores, eps, iterations)
        scale = 2.0 * iterations / eps
        slips = mwem_slips(scores, eps, iterations)
        if all(np.max(np.abs(sp - p)) >= 0.15 or abs(math.log(ss / scale)) >= math.log(1.6)
               for sp, ss in slips.values()):
            return ({"histogram": x.tolist(), "synthetic": synthetic.tolist(),
                     "queries": q.astype(int).tolist(), "epsilon": eps,
                     "iterations": iterations, "calls": _T3B_CALLS,
                     "seed": int(rng.integers(2**62))},
                    {"p": p.tolist(), "answers": (q @ x).tolist(), "scale": scale,
                     "scores": scores.tolist()})
    raise RuntimeError("no hidden draw tells every slip apart")     # pragma: no cover


def t3b_collect(answers, req):
    fn = answers.get("mwem_round")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    rng = np.random.default_rng(req["seed"])
    args = (np.array(req["histogram"]), np.array(req["synthetic"]), np.array(req["queries"]),
            req["epsilon"], req["iterations"], rng)
    out = []
    with forbid(*T3B_FORBIDDEN, code=[fn]) as guard:
        for i in range(req["calls"]):
            value, problem = call(fn, *args)
            if problem is not None:
                return problem
            if i == 0 and value is None:
                return dict(UNSOLVED)
            pair = value if isinstance(value, (tuple, list)) and len(value) == 2 else None
            j = None if pair is None else number(pair[0])
            m = None if pair is None else number(pair[1])
            if j is None or m is None or j != int(j):
                return {"type": f"{type(value).__name__}: {short(value)}"}
            out.append([int(j), m])
    return {"rounds": out, "called_library": bool(guard.used)}


def t3b_judge(data, req, truth):
    key = "Task 3b"
    bad = opening(key, data, "Hint: P(q) ∝ exp((ε/2T)·|q(A) - q(x)|/2), then q(x) + Lap(2T/ε).",
                  library="your function calls the kit's MWEM (dp.mwem, "
                          "dp.synthetic.mwem_selection_probabilities); the task is to write the round "
                          "yourself.",
                  returns=("mwem_round must return (index, measurement): a whole number "
                           "and a number"))
    if bad is not None:
        return bad
    req = req if isinstance(req, dict) else {}
    p = np.asarray(field(truth, "p", []), dtype=float)
    answers = np.asarray(field(truth, "answers", []), dtype=float)
    rounds = data.get("rounds")
    k = p.size
    if not isinstance(rounds, list) or len(rounds) != req.get("calls") or k == 0 or \
            answers.size != k or any(
                not isinstance(r, list) or len(r) != 2 or number(r[1]) is None or
                number(r[0]) is None or not 0 <= r[0] < k or r[0] != int(r[0]) for r in rounds):
        return fail(key, "the check's data is malformed (an index outside 0 ... "
                         f"{k - 1} or a measurement that is not a number).", "malformed")
    idx = np.array([int(r[0]) for r in rounds])
    z = np.array([float(r[1]) for r in rounds]) - answers[idx]
    counts = np.bincount(idx, minlength=k)
    tests = k + 2
    a = ALPHA / tests
    eps, T = req["epsilon"], req["iterations"]
    scale = 2.0 * T / eps

    def fits(probs, s):
        pv = [stats.binomtest(int(c), idx.size, float(q)).pvalue if 0 < q < 1 else
              float(c == idx.size * q) for c, q in zip(counts, probs)]
        return min(pv) >= a and min(laplace_fit(z, 0.0, s, a)) >= a if s > 0 else False
    pv = [stats.binomtest(int(c), idx.size, float(q)).pvalue for c, q in zip(counts, p)]
    ks, sc = laplace_fit(z, 0.0, scale, a)
    if min(pv) >= a and min(ks, sc) >= a:
        return ok(key, f"your {idx.size} rounds choose the queries as the exponential mechanism "
                       f"with ε/(2T) does (smallest binomial p = {g(min(pv), 3)}) and measure "
                       f"with Lap(2T/ε) = Lap({g(scale, 4)}) (KS p = {g(ks, 3)}, scale test p "
                       f"= {g(sc, 3)}).")
    hint = next((h for h, (sp, ss) in mwem_slips(field(truth, "scores", []), eps, T).items()
                 if fits(sp, ss)), None)
    shares = ", ".join(f"{g(100 * c / idx.size, 3)}%" for c in counts)
    want = ", ".join(f"{g(100 * q, 3)}%" for q in p)
    measured = (f"with ε = {g(eps)}, T = {T} on a hidden workload of {k} queries, your "
                f"{idx.size} rounds chose the queries {shares} of the time (the exponential "
                f"mechanism with ε/(2T) and sensitivity 1: {want}; smallest binomial p = "
                f"{g(min(pv), 3)}), and your measurements minus the true answers have mean "
                f"absolute value {g(float(np.mean(np.abs(z))), 4)} (Lap(2T/ε) has "
                f"{g(scale, 4)}; KS p = {g(ks, 3)}, scale test p = {g(sc, 3)}; each test "
                f"rejects below α = {g(a, 3)})")
    reason = "selection" if min(pv) < a else "measurement"
    return fail(key, measured + (f": {hint}." if hint else
                                 ". Hint: P(q) ∝ exp((ε/2T)·|q(A) - q(x)|/2), then "
                                 "m = q(x) + Lap(2T/ε)."), reason)
