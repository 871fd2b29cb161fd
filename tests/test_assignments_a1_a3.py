"""Assignments A1-A3: the graded tasks of dpteach.assignments.a1_anonymity, a2_attacks
and a3_laplace.

For every task: (1) the model solution -- the function in the solution notebook,
executed from the notebook's own cells -- passes on many seeds; (2) the blank stub and a
missing answer are "not yet solved"; (3) copy-cheats fail (the value the notebook holds,
the public table's answer, constants); (4) the classic wrong-but-plausible slip fails;
(5) the judge never raises on garbage data; (6) what collect returns survives
dpteach.assignments.dumps/loads (every run below goes through it).
"""

import ast
import math
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

import dpteach as dp
from dpteach import anonymity as an
from dpteach import assignments
from dpteach.exercises import Feedback

ROOT = Path(__file__).resolve().parent.parent
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


def run(assignment, key, answers, seed=0) -> Feedback:
    """request -> collect -> JSON transport -> judge, as make grade runs a task."""
    t = task(assignment, key)
    request, truth = t.request(np.random.default_rng(seed))
    data = t.collect(answers, assignments.loads(assignments.dumps(request)))
    data = assignments.loads(assignments.dumps(data))
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


GARBAGE = [None, {}, [], "x", 3.5, float("nan"), {"results": "x"}, {"results": [None] * 6},
           {"results": [{}] * 6}, {"results": [{"value": float("nan")}] * 6},
           {"results": [{"value": "1"}] * 6}, {"results": [{"table": "x"}] * 6},
           {"results": [{"answer": 3}] * 6}, {"results": [{"bits": "x"}] * 6},
           {"error": "ValueError: boom"}, {"unsolved": True}, {"results": [[1, 2]] * 6}]


def check_garbage(assignment):
    for t in assignments.tasks(assignment):
        request, truth = t.request(np.random.default_rng(1))
        n = len(t.collect({}, request).get("results", [])) if False else None
        for junk in GARBAGE:
            fb = t.judge(junk, request, truth)
            assert isinstance(fb, Feedback) and not fb.passed, (t.key, junk, fb)
            assert fb.message.startswith(t.key + ":"), (t.key, fb)
        assert not t.judge({"unsolved": True}, request, truth).solved


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
    from dpteach.assignments.a1_anonymity import age_matches, nationality_matches, zip_matches
    assert zip_matches("130**", "13053") and not zip_matches("131**", "13053")
    assert zip_matches("*", "13053") and not zip_matches("130*", "13053")
    for label, age, want in [("30-39", 31, True), ("30-39", 40, False), ("< 30", 29, True),
                             ("< 30", 30, False), ("≥ 40", 40, True), ("3*", 35, True),
                             ("3*", 41, False), ("[30, 40)", 40, False), ("[30, 40]", 40, True),
                             ("*", 99, True), ("31", 31, True), (31, 31, True), ("young", 20, False),
                             ("<= 30", 30, True), ("> 30", 30, False)]:
        assert age_matches(label, age) is want, (label, age)
    assert nationality_matches("*", "Indian") and nationality_matches("American/Indian", "Indian")
    assert not nationality_matches("Russian", "Indian")
