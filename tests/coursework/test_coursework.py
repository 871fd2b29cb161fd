"""Coursework: the exercise generator and the assignment notebooks.

* the committed notebooks/exercises/ are exactly what ``python -m
  dpteach.coursework.student_copies`` (``make exercises``) writes from notebooks/solutions/;
* every solution notebook runs from a clean kernel with no error and every check it
  prints passes (✅, never ❌ or ⏳);
* every exercise notebook runs from a clean kernel with no error and every check it
  prints reports "not yet solved" (⏳).
"""

import json
import time
from pathlib import Path

import nbformat
import pytest

from dpteach.coursework import student_copies

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "notebooks" / "solutions"
EXERCISES = ROOT / "notebooks" / "exercises"
SOLUTION_FILES = sorted(SOLUTIONS.glob("*.ipynb"))
EXERCISE_FILES = sorted(EXERCISES.glob("*.ipynb"))
MARKS = ("✅", "❌", "⏳")
#: run-time budget of one assignment notebook, kernel start included
#: how long an assignment notebook may take is measured in benchmarks/bench_notebooks.py
#: (<= 30 s each); a test only guards against a hung cell
CELL_HANG_SECONDS = 900


# ------------------------------------------------------------------ the generator
def test_there_are_at_least_six_assignments_each_with_solution_cells():
    assert len(SOLUTION_FILES) >= 6
    for path in SOLUTION_FILES:
        nb = nbformat.read(path, as_version=4)
        tagged = [c for c in nb.cells if student_copies.SOLUTION_TAG in c.metadata.get("tags", [])]
        graded = [c for c in nb.cells if c.cell_type == "code"
                  and ("dp.exercises.check_" in c.source or "dp.assignments.check(" in c.source)]
        assert len(tagged) >= 3, path.name
        assert len(graded) >= 3, path.name


def test_committed_exercises_match_the_generator(tmp_path, monkeypatch):
    written = student_copies.generate(SOLUTIONS, tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in SOLUTION_FILES)
    assert sorted(p.name for p in EXERCISE_FILES) == sorted(p.name for p in written), \
        ("run `make exercises` (python -m dpteach.coursework.student_copies) and commit "
         "notebooks/exercises/")
    for path in written:
        fresh = json.loads(path.read_text(encoding="utf-8"))
        committed = json.loads((EXERCISES / path.name).read_text(encoding="utf-8"))
        assert fresh == committed, (f"{path.name} is out of date: run `make exercises` "
                                    "(python -m dpteach.coursework.student_copies) and commit "
                                    "the result")
    assert student_copies.stale(SOLUTIONS, EXERCISES) == []
    monkeypatch.chdir(ROOT)                  # the default folders are the current folder's
    assert student_copies.main(["--check"]) == 0


def test_stale_notices_an_edited_exercise(tmp_path):
    student_copies.generate(SOLUTIONS, tmp_path)
    victim = sorted(tmp_path.glob("*.ipynb"))[0]
    nb = nbformat.read(victim, as_version=4)
    nb.cells[0].source += "\nedited"
    nbformat.write(nb, victim)
    (tmp_path / "Z9_orphan.ipynb").write_text(victim.read_text(encoding="utf-8"), encoding="utf-8")
    assert student_copies.stale(SOLUTIONS, tmp_path) == sorted([victim.name, "Z9_orphan.ipynb"])
    assert student_copies.main(["--check", "--solutions", str(SOLUTIONS),
                            "--exercises", str(tmp_path)]) == 1
    student_copies.generate(SOLUTIONS, tmp_path)                 # repairs and removes the orphan
    assert student_copies.stale(SOLUTIONS, tmp_path) == []
    assert not (tmp_path / "Z9_orphan.ipynb").exists()


