"""Attacks on the grader by a student who hands in a blank exercise plus a few cells, one
test per class of attack: reading the truth through the call stack, using a function the
task forbids (captured in a default argument, a closure, a copied code object, or with
the guard neutralised), editing the kit's source on disk, leaving a process behind that
rewrites the report, copying a classmate's hand-in, deleting the grading folder, killing
the kernel's parent. Each earns
0 points and leaves the batch, the kit and the report intact.

All attack notebooks are graded in one batch (jobs=2, each in its own sandbox); the
checks read the rows, the files and /proc afterwards: nothing depends on timing.
"""

import csv
import hashlib
import inspect
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell as code

import dpteach.coursework.assignments._demo as demo
from dpteach.coursework import grading

from test_grading import exercise, solution

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "notebooks" / "exercises"
MARKER = "3600.4321"                     # in the command line of a process left behind


def _blank(assignment):
    name = {"A1": "A1_anonymity.ipynb", "A2": "A2_attacks_and_reconstruction.ipynb"}[assignment]
    return nbformat.read(EXERCISES / name, as_version=4)


def _plus(nb, *sources):
    nb.cells += [code(s) for s in sources]
    return nb


def _a0_with(*sources):
    nb = exercise()
    nb.cells[2:2] = [code(s) for s in sources]
    return nb


DEMO_FILE = Path(inspect.getsourcefile(demo))

# A1 Task 3 asks for distinct l-diversity computed by hand; dpteach.anonymity.l_diversity
# is forbidden there. Each notebook reaches the real function another way.
CAPTURES = {
    "default_argument": """\
from dpteach import anonymity as an
def distinct_l(table, qis, sensitive, _f=an.l_diversity):
    return _f(table, qis, sensitive)""",
    "closure": """\
from dpteach import anonymity as an
def _make(f=None):
    f = an.l_diversity
    def distinct_l(table, qis, sensitive):
        return f(table, qis, sensitive)
    return distinct_l
distinct_l = _make()""",
    "copied_code": """\
import types
from dpteach import anonymity as an
_real = an.l_diversity
# its own copy of the module's globals: the helpers it calls are the real ones too
_copy = types.FunctionType(_real.__code__, dict(vars(an)), "copy", _real.__defaults__)
_copy.__kwdefaults__ = _real.__kwdefaults__
def distinct_l(table, qis, sensitive):
    return _copy(table, qis, sensitive)""",
    "neutralised_guard": """\
import dpteach.coursework.assignments._student as S
from dpteach import anonymity as an
S.forbid.__enter__ = lambda self: self
S.forbid.__exit__ = lambda self, *exc: False
def distinct_l(table, qis, sensitive):
    return an.l_diversity(table, qis, sensitive)""",
    "reload_the_module": """\
import importlib
from dpteach import anonymity as an
importlib.reload(an)
_real = an.l_diversity
def distinct_l(table, qis, sensitive, _f=_real):
    return _f(table, qis, sensitive)""",
}

# A2 Task 3a (averaging) and Task 1 (differencing): the answer read from the checker's
# frames instead of asked for
STACK = """\
import inspect
def _in_frames(test):
    for info in inspect.stack(0):
        for value in list(info.frame.f_locals.values()):
            found = test(value)
            if found is not None:
                return found
    return None

def _table(v):                      # a server object that holds the hidden table
    t = getattr(v, "_table", None) if not isinstance(v, dict) else None
    return t if t is not None and "Trait" in getattr(t, "columns", []) else None

def recover_count(server, where):
    server.count(where, size=30)    # as many answers as the task asks for, no more
    t = _in_frames(_table)
    return None if t is None else int(where(t).sum())

def x_bit_from_counts(count, target):
    def trait(v):
        t = getattr(v, "_trait", None) if not isinstance(v, dict) else None
        return None if t is None else int(t[list(v._people["Name"]).index(target)])
    return _in_frames(trait)
"""


