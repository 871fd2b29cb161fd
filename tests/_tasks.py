"""Running one graded task the way the grader does, for the assignment test files: draw
the hidden request, collect the answers' outputs, move them through the JSON transport
(as `make grade` does between the student's kernel and the grader), judge."""

import numpy as np

from dpteach.coursework import assignments
from dpteach.coursework.assignments import _transport


def tasks_of(assignment):
    """{task key: Task} of one assignment."""
    return {t.key: t for t in assignments.tasks(assignment)}


def run_task(assignment, key, seed, **answers):
    """The Feedback of ``key`` on the hidden draw of ``seed``, for the given answers."""
    task = tasks_of(assignment)[key]
    req, truth = task.request(np.random.default_rng(seed))
    data = task.collect(answers, req)
    data = _transport.loads(_transport.dumps(data))
    return task.judge(data, req, truth)
