"""Reporting one of k categories: k-ary randomized response and unary encoding, and the
one correction that estimates the category frequencies from either's reports.

- **k-ary randomized response** (k-RR): report the true category with probability
  p = e^eps / (e^eps + k - 1), otherwise one of the other k - 1 uniformly (each with
  probability q = 1 / (e^eps + k - 1)). For k = 2 it *is* binary randomized response.
- **unary encoding**: write the category as a one-hot vector of k bits and randomise each
  bit (symmetric, SUE, or optimized, OUE).

Both are estimated by f_hat = (c / n - q) / (p - q) (:func:`estimate_from_counts`), and
:func:`local_epsilon` reads the exact local epsilon off a table of report probabilities.
Notebook 17.
"""

from __future__ import annotations

import numpy as np

from .._support.validate import (Flag, Rng, Using, Values, checked, valid_bits,
                                 valid_positive_int, valid_positive_ints, valid_values)
from ..mechanisms import randomized_response
from ._inputs import MAX_N, valid_categories, valid_k, valid_local_epsilon, valid_people

__all__ = [
    "MECHANISMS",
    "k_randomized_response_keep_probability",
    "k_randomized_response_probabilities",
    "k_randomized_response",
    "k_randomized_response_estimate",
    "unary_encoding_probabilities",
    "unary_encoding",
    "unary_encoding_estimate",
    "unary_encoding_output_probabilities",
    "local_epsilon",
    "estimate_from_counts",
]

#: the local mechanisms of this module: name -> what it is
MECHANISMS = {
    "krr": "k-ary randomized response (keep with e^eps/(e^eps+k-1))",
    "sue": "symmetric unary encoding (each bit: randomized response at eps/2)",
    "oue": "optimized unary encoding (1-bit kept w.p. 1/2, 0-bit -> 1 w.p. 1/(e^eps+1))",
}


def valid_mechanism(mechanism):
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {sorted(MECHANISMS)}, got {mechanism!r}")
    return mechanism


def _valid_mechanism(mechanism, name):
    """:func:`valid_mechanism` as a declared constraint ``(value, name)``."""
    return valid_mechanism(mechanism)


def _valid_matrix_k(k, name):
    """A number of categories k <= 4096, whose k x k matrix fits in memory."""
    k = valid_k(k, name)
    if k > 4096:
        raise ValueError(f"{name} must be <= 4096 for the k x k matrix (16.8 million entries), "
                         f"got {k}")
    return k


def _valid_table_k(k, name):
    """A number of categories 2 <= k <= 12, whose 2^k-output table fits in memory."""
    k = valid_positive_int(k, name, maximum=12)
    if k < 2:
        raise ValueError(f"{name} must be an integer >= 2 (the number of categories), got {k}")
    return k


def _valid_bit_reports(reports, name):
    """0/1 reports with the k >= 2 bits on their last axis, as an int8 array."""
    try:
        np.asarray(reports)
    except (TypeError, ValueError):          # ragged rows of different lengths
        raise TypeError(f"{name} must be an (n, k) array of 0/1 bits, got rows of different "
                        "lengths") from None
    r = valid_bits(reports, name)
    if r.ndim < 1 or r.shape[-1] < 2:
        raise ValueError(f"{name} must have the k >= 2 bits on its last axis, got shape {r.shape}")
    return r