def test_exercises_keep_no_solution_code_and_no_outputs():
    for path in EXERCISE_FILES:
        sol = nbformat.read(SOLUTIONS / path.name, as_version=4)
        ex = nbformat.read(path, as_version=4)
        assert [c.id for c in sol.cells] == [c.id for c in ex.cells]
        for s_cell, e_cell in zip(sol.cells, ex.cells):
            if e_cell.cell_type == "code":
                assert e_cell.outputs == [] and e_cell.execution_count is None
            if student_copies.SOLUTION_TAG in s_cell.metadata.get("tags", []):
                if s_cell.cell_type == "code":
                    assert student_copies.YOUR_CODE in e_cell.source
                    # nothing of the worked solution survives except task headers,
                    # function signatures with docstrings and the name = None stubs
                    _assert_is_a_stub(e_cell.source, path.name)
                else:
                    assert e_cell.source == student_copies.WRITTEN_PROMPT
            else:
                assert e_cell.source == s_cell.source


def _assert_is_a_stub(source, where):
    import ast

    for line in source.splitlines():
        if line.strip().startswith("#"):
            assert line.strip().startswith(("# Task", "# YOUR")), (where, line)
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str) and len(body) > 1:
                body = body[1:]                                  # the docstring
            assert len(body) == 1 and ast.unparse(body[0]) == "...", (where, node.name)
        elif isinstance(node, ast.ClassDef):
            assert ast.unparse(node).endswith("..."), (where, node.name)
        else:
            assert isinstance(node, ast.Assign) and ast.unparse(node.value) == "None", \
                (where, ast.unparse(node))


def test_blank_source():
    src = '''# Task 3: the audit
# hint: Delta is 10, so the scale is 10 / epsilon
import numpy as np

def release(values, epsilon, rng):
    """One release."""
    return float(np.sum(values)) + rng.laplace(0, 10 / epsilon)

helper = [1, 2]
answer, other = release(helper, 1.0, np.random.default_rng(0)), 3
for _ in range(3):
    total = 1
'''
    out = student_copies.blank_source(src)
    assert out.splitlines()[:2] == ["# Task 3: the audit", "# YOUR CODE HERE"]
    assert "hint" not in out and "laplace" not in out and "import" not in out
    assert 'def release(values, epsilon, rng):\n    """One release."""\n    ...' in out
    for name in ("helper", "answer", "other", "total"):
        assert f"{name} = None" in out
    assert "_ = None" not in out
    kept = student_copies.blank_source(src, keep={"answer", "release"})
    assert "answer = None" in kept and "helper = None" not in kept and "def release" in kept
    # a stub is valid Python that defines every kept name
    namespace = {}
    exec(compile(kept, "<stub>", "exec"), namespace)
    assert namespace["answer"] is None and namespace["release"]([1], 1.0, None) is None
    # not Python (an IPython magic): keep the header only
    assert student_copies.blank_source("# Task 1\n%timeit 1 + 1") == "# Task 1\n# YOUR CODE HERE"


def test_generator_refuses_a_folder_without_solutions(tmp_path):
    with pytest.raises(FileNotFoundError):
        student_copies.generate(tmp_path / "none", tmp_path / "out")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    (tmp_path / "sol").mkdir()
    nbformat.write(nb, tmp_path / "sol" / "A0.ipynb")
    with pytest.raises(ValueError, match="solution"):
        student_copies.generate(tmp_path / "sol", tmp_path / "out")


# ------------------------------------------------------------------ running the notebooks
def _run(path):
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_HANG_SECONDS, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - t0


def _outputs(nb):
    """(errors, texts): error outputs and every text/plain, text/markdown or stream text."""
    errors, texts = [], []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            if out.output_type == "error":
                errors.append(f"{out.ename}: {out.evalue}")
            elif out.output_type == "stream":
                texts.append(out.text)
            else:
                data = out.get("data", {})
                texts += [data[k] for k in ("text/markdown", "text/plain") if k in data]
    return errors, texts


def _marks(texts):
    return {m: sum(t.count(m) for t in texts) for m in MARKS}


def test_committed_solutions_show_only_passing_checks():
    for path in SOLUTION_FILES:
        errors, texts = _outputs(nbformat.read(path, as_version=4))
        marks = _marks(texts)
        assert not errors, (path.name, errors)
        assert marks["✅"] >= 3 and marks["❌"] == 0 and marks["⏳"] == 0, (path.name, marks)


