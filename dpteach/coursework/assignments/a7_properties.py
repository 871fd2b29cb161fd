"""A7 · Properties of DP and the hypothesis-testing view (graded tasks).

Every task runs the student's functions on inputs the check draws itself, and compares
with the kit's own functions computed in the grader (which the student's functions must
not call: a call is noticed while the check runs):

* Task 1 (2 points) ``group_epsilon_delta(epsilon, delta, k)`` -> (kε, δ_k), the
  group-privacy guarantee for datasets k people apart: kε [DR14 Theorem 2.2, pure DP] and
  a δ_k the chain argument proves, anything from its exact sum δ·(e^(kε) − 1)/(e^ε − 1)
  (:func:`dpteach.properties.group_privacy_chain`) to the textbook k·e^((k−1)ε)·δ
  (:func:`dpteach.group_privacy`), at hidden (ε, δ, k); one hidden case has e^ε < 2 and
  k ≥ 5, where e^(kε)·δ falls below the chain sum.
* Task 2 (2 points) ``parallel_cost(epsilons)`` and ``sequential_cost(epsilons)``: the
  total ε of mechanisms run on disjoint partitions (the largest ε, [McSherry 2009]) and on
  the same data (the sum, basic composition [DR14 Theorem 3.16]), on hidden lists.
* Task 3 (2 points) ``tradeoff_beta(alpha, epsilon, delta)``: the smallest type II error
  max(0, 1 − δ − e^ε α, e^−ε (1 − δ − α)) an (ε, δ)-DP mechanism allows [Kairouz, Oh &
  Viswanath 2015, Theorem 2.1], vectorised, on a hidden α grid at hidden (ε, δ), compared
  with :func:`dpteach.tradeoff_curve`.
* Task 4 (2 points) ``membership_test_errors(scores_out, scores_in, threshold)`` ->
  (α, β) of the test "say IN when the score exceeds the threshold", counted exactly on
  hidden integer scores with ties at the threshold, compared with
  :func:`dpteach.tradeoff.empirical_tradeoff`.
* Task 5 (2 points) ``is_consistent_with_dp(alpha_hat, beta_hat, n_out, n_in, epsilon,
  delta, level)``: False exactly when the measured point lies below the (ε, δ) curve even
  at the most favourable corner of its two Clopper-Pearson intervals at ``level`` (each
  side), as :func:`dpteach.tradeoff.outside_region` decides. The hidden cases include
  points below the curve that the intervals excuse (a point comparison wrongly convicts),
  points flagged at level 0.05 but not at the given level, and points beyond doubt.
* Task 6 (2 points) ``pair_delta(p, q, epsilon)``: the smallest δ for which two output
  distributions on a finite set satisfy (ε, δ)-DP in both orders of the pair, the larger of
  the two hockey-stick divergences [DR14 Def. 2.4], compared with
  :func:`dpteach.smallest_delta` on four hidden pairs: the larger direction is p's in two
  and q's in two, and one pair has an output only one side produces. One direction
  only, Pr[L > ε], the sum of the directions and a missing positive part all fail.

Notebook: notebooks/solutions/A7_properties_and_testing.ipynb (with notebooks 12 and 13).
"""

from __future__ import annotations

import math

import numpy as np

from . import Task
from ._student import (call_each, opening, fail, float_array, forbid, g, is_unsolved, number, ok,
                       UNSOLVED)


def _pair(value):
    """A pair of finite numbers as a list, or None."""
    try:
        if isinstance(value, (str, bytes, dict)) or len(value) != 2:
            return None
        pair = [number(v) for v in value]
    except TypeError:
        return None
    return None if None in pair else pair


def _run(fn, argsets, read, forbidden):
    """:func:`call_each` under :class:`forbid`: {"values": [...], "used": [...]}, or the
    first problem."""
    if is_unsolved(fn):
        return dict(UNSOLVED)
    with forbid(*forbidden, code=[fn]) as guard:
        data = call_each(fn, argsets, "values", read)
    if "values" in data:
        data["used"] = list(guard.used)
    return data


