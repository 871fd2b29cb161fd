"""A5 · The exponential mechanism (graded tasks).

* Task 1 (3 points) ``exp_probabilities(scores, sensitivity, epsilon)``: run on held-out
  score vectors (random lengths; scores near ±10^4 that overflow a naive exp; random Δ
  and ε) and on their neighbours (every score moved by at most Δ: the worst moves, one
  candidate +Δ and the others -Δ and the reverse, and random moves in {-Δ, 0, +Δ}). The
  judge needs no sampling: it checks that each answer is a probability vector (sums to
  1 within 1e-9), computes the exact worst-case privacy loss max |ln P(r) - ln P'(r)|
  over those neighbours (must be ≤ ε [DR14 Theorem 3.10]) and compares with
  :func:`dpteach.exponential_probabilities` (the ε/(2Δ) factor). Calling that function
  (which the task forbids) is noticed while the check runs and fails.
* Task 2 (2 points) ``loss_without_half(k, sensitivity, epsilon)``: the privacy loss of
  P(r) ∝ exp(ε u(r)/Δ) on the pair u = (Δ, 0, ..., 0), u' = (0, Δ, ..., Δ), at hidden
  (k, Δ, ε). With a = e^ε, candidate 0's ratio a(1 + (k-1)a)/(a + k - 1) is the larger
  one for k ≥ 2 (the others' ratio a(a + k - 1)/(1 + (k-1)a) is smaller since
  1 + (k-1)a ≥ a + k - 1), so the loss is

      ε + ln(1 + (k-1) e^ε) - ln(e^ε + k - 1)    (independent of Δ; -> 2ε as k grows).

* Task 3a (1 point) ``utility_threshold(scores, sensitivity, epsilon, t)``:
  OPT - (2Δ/ε)(ln k + t) [DR14 Theorem 3.11] at hidden inputs.
* Task 3b (2 points) ``fraction_at_or_below(scores, sensitivity, epsilon, t, n, rng)``:
  the fraction of n draws of the mechanism scoring at or below the threshold. The check
  draws score vectors whose true probability p of that event is known exactly (the sum of
  the exponential mechanism's probabilities of the candidates at or below the
  threshold; scores are built so that p is well above 0 and far from e^-t) and applies a
  two-sided exact binomial test (scipy.stats.binomtest) of the student's count against
  p at alpha = 1e-6 (Bonferroni over the cases). A fraction of 0, the bound e^-t or a
  threshold with log10 all fail; the fraction must be a whole count out of n.
* Task 4 (2 points) ``p_best_price(valuations, prices, epsilon)``: with the student's
  ``exp_probabilities``, revenue scores and Δ the highest price, the probability of the
  revenue-maximising price, at hidden buyers' valuations and prices.

Notebook: notebooks/solutions/A5_exponential_mechanism.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from ..exercises import ALPHA
from . import Task
from ._student import (UNSOLVED, call, call_each, opening, fail, float_array, forbid, g, is_unsolved,
                       listed, number, ok)


#: what the notebook tells every task to use (the grading kernel keeps them, though the
#: judges compute truths with them too)
ALLOWED = ("dpteach.mechanisms:exponential_mechanism", "dpteach.exponential:posted_price_revenue")



def without_half_loss(k, sensitivity, epsilon):
    """Exact privacy loss of P(r) ∝ exp(ε u(r)/Δ) (the 1/2 left out) on the neighbours
    u = (Δ, 0, ..., 0), u' = (0, Δ, ..., Δ) over k candidates (see the module docstring);
    Δ cancels. Natural log. For k = 100, ε = 1 it is 1.977 (``dp.audit.ZOO``'s
    ``exponential_without_half``)."""
    a = float(epsilon)
    k = int(k)
    return a + math.log1p((k - 1) * math.exp(a)) - math.log(math.exp(a) + k - 1)


# ------------------------------------------------------------------ Task 1
_T1_RANDOM_MOVES = 30
_T1_WORST = 12


def _t1_request(rng):
    cases = []
    kinds = ["small", "huge", "negative", "sensitivity"]
    for kind in kinds:
        k = int(rng.integers(2, 40))
        if kind == "small":
            u, d = rng.integers(0, 20, k).astype(float), 1.0
        elif kind == "huge":
            u, d = rng.uniform(2e4, 2e4 + 30, k), 1.0
        elif kind == "negative":
            u, d = -rng.uniform(1e4, 1e4 + 30, k), float(rng.choice([0.5, 2.0]))
        else:
            d = float(np.round(rng.uniform(0.5, 5), 2))
            u = np.round(rng.uniform(0, 10 * d, k), 2)
        eps = float(np.round(rng.uniform(0.3, 3.0), 2))
        moves = []
        for r in range(min(k, _T1_WORST)):
            m = np.full(k, -d)
            m[r] = d
            moves += [m, -m]
        moves += list(rng.integers(-1, 2, size=(_T1_RANDOM_MOVES, k)) * d)
        cases.append({"scores": np.asarray(u, float), "sensitivity": d, "epsilon": eps,
                      "neighbours": np.asarray(u, float)[None, :] + np.asarray(moves)})
    return {"cases": cases}, None


#: Task 1 computes the probabilities by hand (also absent while grading)
_T1_FORBID = ("dpteach:exponential_probabilities", "dpteach.mechanisms:exponential_probabilities")


def _t1_collect(answers, req):
    fn = answers.get("exp_probabilities")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    with forbid(*_T1_FORBID, code=[fn]) as guard:
        out = _t1_run(fn, req)
    if isinstance(out, list):
        return {"probabilities": out, "called_library": bool(guard.used)}
    return out


def _t1_run(fn, req):
    out = []
    for c in req["cases"]:
        d, eps = c["sensitivity"], c["epsilon"]
        rows = [np.asarray(c["scores"], float)] + [np.asarray(v, float) for v in c["neighbours"]]
        probs = []
        for u in rows:
            p, problem = call(fn, u.copy(), d, eps)
            if problem is not None:
                return problem
            arr = float_array(p)
            if arr is None or arr.shape != u.shape:
                return {"shape": f"exp_probabilities(scores of length {u.size}, {d:g}, {eps:g}) "
                                 f"returned {repr(p)[:120]}"}
            probs.append(arr)
        out.append(np.array(probs))
    return out


def _t1_judge(data, req, truth):
    key = "Task 1"
    bad = opening(key, data, "Hint: the signature is exp_probabilities(scores, sensitivity, "
                           "epsilon).")
    if bad is not None:
        return bad
    if "shape" in data:
        return fail(key, f"{str(data['shape'])[:300]}; expected a numpy array of finite "
                         "numbers, one probability per candidate. Hint: large scores overflow "
                         "np.exp; subtract the largest score first (or use "
                         "scipy.special.softmax).", "type")
    from ...mechanisms import exponential_probabilities
    if data.get("called_library") is True:
        return fail(key, "your function calls dp.exponential_probabilities; the task is to "
                         "write it yourself. Hint: scipy.special.softmax of ε·u/(2Δ).",
                    "library")
    probs = data.get("probabilities")
    if not isinstance(probs, list) or len(probs) != len(req["cases"]):
        return fail(key, "the check's data is malformed.", "malformed")
    worst_loss = []
    for c, p in zip(req["cases"], probs):
        u = np.asarray(c["scores"], float)
        nb = np.asarray(c["neighbours"], float)
        arr = float_array(p, (1 + nb.shape[0], u.size))
        if arr is None:
            return fail(key, "the check's data is malformed.", "malformed")
        d, eps = float(c["sensitivity"]), float(c["epsilon"])
        where = f"(k = {u.size} candidates, scores {g(u.min(), 6)} to {g(u.max(), 6)}, " \
                f"Δ = {g(d)}, ε = {g(eps)})"
        if (arr < 0).any():
            return fail(key, f"negative probabilities {where}.", "type")
        sums = arr.sum(axis=1)
        if not np.allclose(sums, 1.0, rtol=0, atol=1e-9):
            s = sums[np.argmax(np.abs(sums - 1))]
            return fail(key, f"the probabilities sum to {g(s, 8)}, not 1, {where}. Hint: divide "
                             "by the sum (or use scipy.special.softmax).", "normalise")
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(arr)
            diff = np.abs(logs[1:] - logs[0][None, :])
            diff = np.where(np.isnan(diff), 0.0, diff)          # 0 against 0
        loss = float(diff.max())
        worst_loss.append(loss)
        if loss > eps * (1 + 1e-9) + 1e-12:
            i, r = np.unravel_index(np.argmax(diff), diff.shape)
            move = nb[i] - u
            return fail(key, f"not ε-DP {where}: moving the scores by {np.round(move[:6], 3).tolist()}"
                             f"{'…' if u.size > 6 else ''} (each by at most Δ) changes candidate "
                             f"{r}'s probability by a factor e^{g(loss)}, more than e^ε = "
                             f"e^{g(eps)}. Hint: the exponent is ε·u/(2Δ); without the 1/2 "
                             "the normaliser moves too and the loss nears 2ε.", "privacy",
                        loss=loss)
        ref = exponential_probabilities(u, d, eps)
        if not np.allclose(arr[0], ref, rtol=1e-7, atol=1e-12):
            r = int(np.argmax(np.abs(arr[0] - ref)))
            return fail(key, f"private, but not the exponential mechanism {where}: P({r}) = "
                             f"{g(arr[0][r], 6)}, expected {g(ref[r], 6)}. Hint: "
                             "P(r) ∝ exp(ε·u(r)/(2Δ)), with the ε and Δ passed in.", "wrong")
    return ok(key, f"on {len(probs)} held-out score vectors (scores up to "
                   f"{g(max(np.abs(np.asarray(c['scores'])).max() for c in req['cases']), 3)}) "
                   f"and their neighbours: probabilities sum to 1, match P ∝ exp(εu/(2Δ)), and "
                   f"the exact worst-case privacy losses {[round(v, 3) for v in worst_loss]} are "
                   f"within ε = {[c['epsilon'] for c in req['cases']]}.", losses=worst_loss)


# ------------------------------------------------------------------ Task 2
def _t2_request(rng):
    cases = [[int(rng.integers(3, 12)), float(np.round(rng.uniform(0.5, 5), 2)),
              float(np.round(rng.uniform(0.2, 3), 2))],
             [int(rng.integers(20, 1000)), float(np.round(rng.uniform(0.5, 5), 2)),
              float(np.round(rng.uniform(0.2, 3), 2))],
             [2, 1.0, float(np.round(rng.uniform(0.2, 3), 2))]]
    order = rng.permutation(3)
    cases = [cases[i] for i in order]
    return {"cases": cases}, {"expected": [without_half_loss(*c) for c in cases]}


def _t2_collect(answers, req):
    return call_each(answers.get("loss_without_half"), req["cases"], "values")


def _t2_judge(data, req, truth):
    key = "Task 2"
    expected = truth.get("expected", [])
    found, bad = listed(key, data, "values", len(expected),
                        "Hint: loss_without_half(k, sensitivity, epsilon) returns a number.")
    if bad is not None:
        return bad
    for (k, d, eps), f, want in zip(req["cases"], found, expected):
        call_text = f"loss_without_half({k}, {d:g}, {eps:g})"
        v = number(f)
        if v is None:
            return fail(key, f"{call_text} returned {f!r}; expected a number.", "type")
        if not math.isclose(v, want, rel_tol=1e-6):
            half = (eps / 2 + math.log1p((k - 1) * math.exp(eps / 2))
                    - math.log(math.exp(eps / 2) + k - 1))
            hint = (" That is the loss WITH the 1/2 (the correct mechanism)." if
                    math.isclose(v, half, rel_tol=1e-4) else
                    " That is only the numerator's change; the normaliser moves too." if
                    math.isclose(v, eps, rel_tol=1e-6) else
                    " Hint: candidate 0's probability is e^ε/(e^ε + k − 1) under u and "
                    "1/(1 + (k − 1)e^ε) under u′; take the log of their ratio.")
            return fail(key, f"{call_text} returned {g(v, 8)}, expected {g(want, 8)}.{hint}",
                        "wrong")
    shown = ", ".join(f"k = {k}: {g(w, 4)} > ε = {g(e)}" if w > e * (1 + 1e-12) else
                      f"k = {k}: {g(w, 4)} = ε" for (k, _, e), w in zip(req["cases"], expected))
    return ok(key, f"correct at {len(expected)} hidden (k, Δ, ε) ({shown}): without the 1/2 "
                   "the mechanism is not ε-DP once k > 2.")


# ------------------------------------------------------------------ Task 3a
def _t3a_request(rng):
    cases = []
    for _ in range(3):
        k = int(rng.integers(5, 5000))
        scores = np.round(rng.uniform(-50, 200, k), 1)
        cases.append({"scores": scores, "sensitivity": float(rng.choice([0.5, 1.0, 2.0, 3.0])),
                      "epsilon": float(np.round(rng.uniform(0.2, 3), 2)),
                      "t": float(np.round(rng.uniform(0.5, 5), 2))})
    from ...bounds import exponential_utility_threshold
    exp = [exponential_utility_threshold(float(c["scores"].max()), c["sensitivity"], c["epsilon"],
                                         c["scores"].size, c["t"]) for c in cases]
    return {"cases": cases}, {"expected": exp}


def _t3a_collect(answers, req):
    return call_each(answers.get("utility_threshold"),
                     ((np.asarray(c["scores"], float), c["sensitivity"], c["epsilon"], c["t"])
                      for c in req["cases"]), "values")


def _t3a_judge(data, req, truth):
    key = "Task 3a"
    expected = truth.get("expected", [])
    found, bad = listed(key, data, "values", len(expected))
    if bad is not None:
        return bad
    for c, f, want in zip(req["cases"], found, expected):
        u = np.asarray(c["scores"], float)
        call_text = (f"utility_threshold(<{u.size} scores, OPT {g(u.max())}>, {c['sensitivity']:g}, "
                     f"{c['epsilon']:g}, {c['t']:g})")
        v = number(f)
        if v is None:
            return fail(key, f"{call_text} returned {f!r}; expected a number.", "type")
        if not math.isclose(v, want, rel_tol=1e-9, abs_tol=1e-7):
            slip10 = u.max() - 2 * c["sensitivity"] / c["epsilon"] * (math.log10(u.size) + c["t"])
            hint = (" That uses log10; the theorem's log is natural." if
                    math.isclose(v, slip10, rel_tol=1e-9, abs_tol=1e-7) else
                    " Hint: OPT − (2Δ/ε)(ln k + t), k the number of candidates.")
            return fail(key, f"{call_text} returned {g(v, 8)}, expected {g(want, 8)}.{hint}",
                        "wrong")
    return ok(key, f"correct at {len(expected)} hidden score vectors and (Δ, ε, t).")


# ------------------------------------------------------------------ Task 3b
_T3B_CASES = 3
_T3B_N = 20_000


def _threshold(u, d, eps, t, log=math.log):
    return float(u.max() - 2 * d / eps * (log(u.size) + t))


def _p_below(u, d, eps, thr):
    from ...mechanisms import exponential_probabilities
    return float(exponential_probabilities(u, d, eps)[u <= thr].sum())


def _t3b_case(rng, n):
    """Scores whose event {score <= threshold} has a probability p the draws can tell
    from 0, from the bound e^-t, and from the slips' thresholds."""
    while True:
        k = int(rng.integers(50, 400))
        d = float(rng.choice([0.5, 1.0, 2.0]))
        eps = float(np.round(rng.uniform(0.5, 2.0), 2))
        t = float(np.round(rng.uniform(0.2, 1.5), 2))
        gap = 2 * d / eps * (math.log(k) + t)
        opt = float(rng.integers(100, 1000))
        top = int(rng.integers(1, 6))
        u = np.concatenate([[opt], opt - rng.uniform(0, gap / 3, top),
                            opt - rng.uniform(0.6 * gap, 1.3 * gap, k - 1 - top)])
        u = np.round(rng.permutation(u), 3)
        thr = _threshold(u, d, eps, t)
        if np.min(np.abs(u - thr)) < 1e-3:
            continue
        p = _p_below(u, d, eps, thr)
        sd = math.sqrt(max(p * (1 - p), 1e-12) / n)
        others = [math.exp(-t), _p_below(u, d, eps, _threshold(u, d, eps, t, math.log10)),
                  _p_below(u, d, eps, u.max() - d / eps * (math.log(k) + t))]
        if 0.02 <= p <= 0.9 and all(abs(o - p) > 25 * sd for o in others):
            return {"scores": u, "sensitivity": d, "epsilon": eps, "t": t, "n": n,
                    "seed": int(rng.integers(2**62))}, p


