"""The declared floors hold. An environment is built on the lowest Python that
``requires-python`` allows, with the lowest version of every direct dependency
(``uv pip install --resolution lowest-direct``; ipywidgets' floor is 7.7, what Colab
ships), and there the unit tests of every lesson module run, every panel builds and
every control is moved (tests/min_versions_panels.py).

The environment is cached in .venv-min/<hash of pyproject.toml and of this recipe>, so
only a change to the declared versions rebuilds it. The lowest Python comes from pyenv
(~/.pyenv/versions/3.X.*) or PATH (python3.X); without it the layer is skipped, except
under CI=true, where it fails and says what to install."""

import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CACHE = ROOT / ".venv-min"
ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.minversions

#: test tools the minimum environment needs besides the kit (floors from the test extra)
TEST_TOOLS = ("pytest", "hypothesis")
#: unit tests of the lesson modules; the coursework, grading, notebook, browser and
#: environment layers (and the peers they cross-check against) stay in the main layer
UNIT_TESTS = (
    "accounting", "anonymity", "attacks", "audit", "bad_input", "beyond_global", "bounds", "validate",
    "clipping", "comparison", "curator", "discrete", "dp_definition",
    "exponential_examples", "floating_point", "local", "mechanisms",
    "invariants", "properties_of_dp", "reconstruction", "sensitivity", "sgd", "sparse_vector",
    "synthetic", "tradeoff",
)
RECIPE = "uv venv; uv pip install --resolution lowest-direct -e . " + " ".join(TEST_TOOLS)


def _pyproject():
    return (ROOT / "pyproject.toml").read_text()


def _unavailable(message):
    """Fail under CI (the layer must run there), skip elsewhere."""
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def lowest_python_version(pyproject_text):
    m = re.search(r'^requires-python\s*=\s*">=\s*(3\.\d+)', pyproject_text, re.M)
    assert m, "requires-python must state a floor, e.g. '>=3.10'"
    return m.group(1)


def find_python(version, home=pathlib.Path.home(), which=shutil.which):
    """The newest patch release of Python `version` under pyenv, else python3.X on PATH."""
    def patch(path):
        return int(path.parent.parent.name.split(".")[2].split("-")[0] or 0)
    found = sorted((p for p in (home / ".pyenv" / "versions").glob(f"{version}.*/bin/python")
                    if re.fullmatch(rf"{re.escape(version)}\.\d+", p.parent.parent.name)),
                   key=patch)
    if found:
        return str(found[-1])
    return which(f"python{version}")


def find_uv():
    here = pathlib.Path(sys.executable).parent / "uv"
    return str(here) if here.exists() else shutil.which("uv")


def tool_requirements(pyproject_text):
    """The test extra's lines for TEST_TOOLS, e.g. 'pytest>=7.4'."""
    reqs = []
    for tool in TEST_TOOLS:
        m = re.search(rf'^\s*"({tool}>=[^"]+)",', pyproject_text, re.M)
        assert m, f"the test extra must give {tool} a floor"
        reqs.append(m.group(1))
    return reqs


def floors(pyproject_text):
    """{name: floor} of the runtime dependencies."""
    block = re.search(r"^dependencies = \[(.*?)^\]", pyproject_text, re.M | re.S).group(1)
    return {m.group(1).lower(): m.group(2)
            for m in re.finditer(r'^\s*"([A-Za-z0-9_.\-]+)>=([0-9.]+)', block, re.M)}


@pytest.fixture(scope="module")
def min_env():
    text = _pyproject()
    version = lowest_python_version(text)
    python = find_python(version)
    if python is None:
        _unavailable(f"Python {version} (the lowest requires-python allows) is not installed: "
                     f"install it, e.g. `pyenv install {version}`, to test the declared floors")
    uv = find_uv()
    if uv is None:
        _unavailable("uv is not installed: `make test` installs it with the test extra")
    key = hashlib.sha256((text + RECIPE + python).encode()).hexdigest()[:12]
    env = CACHE / f"py{version}-{key}"
    ready = env / ".complete"
    if not ready.exists():
        shutil.rmtree(env, ignore_errors=True)
        for old in CACHE.glob("py*-*"):              # environments of older pyprojects
            shutil.rmtree(old, ignore_errors=True)
        run = dict(capture_output=True, text=True, cwd=ROOT)
        made = subprocess.run([uv, "venv", "--quiet", "--python", python, str(env)], **run)
        assert made.returncode == 0, made.stderr
        installed = subprocess.run(
            [uv, "pip", "install", "--quiet", "--python", str(env / "bin" / "python"),
             "--resolution", "lowest-direct", "-e", str(ROOT), *tool_requirements(text)], **run)
        assert installed.returncode == 0, installed.stderr[-4000:]
        ready.write_text(RECIPE + "\n")
    return env / "bin" / "python"