def _values(key, data, n, hint, shortcut):
    """(values, None) or (None, Feedback) for data from :func:`_run`."""
    bad = opening(key, data, hint)
    if bad is not None:
        return None, bad
    used = data.get("used")
    if isinstance(used, list) and used:
        return None, fail(key, f"your function calls {', '.join(str(u) for u in used)[:120]}; "
                               f"the task is to write the formula yourself. Hint: {shortcut}",
                          "library")
    found = data.get("values")
    if not isinstance(found, list) or len(found) != n:
        return None, fail(key, "the check's data is malformed.", "malformed")
    return found, None


# ------------------------------------------------------------------ Task 1
_T1_FORBID = ("dpteach:group_privacy", "dpteach.properties:group_privacy")


def _t1_request(rng):
    cases = [{"epsilon": float(np.round(rng.uniform(0.05, 1.0), 4)),
              "delta": float(10 ** rng.uniform(-9, -4)),
              "k": int(rng.integers(2, 12))} for _ in range(3)]
    # one case with e^eps < 2 and k >= 5, where e^(k eps)·delta is below the chain sum
    cases.append({"epsilon": float(np.round(rng.uniform(0.15, 0.4), 4)),
                  "delta": float(10 ** rng.uniform(-9, -4)), "k": int(rng.integers(5, 12))})
    cases = [cases[i] for i in rng.permutation(len(cases))]
    from ...properties import group_privacy, group_privacy_chain
    return {"cases": cases}, {
        "expected": [list(group_privacy(c["epsilon"], c["delta"], c["k"])) for c in cases],
        "chain": [group_privacy_chain(c["epsilon"], c["delta"], c["k"])[1] for c in cases]}


def _t1_collect(answers, req):
    return _run(answers.get("group_epsilon_delta"),
                [(c["epsilon"], c["delta"], c["k"]) for c in req["cases"]], _pair, _T1_FORBID)


def _t1_judge(data, req, truth):
    key = "Task 1"
    expected = truth.get("expected", [])
    chain = truth.get("chain", [])
    found, bad = _values(key, data, len(expected), "Hint: return the pair (epsilon_k, delta_k).",
                         "(k·ε, δ·(1 + e^ε + … + e^((k−1)ε))) or (k·ε, k·e^((k−1)ε)·δ).")
    if bad is not None:
        return bad
    if len(chain) != len(expected):
        return fail(key, "the check's data is malformed.", "malformed")
    tighter = 0
    for c, f, (e_eps, e_delta), c_delta in zip(req["cases"], found, expected, chain):
        eps, delta, k = c["epsilon"], c["delta"], c["k"]
        text = f"group_epsilon_delta({g(eps)}, {g(delta, 3)}, {k})"
        if not isinstance(f, list):
            return fail(key, f"{text} returned {f!r}; expected a pair of numbers "
                             "(epsilon_k, delta_k).", "type")
        f_eps, f_delta = f
        if not math.isclose(f_eps, e_eps, rel_tol=1e-9):
            return fail(key, f"{text}: ε_k = {g(f_eps, 8)}, expected {g(e_eps, 8)}. Hint: each of "
                             "the k steps from one dataset to the other costs ε.", "epsilon")
        # any delta_k the chain argument proves: from its exact sum up to the textbook bound
        low, high = c_delta * (1 - 1e-9), e_delta * (1 + 1e-9)
        if not low <= f_delta <= high:
            twins = {"k·δ (the δ's of the k steps add, but each is also multiplied by the "
                     "e^ε of the later steps)": k * delta,
                     "e^(kε)·δ": math.exp(k * eps) * delta,
                     "k·e^(kε)·δ (the last step's δ is not multiplied)":
                         k * math.exp(k * eps) * delta,
                     "δ (δ grows with k)": delta}
            hint = next((f" You returned {name}." for name, v in twins.items()
                         if math.isclose(f_delta, v, rel_tol=1e-6)), "")
            side = ("below the chain sum: smaller than the chain argument proves"
                    if f_delta < low else "above k·e^((k−1)ε)·δ: looser than the textbook bound")
            return fail(key, f"{text}: δ_k = {g(f_delta, 6)} is {side}; expected a δ_k from "
                             f"{g(c_delta, 6)} (the chain sum) to {g(e_delta, 6)} "
                             f"(k·e^((k−1)ε)·δ).{hint} Hint: δ·(1 + e^ε + … + e^((k−1)ε)) ≤ "
                             "k·e^((k−1)ε)·δ.", "delta")
        tighter += f_delta < e_delta * (1 - 1e-9)
    c, (e_eps, e_delta), c_delta = req["cases"][-1], expected[-1], chain[-1]
    which = ("the exact chain sum, tighter than the textbook k·e^((k−1)ε)·δ" if tighter else
             "the textbook k·e^((k−1)ε)·δ; the exact chain sum δ·(e^(kε) − 1)/(e^ε − 1) is "
             "tighter and also accepted")
    return ok(key, f"correct on {len(expected)} hidden (ε, δ, k), with {which}; e.g. a "
                   f"({g(c['epsilon'])}, {g(c['delta'], 3)})-DP mechanism protects groups of "
                   f"{c['k']} at ε = {g(e_eps)} with δ between {g(c_delta, 3)} and "
                   f"{g(e_delta, 3)}: δ grows exponentially in the group size.")


