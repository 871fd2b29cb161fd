"""Grade handed-in coursework notebooks without trusting what they print.

``make grade FILES="a.ipynb b.ipynb" REPORT=grades.csv`` (``python -m dpteach.grading``)
grades each notebook in four steps:

1. **read** every submission into memory first (so no notebook can rewrite another's file
   before it is graded) and decide its assignment: ``--assignment``, else the notebook's
   ``metadata["dpteach"]["assignment"]`` (written by ``make exercises``) and the file
   name's ``A1`` ... ``A9`` prefix, which must agree when both are there;
2. **run** it cell by cell in a fresh kernel whose working folder is a temporary folder
   holding a copy of it. A cell that raises does not stop the next; when the kernel dies
   (``exit()``, ``os._exit``) it is restarted and the run goes on with the next cell; after
   ``timeout`` seconds of cells the kernel is interrupted (killed and restarted if it
   ignores the interrupt) and the remaining cells are skipped. Nothing the notebook
   displays is read;
3. **collect**, per task of the assignment (every task, whether or not the notebook still
   holds its check cell): the grader draws the task's held-out request with a fresh
   ``secrets`` seed, writes it into the folder and runs one injected cell that looks up
   the task's names in the notebook's globals and calls ``task.collect`` there, writing
   the result as JSON (:func:`dpteach.assignments.dumps`). Each task has its own time
   limit; all of them together get another ``timeout`` seconds;
4. **judge** in this process: the JSON is decoded as data only
   (:func:`dpteach.assignments.loads`, never pickle) and ``task.judge(data, request,
   truth)`` decides. The truth never enters the kernel.

Whatever the notebook does to its own kernel (redefining ``dp.assignments.check``,
patching ``Feedback.__repr__``, ``collect`` or ``json``) can change only the data it
hands back, which ``judge`` then checks. The grader does run the students' code: grade
untrusted work in a container (notebooks/README.md, "Handing out and grading coursework").

The report has one row per notebook and task: ``notebook,task,passed,message,points,
max_points,assignment``; a notebook that cannot be graded at all (missing, empty, not a
notebook, unknown assignment) gets one row with task ``(notebook)``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pickle
import re
import secrets
import shutil
import stat
import sys
import tempfile
import time
from dataclasses import astuple, dataclass
from pathlib import Path

import nbformat
import numpy as np

from . import assignments
from ._checks import check_real
from .coursework import assignment_of

__all__ = ["Row", "FIELDS", "grade", "grade_notebook", "summary", "write_report", "main"]

#: the report's columns
FIELDS = ("notebook", "task", "passed", "message", "points", "max_points", "assignment")
#: seconds one task's collection may take in the kernel
TASK_TIMEOUT = 60
#: the largest result a task may hand back (bytes)
MAX_RESULT_BYTES = 50_000_000
#: the deepest nesting of lists and dicts a result may have
MAX_DEPTH = 100
NOTEBOOK_ROW = "(notebook)"
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_TIMEOUT_NAME = "GraderTimeout"


@dataclass(frozen=True)
class Row:
    """One line of the report."""

    notebook: str
    task: str
    passed: bool
    message: str
    points: float
    max_points: float | str
    assignment: str = ""


class SubmissionError(Exception):
    """A submission that cannot be graded at all (the message says why)."""


# ------------------------------------------------------------------ reading
def _parse(raw: bytes, name: str):
    """The notebook in ``raw`` (bytes of a file), or SubmissionError."""
    if not raw.strip():
        raise SubmissionError("the file is empty")
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        kind = " (is it a .py file renamed?)" if not raw.lstrip().startswith(b"{") else ""
        raise SubmissionError(f"not a notebook: not valid JSON{kind}: {err}") from None
    if not isinstance(obj, dict) or "nbformat" not in obj:
        raise SubmissionError("not a notebook: no 'nbformat' field")
    if obj.get("nbformat") != 4:
        raise SubmissionError(f"nbformat {obj.get('nbformat')!r} notebook: open it in "
                              "JupyterLab and save it again (nbformat 4)")
    if not isinstance(obj.get("cells"), list):
        raise SubmissionError("not a notebook: no list of cells")
    try:
        nb = nbformat.from_dict(obj)
        for cell in nb.cells:
            source = cell.get("source", "")
            cell["source"] = "".join(source) if isinstance(source, list) else str(source)
            if cell.get("cell_type") not in ("code", "markdown", "raw"):
                raise ValueError(f"cell of type {cell.get('cell_type')!r}")
    except Exception as err:                                 # noqa: BLE001 - any malformation
        raise SubmissionError(f"not a valid notebook: {err}") from None
    return nb


#: assignments a notebook may name itself (metadata, file name); any other (the A0 demo)
#: only by --assignment
NAMEABLE = set(assignments.ASSIGNMENTS)


def _assignment(nb, name, override):
    """The assignment to grade ``nb`` as: ``override``, else the metadata's and the file
    name's, which must agree when both are there (a student could edit either)."""
    if override:
        return str(override).strip().upper()
    meta = nb.metadata.get("dpteach") if nb is not None else None
    claimed = meta.get("assignment") if isinstance(meta, dict) else None
    claimed = claimed.strip().upper() if isinstance(claimed, str) else None
    named = assignment_of(name)
    for key in (claimed, named):
        if key is not None and key not in NAMEABLE:
            raise SubmissionError(f"{key} is not an assignment of the course: pass "
                                  "--assignment A3 (ASSIGNMENT=A3)")
    if claimed and named and claimed != named:
        raise SubmissionError(f"the notebook says it is {claimed} but its name says "
                              f"{named}: pass --assignment (ASSIGNMENT=...)")
    return claimed or named


