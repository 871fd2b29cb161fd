"""The kit a grading kernel imports has none of the answers (dpteach/coursework/_kernel_kit.py).

For every assignment and every group of its tasks (a kernel each): the functions the
group forbids are gone with what computes them (their private parts, every function that
calls them, the judges' truth functions), the judge halves of the coursework are gone or
refuse to import, and everything else imports and works. The copies are built and
imported in the grading environment, as the sandbox does.
"""

import json
import subprocess
import sys

import pytest

from dpteach.coursework import _kernel_kit as kk
from dpteach.coursework import _grade_run, _sandbox, assignments, grading

KEYS = list(assignments.ASSIGNMENTS)

# the routes a red team took back to a forbidden result: (assignment, task, kit function)
ROUTES = [
    ("A9", "Task 3", "dpteach.rdp:_log_a_minus_1_int"),
    ("A4", "Task 3", "dpteach.accounting:_advanced_epsilon"),
    ("A8", "Task 1", "dpteach.clipping:clipped_mean_releases"),
    ("A8", "Task 1", "dpteach.clipping:clipped_mean_noise_scales"),
    ("A8", "Task 1", "dpteach.clipping:clipped_mean_ratio"),
    ("A10", "Task 1a", "dpteach.beyond_global:median_sensitivity_window"),
    ("A10", "Task 2", "dpteach.beyond_global:_ptr_runs"),
    ("A10", "Task 2", "dpteach.beyond_global:_ptr_threshold"),
    ("A8", "Task 3", "dpteach.sparse_vector:above_threshold_probabilities"),
    ("A9", "Task 1a", "dpteach.coursework.assignments.a9_dp_sgd:smallest_sigma"),
    ("A3", "Task 1", "dpteach.sensitivity:global_sensitivity"),
]


def _plans():
    out = []
    for key in KEYS:
        tasks, allowed = assignments.tasks(key), _grade_run.allowed_targets(key)
        for members, targets, needs in grading._groups(tasks, allowed):
            out.append((key, [t.key for t in members], tasks, targets, needs,
                        kk.plan(tasks, targets, needs, (), allowed)))
    return out


@pytest.fixture(scope="module")
def plans():
    return _plans()


def test_every_forbidden_function_is_removed_with_its_private_parts(plans):
    mods = kk.graph()
    for key, members, tasks, targets, needs, plan in plans:
        declared = kk._targets(mods, targets)
        assert declared <= plan.removed, (key, members, declared - plan.removed)
        # only an assignment whose tasks declare nothing forbidden (A6: its tasks use dp.audit)
        assert declared or not any(t.forbidden for t in tasks), (key, members)


@pytest.mark.parametrize("key,task,target", ROUTES)
def test_the_red_teams_routes_are_gone(plans, key, task, target):
    module, name = target.split(":")
    plan = next(p for k, members, *_, p in plans if k == key and task in members)
    assert (module, name) in plan.removed


def test_nothing_left_calls_what_is_removed(plans):
    """What remains computes nothing removed: no function or class kept in the copy
    refers to a removed one (a public function whose body calls a forbidden one goes
    with it)."""
    mods = kk.graph()
    edges = kk._edges(mods)
    kind = {(m.name, n.name): n.kind for m in mods.values() for n in m.nodes.values()}
    for key, members, _tasks, _targets, _needs, plan in plans:
        for src, refs in edges.items():
            if kind[src] in ("def", "class") and src not in plan.removed and \
                    src[0] not in plan.no_import and not src[0].startswith(kk.COURSEWORK):
                assert not refs & plan.removed, (key, members, src, refs & plan.removed)