# ------------------------------------------------------------------ Task 2
_T2_FORBID = ("dpteach:parallel_composition", "dpteach.properties:parallel_composition",
              "dpteach:basic_composition", "dpteach.accounting:basic_composition",
              "dpteach.properties:parallel_costs")


def _t2_request(rng):
    lists = [[float(v) for v in np.round(rng.uniform(0.01, 2.0, int(size)), 3)]
             for size in (rng.integers(2, 6), rng.integers(6, 20), rng.integers(20, 60))]
    lists.append([float(rng.choice([0.1, 0.25, 0.5]))] * int(rng.integers(3, 40)))
    lists = [lists[i] for i in rng.permutation(len(lists))]
    return {"lists": lists}, {"parallel": [max(v) for v in lists],
                              "sequential": [math.fsum(v) for v in lists]}


def _t2_collect(answers, req):
    out = {}
    for name in ("parallel_cost", "sequential_cost"):
        part = _run(answers.get(name), [(list(v),) for v in req["lists"]], number, _T2_FORBID)
        if "values" not in part:
            return part
        out[name] = part["values"]
        out.setdefault("used", [])
        out["used"] += [u for u in part["used"] if u not in out["used"]]
    return out


def _t2_judge(data, req, truth):
    key = "Task 2"
    bad = opening(key, data, "Hint: each function returns one number.")
    if bad is not None:
        return bad
    used = data.get("used")
    if isinstance(used, list) and used:
        return fail(key, f"your functions call {', '.join(str(u) for u in used)[:120]}; the task "
                         "is to combine the ε's yourself.", "library")
    lists = req["lists"]
    for name, rule, exp in (("parallel_cost", "disjoint partitions: one person is in one part "
                             "only, so the total is the largest ε", truth.get("parallel", [])),
                            ("sequential_cost", "the same data: basic composition adds the ε's",
                             truth.get("sequential", []))):
        found = data.get(name)
        if not isinstance(found, list) or len(found) != len(exp):
            return fail(key, "the check's data is malformed.", "malformed")
        for v_list, f, e in zip(lists, found, exp):
            shown = (f"[{v_list[0]:g}] × {len(v_list)}" if len(set(v_list)) == 1 else
                     f"{v_list[:5]}{'…' if len(v_list) > 5 else ''} ({len(v_list)} values)")
            v = number(f)
            if v is None:
                return fail(key, f"{name}({shown}) returned {f!r}; expected one number.", "type")
            if not math.isclose(v, e, rel_tol=1e-9, abs_tol=1e-12):
                other = (" That is the sum: sequential composition." if name == "parallel_cost"
                         and math.isclose(v, math.fsum(v_list), rel_tol=1e-9) else
                         " That is the largest ε: parallel composition, which needs disjoint "
                         "data." if name == "sequential_cost" and math.isclose(v, max(v_list))
                         else "")
                return fail(key, f"{name}({shown}) returned {g(v, 8)}, expected {g(e, 8)}."
                                 f"{other} Hint: {rule}.", name)
    i = int(np.argmax([len(v) for v in lists]))
    return ok(key, f"correct on {len(lists)} hidden lists; e.g. {len(lists[i])} mechanisms cost "
                   f"ε = {g(truth['parallel'][i])} on disjoint partitions but "
                   f"{g(truth['sequential'][i])} on the same data.")


