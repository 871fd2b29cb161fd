"""A4 · Composition: attack a curator, then defend it with a budget (graded tasks).

Every task runs the student's functions on inputs the check draws itself, so no value
the notebook holds answers it:

* Task 1 (2 points) ``averaging_attack(curator, where, k, epsilon)``: the check builds a
  held-out synthetic table (hidden size, seed and condition) behind a curator whose
  budget is exactly k·ε, hands it over and records every answer it releases. Passed when
  all k answers were asked at ε each, the result is their average (rounded or not), and
  it lies within the averaging error of the table's true count (the judge alone knows
  it): for k answers with Lap(b) noise, P(|mean| ≥ t) ≤ 2 exp(-k t² / (8 b²)) for
  t ≤ 2√2 b (the Laplace MGF 1/(1 - λ²b²) ≤ exp(2λ²b²) for λb ≤ 1/√2, Chernoff).
* Task 2 (1 point) ``basic_epsilon(epsilons)``: total ε of answers at the given ε's by
  basic composition [DR14 Theorem 3.16], on hidden lists (equal and mixed ε's).
* Task 3 (2 points) ``advanced_epsilon(epsilon, k, delta, delta_slack)`` -> (ε', δ'):
  the Dwork-Rothblum-Vadhan bound [DR14 Theorem 3.20] at hidden parameters, compared
  with :func:`dpteach.advanced_composition` (which the student's function must not call:
  a call is noticed while the check runs).
* Task 4 (3 points) ``defended_curator(table) -> dp.Curator`` with total budget ε = 1:
  the check builds held-out tables, calls the function, requires a ``dp.Curator``
  exactly (no subclass), and attacks it itself through ``dp.Curator.count`` (the class's
  method, so patched instance methods are bypassed), at ε = 0.5 and at a hidden ε,
  counting the answers it gets before ``BudgetExceededError``. Passed when that number is
  the largest n with n·ε ≤ 1 in both attacks, the curator's own record of its charges
  (``Curator.charges``, read through the class) lists exactly those answers and sums to
  at most 1, and the answers are noisy counts of the table the check handed over.
  Patching the accountant after construction shows as extra answers and charges.
* Task 5a (1 point) ``split_sd(total_epsilon, k)``: the standard deviation √(2k)/ε of
  the average of k answers at ε/k each; Task 5b (1 point) ``best_k(total_epsilon, ks)``:
  the k with the smallest one (the smallest k), on hidden sets of k.

Notebook: notebooks/solutions/A4_composition_and_curator.ipynb.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..exercises import ALPHA
from . import Task
from ._student import (UNSOLVED, call, call_each, error_text, fail, float_array, forbid, g,
                       is_unsolved, listed, number, ok, opening)

_CONDITIONS = ("Flu", "Heart Disease", "Viral Infection", "Asthma", "Diabetes")


def _table(seed, n):
    from ...datasets import synthetic_patients
    return synthetic_patients(int(n), rng=int(seed))


def _where(condition):
    return lambda t: t["Condition"] == condition


# ------------------------------------------------------------------ Task 1
def _t1_request(rng):
    eps = float(rng.choice([0.25, 0.5, 1.0]))
    req = {"table_seed": int(rng.integers(2**62)), "n": int(rng.integers(400, 1500)),
           "condition": str(rng.choice(_CONDITIONS)), "k": int(rng.integers(200, 500)),
           "epsilon": eps, "noise_seed": int(rng.integers(2**62))}
    table = _table(req["table_seed"], req["n"])
    truth = {"count": int((table["Condition"] == req["condition"]).sum())}
    return req, truth


def _recording_curator(table, epsilon, rng):
    """A Curator that keeps (epsilon, answer) of every count it releases."""
    from ...curator import Curator

    class RecordingCurator(Curator):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._released = []

        def count(self, where=None, *, epsilon):
            value = super().count(where, epsilon=epsilon)
            self._released.append((float(epsilon), float(value)))
            return value

    return RecordingCurator(table, epsilon=epsilon, rng=rng)


def _t1_collect(answers, req):
    fn = answers.get("averaging_attack")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    from ...accounting import BudgetExceededError
    table = _table(req["table_seed"], req["n"])
    k, eps = int(req["k"]), float(req["epsilon"])
    curator = _recording_curator(table, k * eps, np.random.default_rng(req["noise_seed"]))
    released = curator._released
    out, problem = call(fn, curator, _where(req["condition"]), k, eps)
    refused = problem is not None and str(problem.get("error", "")).startswith(
        BudgetExceededError.__name__)
    if problem is not None and not refused:
        return problem
    rec = released[:5000]
    return {"recovered": out if number(out) is not None else repr(out)[:80],
            "epsilons": np.array([e for e, _ in rec]), "answers": np.array([a for _, a in rec]),
            "refused": refused}


def _t1_judge(data, req, truth):
    key = "Task 1"
    bad = opening(key, data, "Hint: ask curator.count(where, epsilon=epsilon) k times and "
                           "average.")
    if bad is not None:
        return bad
    try:
        k, eps, true = int(req["k"]), float(req["epsilon"]), int(truth["count"])
    except (KeyError, TypeError, ValueError):
        return fail(key, "the check's own request is malformed.", "malformed")
    if data.get("refused") is True:
        return fail(key, f"the curator refused: it holds a budget of exactly k·ε = {g(k * eps)} "
                         f"for k = {k} answers at ε = {g(eps)}, and your function asked for "
                         "more. Hint: k queries, each with epsilon=epsilon.", "over_budget")
    eps_used = float_array(data.get("epsilons"))
    answers = float_array(data.get("answers"))
    if eps_used is None or answers is None or eps_used.shape != answers.shape \
            or eps_used.ndim != 1:
        return fail(key, "the check's record of the answers is malformed.", "malformed")
    recovered = number(data.get("recovered"))
    if recovered is None:
        return fail(key, f"expected a number (the recovered count), found "
                         f"{data.get('recovered')!r}.", "type")
    m = answers.size
    if m != k:
        return fail(key, f"your function asked the curator {m} time(s); the attack asks k = {k} "
                         f"times (the k the check passes). One noisy answer has noise of scale "
                         f"1/ε = {g(1 / eps)}; the average of k has about {g(1 / math.sqrt(k))} "
                         "times as much.", "queries", asked=m)
    if not np.allclose(eps_used, eps, rtol=1e-12, atol=0):
        return fail(key, f"the queries used ε = {g(eps_used.min())} to {g(eps_used.max())}; the "
                         f"attack asks each at the ε = {g(eps)} the check passes.", "epsilon")
    mean = float(answers.mean())
    if abs(recovered - mean) > 0.5 + 1e-9:
        return fail(key, f"you returned {g(recovered, 8)}, but the average of the {k} answers "
                         f"the curator gave you was {g(mean, 8)}. Hint: return the (rounded) "
                         "mean of all the answers.", "not_mean")
    b = 1.0 / eps
    tol = 0.5 + b * math.sqrt(8 * math.log(2 / ALPHA) / k)
    if abs(recovered - true) > tol:
        return fail(key, f"the recovered count {g(recovered, 8)} is {g(abs(recovered - true))} "
                         f"from the hidden table's true count, more than averaging {k} answers "
                         f"allows ({g(tol)}).", "far", true=true)
    return ok(key, f"the average of {k} answers at ε = {g(eps)} is {g(mean, 6)}; the hidden "
                   f"table's true count is {true} (you recovered {g(recovered, 8)}). Each answer "
                   f"had noise of standard deviation {g(math.sqrt(2) * b, 3)}, the average "
                   f"only {g(math.sqrt(2) * b / math.sqrt(k), 3)}.", true=true)


# ------------------------------------------------------------------ Task 2
def _t2_request(rng):
    lists = [[float(rng.choice([0.1, 0.25, 0.5]))] * int(rng.integers(100, 600))]
    for size in (1, int(rng.integers(2, 8)), int(rng.integers(10, 40))):
        lists.append([float(v) for v in np.round(rng.uniform(0.01, 2.0, size), 3)])
    order = rng.permutation(len(lists))
    lists = [lists[i] for i in order]
    return {"lists": lists}, {"totals": [math.fsum(v) for v in lists]}


def _t2_collect(answers, req):
    return call_each(answers.get("basic_epsilon"), ((list(v),) for v in req["lists"]),
                     "totals")


def _t2_judge(data, req, truth):
    key = "Task 2"
    expected = truth.get("totals", [])
    found, bad = listed(key, data, "totals", len(expected),
                        "Hint: basic_epsilon(epsilons) returns one number.")
    if bad is not None:
        return bad
    for eps_list, f, e in zip(req["lists"], found, expected):
        shown = (f"[{eps_list[0]:g}] × {len(eps_list)}" if len(set(eps_list)) == 1
                 else f"{[round(v, 3) for v in eps_list[:6]]}{'…' if len(eps_list) > 6 else ''}")
        v = number(f)
        if v is None:
            return fail(key, f"basic_epsilon({shown}) returned {f!r}; expected one number.",
                        "type")
        if not math.isclose(v, e, rel_tol=1e-9, abs_tol=1e-12):
            hint = (" That is the largest ε: parallel composition, which holds only for "
                    "queries on disjoint people." if math.isclose(v, max(eps_list)) else
                    " That assumes every ε equals the first." if
                    math.isclose(v, len(eps_list) * eps_list[0]) else "")
            return fail(key, f"basic_epsilon({shown}) returned {g(v, 8)}, expected {g(e, 8)}."
                             f"{hint} Hint: under basic composition the ε's of all the answers "
                             "add up.", "wrong")
    return ok(key, f"correct on {len(expected)} hidden lists of per-answer ε's (e.g. "
                   f"{len(req['lists'][0])} answers cost {g(expected[0], 6)}).")


# ------------------------------------------------------------------ Task 3
def _t3_request(rng):
    cases = []
    for i in range(4):
        cases.append({"epsilon": float(np.round(rng.uniform(0.01, 0.8), 4)),
                      "k": int(rng.integers(10, 3000)),
                      "delta": 0.0 if i == 0 else float(10 ** rng.uniform(-9, -5)),
                      "delta_slack": float(10 ** rng.uniform(-9, -3))})
    from ...accounting import advanced_composition
    truth = [list(advanced_composition(c["epsilon"], c["delta"], c["k"], c["delta_slack"]))
             for c in cases]
    return {"cases": cases}, {"expected": truth}


#: Task 3 computes advanced composition by hand (also absent while grading)
_T3_FORBID = ("dpteach:advanced_composition", "dpteach.accounting:advanced_composition")


def _t3_collect(answers, req):
    fn = answers.get("advanced_epsilon")
    with forbid(*_T3_FORBID, code=[fn]) as guard:
        out = _t3_run(fn, req)
    if isinstance(out, list):
        return {"pairs": out, "called_library": bool(guard.used)}
    return out


def _t3_run(fn, req):
    out = []
    for c in req["cases"]:
        value, problem = call(fn, c["epsilon"], c["k"], c["delta"], c["delta_slack"])
        if problem is not None:
            return problem
        try:
            pair = [number(v) for v in value] if len(value) == 2 else None
        except TypeError:
            pair = None
        out.append(pair if pair is not None and None not in pair else repr(value)[:80])
    return out


def _t3_judge(data, req, truth):
    key = "Task 3"
    bad = opening(key, data, "Hint: return the pair (epsilon_total, delta_total).",
                  library="your function calls dp.advanced_composition; the task is to write "
                          "the formula yourself. Hint: ε·√(2k ln(1/δ′)) + k·ε·(e^ε − 1).")
    if bad is not None:
        return bad
    found, expected = data.get("pairs"), truth.get("expected", [])
    if not isinstance(found, list) or len(found) != len(expected):
        return fail(key, "the check's data is malformed.", "malformed")
    for c, f, (e_eps, e_delta) in zip(req["cases"], found, expected):
        call_text = (f"advanced_epsilon({c['epsilon']:g}, {c['k']}, {c['delta']:.3g}, "
                     f"{c['delta_slack']:.3g})")
        if not isinstance(f, list) or len(f) != 2 or any(number(v) is None for v in f):
            return fail(key, f"{call_text} returned {f!r}; expected a pair of numbers "
                             "(epsilon_total, delta_total).", "type")
        f_eps, f_delta = float(f[0]), float(f[1])
        if not math.isclose(f_eps, e_eps, rel_tol=1e-6):
            e, k, s = c["epsilon"], c["k"], c["delta_slack"]
            log10 = e * math.sqrt(2 * k * math.log10(1 / s)) + k * e * math.expm1(e)
            first = e * math.sqrt(2 * k * math.log(1 / s))
            hint = (" That uses log10: the theorem's log is natural." if
                    math.isclose(f_eps, log10, rel_tol=1e-4) else
                    " The second term k·ε·(e^ε − 1) is missing." if
                    math.isclose(f_eps, first, rel_tol=1e-4) else
                    " Hint: ε·√(2k ln(1/δ′)) + k·ε·(e^ε − 1).")
            return fail(key, f"{call_text}: ε′ = {g(f_eps, 8)}, expected {g(e_eps, 8)}.{hint}",
                        "epsilon")
        if not math.isclose(f_delta, e_delta, rel_tol=1e-6, abs_tol=1e-18):
            return fail(key, f"{call_text}: δ_total = {g(f_delta, 6)}, expected {g(e_delta, 6)} "
                             "= k·δ + δ′.", "delta")
    c = req["cases"][-1]
    return ok(key, f"correct on {len(expected)} hidden (ε, k, δ, δ′); e.g. {c['k']} answers at "
                   f"ε = {c['epsilon']:g}: basic composition {g(c['k'] * c['epsilon'])}, "
                   f"advanced {g(expected[-1][0])}.")


# ------------------------------------------------------------------ Task 4
#: the hidden per-query epsilons of the second attack: each lets a budget of 1 answer a
#: number of times other than 2 (so "refuse after two answers" fails) and other than a
#: budget of 1.2 would (the accountant counts the decimals exactly: 5 x 0.2 = 1 fits)
_T4_EPS = (0.12, 0.15, 0.2, 0.3, 0.6)
_T4_MAX_QUERIES = 60


def _t4_request(rng):
    attacks = []
    for eps in (0.5, float(rng.choice(_T4_EPS))):
        attacks.append({"table_seed": int(rng.integers(2**62)), "n": int(rng.integers(2000, 5000)),
                        "condition": str(rng.choice(["Flu", "Viral Infection"])),
                        "epsilon": eps})
    truth = []
    for a in attacks:
        t = _table(a["table_seed"], a["n"])
        e = Fraction(repr(a["epsilon"]))
        truth.append({"count": int((t["Condition"] == a["condition"]).sum()),
                      "answers": int(Fraction(1) // e)})
    return {"attacks": attacks, "budget": 1.0}, {"attacks": truth}


def _t4_collect(answers, req):
    fn = answers.get("defended_curator")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    from ...accounting import BudgetExceededError
    from ...curator import Curator

    out = []
    for a in req["attacks"]:
        table = _table(a["table_seed"], a["n"])
        cur, problem = call(fn, table.copy())
        if problem is not None:
            return problem
        if type(cur) is not Curator:
            return {"type": f"{type(cur).__module__}.{type(cur).__qualname__}"[:120]}
        got, stop = [], "none"
        where = _where(a["condition"])
        for _ in range(_T4_MAX_QUERIES):
            try:
                got.append(float(Curator.count(cur, where, epsilon=a["epsilon"])))
            except BudgetExceededError:
                stop = "refused"
                break
            except Exception as exc:              # a curator broken in some other way
                stop = "error: " + error_text(exc)
                break
        charges = getattr(Curator, "charges", None)      # the curator's own record
        try:
            record = charges.fget(cur) if isinstance(charges, property) else ()
            charged = [float(c[0]) for c in record]
        except Exception as exc:
            return {"error": "reading the curator's charges raised " + error_text(exc)}
        out.append({"answers": np.array(got), "stop": stop, "charged": np.array(charged),
                    "has_record": isinstance(charges, property)})
    return {"type": "dpteach.curator.Curator", "attacks": out}


def _t4_judge(data, req, truth):
    key = "Task 4"
    bad = opening(key, data, "Hint: return dp.Curator(table, epsilon=1.0).")
    if bad is not None:
        return bad
    kind = data.get("type")
    if kind != "dpteach.curator.Curator":
        return fail(key, f"defended_curator returned {str(kind)[:120]!r}, expected a "
                         "dp.Curator itself (not a subclass, not another object). Hint: "
                         "return dp.Curator(table, epsilon=1.0).", "type")
    attacks = data.get("attacks")
    if not isinstance(attacks, list) or len(attacks) != len(req["attacks"]):
        return fail(key, "the check's data is malformed.", "malformed")
    lines = []
    for a, got, tr in zip(req["attacks"], attacks, truth["attacks"]):
        if not isinstance(got, dict):
            return fail(key, "the check's data is malformed.", "malformed")
        eps, want, true = float(a["epsilon"]), int(tr["answers"]), int(tr["count"])
        ans = float_array(got.get("answers"))
        stop = str(got.get("stop"))
        if ans is None or ans.ndim != 1:
            return fail(key, "the check's record of the answers is malformed.", "malformed")
        n = ans.size
        if stop.startswith("error"):
            return fail(key, f"attacking your curator at ε = {g(eps)} per query raised "
                             f"{stop[7:200]} after {n} answers.", "error")
        if stop != "refused":
            return fail(key, f"the check's attack at ε = {g(eps)} per query got {n} answers and "
                             "was never refused: the budget does not hold (was the accountant "
                             "replaced after the curator was built?). Hint: "
                             "dp.Curator(table, epsilon=1.0), left as it is.", "not_enforced",
                        answers=n)
        charged = float_array(got.get("charged"))
        if got.get("has_record") is True:
            if charged is None or charged.ndim != 1:
                return fail(key, "the check's record of the charges is malformed.", "malformed")
            if charged.size != n or charged.sum() > 1.0 + 1e-9:
                return fail(key, f"your curator recorded {charged.size} charge(s) totalling "
                                 f"ε = {g(charged.sum())} for the {n} answers of the check's "
                                 f"attack at ε = {g(eps)}: a budget of 1 cannot allow that. Hint: "
                                 "dp.Curator(table, epsilon=1.0), nothing asked before it is "
                                 "returned.", "charges", answers=n)
        if n != want:
            return fail(key, f"the check's attack at ε = {g(eps)} per query got {n} answer(s) "
                             f"before the refusal; a total budget of ε = 1 holds exactly {want} "
                             f"(n·{g(eps)} ≤ 1). Hint: total budget epsilon=1.0.", "answers",
                        answers=n, expected=want)
        if n:
            # each answer is the true count + Lap(1/eps): |noise| >= t with prob e^(-t eps)
            tol = math.log(len(truth["attacks"]) * n / ALPHA) / eps
            worst = float(np.max(np.abs(ans - true)))
            if worst > tol:
                return fail(key, f"an answer ({g(ans[np.argmax(np.abs(ans - true))], 6)}) is "
                                 f"{g(worst)} from the true count of the table the check "
                                 f"handed to defended_curator: answer queries about the table "
                                 "you are given.", "other_table")
        lines.append(f"at ε = {g(eps)} per query, {n} answers, then refused")
    return ok(key, "the check attacked your curator itself: " + "; ".join(lines) +
                   ". k answers at ε each cost kε, so a budget of 1 stops the averaging attack.")


# ------------------------------------------------------------------ Task 5
def _t5a_request(rng):
    cases = [(float(rng.choice([0.5, 1.0, 2.0, round(rng.uniform(0.1, 3), 3)])),
              int(rng.choice([1, 2, 3, 4, 6, 8, 16, 50]))) for _ in range(4)]
    return ({"cases": [list(c) for c in cases]},
            {"expected": [math.sqrt(2 * k) / e for e, k in cases]})


def _t5a_collect(answers, req):
    return call_each(answers.get("split_sd"), req["cases"], "values")


def _t5a_judge(data, req, truth):
    key = "Task 5a"
    expected = truth.get("expected", [])
    found, bad = listed(key, data, "values", len(expected))
    if bad is not None:
        return bad
    for (e, k), f, want in zip(req["cases"], found, expected):
        v = number(f)
        if v is None:
            return fail(key, f"split_sd({e:g}, {k}) returned {f!r}; expected a number.", "type")
        if not math.isclose(v, want, rel_tol=1e-6):
            hint = (" That is one answer's standard deviation; the average of k of them is "
                    "√k times smaller." if math.isclose(v, math.sqrt(2) * k / e, rel_tol=1e-6)
                    else " That keeps ε per answer: each answer gets only ε/k." if
                    math.isclose(v, math.sqrt(2) / (e * math.sqrt(k)), rel_tol=1e-6) else "")
            return fail(key, f"split_sd({e:g}, {k}) returned {g(v, 8)}, expected {g(want, 8)}."
                             f"{hint} Hint: Lap(k/ε) has standard deviation √2·k/ε.", "wrong")
    return ok(key, f"correct on {len(expected)} hidden (ε, k): √(2k)/ε grows with k.")


def _t5b_request(rng):
    sets = []
    for _ in range(4):
        size = int(rng.integers(2, 6))
        sets.append(sorted(int(v) for v in rng.choice(np.arange(1, 65), size, replace=False)))
    sets = [list(rng.permutation(s).tolist()) for s in sets]
    eps = [float(rng.choice([0.5, 1.0, 2.0])) for _ in sets]
    return {"cases": [[e, s] for e, s in zip(eps, sets)]}, {"expected": [min(s) for s in sets]}


def _t5b_collect(answers, req):
    return call_each(answers.get("best_k"), ((e, list(ks)) for e, ks in req["cases"]), "values")


def _t5b_judge(data, req, truth):
    key = "Task 5b"
    expected = truth.get("expected", [])
    found, bad = listed(key, data, "values", len(expected))
    if bad is not None:
        return bad
    for (e, ks), f, want in zip(req["cases"], found, expected):
        v = number(f)
        if v is None or v != want:
            return fail(key, f"best_k({e:g}, {ks}) returned {f!r}, expected {want}. Hint: "
                             "compare split_sd for every k in ks: splitting the budget makes "
                             "each answer noisier faster than averaging helps.", "wrong")
    return ok(key, f"correct on {len(expected)} hidden sets of k: the smallest k wins, so one "
                   "query with the whole budget beats any split of it.")


TASKS = [
    Task(key="Task 1", points=2, names=("averaging_attack",),
         title="the averaging attack on a held-out table", request=_t1_request,
         collect=_t1_collect, judge=_t1_judge),
    Task(key="Task 2", points=1, names=("basic_epsilon",), title="basic composition",
         request=_t2_request, collect=_t2_collect, judge=_t2_judge),
    Task(key="Task 3", points=2, names=("advanced_epsilon",), title="advanced composition",
         request=_t3_request, collect=_t3_collect, judge=_t3_judge, forbidden=_T3_FORBID),
    Task(key="Task 4", points=3, names=("defended_curator",), title="defend with a budget",
         request=_t4_request, collect=_t4_collect, judge=_t4_judge),
    Task(key="Task 5a", points=1, names=("split_sd",),
         title="the standard deviation of a split budget", request=_t5a_request,
         collect=_t5a_collect, judge=_t5a_judge),
    Task(key="Task 5b", points=1, names=("best_k",), title="the best split",
         request=_t5b_request, collect=_t5b_collect, judge=_t5b_judge),
]
