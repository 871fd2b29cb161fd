"""The committed notebooks are lean: outputs kept (each panel's static picture included),
no saved widget state, no widget views that need a live kernel, no run timestamps."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").rglob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_widget_state_or_timestamps(path):
    nb = _load(path)
    assert "widgets" not in nb.get("metadata", {}), "saved widget state: run tests/execute_notebooks.py"
    for i, cell in enumerate(nb["cells"]):
        assert "execution" not in cell.get("metadata", {}), f"cell {i} keeps run timestamps"
        for out in cell.get("outputs", []):
            assert WIDGET_VIEW not in out.get("data", {}), f"cell {i} keeps a widget view"


def test_panels_keep_their_static_picture():
    """Every cell that builds a panel in a lesson notebook still shows a picture."""
    missing = []
    for path in NOTEBOOKS:
        if path.parent.name != "notebooks":
            continue
        for i, cell in enumerate(_load(path)["cells"]):
            src = "".join(cell["source"]) if cell["cell_type"] == "code" else ""
            if re.fullmatch(r"dp\.panels\.[a-z0-9_]+\(.*\)", src.strip(), re.S):
                if not any("image/png" in o.get("data", {}) for o in cell.get("outputs", [])):
                    missing.append(f"{path.name} cell {i}")
    assert not missing, missing


def test_notebook_tree_under_4_mb():
    total = sum(p.stat().st_size for p in (ROOT / "notebooks").rglob("*") if p.is_file())
    assert total < 4 * 2**20, f"notebooks/ holds {total / 2**20:.2f} MB"


def test_every_figure_output_has_its_picture():
    """A cell whose result is a matplotlib Figure shows the picture, not only
    "<Figure size ... with 1 Axes>" (a Figure made without pyplot needs a PNG repr)."""
    bare = []
    for path in NOTEBOOKS:
        for i, cell in enumerate(_load(path)["cells"]):
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                if "<Figure size" in "".join(data.get("text/plain", "")) and "image/png" not in data:
                    bare.append(f"{path.name} cell {i}")
    assert not bare, bare
