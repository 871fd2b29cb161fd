"""The part of grading that runs the student's code: ``python -m
dpteach.coursework._grade_runner FOLDER``, started by :mod:`dpteach.coursework.grading`
inside the sandbox (or, with ``--no-sandbox``, as a plain child process) with FOLDER its
only writable place.

FOLDER holds ``job.json`` (the cells, the assignment, the tasks' names and request files,
the limits) and one ``request_<i>.pkl`` per task, written by the grader. This runner
starts a kernel in FOLDER, turns the notebook's checks off and runs the forbidden-function
stubs, then the notebook's cells there, then for each task the collect cell, which writes
``result_<i>.json``. It records what happened in ``status.json`` (notes, and per task
"ok", "timeout" or "died"). It never sees a task's truth and judges nothing: the grader
reads these files as untrusted data once the sandbox has ended.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def _write_status(folder, status):
    tmp = folder / ".status.tmp"
    tmp.write_text(json.dumps(status), encoding="utf-8")
    os.replace(tmp, folder / "status.json")


def run(folder) -> int:
    from .._lazy import go_without_unneeded_modules
    go_without_unneeded_modules()             # a process of its own: about 1.5 s less
    from ._grade_kernel import COLLECT, Kernel, run_cells
    from ._sandbox import prelude_cell

    folder = Path(folder)
    job = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    cells, timeout, task_timeout = job["cells"], job["timeout"], job["task_timeout"]
    status = {"notes": [], "tasks": {}, "done": False}
    notes = status["notes"]
    _write_status(folder, status)
    # the checks off and the stubs run first in every kernel started here, restarts included
    prelude = prelude_cell(job.get("stubs") or ())
    kernel = Kernel(folder, prelude=prelude)
    try:
        run_cells(kernel, cells, timeout, notes)
        _write_status(folder, status)
        deadline, rerun = time.monotonic() + timeout, False
        for task in job["tasks"]:
            i = str(task["index"])
            limit = min(task_timeout, deadline - time.monotonic())
            if limit <= 0:
                status["tasks"][i] = "grading_timeout"
                continue
            starts = kernel.starts
            code = COLLECT.format(
                fn=f"_grader_collect_{task['token']}", names=tuple(task["names"]),
                request=str(folder / task["request"]), result=str(folder / task["result"]),
                assignment=job["assignment"], key=task["key"])
            state = kernel.run(code, limit)
            status["tasks"][i] = state if state in ("timeout", "died") else "ok"
            _write_status(folder, status)
            if kernel.starts == starts and kernel.alive():
                continue
            if kernel.starts == starts:
                kernel.restart()
            if not rerun:
                notes.append(f"{task['key']}: the kernel had to be restarted while grading; "
                             "the notebook was run again for the remaining tasks")
                run_cells(kernel, cells, max(1.0, deadline - time.monotonic()), notes)
                rerun = True
        status["done"] = True
        _write_status(folder, status)
    finally:
        kernel.stop()
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1]))
