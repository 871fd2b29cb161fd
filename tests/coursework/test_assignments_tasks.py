"""The declared tasks of every assignment (dpteach/coursework/assignments/__init__.py):
``Task`` refuses a malformed declaration by the field's name, every task's ``forbidden``
and ``needs`` name real kit functions, and what the grader forbids is exactly what the
tasks declare."""

import importlib
import re
import sys
import types

import pytest

from dpteach.coursework import _grade_run, assignments, grading
from dpteach.coursework.assignments import Task

#: every registered assignment, A0 (the template) included
KEYS = ["A0", *assignments.ASSIGNMENTS]


def _parts():
    return {"request": lambda rng: (None, None), "collect": lambda answers, request: None,
            "judge": lambda data, request, truth: None}


def test_a_well_formed_declaration_is_kept_as_given():
    task = Task(key="Task 3a", points=2, names=("f", "g"), title="t",
                forbidden=["dpteach:laplace_mechanism"], needs=("dpteach.rdp:zcdp_to_dp",),
                **_parts())
    assert task.forbidden == ("dpteach:laplace_mechanism",)
    assert task.needs == ("dpteach.rdp:zcdp_to_dp",)
    with pytest.raises(TypeError):
        Task("Task 1", 1, ("f",), *_parts().values())           # every field is named


@pytest.mark.parametrize("field, value, words", [
    ("key", "task 1", "Task key"),
    ("key", "Task 1A", "Task key"),
    ("key", 1, "Task key"),
    ("points", 0, "points"),
    ("points", 1.5, "points"),
    ("points", True, "points"),
    ("names", "f", "names"),
    ("names", (), "names"),
    ("names", ("not a name",), "names"),
    ("names", ["f"], "names"),
    ("request", None, "request"),
    ("collect", "collect", "collect"),
    ("judge", 3, "judge"),
    ("title", None, "title"),
    ("forbidden", "dpteach:laplace_mechanism", "forbidden"),
    ("forbidden", ("laplace_mechanism",), "forbidden"),
    ("forbidden", ("numpy:mean",), "forbidden"),
    ("needs", ("dpteach.rdp.zcdp_to_dp",), "needs"),
    ("needs", ("dpteach:laplace_mechanism",), "forbid and need"),
])
def test_a_malformed_declaration_is_refused_by_name(field, value, words):
    fields = {"key": "Task 1", "points": 1, "names": ("f",), "title": "",
              "forbidden": ("dpteach:laplace_mechanism",), **_parts(), field: value}
    with pytest.raises((TypeError, ValueError), match=re.escape(words)):
        Task(**fields)


@pytest.mark.parametrize("key", KEYS)
def test_an_assignment_s_tasks_have_distinct_keys_in_notebook_order(key):
    keys = [t.key for t in assignments.tasks(key)]
    assert len(set(keys)) == len(keys)
    assert keys == sorted(keys, key=lambda k: (int(re.sub(r"\D", "", k)), k))


@pytest.mark.parametrize("key", KEYS)
def test_every_declared_kit_function_exists(key):
    for task in assignments.tasks(key):
        for target in (*task.forbidden, *task.needs, *assignments.allowed(key)):
            module, name = target.split(":")
            assert callable(getattr(importlib.import_module(module), name, None)), \
                (key, task.key, target)


@pytest.mark.parametrize("key", KEYS)
def test_the_grader_forbids_what_the_tasks_declare(key):
    tasks = assignments.tasks(key)
    allowed = set(assignments.allowed(key))
    declared = {t for task in tasks for t in task.forbidden} - allowed
    assert grading.forbidden_targets(tasks, allowed) == sorted(declared)
    assert _grade_run.allowed_targets(key) == sorted(allowed)
    for members, targets, needs in grading._groups(tasks, allowed):
        assert set(targets) == declared - set(needs)
        assert all(set(t.needs) == set(needs) for t in members)


def _names(code):
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _names(const)
    return out


@pytest.mark.parametrize("key", KEYS)
def test_what_a_collect_watches_is_declared_on_its_task(key):
    """Every module-level tuple of kit functions a task's collect reaches (the targets
    it hands to ``forbid``) is part of that task's declaration: nothing is forbidden in
    the notebook that the grading kernel would keep."""
    for task in assignments.tasks(key):
        module = sys.modules[task.collect.__module__]
        tuples = {n: v for n, v in vars(module).items() if isinstance(v, tuple) and v
                  and all(isinstance(x, str) and assignments.TARGET.fullmatch(x) for x in v)}
        for name in _names(task.collect.__code__) & set(tuples):
            assert set(tuples[name]) <= set(task.forbidden) | set(task.needs), \
                (key, task.key, name)