def test_without_the_callers_closure_a_route_stays_open(monkeypatch):
    """The closure over callers is what removes a public function that calls a forbidden
    one: a plan without it keeps dp.rdp.composition_epsilons in A4's kernel (it calls
    the forbidden advanced composition)."""
    tasks = assignments.tasks("A4")
    members, targets, needs = grading._groups(tasks)[0]
    full = kk.plan(tasks, targets, needs)
    assert ("dpteach.rdp", "composition_epsilons") in full.removed
    edges = kk._edges(kk.graph())
    monkeypatch.setattr(kk, "_edges", lambda mods: {k: v for k, v in edges.items()
                                                   if k[0] != "dpteach.rdp"})
    assert ("dpteach.rdp", "composition_epsilons") not in kk.plan(tasks, targets, needs).removed


_PROBE = r"""
import importlib, json, pkgutil, sys
import dpteach
out = {"failed": [], "refused": [], "raised": {}, "works": None}
factories = set(json.loads(sys.argv[3]))
for m in pkgutil.walk_packages(dpteach.__path__, "dpteach."):
    try:
        importlib.import_module(m.name)
    except ImportError as err:
        out["refused"].append(m.name)
    except Exception as err:
        out["failed"].append([m.name, type(err).__name__, str(err)[:200]])
for target in json.loads(sys.argv[1]):
    module, name = target.split(":")
    try:
        fn = getattr(importlib.import_module(module), name)
        if hasattr(fn, "__wrapped__") or getattr(fn, "__closure__", None):
            out["raised"][target] = "a decorator keeps its body"   # __wrapped__, a closure
            continue
        made = fn()
        if target in factories:        # a judge's factory: what it makes raises
            made()
        out["raised"][target] = "no"
    except RuntimeError as err:
        out["raised"][target] = "yes" if "not available while" in str(err) else str(err)
    except ImportError:
        out["raised"][target] = "yes"
    except Exception as err:
        out["raised"][target] = type(err).__name__
import numpy as np
out["works"] = float(dpteach.laplace_scale(2.0, 0.5))
from dpteach.coursework import assignments
out["tasks"] = [t.key for t in assignments.tasks(sys.argv[2])]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_every_kernel_kit_imports_and_has_no_answers(plans, tmp_path):
    """Each kit, built and imported in the grading environment: every module imports
    but the coursework's judge halves (and grading itself), which refuse; every removed
    function raises; the kit's other functions work and the tasks are there."""
    python = _sandbox.grading_python()
    procs = []
    for i, (key, members, tasks, targets, needs, plan) in enumerate(plans):
        folder = kk.build(tmp_path / f"kit{i}", plan)
        removed = sorted(f"{m}:{n}" for m, n in plan.removed
                         if m not in plan.no_import)[:400]
        procs.append((key, members, plan, subprocess.Popen(
            [python, "-c", _PROBE, json.dumps(removed), key,
             json.dumps(sorted(f"{m}:{n}" for m, n in plan.factories))], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, cwd=str(tmp_path),
            env={"PYTHONPATH": str(folder), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg",
                 "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"})))
        if len(procs) % 2 == 0:
            procs[-2][3].wait()
    for key, members, plan, proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, (key, err[-2000:])
        seen = json.loads(out)
        assert seen["failed"] == [], (key, members, seen["failed"])
        assert "dpteach.coursework.grading" in seen["refused"]
        assert set(seen["refused"]) >= {m for m in plan.no_import
                                        if m.startswith(kk.COURSEWORK)}
        assert {k: v for k, v in seen["raised"].items() if v != "yes"} == {}, (key, members)
        assert seen["works"] == 4.0
        assert seen["tasks"] == [t.key for t in assignments.tasks(key)]


def test_grading_runs_in_an_environment_without_peers_or_test_tools():
    python = _sandbox.grading_python()
    assert python != sys.executable and ".venv-grade" in python
    code = ("import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not None "
            "for m in ['dp_accounting', 'pycanon', 'opendp', 'diffprivlib', 'pytest', "
            "'nbclient', 'numpy', 'scipy', 'dpteach']}))")
    found = json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True,
                                      check=True, cwd="/").stdout)
    assert found == {"dp_accounting": False, "pycanon": False, "opendp": False,
                     "diffprivlib": False, "pytest": False, "nbclient": True, "numpy": True,
                     "scipy": True, "dpteach": False}