def _tasks(assignment):
    if assignment is None:
        raise SubmissionError("cannot tell which assignment this is: name the file "
                              "A3_..., or pass --assignment A3 (ASSIGNMENT=A3)")
    try:
        return assignments.tasks(assignment)
    except ValueError as err:
        raise SubmissionError(str(err)) from None
    except ImportError:
        raise SubmissionError(f"assignment {assignment} has no auto-graded tasks "
                              "in dpteach.assignments yet") from None


# ------------------------------------------------------------------ the kernel
def _client_class():
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionComplete

    class _Client(NotebookClient):
        """Keeps no outputs (a notebook printing gigabytes cannot fill the grader's
        memory, and nothing printed is read); notes only the errors cells raise."""

        errors: list = []

        def process_message(self, msg, cell, cell_index):
            kind = msg.get("msg_type")
            content = msg.get("content") or {}
            if kind == "status" and content.get("execution_state") == "idle":
                raise CellExecutionComplete()
            if kind == "error":
                self.errors.append(f"{content.get('ename', '?')}: "
                                   f"{str(content.get('evalue', ''))[:200]}")
            return None

    return _Client


def _cancel_leftover_tasks():
    """Cancel what nbclient left pending on this thread's event loop (pollers of cells
    that timed out or whose kernel died), so it cannot wake up in a later kernel."""
    import asyncio

    from jupyter_core.utils import ensure_event_loop

    try:
        asyncio.get_running_loop()
        return                                             # not ours to clean
    except RuntimeError:
        pass
    loop = ensure_event_loop()
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in pending:
        t.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


