"""Grade handed-in coursework notebooks without trusting what they print or do.

``make grade FILES="a.ipynb b.ipynb" REPORT=grades.csv [JOBS=2]`` (``python -m
dpteach.coursework.grading``, ``dpteach grade``) grades each notebook in five steps:

1. **read** every submission into memory first (so no notebook can rewrite another's file
   before it is graded) and decide its assignment: ``--assignment``, else the notebook's
   ``metadata["dpteach"]["assignment"]`` (written by ``make exercises``) and the file
   name's ``A1`` ... ``A10`` prefix, which must agree when both are there;
2. **draw**, here, every task's held-out request and truth from a fresh ``secrets`` seed
   (one stream per notebook, so ``--jobs`` does not change them), and write the
   notebook's cells and the requests (never the truths) into an empty scratch folder;
3. **run** :mod:`dpteach.coursework._grade_runner` on that folder inside a bubblewrap sandbox
   (:mod:`dpteach.coursework._sandbox`: everything read-only but the scratch folder, no network,
   its own PID namespace, an unprivileged user, the forbidden kit functions replaced by
   stubs). The runner runs the cells in a fresh kernel (a cell that raises does not stop
   the next; a kernel that dies is restarted; after ``timeout`` seconds the rest is
   skipped), then per task one injected cell that looks up the task's names and calls
   ``task.collect``, writing JSON (:func:`dpteach.coursework.assignments._transport.dumps`).
   Each task has its own time limit; all of them together get another ``timeout`` seconds;
4. once the sandbox has ended (every process it held with it), **judge** here: each
   result file is read as untrusted bytes and decoded as data only
   (:func:`dpteach.coursework.assignments._transport.loads`, never pickle), and
   ``task.judge(data, request, truth)`` decides;
5. **report**: each notebook's rows and total are appended to the report and totals,
   and flushed to disk, as it finishes; at the end both are rewritten atomically in the
   order given. Any failure while grading one notebook becomes failed rows for it; every
   text of a row is made safe (:func:`~dpteach.coursework._grade_report.safe_text`).
   ``--shard K/N`` grades one of N shards, ``dpteach grade-merge`` joins them
   (:mod:`dpteach.coursework._grade_shards`). The exit status is 0 when every notebook
   has its rows, 1 when the grader itself failed, 2 when grading was refused.

Whatever the notebook does inside its sandbox (redefining checks, patching ``collect``
or ``json``, killing its kernel's parent, deleting its folder, editing files, leaving
processes) can change only the data it hands back, which ``judge`` then checks. Without
bubblewrap, grading refuses unless ``sandbox=False`` (``--no-sandbox``, ``SANDBOX=0``).

The report has one row per notebook and task: ``notebook,task,passed,message,points,
max_points,assignment`` (notebooks named relative to the batch folder); a notebook that
cannot be graded at all (missing, empty, not a notebook, unknown assignment) gets one row
with task ``(notebook)``. The totals CSV has one row per notebook (:data:`TOTAL_FIELDS`).
"""

from __future__ import annotations

import argparse
import csv  # noqa: F401 - kept as grading.csv (the report is written with it)
import json
import os
import secrets
import shutil
import stat
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from . import _grade_shards, _sandbox, assignments
from .._support.validate import valid_real
# the kernel (run inside the sandbox by _grade_runner) and the report writing live in
# private modules; the report's names stay importable from here
from ._grade_run import allowed_targets, forbidden_targets, run_part
from ._grade_report import (FIELDS, MAX_DEPTH, MAX_RESULT_BYTES, NOTEBOOK_ROW,  # noqa: F401
                            TOTAL_FIELDS, nesting_depth, read_result, summary, totals,
                            totals_path, write_report, write_totals)
from ._grade_report import (ASSIGNMENT_LIMIT, MESSAGE_LIMIT, NAME_LIMIT, TASK_LIMIT,
                            ReportWriter, safe_name, safe_text, show)
from .student_copies import assignment_of

