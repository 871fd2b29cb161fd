"""The grader (dpteach.coursework.grading, `make grade`) against honest and dishonest notebooks.

The notebooks answer A0, the three-task demo assignment in dpteach/coursework/assignments/_demo.py
(Task 1: double, 1 point; Task 2: answer = 42, 1 point; Task 3: a Laplace count, 2
points). Every adversarial notebook starts from the blank exercise that make_exercise
writes, so an honest grader gives it 0 of 4 whatever it prints or patches. Most
notebooks are graded in one batch (one kernel each, ~1.5 s; two at a time), shared by the tests.
"""

import csv
import json
import os
import subprocess
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell as code
from nbformat.v4 import new_markdown_cell as md
from nbformat.v4 import new_notebook

from dpteach.coursework import _grade_report, _judging, assignments, grading, student_copies
from dpteach.coursework.assignments import _transport

ROOT = Path(__file__).resolve().parents[2]
TOTAL = 4
TIMEOUT = 8             # seconds of cells per notebook in the shared batch
TASK_TIMEOUT = 5


def solution():
    """The A0 demo assignment, solved; its check cells call dp.assignments.check."""
    cells = [
        md("# A0: a demo assignment"),
        code("import numpy as np\nimport dpteach as dp"),
        code("# Task 1: double\ndef double(x):\n    return 2 * x", metadata={"tags": ["solution"]}),
        code('dp.assignments.check("A0", "Task 1", double=double)'),
        code("# Task 2: the answer\nanswer = 42", metadata={"tags": ["solution"]}),
        code('dp.assignments.check("A0", "Task 2", answer=answer)'),
        code("# Task 3: a Laplace count\ndef noisy_count(count, epsilon, rng):\n"
             "    return count + rng.laplace(0.0, 1.0 / epsilon)", metadata={"tags": ["solution"]}),
        code('dp.assignments.check("A0", "Task 3", noisy_count=noisy_count)'),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def exercise():
    return student_copies.make_exercise(solution(), "A0")


def _check_cells(nb):
    return [i for i, c in enumerate(nb.cells) if "dp.assignments.check" in c.source]


def _with(nb, *sources, at=None):
    """``nb`` with code cells inserted at ``at`` (default: after the imports)."""
    at = 2 if at is None else at
    nb.cells[at:at] = [code(s) for s in sources]
    return nb


CHEATS = {
    # redefine every check the notebook could call
    "patch_checks": _with(exercise(), """\
ok = dp.exercises.Feedback(True, "✅ correct")
dp.exercises.check_mechanism = lambda *a, **k: ok
dp.exercises.check_number = lambda *a, **k: ok
dp.assignments.check = lambda *a, **k: ok
dp.check = lambda *a, **k: ok"""),
    # make every verdict print as a pass
    "patch_repr": _with(exercise(), """\
F = dp.exercises.Feedback
F.__repr__ = lambda self: "✅ " + self.message.replace("not yet solved", "correct")
F._repr_markdown_ = F.__repr__
F.__bool__ = lambda self: True"""),
    # display objects that read as passes
    "fake_display": _with(exercise(), """\
class Fake:
    def __init__(self, n): self.n = n
    def __repr__(self): return f"✅ Task {self.n}: correct."
for n in (1, 2, 3):
    display(Fake(n))
print("✅ Task 1: correct.\\n✅ Task 2: correct.\\n✅ Task 3: correct.")"""),
    # patch the transport and the task objects inside the kernel
    "patch_transport": _with(exercise(), """\
import json, builtins
from dpteach.coursework import assignments as A
from dpteach.coursework.assignments import _transport as T
from dpteach.coursework.exercises import Feedback
for t in A.tasks("A0"):
    object.__setattr__(t, "collect", lambda answers, request: {"passed": True})
    object.__setattr__(t, "judge", lambda *a: Feedback(True, "correct"))
T.dumps = lambda obj: '{"data": {"passed": true}}'
json.dumps = lambda *a, **k: '{"passed": true}'
A.check = lambda *a, **k: Feedback(True, "correct")"""),
}

edited = exercise()                       # grading cells replaced by printed passes
for i in _check_cells(edited):
    edited.cells[i].source = f'print("✅ Task {i}: correct.")'
CHEATS["edit_check_cells"] = edited

deleted = exercise()                      # grading cells removed: the total must not shrink
deleted.cells = [c for i, c in enumerate(deleted.cells) if i not in _check_cells(deleted)]
CHEATS["delete_check_cells"] = deleted

CHEATS["exit"] = _with(exercise(), "exit()")
CHEATS["os_exit"] = _with(exercise(), "import os\nos._exit(0)")
CHEATS["system_exit"] = _with(exercise(), "raise SystemExit", "1 / 0")
CHEATS["loop_forever"] = _with(exercise(), "while True:\n    pass")
CHEATS["loop_ignoring_interrupts"] = _with(exercise(), """\
import time
while True:
    try:
        time.sleep(0.1)
    except KeyboardInterrupt:
        pass""")


def _solution_with(*sources, at):
    return _with(solution(), *sources, at=at)


HONEST = {
    "solution": solution(),
    # the kernel dies after Task 1's answer: Task 1 is lost with it, Tasks 2-3 still count
    "solution_exit_midway": _solution_with("quit()", at=4),
    # errors and SystemExit do not stop later cells
    "solution_raising": _solution_with("raise SystemExit('bye')", "1 / 0", "undefined_name",
                                       at=3),
    # a loop in the last cell: the tasks answered before it are graded
    "solution_loop_at_end": _solution_with("import time\nwhile True:\n    time.sleep(0.05)",
                                           at=8),
    # a function that hangs when called (Task 1) or ends the kernel (Task 3): those
    # tasks fail, the others pass
    "solution_bad_functions": _solution_with(
        "def double(x):\n    while True:\n        pass",
        "import os\ndef noisy_count(count, epsilon, rng):\n    os._exit(3)", at=8),
    # the notebook's own checks return at once while grading (the grader runs every task
    # itself): Task 2's answer stays right only if this check was not run
    "solution_checks_off": _solution_with(
        'fb = dp.assignments.check("A0", "Task 1", double=double)\n'
        'if fb.details.get("reason") != "grading" or "not run while grading" not in fb.message:\n'
        '    answer = 41', at=5),
}


def _write(folder, name, nb):
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """One batch: every cheat, the honest variants, broken files, and a notebook that
    overwrites the batch's last submission and the report while it runs."""
    folder = tmp_path_factory.mktemp("submissions")
    paths = {}
    for name, nb in CHEATS.items():
        paths[name] = _write(folder, f"A0_{name}", nb)
    for name, nb in HONEST.items():
        paths[name] = _write(folder, f"A0_{name}", nb)
    report = folder / "grades.csv"
    victim = folder / "A0_victim.ipynb"               # graded last; a solved notebook
    paths["overwrite"] = _write(folder, "A0_overwrite", _with(exercise(), f"""\
from pathlib import Path
Path({str(victim)!r}).write_text("{{}}")
Path({str(report)!r}).write_text("notebook,task,passed,message\\nA0_victim.ipynb,Task 1,True,ok\\n")
for p in Path({str(folder)!r}).glob("*.ipynb"):
    try:
        p.write_text("not a notebook")
    except OSError:
        pass"""))
    # starts a process meant to outlive the grading (found afterwards by its command line)
    paths["leave_a_process"] = _write(folder, "A0_leave_a_process", _with(exercise(), """\
import subprocess
child = subprocess.Popen(["sleep", "600.1234"])"""))
    # renamed, without the A0 prefix: the assignment comes from the metadata
    paths["renamed"] = _write(folder, "my_homework", exercise())
    (folder / "A0_invalid_json.ipynb").write_text('{"cells": [', encoding="utf-8")
    (folder / "A0_script.ipynb").write_text("import dpteach\nprint('✅ Task 1')\n",
                                            encoding="utf-8")
    (folder / "A0_empty.ipynb").write_text("", encoding="utf-8")
    v3 = {"nbformat": 3, "nbformat_minor": 0, "metadata": {},
          "worksheets": [{"cells": [{"cell_type": "code", "input": "answer = 42",
                                     "language": "python", "outputs": []}]}]}
    (folder / "A0_nbformat3.ipynb").write_text(json.dumps(v3), encoding="utf-8")
    nb = solution()
    nb.metadata = {"kernelspec": nb.metadata["kernelspec"]}
    _write(folder, "unknown_assignment", nb)
    for name in ("invalid_json", "script", "empty", "nbformat3"):
        paths[name] = folder / f"A0_{name}.ipynb"
    paths["missing"] = folder / "A0_missing.ipynb"
    paths["unknown"] = folder / "unknown_assignment.ipynb"
    _write(folder, "A0_victim", solution())
    paths["victim"] = victim
    # a notebook that names an assignment its file name contradicts
    nb = exercise()
    nb.metadata["dpteach"]["assignment"] = "A1"
    paths["contradicts"] = _write(folder, "A0_contradicts", nb)
    order = list(paths)
    t0 = time.perf_counter()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grading, "NAMEABLE", grading.NAMEABLE | {"A0"})
        # two at a time: the cheats that loop until the timeout wait beside the others
        rows = grading.grade([paths[k] for k in order], timeout=TIMEOUT,
                             task_timeout=TASK_TIMEOUT, report=report, jobs=2)
    seconds = time.perf_counter() - t0
    by_name = {}
    for r in rows:
        key = next(k for k in order if Path(paths[k]).name == r.notebook)
        by_name.setdefault(key, []).append(r)
    return {"rows": rows, "by": by_name, "report": report, "seconds": seconds,
            "paths": paths}


