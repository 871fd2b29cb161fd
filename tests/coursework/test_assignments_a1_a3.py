"""Assignments A1-A3: the graded tasks of dpteach.coursework.assignments.a1_anonymity, a2_attacks
and a3_laplace.

For every task: (1) the model solution -- the function in the solution notebook,
executed from the notebook's own cells -- passes on many seeds; (2) the blank stub and a
missing answer are "not yet solved"; (3) copy-cheats fail (the value the notebook holds,
the public table's answer, constants); (4) the classic wrong-but-plausible slip fails;
(5) the judge never raises on garbage data; (6) what collect returns survives
dpteach.coursework._transport.dumps/loads (every run below goes through it).
"""

import ast
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

import dpteach as dp
from dpteach import anonymity as an
from dpteach.coursework import assignments
from dpteach.coursework.assignments import _transport
from dpteach.coursework.exercises import Feedback

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "notebooks" / "solutions"
NOTEBOOKS = {"A1": "A1_anonymity.ipynb", "A2": "A2_attacks_and_reconstruction.ipynb",
             "A3": "A3_sensitivity_and_laplace.ipynb"}
_MODELS = {}


def model(assignment) -> dict:
    """The solution notebook's functions: its first code cell (imports, constants) and
    every function defined in a cell tagged ``solution``, executed in one namespace."""
    if assignment not in _MODELS:
        nb = nbformat.read(SOLUTIONS / NOTEBOOKS[assignment], as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        ns = {"display": lambda *a, **k: None}
        exec(compile(code[0].source, "setup", "exec"), ns)
        for cell in code:
            if "solution" not in cell.metadata.get("tags", []):
                continue
            tree = ast.parse(cell.source)
            keep = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.Import,
                                                           ast.ImportFrom))
                    or (isinstance(n, ast.Assign) and n.targets[0].id.isupper())]
            exec(compile(ast.Module(body=keep, type_ignores=[]), "solution", "exec"), ns)
        _MODELS[assignment] = ns
    return _MODELS[assignment]


def task(assignment, key):
    return next(t for t in assignments.tasks(assignment) if t.key == key)


def run(assignment, key, answers, seed=0, *, send_request=False) -> Feedback:
    """request -> collect -> JSON transport -> judge, as make grade runs a task (the
    request travels as JSON too with ``send_request``; test_requests_travel does it for
    every task)."""
    t = task(assignment, key)
    request, truth = t.request(np.random.default_rng(seed))
    if send_request:
        request = _transport.loads(_transport.dumps(request))
    data = t.collect(answers, request)
    data = _transport.loads(_transport.dumps(data))
    fb = t.judge(data, request, truth)
    assert isinstance(fb, Feedback) and fb.message.startswith(key + ":"), fb
    return fb


def answers_of(assignment, key, **override):
    ns = model(assignment)
    return {n: override.get(n, ns.get(n)) for n in task(assignment, key).names}


def stub(*args, **kwargs):
    return None


def assert_fails_everywhere(assignment, key, answers, seeds=range(10), reason=None):
    for seed in seeds:
        fb = run(assignment, key, answers, seed)
        assert not fb.passed and fb.solved, (seed, fb)
        if reason is not None:
            assert fb.details.get("reason") in np.atleast_1d(reason), (seed, fb)


_SLOW = (("A3", "Task 4"), ("A3", "Task 5"))      # the mechanism check: tested below


@pytest.mark.parametrize("assignment, key", [(a, t.key) for a in ("A1", "A2", "A3")
                                             for t in assignments.tasks(a)
                                             if (a, t.key) not in _SLOW])
def test_requests_travel_as_json_and_the_model_still_passes(assignment, key):
    fb = run(assignment, key, answers_of(assignment, key), 11, send_request=True)
    assert fb.passed, fb


GARBAGE = [None, {}, [], "x", 3.5, float("nan"), {"results": "x"}, {"results": [None] * 6},
           {"results": [{}] * 6}, {"results": [{"value": float("nan")}] * 6},
           {"results": [{"value": "1"}] * 6}, {"results": [{"table": "x"}] * 6},
           {"results": [{"answer": 3}] * 6}, {"results": [{"bits": "x"}] * 6},
           {"error": "ValueError: boom"}, {"unsolved": True}, {"results": [[1, 2]] * 6}]


