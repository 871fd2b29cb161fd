"""The `dpteach` command (dpteach/coursework/cli.py) and the course inside the wheel.

* `dpteach course [DIR]` writes the lessons, the student exercises and the guide, and
  refuses an existing folder unless --force;
* `dpteach exercises`, `dpteach nbgrader` read ./notebooks/solutions and write under the
  current folder, never under the package; without solutions they say which parameter;
* `dpteach grade ...` hands its arguments to dpteach.coursework.grading unchanged;
* a wheel built from a clean copy of the repository holds the lessons, the exercises and
  the guide but no solution, declares the console script, and once installed writes a
  course whose notebooks are valid.
"""

import configparser
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from dpteach.coursework import cli
from dpteach.coursework import grading, student_copies

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SOLUTIONS = NOTEBOOKS / "solutions"
PACKAGE = ROOT / "dpteach"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
EXERCISES = sorted(p.name for p in (NOTEBOOKS / "exercises").glob("*.ipynb"))
#: two assignments are enough to show where the generated files go
FEW = sorted(SOLUTIONS.glob("*.ipynb"))[:2]


def _tree(folder: Path) -> dict:
    """relative path -> bytes of every file under ``folder`` (caches left out)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def _expected_course() -> dict:
    """The course as the repository holds it: notebooks/ without solutions/."""
    return {k: v for k, v in _tree(NOTEBOOKS).items()
            if not k.startswith("solutions/") and ".ipynb_checkpoints" not in k}


@pytest.fixture
def few_solutions(tmp_path):
    """A folder like a clone's: ./notebooks/solutions holding two worked assignments."""
    folder = tmp_path / "notebooks" / "solutions"
    folder.mkdir(parents=True)
    for path in FEW:
        shutil.copyfile(path, folder / path.name)
    return folder


@pytest.fixture
def untouched():
    """Fails the test if anything under the package or notebooks/ changed."""
    before = (_tree(PACKAGE), _tree(NOTEBOOKS))
    yield
    assert (_tree(PACKAGE), _tree(NOTEBOOKS)) == before, "wrote into the repository's kit"


# ------------------------------------------------------------------ dpteach course
def test_course_writes_lessons_exercises_and_guide_into_the_current_folder(
        tmp_path, monkeypatch, capsys, untouched):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["course"]) == 0
    course = tmp_path / "dpteach-course"
    assert _tree(course) == _expected_course()
    assert sorted(p.name for p in course.glob("*.ipynb")) == LESSONS and len(LESSONS) >= 19
    assert sorted(p.name for p in (course / "exercises").glob("*.ipynb")) == EXERCISES
    assert not (course / "solutions").exists()
    out = capsys.readouterr().out
    assert "00_start_here.ipynb" in out and "exercises/A1_anonymity.ipynb" in out
    assert "jupyter lab dpteach-course" in out


def test_course_refuses_an_existing_folder_unless_forced(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["course", "mine"]) == 0
    lesson = tmp_path / "mine" / LESSONS[0]
    lesson.write_text("my notes")
    (tmp_path / "mine" / "keep.txt").write_text("a student's own file")
    capsys.readouterr()
    assert cli.main(["course", "mine"]) == 2
    err = capsys.readouterr().err
    assert "DIR" in err and "mine" in err and "--force" in err
    assert lesson.read_text() == "my notes"                     # refused: nothing written
    assert cli.main(["course", "mine", "--force"]) == 0
    assert lesson.read_bytes() == (NOTEBOOKS / LESSONS[0]).read_bytes()
    assert (tmp_path / "mine" / "keep.txt").read_text() == "a student's own file"
    # an empty folder has nothing to overwrite; a file is not a folder
    (tmp_path / "empty").mkdir()
    assert cli.main(["course", "empty"]) == 0
    assert (tmp_path / "empty" / "README.md").is_file()
    (tmp_path / "a-file").write_text("x")
    assert cli.main(["course", "a-file", "--force"]) == 2
    assert "DIR" in capsys.readouterr().err


def test_course_never_writes_inside_the_package(tmp_path, monkeypatch, capsys, untouched):
    monkeypatch.chdir(PACKAGE)
    for argv in (["course"], ["course", str(PACKAGE / "assignments" / "course")],
                 ["course", str(NOTEBOOKS), "--force"]):
        assert cli.main(argv) == 2, argv
        assert "DIR" in capsys.readouterr().err
    assert not (PACKAGE / "dpteach-course").exists()