__all__ = ["Row", "FIELDS", "TOTAL_FIELDS", "grade", "grade_notebook", "summary", "totals",
           "write_report", "write_totals", "main", "SandboxUnavailable"]

#: seconds one task's collection may take in the kernel
TASK_TIMEOUT = 60


@dataclass(frozen=True)
class Row:
    """One line of the report. Its texts are made safe as it is made
    (:func:`~dpteach.coursework._grade_report.safe_text`: no surrogate, control or escape
    character, a bounded length), so no row can make writing or printing fail."""

    notebook: str
    task: str
    passed: bool
    message: str
    points: float
    max_points: float | str
    assignment: str = ""

    def __post_init__(self):
        object.__setattr__(self, "notebook", safe_name(self.notebook, NAME_LIMIT))
        for field, limit in (("task", TASK_LIMIT), ("message", MESSAGE_LIMIT),
                             ("assignment", ASSIGNMENT_LIMIT)):
            object.__setattr__(self, field, safe_text(getattr(self, field), limit))


class SubmissionError(Exception):
    """A submission that cannot be graded at all (the message says why)."""


# ------------------------------------------------------------------ reading
#: the largest hand-in read (bytes): the course's largest notebook, outputs and all, is
#: 0.26 MB; a file past this is refused unread (the grader holds every hand-in of a batch
#: in memory, and a notebook's parse takes about three times its size)
MAX_NOTEBOOK_BYTES = 64 * 1024 ** 2


class _Unreadable:
    """A hand-in refused before it is read (the message says why)."""

    def __init__(self, why):
        self.why = why


def _read_handin(path):
    """The bytes of the hand-in at ``path``, or :class:`_Unreadable`: only a regular
    file is read, never through a symbolic link (it would grade the file it points to,
    another student's perhaps, under this name), never a FIFO or a device (reading one
    could wait forever or never end), and at most :data:`MAX_NOTEBOOK_BYTES`.
    FileNotFoundError / OSError as ``open`` raises them."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if os.path.islink(path):
            return _Unreadable("the file is a symbolic link: hand in the notebook itself")
        raise err
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            return _Unreadable("not a regular file (a FIFO, a device or a folder)")
        raw = f.read(MAX_NOTEBOOK_BYTES + 1)
    if len(raw) > MAX_NOTEBOOK_BYTES:
        size = _sandbox.size_text(MAX_NOTEBOOK_BYTES)
        return _Unreadable(f"the file is larger than {size}: clear its outputs (Edit > "
                           "Clear Outputs of All Cells), save and hand it in again")
    return raw


def _parse(raw: bytes, name: str):
    """The notebook in ``raw`` (bytes of a file), or SubmissionError."""
    if isinstance(raw, _Unreadable):
        raise SubmissionError(raw.why)
    if not raw.strip():
        raise SubmissionError("the file is empty")
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
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
                              "in dpteach.coursework.assignments yet") from None


def _check_timeouts(timeout, task_timeout):
    """Both limits in seconds, > 0 and finite (NaN, inf, bools and strings refused,
    naming the parameter): a NaN limit would never expire."""
    return (valid_real(timeout, "timeout", low=0.0, low_open=True),
            valid_real(task_timeout, "task_timeout", low=0.0, low_open=True))


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot run here, and grading without it was not asked for."""


#: what grading without the sandbox (--no-sandbox, SANDBOX=0) leaves open
UNSAFE_WITHOUT_SANDBOX = """\
grading WITHOUT the sandbox: each notebook still runs in its own kernel and folder, and
the forbidden kit functions are stubbed in that kernel, but the student's code runs with
your rights. It can then read and write any file you can (the kit's source, other
submissions, the report, your home folder), use the network, start processes that outlive
the grading, reload the kit's real functions from their source, and signal the grader.
Grade untrusted work only in the sandbox (apt-get install bubblewrap)."""


def _draws(tasks, seed, repeats) -> list:
    """(task, request, truth) per task and repeat, drawn here from ``seed``."""
    seeds = np.random.SeedSequence(seed).spawn(len(tasks) * repeats)
    out = []
    for k, task in enumerate(tasks):
        for r in range(repeats):
            request, truth = task.request(np.random.default_rng(seeds[k * repeats + r]))
            out.append((task, request, truth))
    return out


