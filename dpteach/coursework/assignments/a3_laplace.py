"""A3 · Sensitivity and the Laplace mechanism (notebooks/solutions/A3_sensitivity_and_laplace.ipynb,
with notebooks 05 and 06). The student predicts sensitivities as functions of the
setting and writes a Laplace mechanism; the checks evaluate them at hidden parameters:

* Task 1 (1 point) ``sum_sensitivity(M)``: records are whole numbers 0..M, neighbours
  add or remove one record: Δ = M (a count is M = 1);
* Task 2a (1 point) ``mean_sensitivity(M, n)`` and Task 2b (1 point)
  ``median_sensitivity(M, n)``: exactly n records in [0, M], neighbours substitute one:
  M/n, and M (n odd) or M/2 (n even, the median averaging the two middle values);
* Task 3a / 3b (1 point each) ``histogram_sensitivity(n_categories, neighbours, norm)``:
  the histogram's L1 (3a) and L2 (3b) sensitivity, each at hidden numbers of categories
  with both notions of neighbours: add/remove 1 (either norm), substitute 2 (L1) and √2
  (L2);
* Task 4 (4 points) ``laplace_release(value, sensitivity, epsilon, rng)``: audited and
  measured by :func:`dpteach.coursework.exercises.mechanism_judge` at hidden (Δ, ε) points;
* Task 5 (2 points) ``slipped_release``: the classic slip b = ε, which the same check
  must refute *for privacy*, with noise of scale ε at every hidden point;
* Task 6 (1 point) ``error_bound(sensitivity, epsilon, p)``: the t with
  Pr[|Lap(Δ/ε)| ≥ t] = exp(−tε/Δ) = p, i.e. t = (Δ/ε) ln(1/p).

Every expected sensitivity is computed by brute force with
:func:`dpteach.sensitivity.global_sensitivity` inside the check, not from the formulas
above; the student's functions for Tasks 1-3 must not call it (brute force is for
checking the prediction in the notebook; calls through ``dp`` or ``dp.sensitivity``
while the check runs are noticed and fail the task).
"""

from __future__ import annotations

import math

import numpy as np

from .. import exercises as ex
from .._mechanism_judge import WASTE_TOLERANCE
from . import Task
from ._student import (collect_values, fail, field, first_problem, g, not_solved, ok,
                       problem_feedback, short)


#: brute force answers Tasks 1-3 for any setting: the graded answer is the formula
_BRUTE = ("dpteach:global_sensitivity", "dpteach.sensitivity:global_sensitivity",
          "dpteach.sensitivity:l1_sensitivity", "dpteach.sensitivity:l2_sensitivity",
          "dpteach.sensitivity:local_sensitivity")


def _judge_calls(key, data, cases, truth, *, signature, describe, hint, rel=1e-6):
    kind, item = first_problem(data, len(cases))
    if kind is not None:
        return problem_feedback(key, kind, item, signature)
    used = field(data, "used", [])
    if isinstance(used, list) and used:
        return fail(key, f"your function called {', '.join(map(str, used))}: brute force is "
                         "for checking your prediction in the notebook; the task is the "
                         "formula, as a function of the setting's parameters.", "forbidden",
                    used=used)
    for case, item, expected in zip(cases, data["results"], truth):
        found = item.get("value")
        if not isinstance(found, float):
            return fail(key, f"{signature} returned {short(field(found, 'repr', found))}; "
                             "expected one number.", "type")
        if not math.isclose(found, expected, rel_tol=rel, abs_tol=1e-9):
            side = ("too small: noise calibrated to it would not hide one person"
                    if found < expected else "too large: safe, but the noise is needlessly big")
            return fail(key, f"{describe(case)}: expected {g(expected)}, found {g(found)} "
                             f"({side}). {hint(case, found)}".strip(), "wrong",
                        expected=expected, found=found)
    shown = "; ".join(f"{describe(c)}: {g(t)}" for c, t in zip(cases, truth))
    return ok(key, f"right at all {len(truth)} hidden settings ({shown}).")