class _Kernel:
    """One notebook's kernel, in its own folder; restarted when it dies."""

    def __init__(self, folder: Path):
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        self._timeout_error, self._dead_error = CellTimeoutError, DeadKernelError
        self.folder = folder
        self.nb = nbformat.v4.new_notebook()
        self.client = _client_class()(self.nb, kernel_name="python3", allow_errors=True,
                                      shutdown_kernel="immediate", record_timing=False,
                                      iopub_timeout=2, interrupt_on_timeout=True,
                                      error_on_timeout={"ename": _TIMEOUT_NAME,
                                                        "evalue": "", "traceback": []},
                                      resources={"metadata": {"path": str(folder)}})
        self.client.errors = []
        self.client.on_cell_executed = self._executed
        self._start()

    def _executed(self, cell=None, cell_index=None, execute_reply=None, **_):
        payload = ((execute_reply or {}).get("content") or {}).get("payload") or []
        self.asked_exit = any(isinstance(p, dict) and p.get("source") == "ask_exit"
                              for p in payload)
        # nbclient interrupted the kernel at the time limit and made up this reply
        self.timed_out = ((execute_reply or {}).get("content") or {}).get("ename") == _TIMEOUT_NAME

    def _start(self):
        self.starts = getattr(self, "starts", 0) + 1
        c = self.client
        c.km = c.create_kernel_manager()
        c.start_new_kernel(cwd=str(self.folder))
        c.start_new_kernel_client()

    def restart(self):
        self.stop()
        self._start()

    def stop(self):
        try:
            if self.client.km is not None:
                self.client._cleanup_kernel()
        except Exception:                                   # noqa: BLE001 - best effort
            self.client.km = self.client.kc = None
        _cancel_leftover_tasks()

    def alive(self) -> bool:
        try:
            from nbclient.util import run_sync

            return bool(self.client.km is not None and run_sync(self.client.km.is_alive)())
        except Exception:                                   # noqa: BLE001
            return False

    def run(self, source: str, timeout: float) -> str:
        """Run ``source``: "ok", "error" (it raised), "died" (the kernel is gone) or
        "timeout" (interrupted after ``timeout`` seconds, or killed and restarted)."""
        cell = nbformat.v4.new_code_cell(source)
        self.nb.cells.append(cell)
        self.client.timeout = max(1, int(np.ceil(timeout)))
        self.client.errors = []
        self.asked_exit = self.timed_out = False
        try:
            self.client.execute_cell(cell, len(self.nb.cells) - 1, store_history=False)
        except self._dead_error:
            return "died"
        except self._timeout_error:        # no answer even to the interrupt: start afresh
            self.restart()
            return "timeout"
        except Exception:                                   # noqa: BLE001
            return "died" if not self.alive() else "error"
        if self.timed_out:
            self._settle()
            return "timeout"
        if self.asked_exit:               # exit() / quit(): the kernel stops shortly
            self._wait_until_dead(5.0)
            return "died"
        if not self.alive():
            return "died"
        return "error" if self.client.errors else "ok"

    def _wait_until_dead(self, seconds):
        deadline = time.monotonic() + seconds
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _settle(self):
        """After an interrupted cell: if the kernel does not run a trivial cell within
        3 s (the cell caught KeyboardInterrupt and goes on), kill and restart it."""
        cell = nbformat.v4.new_code_cell("pass")
        self.nb.cells.append(cell)
        self.client.timeout = 3
        self.timed_out = False
        try:
            self.client.execute_cell(cell, len(self.nb.cells) - 1, store_history=False)
            if self.timed_out or not self.alive():
                self.restart()
        except Exception:                                   # noqa: BLE001
            self.restart()


# ------------------------------------------------------------------ one notebook
_COLLECT = '''\
def {fn}():
    import pickle
    from dpteach import assignments as A
    names, out = {names!r}, None
    g = globals()
    missing = [n for n in names if n not in g]
    if missing:
        out = {{"missing": missing}}
    else:
        try:
            with open({request!r}, "rb") as f:
                request = pickle.load(f)
            task = [t for t in A.tasks({assignment!r}) if t.key == {key!r}][0]
            out = {{"data": task.collect({{n: g[n] for n in names}}, request)}}
        except BaseException as err:
            out = {{"error": (type(err).__name__ + ": " + str(err))[:300]}}
    try:
        text = A.dumps(out)
    except BaseException as err:
        text = A.dumps({{"error": "the result could not be sent as data: " + str(err)[:200]}})
    with open({result!r}, "w", encoding="utf-8") as f:
        f.write(text)
try:
    {fn}()
finally:
    del {fn}
'''


def _run_cells(kernel, nb, timeout, notes) -> None:
    """Run the notebook's code cells in ``kernel`` within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    for i, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code" or not str(cell.get("source", "")).strip():
            continue
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            notes.append(f"timed out after {timeout:g} s: cells from {i} on were not run")
            return
        status = kernel.run(cell.source, remaining)
        if status == "died":
            notes.append(f"cell {i} ended the kernel (exit(), quit(), os._exit?); "
                         "it was restarted and later cells ran in a fresh kernel")
            kernel.restart()
        elif status == "timeout":
            notes.append(f"timed out after {timeout:g} s in cell {i}: it was stopped and "
                         "the cells after it were not run")
            return


def _judge(task, kernel, folder, assignment, limit, notes) -> tuple:
    """(passed, message) of one task: collect in the kernel, judge here."""
    rng = np.random.default_rng(secrets.randbits(128))
    request, truth = task.request(rng)
    token = secrets.token_hex(8)
    request_path = folder / f".grader_request_{token}.pkl"
    result_path = folder / f".grader_result_{token}.json"
    with open(request_path, "xb") as f:
        pickle.dump(request, f)
    code = _COLLECT.format(fn=f"_grader_collect_{token}", names=tuple(task.names),
                           request=str(request_path), result=str(result_path),
                           assignment=assignment, key=task.key)
    status = kernel.run(code, limit)
    if status == "timeout":
        return False, f"{task.key}: timed out (your code ran past {limit:g} s)"
    if status == "died":
        return False, f"{task.key}: your code ended the kernel while it was being graded"
    return _verdict(task, result_path, request, truth, notes)


def _read_result(path):
    """The text of the result file, or None when it is not a regular file (a symlink,
    a FIFO or a device the kernel put there) or is too large. FileNotFoundError when
    there is none."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if isinstance(err, FileNotFoundError):
            raise
        return None                                        # e.g. ELOOP: a symlink
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_RESULT_BYTES:
            return None
        raw = f.read(MAX_RESULT_BYTES + 1)
    if len(raw) > MAX_RESULT_BYTES:
        return None
    return raw.decode("utf-8")


