"""The report of `dpteach grade` is always written (issue 30, item 5), and a batch can be
graded in shards on several machines and merged (item 9).

One batch of A0 notebooks carries the odd texts a red team used to lose the report: an
error message holding a lone surrogate, escape codes, carriage returns and newlines that
drew fake ✅ lines in the console, a very long message, a lone surrogate in the
metadata (in the assignment's name and elsewhere) and a file name that is not UTF-8.
It is graded once in this process (`grading.main`, what `dpteach grade` calls) and once
as two shards, two `python -m dpteach grade --shard K/2` processes side by side, which
are then merged.
"""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from dpteach.coursework import cli
from dpteach.coursework import _grade_report, _grade_shards, grading
from test_grading import _with, exercise, solution  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT, TASK_TIMEOUT = "60", "20"
#: what a message printed to fake passing lines in the console summary
FAKE = "\r\x1b[2K  ✅ Task 1 (4/4): ok\n  ✅ Task 2 (1/1): ok\x1b[1A\x1b]0;title\x07"
BAD_NAME = b"A0_badname_\xff.ipynb"


def _raw_notebook(nb) -> bytes:
    """The notebook as JSON with every non-ASCII character escaped, so a lone surrogate
    can be written (as ``\\ud800``), as a hand-edited file could hold it."""
    return json.dumps(nb, ensure_ascii=True, indent=1).encode("ascii")


def _hand_ins(folder: Path) -> list:
    folder.mkdir()
    paths = []

    def put(name, nb=None, raw=None):
        path = folder / name if isinstance(name, str) else Path(os.fsdecode(bytes(folder) + b"/" + name))
        Path(path).write_bytes(raw if raw is not None else nbformat.writes(nb).encode("utf-8"))
        paths.append(path)

    put("A0_solution.ipynb", solution())
    # Task 1 raises a lone surrogate; Task 3 raises escape codes, newlines and 100 kB more
    odd = _with(solution(), 'def double(x):\n    raise ValueError("\\ud800")',
                f"def noisy_count(count, epsilon, rng):\n"
                f"    raise ValueError({FAKE!r} + 'x' * 100_000)", at=8)
    put("A0_odd_errors.ipynb", odd)
    nb = solution()
    nb.metadata["dpteach"] = {"assignment": "A0\ud800"}
    put("A0_meta_assignment.ipynb", raw=_raw_notebook(nb))
    nb = solution()
    nb.metadata["dpteach"] = {"assignment": "A0"}
    nb.metadata["authors"] = [{"name": "Zoë \ud800\udfff"}]
    put("A0_meta_elsewhere.ipynb", raw=_raw_notebook(nb))
    put(BAD_NAME, solution())
    return paths


def _read(path) -> list:
    with open(path, newline="", encoding="utf-8") as f:   # strict: the report is UTF-8
        return list(csv.reader(f))


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The batch graded in one go here, and as two shards in two processes at once."""
    top = tmp_path_factory.mktemp("report")
    paths = _hand_ins(top / "hand-in")
    one_shot = top / "grades.csv"
    shard_reports = [top / f"shard{k}.csv" for k in (1, 2)]
    # the shards start first and run beside the grading here
    runs = [subprocess.Popen(
        [sys.executable, "-m", "dpteach", "grade", *map(os.fsencode, paths),
         "--assignment", "A0", "--shard", f"{k}/2", "--report", str(report),
         "--timeout", TIMEOUT, "--task-timeout", TASK_TIMEOUT],
        cwd=top, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for k, report in zip((1, 2), shard_reports)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grading, "NAMEABLE", grading.NAMEABLE | {"A0"})
        mp.setattr(sys, "stdout", _Console())
        code = grading.main([*map(str, paths), "--report", str(one_shot), "--jobs", "2",
                             "--timeout", TIMEOUT, "--task-timeout", TASK_TIMEOUT])
        console = sys.stdout.getvalue()
    shards = []
    for run in runs:
        out, err = run.communicate(timeout=900)
        shards.append({"code": run.returncode, "out": out, "err": err})
    return {"top": top, "paths": paths, "code": code, "console": console,
            "report": one_shot, "shards": shards, "shard_reports": shard_reports}


class _Console:
    """A text stream like a terminal's: UTF-8, strict (a lone surrogate cannot be written)."""

    encoding = "utf-8"

    def __init__(self):
        self._bytes = bytearray()

    def write(self, text):
        self._bytes += text.encode("utf-8")
        return len(text)

    def flush(self):
        pass

    def getvalue(self):
        return self._bytes.decode("utf-8")


