"""The nbgrader export (`make nbgrader`, dpteach/coursework/nbgrader_export.py).

Fast tests check the source format without nbgrader. The slow test runs the real
nbgrader (installed by `make nbgrader-setup` into .venv-nbgrader, apart from the kit's
.venv because it pins its own Jupyter stack): `nbgrader generate_assignment` on every
assignment, then `nbgrader autograde` of two students per assignment, one who hands in
the worked solution (full marks on every auto-graded cell) and one who hands in the
blank release (zero on every auto-graded cell).
"""

import ast
import json
import os
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from dpteach.coursework import assignments, nbgrader_export, student_copies

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "notebooks" / "solutions"
NBGRADER_BIN = ROOT / ".venv-nbgrader" / "bin"
#: a guard against a hung kernel, not a speed target (speed is measured in benchmarks/)
HANG_SECONDS = 1800
#: the assignment on which a cheating hand-in shows what nbgrader's autograder cannot stop
CHEAT_ASSIGNMENT = "A4"


def _nbgrader_cells(nb):
    return [(c, c.metadata["nbgrader"]) for c in nb.cells if "nbgrader" in c.metadata]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    folder = tmp_path_factory.mktemp("course")
    written = nbgrader_export.export(folder, SOLUTIONS)
    return folder, written


def test_every_assignment_is_exported_with_a_config(course):
    folder, written = course
    assert sorted(p.parent.name for p in written) == sorted(assignments.ASSIGNMENTS)
    for path in written:
        assert path.name in {p.name for p in SOLUTIONS.glob("*.ipynb")}
    config = (folder / "nbgrader_config.py").read_text(encoding="utf-8")
    compile(config, "nbgrader_config.py", "exec")
    assert "ClearSolutions.code_stub" in config and "Execute.timeout" in config


def test_cells_carry_valid_nbgrader_metadata(course):
    _, written = course
    for path in written:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        ids = [meta["grade_id"] for _, meta in _nbgrader_cells(nb)]
        assert len(ids) == len(set(ids)), path.name
        assert len({c.id for c in nb.cells}) == len(nb.cells)
        for cell, meta in _nbgrader_cells(nb):
            assert meta["schema_version"] == 3
            assert set(meta) >= {"grade", "solution", "locked", "grade_id"}
            if meta["grade"]:
                assert meta["points"] > 0
            if cell.cell_type == "code" and meta["solution"]:
                assert nbgrader_export.BEGIN in cell.source and nbgrader_export.END in cell.source
                ast.parse(cell.source)          # the instructor's version runs
            if meta["grade"] and not meta["solution"]:
                assert meta["locked"] and "assert feedback.passed" in cell.source
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_test_cells_match_the_task_modules(course):
    """One locked test cell per task, worth its points; a Task with held-out inputs is
    checked again in a hidden part."""
    _, written = course
    for path in written:
        key = path.parent.name
        try:
            tasks = assignments.tasks(key)
        except (ImportError, ValueError):
            continue
        nb = nbformat.read(path, as_version=4)
        tests = [(c, m) for c, m in _nbgrader_cells(nb) if m["grade"] and not m["solution"]]
        assert [m["points"] for _, m in tests] == [t.points for t in tasks], key
        for (cell, _), task in zip(tests, tasks):
            assert f'"{key}", "{task.key}"' in cell.source
            assert nbgrader_export.BEGIN_HIDDEN in cell.source
            assert nbgrader_export.END_HIDDEN in cell.source


def test_solution_regions_leave_the_kits_stub():
    src = '''# Task 3: the audit
# hint: Delta is 10
import numpy as np

def release(values, epsilon, rng):
    """One release."""
    # clip first
    return float(np.sum(values)) + rng.laplace(0, 10 / epsilon)

answer = release([1], 1.0, np.random.default_rng(0))
'''
    out = nbgrader_export.solution_source(src, keep={"answer"})
    assert out.splitlines()[:2] == ["# Task 3: the audit", "answer = None"]
    # nbgrader's ClearSolutions: each region -> the configured stub
    cleared, skip = [], False
    for line in out.splitlines():
        if nbgrader_export.BEGIN in line:
            indent = line[:len(line) - len(line.lstrip())]
            cleared += [indent + s for s in nbgrader_export.CODE_STUB.splitlines()]
            skip = True
        elif nbgrader_export.END in line:
            skip = False
        elif not skip:
            cleared.append(line)
    stub = "\n".join(cleared)
    assert "hint" not in stub and "laplace" not in stub and "clip" not in stub
    namespace = {}
    exec(compile(stub, "<stub>", "exec"), namespace)
    assert namespace["answer"] is None and namespace["release"]([1], 1.0, None) is None
    # the instructor's version still runs and computes the answer
    namespace = {}
    exec(compile(out, "<source>", "exec"), namespace)
    assert isinstance(namespace["answer"], float)


