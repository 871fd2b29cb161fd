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
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile

import pytest

from dpteach.coursework import _sandbox

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