#: the limits a submission runs under unless the instructor sets others
LIMITS = _sandbox.Limits()


def grade_notebook(path, *, raw=None, assignment=None, timeout=120.0,
                   task_timeout=TASK_TIMEOUT, notes=None, sandbox=True, seed=None,
                   repeats=1, name=None, stub_dir=None, hidden=None, limits=None) -> list:
    """Grade one notebook (its bytes ``raw``, read from ``path`` when None): a list of
    :class:`Row`, one per task of its assignment, or a single ``(notebook)`` row when
    it cannot be graded. ``notes`` (a list) receives what happened during the run.
    ``timeout`` and ``task_timeout`` are CPU seconds: positive finite numbers
    (``timeout`` for the notebook's cells, and again for all its tasks; the wall-clock
    guard is ``limits.wall_factor`` times longer).

    The notebook runs in the sandbox (:mod:`dpteach.coursework._sandbox`, under
    ``limits``, a :class:`~dpteach.coursework._sandbox.Limits`; ``sandbox=False`` runs it
    as a plain child process). ``seed`` fixes the hidden draws (default: fresh from
    ``secrets``); ``repeats`` > 1 draws each task that many times, and the task passes
    only when every draw does. ``name`` is the notebook's name in the rows (default
    ``path``). ``stub_dir``: where the kernels' kits are kept for a batch. ``hidden`` is
    accepted for older callers and unused: the sandbox shows nothing of the host but
    what a kernel needs. Whatever happens, the answer is rows: never an exception."""
    timeout, task_timeout = _check_timeouts(timeout, task_timeout)
    limits = LIMITS if limits is None else limits
    if sandbox:
        ready, why = _sandbox.available()
        if not ready:
            raise SandboxUnavailable(why)
    name = str(path) if name is None else str(name)
    notes = [] if notes is None else notes
    tasks, key = None, None
    try:
        nb, error, key, tasks = _read_submission(path, raw, assignment, name)
        if error is not None:         # the total is kept even for a broken notebook
            total = sum(t.points for t in tasks) if tasks else ""
            return [Row(name, NOTEBOOK_ROW, False, error, 0, total, key or "")]
        return _run_and_judge(nb, name, key, tasks, timeout=timeout,
                              task_timeout=task_timeout, notes=notes, sandbox=sandbox,
                              seed=seed, repeats=int(repeats), stub_dir=stub_dir,
                              limits=limits)
    except Exception as err:                                # noqa: BLE001 - never the batch
        total = sum(t.points for t in tasks) if tasks else ""
        return [Row(name, NOTEBOOK_ROW, False, f"the grader could not grade this notebook "
                    f"({type(err).__name__}: {str(err)[:200]})", 0, total, key or "")]


def _read_submission(path, raw, assignment, name):
    """(notebook, error message or None, assignment key, tasks)."""
    nb, error, tasks = None, None, None
    try:
        raw = _read_handin(path) if raw is None else raw
        nb = _parse(raw, name)
    except FileNotFoundError:
        error = "no such file"
    except OSError as err:
        error = f"cannot read the file: {err}"
    except SubmissionError as err:
        error = str(err)
    key = None
    try:
        key = _assignment(nb, name, assignment)
        tasks = _tasks(key)
    except SubmissionError as err:
        error = error or str(err)
    return nb, error, key, tasks


def _groups(tasks, allowed=()) -> list:
    """The tasks split by what their honest solutions need (``task.needs``), in order of
    first appearance, each with the forbidden functions its kernel goes without: those
    every task of the assignment declares (less its ``allowed``), less what the group
    needs."""
    every = forbidden_targets(tasks, allowed)
    groups = {}
    for task in tasks:
        needs = frozenset(task.needs)
        groups.setdefault(needs, []).append(task)
    return [(members, [t for t in every if t not in needs], sorted(needs))
            for needs, members in groups.items()]