# ------------------------------------------------------------------ Task 3
_T3_FORBID = ("dpteach:tradeoff_curve", "dpteach.tradeoff:tradeoff_curve",
              "dpteach.tradeoff:advantage_bound")


def _t3_request(rng):
    cases = []
    for delta in (0.0, float(10 ** rng.uniform(-3, -1))):
        grid = np.sort(np.concatenate([[0.0, 1.0], rng.uniform(0, 1, int(rng.integers(30, 60)))]))
        cases.append({"alpha": [float(a) for a in grid],
                      "epsilon": float(np.round(rng.uniform(0.1, 2.5), 3)), "delta": delta})
    from ...tradeoff import tradeoff_curve
    return {"cases": cases}, {"expected": [
        np.asarray(tradeoff_curve(np.array(c["alpha"]), c["epsilon"], c["delta"]), float).tolist()
        for c in cases]}


def _t3_collect(answers, req):
    return _run(answers.get("tradeoff_beta"),
                [(np.array(c["alpha"]), c["epsilon"], c["delta"]) for c in req["cases"]],
                lambda v: _array_or_none(v), _T3_FORBID)


def _array_or_none(v):
    arr = float_array(v)
    return None if arr is None else arr


def _t3_judge(data, req, truth):
    key = "Task 3"
    expected = truth.get("expected", [])
    found, bad = _values(key, data, len(expected), "Hint: use np.maximum on arrays.",
                         "β = max(0, 1 − δ − e^ε α, e^−ε (1 − δ − α)).")
    if bad is not None:
        return bad
    for c, f, e in zip(req["cases"], found, expected):
        a, e = np.asarray(c["alpha"], float), np.asarray(e, float)
        text = (f"tradeoff_beta(alpha grid of {a.size}, ε = {g(c['epsilon'])}, "
                f"δ = {g(c['delta'], 3)})")
        arr = float_array(f, shape=a.shape)
        if arr is None:
            return fail(key, f"{text} returned {str(f)[:80]}; expected an array of {a.size} finite "
                             "numbers, one β per α (vectorise with numpy).", "type")
        if not np.allclose(arr, e, rtol=1e-9, atol=1e-12):
            i = int(np.argmax(np.abs(arr - e)))
            eps, d = c["epsilon"], c["delta"]
            one = np.maximum(0, 1 - d - math.exp(eps) * a)
            hint = (" Only the first line 1 − δ − e^ε α: the second, e^−ε (1 − δ − α), comes from "
                    "swapping the roles of the two datasets." if np.allclose(arr, one, atol=1e-9)
                    else " Did you leave out δ?" if np.allclose(
                        arr, np.maximum.reduce([0 * a, 1 - math.exp(eps) * a,
                                                math.exp(-eps) * (1 - a)]), atol=1e-9) else "")
            return fail(key, f"{text}: at α = {g(a[i])} you returned β = {g(arr[i], 8)}, expected "
                             f"{g(e[i], 8)}.{hint} Hint: β = max(0, 1 − δ − e^ε α, "
                             "e^−ε (1 − δ − α)).", "wrong")
    c = req["cases"][0]
    least = max(0, 1 - math.exp(c["epsilon"]) * .05, math.exp(-c["epsilon"]) * .95)
    return ok(key, f"correct on {sum(len(c['alpha']) for c in req['cases'])} hidden α's at two "
                   f"hidden (ε, δ); e.g. at ε = {g(c['epsilon'])}, δ = 0 an attacker who falsely "
                   f"accuses 5% must miss at least "
                   f"{g(least, 3)}.")