def _valid_probability_table(probabilities, name):
    """A table P[input, output] of >= 2 rows, each a probability distribution."""
    P = valid_values(probabilities, name)
    if P.ndim != 2 or P.shape[0] < 2:
        raise ValueError(f"{name} must be a table with a row per input (>= 2 rows), "
                         f"got shape {P.shape}")
    if np.any(P < 0) or not np.allclose(P.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError(f"{name} must have non-negative rows that sum to 1")
    return P


def _valid_people_counts(n, name):
    """A number of people n <= MAX_N, or an array of them (one n per dataset)."""
    if np.ndim(n) == 0:
        return valid_positive_int(n, name, maximum=MAX_N)
    n = valid_positive_ints(n, name)
    if np.any(n > MAX_N):
        raise ValueError(f"{name} must be <= {MAX_N} in every entry, got {np.max(n):.6g}")
    return n


# ------------------------------------------------------------------ k-ary randomized response
@checked(k=Using(valid_k), epsilon=Using(valid_local_epsilon))
def k_randomized_response_keep_probability(k, epsilon) -> float:
    """p = e^eps / (e^eps + k - 1): the chance k-RR reports the true category.

    Computed as 1 / (1 + (k - 1) e^-eps), which never overflows. For k = 2 it equals
    :func:`dpteach.mechanisms.randomized_response_keep_probability` (notebook 04). Each other
    category is reported with q = (1 - p) / (k - 1) = 1 / (e^eps + k - 1), so p / q = e^eps
    [Wang et al. 2017 call it "direct encoding"]. Notebook 17.
    """
    return float(1.0 / (1.0 + (k - 1) * np.exp(-epsilon)))


def _krr_pq(k, epsilon):
    p = k_randomized_response_keep_probability(k, epsilon)
    q = float(1.0 / (np.exp(epsilon) + k - 1)) if epsilon < 700 else 0.0
    return p, q


@checked(k=Using(_valid_matrix_k), epsilon=Using(valid_local_epsilon))
def k_randomized_response_probabilities(k, epsilon) -> np.ndarray:
    """The k x k matrix P[true, reported] of k-RR: p on the diagonal, q elsewhere.

    Every row sums to one; every column's largest over smallest entry is p / q = e^eps,
    which is the mechanism's exact local epsilon (:func:`local_epsilon`). Notebook 17.
    """
    p, q = _krr_pq(k, epsilon)
    P = np.full((k, k), q)
    np.fill_diagonal(P, p)
    return P


@checked(k=Using(valid_k), epsilon=Using(valid_local_epsilon), rng=Rng())
def k_randomized_response(values, k, epsilon, *, rng=None):
    """Each person reports their category with probability e^eps/(e^eps + k - 1),
    otherwise one of the other k - 1 categories uniformly at random.

    ``values``: integers in 0..k-1 (any shape); returns reports of the same shape. Each
    person is eps-LDP: any report is at most e^eps times likelier under one true category
    than under another (p / q = e^eps). For k = 2 this calls the binary
    :func:`dpteach.randomized_response` of notebook 04. Notebook 17.
    """
    v = valid_categories(values, k)      # integers in 0..k-1
    valid_people(v.size, 2)              # at most MAX_DRAWS draws
    if k == 2:
        out = np.asarray(randomized_response(v, epsilon, rng=rng)).astype(np.intp)
    else:
        p = k_randomized_response_keep_probability(k, epsilon)
        keep = rng.random(v.shape) < p
        # another category, uniform over the k - 1 that are not the truth
        other = (v + rng.integers(1, k, size=v.shape)) % k
        out = np.where(keep, v, other).astype(np.intp)   # category indices, like the input
    return int(out) if out.ndim == 0 else out


@checked(k=Using(valid_k), epsilon=Using(valid_local_epsilon))
def k_randomized_response_estimate(reports, k, epsilon) -> np.ndarray:
    """Unbiased estimate of the k category frequencies from k-RR reports.

    With c_v reports of category v among n, E[c_v / n] = q + f_v (p - q), so
    f_hat_v = (c_v / n - q) / (p - q) [Wang et al. 2017]. Not clipped to
    [0, 1] (clipping would bias it); the estimates sum to one. Variance:
    :func:`local_variance` with ``mechanism="krr"``. For k = 2, f_hat_1 equals
    :func:`dpteach.randomized_response_estimate`. Notebook 17.
    """
    r = valid_categories(reports, k, "reports").ravel()     # integers in 0..k-1
    counts = np.bincount(r, minlength=k)
    return estimate_from_counts(counts, r.size, k, epsilon, mechanism="krr")


# ------------------------------------------------------------------ unary encoding
@checked(epsilon=Using(valid_local_epsilon), optimized=Flag())
def unary_encoding_probabilities(epsilon, *, optimized=True) -> tuple[float, float]:
    """(p, q): the chance a reported bit is 1 when the true bit is 1, and when it is 0.

    Symmetric (``optimized=False``): p = e^(eps/2) / (e^(eps/2) + 1), q = 1 - p (binary
    randomized response at eps/2 on every bit; two bits differ between any two inputs, so
    the total is eps). Optimized (OUE, Wang et al. 2017): p = 1/2,
    q = 1 / (e^eps + 1), chosen to minimise the estimator's variance. In both,
    p (1 - q) / ((1 - p) q) = e^eps. Notebook 17.
    """
    if optimized:
        return 0.5, float(1.0 / (1.0 + np.exp(epsilon))) if epsilon < 700 else 0.0
    p = float(1.0 / (1.0 + np.exp(-epsilon / 2)))
    return p, 1.0 - p


@checked(k=Using(valid_k), epsilon=Using(valid_local_epsilon), optimized=Flag(), rng=Rng())
def unary_encoding(values, k, epsilon, *, optimized=True, rng=None) -> np.ndarray:
    """Each person sends a randomised one-hot vector of k bits.

    ``values``: integers in 0..k-1, shape (n,) (or any shape S); returns 0/1 reports of
    shape S + (k,). The true category's bit is 1 with probability p, every other bit is 1
    with probability q (:func:`unary_encoding_probabilities`). Symmetric unary encoding is
    literally :func:`dpteach.randomized_response` at eps/2 applied to every bit of the
    one-hot vector (the basic one-time RAPPOR, Erlingsson, Pihur & Korolova 2014).
    Notebook 17.
    """
    v = valid_categories(values, k)      # integers in 0..k-1
    valid_people(v.size, k, what=f" of k = {k} bits each (values and k)")
    onehot = (v[..., None] == np.arange(k)).astype(np.int8)
    if not optimized:
        return np.asarray(randomized_response(onehot, epsilon / 2, rng=rng), dtype=np.int8)
    p, q = unary_encoding_probabilities(epsilon, optimized=True)
    return (rng.random(onehot.shape) < np.where(onehot == 1, p, q)).astype(np.int8)


@checked(reports=Using(_valid_bit_reports), epsilon=Using(valid_local_epsilon), optimized=Flag())
def unary_encoding_estimate(reports, epsilon, *, optimized=True) -> np.ndarray:
    """Unbiased estimate of the k category frequencies from unary-encoding reports.

    ``reports``: 0/1 array of shape (n, k) (any leading shape; the last axis is the k
    bits). With c_v the number of reports whose bit v is 1, f_hat_v = (c_v / n - q) / (p - q)
    [Wang et al. 2017]. Variance: :func:`local_variance`. Notebook 17.
    """
    k = reports.shape[-1]
    r = reports.reshape(-1, k)
    return estimate_from_counts(r.sum(axis=0), r.shape[0], k, epsilon,
                                mechanism="oue" if optimized else "sue")


@checked(k=Using(_valid_table_k), epsilon=Using(valid_local_epsilon), optimized=Flag())
def unary_encoding_output_probabilities(k, epsilon, *, optimized=True) -> np.ndarray:
    """The full 2^k-output table P[true category, report] of unary encoding (k <= 12).

    Column j is the bit vector whose bit i is (j >> i) & 1. For checking the exact local
    epsilon by brute force (:func:`local_epsilon`); the mechanism itself never builds it.
    Notebook 17.
    """
    p, q = unary_encoding_probabilities(epsilon, optimized=optimized)
    bits = (np.arange(2**k)[None, :] >> np.arange(k)[:, None]) & 1      # (k bits, 2^k outputs)
    out = np.empty((k, 2**k))
    for v in range(k):
        one = np.where(np.arange(k) == v, p, q)[:, None]                  # Pr[bit i = 1 | v]
        out[v] = np.prod(np.where(bits == 1, one, 1 - one), axis=0)
    return out


@checked(probabilities=Using(_valid_probability_table))
def local_epsilon(probabilities) -> float:
    """Exact local epsilon of a mechanism given as a table P[input, output]:
    max over outputs y and inputs x, x' of ln P[x, y] / P[x', y].

    Every person can hold any input, so every pair of inputs counts (the local model's
    neighbours). An output possible under one input and impossible under another gives
    inf. Notebook 17. (For one pair of output distributions:
    :func:`dpteach.definition.privacy_loss_between`.)
    """
    hi, lo = probabilities.max(axis=0), probabilities.min(axis=0)
    used = hi > 0
    if np.any(lo[used] == 0):
        return float("inf")
    return float(np.max(np.log(hi[used]) - np.log(lo[used])))


# ------------------------------------------------------------------ the shared correction
def report_probabilities(mechanism, k, epsilon):
    """(p, q, p - q), with p - q computed without cancellation (it is tiny for small eps):
    k-RR (e^eps - 1)/(e^eps + k - 1), OUE tanh(eps/2)/2, SUE tanh(eps/4)."""
    if mechanism == "krr":
        p, q = _krr_pq(k, epsilon)
        gap = float(np.expm1(epsilon) / (np.exp(epsilon) + k - 1)) if epsilon < 700 else 1.0
    else:
        p, q = unary_encoding_probabilities(epsilon, optimized=mechanism == "oue")
        gap = float(np.tanh(epsilon / 2) / 2) if mechanism == "oue" else float(np.tanh(epsilon / 4))
    if gap == 0.0:
        raise ValueError(f"epsilon = {epsilon!r} is too small: the reports carry no signal in "
                         f"floating point (p - q = 0), so no estimate or variance exists")
    return p, q, gap


@checked(counts=Values(), n=Using(_valid_people_counts), k=Using(valid_k),
         epsilon=Using(valid_local_epsilon), mechanism=Using(_valid_mechanism))
def estimate_from_counts(counts, n, k, epsilon, *, mechanism="oue"):
    """f_hat_v = (c_v / n - q) / (p - q) for every report count c_v (last axis: the k
    categories; leading axes broadcast; ``n`` may be an array broadcasting against
    ``counts``, one n per dataset). The correction shared by
    :func:`k_randomized_response_estimate` and :func:`unary_encoding_estimate`. Notebook 17.
    """
    _, q, gap = report_probabilities(mechanism, k, epsilon)
    return (counts / n - q) / gap