def _run_and_judge(nb, name, key, tasks, *, timeout, task_timeout, notes, sandbox, seed,
                   repeats, stub_dir, limits) -> list:
    seed = secrets.randbits(128) if seed is None else seed
    draws = _draws(tasks, seed, max(1, repeats))     # one stream, however the runs split
    own_stub_dir = stub_dir is None
    stub_dir = Path(tempfile.mkdtemp(prefix="grade_kits_")) if own_stub_dir else stub_dir
    verdicts = {}
    try:
        for members, targets, needs in _groups(tasks, allowed_targets(key)):
            keys = {t.key for t in members}
            part = [d for d in draws if d[0].key in keys]
            run_part(nb, name, key, tasks, part, targets, needs, verdicts,
                      timeout=timeout, task_timeout=task_timeout, notes=notes,
                      sandbox=sandbox, stub_dir=stub_dir, limits=limits)
    finally:
        if own_stub_dir:
            shutil.rmtree(stub_dir, ignore_errors=True)
    rows = []
    for task in tasks:
        got = verdicts[task.key]
        bad = [v for v in got if not v[0]]
        passed, message = (False, bad[0][1]) if bad else got[0]
        if len(got) > 1:
            message += f" [{len(got) - len(bad)} of {len(got)} draws passed]"
        rows.append(Row(name, task.key, passed, message, task.points if passed else 0,
                        task.points, key))
    return rows


# ------------------------------------------------------------------ a batch
def _names(paths, root=None) -> list:
    """Each path relative to the batch folder (``root``, default the folder the
    notebooks share)."""
    absolute = [os.path.abspath(p) for p in paths]
    if root is None:
        try:
            root = os.path.commonpath([os.path.dirname(p) for p in absolute]) if absolute else "."
        except ValueError:
            root = os.sep
    return [os.path.relpath(p, root) for p in absolute]


def _check_jobs(jobs) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a whole number >= 1, got {jobs!r}")
    return int(jobs)


def _import_tasks(raws, paths, names, override) -> set:
    """Import the task modules of the assignments a batch's notebooks will be graded as
    (one that names none is reported when graded); returns those assignments."""
    keys = {override}
    for path, name in zip(paths, names):
        try:
            keys.add(_assignment(_parse(raws[path], name), name, override))
        except Exception:                                   # noqa: BLE001 - reported later
            pass
    for key in keys - {None}:
        try:
            assignments.tasks(key)
        except Exception:                                   # noqa: BLE001 - reported later
            pass
    return keys - {None}


