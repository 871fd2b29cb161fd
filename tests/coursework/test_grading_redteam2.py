"""The grader attacked again, by a student who read its source (after issue 30's red team):
each route that earned something or kept a forbidden function alive, as a test that
fails on the grader before its fix. Every test here is quick: no notebook is graded;
each builds the piece of the grader the attack went through (the sandbox's command,
the kernel's kit, the no-sandbox stubs) and tries the attack on it directly.

1. **Peers in the grading environment.** `dpteach grade` run from the test environment
   (no `.venv-grade` beside the kit, so the grading Python is this one) used to show the
   sandbox the whole site-packages: pycanon answered A1 Task 3 (l-diversity) and
   dp_accounting A9 Task 3 (subsampled RDP). The sandbox now shows only the kit's
   runtime and grading requirements, closed over what they require.
2. **A forbidden function made by a call.** The kernel's kit removed forbidden
   functions only where they were a ``def`` or a ``class``: one bound by an assignment
   (``answer = checked(...)(_formula)``, the form a declared-checks decorator takes when
   it is not written with ``@``) was dropped from the removal and kept its body. Such a
   name is now rewritten to raise like a function; a decorated ``def`` loses its
   decorators with its body, so no ``__wrapped__`` survives.
3. **The body behind a decorator, without the sandbox.** ``--no-sandbox`` stubs
   forbidden functions in the kernel by swapping their code; a function wrapped by a
   decorator (``functools.wraps``) has a closure, so only the module bindings were
   swapped and the wrapper kept anywhere else (a registry, a default argument,
   ``__wrapped__``) still ran the body. The stubs now follow ``__wrapped__`` and make
   every function in that chain raise.
4. **A copy of a module left in the kit.** The kernel's kit was the kit folder copied
   whole, each module rewritten by the plan: a file beside a module that is not one
   (``sensitivity.py.orig`` from a merge, ``sensitivity.py~`` from an editor) went in
   verbatim, and a module copied under another name (``sensitivity_copy.py``) kept its
   own unremoved ``global_sensitivity``. The kit now holds only importable modules and
   the package data the kit declares, and a function or class whose code is that of a
   removed one is removed too.
5. **Two hand-ins, one name.** The report made every name safe by removing what
   cannot be seen (control and format characters): ``A0_bob.ipynb`` and
   ``A0_bob<U+200B>.ipynb``, graded in one batch, came out under one name, their rows
   mixed and their totals summed into one line (2 of 8 points, 6 tasks), and the check
   that every notebook has its rows could not tell one was missing. Names now keep such
   characters as escapes (``\\u200b``).
6. **A hand-in that is not a file.** The grader read every hand-in whole, following
   links: a FIFO among the hand-ins (a tar or zip of a student's work can hold one)
   hung the whole batch before its first notebook, with no report written; a symbolic
   link to another student's notebook (``A0_mallory.ipynb -> ../alice/...``) graded
   that notebook under the link's name, full marks included; and a 300 MB notebook took
   the grader to 1 GB of memory (three times its size, for every hand-in of the batch at
   once). A hand-in is now read only as a regular file, never through a link, and at
   most 64 MiB; anything else gets its ``(notebook)`` row saying why.
7. **A notebook nested too deeply to parse.** 200,000 nested lists in its metadata made
   the JSON parser raise RecursionError, which reached the generic "could not grade"
   row without the assignment or its points (0 / 0). It is now a notebook that is not
   valid JSON, with the assignment's points (0 / 4 for A0).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import pytest

from dpteach.coursework import _kernel_kit as kk
from dpteach.coursework import _kernel_cells, _sandbox

#: modules of the test environment a grading kernel must not find, and some it needs
PEERS = ("pycanon", "dp_accounting", "diffprivlib", "opendp", "pytest", "sklearn",
         "hypothesis")
NEEDED = ("numpy", "scipy", "pandas", "matplotlib", "ipykernel", "nbclient", "ipywidgets")


def _in_sandbox(code, python=sys.executable):
    """Run ``code`` with ``python`` in a sandbox as the grader builds it (no kit)."""
    ready, why = _sandbox.available()
    if not ready:
        pytest.skip(why)
    with tempfile.TemporaryDirectory(prefix="redteam2_") as job:
        cmd = _sandbox.command(job, [python, "-I", "-c", code], kit=None,
                               limits=_sandbox.Limits(disk=16 * 1024 ** 2), python=python)
        out = _sandbox._run_with_args(cmd, timeout=120)
    assert out.returncode == 0, out.stderr.decode("utf-8", "replace")[-2000:]
    return json.loads(out.stdout)


def test_a_grading_python_with_peers_shows_the_sandbox_none_of_them():
    present = [m for m in PEERS if importlib.util.find_spec(m) is not None]
    if not present:
        pytest.skip("this environment holds no peer library to hide")
    code = ("import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not "
            f"None for m in {list(PEERS + NEEDED)!r}}}))")
    found = _in_sandbox(code)
    assert [m for m in PEERS if found[m]] == [], found
    assert all(found[m] for m in NEEDED), found


def test_the_kernel_s_requirements_are_the_runtime_and_the_grading_extra():
    names = {r.split(">")[0].split("<")[0].split("=")[0].strip().lower()
             for r in _sandbox.kernel_requirements()}
    assert {"numpy", "scipy", "pandas", "nbclient", "ipykernel"} <= names
    assert not names & {"pytest", "dp-accounting", "pycanon", "diffprivlib", "opendp"}


# ------------------------------------------------------------------ 2. made by a call
FAKE_LESSON = """\
import functools