def check_garbage(assignment):
    for t in assignments.tasks(assignment):
        request, truth = t.request(np.random.default_rng(1))
        for junk in GARBAGE:
            fb = t.judge(junk, request, truth)
            assert isinstance(fb, Feedback) and not fb.passed, (t.key, junk, fb)
            assert fb.message.startswith(t.key + ":"), (t.key, fb)


# ====================================================================== A1
A1_KEYS = [t.key for t in assignments.tasks("A1")]


@pytest.mark.parametrize("key", A1_KEYS)
def test_a1_model_solution_passes_on_many_seeds(key):
    for seed in range(20):
        fb = run("A1", key, answers_of("A1", key), seed)
        assert fb.passed, (seed, fb)


@pytest.mark.parametrize("key", A1_KEYS)
def test_a1_stub_and_missing_answer_are_not_yet_solved(key):
    names = task("A1", key).names
    for answers in ({n: stub for n in names}, {n: None for n in names}, {}):
        fb = run("A1", key, answers)
        assert not fb.passed and not fb.solved and "not yet solved" in fb.message, fb


def test_a1_model_reproduces_the_seed_tables():
    ns = model("A1")
    released = ns["generalise"](dp.datasets.hospital_conditions())
    assert an.k_anonymity(released, ns["QIS"]) >= 4
    published = dp.datasets.hospital_conditions_4anonymous()
    people = dp.datasets.hospital_neighbours().set_index("Name")[ns["QIS"]]
    assert ns["disclosed"](published, people.loc["Bob"].to_dict()) == "Cancer"
    assert ns["disclosed"](published, people.loc["Umeko"].to_dict()) == "none"
    diverse = dp.datasets.salary_disease_3diverse()
    assert ns["distinct_l"](diverse, ["ZIP Code", "Age"], "Disease") == 3
    assert ns["t_ordered"](diverse, ["ZIP Code", "Age"], "Salary") == pytest.approx(0.375)


def _suppress_all(table):
    return table.assign(**{"Zip Code": "*", "Age": "*", "Nationality": "*"})


def _seed_rules(table):             # the notebook's fixed rules for seed 004's table
    return an.generalize(table, {"Zip Code": ("mask", 3),
                                 "Age": ("bucket", [0, 30, 40, 200], ["< 30", "30-39", "≥ 40"]),
                                 "Nationality": "suppress"})


def _lying(table):                  # classes of 4 by relabelling ZIP codes: untruthful
    out = _suppress_all(table)
    out["Zip Code"] = [f"{i // 4:05d}" for i in range(len(table))]
    return out


def _delete_small_classes(table):
    return an.suppress_small_classes(_seed_rules(table), ["Zip Code", "Age", "Nationality"], 4)


def _duplicate_rows(table):
    return pd.concat([_seed_rules(table)] * 4)


def _reset_index(table):
    return model("A1")["generalise"](table).reset_index(drop=True)


def _generalised_condition(table):
    return model("A1")["generalise"](table).assign(Condition="*")


@pytest.mark.parametrize("cheat, reason", [
    (lambda t: dp.datasets.hospital_conditions_4anonymous(), None),     # the seed's release
    (_suppress_all, "useless"), (_seed_rules, "too_small"), (_lying, "untruthful"),
    (_delete_small_classes, ("suppressed", "too_small")), (_duplicate_rows, "rows"),
    (_reset_index, "rows"), (_generalised_condition, "sensitive_changed"),
    (lambda t: t.drop(columns=["Nationality"]), "columns"), (lambda t: "table", "type"),
])
def test_a1_task1_cheats_and_slips_fail(cheat, reason):
    assert_fails_everywhere("A1", "Task 1", {"generalise": cheat}, seeds=range(4), reason=reason)