@pytest.mark.slow
@pytest.mark.parametrize("path", SOLUTION_FILES, ids=lambda p: p.stem)
def test_solution_notebook_runs_and_every_check_passes(path):
    nb, seconds = _run(path)
    errors, texts = _outputs(nb)
    marks = _marks(texts)
    assert not errors, errors
    assert marks["✅"] >= 3, marks
    assert marks["❌"] == 0 and marks["⏳"] == 0, [t for t in texts if "❌" in t or "⏳" in t]
    print(f"{path.name}: {seconds:.1f} s")


@pytest.mark.slow
@pytest.mark.parametrize("path", EXERCISE_FILES, ids=lambda p: p.stem)
def test_exercise_notebook_runs_and_reports_not_yet_solved(path):
    nb, seconds = _run(path)
    errors, texts = _outputs(nb)
    marks = _marks(texts)
    assert not errors, errors
    assert marks["⏳"] >= 3, marks
    assert marks["✅"] == 0 and marks["❌"] == 0, [t for t in texts if "✅" in t or "❌" in t]
    assert "not yet solved" in "".join(texts)
    print(f"{path.name}: {seconds:.1f} s")


def test_exercises_name_their_assignment_in_the_metadata():
    for path in EXERCISE_FILES:
        nb = nbformat.read(path, as_version=4)
        assert nb.metadata["dpteach"]["assignment"] == student_copies.assignment_of(path.name)
        assert nb.metadata["dpteach"]["assignment"] == path.name.split("_")[0]


# ------------------------------------------------------------------ make grade on A1-A6
def _graded_assignments():
    """(assignment, solution, exercise) for each assignment whose tasks exist in
    dpteach.coursework.assignments and whose solution notebook calls dp.assignments.check."""
    from dpteach.coursework import assignments

    out = []
    for path in SOLUTION_FILES:
        key = student_copies.assignment_of(path.name)
        try:
            assignments.tasks(key)
        except (ImportError, ValueError):
            continue
        if "dp.assignments.check(" in path.read_text(encoding="utf-8"):
            out.append(pytest.param(key, path, EXERCISES / path.name, id=key))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("key, solution, exercise", _graded_assignments())
def test_make_grade_gives_the_solution_full_marks_and_the_exercise_zero(key, solution,
                                                                         exercise, tmp_path):
    """... and zero to the exercise with every check redefined to pass."""
    from dpteach.coursework import assignments, grading

    handed_in = tmp_path / f"student_{exercise.name}"       # renamed: metadata names it
    handed_in.write_bytes(exercise.read_bytes())
    # the blank exercise with every check redefined to pass and print ✅
    nb = nbformat.read(exercise, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        "import dpteach as dp\n"
        "ok = dp.exercises.Feedback(True, 'correct')\n"
        "dp.assignments.check = lambda *a, **k: ok\n"
        "dp.exercises.Feedback.__repr__ = lambda self: '✅ ' + self.message"))
    cheat = tmp_path / f"cheat_{exercise.name}"
    nbformat.write(nb, cheat)
    rows = grading.grade([solution, handed_in, cheat], timeout=120)
    keys = [t.key for t in assignments.tasks(key)]
    # the report names each notebook relative to the folder the batch shares
    name_solution, name_blank, name_cheat = grading._names([solution, handed_in, cheat])
    solved = [r for r in rows if r.notebook == name_solution]
    blank = [r for r in rows if r.notebook == name_blank]
    cheated = [r for r in rows if r.notebook == name_cheat]
    assert [r.task for r in solved] == keys and [r.task for r in blank] == keys
    assert [r.task for r in cheated] == keys
    assert all(r.passed for r in solved), [r for r in solved if not r.passed]
    assert not any(r.passed for r in blank), [r for r in blank if r.passed]
    assert not any(r.passed for r in cheated), [r for r in cheated if r.passed]
    assert {r.assignment for r in rows} == {key}


def test_coursework_does_not_grade():
    # grading has one home, dpteach.coursework.grading (``dpteach grade``)
    assert not hasattr(student_copies, "grade")
    with pytest.raises(SystemExit):
        student_copies.main(["--grade", "A1_mine.ipynb"])
