"""Grading's files on the grader's side: reading a result file the sandbox left behind
(as untrusted bytes, bounded in size and nesting), and writing the report and totals CSVs
(row by row as each notebook finishes, then in the batch's order atomically) and the
readable per-notebook summary. Every text that reaches a row, a file or the console goes
through :func:`safe_text` first. :mod:`dpteach.coursework.grading` re-exports these names."""

from __future__ import annotations

import csv
import hashlib
import os
import re
import stat
import tempfile
import unicodedata
from dataclasses import astuple
from pathlib import Path

from .assignments import _transport

#: the report's columns
FIELDS = ("notebook", "task", "passed", "message", "points", "max_points", "assignment")
#: the task name of the one row of a notebook that could not be graded at all
NOTEBOOK_ROW = "(notebook)"
#: the largest result a task may hand back (bytes; the largest honest one, A3 Task 4's
#: 1.08 million float64 draws, is about 11.5 MB)
MAX_RESULT_BYTES = _transport.MAX_RESULT_BYTES
#: the deepest nesting of lists and dicts a result may have
MAX_DEPTH = _transport.MAX_DEPTH


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
    a recursion error deep inside the parser can upset the interpreter). One linear
    pass over the bytes (:func:`dpteach.coursework.assignments._transport.scan`): no
    regular expression, whatever the text holds."""
    return _transport.scan(text)[0]


# ------------------------------------------------------------------ safe text
#: the longest text a field may hold (characters): longer ones are cut (see safe_text)
NAME_LIMIT = 500
TASK_LIMIT = 100
MESSAGE_LIMIT = 2000
ASSIGNMENT_LIMIT = 40
NOTE_LIMIT = 500
#: ANSI escape and control sequences (CSI, OSC, and a lone ESC with the character after it);
#: each alternative is one character class repeated, so matching is linear in the input
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
                      r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
                      r"|\x1b[ -~]?")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: line breaks and tabs become one space; every other control or format character goes
_SPACES = frozenset("\t\n\v\f\r\x1c\x1d\x1e\x1f\x85\u2028\u2029")
#: characters a spreadsheet reads as the start of a formula
_FORMULA_STARTS = ("=", "+", "-", "@")


def _escape_surrogate(match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:          # an undecodable byte, as surrogateescape keeps it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def _escape_char(ch) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_name(value, limit=NAME_LIMIT) -> str:
    """A notebook's name as :func:`safe_text` writes it, but with every character that
    would be removed or become a space (control and format characters, zero-width
    ones, line breaks, ESC) written as its escape (``\\u200b``), so that two names
    differing only in what cannot be seen never read alike in the report (one would
    take the other's rows and totals). Applying it, or :func:`safe_text`, again changes
    nothing."""
    return safe_text(value, limit, escape=True)


def safe_text(value, limit=MESSAGE_LIMIT, *, escape=False) -> str:
    """``value`` as text that can be written anywhere and shows only itself: bytes are
    decoded as UTF-8 with undecodable bytes as ``\\xNN``; lone surrogates are escaped
    (``\\udcff``, a byte a file name held that is not UTF-8, as ``\\xff``, so the name
    reads as its bytes); ANSI escape sequences, control and format characters (ESC, CR,
    backspace, bidirectional overrides, zero-width characters) are removed, and line
    breaks and tabs become spaces, so the text stays on its own line; and text longer
    than ``limit`` characters is cut, ending in ``…[cut, sha256 <8 hex digits of the
    whole>]`` (two long texts that differ stay different). Never raises, and applying
    it again changes nothing."""
    try:
        if isinstance(value, (bytes, bytearray, memoryview)):
            raw = bytes(value)
            whole = raw.decode("utf-8", "backslashreplace")
        else:
            whole = value if isinstance(value, str) else str(value)
            raw = None
    except Exception as err:                                # noqa: BLE001 - any object
        whole = f"<unprintable {type(value).__name__}: {type(err).__name__}>"
        raw = None
    limit = max(int(limit), 40)
    head = whole[:4 * limit + 64]           # the work below is bounded by the limit
    text = _SURROGATE.sub(_escape_surrogate, head)
    if not escape:
        text = _ESCAPES.sub("", text)
    kept = []
    for ch in text:
        if ch in _SPACES:
            kept.append(_escape_char(ch) if escape else " ")
        elif ch < " " or "\x7f" <= ch <= "\x9f" or (
                ch > "\x9f" and unicodedata.category(ch) in ("Cc", "Cf", "Cs")):
            if escape:
                kept.append(_escape_char(ch))
        else:
            kept.append(ch)
    text = "".join(kept)
    if len(text) <= limit and len(head) == len(whole):
        return text
    data = raw if raw is not None else whole.encode("utf-8", "surrogatepass")
    tail = f"…[cut, sha256 {hashlib.sha256(data).hexdigest()[:8]}]"
    return text[:limit - len(tail)] + tail


def cell(value, limit=MESSAGE_LIMIT) -> str:
    """A text field as the report writes it: :func:`safe_text`, and a leading ``'`` when
    it starts with ``= + - @``, so a spreadsheet shows it as text instead of running it
    as a formula (CSV injection). A cell that starts with ``'`` is left as it is."""
    text = safe_text(value, limit)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def report_name(name) -> str:
    """A notebook's name as it appears in the report's ``notebook`` column."""
    return cell(safe_name(name), NAME_LIMIT)


def _row_cells(row) -> list:
    notebook, task, passed, message, points, max_points, assignment = astuple(row)
    return [cell(notebook, NAME_LIMIT), cell(task, TASK_LIMIT), bool(passed) is True,
            cell(message, MESSAGE_LIMIT), _number(points), _number(max_points),
            cell(assignment, ASSIGNMENT_LIMIT)]


def _number(value):
    """A points column: a number, or '' (a notebook whose total is unknown)."""
    if value == "":
        return ""
    try:
        return float(value) if not isinstance(value, (int, float)) else value
    except (TypeError, ValueError):
        return cell(value, 40)


# ------------------------------------------------------------------ the files
def totals_path(report):
    report = Path(report)
    return report.with_name(report.stem + "_totals" + (report.suffix or ".csv"))


def _sync(f) -> None:
    f.flush()
    os.fsync(f.fileno())


def atomic_write(path, write) -> None:
    """Write ``path`` through a temporary file next to it (flushed to disk) and
    os.replace: a reader sees the old file or the new one, never half of one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent or "."))
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8",
                       errors="backslashreplace") as f:
            write(f)
            _sync(f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_report(rows, path) -> None:
    """The rows as CSV with the header :data:`FIELDS` (written atomically); every text
    cell is :func:`cell`, so no text can make writing fail or run as a formula."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(FIELDS)
        for row in rows:
            writer.writerow(_row_cells(row))
    atomic_write(path, write)


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


def _totals_cells(t) -> list:
    return [cell(t[0], NAME_LIMIT), cell(t[1], ASSIGNMENT_LIMIT), f"{t[2]:g}", f"{t[3]:g}",
            t[4], t[5]]


def write_totals(rows, path) -> None:
    """Per-notebook totals as CSV with the header :data:`TOTAL_FIELDS` (atomically)."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(TOTAL_FIELDS)
        for t in totals(rows):
            writer.writerow(_totals_cells(t))
    atomic_write(path, write)


class ReportWriter:
    """The report and totals of a batch as it runs. Opening writes both headers;
    :meth:`add` appends one notebook's rows to the report and its total to the totals
    and flushes both to disk (``fsync``) before it returns, so a grader that dies while
    grading notebook k leaves the rows of every notebook finished before (in the order
    they finished). :meth:`finish` rewrites both atomically in the batch's order."""

    def __init__(self, report, totals_file):
        self.paths = (Path(report), Path(totals_file))
        self._files = []
        try:
            for path, header in zip(self.paths, (FIELDS, TOTAL_FIELDS)):
                f = open(path, "w", newline="", encoding="utf-8", errors="backslashreplace")
                self._files.append(f)
                csv.writer(f).writerow(header)
                _sync(f)
        except BaseException:
            self.close()
            raise

    def add(self, rows) -> None:
        report, totals_file = self._files
        writer = csv.writer(report)
        for row in rows:
            writer.writerow(_row_cells(row))
        _sync(report)
        writer = csv.writer(totals_file)
        for t in totals(rows):
            writer.writerow(_totals_cells(t))
        _sync(totals_file)

    def close(self) -> None:
        for f in self._files:
            try:
                f.close()
            except OSError:
                pass
        self._files = []

    def finish(self, rows) -> None:
        """Close the files, then write ``rows`` (every notebook's, in the batch's order)
        over them, atomically."""
        self.close()
        write_report(rows, self.paths[0])
        write_totals(rows, self.paths[1])


# ------------------------------------------------------------------ the console
def summary(rows, notes=()) -> str:
    """A readable summary of one notebook's rows: a line per notebook, one per row, one
    per note, each made of :func:`safe_text` (so no message can start a line of its own
    or move the cursor)."""
    if not rows:
        return ""
    got = sum(float(r.points) for r in rows)
    total = sum(float(r.max_points) for r in rows if r.max_points != "")
    assignment = safe_text(rows[0].assignment, ASSIGNMENT_LIMIT)
    which = f" ({assignment})" if assignment else ""
    lines = [f"{safe_text(rows[0].notebook, NAME_LIMIT)}{which}: {got:g} / {total:g} points"]
    for r in rows:
        mark = "✅" if r.passed is True else "❌"
        worth = f" ({float(r.points):g}/{float(r.max_points):g})" if r.max_points != "" else ""
        lines.append(f"  {mark} {safe_text(r.task, TASK_LIMIT)}{worth}: "
                     f"{safe_text(r.message, MESSAGE_LIMIT)}")
    lines += [f"  note: {safe_text(n, NOTE_LIMIT)}" for n in notes]
    return "\n".join(lines)


def show(out, text) -> bool:
    """Write ``text`` and a newline to the stream ``out`` and flush it; characters its
    encoding lacks are written as escapes. False, and nothing raised, when the stream
    cannot be written (a closed pipe): the console is a courtesy, the report is not."""
    try:
        encoding = getattr(out, "encoding", None) or "utf-8"
        try:
            text.encode(encoding)
        except UnicodeError:
            text = text.encode(encoding, "backslashreplace").decode(encoding)
        except LookupError:
            pass
        out.write(text + "\n")
        out.flush()
        return True
    except (OSError, ValueError):
        return False