def _zip_only(published, target):
    rows = published[[model("A1")["covers"](z, target["Zip Code"], "Zip Code")
                      for z in published["Zip Code"]]]
    values = rows["Condition"].unique()
    return str(values[0]) if len(values) == 1 else "none"


@pytest.mark.parametrize("cheat", [
    lambda p, t: "none", lambda p, t: "Cancer",                 # constant / Bob's answer
    lambda p, t: str(p["Condition"].mode()[0]),                 # the commonest condition
    _zip_only,                                                  # the slip: match ZIP only
    lambda p, t: None if False else 3,
])
def test_a1_task2_cheats_and_slips_fail(cheat):
    assert_fails_everywhere("A1", "Task 2", {"disclosed": cheat})


def test_a1_task2_accepts_any_case_and_spacing():
    dis = model("A1")["disclosed"]
    fb = run("A1", "Task 2", {"disclosed": lambda p, t: f"  {dis(p, t).upper()} "}, 3)
    assert fb.passed, fb


@pytest.mark.parametrize("cheat, reason", [
    (lambda t, q, s: 1, "wrong"), (lambda t, q, s: 3, "wrong"),            # notebook's values
    (lambda t, q, s: int(t.groupby(q).size().min()), "wrong"),             # k, not l
    (lambda t, q, s: int(t.groupby(q)[s].nunique().max()), "wrong"),       # max, not min
    (lambda t, q, s: an.l_diversity(t, q, s), "forbidden"),
    (lambda t, q, s: int(an.class_report(t, q, s)["l_distinct"].min()), "forbidden"),
])
def test_a1_task3_cheats_and_slips_fail(cheat, reason):
    assert_fails_everywhere("A1", "Task 3", {"distinct_l": cheat}, reason=reason)


def _unordered_emd(c, t):
    values = np.unique(t)
    p = np.array([np.mean(np.asarray(c) == v) for v in values])
    q = np.array([np.mean(np.asarray(t) == v) for v in values])
    return 0.5 * float(np.abs(p - q).sum())


def _raw_wasserstein(c, t):
    from scipy.stats import wasserstein_distance
    return wasserstein_distance(c, t) / (max(t) - min(t))


def _divide_by_m(c, t):
    m = len(np.unique(t))
    return model("A1")["ordered_emd"](c, t) * (m - 1) / m


@pytest.mark.parametrize("cheat, reason", [
    (lambda c, t: 0.375, "wrong"), (_unordered_emd, "wrong"), (_raw_wasserstein, "wrong"),
    (_divide_by_m, "wrong"),
    (lambda c, t: an.emd(np.bincount(c, minlength=max(t) + 1)[np.unique(t)],
                         np.bincount(t)[np.unique(t)], ordered=True), "forbidden"),
])
def test_a1_task4a_cheats_and_slips_fail(cheat, reason):
    assert_fails_everywhere("A1", "Task 4a", {"ordered_emd": cheat}, reason=reason)


def _t_unordered(t, q, s):
    return max(_unordered_emd(g[s], t[s]) for _, g in t.groupby(q))


@pytest.mark.parametrize("cheat, reason", [
    (lambda t, q, s: 0.375, "wrong"), (_t_unordered, "wrong"),
    (lambda t, q, s: an.t_closeness(t, q, s, ordered=True), "forbidden"),
    (lambda t, q, s: min(model("A1")["ordered_emd"](g[s], t[s]) for _, g in t.groupby(q)),
     "wrong"),
])
def test_a1_task4b_cheats_and_slips_fail(cheat, reason):
    assert_fails_everywhere("A1", "Task 4b", {"t_ordered": cheat}, reason=reason)


def _imported(name, helper, body):
    """A student function whose notebook did ``from ... import helper``."""
    ns = {name: helper, "np": np}
    exec(body, ns)
    return ns["f"]