# ------------------------------------------------------------------ Task 1: sums and counts
def _brute(query, universe, size, neighbours="add_remove", norm=1):
    from ...sensitivity import global_sensitivity

    return float(global_sensitivity(query, universe, size, neighbours=neighbours, norm=norm))


def _sum(x):
    return float(np.sum(x))


def _t1_request(rng):
    ms = [1] + [int(m) for m in rng.choice(np.arange(2, 40), 3, replace=False)]
    rng.shuffle(ms)
    return {"cases": [{"M": m} for m in ms]}, [_brute(_sum, list(range(m + 1)), 2) for m in ms]


def _t1_collect(answers, request):
    return collect_values(answers, "sum_sensitivity", [(c["M"],) for c in request["cases"]],
                          forbidden=_BRUTE)


def _t1_judge(data, request, truth):
    return _judge_calls(
        "Task 1", data, field(request, "cases", []), truth, signature="sum_sensitivity(M)",
        describe=lambda c: f"records in 0..{c['M']}, add/remove",
        hint=lambda c, f: ("Hint: adding one record of the largest value moves the sum by "
                           "that value; a count is the case M = 1."))


# ------------------------------------------------------------------ Task 2: mean and median
def _mean(x):
    return float(np.mean(x))


def _median(x):
    return float(np.median(x))


def _mn_cases(rng):
    ns = [int(n) for n in rng.choice([2, 3, 4, 5, 6], 3, replace=False)]
    if all(n % 2 for n in ns) or not any(n % 2 for n in ns):
        ns[0] = ns[0] + 1 if ns[0] < 6 else 5
    return [{"M": float(rng.integers(2, 100) * 10), "n": n} for n in ns]


def _mn_request(rng, query):
    cases = _mn_cases(rng)
    truth = [_brute(query, [0.0, c["M"] / 2, c["M"]], c["n"], "substitute") for c in cases]
    return {"cases": cases}, truth


def _describe_mn(c):
    return f"{c['n']} records in [0, {g(c['M'])}], substitute"


def _t2a_request(rng):
    return _mn_request(rng, _mean)


def _t2a_collect(answers, request):
    return collect_values(answers, "mean_sensitivity",
                          [(c["M"], c["n"]) for c in request["cases"]], forbidden=_BRUTE)


def _t2a_judge(data, request, truth):
    return _judge_calls(
        "Task 2a", data, field(request, "cases", []), truth,
        signature="mean_sensitivity(M, n)", describe=_describe_mn,
        hint=lambda c, f: ("Hint: changing one record moves the sum by at most M, and the "
                           "size n is public."))


def _t2b_request(rng):
    return _mn_request(rng, _median)


def _t2b_collect(answers, request):
    return collect_values(answers, "median_sensitivity",
                          [(c["M"], c["n"]) for c in request["cases"]], forbidden=_BRUTE)


def _t2b_judge(data, request, truth):
    def hint(c, found):
        if c["n"] % 2 == 0:
            return ("Hint: with an even n the median is the average of the two middle "
                    "values; try n = 4 by brute force with dp.global_sensitivity.")
        return ("Hint: with half the records at 0 and half at M, one changed record moves the "
                "middle one from one end to the other.")
    return _judge_calls("Task 2b", data, field(request, "cases", []), truth,
                        signature="median_sensitivity(M, n)", describe=_describe_mn, hint=hint)


# ------------------------------------------------------------------ Task 3: histograms
def _hist_request(rng, norm):
    kinds = ["add_remove", "substitute", str(rng.choice(["add_remove", "substitute"]))]
    cases = [{"n_categories": int(rng.integers(2, 7)), "neighbours": kinds[i], "norm": norm}
             for i in rng.permutation(3)]

    def truth(c):
        k = c["n_categories"]
        return _brute(lambda x: np.bincount(np.asarray(x, dtype=int), minlength=k),
                      list(range(k)), 3, c["neighbours"], c["norm"])
    return {"cases": cases}, [truth(c) for c in cases]