def _rows(report) -> list:
    return [dict(zip(grading.FIELDS, r)) for r in _read(report)[1:]]


# ------------------------------------------------------------------ item 5: the report
@pytest.mark.slow
def test_every_odd_text_leaves_a_complete_report_and_exit_code_0(graded):
    assert graded["code"] == 0
    rows = _rows(graded["report"])
    by = {}
    for r in rows:
        by.setdefault(r["notebook"], []).append(r)
    assert list(by) == ["A0_solution.ipynb", "A0_odd_errors.ipynb", "A0_meta_assignment.ipynb",
                        "A0_meta_elsewhere.ipynb", "A0_badname_\\xff.ipynb"]
    assert [r["passed"] for r in by["A0_solution.ipynb"]] == ["True"] * 3
    odd = {r["task"]: r for r in by["A0_odd_errors.ipynb"]}
    assert odd["Task 1"]["passed"] == "False" and "\\ud800" in odd["Task 1"]["message"]
    assert odd["Task 2"]["passed"] == "True"
    assert odd["Task 3"]["passed"] == "False"
    assert "ValueError:    ✅ Task 1 (4/4): ok   ✅ Task 2 (1/1): okxxx" in odd["Task 3"]["message"]
    # the metadata's surrogate is named escaped; the notebook still has its row
    (meta,) = by["A0_meta_assignment.ipynb"]
    assert meta["task"] == grading.NOTEBOOK_ROW and "A0\\ud800" in meta["message"]
    assert by["A0_meta_elsewhere.ipynb"]
    # a file name that is not UTF-8 is reported as its bytes, and graded
    assert [r["passed"] for r in by["A0_badname_\\xff.ipynb"]] == ["True"] * 3
    for r in rows:
        for value in r.values():
            assert value == _grade_report.safe_text(value, len(value) + 1)
        assert len(r["message"]) <= _grade_report.MESSAGE_LIMIT
    totals = _read(_grade_report.totals_path(graded["report"]))
    assert [t[0] for t in totals[1:]] == list(by)
    assert totals[1][2:4] == ["4", "4"] and totals[-1][2:4] == ["4", "4"]


@pytest.mark.slow
def test_the_console_summary_shows_no_fake_line(graded):
    console = graded["console"]
    assert "\r" not in console and "\x1b" not in console and "\x07" not in console
    rows = _rows(graded["report"])
    lines = console.splitlines()
    marks = [x for x in lines if x.startswith(("  ✅", "  ❌"))]
    assert len(marks) == len(rows)
    assert sum(x.startswith("  ✅") for x in lines) == sum(r["passed"] == "True" for r in rows)
    assert all(x.startswith(("  ✅", "  ❌", "  note: ", "wrote ")) or x.endswith(" points")
               for x in lines), lines
    assert "A0_badname_\\xff.ipynb (A0): 4 / 4 points" in lines


def test_safe_text_keeps_every_text_on_one_safe_line():
    safe = _grade_report.safe_text
    assert safe("a\ud800b") == "a\\ud800b"
    assert safe(os.fsdecode(BAD_NAME)) == "A0_badname_\\xff.ipynb"
    assert safe(b"ok \xff\xfe") == "ok \\xff\\xfe"
    assert safe(FAKE) == "   ✅ Task 1 (4/4): ok   ✅ Task 2 (1/1): ok"
    assert safe("left\u202etxt.exe\u200b") == "lefttxt.exe"
    long = safe("x" * 10**6, 300)
    assert len(long) == 300 and long.startswith("x" * 200) and "cut, sha256" in long
    assert safe("x" * 10**6 + "y", 300) != long             # cut texts stay apart
    for text in ("a\ud800b", FAKE, "x" * 5000, b"\xff", "plain ✅"):
        once = safe(text, 300)
        assert safe(once, 300) == once
        once.encode("utf-8")