def grade(paths, *, assignment=None, timeout=120.0, task_timeout=TASK_TIMEOUT, report=None,
          out=None, jobs=1, sandbox=True, seed=None, repeats=1, root=None,
          totals=None, limits=None) -> list:
    """Grade every notebook in ``paths``, ``jobs`` at a time; write the report (CSV) to
    ``report`` when given, the per-notebook totals to ``totals`` (default: ``report``
    with ``_totals`` added to its name), and a readable summary to ``out`` (a text
    stream) when given. Each notebook's rows are appended to both files, and flushed to
    disk, as it finishes (:class:`~dpteach.coursework._grade_report.ReportWriter`), so a
    grader that dies keeps the rows of every notebook finished before; at the end both
    are rewritten atomically in the order of ``paths``. Returns the rows, in the order of
    ``paths``, whatever ``jobs`` is. Notebooks are named relative to ``root`` (default:
    their common folder). ``timeout``, ``task_timeout``, ``sandbox``, ``repeats``: as in
    :func:`grade_notebook`; ``seed`` fixes every hidden draw of the batch (each notebook
    gets its own stream, so the rows do not depend on ``jobs``); ``limits``: what each
    submission may use (:class:`~dpteach.coursework._sandbox.Limits`, default
    :data:`LIMITS`)."""
    timeout, task_timeout = _check_timeouts(timeout, task_timeout)
    jobs = _check_jobs(jobs)
    if sandbox:
        ready, why = _sandbox.available()
        if not ready:
            raise SandboxUnavailable(why)
    paths = [str(p) for p in paths]
    names = _names(paths, root)
    # read every submission before running any, so none can rewrite another's file;
    # import the task modules of every assignment in the batch before running any (and
    # the kit is read-only in the sandbox)
    raws = {}
    for p in paths:
        try:
            raws[p] = _read_handin(p)
        except OSError:
            raws[p] = None
    _import_tasks(raws, paths, names, assignment)
    seed = secrets.randbits(128) if seed is None else int(seed)
    if report is not None and totals is None:
        totals = totals_path(report)
    writer = ReportWriter(report, totals) if report is not None else None
    stub_dir = Path(tempfile.mkdtemp(prefix="grade_kits_"))
    done, printed = {}, 0
    notes = {i: [] for i in range(len(paths))}

    lock = threading.Lock()

    def one(i):
        try:
            rows = list(grade_notebook(paths[i], raw=raws[paths[i]], assignment=assignment,
                                       timeout=timeout, task_timeout=task_timeout,
                                       notes=notes[i], sandbox=sandbox, seed=[seed, i],
                                       repeats=repeats, name=names[i], stub_dir=stub_dir,
                                       limits=limits))
            if not rows or not all(isinstance(r, Row) for r in rows):
                raise TypeError("no rows")
        except Exception as err:                            # noqa: BLE001 - never the batch
            rows = [Row(names[i], NOTEBOOK_ROW, False, "the grader could not grade this "
                        f"notebook ({type(err).__name__})", 0, "", "")]
        if writer is not None:   # on disk before this worker takes its next notebook
            with lock:
                writer.add(rows)
        return rows

    console = out is not None
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = {pool.submit(one, i): i for i in range(len(paths))}
        for future in as_completed(futures):
            i = futures[future]
            done[i] = future.result()       # raises only when the report cannot be written
            while console and printed in done:   # the summaries in the order of paths
                console = show(out, summary(done[printed], notes[printed]))
                printed += 1
        if writer is not None:
            writer.finish([r for k in sorted(done) for r in done[k]])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if writer is not None:
            writer.close()
        shutil.rmtree(stub_dir, ignore_errors=True)
    return [r for k in sorted(done) for r in done[k]]