def _checked(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def _formula(x):
    return 2 * x


answer = _checked(_formula)


@_checked
def decorated_answer(x):
    return 3 * x


def kept(x):
    return x + 1
"""

FAKE_PROBE = """\
import json
from dpteach import lesson
out = {"kept": lesson.kept(1)}
for name in ("answer", "decorated_answer", "_formula"):
    fn = getattr(lesson, name)
    out[name + "_wrapped"] = hasattr(fn, "__wrapped__")
    try:
        out[name] = fn(1)
    except RuntimeError as err:
        out[name] = "removed" if "not available while" in str(err) else str(err)
print(json.dumps(out))
"""


def test_a_forbidden_function_bound_by_an_assignment_is_removed(tmp_path, monkeypatch):
    kit = tmp_path / "src" / "dpteach"
    kit.mkdir(parents=True)
    (kit / "__init__.py").write_text("CONTRACT = ()\n")
    (kit / "lesson.py").write_text(FAKE_LESSON)
    monkeypatch.setattr(kk, "KIT", kit)
    plan = kk.plan([], ["dpteach.lesson:answer", "dpteach.lesson:decorated_answer"])
    assert {("dpteach.lesson", "answer"), ("dpteach.lesson", "_formula")} <= plan.removed
    assert "dpteach.lesson" not in plan.no_import
    built = kk.build(tmp_path / "built", plan)
    out = subprocess.run([sys.executable, "-S", "-c", FAKE_PROBE], capture_output=True,
                         text=True, env={"PYTHONPATH": str(built), "PATH": os.environ["PATH"]},
                         cwd=str(tmp_path), timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"kept": 2, "answer": "removed", "answer_wrapped": False,
                    "decorated_answer": "removed", "decorated_answer_wrapped": False,
                    "_formula": "removed", "_formula_wrapped": False}, seen


# ------------------------------------------------------------------ 3. behind a decorator
STUB_PROBE = """\
import functools, json, sys, types
module = types.ModuleType("dpteach._redteam2_fake")
sys.modules[module.__name__] = module
def _checked(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper
def formula(x):
    return 2 * x
formula.__module__ = module.__name__
module.formula = _checked(formula)
module.formula.__module__ = module.__name__
REGISTRY = {"formula": module.formula}           # a declared-checks registry, say
exec(sys.argv[1])
out = {}
for label, fn in (("module", module.formula), ("registry", REGISTRY["formula"]),
                  ("wrapped", REGISTRY["formula"].__wrapped__)):
    try:
        out[label] = fn(1)
    except RuntimeError as err:
        out[label] = "removed" if "not available while" in str(err) else str(err)
print(json.dumps(out))
"""


def test_without_the_sandbox_a_decorated_forbidden_function_keeps_no_body():
    cell = _kernel_cells.stub_cell(["dpteach._redteam2_fake:formula"])
    out = subprocess.run([sys.executable, "-c", STUB_PROBE, cell], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == {"module": "removed", "registry": "removed",
                                      "wrapped": "removed"}


# ------------------------------------------------------------------ 4. copies in the kit
COPY_PROBE = """\
import json
from dpteach import sensitivity_copy
try:
    out = float(sensitivity_copy.global_sensitivity(sum, [0, 1, 2, 3], 2))
except RuntimeError as err:
    out = "removed" if "not available while" in str(err) else str(err)
print(json.dumps(out))
"""


def test_a_copy_of_a_module_left_in_the_kit_gives_nothing_back(tmp_path, monkeypatch):
    import shutil

    from dpteach.coursework import assignments, grading

    kit = tmp_path / "src" / "dpteach"
    shutil.copytree(kk.KIT, kit, ignore=shutil.ignore_patterns("__pycache__"))
    source = (kit / "sensitivity.py").read_text(encoding="utf-8")
    for name in ("sensitivity.py.orig", "sensitivity.py~", ".sensitivity.py.swp",
                 "sensitivity_copy.py"):
        (kit / name).write_text(source, encoding="utf-8")
    monkeypatch.setattr(kk, "KIT", kit)
    tasks = assignments.tasks("A3")
    (members, targets, needs), = grading._groups(tasks)
    plan = kk.plan(tasks, targets, needs)
    assert ("dpteach.sensitivity_copy", "global_sensitivity") in plan.removed
    built = kk.build(tmp_path / "built", plan)
    names = {p.name for p in (built / "dpteach").iterdir()}
    assert not names & {"sensitivity.py.orig", "sensitivity.py~", ".sensitivity.py.swp"}
    out = subprocess.run([sys.executable, "-c", COPY_PROBE], capture_output=True, text=True,
                         env={"PYTHONPATH": str(built), "PATH": os.environ["PATH"],
                              "MPLBACKEND": "Agg", "HOME": str(tmp_path)},
                         cwd=str(tmp_path), timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == "removed"


# ------------------------------------------------------------------ 5. one name for two
@pytest.mark.parametrize("twin", ["A0_bob\u200b.ipynb", "A0_bob\x07.ipynb",
                                  "A0_bob\u202e.ipynb", "A0_bob\n.ipynb", "A0_\x1b[0mbob.ipynb"])
def test_names_differing_in_what_cannot_be_seen_keep_their_own_rows(twin):
    from dpteach.coursework import grading
    from dpteach.coursework._grade_report import report_name, safe_text

    rows = [grading.Row(name, "Task 1", True, "ok", 1, 1, "A0")
            for name in ("A0_bob.ipynb", twin)]
    assert rows[0].notebook != rows[1].notebook
    assert len(grading.totals(rows)) == 2
    assert report_name(twin) == rows[1].notebook != report_name("A0_bob.ipynb")
    assert safe_text(rows[1].notebook) == rows[1].notebook      # nothing left to hide


# ------------------------------------------------------------------ 6. not a file
def _refused_row(path):
    from dpteach.coursework import grading

    rows = grading.grade_notebook(str(path), assignment="A0", sandbox=False, name=path.name)
    assert len(rows) == 1 and rows[0].task == "(notebook)" and not rows[0].passed, rows
    return rows[0].message


def test_a_fifo_among_the_hand_ins_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "A0_fifo.ipynb"
    os.mkfifo(fifo)
    done = []
    import threading

    worker = threading.Thread(target=lambda: done.append(_refused_row(fifo)), daemon=True)
    worker.start()
    worker.join(20)
    assert done and "not a regular file" in done[0], done


def test_a_link_to_another_hand_in_grades_nothing(tmp_path):
    from test_grading import solution
    import nbformat

    alice = tmp_path / "alice" / "A0_alice.ipynb"
    alice.parent.mkdir()
    nbformat.write(solution(), alice)
    mallory = tmp_path / "A0_mallory.ipynb"
    mallory.symlink_to(alice)
    assert "symbolic link" in _refused_row(mallory)


def test_a_hand_in_past_the_size_cap_is_refused_unread(tmp_path, monkeypatch):
    from dpteach.coursework import grading

    monkeypatch.setattr(grading, "MAX_NOTEBOOK_BYTES", 1024)
    big = tmp_path / "A0_big.ipynb"
    big.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                               "cells": [{"cell_type": "markdown", "metadata": {},
                                          "source": "x" * 4096}]}))
    assert "larger than" in _refused_row(big)


# ------------------------------------------------------------------ 7. nested too deeply
def test_a_notebook_nested_too_deeply_is_refused_with_its_points(tmp_path):
    from dpteach.coursework import grading

    depth = 200_000
    deep = tmp_path / "A0_deep.ipynb"
    deep.write_text('{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"x": ' +
                    "[" * depth + "]" * depth + "}}")
    (row,) = grading.grade_notebook(str(deep), assignment="A0", sandbox=False, name="A0_deep")
    assert row.task == "(notebook)" and row.max_points == 4, row
    assert "not valid JSON" in row.message, row.message
