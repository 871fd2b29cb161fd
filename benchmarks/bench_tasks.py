"""CPU seconds of every graded task on its model answer: the solution notebook's code runs
once in this process, then each task draws its hidden inputs, runs the answer on them
(collect), crosses the JSON transport and judges. CPU time, so other load on the machine
hardly moves it; the grader's own sandbox and kernel start-up are not included."""

import contextlib
import io
import pathlib
import re
import time
import warnings

import nbformat
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _answers(path):
    """The names a solution notebook defines, from running its code cells in order."""
    scope = {"__name__": "__main__", "display": lambda *args, **kwargs: None}
    nb = nbformat.read(path, as_version=4)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        for cell in nb.cells:
            if cell.cell_type == "code" and not cell.source.lstrip().startswith(("%", "!")):
                exec(compile(cell.source, str(path), "exec"), scope)   # our own notebooks
    return scope


def run():
    import matplotlib

    matplotlib.use("Agg")
    from dpteach.coursework import assignments

    rows, worst = [], 0.0
    for path in sorted((ROOT / "notebooks" / "solutions").glob("A*.ipynb")):
        key = re.match(r"(A\d+)_", path.name).group(1)
        scope = _answers(path)
        for task in assignments.tasks(key):
            t0 = time.process_time()
            request, truth = task.request(np.random.default_rng(1))
            data = task.collect({n: scope[n] for n in task.names}, request)
            data = assignments.loads(assignments.dumps(data))
            task.judge(data, request, truth)
            seconds = time.process_time() - t0
            worst = max(worst, seconds)
            rows.append((f"{key} {task.key}: draw, run the model answer, judge (CPU)", seconds,
                         "s", "<= 10 s"))
    rows.append(("slowest task", worst, "s", "<= 10 s"))
    return rows
