"""A notebook writes ``dp.NAME`` for the course's contract names only (``dp.CONTRACT``)
and the lesson modules (``dp.sparse_vector``); every other name is spelled through the
module that defines it (``dp.sparse_vector.run_error``, ``sv.run_error``), the one
spelling that works, so what a student reads in a cell or in the prose around it is
what they can type."""

import json
import re
from pathlib import Path

import pytest

import dpteach as dp

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").rglob("*.ipynb"))
#: what ``dp.NAME`` may name: the contract, the modules, the package's version
TOP_LEVEL = set(dp.CONTRACT) | set(dp._SUBMODULES) | {"__version__"}


def _cells(path, kind):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == kind)


def off_the_top(text):
    """name -> where it lives, for each ``dp.NAME`` (or ``from dpteach import NAME``) of
    ``text`` that is not a top-level name of the package."""
    names = set(re.findall(r"(?<![\w.])dp\.(\w+)", text))
    for m in re.finditer(r"^from dpteach import ([\w ,]+)", text, re.M):
        names |= {part.strip().partition(" as ")[0].strip() for part in m.group(1).split(",")}
    homes = dp._homes(importing=True)
    return {name: [f"dp.{lesson}.{name}" for lesson in homes.get(name, ())]
            for name in sorted(names - TOP_LEVEL)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
@pytest.mark.parametrize("kind", ["code", "markdown"])
def test_a_notebook_writes_dp_name_for_contract_names_only(path, kind):
    wrong = off_the_top(_cells(path, kind))
    assert not wrong, (f"{path.name}'s {kind} cells write dp.NAME for names that live in "
                       f"their lesson module (write these instead): {wrong}")


def test_the_rule_catches_a_name_off_the_top():
    code = ("import dpteach as dp\nfrom dpteach import tradeoff, run_error\n"
            "dp.tradeoff_curve(0.05, 1.0, 0.0)\ndp.tradeoff.advantage_bound(1.0, 0.0)\n"
            "dp.advantage_bound(1.0, 0.0)\ndp.sgd.accuracy\n")
    assert off_the_top(code) == {"advantage_bound": ["dp.tradeoff.advantage_bound"],
                                 "run_error": ["dp.sparse_vector.run_error"]}
    assert off_the_top("import dpteach as dp\ndp.tradeoff_curve(0.05, 1.0, 0.0)\n") == {}