@pytest.mark.parametrize("assignment, key, answer", [
    ("A1", "Task 3", an.l_diversity),                                # the helper itself
    ("A1", "Task 3", _imported("l_diversity", an.l_diversity,
                               "def f(t, q, s):\n    return l_diversity(t, q, s)")),
    ("A1", "Task 4b", _imported("t_closeness", an.t_closeness,
                                "def f(t, q, s):\n    return t_closeness(t, q, s, ordered=True)")),
    ("A2", "Task 5", dp.attacks.reconstruct_lp),
    ("A2", "Task 4", _imported("reconstruct_lsq", dp.attacks.reconstruct_lsq,
                               "def f(q, a):\n    return reconstruct_lsq(q, a)")),
])
def test_forbidden_helpers_are_noticed_however_imported(assignment, key, answer):
    name = task(assignment, key).names[0]
    before = dict(getattr(answer, "__globals__", {}))
    fb = run(assignment, key, {name: answer}, 0)
    assert not fb.passed and fb.details["reason"] == "forbidden", fb
    after = getattr(answer, "__globals__", {})
    assert all(after[k] is v for k, v in before.items())         # bindings restored


def test_a1_forbidden_helpers_are_restored_after_collect():
    real = an.l_diversity
    run("A1", "Task 3", {"distinct_l": lambda t, q, s: an.l_diversity(t, q, s)})
    assert an.l_diversity is real
    assert dp.anonymity.l_diversity(dp.datasets.salary_disease_3diverse(), ["ZIP Code", "Age"],
                                    "Disease") == 3


def test_a1_errors_in_student_code_are_reported_not_raised():
    def boom(*a):
        raise ZeroDivisionError("oops")
    for key in A1_KEYS:
        fb = run("A1", key, {n: boom for n in task("A1", key).names})
        assert not fb.passed and fb.solved and "ZeroDivisionError" in fb.message, fb


def test_a1_judge_never_raises_on_garbage():
    check_garbage("A1")


def test_a1_generalised_value_readers():
    from dpteach.coursework.assignments.a1_anonymity import (age_matches, nationality_matches,
                                                             zip_matches)
    assert zip_matches("130**", "13053") and not zip_matches("131**", "13053")
    assert zip_matches("*", "13053") and not zip_matches("130*", "13053")
    for label, age, want in [("30-39", 31, True), ("30-39", 40, False), ("< 30", 29, True),
                             ("< 30", 30, False), ("≥ 40", 40, True), ("3*", 35, True),
                             ("3*", 41, False), ("[30, 40)", 40, False), ("[30, 40]", 40, True),
                             ("*", 99, True), ("31", 31, True), (31, 31, True),
                             ("young", 20, False),
                             ("<= 30", 30, True), ("> 30", 30, False)]:
        assert age_matches(label, age) is want, (label, age)
    assert nationality_matches("*", "Indian") and nationality_matches("American/Indian", "Indian")
    assert not nationality_matches("Russian", "Indian")


# ====================================================================== A2
A2_KEYS = [t.key for t in assignments.tasks("A2")]


@pytest.mark.parametrize("key", A2_KEYS)
def test_a2_model_solution_passes_on_many_seeds(key):
    for seed in range(20):
        fb = run("A2", key, answers_of("A2", key), seed)
        assert fb.passed, (seed, fb)


@pytest.mark.parametrize("key", A2_KEYS)
def test_a2_stub_and_missing_answer_are_not_yet_solved(key):
    names = task("A2", key).names
    for answers in ({n: stub for n in names}, {n: None for n in names}, {}):
        fb = run("A2", key, answers)
        assert not fb.passed and not fb.solved and "not yet solved" in fb.message, fb


def test_a2_model_reproduces_the_seed_examples():
    ns = model("A2")
    sickle = dp.datasets.sickle_cell()
    trait = "Sickle cell trait"

    def count(where):
        return dp.attacks.exact_count(sickle, lambda t: np.asarray(where(t)) & t[trait].to_numpy())
    for name, bit in zip(sickle["Name"], sickle[trait].astype(int)):
        assert ns["x_bit_from_counts"](count, name) == bit
    assert ns["bob_from_means"](5.58, 5, 5.5, 4) == pytest.approx(5.9)
    assert ns["k_needed"](2.0, 0.1) in (800, 801)       # 2·2²/0.1² = 800 up to rounding