def _depth(text: str) -> int:
    """How deeply the JSON ``text`` nests arrays and objects (checked before parsing:
    a recursion error deep inside the parser can upset the interpreter)."""
    bare = np.frombuffer(_JSON_STRING.sub("", text).encode("utf-8"), dtype=np.uint8)
    steps = np.zeros(bare.shape, dtype=np.int64)
    steps[(bare == ord("[")) | (bare == ord("{"))] = 1
    steps[(bare == ord("]")) | (bare == ord("}"))] = -1
    return int(np.cumsum(steps).max(initial=0))


def _verdict(task, result_path, request, truth, notes=()) -> tuple:
    """(passed, message) from the result file the kernel wrote (untrusted bytes)."""
    try:
        text = _read_result(result_path)
        if text is None:
            return False, (f"{task.key}: the result is not a file of at most "
                           f"{MAX_RESULT_BYTES} bytes")
        if _depth(text) > MAX_DEPTH:
            return False, f"{task.key}: the result is nested too deeply to be data"
        envelope = assignments.loads(text)
    except FileNotFoundError:
        return False, f"{task.key}: no result came back from the notebook"
    except Exception as err:                                # noqa: BLE001 - untrusted bytes
        return False, f"{task.key}: the result is not valid data ({type(err).__name__})"
    if not isinstance(envelope, dict) or len(envelope) != 1:
        return False, f"{task.key}: the result is not valid data"
    if "missing" in envelope:
        missing = envelope["missing"]
        names = ", ".join(map(str, missing)) if isinstance(missing, list) else "?"
        why = f" ({'; '.join(notes)})" if notes else ""
        return False, f"{task.key}: not answered: {names} is not defined{why}"
    if "error" in envelope:
        return False, f"{task.key}: your code raised {str(envelope['error'])[:300]}"
    if "data" not in envelope:
        return False, f"{task.key}: the result is not valid data"
    try:
        feedback = task.judge(envelope["data"], request, truth)
        return feedback.passed is True, str(feedback.message)
    except Exception as err:                                # noqa: BLE001 - odd data
        return False, f"{task.key}: the answer could not be judged ({type(err).__name__}: {err})"


def _check_timeouts(timeout, task_timeout):
    """Both limits in seconds, > 0 and finite (NaN, inf, bools and strings refused,
    naming the parameter): a NaN limit would never expire."""
    return (check_real("timeout", timeout, low=0.0, low_open=True),
            check_real("task_timeout", task_timeout, low=0.0, low_open=True))


def grade_notebook(path, *, raw=None, assignment=None, timeout=120.0,
                   task_timeout=TASK_TIMEOUT, notes=None) -> list:
    """Grade one notebook (its bytes ``raw``, read from ``path`` when None): a list of
    :class:`Row`, one per task of its assignment, or a single ``(notebook)`` row when
    it cannot be graded. ``notes`` (a list) receives what happened during the run.
    ``timeout`` and ``task_timeout`` are seconds: positive finite numbers."""
    timeout, task_timeout = _check_timeouts(timeout, task_timeout)
    name = str(path)
    notes = [] if notes is None else notes
    nb, error, tasks = None, None, None
    try:
        raw = Path(path).read_bytes() if raw is None else raw
        nb = _parse(raw, name)
    except FileNotFoundError:
        error = "no such file"
    except OSError as err:
        error = f"cannot read the file: {err}"
    except SubmissionError as err:
        error = str(err)
    assignment_key = None
    try:
        assignment_key = _assignment(nb, name, assignment)
        tasks = _tasks(assignment_key)
    except SubmissionError as err:
        error = error or str(err)
    if error is not None:                 # the total is kept even for a broken notebook
        total = sum(t.points for t in tasks) if tasks else ""
        return [Row(name, NOTEBOOK_ROW, False, error, 0, total, assignment_key or "")]

    folder = Path(tempfile.mkdtemp(prefix="grade_"))
    kernel = None
    try:
        (folder / Path(name).name).write_bytes(raw)
        try:
            kernel = _Kernel(folder)
        except Exception as err:                            # noqa: BLE001
            return [Row(name, NOTEBOOK_ROW, False, f"the kernel did not start: {err}", 0,
                        sum(t.points for t in tasks), assignment_key)]
        _run_cells(kernel, nb, timeout, notes)
        rows, deadline, rerun = [], time.monotonic() + timeout, False
        for task in tasks:
            limit = min(task_timeout, deadline - time.monotonic())
            if limit <= 0:
                rows.append(Row(name, task.key, False, f"{task.key}: timed out (grading "
                                f"took longer than {timeout:g} s)", 0, task.points,
                                assignment_key))
                continue
            starts = kernel.starts
            passed, message = _judge(task, kernel, folder, assignment_key, limit, notes)
            rows.append(Row(name, task.key, passed, message, task.points if passed else 0,
                            task.points, assignment_key))
            if kernel.starts == starts and kernel.alive():
                continue
            if kernel.starts == starts:
                kernel.restart()
            if not rerun:
                # the student's code ended (or would not stop) the kernel while it was
                # graded: run the notebook again, once, so later tasks find their answers
                notes.append(f"{task.key}: the kernel had to be restarted while grading; "
                             "the notebook was run again for the remaining tasks")
                _run_cells(kernel, nb, max(1.0, deadline - time.monotonic()), notes)
                rerun = True
        return rows
    finally:
        if kernel is not None:
            kernel.stop()
        shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------ a batch
