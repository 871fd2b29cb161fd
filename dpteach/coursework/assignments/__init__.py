"""Graded tasks of the coursework (A1-A10), with the truth kept by the checker.

Every auto-graded task of an assignment is a :class:`Task` in three parts, so that the
same check serves a student working in the notebook and ``make grade`` grading a
handed-in notebook without trusting it:

* ``request(rng) -> (request, truth)``: the grader draws held-out inputs (hidden seeds,
  fresh data, mechanisms whose labels the student never sees). ``request`` is what the
  student's code is allowed to see; ``truth`` never leaves the grader;
* ``collect(answers, request) -> data``: runs the student's code (``answers`` maps the
  task's ``names`` to the student's objects) on the request and returns plain data
  (numbers, strings, lists, dicts, numpy arrays, pandas DataFrames). This is the only
  part that touches student code; ``make grade`` runs it in the student's kernel and
  treats what comes back as untrusted data (it crosses as JSON: :mod:`._transport`);
* ``judge(data, request, truth) -> Feedback``: decides, from data alone, whether the
  task is solved. It never calls student code.

A task also declares, by name, the kit functions it ``forbids`` (the grading kernel goes
without them and everything that computes them) and those its honest solution ``needs``
although the grader would take them away; an assignment module may name in ``ALLOWED``
kit functions every one of its tasks may use. The grader reads these declarations and
nothing else (:func:`allowed`, ``Task.forbidden``, ``Task.needs``).

In a notebook, ``dp.assignments.check("A3", "Task 4", laplace_release=laplace_release)``
runs all three in-process with fresh randomness. Each assignment's tasks live in
``a1_anonymity.py`` ... ``a10_local_synthetic.py`` as a list ``TASKS``; ``_demo.py``
(A0) is the template to copy for a new one.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["Task", "ASSIGNMENTS", "tasks", "allowed", "check"]

#: assignment -> module holding its TASKS
ASSIGNMENTS = {
    "A1": "a1_anonymity",
    "A2": "a2_attacks",
    "A3": "a3_laplace",
    "A4": "a4_composition",
    "A5": "a5_exponential",
    "A6": "a6_auditing",
    "A7": "a7_properties",
    "A8": "a8_clipping_svt",
    "A9": "a9_dp_sgd",
    "A10": "a10_local_synthetic",
}

#: a task's key as the notebook names it: "Task 3", "Task 3a"
KEY = re.compile(r"Task [1-9][0-9]*[a-z]?")
#: a kit function as a task names it: "dpteach.<module>:<name>" ("dpteach:<name>" for
#: the top level)
TARGET = re.compile(r"dpteach(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")


def _targets(owner, what, value) -> tuple:
    """``value`` as a tuple of kit functions, or a TypeError/ValueError naming ``what``."""
    if isinstance(value, str) or not isinstance(value, (tuple, list)):
        raise TypeError(f"{owner}: {what} must be a tuple of \"dpteach.<module>:<name>\" "
                        f"strings, got {type(value).__name__}")
    for target in value:
        if not isinstance(target, str) or not TARGET.fullmatch(target):
            raise ValueError(f"{owner}: {what} must name kit functions as "
                             f"\"dpteach.<module>:<name>\", got {target!r}")
    return tuple(value)


@dataclass(frozen=True, kw_only=True)
class Task:
    """One auto-graded task, every field named.

    ``key``: as the notebook names it ("Task 3a"); ``points``: a whole number above 0;
    ``names``: the student's objects the task reads (identifiers); ``request``,
    ``collect`` and ``judge``: the three parts (see the module's docstring); ``title``: a
    short line for reports; ``forbidden``: kit functions (``"dpteach.<module>:<name>"``)
    the task asks the student not to call, which its collect watches with
    :class:`~._student.forbid` and which the grading kernel goes without, with all that
    computes them; ``needs``: kit functions its honest solution calls although another
    task forbids them or a judge computes its truth with them (the grader then runs the
    task in a kernel of its own that keeps them). A malformed declaration is refused here,
    by the field's name."""

    key: str
    points: int
    names: tuple
    request: Callable
    collect: Callable
    judge: Callable
    title: str = ""
    forbidden: tuple = ()
    needs: tuple = ()

    def __post_init__(self):
        if not isinstance(self.key, str) or not KEY.fullmatch(self.key):
            raise ValueError(f"Task key must read \"Task 3\" or \"Task 3a\", got {self.key!r}")
        owner = self.key
        if isinstance(self.points, bool) or not isinstance(self.points, int) or self.points < 1:
            raise ValueError(f"{owner}: points must be a whole number above 0, "
                             f"got {self.points!r}")
        if not isinstance(self.names, tuple) or not self.names or not all(
                isinstance(n, str) and n.isidentifier() for n in self.names):
            raise TypeError(f"{owner}: names must be a non-empty tuple of identifiers, "
                            f"got {self.names!r}")
        for part in ("request", "collect", "judge"):
            if not callable(getattr(self, part)):
                raise TypeError(f"{owner}: {part} must be a function, "
                                f"got {type(getattr(self, part)).__name__}")
        if not isinstance(self.title, str):
            raise TypeError(f"{owner}: title must be a string, got {type(self.title).__name__}")
        object.__setattr__(self, "forbidden", _targets(owner, "forbidden", self.forbidden))
        object.__setattr__(self, "needs", _targets(owner, "needs", self.needs))
        both = sorted(set(self.forbidden) & set(self.needs))
        if both:
            raise ValueError(f"{owner}: a task cannot both forbid and need {both}")


#: assignments outside the course: A0 is a three-task demo the grader's tests use and the
#: template for a new assignment
_HIDDEN = {"A0": "_demo"}


def _module(assignment):
    key = str(assignment).strip().upper()
    module = ASSIGNMENTS.get(key) or _HIDDEN.get(key)
    if module is None:
        raise ValueError(f"assignment must be one of {sorted(ASSIGNMENTS)}, got {assignment!r}")
    return importlib.import_module(f".{module}", __name__)


def tasks(assignment: str) -> list:
    """The auto-graded tasks of ``assignment`` ("A1" ... "A10"), in notebook order."""
    return list(_module(assignment).TASKS)


def allowed(assignment: str) -> tuple:
    """The kit functions (``"dpteach.<module>:<name>"``) every task of ``assignment`` may
    use: its module's ``ALLOWED`` (empty when it has none). The grading kernel keeps them
    even where a judge computes its truth with them."""
    return _targets(f"{assignment} ALLOWED", "ALLOWED", getattr(_module(assignment), "ALLOWED", ()))


def _task(assignment, key) -> Task:
    for task in tasks(assignment):
        if task.key.lower() == str(key).strip().lower():
            return task
    names = [t.key for t in tasks(assignment)]
    raise ValueError(f"{assignment} has no task {key!r}; its tasks are {names}")


def check(assignment, key, *args, rng=None, **answers):
    """Check one task in the notebook: draw held-out inputs, run the student's code on
    them, judge. Answers are given by name (``laplace_release=laplace_release``) or
    positionally in the order of the task's ``names``. Returns a
    :class:`~dpteach.coursework.exercises.Feedback` whose message starts with the task's key."""
    task = _task(assignment, key)
    if len(args) > len(task.names):
        raise TypeError(f"{task.key} reads {len(task.names)} answer(s) {task.names}, "
                        f"got {len(args)} positional")
    answers = {**dict(zip(task.names, args)), **answers}
    unknown = set(answers) - set(task.names)
    if unknown:
        raise TypeError(f"{task.key} reads {task.names}, not {sorted(unknown)}")
    rng = np.random.default_rng(rng)
    request, truth = task.request(rng)
    data = task.collect(answers, request)
    return task.judge(data, request, truth)
