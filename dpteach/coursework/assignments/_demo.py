"""A0: the template for an assignment. Copy this file to add an assignment.

A0 is a three-task demo outside the course (registered in ``_HIDDEN``, not in
``ASSIGNMENTS``), on which the grader (:mod:`dpteach.coursework.grading`) and the nbgrader
export are tested. It is written the way every assignment A1-A10 is, so that
``cp _demo.py a11_<topic>.py`` starts a new one. Its parts, from the top:

1. **This docstring** lists every task, its points and what its check computes:

   * Task 1 (1 point): ``double(x)`` returns 2x, checked on five integers the grader draws;
   * Task 2 (1 point): ``answer`` holds the number 42;
   * Task 3 (2 points): ``noisy_count(count, epsilon, rng)`` is count + Lap(1/epsilon);
     the grader draws ``count``, ``epsilon`` and a seed, and checks the noise's mean and
     spread over 2000 releases (z-tests at alpha = 1e-6).

2. **The imports**: :class:`~dpteach.coursework.assignments.Task` from the package and the
   helpers of :mod:`._student`; nothing of the student's.
3. **Three functions per task**, in the order the grader runs them:

   * ``request(rng) -> (request, truth)`` draws the hidden inputs; only ``request`` is
     shown to the student's code, ``truth`` stays with the grader;
   * ``collect(answers, request) -> data`` is the only part that runs the student's code,
     always through :func:`~._student.call`, :func:`~._student.call_each` or
     :func:`~._student.call_each_watched` (a missing answer, a ``None`` result or an
     exception becomes data), and returns plain data;
   * ``judge(data, request, truth) -> Feedback`` starts from
     :func:`~._student.opening` (unsolved, raised, malformed, a forbidden call, a value of
     the wrong kind), reads the rest with :func:`~._student.entries`,
     :func:`~._student.number` or :func:`~._student.float_array` (untrusted data: never
     raise), and ends in :func:`~._student.fail` or :func:`~._student.ok`.

4. **What is forbidden**: a task that asks for something the kit already computes names
   those kit functions as a tuple of ``"dpteach.<module>:<name>"`` strings, hands it to
   :func:`~._student.call_each_watched` (or ``collect_values(..., forbidden=...)``) in its
   collect and declares the same tuple on its Task (``forbidden=``); the grader removes
   them, with everything that computes them, from the kit the student's kernel gets.
   ``needs=`` names what an honest solution calls although another task forbids it (the
   task is then graded in a kernel of its own); a module-level ``ALLOWED`` names what every
   task may use. A0 forbids nothing (see ``a3_laplace.py``'s ``_BRUTE``).
5. **TASKS**, the tasks in notebook order, each a :class:`Task` with named fields.
6. **Registration**: the module's name in ``ASSIGNMENTS`` (``__init__.py``).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..exercises import ALPHA
from . import Task
from ._student import (UNSOLVED, call, call_each, entries, fail, field, float_array, g,
                       is_unsolved, not_solved, number, ok, opening, short)

_N_RELEASES = 2000


# ------------------------------------------------------------------ Task 1
def _double_request(rng):
    xs = [int(v) for v in rng.integers(-1000, 1000, size=5)]
    return {"xs": xs}, [2 * x for x in xs]


def _double_collect(answers, request):
    return call_each(answers.get("double"), [(x,) for x in request["xs"]], "doubled")


def _double_judge(data, request, truth):
    key = "Task 1"
    bad = opening(key, data, "Hint: return 2 * x.")
    if bad is not None:
        return bad
    found, bad = entries(key, data, "doubled", len(truth))
    if bad is not None:
        return fail(key, "double did not return one value per input.", "malformed")
    for x, v, t in zip(request["xs"], found, truth):
        if number(v) != t:
            shown = v if isinstance(v, str) else g(v)       # call_each keeps a non-number's repr
            return fail(key, f"double({x}) returned {shown}, expected {t}.")
    return ok(key, "correct.")


# ------------------------------------------------------------------ Task 2
def _answer_request(rng):
    return None, 42


def _answer_collect(answers, request):
    return answers.get("answer")                     # a value, not code: sent as it is


def _answer_judge(data, request, truth):
    key = "Task 2"
    if is_unsolved(data):
        return not_solved(key, "give answer its value")
    if number(data) != truth:
        return fail(key, f"{short(data)} is not the answer.")
    return ok(key, "correct.")


# ------------------------------------------------------------------ Task 3
def _noise_request(rng):
    request = {"count": int(rng.integers(10, 1000)), "epsilon": float(rng.choice([0.25, 0.5])),
               "seed": int(rng.integers(2**62))}
    return request, None


def _noise_collect(answers, request):
    mechanism = answers.get("noisy_count")
    if is_unsolved(mechanism):
        return dict(UNSOLVED)
    rng = np.random.default_rng(request["seed"])

    def releases():                  # one array, or None when every call returned None
        out = [mechanism(request["count"], request["epsilon"], rng) for _ in range(_N_RELEASES)]
        return None if all(v is None for v in out) else np.asarray(out, dtype=float)

    value, problem = call(releases)
    return problem if problem is not None else {"releases": value}


def _noise_judge(data, request, truth):
    key = "Task 3"
    bad = opening(key, data, "Hint: count + rng.laplace(0, 1 / epsilon).")
    if bad is not None:
        return bad
    x = float_array(field(data, "releases"), (_N_RELEASES,))
    if x is None:
        return fail(key, f"expected {_N_RELEASES} finite releases.", "malformed")
    b = 1.0 / request["epsilon"]
    noise = x - request["count"]
    # Lap(b): mean 0, sd sqrt(2) b; E|noise| = b with sd b. Normal approximations over
    # 2000 draws, two-sided at ALPHA, are loose enough to never reject a correct mechanism
    # and tight enough to reject a scale off by a factor of 2.
    z_crit = float(np.sqrt(2) * special.erfcinv(ALPHA))
    z_mean = noise.mean() / (np.sqrt(2) * b / np.sqrt(x.size))
    z_abs = (np.abs(noise).mean() - b) / (b / np.sqrt(x.size))
    if abs(z_mean) > z_crit:
        return fail(key, "the releases are not centred on the count.")
    if abs(z_abs) > z_crit:
        return fail(key, "the noise does not have scale 1/epsilon.")
    return ok(key, "correct.")


# ------------------------------------------------------------------ the tasks
TASKS = [
    Task(key="Task 1", points=1, names=("double",), title="double a number",
         request=_double_request, collect=_double_collect, judge=_double_judge),
    Task(key="Task 2", points=1, names=("answer",), title="the answer",
         request=_answer_request, collect=_answer_collect, judge=_answer_judge),
    Task(key="Task 3", points=2, names=("noisy_count",), title="a Laplace count",
         request=_noise_request, collect=_noise_collect, judge=_noise_judge),
]
