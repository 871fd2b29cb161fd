"""What a notebook's first panel costs a fresh kernel, held without a clock.

The design document asks for the first panel of a notebook within 2 s of a fresh kernel
(benchmarks/bench_first_panel.py measures it; a timed test would depend on the machine
being idle). Most of those seconds are imports, so this file holds the imports: the
set-up cells load only the plotting and widget libraries, and each notebook's first panel
loads no scipy module its numbers do not need (scipy.stats alone is most of a second).
The closed forms that replace scipy.stats on those paths are checked here to give
scipy's floats bit for bit.
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import nbformat
import numpy as np
import pytest
from scipy import stats

from dpteach._support import densities as _densities

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
PANEL_CELL = re.compile(r"^\s*dp\.panels\.[a-z0-9_]+\(", re.M)

#: first panels whose numbers need scipy.special (expit, softmax, ndtr, log_ndtr, ndtri),
#: or whose notebook imports a module that loads it in its first cell (16: rdp), or that
#: need scipy.optimize, which imports it (13); 18's attack panel draws the Gaussian
#: trade-off curve (ndtr) and Clopper-Pearson intervals (the beta quantile)
NEED_SPECIAL = {"04", "05", "08", "09", "10", "13", "16", "18", "20"}
#: first panels that solve for a root with scipy.optimize (none: the analytic Gaussian
#: sigma of 08 and 10 and the exact epsilon of 13's privacy loss distribution are bisected
#: in numpy)
NEED_OPTIMIZE = set()
NEVER = ("scipy.stats", "scipy.optimize", "scipy.integrate", "scipy.linalg", "scipy.sparse",
         "scipy.signal", "scipy.interpolate")
#: top-level packages the set-up cells (imports, dp.notebook.load_panels()) may load
#: besides the standard library: numpy and pandas (the notebooks' own imports), dpteach,
#: matplotlib (and what it imports), the widgets (with IPython, which a kernel has
#: loaded already) and the progress bar
SETUP_ALLOWED = {"numpy", "pandas", "dateutil", "pytz", "tzdata", "six", "dpteach",
                 "matplotlib", "mpl_toolkits", "PIL", "pyparsing", "kiwisolver", "cycler",
                 "packaging", "fontTools", "contourpy", "ipywidgets", "tqdm", "IPython",
                 "traitlets", "comm", "pygments", "decorator", "jedi", "parso", "prompt_toolkit",
                 "wcwidth", "pexpect", "ptyprocess", "stack_data", "executing", "asttokens",
                 "pure_eval", "matplotlib_inline", "cython_runtime"}
#: what a notebook's own first cell imports on top: 16 imports dpteach.rdp, which imports
#: scipy.special (and through it numpy.f2py's charset_normalizer) at the top
SETUP_EXTRA = {"16": {"scipy", "charset_normalizer"}}


def _first_panel_code(path):
    """The notebook's set-up cells (up to dp.notebook.load_panels()) and its first
    panel-building cell, as the benchmark runs them."""
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    setup = next(k for k, c in enumerate(cells) if "load_panels" in c)
    panel = next(k for k, c in enumerate(cells) if PANEL_CELL.search(c))
    return cells[:setup + 1], cells[panel]


def _run(code):
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT / "notebooks", env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


_PROBE = """
import json, sys
before = set(sys.modules)
{setup}
setup = sorted({{m.split('.')[0] for m in set(sys.modules) - before}})
{panel}
print(json.dumps([setup, sorted(m for m in sys.modules if m.startswith('scipy'))]))
"""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_first_panel_loads_only_the_scipy_it_needs(path):
    setup, panel = _first_panel_code(path)
    code = _PROBE.format(setup="\n".join(setup), panel=panel)
    loaded_by_setup, scipy_modules = _run(code)
    allowed = {"scipy.optimize", "scipy.linalg", "scipy.sparse"} if path.name[:2] in NEED_OPTIMIZE else set()
    heavy = [m for m in NEVER if m in scipy_modules and m not in allowed]
    assert not heavy, f"{path.name}: the first panel loads {heavy}"
    if path.name[:2] not in NEED_SPECIAL:
        assert "scipy.special" not in scipy_modules, f"{path.name}: the first panel loads scipy.special"
    stdlib = set(sys.stdlib_module_names)
    extra = ({m for m in loaded_by_setup if m not in stdlib and not m.startswith("_")}
             - SETUP_ALLOWED - SETUP_EXTRA.get(path.name[:2], set()))
    assert not extra, f"{path.name}: the set-up cells load {sorted(extra)}"


def test_the_set_up_alone_loads_no_scipy():
    code = ("import json, sys, numpy, pandas, dpteach as dp; dp.notebook.load_panels(); "
            "print(json.dumps([[], sorted(m for m in sys.modules if m.startswith('scipy'))]))")
    assert _run(code) == [[], []]


# -------------------------------------------------------- scipy's floats, bit for bit
def _same(a, b):
    return np.shape(a) == np.shape(b) and type(a) is type(b) and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("name, reference", [
    ("laplace_pdf", stats.laplace.pdf), ("laplace_cdf", stats.laplace.cdf),
    ("laplace_sf", stats.laplace.sf), ("laplace_logcdf", stats.laplace.logcdf),
    ("laplace_logsf", stats.laplace.logsf), ("normal_cdf", stats.norm.cdf)])
def test_closed_forms_give_scipy_stats_floats(name, reference):
    ours = getattr(_densities, name)
    rng = np.random.default_rng(19)
    for n in (1, 2, 7, 33, 801):
        for _ in range(40):
            x = rng.normal(0.0, 10 ** rng.uniform(-1, 2.5), n)
            x[: min(n, 4)] = [0.0, np.inf, -np.inf, np.nan][: min(n, 4)]
            loc, scale = float(rng.normal(0, 5)), float(10 ** rng.uniform(-3, 3))
            assert _same(ours(x, loc, scale), reference(x, loc, scale))
            assert _same(ours(float(x[-1]), loc, scale), reference(float(x[-1]), loc, scale))
    x = np.linspace(-20, 120, 281)          # the frozen form the panels used
    assert _same(ours(x, 50, 2.5), getattr(reference.__self__(loc=50, scale=2.5), name.split("_")[1])(x))