# ------------------------------------------------------------------ dpteach exercises
def test_exercises_read_and_write_under_the_current_folder(tmp_path, monkeypatch, capsys,
                                                           few_solutions, untouched):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["exercises"]) == 0
    written = sorted((tmp_path / "notebooks" / "exercises").glob("*.ipynb"))
    assert [p.name for p in written] == [p.name for p in FEW]
    for path in written:        # the same student copies as the committed ones
        assert path.read_bytes() == (NOTEBOOKS / "exercises" / path.name).read_bytes()
    assert cli.main(["exercises", "--check"]) == 0
    nb = nbformat.read(written[0], as_version=4)
    nb.cells[0].source += "\nedited"
    nbformat.write(nb, written[0])
    capsys.readouterr()
    assert cli.main(["exercises", "--check"]) == 1
    assert f"out of date: {written[0].name}" in capsys.readouterr().out
    assert cli.main(["exercises", "--solutions", str(few_solutions), "--exercises", "out"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").glob("*.ipynb")) == [p.name for p in FEW]


def test_exercises_without_solutions_name_the_parameter(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for argv in (["exercises"], ["exercises", "--solutions", "nowhere"], ["nbgrader"]):
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "--solutions" in err and "not installed with the kit" in err
    assert list(tmp_path.iterdir()) == []


def test_exercises_refuse_to_write_inside_the_package(tmp_path, monkeypatch, capsys,
                                                       few_solutions, untouched):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["exercises", "--exercises", str(PACKAGE / "exercises")]) == 2
    assert "--exercises" in capsys.readouterr().err


def test_the_module_command_defaults_to_the_current_folder(tmp_path, monkeypatch,
                                                           few_solutions, untouched):
    # `python -m dpteach.coursework.student_copies --solutions S` once wrote next to the package
    monkeypatch.chdir(tmp_path)
    assert student_copies.main(["--solutions", str(few_solutions)]) == 0
    assert sorted(p.name for p in (tmp_path / "notebooks" / "exercises").glob("*.ipynb")) \
        == [p.name for p in FEW]
    shutil.rmtree(tmp_path / "notebooks")
    with pytest.raises(FileNotFoundError, match="notebooks/solutions"):
        student_copies.main([])


# ------------------------------------------------------------------ dpteach nbgrader
def test_nbgrader_writes_the_course_under_the_current_folder(tmp_path, monkeypatch, capsys,
                                                             few_solutions, untouched):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["nbgrader"]) == 0
    for course in (tmp_path / "nbgrader-course",):
        names = sorted(p.relative_to(course / "source").as_posix()
                       for p in course.glob("source/*/*.ipynb"))
        assert names == sorted(f"{student_copies.assignment_of(p.name)}/{p.name}" for p in FEW)
        assert (course / "nbgrader_config.py").is_file()
    assert cli.main(["nbgrader", "term1"]) == 0
    assert (tmp_path / "term1" / "nbgrader_config.py").is_file()
    assert "term1/nbgrader_config.py" in capsys.readouterr().out


# ------------------------------------------------------------------ dpteach grade
def test_grade_hands_every_argument_to_the_grader(monkeypatch):
    seen = []
    monkeypatch.setattr(grading, "main", lambda argv=None: seen.append(argv) or 7)
    argv = ["a.ipynb", "b.ipynb", "--jobs", "3", "--report", "r.csv", "--timeout", "30"]
    assert cli.main(["grade", *argv]) == 7
    assert seen == [argv]


def test_grade_writes_its_report_in_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "A1_empty.ipynb").write_text("")
    assert cli.main(["grade", "A1_empty.ipynb", "--timeout", "30"]) == 0
    report = (tmp_path / "grades.csv").read_text(encoding="utf-8")
    assert report.startswith("notebook,task,passed,message") and "A1_empty.ipynb" in report
    assert "the file is empty" in capsys.readouterr().out


