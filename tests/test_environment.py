"""environment.yml (conda, Binder) and pyproject.toml must name the same packages and
the same Python floor; the README must keep its two commands."""

import pathlib
import re
import subprocess
import sys
import time
import tomllib

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _split(req: str):
    m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)$", req)
    return m.group(1).lower().replace("_", "-"), m.group(2).replace(" ", "")


def pyproject_packages():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    proj = data["project"]
    reqs = list(proj["dependencies"]) + list(proj["optional-dependencies"]["test"])
    return dict(_split(r) for r in reqs), proj["requires-python"].replace(" ", "")


def environment_packages():
    """(env, packages, pip lines): conda packages and the pip section's PyPI packages
    together (the test-only peers come from PyPI), then the raw pip lines."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda, pip = {}, []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip.extend(dep.get("pip", []))
        else:
            name, spec = _split(dep)
            conda[name] = spec
    for line in pip:
        if not line.startswith("-"):
            name, spec = _split(line)
            conda[name] = spec
    return env, conda, pip


def compare(pyproject, python_floor, env_conda):
    """List every disagreement between the two files (empty when they agree)."""
    problems = []
    conda = dict(env_conda)
    env_python = conda.pop("python", None)
    conda.pop("pip", None)
    if env_python != python_floor:
        problems.append(f"python: pyproject {python_floor!r} but environment.yml {env_python!r}")
    for name in sorted(set(pyproject) | set(conda)):
        if name not in conda:
            problems.append(f"{name}: in pyproject.toml only")
        elif name not in pyproject:
            problems.append(f"{name}: in environment.yml only")
        elif pyproject[name] != conda[name]:
            problems.append(f"{name}: {pyproject[name]!r} against {conda[name]!r}")
    return problems


def test_environment_matches_pyproject():
    pyproject, floor = pyproject_packages()
    env, conda, pip = environment_packages()
    assert compare(pyproject, floor, conda) == []
    assert env["channels"] == ["conda-forge"]
    assert "-e ." in pip


def test_comparison_detects_disagreement():
    pyproject, floor = pyproject_packages()
    _, conda, _ = environment_packages()
    one_side = dict(conda)
    one_side["seaborn"] = ">=0.13"
    assert any("seaborn" in p for p in compare(pyproject, floor, one_side))
    missing = {k: v for k, v in conda.items() if k != "scipy"}
    assert any("scipy" in p for p in compare(pyproject, floor, missing))
    other_floor = dict(conda, python=">=3.9")
    assert any("python" in p for p in compare(pyproject, floor, other_floor))


def test_dependencies_are_lower_bounds_not_pins():
    pyproject, _ = pyproject_packages()
    for name, spec in pyproject.items():
        assert spec.startswith(">="), f"{name} should have a lower bound, not {spec!r}"


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


def test_import_is_quick_and_lazy():
    code = ("import time, sys; t = time.perf_counter(); import dpteach; "
            "print(time.perf_counter() - t, 'matplotlib' in sys.modules, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, mpl, pd = out.stdout.split()
    assert float(seconds) < 0.5
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
