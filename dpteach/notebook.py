"""Small helpers for the course notebooks: the course map, generated navigation links,
showing a function's real source, progress bars for slow cells, and loading the panels."""

from __future__ import annotations

import inspect

__all__ = ["COURSE", "nav", "show_source", "progress", "load_panels"]

#: (number, file, title, what it teaches) -- the reading order of the course.
COURSE = [
    ("00", "00_start_here.ipynb", "Start here", "the map of the course, sliders, lecture mode"),
    ("01", "01_anonymization_and_its_limits.ipynb", "Anonymisation and its limits",
     "k-anonymity, l-diversity, t-closeness and their attacks (seed 004)"),
    ("02", "02_attacks_on_statistics.ipynb", "Attacks on released statistics",
     "differencing, query auditing, averaging; a budgeted curator (seed 004)"),
    ("03", "03_reconstruction_attacks.ipynb", "Reconstruction attacks",
     "Dinur-Nissim: exhaustive, LP and least-squares reconstruction (seed 004)"),
    ("04", "04_differential_privacy.ipynb", "Differential privacy",
     "neighbours, (epsilon, delta)-DP, randomized response (seeds 002-004)"),
    ("05", "05_sensitivity.ipynb", "Sensitivity",
     "L1/L2 sensitivity, brute-force global sensitivity (seeds 001, 003, 004)"),
    ("06", "06_laplace_mechanism.ipynb", "The Laplace mechanism",
     "Lap(Delta/epsilon), the privacy-loss proof, accuracy, histograms (seeds 000-004)"),
    ("07", "07_composition.ipynb", "Composition",
     "basic and advanced composition, the accountant (seeds 000, 004)"),
    ("08", "08_gaussian_mechanism.ipynb", "The Gaussian mechanism",
     "classic and analytic sigma, Laplace against Gaussian (seed 002)"),
    ("09", "09_exponential_mechanism.ipynb", "The exponential mechanism",
     "selection, the utility theorem, report noisy max (seeds 000, 002, 004)"),
    ("10", "10_choosing_a_mechanism.ipynb", "Choosing a mechanism",
     "seed 002's comparison table and a decision guide"),
    ("11", "11_auditing_and_floating_point.ipynb", "Auditing and floating point",
     "empirical lower bounds on epsilon, broken mechanisms, Mironov's attack"),
    ("12", "12_properties.ipynb", "Properties of differential privacy",
     "post-processing, group privacy, parallel composition"),
    ("13", "13_epsilon_as_a_test.ipynb", "What epsilon means as a test",
     "privacy loss distributions, delta as a hockey stick, trade-off curves, membership inference"),
    ("14", "14_clipping_and_means.ipynb", "Clipping and unknown sensitivity",
     "clamped sums, the noisy mean, the clipping bound's bias-variance trade-off, private quantiles"),
    ("15", "15_sparse_vector.ipynb", "The sparse vector technique",
     "AboveThreshold, why below-threshold answers are free, broken variants audited, Sparse and "
     "NumericSparse, report noisy max when the queries are known"),
    ("16", "16_modern_accounting.ipynb", "Modern accounting",
     "Renyi DP, zCDP, the exact Gaussian, five accountants compared, subsampling, the Census's rho"),
    ("17", "17_local_model.ipynb", "The local model",
     "k-ary randomized response, unary encoding (RAPPOR), frequency estimation, local against central, "
     "optimal local hashing"),
    ("18", "18_dp_sgd.ipynb", "DP-SGD on a small model",
     "per-example clipping, noise on the sum, Poisson subsampling, epsilon as training runs, a membership attack"),
    ("19", "19_beyond_global_sensitivity.ipynb", "Beyond global sensitivity",
     "local sensitivity, propose-test-release, smooth sensitivity, sample and aggregate"),
    ("20", "20_synthetic_data.ipynb", "Synthetic data",
     "what a synthetic table promises, MWEM, error against epsilon and rounds, baselines"),
]


def nav(number: str):
    """Markdown links to the previous and next notebooks (displayed by the notebook)."""
    from IPython.display import Markdown

    numbers = [c[0] for c in COURSE]
    if number not in numbers:
        raise ValueError(f"number must be one of {numbers}, got {number!r}")
    i = numbers.index(number)
    parts = []
    if i > 0:
        parts.append(f"← [{COURSE[i-1][0]} {COURSE[i-1][2]}]({COURSE[i-1][1]})")
    parts.append(f"**{COURSE[i][0]} {COURSE[i][2]}**")
    if i + 1 < len(COURSE):
        parts.append(f"[{COURSE[i+1][0]} {COURSE[i+1][2]}]({COURSE[i+1][1]}) →")
    return Markdown(" · ".join(parts))


def show_source(obj):
    """Show the real source of a dpteach function, so a lesson never keeps a copy."""
    from IPython.display import Markdown

    return Markdown("```python\n" + inspect.getsource(obj).rstrip() + "\n```")


def progress(iterable, *, desc=None, total=None):
    """A tqdm progress bar (text-mode, so it also reads in a stored notebook); none in a
    Voila dashboard.

    Without tqdm's monitor thread: it only tightens how often a slow bar redraws, and
    where no thread can start (Pyodide, the course in the browser) trying to start one
    prints a TqdmMonitorWarning under every bar."""
    import os

    from tqdm.auto import tqdm

    tqdm.monitor_interval = 0
    # a Voila dashboard shows the stderr a bar writes as an output of its own: no bar there
    # (Voila names the kernel in VOILA_KERNEL_ID before it runs the notebook)
    quiet = "VOILA_KERNEL_ID" in os.environ
    return tqdm(iterable, desc=desc, total=total, mininterval=0.5, disable=quiet)


#: What every panel needs, heaviest first; imported one by one under a progress bar.
#: (Each panel's own module, and what it imports, loads when the panel is first built.)
_PANEL_IMPORTS = ("matplotlib.backends.backend_agg", "ipywidgets", "dpteach.panels")


def load_panels():
    """Import the panels' machinery under a progress bar and return ``dpteach.panels``.

    matplotlib and ipywidgets take about a second to import the first time; a notebook
    calls this once, in its own cell near the top, so that a student sees why the wait
    happens. A panel's own module loads when that panel is first built, so the first
    panel of a notebook does not wait for the others.
    """
    import importlib
    import sys

    for name in progress(_PANEL_IMPORTS, desc="loading the panels"):
        importlib.import_module(name)
    return sys.modules["dpteach.panels"]