def test_without_the_grading_extra_only_the_course_works(tmp_path, monkeypatch, capsys,
                                                          few_solutions):
    # a runtime-only install has no nbformat: `course` needs none, the others say what to add
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "nbformat", None)
    for name in ("dpteach.coursework.student_copies", "dpteach.coursework.nbgrader_export",
                 "dpteach.coursework.grading"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert cli.main(["course"]) == 0
    for argv in (["exercises"], ["nbgrader"], ["grade", "A1_x.ipynb"]):
        capsys.readouterr()
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "nbformat" in err and 'pip install "dpteach[grading]"' in err, err


# ------------------------------------------------------------------ help and entry points
def test_help_names_every_command(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for command in ("course", "exercises", "grade", "nbgrader"):
        assert command in out
    for command in ("course", "exercises", "nbgrader", "grade"):
        with pytest.raises(SystemExit) as done:
            cli.main([command, "--help"])
        assert done.value.code == 0
        assert "--" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        cli.main([])
    assert done.value.code == 2


def test_python_dash_m_dpteach_is_the_command(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "dpteach", "course", "c"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _tree(tmp_path / "c") == _expected_course()


_PROBE_UNNEEDED = """
import atexit, sys
from dpteach.coursework import cli
def report():
    print("absent" if sys.modules.get("rfc3987_syntax", "unset") is None else "importable")
atexit.register(report)
sys.argv = ["dpteach", "--help"]
{call}
"""


def test_the_command_goes_without_the_grammar_only_jsonschema_wanted():
    """The console script (in its own process) blocks rfc3987_syntax, 1.5 s of every
    `dpteach grade`; cli.main, called from Python, leaves the host's modules alone."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    said = {}
    for call in ("cli.command()", "sys.exit(cli.main())"):
        done = subprocess.run([sys.executable, "-c", _PROBE_UNNEEDED.format(call=call)],
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        said[call] = done.stdout.strip().splitlines()[-1]
    assert said == {"cli.command()": "absent", "sys.exit(cli.main())": "importable"}


# ------------------------------------------------------------------ the wheel
def _source_files() -> list:
    """The repository's files as a fresh clone would have them (with uncommitted edits):
    git's tracked and not-ignored files, else every file outside caches and venvs."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], cwd=ROOT, capture_output=True,
                             check=True, timeout=60).stdout
        return [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        skip = {".git", "build", "dist", "__pycache__", ".ipynb_checkpoints", ".pytest_cache"}
        return [p for p in ROOT.rglob("*") if p.is_file()
                and not any(part in skip or part.startswith(".venv")
                            or part.endswith(".egg-info") for part in p.relative_to(ROOT).parts)]


def _setuptools_is_new_enough() -> bool:
    try:
        major = int(importlib.metadata.version("setuptools").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return major >= 77


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel built once from a clean copy of the repository (no build/ leftovers)."""
    if importlib.util.find_spec("pip") is None:
        pytest.skip("no pip in this environment to build and install the wheel with")
    src = tmp_path_factory.mktemp("clean-copy")
    for path in _source_files():
        if path.is_file():
            target = src / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(src)]
    if _setuptools_is_new_enough():      # else pip fetches the build backend pyproject names
        cmd.insert(4, "--no-build-isolation")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (path,) = out.glob("dpteach-*.whl")
    return path, src


@pytest.mark.slow
def test_the_wheel_ships_the_course_without_solutions(wheel):
    path, src = wheel
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        course = {n.removeprefix("dpteach/_course/"): zf.read(n) for n in names
                  if n.startswith("dpteach/_course/")}
    expected = {str(p.relative_to(src / "notebooks")): p.read_bytes()
                for p in (src / "notebooks").rglob("*")
                if p.is_file() and "solutions" not in p.relative_to(src / "notebooks").parts}
    assert course == expected
    assert {n for n in course if n.endswith(".ipynb") and "/" not in n} >= set(LESSONS)
    assert "README.md" in course and {f"exercises/{n}" for n in EXERCISES} <= set(course)
    assert not [n for n in names if "solution" in n.lower()]
    assert not [n for n in names if n.startswith("notebooks/")]
    # every module of the package, subpackages included, is in it too
    modules = {p.relative_to(src).as_posix() for p in (src / "dpteach").rglob("*.py")}
    assert modules <= set(names), sorted(modules - set(names))


@pytest.mark.slow
def test_the_wheel_declares_the_console_script(wheel):
    path, _ = wheel
    with zipfile.ZipFile(path) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = zf.read(meta).decode()
    parser = configparser.ConfigParser()
    parser.read_string(text)
    value = parser["console_scripts"]["dpteach"]
    assert value == "dpteach.coursework.cli:command"
    entry = importlib.metadata.EntryPoint(name="dpteach", value=value, group="console_scripts")
    assert entry.load() is cli.command


@pytest.mark.slow
def test_the_installed_wheel_writes_a_course_that_opens(wheel, tmp_path, few_solutions):
    path, _ = wheel
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--no-index", "--target", str(site), str(path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    script = site / "bin" / "dpteach"
    env = {**os.environ, "PYTHONPATH": str(site)}
    user = few_solutions.parent.parent                   # ./notebooks/solutions, as in a clone

    def run(*args):
        return subprocess.run([str(script), *args], cwd=user, env=env, capture_output=True,
                              text=True, timeout=120)

    where = subprocess.run([sys.executable, "-c", "import dpteach.coursework.cli as c; print(c.__file__)"],
                           cwd=user, env=env, capture_output=True, text=True, timeout=60)
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout + where.stderr
    installed = _tree(site / "dpteach")

    done = run("course")
    assert done.returncode == 0, done.stderr
    assert "jupyter lab dpteach-course" in done.stdout
    course = user / "dpteach-course"
    assert _tree(course) == _expected_course()
    for nb_path in sorted(course.rglob("*.ipynb")):
        nbformat.validate(nbformat.read(nb_path, as_version=4))

    done = run("exercises", "--solutions", "elsewhere")
    assert done.returncode == 2 and "--solutions" in done.stderr
    done = run("exercises")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (user / "notebooks" / "exercises").glob("*.ipynb")) \
        == [p.name for p in FEW]
    assert _tree(site / "dpteach") == installed, "the command wrote inside the installed kit"