def test_a_row_is_safe_from_the_moment_it_is_made(tmp_path):
    row = grading.Row("A3_\udcff.ipynb", "Task\n1", False, FAKE + "\ud800", 0, 1, "A3\x1b")
    assert row.notebook == "A3_\\xff.ipynb" and row.task == "Task 1"
    assert "\n" not in row.message and "\\ud800" in row.message and row.assignment == "A3"
    text = _grade_report.summary([row], notes=["a note\nwith ✅ a break\x1b[2K"])
    assert len(text.splitlines()) == 3
    grading.write_report([row], tmp_path / "r.csv")
    assert _read(tmp_path / "r.csv")[1][0] == "A3_\\xff.ipynb"


def test_a_cell_that_starts_a_formula_is_written_as_text(tmp_path):
    row = grading.Row("=HYPERLINK(1).ipynb", "Task 1", False, "-1+cmd|' /C calc'!A0", 0, 1,
                      "@A0")
    grading.write_report([row], tmp_path / "r.csv")
    grading.write_totals([row], tmp_path / "t.csv")
    cells = _read(tmp_path / "r.csv")[1]
    assert cells[0] == "'=HYPERLINK(1).ipynb" and cells[3].startswith("'-1+cmd")
    assert cells[6] == "'@A0" and cells[4:6] == ["0", "1"]
    assert _read(tmp_path / "t.csv")[1][0] == "'=HYPERLINK(1).ipynb"
    assert _grade_report.cell(cells[0]) == cells[0]              # not quoted twice


_CRASH = """
import os, signal, sys
from dpteach.coursework import grading
seen = []
def grade_notebook(path, **kw):
    seen.append(path)
    if len(seen) == 2:                   # the grader dies while grading notebook 2
        os.kill(os.getpid(), signal.SIGKILL)
    return [grading.Row(kw["name"], "Task 1", True, "ok", 1, 1, "A0")]
grading.grade_notebook = grade_notebook
sys.exit(grading.main(sys.argv[1:]))
"""


