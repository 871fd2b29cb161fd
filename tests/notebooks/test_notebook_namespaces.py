"""Each notebook speaks to one namespace per lesson module: its cells reach a module's
functions either all as ``dp.NAME`` or all through the module (``sv.NAME``,
``dp.sparse_vector.NAME``, ``from dpteach.sparse_vector import NAME``), never both, so a
student never wonders whether ``dp.tradeoff_curve`` and ``tradeoff.advantage_bound`` live
in different places."""

import collections
import json
import re
from pathlib import Path

import pytest

import dpteach as dp

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").rglob("*.ipynb"))
#: namespaces that are not lesson modules (the course helpers, the panels, the coursework)
NOT_LESSONS = {"notebook", "panels", "exercises", "assignments"}


def _code(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def namespaces(code):
    """module -> (names used as dp.NAME, names used through the module)."""
    aliases = {}
    for m in re.finditer(r"^from dpteach import ([\w ,]+)", code, re.M):
        for part in m.group(1).split(","):
            module, _, alias = part.strip().partition(" as ")
            aliases[(alias or module).strip()] = module.strip()
    for m in re.finditer(r"^(\w+) = dp\.(\w+)\b", code, re.M):
        aliases[m.group(1)] = m.group(2)
    top = collections.defaultdict(set)
    through = collections.defaultdict(set)
    for m in re.finditer(r"(?<![\w.])dp\.(\w+)(?:\.(\w+))?", code):
        first, second = m.groups()
        if first in dp._EXPORTS:
            top[dp._EXPORTS[first].split(".")[-1]].add(first)
        elif second and first not in NOT_LESSONS:
            through[first].add(second)
    for alias, module in aliases.items():
        for m in re.finditer(rf"(?<![\w.]){alias}\.(\w+)", code):
            through[module.split(".")[-1]].add(m.group(1))
    for m in re.finditer(r"^from dpteach\.([\w.]+) import ([\w ,]+)", code, re.M):
        through[m.group(1).split(".")[-1]] |= {p.strip().split(" as ")[0] for p in m.group(2).split(",")}
    return {module: (top[module], through[module]) for module in set(top) | set(through)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_reaches_each_lesson_module_one_way(path):
    mixed = {module: (sorted(top), sorted(through))
             for module, (top, through) in namespaces(_code(path)).items() if top and through}
    assert not mixed, (f"{path.name} uses these modules both as dp.NAME and through the "
                       f"module: {mixed}")


def test_the_rule_catches_a_mix():
    code = ("import dpteach as dp\nfrom dpteach import tradeoff\n"
            "dp.tradeoff_curve(0.05, 1.0, 0.0)\ntradeoff.advantage_bound(1.0, 0.0)\n")
    assert namespaces(code)["tradeoff"] == ({"tradeoff_curve"}, {"advantage_bound"})
    assert namespaces("import dpteach as dp\ndp.tradeoff_curve(0.05, 1.0, 0.0)\n")[
        "tradeoff"] == ({"tradeoff_curve"}, set())