def _score(rows):
    return sum(r.points for r in rows), sum(r.max_points for r in rows)


def _task(rows, key):
    return next(r for r in rows if r.task == key)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHEATS))
def test_a_cheating_blank_exercise_scores_zero_with_every_task_graded(batch, name):
    rows = batch["by"][name]
    assert [r.task for r in rows] == ["Task 1", "Task 2", "Task 3"], rows
    assert _score(rows) == (0, TOTAL), rows
    assert not any(r.passed for r in rows)


@pytest.mark.slow
def test_the_solution_scores_full_marks(batch):
    rows = batch["by"]["solution"]
    assert _score(rows) == (TOTAL, TOTAL), rows
    assert all(r.message.endswith("correct.") for r in rows)


@pytest.mark.slow
def test_an_exit_restarts_the_kernel_and_later_cells_count(batch):
    rows = batch["by"]["solution_exit_midway"]
    assert not _task(rows, "Task 1").passed
    assert "not answered" in _task(rows, "Task 1").message
    assert "ended the kernel" in _task(rows, "Task 1").message    # the run note says why
    assert _task(rows, "Task 2").passed and _task(rows, "Task 3").passed


@pytest.mark.slow
def test_a_graded_notebooks_own_checks_do_not_run(batch):
    assert _score(batch["by"]["solution_checks_off"]) == (TOTAL, TOTAL)