def test_a_grader_that_dies_mid_batch_leaves_the_rows_before(tmp_path):
    names = [f"A0_{c}.ipynb" for c in "abc"]
    report = tmp_path / "grades.csv"
    # no notebook runs (grade_notebook is replaced), so the sandbox is not needed
    done = subprocess.run([sys.executable, "-c", _CRASH, *names, "--report", str(report),
                           "--assignment", "A0", "--no-sandbox"], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert _read(report) == [list(grading.FIELDS), ["A0_a.ipynb", "Task 1", "True", "ok",
                                                    "1", "1", "A0"]]
    assert _read(tmp_path / "grades_totals.csv")[1] == ["A0_a.ipynb", "A0", "1", "1", "1", "1"]


def test_the_exit_code_is_1_only_when_the_grader_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(grading, "grade_notebook", lambda path, **kw: [
        grading.Row(kw["name"], "Task 1", False, "❌ wrong\x1b[2K", 0, 1, "A0")])
    argv = ["A0_a.ipynb", "A0_b.ipynb", "--assignment", "A0", "--no-sandbox", "--report",
            str(tmp_path / "r.csv")]     # no notebook runs: the sandbox is not needed
    assert grading.main(argv) == 0                     # failed rows are still rows
    assert len(_read(tmp_path / "r.csv")) == 3
    real_add = _grade_report.ReportWriter.add
    calls = []

    def add(self, rows):
        calls.append(rows)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_add(self, rows)
    monkeypatch.setattr(_grade_report.ReportWriter, "add", add)
    capsys.readouterr()
    assert grading.main(argv) == 1
    err = capsys.readouterr().err
    assert "the grader failed" in err and "No space left" in err
    assert [r[0] for r in _read(tmp_path / "r.csv")[1:]] == ["A0_a.ipynb"]


# ------------------------------------------------------------------ item 9: shards
def test_the_shards_partition_the_batch_by_sorted_name():
    names = [f"A{a}_student{s:03d}.ipynb" for a in range(1, 4) for s in range(7)]
    parts = [_grade_shards.deal(names, k, 4) for k in (1, 2, 3, 4)]
    assert sorted(i for p in parts for i in p) == list(range(len(names)))
    assert {len(p) for p in parts} <= {5, 6}
    backwards = names[::-1]                 # the order the files are given does not matter
    assert [{names[i] for i in p} for p in parts] == [
        {backwards[i] for i in _grade_shards.deal(backwards, k, 4)} for k in (1, 2, 3, 4)]
    for bad in ("0/2", "3/2", "1", "a/b", "1/2/3", "-1/2"):
        with pytest.raises(ValueError, match="shard"):
            _grade_shards.parse_shard(bad)
    with pytest.raises(SystemExit):
        grading.main(["a.ipynb", "--shard", "3/2"])
    with pytest.raises(SystemExit):                       # one notebook given twice
        grading.main(["a.ipynb", "./a.ipynb", "--shard", "1/2"])


@pytest.mark.slow
def test_two_shards_merged_grade_the_batch_of_a_one_shot_grading(graded, tmp_path, capsys):
    for shard in graded["shards"]:
        assert shard["code"] == 0, shard["err"].decode("utf-8", "replace")
        out = shard["out"].decode("utf-8")                  # strictly UTF-8
        assert "\x1b" not in out and "\r" not in out
    s1, s2 = graded["shard_reports"]
    mine = [{r["notebook"] for r in _rows(s)} for s in (s1, s2)]
    assert mine[0] and mine[1] and not mine[0] & mine[1]
    out = tmp_path / "merged.csv"
    assert cli.main(["grade-merge", str(out), str(s2), str(s1)]) == 0
    assert "merged 2 shards: 5 notebooks" in capsys.readouterr().out
    merged = _rows(out)
    one_shot = _rows(graded["report"])
    # the same notebooks, in the order given, with the same tasks
    assert list(dict.fromkeys(r["notebook"] for r in merged)) == list(
        dict.fromkeys(r["notebook"] for r in one_shot))
    assert len(merged) == len(_rows(s1)) + len(_rows(s2))
    solved = [r for r in merged if r["notebook"] in ("A0_solution.ipynb", "A0_badname_\\xff.ipynb")]
    assert [r["passed"] for r in solved] == ["True"] * 6
    totals = _read(tmp_path / "merged_totals.csv")
    assert tuple(totals[0]) == grading.TOTAL_FIELDS and len(totals) == 6
    assert totals[1] == ["A0_solution.ipynb", "A0", "4", "4", "3", "3"]


@pytest.mark.slow
def test_a_merge_refuses_a_missing_or_doubled_notebook(graded, tmp_path, capsys):
    s1, s2 = graded["shard_reports"]
    in_s2 = sorted({r["notebook"] for r in _rows(s2)})
    out = tmp_path / "merged.csv"
    with pytest.raises(_grade_shards.MergeError) as err:
        _grade_shards.merge(out, [s1])
    assert "missing shard 2/2" in str(err.value) and "no rows" in str(err.value)
    assert all(name in str(err.value) for name in in_s2)
    with pytest.raises(_grade_shards.MergeError, match="shard 1/2 given 2 times"):
        _grade_shards.merge(out, [s1, s2, s1])
    # a shard that died has no manifest
    dead = tmp_path / "dead.csv"
    shutil.copy(s2, dead)
    with pytest.raises(_grade_shards.MergeError, match="did not finish"):
        _grade_shards.merge(out, [s1, dead])
    # a notebook of shard 1 whose rows are in shard 2's report too
    doubled = tmp_path / "doubled.csv"
    stolen = _read(s1)[1]
    with open(doubled, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(_read(s2) + [stolen])
    manifest = json.loads(_grade_shards.manifest_path(s2).read_text())
    manifest["rows"] += 1
    _grade_shards.manifest_path(doubled).write_text(json.dumps(manifest))
    with pytest.raises(_grade_shards.MergeError, match="more than one report") as err:
        _grade_shards.merge(out, [s1, doubled])
    assert stolen[0] in str(err.value)
    assert not out.exists()                                  # nothing written when refused
    capsys.readouterr()
    assert cli.main(["grade-merge", str(out), str(s1)]) == 1
    assert "refusing to merge" in capsys.readouterr().err


def test_the_guide_shows_sharding_on_slurm_and_kubernetes():
    guide = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    for words in ("--shard", "grade-merge", "SLURM_ARRAY_TASK_ID", "completionMode: Indexed",
                  "JOB_COMPLETION_INDEX", "Exit status"):
        assert words in guide, words
