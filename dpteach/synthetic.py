"""Synthetic data with MWEM: the multiplicative weights exponential mechanism (notebook 20).

A synthetic histogram is released once; every later query on it is post-processing and
costs nothing more. It is accurate only on what was measured: MWEM spends its budget on the
queries of a workload where the synthetic data are worst [HLM12, Algorithm 1]:

    A_0 = n * uniform over the domain
    for i = 1 .. T, each round with epsilon / T (half to select, half to measure):
        select q_i by the exponential mechanism with score |q(A_{i-1}) - q(x)|
            (sensitivity 1), i.e. P(q) proportional to exp((epsilon / 2T) * score / 2)
        measure m_i = q_i(x) + Lap(2T / epsilon)
        multiplicative weights: A_i(v) proportional to
            A_{i-1}(v) * exp(q_i(v) * (m_i - q_i(A_{i-1})) / (2n)), scaled to total n

The total n is treated as public, as in the paper; x is a histogram of counts and a query
is a 0/1 row over the domain (a range or a marginal). Each round is (epsilon/T)-DP by
basic composition of the two halves, and the whole is epsilon-DP [HLM12, Thm 2.1 and
Sec. 2].

Source: M. Hardt, K. Ligett and F. McSherry, "A simple and practical algorithm for
differentially private data release", NeurIPS 2012 [HLM12].
"""

from __future__ import annotations

import numpy as np
from scipy.special import softmax

from ._checks import check_epsilon, check_positive_int, check_real, check_rng, check_values

__all__ = [
    "mwem",
    "mwem_rounds",
    "multiplicative_weights_update",
    "mwem_selection_probabilities",
    "range_queries",
    "workload_error",
]


def _histogram(histogram):
    h = check_values("histogram", histogram)
    if np.any(h < 0):
        raise ValueError("histogram must hold non-negative counts")
    if h.sum() <= 0:
        raise ValueError("histogram must hold at least one record (its total is positive)")
    return h


def _queries(queries, shape):
    q = check_values("queries", queries)
    size = int(np.prod(shape))
    if q.ndim == 1:
        q = q[None, :]
    q = q.reshape(q.shape[0], -1) if q.ndim > 2 else q
    if q.ndim != 2 or q.shape[1] != size:
        raise ValueError(f"queries must be a matrix with one row of {size} entries per query "
                         f"(the histogram's size), got shape {np.shape(queries)}")
    if not np.all((q == 0) | (q == 1)):
        raise ValueError("queries must hold only 0 and 1 (a query counts the cells it covers)")
    return q


def range_queries(domain_size):
    """Every interval [a, b] of 0..domain_size-1 as a 0/1 matrix (one row per interval)."""
    k = check_positive_int(domain_size, "domain_size", maximum=2000)
    lo, hi = np.triu_indices(k)
    cells = np.arange(k)
    return ((cells >= lo[:, None]) & (cells <= hi[:, None])).astype(float)


def workload_error(histogram, synthetic, queries):
    """Largest absolute error over the workload: max_q |q(synthetic) - q(histogram)|."""
    h = check_values("histogram", histogram).ravel()
    s = check_values("synthetic", synthetic).ravel()
    q = _queries(queries, h.shape)
    return float(np.max(np.abs(q @ s - q @ h)))


def mwem_selection_probabilities(histogram, synthetic, queries, epsilon_round):
    """Probabilities of the exponential mechanism's choice in one round: P(q) proportional
    to exp(epsilon_select * |q(A) - q(x)| / 2) with epsilon_select = epsilon_round / 2."""
    h = _histogram(histogram).ravel()
    s = check_values("synthetic", synthetic).ravel()
    q = _queries(queries, h.shape)
    eps = check_epsilon(epsilon_round, "epsilon_round")
    score = np.abs(q @ s - q @ h)
    return softmax((eps / 2.0) * score / 2.0)


def multiplicative_weights_update(synthetic, query, measurement, total=None):
    """One multiplicative-weights step [HLM12, Alg. 1]:
    A'(v) proportional to A(v) * exp(q(v) * (m - q(A)) / (2n)), scaled to total n.

    ``synthetic`` A (non-negative, its total is n unless ``total`` is given), ``query`` a 0/1
    row, ``measurement`` m the noisy answer. Computed in log space, so it never overflows.
    """
    a = check_values("synthetic", synthetic)
    if np.any(a < 0):
        raise ValueError("synthetic must be non-negative")
    n = float(a.sum()) if total is None else check_epsilon(total, "total")
    q = _queries(query, a.shape)[0]
    m = check_real("measurement", measurement)
    return _mw_step(a.ravel(), q, m, n).reshape(a.shape)


def _mw_step(flat, q, m, n):
    """The update on checked flat arrays (the loop of :func:`mwem_rounds` calls it directly)."""
    with np.errstate(divide="ignore"):
        log_w = np.log(flat) + q * (m - q @ flat) / (2.0 * n)
    return n * softmax(log_w)


def mwem_rounds(histogram, queries, epsilon, iterations, *, passes=1, rng=None):
    """Run MWEM and return the synthetic histogram after each round (T + 1 arrays, A_0 first)
    with the index of the query chosen in each round. See the module docstring.

    ``passes`` > 1 applies the update again over every measurement taken so far, that many
    times per round (the improvement of [HLM12, Sec. 3]); it only post-processes the
    measurements, so it costs no privacy. ``passes=1`` is Algorithm 1 as stated.
    """
    h = _histogram(histogram)
    q = _queries(queries, h.shape)
    epsilon = check_epsilon(epsilon)
    T = check_positive_int(iterations, "iterations", maximum=10_000)
    passes = check_positive_int(passes, "passes", maximum=1000)
    rng = check_rng(rng)
    n = float(h.sum())
    flat_h = h.ravel()
    eps_round = epsilon / T
    a = np.full(flat_h.shape, n / flat_h.size)
    history, chosen, measured = [a.reshape(h.shape)], [], []
    for _ in range(T):
        p = mwem_selection_probabilities(flat_h, a, q, eps_round)
        i = int(rng.choice(len(p), p=p))
        m = q[i] @ flat_h + rng.laplace(0.0, 1.0 / (eps_round / 2.0))
        a = _mw_step(a, q[i], m, n)
        measured.append((q[i], m))
        for _ in range(passes - 1):
            for row, value in measured:
                a = _mw_step(a, row, value, n)
        history.append(a.reshape(h.shape))
        chosen.append(i)
    return history, chosen


def mwem(histogram, queries, epsilon, iterations, *, passes=1, rng=None):
    """MWEM [HLM12]: an epsilon-DP synthetic histogram of the same shape and total.

    ``histogram``: non-negative counts (any shape; the domain is its cells); ``queries``:
    one 0/1 row per query over the flattened cells; ``iterations`` T rounds of epsilon / T
    each; ``passes`` as in :func:`mwem_rounds`. Returns the last round's histogram (the
    paper's analysis averages the rounds; its experiments release the last one).
    Non-negative, with the same total as the input.
    """
    history, _ = mwem_rounds(histogram, queries, epsilon, iterations, passes=passes, rng=rng)
    return history[-1]