@pytest.mark.slow
def test_errors_and_system_exit_do_not_stop_later_cells(batch):
    assert _score(batch["by"]["solution_raising"]) == (TOTAL, TOTAL)


@pytest.mark.slow
def test_a_notebook_that_loops_is_stopped_and_its_answers_before_the_loop_count(batch):
    assert _score(batch["by"]["solution_loop_at_end"]) == (TOTAL, TOTAL)
    assert _score(batch["by"]["loop_forever"]) == (0, TOTAL)


@pytest.mark.slow
def test_a_function_that_hangs_or_kills_the_kernel_fails_only_its_own_task(batch):
    rows = batch["by"]["solution_bad_functions"]
    assert "timed out" in _task(rows, "Task 1").message
    assert _task(rows, "Task 2").passed
    assert not _task(rows, "Task 3").passed
    assert "ended the kernel" in _task(rows, "Task 3").message


@pytest.mark.slow
def test_a_notebook_cannot_rewrite_another_submission_or_the_report(batch):
    assert _score(batch["by"]["overwrite"]) == (0, TOTAL)
    assert _score(batch["by"]["victim"]) == (TOTAL, TOTAL)      # graded from what was handed in
    assert _score(batch["by"]["solution"]) == (TOTAL, TOTAL)
    with open(batch["report"], newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    assert tuple(lines[0]) == grading.FIELDS
    assert len(lines) == 1 + len(batch["rows"])
    victim_rows = [x for x in lines if x[0] == batch["paths"]["victim"].name]
    assert [x[2] for x in victim_rows] == ["True"] * 3


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _running(pid):
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status                    # a zombie has ended


@pytest.mark.slow
def test_processes_a_notebook_starts_end_with_its_kernel(batch):
    assert _score(batch["by"]["leave_a_process"]) == (0, TOTAL)
    pids = [p.name for p in Path("/proc").iterdir() if p.name.isdigit()]
    left = [p for p in pids if _running(p) and b"600.1234" in _cmdline(p)]
    assert left == []


@pytest.mark.slow
@pytest.mark.parametrize("name, words", [
    ("invalid_json", "not valid JSON"), ("script", "renamed"), ("empty", "empty"),
    ("nbformat3", "nbformat 3"), ("missing", "no such file"),
    ("unknown", "which assignment"), ("contradicts", "says it is A1 but its name says A0")])
def test_a_file_that_is_not_a_gradable_notebook_gets_one_clear_row(batch, name, words):
    rows = batch["by"][name]
    assert len(rows) == 1 and rows[0].task == grading.NOTEBOOK_ROW and not rows[0].passed
    assert words in rows[0].message
    if name not in ("unknown", "contradicts"):
        assert rows[0].max_points == TOTAL                     # the total does not shrink
        assert rows[0].assignment == "A0"


@pytest.mark.slow
def test_the_assignment_comes_from_the_metadata_when_the_file_is_renamed(batch):
    rows = batch["by"]["renamed"]
    assert [r.task for r in rows] == ["Task 1", "Task 2", "Task 3"]
    assert _score(rows) == (0, TOTAL)


@pytest.mark.slow
def test_the_batch_time(batch):
    # 27 files, 20 kernels, three of them looping for TIMEOUT seconds
    # reported, not asserted: the time depends on the machine's load
    print(f"batch of {len(batch['paths'])} files: {batch['seconds']:.1f} s")
    assert batch["seconds"] > 0


# ------------------------------------------------------------------ without a kernel
def test_the_verdict_trusts_only_well_formed_data(tmp_path):
    task = assignments.tasks("A0")[1]                         # answer = 42
    request, truth = task.request(None)
    result = tmp_path / "result.json"

    def verdict(text):
        if text is not None:
            result.write_text(text, encoding="utf-8")
        elif result.exists():
            result.unlink()
        return _judging.verdict(task, result, request, truth)

    assert verdict(_transport.dumps({"data": 42})) == (True, "Task 2: correct.")
    assert verdict(None)[1].endswith("no result came back from the notebook")
    assert "not valid data" in verdict("{not json")[1]
    assert "not valid data" in verdict('{"data": 42, "passed": true}')[1]
    assert "not valid data" in verdict('[42]')[1]
    assert "nested too deeply" in verdict("[" * 100_000 + "]" * 100_000)[1]
    assert "nested too deeply" in verdict('{"data": ' + '{"a": ' * 200 + "1" + "}" * 201)[1]
    assert _grade_report.nesting_depth('{"data": ["[[[[", {"a": "]]{"}]}') == 3
    assert "not answered: answer" in verdict('{"missing": ["answer"]}')[1]
    assert "raised ZeroDivisionError" in verdict('{"error": "ZeroDivisionError: boom"}')[1]
    # a symlink, a FIFO or a huge file in place of the result: refused, nothing blocks
    result.unlink()
    result.symlink_to("/dev/zero")
    assert "not a file of at most" in _judging.verdict(task, result, request, truth)[1]
    result.unlink()
    os.mkfifo(result)
    assert "not a file of at most" in _judging.verdict(task, result, request, truth)[1]
    result.unlink()
    with open(result, "wb") as f:
        f.truncate(grading.MAX_RESULT_BYTES + 1)
    assert "not a file of at most" in _judging.verdict(task, result, request, truth)[1]
    result.unlink()
    # a value that only prints like the answer is still judged as data
    assert not verdict(_transport.dumps({"data": "42"}))[0]
    assert not verdict('{"data": {"__repr__": "42"}}')[0]
    # a made-up dtype cannot make a few bytes of JSON allocate gigabytes
    assert not verdict('{"data": {"__ndarray__": [42], "dtype": "S1000000000"}}')[0]
    # a judge that chokes on odd data fails the task instead of the grader
    odd = assignments.tasks("A0")[2]
    req3, truth3 = odd.request(np.random.default_rng(0))
    result.write_text('{"data": {"__ndarray__": [[1, 2], [3]], "dtype": "<f8"}}')
    passed, message = _judging.verdict(odd, result, req3, truth3)
    assert not passed and message.startswith("Task 3")


def test_the_command_line_writes_the_report_and_a_summary(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(grading, "NAMEABLE", grading.NAMEABLE | {"A0"})
    (tmp_path / "A0_empty.ipynb").write_text("")
    report = tmp_path / "out.csv"
    assert grading.main([str(tmp_path / "A0_empty.ipynb"), str(tmp_path / "A0_gone.ipynb"),
                         "--report", str(report), "--timeout", "30"]) == 0
    out = capsys.readouterr().out
    assert "A0_empty.ipynb (A0): 0 / 4 points" in out and "the file is empty" in out
    rows = list(csv.DictReader(report.open(encoding="utf-8")))
    assert [r["task"] for r in rows] == [grading.NOTEBOOK_ROW] * 2
    assert list(rows[0])[:4] == ["notebook", "task", "passed", "message"]
    for option, bad in [("--timeout", "0"), ("--timeout", "nan"), ("--timeout", "inf"),
                        ("--task-timeout", "nan"), ("--task-timeout", "-1")]:
        with pytest.raises(SystemExit):
            grading.main(["x.ipynb", option, bad])
    assert "timeout" in capsys.readouterr().err


def test_bad_timeouts_are_refused_before_any_kernel_starts(tmp_path):
    # NaN never expires and inf never stops a looping cell: refused, naming the parameter
    for bad in (float("nan"), float("inf"), 0, -1.0, True, "30"):
        for call in (lambda **kw: grading.grade([], **kw),
                     lambda **kw: grading.grade_notebook(tmp_path / "gone.ipynb", **kw)):
            for name in ("timeout", "task_timeout"):
                with pytest.raises((ValueError, TypeError), match=name):
                    call(**{name: bad})


def test_make_grade_passes_its_variables_on():
    out = subprocess.run(["make", "-n", "grade", "FILES=a.ipynb b.ipynb", "REPORT=r.csv",
                          "TIMEOUT=30", "ASSIGNMENT=A3", "JOBS=3"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if "dpteach grade" in x)
    assert "a.ipynb b.ipynb" in line and "--report r.csv" in line
    assert "--timeout 30" in line and "--assignment A3" in line and "--jobs 3" in line
    assert "--no-sandbox" not in line
    out = subprocess.run(["make", "-n", "grade", "FILES=a.ipynb", "SANDBOX=0"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert "--no-sandbox" in next(x for x in out.splitlines() if "dpteach grade" in x)


def test_the_assignment_is_read_from_option_metadata_then_file_name(monkeypatch):
    nb = exercise()
    assert nb.metadata["dpteach"]["assignment"] == "A0"
    assert grading._assignment(nb, "whatever.ipynb", "a3") == "A3"
    # the demo A0 is graded only when asked for: a notebook cannot name it itself
    with pytest.raises(grading.SubmissionError, match="not an assignment of the course"):
        grading._assignment(nb, "whatever.ipynb", None)
    monkeypatch.setattr(grading, "NAMEABLE", grading.NAMEABLE | {"A0"})
    assert grading._assignment(nb, "whatever.ipynb", None) == "A0"
    assert grading._assignment(nb, "A0_bob.ipynb", None) == "A0"
    with pytest.raises(grading.SubmissionError, match="says it is A0 but its name says A3"):
        grading._assignment(nb, "A3_bob.ipynb", None)
    assert grading._assignment(None, "dir/a2_alice.ipynb", None) == "A2"
    assert grading._assignment(None, "alice_A2.ipynb", None) is None
    with pytest.raises(grading.SubmissionError):
        grading._assignment(None, "A12x.ipynb", None)


# ------------------------------------------------------------------ the sandbox, the batch
def test_without_bubblewrap_grading_refuses_unless_told(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(grading._sandbox, "available", lambda: (False, "no bwrap here"))
    report = tmp_path / "r.csv"
    assert grading.main([str(tmp_path / "A1_x.ipynb"), "--report", str(report)]) == 2
    err = capsys.readouterr().err
    assert "refusing to grade: no bwrap here" in err and "--no-sandbox" in err
    assert not report.exists()
    with pytest.raises(grading.SandboxUnavailable):
        grading.grade_notebook(tmp_path / "A1_x.ipynb")
    # the opt-out grades, and says what is then unsafe
    assert grading.main([str(tmp_path / "A1_x.ipynb"), "--report", str(report),
                         "--no-sandbox"]) == 0
    err = capsys.readouterr().err
    assert "WITHOUT the sandbox" in err and "outlive" in err and report.exists()


def test_the_sandbox_runs_here():
    assert grading._sandbox.available() == (True, "")


def test_the_sandbox_shows_only_what_a_kernel_needs(tmp_path):
    """A process in the sandbox walks its whole file system: no notebook, no kit source
    but the copy mounted for it, no home folder, no checkout, no .git, no other
    process in /proc, and bwrap's command line names no folder of the host."""
    from dpteach.coursework import _sandbox
    job = tmp_path / "job"
    job.mkdir()
    (job / "mine.ipynb").write_text("{}")
    kit = tmp_path / "kit"
    (kit / "dpteach").mkdir(parents=True)
    (kit / "dpteach" / "__init__.py").write_text("")
    walk = ("import os, json\n"
            "found = []\n"
            "for root, dirs, files in os.walk('/', onerror=lambda e: None):\n"
            "    if root.startswith(('/proc', '/sys', '/dev')):\n"
            "        dirs[:] = []\n"
            "        continue\n"
            "    found += [os.path.join(root, f) for f in files]\n"
            "print(json.dumps({'files': found, 'pids': [p for p in os.listdir('/proc') "
            "if p.isdigit()], 'cmd': open('/proc/1/cmdline', 'rb').read().decode()}))\n")
    python = _sandbox.grading_python()
    cmd = _sandbox.command(job, [python, "-c", walk], kit=kit, limits=_sandbox.Limits())
    fd, cmd = _sandbox._args_file(cmd)
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, pass_fds=(fd,), timeout=120)
    finally:
        os.close(fd)
    import json
    seen = json.loads(out.stdout)
    files = seen["files"]
    assert [f for f in files if f.endswith(".ipynb")] == ["/job/mine.ipynb"]
    kit_sources = [f for f in files if "/dpteach/" in f and f.endswith(".py")]
    assert kit_sources == [f"{_sandbox.KIT_MOUNT}/dpteach/__init__.py"]
    assert not [f for f in files if "/.git/" in f or f.startswith(("/home/", "/etc/shadow"))]
    root = str(ROOT)
    assert not [f for f in files if f.startswith(root + "/") and "/.venv" not in f]
    assert not [f for f in files if "site-packages/dp_accounting" in f or "pycanon" in f]
    assert len(seen["pids"]) <= 3                      # bwrap, the walker, nothing else
    assert str(tmp_path) not in seen["cmd"] and "--ro-bind" not in seen["cmd"]


@pytest.mark.slow
def test_jobs_give_the_rows_of_a_serial_run_with_totals_and_relative_names(tmp_path):
    sub = tmp_path / "batch" / "group"
    sub.mkdir(parents=True)
    paths = [_write(sub, "A0_solution", solution()), _write(sub, "A0_blank", exercise()),
             _write(tmp_path / "batch", "A0_cheat", CHEATS["patch_checks"]),
             _write(sub, "A0_exit", HONEST["solution_exit_midway"]),
             tmp_path / "batch" / "A0_missing.ipynb"]
    runs = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grading, "NAMEABLE", grading.NAMEABLE | {"A0"})
        for jobs in (1, 2):
            report = tmp_path / f"grades_{jobs}.csv"
            runs[jobs] = grading.grade(paths, timeout=TIMEOUT, task_timeout=TASK_TIMEOUT,
                                       report=report, jobs=jobs, seed=20261126)
    assert runs[1] == runs[2]
    names = [r.notebook for r in runs[1]]
    assert names[0] == "group/A0_solution.ipynb" and "A0_cheat.ipynb" in names
    assert names[-1] == "A0_missing.ipynb"
    totals = list(csv.reader((tmp_path / "grades_2_totals.csv").open(encoding="utf-8")))
    assert tuple(totals[0]) == grading.TOTAL_FIELDS
    assert totals[1] == ["group/A0_solution.ipynb", "A0", "4", "4", "3", "3"]
    assert totals[2][:4] == ["group/A0_blank.ipynb", "A0", "0", "4"]
    assert totals[-1] == ["A0_missing.ipynb", "A0", "0", "4", "0", "0"]
    assert not list(tmp_path.glob(".grades_*"))            # no temporary report left


def test_a_grader_failure_on_one_notebook_becomes_its_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(grading, "NAMEABLE", grading.NAMEABLE | {"A0"})
    def broken(*args, **kwargs):
        raise PermissionError("scratch folder not writable")
    monkeypatch.setattr(grading, "_run_and_judge", broken)
    path = _write(tmp_path, "A0_solution", solution())
    rows = grading.grade([path, tmp_path / "A0_gone.ipynb"], report=tmp_path / "r.csv")
    assert rows[0].task == grading.NOTEBOOK_ROW and not rows[0].passed
    assert "PermissionError" in rows[0].message and rows[0].max_points == TOTAL
    assert rows[1].message == "no such file"


def test_the_report_is_replaced_atomically(tmp_path, monkeypatch):
    report = tmp_path / "r.csv"
    grading.write_report([grading.Row("a.ipynb", "Task 1", True, "ok", 1, 1, "A0")], report)
    before = report.read_bytes()
    def crash(*args, **kwargs):
        raise OSError("disk full")
    monkeypatch.setattr(grading.csv, "writer", crash)
    with pytest.raises(OSError):
        grading.write_report([], report)
    assert report.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["r.csv"]


def test_forbidden_functions_are_found_for_every_assignment():
    a1 = grading.forbidden_targets(assignments.tasks("A1"))
    assert "dpteach.anonymity:l_diversity" in a1
    a2 = grading.forbidden_targets(assignments.tasks("A2"))
    assert "dpteach.attacks:reconstruct_lp" in a2
    for key in assignments.ASSIGNMENTS:
        tasks = assignments.tasks(key)
        assert bool(grading.forbidden_targets(tasks)) == any(t.forbidden for t in tasks), key


def test_a_batch_imports_the_task_modules_of_its_own_assignments(tmp_path):
    """Read from the hand-ins before anything runs: the assignments they will be graded as
    (a broken file names none), or the one --assignment gives them all."""
    nb = solution()
    nb.metadata.setdefault("dpteach", {})["assignment"] = "A3"
    good = nbformat.writes(nb).encode()
    raws = {"a": good, "b": b"{not json", "c": None}
    names = ["A3_mine.ipynb", "A5_broken.ipynb", "A7_missing.ipynb"]
    assert grading._import_tasks(raws, list(raws), names, None) == {"A3"}
    assert grading._import_tasks(raws, list(raws), names, "A1") == {"A1"}


def test_a_judge_past_its_memory_limit_fails_its_task_and_the_grader_goes_on(tmp_path,
                                                                            monkeypatch):
    """Judging runs in a child with an address-space limit of its own: a judge that needs
    more than it may (here: any byte at all) fails its task with the limit named, while
    the same result under the normal limit passes, and the grading process is untouched."""
    task = assignments.tasks("A0")[1]                         # answer = 42
    request, truth = task.request(None)
    result = tmp_path / "result.json"
    result.write_text(_transport.dumps({"data": 42}), encoding="utf-8")
    judged = [(0, task, result, request, truth)]
    assert _judging.judge_all("A0", judged, []) == [(True, "Task 2: correct.")]
    monkeypatch.setattr(_judging, "JUDGE_MEMORY", 1)
    [(passed, message)] = _judging.judge_all("A0", judged, [])
    assert not passed and message.startswith("Task 2: the answer could not be judged within")
    assert "memory" in message, message
    monkeypatch.undo()
    assert _judging.judge_all("A0", judged, []) == [(True, "Task 2: correct.")]
