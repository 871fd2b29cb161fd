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
  treats what comes back as untrusted data;
* ``judge(data, request, truth) -> Feedback``: decides, from data alone, whether the
  task is solved. It never calls student code.

In a notebook, ``dp.assignments.check("A3", "Task 4", laplace_release=laplace_release)``
runs all three in-process with fresh randomness. Each assignment's tasks live in
``a1_anonymity.py`` ... ``a10_local_synthetic.py`` as a list ``TASKS``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["Task", "ASSIGNMENTS", "tasks", "check", "encode", "decode", "dumps", "loads",
           "ResultRefused"]

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


@dataclass(frozen=True)
class Task:
    """One auto-graded task: ``key`` as the notebook names it ("Task 3a"), its
    ``points``, the student ``names`` it reads, and its request / collect / judge.
    ``extra["forbidden"]``: kit functions (``"module:name"``) it forbids;
    ``extra["needs"]``: kit functions its honest solution calls although another task of
    the assignment forbids them (the grader then runs it in a kernel of its own)."""

    key: str
    points: int
    names: tuple
    request: Callable
    collect: Callable
    judge: Callable
    title: str = ""
    extra: dict = field(default_factory=dict, compare=False)


#: assignments outside the course: A0 is a three-task demo the grader's tests use
_HIDDEN = {"A0": "_demo"}


def tasks(assignment: str) -> list:
    """The auto-graded tasks of ``assignment`` ("A1" ... "A10"), in notebook order."""
    key = str(assignment).strip().upper()
    module = ASSIGNMENTS.get(key) or _HIDDEN.get(key)
    if module is None:
        raise ValueError(f"assignment must be one of {sorted(ASSIGNMENTS)}, got {assignment!r}")
    return list(importlib.import_module(f".{module}", __name__).TASKS)


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


# ------------------------------------------------------------------ safe transport
# What collect returns crosses from the student's kernel to the grader as JSON: only
# plain data, rebuilt by decode() without running anything, and refused (ResultRefused)
# when it is too large, too deep or not of the shapes encode() writes (see _transport).
from ._transport import (MAX_DEPTH, MAX_ELEMENTS, MAX_RESULT_BYTES,  # noqa: E402,F401
                         MAX_STRING, MAX_VALUES, ResultRefused, decode, dumps,
                         encode, loads, scan)