def _t3b_request(rng):
    cases, ps = [], []
    for _ in range(_T3B_CASES):
        c, p = _t3b_case(rng, _T3B_N)
        cases.append(c)
        ps.append(p)
    return {"cases": cases}, {"p": ps}


def _t3b_collect(answers, req):
    return call_each(answers.get("fraction_at_or_below"),
                     ((np.asarray(c["scores"], float), c["sensitivity"], c["epsilon"], c["t"],
                       int(c["n"]), np.random.default_rng(c["seed"])) for c in req["cases"]),
                     "fractions")


def _t3b_judge(data, req, truth):
    key = "Task 3b"
    ps = truth.get("p", [])
    found, bad = listed(key, data, "fractions", len(ps),
                        "Hint: fraction_at_or_below(scores, sensitivity, epsilon, t, n, rng).")
    if bad is not None:
        return bad
    from scipy import stats
    alpha = ALPHA / max(len(ps), 1)
    shown = []
    for c, f, p in zip(req["cases"], found, ps):
        n = int(c["n"])
        u = np.asarray(c["scores"], float)
        where = (f"({u.size} candidates, Δ = {g(c['sensitivity'])}, ε = {g(c['epsilon'])}, "
                 f"t = {g(c['t'])}, n = {n:,})")
        v = number(f)
        if v is None or not 0.0 <= v <= 1.0:
            return fail(key, f"returned {f!r} {where}; expected a fraction in [0, 1].", "type")
        count = v * n
        if abs(count - round(count)) > 1e-6:
            return fail(key, f"returned {g(v, 8)} {where}, which is not a count out of the n = "
                             f"{n:,} draws. Hint: draw n choices with dp.exponential_mechanism "
                             "(rng=rng, size=n) and return the fraction of them at or below "
                             "the threshold.", "not_a_fraction")
        count = int(round(count))
        pv = stats.binomtest(count, n, p).pvalue
        if pv < alpha:
            bound = math.exp(-c["t"])
            hint = (" Zero draws at or below the threshold is not what sampling gives here." if
                    count == 0 else " That is the bound e^−t, not a sampled fraction." if
                    abs(v - bound) < 1e-3 else
                    " Hint: the threshold is OPT − (2Δ/ε)(ln k + t) with the Δ, ε and t passed "
                    "in, natural log; count the draws whose score is ≤ it.")
            return fail(key, f"{count:,} of {n:,} draws at or below the threshold {where}: "
                             f"the exact binomial test rejects it (p-value {pv:.2g} < "
                             f"{alpha:.2g}).{hint}", "binomial", p_value=pv)
        shown.append(f"{v:.4f} (e^−t = {math.exp(-c['t']):.3f})")
    return ok(key, f"the fractions of the check's draws, {', '.join(shown)}, are consistent "
                   "(exact two-sided binomial tests) with the true probabilities, which the "
                   "theorem bounds by e^−t.")