def _hist_collect(answers, request):
    return collect_values(answers, "histogram_sensitivity",
                          [(c["n_categories"], c["neighbours"], c["norm"])
                           for c in request["cases"]], forbidden=_BRUTE)


def _hist_judge(key, data, request, truth):
    def describe(c):
        return (f"{c['n_categories']} categories, neighbours {c['neighbours']!r}, "
                f"L{c['norm']} norm")

    def hint(c, found):
        if c["neighbours"] == "substitute":
            return ("Hint: changing one record's category takes 1 from one count and adds 1 "
                    "to another: the change vector is (…, −1, …, +1, …); take its L1 or L2 norm.")
        return "Hint: adding or removing one record changes exactly one count by 1."
    return _judge_calls(key, data, field(request, "cases", []), truth,
                        signature="histogram_sensitivity(n_categories, neighbours, norm)",
                        describe=describe, hint=hint)


def _t3a_request(rng):
    return _hist_request(rng, 1)


def _t3b_request(rng):
    return _hist_request(rng, 2)


def _t3a_judge(data, request, truth):
    return _hist_judge("Task 3a", data, request, truth)


def _t3b_judge(data, request, truth):
    return _hist_judge("Task 3b", data, request, truth)


# ------------------------------------------------------------------ Task 4: the mechanism
def _t4_request(rng):
    return ex.mechanism_request(rng), None


def _t4_collect(answers, request):
    fn = answers.get("laplace_release")
    return ex.mechanism_collect(fn, request)


def _t4_judge(data, request, truth):
    # graded: a scale well above Δ/ε is private but not a correct Laplace mechanism
    return ex.mechanism_judge(data, request, name="Task 4", max_waste=WASTE_TOLERANCE)


# ------------------------------------------------------------------ Task 5: the slip, refuted
def _t5_request(rng):
    # the fewest runs the check's tail tests accept: refuting b = ε needs far fewer
    return ex.mechanism_request(rng, seconds=1e-3), None


def _t5_collect(answers, request):
    return ex.mechanism_collect(answers.get("slipped_release"), request)


def _noise_scales(data, request):
    """Mean |output - input| per (Δ, ε) point of the request, or None if unreadable."""
    try:
        out = np.asarray(data["outputs"], dtype=float)
        inputs = np.asarray(request["inputs"], dtype=float)
        n_points, m = inputs.shape
        if out.ndim != 2 or out.shape[0] != n_points * m or out.shape[1] < 2:
            return None
        z = np.abs(out - inputs.reshape(-1, 1)).reshape(n_points, -1)
        scales = z.mean(axis=1)
        return scales if np.all(np.isfinite(scales)) else None
    except (TypeError, ValueError, KeyError, IndexError):
        return None


def _t5_judge(data, request, truth):
    key = "Task 5"
    verdict = ex.mechanism_judge(data, request, name="slipped_release")
    if not verdict.solved:
        return not_solved(key, "slipped_release still returns None: fill in its body")
    reason = verdict.details.get("reason")
    if reason != "privacy":
        return fail(key, f"the check did not refute the slipped mechanism for privacy (its "
                         f"verdict: {verdict.message[:400]}). Write the slip exactly: noise "
                         "rng.laplace(0, epsilon) added to the value.", "not_refuted",
                    verdict=reason)
    scales = _noise_scales(data, request)
    points = np.asarray(field(request, "points", []), dtype=float)
    if scales is None or points.ndim != 2 or len(scales) != len(points):
        return fail(key, "the collected outputs could not be read; run the check again.",
                    "malformed")
    eps = points[:, 1]
    off = np.abs(scales / eps - 1)
    if np.any(off > 0.05):
        i = int(np.argmax(off))
        return fail(key, f"the mechanism was refuted, but it is not the slip b = ε: at the "
                         f"hidden ε = {g(eps[i])} its noise has mean |error| {g(scales[i])}, "
                         f"where Lap(ε) has {g(eps[i])}. Hint: rng.laplace(0, epsilon).",
                    "not_the_slip")
    first = verdict.message.split(": ", 1)[-1]
    return ok(key, f"the check refuted the slipped mechanism for privacy, as it should: "
                   f"{first[:500]}")