# ------------------------------------------------------------------ Task 4
_T4_FORBID = ("dpteach.tradeoff:empirical_tradeoff",)


def _t4_request(rng):
    cases = []
    for _ in range(3):
        count, eps = int(rng.integers(10, 60)), float(rng.choice([0.3, 0.5, 1.0, 2.0]))
        n_out, n_in = int(rng.integers(200, 900)), int(rng.integers(200, 900))
        out = np.round(count + rng.laplace(0, 1 / eps, n_out))
        in_ = np.round(count + 1 + rng.laplace(0, 1 / eps, n_in))
        threshold = float(rng.choice(np.concatenate([out, in_])))      # ties at the threshold
        cases.append({"scores_out": out.astype(int).tolist(), "scores_in": in_.astype(int).tolist(),
                      "threshold": threshold})
    from ...tradeoff import empirical_tradeoff
    exp = []
    for c in cases:
        a, b = empirical_tradeoff(np.array(c["scores_out"], float), np.array(c["scores_in"], float),
                                  np.array([c["threshold"]]))
        exp.append([float(a[0]), float(b[0])])
    return {"cases": cases}, {"expected": exp}


def _t4_collect(answers, req):
    return _run(answers.get("membership_test_errors"),
                [(np.array(c["scores_out"], float), np.array(c["scores_in"], float),
                  c["threshold"]) for c in req["cases"]], _pair, _T4_FORBID)


def _t4_judge(data, req, truth):
    key = "Task 4"
    expected = truth.get("expected", [])
    found, bad = _values(key, data, len(expected), "Hint: return the pair (alpha, beta).",
                         "α = mean(scores_out > t), β = mean(scores_in <= t).")
    if bad is not None:
        return bad
    for c, f, (ea, eb) in zip(req["cases"], found, expected):
        out, in_, t = (np.asarray(c["scores_out"], float), np.asarray(c["scores_in"], float),
                       float(c["threshold"]))
        text = (f"membership_test_errors({out.size} OUT scores, {in_.size} IN scores, "
                f"threshold={g(t)})")
        if not isinstance(f, list):
            return fail(key, f"{text} returned {f!r}; expected a pair of numbers (alpha, beta).",
                        "type")
        fa, fb = f
        if math.isclose(fa, ea, abs_tol=1e-12) and math.isclose(fb, eb, abs_tol=1e-12):
            continue
        twins = {"α and β swapped": (eb, ea),
                 "'≥ threshold' instead of '> threshold' (a score equal to the threshold must "
                 "count as OUT)": (float(np.mean(out >= t)), float(np.mean(in_ < t))),
                 "β as the fraction of IN scores above the threshold (that is 1 − β, the power)":
                     (ea, 1 - eb),
                 "counts instead of fractions": (ea * out.size, eb * in_.size)}
        hint = next((f" That looks like {name}." for name, (x, y) in twins.items()
                     if math.isclose(fa, x, abs_tol=1e-12) and math.isclose(fb, y, abs_tol=1e-12)),
                    "")
        return fail(key, f"{text} returned (α, β) = ({g(fa, 6)}, {g(fb, 6)}), expected "
                         f"({g(ea, 6)}, {g(eb, 6)}).{hint} Hint: α is the fraction of OUT scores "
                         "the test calls IN (score > threshold), β the fraction of IN scores it "
                         "calls OUT.", "wrong")
    ea, eb = expected[0]
    return ok(key, f"correct on {len(expected)} hidden score samples (with ties at the threshold); "
                   f"e.g. α = {g(ea, 4)}, β = {g(eb, 4)}.")


# ------------------------------------------------------------------ Task 5
_T5_FORBID = ("dpteach.tradeoff:outside_region",
              "dpteach.audit:clopper_pearson",
              "dpteach:tradeoff_curve", "dpteach.tradeoff:tradeoff_curve")