def _peek_bit(count, target):           # differences the server's stored counts, unasked
    n, i = len(count._people), list(count._people["Name"]).index(target)
    everybody = (1 << n) - 1
    return count._answers[everybody] - count._answers[everybody & ~(1 << i)]


def test_a2_task1_the_kernel_holds_counts_never_the_trait():
    task = assignments._task("A2", "Task 1")
    for seed in range(5):
        request, bits = task.request(np.random.default_rng(seed))
        for table in request["tables"]:
            assert list(table.columns) == ["Name", "Age"]


@pytest.mark.parametrize("cheat, reason", [
    (lambda c, t: 0, ("wrong", "not_differencing")),
    (lambda c, t: 1, ("wrong", "not_differencing")),
    (_peek_bit, "not_differencing"),
    (lambda c, t: c(lambda p: (p["Name"] == t).to_numpy()), "refused"),   # one person: refused
    (lambda c, t: c(lambda p: np.ones(len(p), bool)) % 2, ("wrong", "not_differencing")),
    (lambda c, t: "1", "type"),
])
def test_a2_task1_cheats_and_slips_fail(cheat, reason):
    assert_fails_everywhere("A2", "Task 1", {"x_bit_from_counts": cheat}, reason=reason)


@pytest.mark.parametrize("cheat", [
    lambda ma, na, mr, nr: ma - mr,                    # the slip: averages, not sums
    lambda ma, na, mr, nr: 5 * ma - 4 * mr,            # the seed's group sizes
    lambda ma, na, mr, nr: 5.9,                        # Bob's value from the notebook
    lambda ma, na, mr, nr: na * ma - nr * mr + 0.01,
])
def test_a2_task2_cheats_and_slips_fail(cheat):
    assert_fails_everywhere("A2", "Task 2", {"bob_from_means": cheat}, reason="wrong")


def _one_answer(server, where):
    return int(round(server.count(where)))


def _peek_count(server, where):           # the hidden table is not reachable this way
    return int(where(server._table).sum())


@pytest.mark.parametrize("cheat, reason", [
    (lambda s, w: 3, "wrong"),                                   # the notebook's count
    (_one_answer, ("wrong", "too_few")), (_peek_count, "error"),
    (lambda s, w: float(np.mean(s.count(w, size=1000))), "wrong"),   # forgot to round
])
def test_a2_task3a_cheats_and_slips_fail(cheat, reason):
    assert_fails_everywhere("A2", "Task 3a", {"recover_count": cheat}, reason=reason)


@pytest.mark.parametrize("cheat", [
    lambda b, sd: 800,                                            # the notebook's value
    lambda b, sd: int(np.ceil(b**2 / sd**2)),                     # variance b², not 2b²
    lambda b, sd: int(np.floor(2 * b**2 / sd**2)),                # rounded down
    lambda b, sd: int(np.ceil(2 * b / sd)),                       # not squared
])
def test_a2_task3b_cheats_and_slips_fail(cheat):
    assert_fails_everywhere("A2", "Task 3b", {"k_needed": cheat}, reason="wrong")


def test_a2_task3b_accepts_either_side_of_an_exact_boundary():
    t = task("A2", "Task 3b")
    request = {"pairs": [{"b": 2.0, "target_sd": 0.1}]}
    truth = [2 * 2.0**2 / 0.1**2]
    for k, want in ((799, False), (800, True), (801, True), (802, False)):
        # 2·2²/0.1² is 799.99999999999989 in floating point: 800 and 801 are both fine
        data = {"results": [{"value": float(k)}]}
        assert t.judge(data, request, truth).passed is want, k


def _notebook_secret(*args):
    rng = np.random.default_rng(model("A2")["SEED"])
    return rng.integers(0, 2, 128)


