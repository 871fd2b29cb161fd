"""A0: a three-task demo assignment, outside the course, on which the grader
(:mod:`dpteach.coursework.grading`) and the nbgrader export are tested. Each task follows the
request / collect / judge contract of :mod:`dpteach.coursework.assignments`:

* Task 1 (1 point): ``double(x)`` returns 2x, checked on five integers the grader draws;
* Task 2 (1 point): ``answer`` holds the number 42;
* Task 3 (2 points): ``noisy_count(count, epsilon, rng)`` is count + Lap(1/epsilon);
  the grader draws ``count``, ``epsilon`` and a seed, and checks the noise's mean and
  spread over 2000 releases (z-tests at alpha = 1e-6).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import special

from ..exercises import ALPHA, Feedback
from . import Task

_N_RELEASES = 2000


def _not_solved(key) -> Feedback:
    return Feedback(False, f"{key}: not yet solved.", solved=False)


def _is_number(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


# Task 1 ------------------------------------------------------------------------
def _double_request(rng):
    xs = [int(v) for v in rng.integers(-1000, 1000, size=5)]
    return {"xs": xs}, [2 * x for x in xs]


def _double_collect(answers, request):
    double = answers["double"]
    return [double(x) for x in request["xs"]]


def _double_judge(data, request, truth):
    if not isinstance(data, list) or len(data) != len(truth):
        return Feedback(False, "Task 1: double did not return one value per input.")
    if all(v is None for v in data):
        return _not_solved("Task 1")
    wrong = [(x, v) for x, v, t in zip(request["xs"], data, truth)
             if not _is_number(v) or v != t]
    if wrong:
        x, v = wrong[0]
        return Feedback(False, f"Task 1: double({x}) returned {v!r}, expected {2 * x}.")
    return Feedback(True, "Task 1: correct.")


# Task 2 ------------------------------------------------------------------------
def _answer_request(rng):
    return None, 42


def _answer_collect(answers, request):
    return answers["answer"]


def _answer_judge(data, request, truth):
    if data is None:
        return _not_solved("Task 2")
    if not _is_number(data) or data != truth:
        return Feedback(False, f"Task 2: {data!r} is not the answer.")
    return Feedback(True, "Task 2: correct.")


# Task 3 ------------------------------------------------------------------------
def _noise_request(rng):
    request = {"count": int(rng.integers(10, 1000)), "epsilon": float(rng.choice([0.25, 0.5])),
               "seed": int(rng.integers(2**62))}
    return request, None


def _noise_collect(answers, request):
    mechanism = answers["noisy_count"]
    rng = np.random.default_rng(request["seed"])
    out = [mechanism(request["count"], request["epsilon"], rng) for _ in range(_N_RELEASES)]
    if all(v is None for v in out):
        return None
    return np.asarray(out, dtype=float)


def _noise_judge(data, request, truth):
    if data is None:
        return _not_solved("Task 3")
    x = np.asarray(data, dtype=float).ravel()
    if x.size != _N_RELEASES or not np.all(np.isfinite(x)):
        return Feedback(False, f"Task 3: expected {_N_RELEASES} finite releases.")
    b = 1.0 / request["epsilon"]
    noise = x - request["count"]
    # Lap(b): mean 0, sd sqrt(2) b; E|noise| = b with sd b. Normal approximations over
    # 2000 draws, two-sided at ALPHA, are loose enough to never reject a correct mechanism
    # and tight enough to reject a scale off by a factor of 2.
    z_crit = float(np.sqrt(2) * special.erfcinv(ALPHA))
    z_mean = noise.mean() / (np.sqrt(2) * b / np.sqrt(x.size))
    z_abs = (np.abs(noise).mean() - b) / (b / np.sqrt(x.size))
    if abs(z_mean) > z_crit:
        return Feedback(False, "Task 3: the releases are not centred on the count.")
    if abs(z_abs) > z_crit:
        return Feedback(False, "Task 3: the noise does not have scale 1/epsilon.")
    return Feedback(True, "Task 3: correct.")


TASKS = [
    Task(key="Task 1", points=1, names=("double",), title="double a number",
         request=_double_request, collect=_double_collect, judge=_double_judge),
    Task(key="Task 2", points=1, names=("answer",), title="the answer",
         request=_answer_request, collect=_answer_collect, judge=_answer_judge),
    Task(key="Task 3", points=2, names=("noisy_count",), title="a Laplace count",
         request=_noise_request, collect=_noise_collect, judge=_noise_judge),
]
