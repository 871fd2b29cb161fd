"""The conda files and pyproject.toml must name the same packages, under conda-forge's
names, with the same bounds: environment.yml (local conda use: runtime, lab, grading and check)
and binder/environment.yml (Binder and JupyterHub images: runtime and lab only, an exact
Python). The README must keep its two commands."""

import json
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: PyPI name -> conda-forge name, for every package the conda files carry. Explicit on
#: purpose: the names differ (matplotlib-base is matplotlib without the Qt stack, which a
#: kernel never needs; jupyter-core is jupyter_core), and a new dependency must be mapped
#: here before the conda files can name it.
PYPI_TO_CONDA = {
    "numpy": "numpy",
    "scipy": "scipy",
    "matplotlib": "matplotlib-base",
    "pandas": "pandas",
    "ipywidgets": "ipywidgets",
    "ipython": "ipython",
    "tqdm": "tqdm",
    "threadpoolctl": "threadpoolctl",
    "jupyterlab": "jupyterlab",
    "voila": "voila",
    "ipykernel": "ipykernel",
    "nbclient": "nbclient",
    "nbformat": "nbformat",
    "jupyter-core": "jupyter_core",
    "pytest": "pytest",
    "nbval": "nbval",
}

#: which extras each conda file holds besides the runtime dependencies
ENV_FILES = {"environment.yml": ("lab", "grading", "check"), "binder/environment.yml": ("lab",)}


def _split(req: str):
    m = re.match(r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$", req)
    return m.group(1).lower().replace("_", "-"), m.group(3).replace(" ", "")


def _project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def pyproject_packages(extras=()):
    """{PyPI name: specifier} of the runtime dependencies plus the named extras (an
    extra that names dpteach[...] brings those extras in), and requires-python."""
    proj = _project()
    reqs, todo, seen = list(proj["dependencies"]), list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in proj["optional-dependencies"][extra]:
            m = re.match(r"\s*dpteach\[([^\]]*)\]", req)
            if m:
                todo.extend(e.strip() for e in m.group(1).split(","))
            else:
                reqs.append(req)
    return dict(_split(r) for r in reqs), proj["requires-python"].replace(" ", "")


def environment_packages(path):
    """(env, conda packages, pip lines) of one conda environment file."""
    env = yaml.safe_load((ROOT / path).read_text())
    conda, pip = {}, []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip.extend(dep.get("pip", []))
        else:
            m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)$", dep)
            conda[m.group(1).lower()] = m.group(2).replace(" ", "")
    return env, conda, pip


def compare(pyproject, env_conda):
    """Every disagreement between pyproject's packages (PyPI names) and a conda file's
    (conda-forge names), Python and pip aside; empty when they agree."""
    problems = []
    conda = {k: v for k, v in env_conda.items() if k not in ("python", "pip")}
    expected = {}
    for name, spec in pyproject.items():
        if name not in PYPI_TO_CONDA:
            problems.append(f"{name}: no conda-forge name in PYPI_TO_CONDA")
            continue
        expected[PYPI_TO_CONDA[name]] = spec
    for name in sorted(set(expected) | set(conda)):
        if name not in conda:
            problems.append(f"{name}: in pyproject.toml only")
        elif name not in expected:
            problems.append(f"{name}: in the conda file only")
        elif expected[name] != conda[name]:
            problems.append(f"{name}: {expected[name]!r} against {conda[name]!r}")
    return problems


@pytest.mark.parametrize("path", list(ENV_FILES))
def test_conda_files_match_pyproject(path):
    pyproject, _ = pyproject_packages(ENV_FILES[path])
    env, conda, _ = environment_packages(path)
    assert compare(pyproject, conda) == []
    assert env["channels"] == ["conda-forge"]
    assert "matplotlib" not in conda and "playwright" not in conda


def test_root_environment_keeps_the_python_floor_and_installs_the_kit():
    _, floor = pyproject_packages()
    _, conda, pip = environment_packages("environment.yml")
    assert conda["python"] == floor
    assert pip == ["-e ."]