# ------------------------------------------------------------------ Task 6: the error bound
def _t6_request(rng):
    cases = [{"sensitivity": float(np.round(rng.uniform(0.5, 10), 3)),
              "epsilon": float(np.round(np.exp(rng.uniform(np.log(0.05), np.log(5))), 4)),
              "p": float(rng.choice([0.01, 0.02, 0.05, 0.1, 0.2]))} for _ in range(4)]
    return {"cases": cases}, [c["sensitivity"] / c["epsilon"] * math.log(1 / c["p"])
                              for c in cases]


def _t6_collect(answers, request):
    return collect_values(answers, "error_bound",
                          [(c["sensitivity"], c["epsilon"], c["p"]) for c in request["cases"]])


def _t6_judge(data, request, truth):
    def describe(c):
        return f"Δ = {g(c['sensitivity'])}, ε = {g(c['epsilon'])}, p = {g(c['p'])}"

    def hint(c, found):
        b = c["sensitivity"] / c["epsilon"]
        if math.isclose(found, b * math.log10(1 / c["p"]), rel_tol=1e-6):
            return "That is log base 10; the bound uses the natural log (np.log)."
        if math.isclose(found, b * math.log(2 / c["p"]), rel_tol=1e-6):
            return ("Pr[|Lap(b)| ≥ t] = exp(−t/b) already counts both tails; no factor 2.")
        return "Hint: solve exp(−t/b) = p for t, with b = Δ/ε."
    return _judge_calls("Task 6", data, field(request, "cases", []), truth,
                        signature="error_bound(sensitivity, epsilon, p)", describe=describe,
                        hint=hint)


TASKS = [
    Task(key="Task 1", points=1, names=("sum_sensitivity",),
         title="The sensitivity of a sum (and a count)", request=_t1_request,
         collect=_t1_collect, judge=_t1_judge, forbidden=_BRUTE),
    Task(key="Task 2a", points=1, names=("mean_sensitivity",),
         title="The sensitivity of a mean", request=_t2a_request, collect=_t2a_collect,
         judge=_t2a_judge, forbidden=_BRUTE),
    Task(key="Task 2b", points=1, names=("median_sensitivity",),
         title="The sensitivity of a median", request=_t2b_request, collect=_t2b_collect,
         judge=_t2b_judge, forbidden=_BRUTE),
    Task(key="Task 3a", points=1, names=("histogram_sensitivity",),
         title="A histogram's L1 sensitivity", request=_t3a_request, collect=_hist_collect,
         judge=_t3a_judge, forbidden=_BRUTE),
    Task(key="Task 3b", points=1, names=("histogram_sensitivity",),
         title="A histogram's L2 sensitivity", request=_t3b_request, collect=_hist_collect,
         judge=_t3b_judge, forbidden=_BRUTE),
    Task(key="Task 4", points=4, names=("laplace_release",),
         title="Your Laplace mechanism, audited", request=_t4_request, collect=_t4_collect,
         judge=_t4_judge),
    Task(key="Task 5", points=2, names=("slipped_release",),
         title="The classic slip, refuted for privacy", request=_t5_request,
         collect=_t5_collect, judge=_t5_judge),
    Task(key="Task 6", points=1, names=("error_bound",), title="The 1 − p error bound",
         request=_t6_request, collect=_t6_collect, judge=_t6_judge),
]