# ------------------------------------------------------------------ Task 4
def _t4_case(rng):
    from ...exponential import posted_price_revenue
    from ...mechanisms import exponential_probabilities
    while True:
        vals = np.round(rng.uniform(0.5, 6.0, int(rng.integers(3, 9))), 2)
        prices = np.round(np.sort(rng.choice(np.arange(50, 601), int(rng.integers(3, 7)),
                                             replace=False)) / 100, 2)
        rev = posted_price_revenue(vals, prices)
        best = np.flatnonzero(rev == rev.max())
        if best.size == 1 and rev.max() > 0:
            eps = float(rng.choice([0.5, 1.0, 2.0, 3.0]))
            p = float(exponential_probabilities(rev, prices.max(), eps)[best[0]])
            return {"valuations": vals, "prices": prices, "epsilon": eps}, p


def _t4_request(rng):
    cases, ps = zip(*[_t4_case(rng) for _ in range(3)])
    return {"cases": list(cases)}, {"expected": list(ps)}


def _t4_collect(answers, req):
    return call_each(answers.get("p_best_price"),
                     ((np.asarray(c["valuations"], float), np.asarray(c["prices"], float),
                       c["epsilon"]) for c in req["cases"]), "values")


def _t4_judge(data, req, truth):
    key = "Task 4"
    expected = truth.get("expected", [])
    found, bad = listed(key, data, "values", len(expected),
                        "Hint: p_best_price(valuations, prices, epsilon) returns a probability.")
    if bad is not None:
        return bad
    from ...exponential import posted_price_revenue
    from ...mechanisms import exponential_probabilities
    for c, f, want in zip(req["cases"], found, expected):
        vals, prices = np.asarray(c["valuations"], float), np.asarray(c["prices"], float)
        where = (f"for {vals.size} buyers valuing {vals.tolist()} and prices {prices.tolist()} "
                 f"at ε = {g(c['epsilon'])}")
        v = number(f)
        if v is None:
            return fail(key, f"returned {f!r} {where}; expected a probability.", "type")
        if not math.isclose(v, want, rel_tol=1e-6, abs_tol=1e-12):
            rev = posted_price_revenue(vals, prices)
            best = int(np.argmax(rev))
            unit = float(exponential_probabilities(rev, 1.0, c["epsilon"])[best])
            hint = (" That uses Δ = 1; one buyer changes the revenue at price p by up to p, so "
                    "Δ is the highest price." if math.isclose(v, unit, rel_tol=1e-6) else
                    " Hint: scores = posted_price_revenue(valuations, prices), Δ = the highest "
                    "price, and the probability of the revenue-maximising price.")
            return fail(key, f"returned {g(v, 6)} {where}, expected {g(want, 6)}.{hint}", "wrong")
    return ok(key, f"correct for {len(expected)} hidden sets of buyers and prices "
                   f"(P(best price) = {', '.join(g(w, 3) for w in expected)}).")


TASKS = [
    Task(key="Task 1", points=3, names=("exp_probabilities",),
         title="the selection probabilities", request=_t1_request, collect=_t1_collect,
         judge=_t1_judge, forbidden=_T1_FORBID),
    Task(key="Task 2", points=2, names=("loss_without_half",), title="why the 1/2",
         request=_t2_request, collect=_t2_collect, judge=_t2_judge),
    Task(key="Task 3a", points=1, names=("utility_threshold",), title="the utility threshold",
         request=_t3a_request, collect=_t3a_collect, judge=_t3a_judge),
    Task(key="Task 3b", points=2, names=("fraction_at_or_below",),
         title="the utility theorem by sampling", request=_t3b_request, collect=_t3b_collect,
         judge=_t3b_judge),
    Task(key="Task 4", points=2, names=("p_best_price",), title="pricing apples",
         request=_t4_request, collect=_t4_collect, judge=_t4_judge),
]