def _run(python, *args):
    # bytecode may be written here (a machine may forbid it with PYTHONDONTWRITEBYTECODE):
    # the floors' environment is installed without it, and its first process compiles
    # numpy, scipy, pandas and matplotlib once for the next instead of each on its own
    # (about 8 s of each process's start)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([str(python), *args], capture_output=True, text=True, cwd=ROOT,
                          env=env)


@pytest.fixture(scope="module")
def panel_report(min_env):
    out = _run(min_env, "tests/min_versions_panels.py")
    assert out.returncode == 0, (out.stdout + out.stderr)[-6000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "min_versions.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def test_the_environment_holds_the_declared_floors(panel_report):
    """lowest-direct really installed each floor (same major.minor), on the lowest Python."""
    text = _pyproject()
    versions = panel_report["versions"]
    assert versions["python"].rsplit(".", 1)[0] == lowest_python_version(text)
    for name, floor in floors(text).items():
        got = versions.get(name)
        assert got is not None, f"{name} is a runtime dependency the report does not show"
        assert got.split(".")[:2] == floor.split(".")[:2], f"{name}: floor {floor}, ran {got}"
    assert versions["ipywidgets"].startswith("7.7"), "the floor environment is Colab's widgets"


def test_every_panel_builds_and_every_control_moves_on_the_floors(panel_report):
    from dpteach import panels

    assert panel_report["panels"] == len(panels.REGISTRY)
    assert panel_report["moves"] > 4 * len(panels.REGISTRY)
    assert panel_report["problems"] == []


def test_unit_tests_pass_on_the_floors(min_env):
    # the tests marked slow (brute-force cross-checks and long simulations, a few seconds
    # each) run in the main layer only: here every other test of the same files runs
    files = [f"tests/lessons/test_{name}.py" for name in UNIT_TESTS]
    out = _run(min_env, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
               "-m", "not slow and not browser", "-W", "ignore::DeprecationWarning", *files)
    assert out.returncode == 0, (out.stdout + out.stderr)[-6000:]


def test_the_unit_test_files_exist():
    """A renamed test file must not drop out of the floors layer unnoticed."""
    missing = [n for n in UNIT_TESTS if not (ROOT / "tests" / "lessons" / f"test_{n}.py").exists()]
    assert missing == []


def test_lesson_modules_import_without_the_grading_extra():
    """In this environment, with nbformat, nbclient and jupyter_core made unimportable:
    every module but the grading machinery imports (and the machinery does not, which
    shows the block works)."""
    code = (
        "import sys, importlib, pkgutil\n"
        "for m in ('nbformat', 'nbclient', 'jupyter_core'): sys.modules[m] = None\n"
        "import dpteach\n"
        "machinery = {'dpteach.coursework.grading', 'dpteach.coursework.student_copies',\n"
        "             'dpteach.coursework.nbgrader_export', 'dpteach.coursework._grade_kernel',\n"
        "             'dpteach.coursework._grade_run'}\n"
        "names = [i.name for i in pkgutil.walk_packages(dpteach.__path__, 'dpteach.')]\n"
        "for n in names:\n"
        "    if n not in machinery and not n.startswith(('dpteach.coursework.cli', 'dpteach.__main__')):\n"
        "        importlib.import_module(n)\n"
        "try:\n"
        "    importlib.import_module('dpteach.coursework.grading')\n"
        "except ImportError:\n"
        "    print('blocked', len(names))\n")
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-4000:]
    assert out.stdout.startswith("blocked")


# ------------------------------------------------------------ the helpers themselves
def test_floor_parsing_reads_pyproject():
    text = _pyproject()
    assert lowest_python_version(text) == "3.10"
    got = floors(text)
    assert {"numpy", "scipy", "matplotlib", "pandas", "ipywidgets"} <= set(got)
    assert got["ipywidgets"] == "7.7"
    assert [r.split(">=")[0] for r in tool_requirements(text)] == list(TEST_TOOLS)


def test_find_python_picks_the_newest_patch_and_ignores_others(tmp_path):
    for name in ("3.10.2", "3.10.13", "3.10.9", "3.11.7", "3.10.13-debug"):
        exe = tmp_path / ".pyenv" / "versions" / name / "bin" / "python"
        exe.parent.mkdir(parents=True)
        exe.write_text("")
    assert find_python("3.10", home=tmp_path).endswith("3.10.13/bin/python")
    assert find_python("3.9", home=tmp_path, which=lambda name: None) is None
    assert find_python("3.9", home=tmp_path, which=lambda name: f"/usr/bin/{name}") == "/usr/bin/python3.9"


def test_a_missing_python_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="pyenv install"):
        _unavailable("Python 3.10 is not installed: `pyenv install 3.10`")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        _unavailable("Python 3.10 is not installed")
