"""Shared test helpers: statistical tests at alpha = 1e-6, so a correct implementation
fails with probability one in a million, and every use is paired with a wrong twin."""

import csv
import os
import pathlib
import resource
import sys
from collections import Counter

import matplotlib
import numpy as np
import pytest
from scipy import stats

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

ALPHA = 1e-6

# The test files live in one folder per wing (lessons/, panels/, coursework/, notebooks/,
# system/); the shared helpers (this file, _bad_values.py, _tasks.py) stay here, in
# tests/, which pytest puts on sys.path for this conftest. Every wing folder goes on
# sys.path too, so that a test file imports a helper of another file by its basename
# (`from test_browser import find_chromium`) from any folder, whichever file a run starts
# with. Basenames are unique across the folders (there is no __init__.py: pytest imports
# each file under its basename and refuses two files of the same name).
_HERE = pathlib.Path(__file__).resolve().parent
for _folder in sorted(p for p in _HERE.iterdir() if p.is_dir() and p.name[0] not in "_."):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))


def ks_pvalue(samples, cdf) -> float:
    """Kolmogorov-Smirnov p-value of samples against a continuous CDF."""
    return stats.kstest(np.ravel(samples), cdf).pvalue


def chisq_pvalue(counts, probs) -> float:
    """Chi-square goodness-of-fit p-value of observed counts against probabilities."""
    counts = np.asarray(counts, float)
    probs = np.asarray(probs, float)
    expected = probs / probs.sum() * counts.sum()
    keep = expected > 0
    if (counts[~keep] > 0).any():
        return 0.0
    return stats.chisquare(counts[keep], expected[keep]).pvalue


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)


# ------------------------------------------------------------------ shifted seed streams
# `pytest --seed-shift K` adds K to every integer seed given to np.random.default_rng
# (tests, the kit and the graders' hidden draws alike), so the whole suite runs on a
# different stream of random numbers: a test that passes only on lucky seeds shows up.
# Run e.g.: for k in $(seq 1 10); do pytest tests/coursework/test_assignments_a1_a3.py --seed-shift $k; done
def pytest_addoption(parser):
    parser.addoption("--seed-shift", type=int, default=0,
                     help="add this to every integer seed given to numpy.random.default_rng")


def _shifted_default_rng(real, k):
    def default_rng(seed=None):
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seed = int(seed) + k
            if seed < 0:
                seed = -seed
        return real(seed)
    default_rng.__doc__ = real.__doc__
    default_rng._seed_shift = k
    return default_rng


def pytest_configure(config):
    k = config.getoption("--seed-shift", default=0)
    if k:
        real = np.random.default_rng
        shifted = _shifted_default_rng(real, k)
        np.random.default_rng = shifted
        import numpy.random as npr
        npr.default_rng = shifted
        config._seed_shift_real = real


@pytest.fixture
def committed_stream(request, monkeypatch):
    """numpy.random.default_rng as numpy has it, whatever --seed-shift says: for a test
    that recomputes a record committed to the repository (notebook 18's training runs)
    and must draw the very numbers the record was made from."""
    real = getattr(request.config, "_seed_shift_real", None)
    if real is not None:
        monkeypatch.setattr(np.random, "default_rng", real)
    return np.random.default_rng


def pytest_report_header(config):
    k = config.getoption("--seed-shift", default=0)
    return f"seed shift: every integer seed to numpy.random.default_rng + {k}" if k else None


# ------------------------------------------------------------------ heavy files first
# `make test` runs the files on two workers, a file on one worker (--dist loadfile), in
# the order collected here (--no-loadscope-reorder). The files below take half a minute
# to a few minutes each; started first, they overlap one another and the many short
# files fill the gaps, instead of one of them running alone at the end. Not strictly
# slowest first: the files that mostly wait on other processes (the sandboxed grading
# batches, the browser) start beside ones that compute in the worker itself. Sorted by
# duration alone (one `make test` run), JupyterLab with Chromium ran beside a sandboxed
# batch, and both took about 40% longer than in the run before.
HEAVY_FIRST = (
    "test_lite.py",            # the JupyterLite site in Chromium: four notebooks under Pyodide
    "test_min_versions.py",    # builds the floors' environment, runs the unit tests there
    "test_coursework.py",      # make grade on every assignment, every notebook run
    "test_grading.py",         # a batch of 29 adversarial and honest notebooks
    "test_grading_honest.py",  # honest alternatives, five hidden draws each
    "test_grading_redteam.py", # 34 attack notebooks in one sandboxed batch
    "test_assignments_a10.py", # PTR's confidence bands over many seeds
    "test_pld.py",             # the accountant against the exact Gaussian to 1e-300
    "test_panels.py",          # every control of every panel
    "test_nbgrader.py",        # nbgrader generate + autograde of every assignment
    "test_browser.py",         # JupyterLab and Voilà in Chromium
    "test_voila.py",           # every notebook rendered by Voilà
    "test_exercises.py",
    "test_assignments_a8.py",
    "test_assignments_a4_a6.py",
    "test_grading_attacks.py",
    "test_docs.py",            # the Sphinx site
    "test_first_panel.py",     # a fresh interpreter per notebook
    "test_assignments_a9.py",
    "test_assignments_a1_a3.py",
    "test_rdp.py",
    "test_accountants_upper_bound.py",  # every accountant against known truths
    "test_seeded_panels.py",
)


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))   # stable: files keep
                                                                       # their own order


# ------------------------------------------------------------------ CPU time per test file
# `make test` is bound by the two cores (both busy nearly all the time), so what a file
# costs is its CPU time, not its duration: each worker adds up, per test file, the CPU
# seconds of its own process and of the child processes it has waited for (kernels,
# servers, sandboxes, browsers) and writes them to test-artifacts/cpu-<worker>.csv. A
# record for finding what to make faster; no test reads it.
_CPU = Counter()
_CPU_AT = {}


def _cpu_seconds():
    own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_runtest_logstart(nodeid, location):
    _CPU_AT["start"] = _cpu_seconds()


def pytest_runtest_logfinish(nodeid, location):
    if "start" in _CPU_AT:
        _CPU[nodeid.split("::")[0]] += _cpu_seconds() - _CPU_AT.pop("start")


def pytest_sessionfinish(session):
    if not _CPU:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    folder = pathlib.Path(__file__).resolve().parents[1] / "test-artifacts"
    folder.mkdir(exist_ok=True)
    with open(folder / f"cpu-{worker}.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["file", "cpu_seconds"])
        for name, seconds in _CPU.most_common():
            writer.writerow([name, f"{seconds:.1f}"])