def test_make_nbgrader_writes_the_course(tmp_path):
    out = subprocess.run(["make", "-n", "nbgrader", f"NBGRADER_DIR={tmp_path}"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert f"dpteach nbgrader {tmp_path}" in out
    assert nbgrader_export.main([str(tmp_path), "--solutions", str(SOLUTIONS)]) == 0
    assert (tmp_path / "source" / "A1").is_dir() and (tmp_path / "nbgrader_config.py").exists()


# ------------------------------------------------------------------ the real nbgrader
def _run_nbgrader(folder, *args):
    env = {**os.environ, "PATH": f"{NBGRADER_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([str(NBGRADER_BIN / "nbgrader"), *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=HANG_SECONDS)


_SCORES = '''
import json, sys
from nbgrader.api import Gradebook
rows = []
with Gradebook("sqlite:///" + sys.argv[1]) as gb:
    for a in gb.assignments:
        for nb in a.notebooks:
            for cell in nb.grade_cells:
                for student in ("solved", "blank", "cheat"):
                    try:
                        g = gb.find_grade(cell.name, nb.name, a.name, student)
                    except Exception:
                        continue
                    rows.append([student, a.name, cell.name, cell.cell_type,
                                 g.auto_score, g.max_score])
print(json.dumps(rows))
'''


def _hand_in(folder):
    """submitted/solved/<A>/...: the release with every answer cell filled in from the
    source; submitted/blank/<A>/...: the release as it was handed out."""
    for release in sorted((folder / "release").glob("*/*.ipynb")):
        source = nbformat.read(folder / "source" / release.parent.name / release.name,
                               as_version=4)
        answers = {m["grade_id"]: c.source for c, m in _nbgrader_cells(source) if m["solution"]}
        for student in ("solved", "blank"):
            nb = nbformat.read(release, as_version=4)
            if student == "solved":
                for cell, meta in _nbgrader_cells(nb):
                    if meta["solution"]:
                        cell.source = "\n".join(
                            x for x in answers[meta["grade_id"]].splitlines()
                            if nbgrader_export.BEGIN not in x and nbgrader_export.END not in x)
            target = folder / "submitted" / student / release.parent.name / release.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, target)
        if release.parent.name == CHEAT_ASSIGNMENT:
            # the blank release plus one line that redefines the check
            nb = nbformat.read(release, as_version=4)
            first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
            nb.cells.insert(first + 1, nbformat.v4.new_code_cell(
                'dp.assignments.check = lambda *a, **k: dp.exercises.Feedback(True, "ok")'))
            target = folder / "submitted" / "cheat" / release.parent.name / release.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, target)


@pytest.mark.slow
def test_nbgrader_generates_and_autogrades_every_assignment(tmp_path):
    if not (NBGRADER_BIN / "nbgrader").exists():
        if os.environ.get("CI") == "true":
            pytest.fail("nbgrader is missing: run `make nbgrader-setup` (.venv-nbgrader)")
        pytest.skip("nbgrader is not installed: `make nbgrader-setup` (or `make test`) "
                    "creates .venv-nbgrader")
    t0 = time.perf_counter()
    written = nbgrader_export.export(tmp_path, SOLUTIONS)
    done = _run_nbgrader(tmp_path, "generate_assignment", "*", "--force")
    assert done.returncode == 0, done.stderr[-3000:]
    for path in written:
        release = tmp_path / "release" / path.parent.name / path.name
        text = release.read_text(encoding="utf-8")
        assert nbgrader_export.BEGIN not in text and nbgrader_export.BEGIN_HIDDEN not in text
        # no line of a worked answer survives that the kit's own exercise leaves out
        solution = nbformat.read(SOLUTIONS / path.name, as_version=4)
        exercise = json.dumps(student_copies.make_exercise(solution))
        for cell in solution.cells:
            if student_copies.SOLUTION_TAG in cell.metadata.get("tags", []):
                for line in cell.source.splitlines():
                    line = line.strip()
                    if len(line) > 12 and json.dumps(line)[1:-1] not in exercise:
                        assert json.dumps(line)[1:-1] not in text, (path.name, line)
    _hand_in(tmp_path)
    done = _run_nbgrader(tmp_path, "autograde", "*", "--create", "--force")
    assert done.returncode == 0, done.stderr[-3000:]
    out = subprocess.run([str(NBGRADER_BIN / "python"), "-c", _SCORES,
                          str(tmp_path / "gradebook.db")], capture_output=True, text=True,
                         check=True).stdout
    rows = json.loads(out)
    seconds = time.perf_counter() - t0
    auto = [r for r in rows if r[3] == "code"]
    assert {r[1] for r in auto} == {p.parent.name for p in written}
    solved = [r for r in auto if r[0] == "solved"]
    blank = [r for r in auto if r[0] == "blank"]
    assert solved and len(solved) == len(blank)
    assert all(r[4] == r[5] for r in solved), [r for r in solved if r[4] != r[5]]
    assert all(r[4] == 0 for r in blank), [r for r in blank if r[4] != 0]
    # nbgrader's tests run in the student's kernel: one redefined check fools them
    # (notebooks/README.md says so; make grade scores the same trick 0, test_grading.py)
    cheat = [r for r in auto if r[0] == "cheat"]
    assert cheat and {r[1] for r in cheat} == {CHEAT_ASSIGNMENT}
    assert all(r[4] == r[5] for r in cheat), cheat
    written_answers = [r for r in rows if r[3] == "markdown" and r[0] == "blank"]
    assert all(r[4] == 0 for r in written_answers)      # an untouched answer cell scores 0
    print(f"nbgrader: {len(solved)} auto-graded cells in {len(written)} assignments, "
          f"{seconds:.0f} s")


def test_a_written_tasks_points_are_read_from_its_heading():
    """'(2 points)' and '(2 points, not auto-graded)' both give 2; no count gives none."""
    from dpteach.coursework.nbgrader_export import _POINTS

    assert _POINTS.search("## Task 4 · In your own words (2 points)").group(1) == "2"
    assert _POINTS.search("## Task 3 · In your own words (2 points, not auto-graded)").group(1) == "2"
    assert _POINTS.search("## Task 1 (1 point)").group(1) == "1"
    assert _POINTS.search("## Task 5 · In your own words (not auto-graded)") is None
