"""Simulating many people fast: an example distribution over k categories, the true
counts of n people, the report counts drawn from their exact joint distribution (no
n x k work), and the central model's noisy histogram to compare with. Notebook 17.
"""

from __future__ import annotations

import numpy as np

from .._support.validate import (NonnegativeInt, Real, Rng, Size, Using, checked,
                                 valid_noise_scale, valid_size, valid_values)
from ..mechanisms import laplace_mechanism
from ._inputs import MAX_N, valid_k, valid_local_epsilon
from .randomizers import report_probabilities, valid_mechanism

__all__ = ["example_frequencies", "true_counts", "report_counts", "central_histogram_estimate"]


def _valid_mechanism(mechanism, name):
    """:func:`valid_mechanism` as a declared constraint ``(value, name)``."""
    return valid_mechanism(mechanism)


def _valid_frequencies(frequencies, name):
    """A probability distribution over the categories, as a 1-D float array."""
    f = valid_values(frequencies, name)
    if f.ndim != 1 or np.any(f < 0) or not np.isclose(f.sum(), 1.0):
        raise ValueError(f"{name} must be a 1-D array of non-negative numbers summing to 1")
    return f


def _valid_category_counts(counts, name):
    """k >= 2 whole counts on the last axis (leading axes: datasets of at most MAX_N
    people each, at most 10^7 cells in all), as an int64 array."""
    c = valid_values(counts, name)
    if c.ndim < 1 or c.shape[-1] < 2 or np.any(c < 0) or np.any(c != np.floor(c)):
        raise ValueError(f"{name} must hold k >= 2 non-negative whole numbers on its last axis")
    if np.any(c.sum(axis=-1) > MAX_N):
        raise ValueError(f"{name} must add up to at most {MAX_N:g} people per dataset")
    if c.size > 10 ** 7:
        raise ValueError(f"{name} must hold at most 10^7 cells (two binomial draws each), "
                         f"got {c.size}")
    return c.astype(np.int64)


def _valid_histogram(counts, name):
    """A 1-D histogram of non-negative counts holding at least one person."""
    c = valid_values(counts, name)
    if c.ndim != 1 or np.any(c < 0):
        raise ValueError(f"{name} must be a 1-D array of non-negative counts")
    if c.sum() <= 0:
        raise ValueError(f"{name} must hold at least one person")
    return c


@checked(k=Using(valid_k))
def example_frequencies(k) -> np.ndarray:
    """A skewed example distribution over k categories: f_v proportional to 1/(v + 1)
    (a Zipf law, as for the popularity of web pages or words). Notebook 17."""
    w = 1.0 / np.arange(1, k + 1)
    return w / w.sum()


@checked(n=NonnegativeInt(maximum=MAX_N), frequencies=Using(_valid_frequencies))
def true_counts(n, frequencies) -> np.ndarray:
    """Integer counts summing to n, as close as possible to n * frequencies (largest
    remainders). Notebook 17."""
    raw = n * frequencies
    counts = np.floor(raw).astype(np.int64)
    short = n - counts.sum()
    counts[np.argsort(raw - counts)[::-1][:short]] += 1
    # the index type where the counts fit in it (np.repeat and np.bincount take no int64
    # where np.intp is 32 bits, as in the browser's Python)
    return counts.astype(np.intp) if n <= np.iinfo(np.intp).max else counts


@checked(counts=Using(_valid_category_counts), epsilon=Using(valid_local_epsilon),
         mechanism=Using(_valid_mechanism), rng=Rng())
def report_counts(counts, epsilon, *, mechanism="oue", rng=None, size=None) -> np.ndarray:
    """The k report counts c_v of n people, drawn from their exact joint distribution.

    ``counts``: how many people hold each category (length k). Same distribution as
    running :func:`k_randomized_response` or :func:`unary_encoding` person by person and
    counting, without the n x k work: for unary encoding c_v = Bin(n_v, p) + Bin(n - n_v, q),
    independent over v (the bits are independent). k-RR is the same as "with probability
    p - q report the truth, otherwise a category drawn uniformly from all k" (then the
    truth comes out with p - q + q = p and each other category with q), so
    c = Bin(n_v, p - q) for every v plus one Multinomial(rest, 1/k each). ``size``: that
    many independent repetitions (shape size + counts.shape; leading axes of ``counts``
    are separate datasets). Notebook 17.
    """
    # binomial draws are slow (about 0.1 µs each): at most 2 * 10^7 per call, two per cell
    size = valid_size(size, per_draw=2 * counts.size, maximum=2 * 10 ** 7)
    k = counts.shape[-1]
    n = counts.sum(axis=-1, keepdims=True)
    shape = () if size is None else (size if isinstance(size, tuple) else (size,))
    shape = shape + counts.shape          # several datasets (leading axes of counts) broadcast
    p, q, gap = report_probabilities(mechanism, k, epsilon)
    if mechanism == "krr":
        truthful = rng.binomial(counts, gap, size=shape)
        rest = n[..., 0] - truthful.sum(axis=-1)
        return truthful + rng.multinomial(rest, np.full(k, 1.0 / k))
    return rng.binomial(counts, p, size=shape) + rng.binomial(n - counts, q, size=shape)


@checked(counts=Using(_valid_histogram), sensitivity=Real(low=0.0, low_open=True),
         epsilon=Using(valid_local_epsilon), rng=Rng(), size=Size())
def central_histogram_estimate(counts, epsilon, *, sensitivity=1.0, rng=None,
                               size=None) -> np.ndarray:
    """The central model's frequencies: (counts + Lap(Δ/eps) each) / n, via
    :func:`dpteach.laplace_mechanism` (notebook 06). Δ = ``sensitivity``: 1 when one person
    is added or removed (one count moves by one), 2 when one person's answer is swapped for
    another (two counts move by one), the relation the local model's ε speaks of. Notebook 17."""
    with np.errstate(over="ignore"):
        valid_noise_scale(sensitivity / epsilon, "epsilon and sensitivity", "sensitivity / epsilon")
    return laplace_mechanism(counts, sensitivity, epsilon, rng=rng, size=size) / counts.sum()