def test_binder_pins_a_tested_python_and_installs_the_kit_once():
    _, conda, pip = environment_packages("binder/environment.yml")
    m = re.fullmatch(r"=(3\.\d+)", conda["python"])      # repo2docker honours only python=3.X
    assert m, f"binder needs an exact python=3.X, got {conda['python']!r}"
    classifiers = _project()["classifiers"]
    assert f"Programming Language :: Python :: {m.group(1)}" in classifiers
    assert pip == []                  # the kit comes from postBuild, after the environment
    post = (ROOT / "binder" / "postBuild").read_text()
    assert re.search(r"pip install --no-deps\b.*\s\.$", post, re.M), post
    assert "-e ." not in post and "--editable" not in post
    assert "binder/overrides.json" in post


def test_binder_and_lab_turn_the_news_popup_off():
    settings = json.loads((ROOT / "binder" / "overrides.json").read_text())
    note = settings["@jupyterlab/apputils-extension:notification"]
    assert note["fetchNews"] == "false" and note["checkForUpdates"] is False
    assert "binder/overrides.json" in (ROOT / "Makefile").read_text()
    # the names must be JupyterLab's own: check them against the installed schema
    schema = (pathlib.Path(sys.prefix) / "share/jupyter/lab/schemas/@jupyterlab"
              / "apputils-extension/notification.json")
    if not schema.exists():
        pytest.skip("JupyterLab is not installed in this environment")
    props = json.loads(schema.read_text())["properties"]
    assert set(note) <= set(props)
    assert "false" in [choice["const"] for choice in props["fetchNews"]["oneOf"]]


def test_comparison_detects_disagreement():
    pyproject, _ = pyproject_packages(("lab",))
    _, conda, _ = environment_packages("binder/environment.yml")
    assert compare(pyproject, conda) == []
    assert any("seaborn" in p for p in compare(pyproject, dict(conda, seaborn=">=0.13")))
    missing = {k: v for k, v in conda.items() if k != "scipy"}
    assert any("scipy" in p for p in compare(pyproject, missing))
    qt = dict(conda, matplotlib=conda["matplotlib-base"])
    qt.pop("matplotlib-base")
    assert any("matplotlib" in p for p in compare(pyproject, qt))
    assert any("no conda-forge name" in p for p in compare(dict(pyproject, playwright=">=1"), conda))
    other = dict(conda, scipy=">=1.11")
    assert any("scipy" in p for p in compare(pyproject, other))


def test_dependencies_are_lower_bounds_not_pins():
    pyproject, _ = pyproject_packages(tuple(_project()["optional-dependencies"]))
    for name, spec in pyproject.items():
        assert spec.startswith(">="), f"{name} should have a lower bound, not {spec!r}"


def test_runtime_holds_no_server_and_no_test_tools():
    runtime, _ = pyproject_packages()
    for name in ("jupyterlab", "notebook", "voila", "pytest", "playwright", "nbclient"):
        assert name not in runtime, f"{name} belongs in an extra, not the runtime"


def test_readme_opens_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    head = text[: text.index("\n## ", text.index("make test"))]
    assert "make lab" in head and "make test" in head
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^lab:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "127.0.0.1" in makefile


def test_ci_runs_make_test():
    run = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in run and "make test" in run


def test_import_is_lazy():
    """``import dpteach`` loads neither matplotlib nor pandas (what that saves is measured
    by benchmarks/bench_first_panel.py; a test does not time it)."""
    code = ("import time, sys; t = time.perf_counter(); import dpteach; "
            "print(time.perf_counter() - t, 'matplotlib' in sys.modules, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, mpl, pd = out.stdout.split()
    print(f"import dpteach: {float(seconds):.2f} s")
    assert mpl == "False" and pd == "False"


def test_public_api_resolves():
    import dpteach

    missing = []
    for name in dpteach.__all__:
        try:
            getattr(dpteach, name)
        except (AttributeError, ImportError) as exc:
            missing.append(f"{name}: {exc}")
    assert missing == []