def _limits_from(args):
    """The :class:`~dpteach.coursework._sandbox.Limits` of the command line (a
    ValueError naming the option when one is not a positive size or number)."""
    import math
    processes = args.processes
    if isinstance(processes, bool) or processes < 1:
        raise ValueError(f"--processes must be a whole number >= 1, got {processes!r}")
    factor = args.wall_factor
    if not (math.isfinite(factor) and factor >= 1):
        raise ValueError(f"--wall-factor must be a finite number >= 1, got {factor!r}")
    return _sandbox.Limits(memory=_sandbox.parse_size(args.memory, "--memory"),
                           processes=int(processes),
                           disk=_sandbox.parse_size(args.disk, "--disk"),
                           output=_sandbox.parse_size(args.output, "--output"),
                           wall_factor=float(factor))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dpteach.coursework.grading",
        description="Run handed-in notebooks, each in a sandbox with a fresh kernel, and "
                    "grade every task of their assignment; write notebook,task,passed,"
                    "message rows and per-notebook totals.")
    parser.add_argument("notebooks", nargs="+", metavar="NOTEBOOK")
    parser.add_argument("--report", default="grades.csv", help="CSV file (default grades.csv)")
    parser.add_argument("--totals", help="per-notebook totals CSV (default: the report's "
                                         "name with _totals)")
    parser.add_argument("--assignment", help="grade every notebook as this assignment (A3)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="CPU seconds for a notebook's cells, and again for all its "
                             "tasks (default 120)")
    parser.add_argument("--task-timeout", type=float, default=TASK_TIMEOUT,
                        help=f"CPU seconds for one task's collection (default {TASK_TIMEOUT})")
    parser.add_argument("--jobs", "-j", type=int, default=1,
                        help="notebooks graded at once (default 1); the rows do not depend "
                             "on it")
    parser.add_argument("--root", help="name notebooks relative to this folder (default: "
                                       "the folder they share)")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run the notebooks without bubblewrap (unsafe: says why)")
    parser.add_argument("--shard", metavar="K/N",
                        help="grade only the K-th of N shards (1 <= K <= N): the notebooks' "
                             "names sorted by their bytes and dealt out in turn; give every "
                             "shard the same notebooks and join the reports with `dpteach "
                             "grade-merge OUT SHARD_REPORT...`")
    limits = parser.add_argument_group(
        "limits of each submission", "each stops only the notebook that reaches it and is "
        "named in its rows; the defaults suit a 2-core, 24 GiB machine with --jobs 2")
    default = _sandbox.Limits()
    limits.add_argument("--memory", default=_sandbox.size_text(default.memory),
                        help="memory, e.g. 4G (default %(default)s)")
    limits.add_argument("--processes", type=int, default=default.processes,
                        help="processes and threads at once (default %(default)s)")
    limits.add_argument("--disk", default=_sandbox.size_text(default.disk),
                        help="scratch space, e.g. 512M (default %(default)s)")
    limits.add_argument("--output", default=_sandbox.size_text(default.output),
                        help="what a sandbox may send back, e.g. 64M (default %(default)s)")
    limits.add_argument("--wall-factor", type=float, default=default.wall_factor,
                        help="the wall-clock guard as a multiple of each CPU-time limit "
                             "(default %(default)s)")
    parser.epilog = ("Exit status: 0 when every notebook has its rows in the report, "
                     "whatever they say; 1 when the grader itself failed (the report then "
                     "holds the rows of every notebook finished before); 2 when grading "
                     "was refused (bad options, no sandbox).")
    args = parser.parse_args(argv)
    try:   # --timeout nan or inf parse as floats: refused here, not by a hung run
        _check_timeouts(args.timeout, args.task_timeout)
        _check_jobs(args.jobs)
        chosen = _limits_from(args)
    except ValueError as err:
        parser.error(str(err))
    paths, root, shard = list(args.notebooks), args.root, None
    if args.shard is not None:     # every shard names the batch alike, then takes its part
        root = root or _grade_shards.batch_root(paths)
        try:
            shard = _grade_shards.plan(paths, _names(paths, root), args.shard, root)
        except ValueError as err:
            parser.error(str(err))
        paths = shard.paths
    if args.no_sandbox:
        print(UNSAFE_WITHOUT_SANDBOX, file=sys.stderr)
    try:
        if shard is not None:
            shard.start(args.report)
        rows = grade(paths, assignment=args.assignment, timeout=args.timeout,
                     task_timeout=args.task_timeout, report=args.report, out=sys.stdout,
                     jobs=args.jobs, sandbox=not args.no_sandbox, root=root,
                     totals=args.totals, limits=chosen)
        graded = {r.notebook for r in rows}
        lost = [n for n in _names(paths, root) if safe_name(n, NAME_LIMIT) not in graded]
        if lost:
            raise RuntimeError(f"no rows for {len(lost)} notebooks")
        if shard is not None:
            shard.finish(args.report, rows)
    except SandboxUnavailable as err:
        print(f"refusing to grade: {err}.\nEach submission must run in a bubblewrap "
              "sandbox; to grade without it anyway (unsafe), pass --no-sandbox "
              "(make grade ... SANDBOX=0).", file=sys.stderr)
        return 2
    except Exception as err:                                # noqa: BLE001 - said, exit 1
        show(sys.stderr, safe_text(f"the grader failed: {type(err).__name__}: {err}. "
                                   f"{args.report} holds the rows of the notebooks "
                                   "finished before.", 1000))
        return 1
    where = (f" (shard {shard.k}/{shard.n}: {len(shard.paths)} of {len(shard.batch)} "
             "notebooks)" if shard is not None else "")
    show(sys.stdout, safe_text(f"wrote {len(rows)} rows to {args.report} and totals to "
                               f"{args.totals or totals_path(args.report)}{where}", 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
