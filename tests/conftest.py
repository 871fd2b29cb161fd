"""Shared test helpers: statistical tests at alpha = 1e-6, so a correct implementation
fails with probability one in a million, and every use is paired with a wrong twin."""

import os

import matplotlib
import numpy as np
import pytest
from scipy import stats

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

ALPHA = 1e-6


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