def grade(paths, *, assignment=None, timeout=120.0, task_timeout=TASK_TIMEOUT, report=None,
          out=None) -> list:
    """Grade every notebook in ``paths``; write the report (CSV) to ``report`` after
    each notebook when given, and a readable summary to ``out`` (a text stream) when
    given. Returns the rows. ``timeout`` and ``task_timeout``: as in
    :func:`grade_notebook`."""
    timeout, task_timeout = _check_timeouts(timeout, task_timeout)
    paths = [str(p) for p in paths]
    # read every submission before running any, so none can rewrite another's file;
    # import every task module before running any, so none can be edited on disk first
    raws = {}
    for p in paths:
        try:
            raws[p] = Path(p).read_bytes()
        except OSError:
            raws[p] = None
    for key in {assignment, *NAMEABLE} - {None}:
        try:
            assignments.tasks(key)
        except Exception:                                   # noqa: BLE001 - reported later
            pass
    rows = []
    for p in paths:
        notes = []
        got = grade_notebook(p, raw=raws[p], assignment=assignment, timeout=timeout,
                             task_timeout=task_timeout, notes=notes)
        rows += got
        if report is not None:
            write_report(rows, report)
        if out is not None:
            out.write(summary(got, notes) + "\n")
            out.flush()
    return rows


def write_report(rows, path) -> None:
    """The rows as CSV with the header :data:`FIELDS`."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(FIELDS)
        for row in rows:
            writer.writerow(astuple(row))


def summary(rows, notes=()) -> str:
    """A readable summary of one notebook's rows."""
    if not rows:
        return ""
    got = sum(float(r.points) for r in rows)
    total = sum(float(r.max_points) for r in rows if r.max_points != "")
    which = f" ({rows[0].assignment})" if rows[0].assignment else ""
    lines = [f"{rows[0].notebook}{which}: {got:g} / {total:g} points"]
    for r in rows:
        mark = "✅" if r.passed else "❌"
        worth = f" ({float(r.points):g}/{float(r.max_points):g})" if r.max_points != "" else ""
        lines.append(f"  {mark} {r.task}{worth}: {r.message}")
    lines += [f"  note: {n}" for n in notes]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dpteach.grading",
        description="Run handed-in notebooks in fresh kernels and grade every task of "
                    "their assignment; write notebook,task,passed,message rows.")
    parser.add_argument("notebooks", nargs="+", metavar="NOTEBOOK")
    parser.add_argument("--report", default="grades.csv", help="CSV file (default grades.csv)")
    parser.add_argument("--assignment", help="grade every notebook as this assignment (A3)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds for a notebook's cells, and again for its grading "
                             "(default 120)")
    parser.add_argument("--task-timeout", type=float, default=TASK_TIMEOUT,
                        help=f"seconds for one task's collection (default {TASK_TIMEOUT})")
    args = parser.parse_args(argv)
    try:   # --timeout nan or inf parse as floats: refused here, not by a hung run
        _check_timeouts(args.timeout, args.task_timeout)
    except ValueError as err:
        parser.error(str(err))
    rows = grade(args.notebooks, assignment=args.assignment, timeout=args.timeout,
                 task_timeout=args.task_timeout, report=args.report, out=sys.stdout)
    print(f"wrote {len(rows)} rows to {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