@pytest.mark.parametrize("key, cheat, reason", [
    ("Task 4", _notebook_secret, "too_few"),                      # guess = secret
    ("Task 4", lambda q, a: np.ones(q.shape[1], int), "too_few"),
    ("Task 4", lambda q, a: np.linalg.lstsq(q.astype(float), a, rcond=None)[0], "not_bits"),
    ("Task 4", lambda q, a: (np.linalg.lstsq(q.astype(float), a, rcond=None)[0] >= 0).astype(int),
     "too_few"),                                                  # rounded at 0
    ("Task 4", lambda q, a: dp.attacks.reconstruct_lsq(q, a), "forbidden"),
    ("Task 4", lambda q, a: (q.T @ a > np.median(q.T @ a)).astype(int)[:10], "shape"),
    ("Task 5", _notebook_secret, "too_few"),
    ("Task 5", lambda q, a: model("A2")["reconstruct_lsq"](q, a), "too_few"),   # LSQ: outliers
    ("Task 5", lambda q, a: dp.attacks.reconstruct_lp(q, a), "forbidden"),
    ("Task 5", lambda q, a: list("01" * 64), "type"),
])
def test_a2_reconstruction_cheats_and_slips_fail(key, cheat, reason):
    name = task("A2", key).names[0]
    assert_fails_everywhere("A2", key, {name: cheat}, seeds=range(3), reason=reason)


def test_a2_errors_in_student_code_are_reported_not_raised():
    def boom(*a):
        raise ZeroDivisionError("oops")
    for key in A2_KEYS:
        fb = run("A2", key, {n: boom for n in task("A2", key).names})
        assert not fb.passed and fb.solved and "ZeroDivisionError" in fb.message, fb


def test_a2_judge_never_raises_on_garbage():
    check_garbage("A2")
    t = task("A2", "Task 4")
    request, truth = t.request(np.random.default_rng(0))
    for bits in (np.full(128, np.nan), np.zeros((2, 64)), np.array(["a"] * 128), np.zeros(0)):
        fb = t.judge({"bits": bits, "used": []}, request, truth)
        assert not fb.passed and fb.message.startswith("Task 4:"), fb


# ====================================================================== A3
A3_KEYS = [t.key for t in assignments.tasks("A3")]
A3_FAST = [k for k in A3_KEYS if k not in ("Task 4", "Task 5")]


@pytest.mark.parametrize("key", A3_FAST)
def test_a3_model_solution_passes_on_many_seeds(key):
    for seed in range(20):
        fb = run("A3", key, answers_of("A3", key), seed)
        assert fb.passed, (seed, fb)


def test_a3_mechanism_tasks_pass_the_model():
    # the mechanism check itself (dpteach.coursework.exercises.mechanism_*) is tested over many
    # seeds in tests/test_exercises.py; here: the wiring of Tasks 4 and 5
    fb = run("A3", "Task 4", answers_of("A3", "Task 4"), 0)
    assert fb.passed, fb
    fb = run("A3", "Task 5", answers_of("A3", "Task 5"), 1)
    assert fb.passed and "refuted" in fb.message, fb


def _synthetic(request, scale):
    """What mechanism_collect returns for value + Lap(scale(Δ, ε)) noise, made directly
    (the judge cannot tell; it saves the calls)."""
    rng = np.random.default_rng(request["seed"])
    inputs = np.asarray(request["inputs"], float)
    points = np.asarray(request["points"], float)
    n = int(request["n_min"])
    b = np.repeat([scale(d, e) for d, e in points], inputs.shape[1])[:, None]
    outputs = inputs.reshape(-1, 1) + rng.laplace(0.0, 1.0, (inputs.size, n)) * b
    return {"problem": None, "repro": [1.5, 1.5], "outputs": outputs, "runs": n,
            "seconds_per_call": 1e-6, "seconds": 1.0, "too_slow": False}


@pytest.mark.parametrize("key, scale, reason", [
    ("Task 4", lambda d, e: e, "privacy"),                   # the slip fails Task 4
    ("Task 5", lambda d, e: d / e, "not_refuted"),           # a correct mechanism fails Task 5
    ("Task 5", lambda d, e: d / e / 10, ("not_the_slip", "not_refuted")),   # another bug
])
def test_a3_mechanism_tasks_judge_slips(key, scale, reason):
    t = task("A3", key)
    request, truth = t.request(np.random.default_rng(5))
    fb = t.judge(_synthetic(request, scale), request, truth)
    assert not fb.passed and fb.details["reason"] in np.atleast_1d(reason), fb


