"""dp.notebook.load_panels and where the course notebooks call it: the slow imports the
panels need happen once, in their own cell, under a progress bar."""

import pathlib
import sys

import nbformat
import pytest

import dpteach as dp

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("[01][0-9]_*.ipynb"))


def test_load_panels_returns_the_panels_package():
    panels = dp.notebook.load_panels()
    assert panels is sys.modules["dpteach.panels"]
    assert len(panels.REGISTRY) >= 30 and "ipywidgets" in sys.modules


def test_a_panel_loads_only_its_own_module():
    """In a fresh interpreter, building one panel imports that panel's module and the
    machinery, not the other panel modules (nor pandas, which no panel of 06 needs)."""
    import subprocess

    code = ("import sys, dpteach as dp; dp.notebook.load_panels(); dp.panels.laplace_density(); "
            "print(sorted(m for m in sys.modules if m.startswith('dpteach.panels.')), "
            "'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "MPLBACKEND": "Agg"}).stdout
    machinery = ["_controls", "_lecture", "_panel", "_registry", "_render"]
    loaded = [f"dpteach.panels.{m}" for m in machinery] + ["dpteach.panels.laplace"]
    assert out == f"{loaded!r} False\n", out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_panels_are_loaded_in_their_own_cell_before_first_use(path):
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    loads = [i for i, c in enumerate(cells) if "dp.notebook.load_panels()" in c.source]
    assert len(loads) == 1, f"{path.name}: load the panels exactly once"
    load = loads[0]
    assert "nbval-ignore-output" in cells[load].metadata.get("tags", [])   # a progress bar
    heavy = ("dp.panels", "dpteach.panels", "from scipy", "import scipy")
    first_use = min((i for i, c in enumerate(cells)
                     if any(h in c.source for h in heavy)), default=len(cells))
    assert load <= first_use, f"{path.name}: cell {first_use} needs the panels before they load"


def test_import_and_first_panels_leave_the_heavy_libraries_unloaded():
    """``import dpteach`` loads neither pandas nor scipy; loading the panels and building
    panels whose numbers need only numpy (and scipy.special) loads no scipy.stats,
    scipy.optimize, scipy.integrate or scipy.signal: those cost seconds on a fresh kernel
    and load when a function that needs them first runs (benchmarks/bench_first_panel.py)."""
    import os
    import subprocess

    heavy = ["pandas", "scipy", "scipy.stats", "scipy.optimize", "scipy.integrate", "scipy.signal"]
    code = ("import sys, dpteach as dp; print([m for m in %r if m in sys.modules]); "
            "dp.notebook.load_panels(); "
            "[getattr(dp.panels, n)() for n in ('first_taste_count', 'attacks_differencing', "
            "'sensitivity_local_global', 'composition_two_queries', 'sparse_vector_queries', "
            "'dp_randomized_response', 'clipping_tradeoff', 'local_vs_central')]; "
            "print([m for m in %r if m in sys.modules])") % (heavy, heavy[2:])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "MPLBACKEND": "Agg"}).stdout.split("\n")
    assert out[:2] == ["[]", "[]"], out


def test_progress_bars_show_in_a_notebook_and_not_in_a_voila_dashboard(monkeypatch, capsys):
    from dpteach.notebook import progress

    monkeypatch.delenv("VOILA_KERNEL_ID", raising=False)
    assert list(progress(range(3), desc="counting")) == [0, 1, 2]
    assert "counting" in capsys.readouterr().err
    monkeypatch.setenv("VOILA_KERNEL_ID", "k")
    assert list(progress(range(3), desc="counting")) == [0, 1, 2]
    assert "counting" not in capsys.readouterr().err
