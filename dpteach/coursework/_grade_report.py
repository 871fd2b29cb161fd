"""Grading's files on the grader's side: reading a result file the sandbox left behind
(as untrusted bytes, bounded in size and nesting), and writing the report and totals CSVs
(each atomically) and the readable per-notebook summary. :mod:`dpteach.coursework.grading`
re-exports these names."""

from __future__ import annotations

import csv
import os
import re
import stat
import tempfile
from dataclasses import astuple
from pathlib import Path

import numpy as np

#: the report's columns
FIELDS = ("notebook", "task", "passed", "message", "points", "max_points", "assignment")
#: the task name of the one row of a notebook that could not be graded at all
NOTEBOOK_ROW = "(notebook)"
#: the largest result a task may hand back (bytes)
MAX_RESULT_BYTES = 50_000_000
#: the deepest nesting of lists and dicts a result may have
MAX_DEPTH = 100
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def read_result(path):
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


def nesting_depth(text: str) -> int:
    """How deeply the JSON ``text`` nests arrays and objects (checked before parsing:
    a recursion error deep inside the parser can upset the interpreter)."""
    bare = np.frombuffer(_JSON_STRING.sub("", text).encode("utf-8"), dtype=np.uint8)
    steps = np.zeros(bare.shape, dtype=np.int64)
    steps[(bare == ord("[")) | (bare == ord("{"))] = 1
    steps[(bare == ord("]")) | (bare == ord("}"))] = -1
    return int(np.cumsum(steps).max(initial=0))


def totals_path(report):
    report = Path(report)
    return report.with_name(report.stem + "_totals" + (report.suffix or ".csv"))


def _atomic_write(path, write) -> None:
    """Write ``path`` through a temporary file next to it and os.replace."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent or "."))
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_report(rows, path) -> None:
    """The rows as CSV with the header :data:`FIELDS` (written atomically)."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(FIELDS)
        for row in rows:
            writer.writerow(astuple(row))
    _atomic_write(path, write)


#: the totals CSV's columns
TOTAL_FIELDS = ("notebook", "assignment", "points", "max_points", "tasks_passed", "tasks")


def totals(rows) -> list:
    """One (notebook, assignment, points, max_points, tasks_passed, tasks) per notebook,
    in the order of ``rows``."""
    out = {}
    for r in rows:
        t = out.setdefault(r.notebook, [r.notebook, r.assignment, 0.0, 0.0, 0, 0])
        t[2] += float(r.points)
        t[3] += float(r.max_points) if r.max_points != "" else 0.0
        if r.task != NOTEBOOK_ROW:
            t[4] += bool(r.passed)
            t[5] += 1
    return [tuple(t) for t in out.values()]


def write_totals(rows, path) -> None:
    """Per-notebook totals as CSV with the header :data:`TOTAL_FIELDS` (atomically)."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(TOTAL_FIELDS)
        for t in totals(rows):
            writer.writerow([t[0], t[1], f"{t[2]:g}", f"{t[3]:g}", t[4], t[5]])
    _atomic_write(path, write)


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