def _reachable(roots, depth=6):
    """Every object reachable from ``roots`` through containers, attributes, closures
    and slots, ``depth`` steps deep."""
    seen, layer = {}, list(roots)
    for _ in range(depth):
        nxt = []
        for obj in layer:
            if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type(None))):
                continue
            if isinstance(obj, type) or inspect.ismodule(obj):
                continue
            seen[id(obj)] = obj
            if isinstance(obj, dict):
                nxt += list(obj.values())
            elif isinstance(obj, (list, tuple, set)):
                nxt += list(obj)
            if inspect.isfunction(obj):
                nxt += [c.cell_contents for c in (obj.__closure__ or ())
                        if _has_contents(c)] + list(obj.__defaults__ or ())
            if inspect.ismethod(obj):
                nxt.append(obj.__self__)
            if hasattr(obj, "__dict__") and not inspect.isfunction(obj):
                nxt += list(vars(obj).values())
            for klass in type(obj).__mro__:
                for slot in getattr(klass, "__slots__", ()):
                    if hasattr(obj, slot):
                        nxt.append(getattr(obj, slot))
                nxt += [v for k, v in vars(klass).items()
                        if inspect.isfunction(v) and not k.startswith("__")]
        layer = nxt
    return list(seen.values())


def _has_contents(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def test_the_a2_servers_hold_no_truth_anywhere_the_students_code_can_reach():
    """What x_bit_from_counts and recover_count can reach from their frames: no table
    with the trait, no true count or bit (the checks run in-process here)."""
    import numpy as np
    import pandas as pd

    from dpteach.coursework import assignments

    for key, name in (("Task 1", "x_bit_from_counts"), ("Task 3a", "recover_count")):
        task = assignments._task("A2", key)
        for seed in range(3):
            request, truth = task.request(np.random.default_rng(seed))
            found = []

            def probe(server, arg, found=found):
                frames = [f.frame for f in inspect.stack(0)[1:4]]   # call, collect, ...
                roots = [server, arg] + [dict(f.f_locals) for f in frames]
                found += _reachable(roots)
                return None

            task.collect({name: probe}, request)
            tables = [o for o in found if isinstance(o, pd.DataFrame)]
            assert tables and all("Trait" not in t.columns for t in tables)
            assert not any(type(o).__name__ == "NaiveNoisyServer" for o in found)
            assert not any(isinstance(o, np.ndarray) and o.dtype.kind in "iu"
                           and o.size < 100 for o in found)    # no trait column


def _write(folder, name, nb):
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def attacks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("attacks")
    report = folder / "grades.csv"
    before = hashlib.sha256(DEMO_FILE.read_bytes()).hexdigest()
    paths = {
        "kill_parent": _write(folder, "A0_kill_parent", _a0_with(
            "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")),
        "delete_folder": _write(folder, "A0_delete_folder", _a0_with(
            "import os, shutil\nshutil.rmtree(os.getcwd(), ignore_errors=True)")),
        "edit_kit": _write(folder, "A0_edit_kit", _a0_with(f"""\
from pathlib import Path
p = Path({str(DEMO_FILE)!r})
src = p.read_text()
src = src.replace('return answers["answer"]', 'return 42')
p.write_text(src)""")),
        "outlive": _write(folder, "A0_outlive", _a0_with(f"""\
import subprocess
script = ("sleep 5; printf 'notebook,task,passed,message\\\\nA0_outlive.ipynb,Task 1,True,ok\\\\n'"
          " > {report}; sleep {MARKER}")
subprocess.Popen(["sh", "-c", script], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)""")),
        "truth_from_stack": _write(folder, "A2_truth_from_stack", _plus(_blank("A2"), STACK)),
        # runs the code of a classmate's hand-in found next to its own
        "copy_classmate": _write(folder, "A0_copy_classmate", _plus(exercise(), f"""\
import json
from pathlib import Path
for cell in json.loads(Path({str(folder / "A0_zz_solution_last.ipynb")!r}).read_text())["cells"]:
    if cell["cell_type"] == "code" and "check" not in "".join(cell["source"]):
        exec("".join(cell["source"]))""")),
    }
    for name, source in CAPTURES.items():
        paths[name] = _write(folder, f"A1_{name}", _plus(_blank("A1"), source))
    paths["blank_after_edit"] = _write(folder, "A0_zz_blank_after_edit", exercise())
    paths["solution_last"] = _write(folder, "A0_zz_solution_last", solution())
    order = list(paths)
    kwargs = {"jobs": 2} if "jobs" in inspect.signature(grading.grade).parameters else {}
    after = None
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(grading, "NAMEABLE", grading.NAMEABLE | {"A0"})
            rows = grading.grade([paths[k] for k in order], timeout=60, task_timeout=30,
                                 report=report, **kwargs)
        after = hashlib.sha256(DEMO_FILE.read_bytes()).hexdigest()
    finally:
        if after != before:                   # never leave an edited kit behind
            import subprocess
            subprocess.run(["git", "checkout", "--", str(DEMO_FILE)], cwd=ROOT, check=False)
    by = {}
    for r in rows:
        key = next(k for k in order if str(r.notebook).endswith(paths[k].name))
        by.setdefault(key, []).append(r)
    return {"by": by, "report": report, "kit_unchanged": after == before, "paths": paths}


def _points(rows):
    return sum(float(r.points) for r in rows)


@pytest.mark.slow
def test_the_truth_cannot_be_read_from_the_call_stack(attacks):
    rows = {r.task: r for r in attacks["by"]["truth_from_stack"]}
    for task in ("Task 1", "Task 3a"):
        assert not rows[task].passed, rows[task]
    assert _points(attacks["by"]["truth_from_stack"]) == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_a_forbidden_function_is_absent_however_it_is_captured(attacks, name):
    rows = {r.task: r for r in attacks["by"][name]}
    assert not rows["Task 3"].passed, rows["Task 3"]
    assert _points(attacks["by"][name]) == 0


@pytest.mark.slow
def test_the_kit_cannot_be_edited_on_disk(attacks):
    assert attacks["kit_unchanged"]
    assert _points(attacks["by"]["edit_kit"]) == 0
    assert _points(attacks["by"]["blank_after_edit"]) == 0


def _processes_with(marker):
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
                state = (proc / "status").read_text()
            except OSError:
                continue
            if marker.encode() in cmdline and "\nState:\tZ" not in state:
                found.append(int(proc.name))
    return found


@pytest.mark.slow
def test_no_process_outlives_its_sandbox_to_rewrite_the_report(attacks):
    assert _processes_with(MARKER) == []
    assert _points(attacks["by"]["outlive"]) == 0
    with open(attacks["report"], newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    assert tuple(lines[0]) == grading.FIELDS
    assert len(lines) - 1 == sum(len(v) for v in attacks["by"].values())


@pytest.mark.slow
def test_other_hand_ins_and_the_report_are_out_of_sight(attacks):
    assert _points(attacks["by"]["copy_classmate"]) == 0
    assert _points(attacks["by"]["solution_last"]) == 4


@pytest.mark.slow
def test_deleting_the_grading_folder_fails_only_that_notebook(attacks):
    rows = attacks["by"]["delete_folder"]
    assert rows and _points(rows) == 0
    assert _points(attacks["by"]["solution_last"]) == 4


@pytest.mark.slow
def test_killing_the_kernels_parent_fails_only_that_notebook(attacks):
    rows = attacks["by"]["kill_parent"]
    assert rows and _points(rows) == 0
    assert [r.task for r in rows] == ["Task 1", "Task 2", "Task 3"]
    assert _points(attacks["by"]["solution_last"]) == 4