def test_a3_task5_fails_a_mechanism_without_noise():
    fb = run("A3", "Task 5", {"slipped_release": lambda v, d, e, rng: v}, 5)
    assert not fb.passed and fb.solved and fb.details["reason"] == "not_refuted", fb


@pytest.mark.parametrize("key", A3_KEYS)
def test_a3_stub_and_missing_answer_are_not_yet_solved(key):
    names = task("A3", key).names
    for answers in ({n: stub for n in names}, {n: None for n in names}, {}):
        fb = run("A3", key, answers)
        assert not fb.passed and not fb.solved and "not yet solved" in fb.message, fb


@pytest.mark.parametrize("key, cheat", [
    ("Task 1", lambda M: 1.0), ("Task 1", lambda M: M + 1), ("Task 1", lambda M: M / 2),
    ("Task 2a", lambda M, n: 100 / 3), ("Task 2a", lambda M, n: M / (n - 1)),
    ("Task 2a", lambda M, n: M),
    ("Task 2b", lambda M, n: M),                       # right for odd n only
    ("Task 2b", lambda M, n: 100.0), ("Task 2b", lambda M, n: M / n),
    ("Task 3a", lambda c, nb, norm: 1.0), ("Task 3a", lambda c, nb, norm: 2.0),
    ("Task 3b", lambda c, nb, norm: 1.0 if nb == "add_remove" else 2.0),   # the L1 values
    ("Task 3b", lambda c, nb, norm: np.sqrt(2)),
    ("Task 6", lambda d, e, p: 5.991464547107982),    # the notebook's t95
    ("Task 6", lambda d, e, p: d / e * np.log10(1 / p)),
    ("Task 6", lambda d, e, p: d / e * np.log(2 / p)),
    ("Task 6", lambda d, e, p: e / d * np.log(1 / p)),
])
def test_a3_cheats_and_slips_fail(key, cheat):
    name = task("A3", key).names[0]
    assert_fails_everywhere("A3", key, {name: cheat}, reason="wrong")


@pytest.mark.parametrize("key, cheat", [
    ("Task 1", lambda M: dp.global_sensitivity(lambda x: float(np.sum(x)), list(range(M + 1)), 2)),
    ("Task 2a", lambda M, n: dp.sensitivity.global_sensitivity(
        lambda x: float(np.mean(x)), [0, M / 2, M], n, neighbours="substitute")),
    ("Task 3b", lambda c, nb, norm: dp.global_sensitivity(
        lambda x: np.bincount(np.asarray(x, int), minlength=c), list(range(c)), 3,
        neighbours=nb, norm=norm)),
])
def test_a3_brute_force_inside_the_function_is_refused(key, cheat):
    name = task("A3", key).names[0]
    assert_fails_everywhere("A3", key, {name: cheat}, seeds=range(2), reason="forbidden")
    assert dp.global_sensitivity(lambda x: float(np.sum(x)), [0, 1], 2) == 1    # restored


def test_a3_expected_sensitivities_come_from_brute_force_and_match_the_closed_forms():
    rng = np.random.default_rng(7)
    ns = model("A3")
    for key, fn in [("Task 2a", "mean_sensitivity"), ("Task 2b", "median_sensitivity")]:
        request, truth = task("A3", key).request(rng)
        for case, t in zip(request["cases"], truth):
            assert ns[fn](case["M"], case["n"]) == pytest.approx(t)
    assert ns["median_sensitivity"](10, 4) == 5 and ns["median_sensitivity"](10, 3) == 10


def test_a3_errors_in_student_code_are_reported_not_raised():
    def boom(*a):
        raise ZeroDivisionError("oops")
    for key in A3_KEYS:
        fb = run("A3", key, {n: boom for n in task("A3", key).names})
        assert not fb.passed and fb.solved and "ZeroDivisionError" in fb.message, fb


def test_a3_judge_never_raises_on_garbage():
    check_garbage("A3")