#: kinds of hidden case: (below the curve as a point, flagged at level, flagged at 0.05)
_T5_KINDS = [(True, False, True), (True, False, True), (True, False, False),
             (True, True, True), (True, True, True), (False, False, False)]


def _t5_verdicts(a, b, n_out, n_in, eps, delta, level):
    from ...audit import clopper_pearson
    from ...tradeoff import tradeoff_curve
    _, a_high = clopper_pearson(round(a * n_out), n_out, alpha=level)
    _, b_high = clopper_pearson(round(b * n_in), n_in, alpha=level)
    return b < tradeoff_curve(a, eps, delta), float(tradeoff_curve(a_high, eps, delta) - b_high)


def _t5_request(rng):
    from ...tradeoff import outside_region, tradeoff_curve
    cases, todo = [], list(_T5_KINDS)
    for _ in range(20000):
        if not todo:
            break
        eps = float(np.round(rng.uniform(0.3, 2.0), 3))
        delta = float(rng.choice([0.0, 1e-3, 1e-2]))
        level = float(rng.choice([1e-6, 1e-5, 1e-4]))
        n_out, n_in = int(rng.integers(300, 3000)), int(rng.integers(300, 3000))
        a = int(rng.integers(1, n_out // 2)) / n_out
        b = int(np.clip(round((tradeoff_curve(a, eps, delta) + rng.normal(0, 0.05)) * n_in),
                        0, n_in)) / n_in
        naive, gap = _t5_verdicts(a, b, n_out, n_in, eps, delta, level)
        _, gap05 = _t5_verdicts(a, b, n_out, n_in, eps, delta, 0.05)
        if min(abs(gap), abs(gap05)) < 1e-4:                  # keep away from the boundary
            continue
        kind = (bool(naive), gap > 0, gap05 > 0)
        if kind in todo:
            todo.remove(kind)
            cases.append({"alpha_hat": a, "beta_hat": b, "n_out": n_out, "n_in": n_in,
                          "epsilon": eps, "delta": delta, "level": level})
    cases = [cases[i] for i in rng.permutation(len(cases))]
    truth = [not bool(outside_region(c["alpha_hat"], c["beta_hat"], c["n_out"], c["n_in"],
                                     c["epsilon"], c["delta"], level=c["level"]))
             for c in cases]
    return {"cases": cases}, {"consistent": truth}


def _boolean(x):
    return bool(x) if isinstance(x, (bool, np.bool_)) else None


def _t5_collect(answers, req):
    return _run(answers.get("is_consistent_with_dp"),
                [(c["alpha_hat"], c["beta_hat"], c["n_out"], c["n_in"], c["epsilon"],
                  c["delta"], c["level"]) for c in req["cases"]], _boolean, _T5_FORBID)


def _t5_judge(data, req, truth):
    key = "Task 5"
    expected = truth.get("consistent", [])
    found, bad = _values(key, data, len(expected), "Hint: return True or False.",
                         "scipy.stats.beta.ppf gives the Clopper-Pearson bounds; compare the "
                         "upper bound of β with your tradeoff_beta at the upper bound of α.")
    if bad is not None:
        return bad
    for c, f, want in zip(req["cases"], found, expected):
        text = (f"is_consistent_with_dp(α̂ = {g(c['alpha_hat'])}, β̂ = {g(c['beta_hat'])}, "
                f"n_out = {c['n_out']}, n_in = {c['n_in']}, ε = {g(c['epsilon'])}, "
                f"δ = {g(c['delta'])}, level = {g(c['level'])})")
        if not isinstance(f, bool):
            return fail(key, f"{text} returned {f!r}; expected True or False.", "type")
        if f != want:
            naive, _ = _t5_verdicts(c["alpha_hat"], c["beta_hat"], c["n_out"], c["n_in"],
                                    c["epsilon"], c["delta"], c["level"])
            why = (" The point is below the curve, but its intervals reach above it: with "
                   f"{c['n_out']} and {c['n_in']} trials a correct mechanism lands there by "
                   "chance. Compare the curve with the interval's corner, not the point."
                   if want and naive else
                   " Even the most favourable corner of the intervals is below the curve: "
                   "this mechanism is not (ε, δ)-DP." if not want else
                   " The point is on or above the curve: nothing to convict.")
            return fail(key, f"{text} returned {f}, expected {want}.{why} Hint: take the upper "
                             "Clopper-Pearson bounds of α̂ and β̂ at this level (two-sided, "
                             "level/2 in each tail) and say False only when β's bound is below "
                             "the curve at α's bound.", "wrong")
    excused = sum(1 for c, w in zip(req["cases"], expected) if w and _t5_verdicts(
        c["alpha_hat"], c["beta_hat"], c["n_out"], c["n_in"], c["epsilon"], c["delta"],
        c["level"])[0])
    return ok(key, f"correct on {len(expected)} hidden audits, including {excused} point(s) "
                   "below the curve that the confidence intervals excuse.")


# ------------------------------------------------------------------ Task 6
_T6_FORBID = ("dpteach.definition:smallest_delta",
              "dpteach.definition:hockey_stick_divergence")


def _hs(p, q, eps):
    """sum_i max(0, p_i - e^eps q_i): the hockey-stick divergence of p from q."""
    return float(np.maximum(np.asarray(p) - math.exp(eps) * np.asarray(q), 0.0).sum())


def _t6_request(rng):
    """Four pairs of output distributions on a few outputs, each q a mixture of p and a
    random law: the larger direction is p's in two and q's in two, and one pair has an
    output that only one side can produce (an infinite loss)."""
    wanted = ["p", "q", "p", "q"]
    cases = []
    for _ in range(10000):
        if len(cases) == len(wanted):
            break
        m = int(rng.integers(3, 8))
        p = rng.dirichlet(np.full(m, 1.0))
        q = (1 - rng.uniform(0.2, 0.7)) * p + rng.uniform(0.2, 0.7) * rng.dirichlet(np.full(m, 0.5))
        if len(cases) == 2:                                    # an output only x can produce
            q[int(np.argmax(p[:-1]))] = 0.0
        p, q = np.round(p / p.sum(), 6), np.round(q / q.sum(), 6)
        p[-1], q[-1] = 1 - p[:-1].sum(), 1 - q[:-1].sum()
        if (p < 0).any() or (q < 0).any():
            continue
        p, q = np.abs(p), np.abs(q)
        eps = float(np.round(rng.uniform(0.1, 1.0), 2))
        forward, backward = _hs(p, q, eps), _hs(q, p, eps)
        side = "p" if forward > backward else "q"
        if side != wanted[len(cases)] or abs(forward - backward) < 0.01 \
                or min(forward, backward) < 1e-3:
            continue
        cases.append({"p": p.tolist(), "q": q.tolist(), "epsilon": eps})
    cases = [cases[i] for i in rng.permutation(len(cases))]
    from ...definition import smallest_delta
    return {"cases": cases}, {"expected": [smallest_delta(c["p"], c["q"], c["epsilon"])
                                           for c in cases]}


def _t6_collect(answers, req):
    return _run(answers.get("pair_delta"),
                [(np.array(c["p"]), np.array(c["q"]), c["epsilon"]) for c in req["cases"]],
                number, _T6_FORBID)


def _t6_twins(p, q, eps):
    """Values a known slip returns, by name."""
    up, down = _hs(p, q, eps), _hs(q, p, eps)
    e = math.exp(eps)
    tail = max(float(p[p > e * q].sum()), float(q[q > e * p].sum()))
    return {"only the direction Pr[M(x) ∈ S] − e^ε Pr[M(x′) ∈ S]; the definition asks for "
            "both orders of the pair": up,
            "only the direction Pr[M(x′) ∈ S] − e^ε Pr[M(x) ∈ S]; the definition asks for "
            "both orders of the pair": down,
            "Pr[L > ε], the chance that the loss exceeds ε: each such output counts only "
            "with weight 1 − e^(ε − L) in δ": tail,
            "the sum of the two directions: δ is the larger one, not their sum": up + down,
            "e^−ε in place of e^ε": max(_hs(p, q, -eps), _hs(q, p, -eps)),
            "the sum without the positive part (max(0, ·) per output)":
                max(float((p - e * q).sum()), float((q - e * p).sum()))}


def _t6_judge(data, req, truth):
    key = "Task 6"
    expected = truth.get("expected", [])
    found, bad = _values(key, data, len(expected), "Hint: return one number, the δ.",
                         "sum the positive parts of p − e^ε q, and of q − e^ε p; keep the larger.")
    if bad is not None:
        return bad
    for c, f, e in zip(req["cases"], found, expected):
        p, q = np.asarray(c["p"], float), np.asarray(c["q"], float)
        text = (f"pair_delta(p = {np.round(p, 3).tolist()}, q = {np.round(q, 3).tolist()}, "
                f"ε = {g(c['epsilon'])})")
        v = number(f)
        if v is None:
            return fail(key, f"{text} returned {str(f)[:80]}; expected one number.", "type")
        if math.isclose(v, e, rel_tol=1e-9, abs_tol=1e-12):
            continue
        hint = next((f" That is {name}." for name, t in _t6_twins(p, q, c["epsilon"]).items()
                     if math.isclose(v, t, rel_tol=1e-9, abs_tol=1e-12)), "")
        return fail(key, f"{text} returned {g(v, 8)}, expected {g(e, 8)}.{hint} Hint: the "
                         "smallest δ is max(Σ max(0, pᵢ − e^ε qᵢ), Σ max(0, qᵢ − e^ε pᵢ)).",
                    "wrong")
    tails = [max(float(np.asarray(c["p"])[np.asarray(c["p"]) > math.exp(c["epsilon"]) *
                                         np.asarray(c["q"])].sum()),
                 float(np.asarray(c["q"])[np.asarray(c["q"]) > math.exp(c["epsilon"]) *
                                         np.asarray(c["p"])].sum())) for c in req["cases"]]
    i = int(np.argmax([t / max(e, 1e-300) for t, e in zip(tails, expected)]))
    c, pr = req["cases"][i], tails[i]
    return ok(key, f"correct on {len(expected)} hidden pairs, both directions; e.g. at ε = "
                   f"{g(c['epsilon'])} the smallest δ is {g(expected[i], 4)}, while the outputs "
                   f"whose loss exceeds ε carry probability {g(pr, 4)}.")


TASKS = [
    Task(key="Task 1", points=2, names=("group_epsilon_delta",), title="group privacy",
         request=_t1_request, collect=_t1_collect, judge=_t1_judge, forbidden=_T1_FORBID),
    Task(key="Task 2", points=2, names=("parallel_cost", "sequential_cost"),
         title="parallel versus sequential composition", request=_t2_request,
         collect=_t2_collect, judge=_t2_judge, forbidden=_T2_FORBID),
    Task(key="Task 3", points=2, names=("tradeoff_beta",), title="the (ε, δ) trade-off curve",
         request=_t3_request, collect=_t3_collect, judge=_t3_judge, forbidden=_T3_FORBID),
    Task(key="Task 4", points=2, names=("membership_test_errors",),
         title="the errors of a membership test", request=_t4_request, collect=_t4_collect,
         judge=_t4_judge, forbidden=_T4_FORBID),
    Task(key="Task 5", points=2, names=("is_consistent_with_dp",),
         title="an audit point with Clopper-Pearson slack", request=_t5_request,
         collect=_t5_collect, judge=_t5_judge, forbidden=_T5_FORBID),
    Task(key="Task 6", points=2, names=("pair_delta",),
         title="the smallest δ of a pair: the larger hockey stick", request=_t6_request,
         collect=_t6_collect, judge=_t6_judge, forbidden=_T6_FORBID),
]
