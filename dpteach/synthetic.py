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

The total n is treated as public, as in the paper, so the guarantee is for neighbours
that change one record (substitution): a count query's answer and the selection score
then move by at most 1. x is a histogram of counts and a query is a 0/1 row over the
domain (a range or a marginal). Each round is (epsilon/T)-DP by basic composition of its
two halves, and the whole is epsilon-DP [HLM12, Sec. 2].

Source: M. Hardt, K. Ligett and F. McSherry, "A simple and practical algorithm for
differentially private data release", NeurIPS 2012 [HLM12].
"""

from __future__ import annotations

import numpy as np
from scipy.special import softmax

from ._validate import (valid_epsilon, valid_nonnegative_int, valid_positive_int, valid_real, valid_rng,
                        valid_values)

__all__ = [
    "mwem",
    "mwem_rounds",
    "multiplicative_weights_update",
    "mwem_selection_probabilities",
    "range_queries",
    "workload_error",
    "example_table",
    "table_workload",
    "independent_marginals",
]


def _histogram(histogram, name="histogram"):
    h = valid_values(histogram, name)
    if np.any(h < 0):
        raise ValueError(f"{name} must hold non-negative counts")
    if h.sum() <= 0:
        raise ValueError(f"{name} must hold at least one record (its total is positive)")
    return h


def _queries(queries, shape):
    q = valid_values(queries, "queries")
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
    k = valid_positive_int(domain_size, "domain_size", maximum=2000)
    lo, hi = np.triu_indices(k)
    cells = np.arange(k)
    return ((cells >= lo[:, None]) & (cells <= hi[:, None])).astype(float)


def workload_error(histogram, synthetic, queries):
    """Largest absolute error over the workload: max_q |q(synthetic) - q(histogram)|."""
    h = valid_values(histogram, "histogram").ravel()
    s = valid_values(synthetic, "synthetic").ravel()
    q = _queries(queries, h.shape)
    return float(np.max(np.abs(q @ s - q @ h)))


def mwem_selection_probabilities(histogram, synthetic, queries, epsilon_round):
    """Probabilities of the exponential mechanism's choice in one round: P(q) proportional
    to exp(epsilon_select * |q(A) - q(x)| / 2) with epsilon_select = epsilon_round / 2."""
    h = _histogram(histogram).ravel()
    s = valid_values(synthetic, "synthetic").ravel()
    q = _queries(queries, h.shape)
    eps = valid_epsilon(epsilon_round, "epsilon_round")
    score = np.abs(q @ s - q @ h)
    return softmax((eps / 2.0) * score / 2.0)


def multiplicative_weights_update(synthetic, query, measurement, total=None):
    """One multiplicative-weights step [HLM12, Alg. 1]:
    A'(v) proportional to A(v) * exp(q(v) * (m - q(A)) / (2n)), scaled to total n.

    ``synthetic`` A (non-negative, its total is n unless ``total`` is given), ``query`` a 0/1
    row, ``measurement`` m the noisy answer. Computed in log space, so it never overflows.
    """
    a = valid_values(synthetic, "synthetic")
    if np.any(a < 0):
        raise ValueError("synthetic must be non-negative")
    n = float(a.sum()) if total is None else valid_epsilon(total, "total")
    q = _queries(query, a.shape)[0]
    m = valid_real(measurement, "measurement")
    return _mw_step(a.ravel(), q, m, n).reshape(a.shape)


def _mw_step(flat, q, m, n):
    """The update on checked flat arrays (the loop of :func:`mwem_rounds` calls it directly)."""
    with np.errstate(divide="ignore"):
        log_w = np.log(flat) + q * (m - q @ flat) / (2.0 * n)
    w = np.exp(log_w - log_w.max())
    return n * (w / w.sum())


def mwem_rounds(histogram, queries, epsilon, iterations, *, passes=1, rng=None):
    """Run MWEM and return the synthetic histogram after each round (T + 1 arrays, A_0 first)
    with the index of the query chosen in each round. See the module docstring.

    ``passes`` > 1 applies the update again over every measurement taken so far, that many
    times per round (the improvement of [HLM12, Sec. 3]); it only post-processes the
    measurements, so it costs no privacy. ``passes=1`` is Algorithm 1 as stated.
    """
    h = _histogram(histogram)
    q = _queries(queries, h.shape)
    epsilon = valid_epsilon(epsilon)
    T = valid_positive_int(iterations, "iterations", maximum=10_000)
    passes = valid_positive_int(passes, "passes", maximum=1000)
    rng = valid_rng(rng)
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


def example_table(*, seed=20):
    """An invented table of 10,000 patients: counts over 8 age groups x 4 conditions, with
    age and condition strongly related (the young mostly have condition 0, the old mostly
    condition 3). Notebook 20."""
    g = np.random.default_rng(valid_nonnegative_int(seed, "seed"))
    ages = np.clip(np.round(g.normal(3.5, 1.8, size=10_000)), 0, 7).astype(int)
    p_cond = np.stack([np.array([0.80, 0.14, 0.05, 0.01]) * (1 - a / 7) +
                       np.array([0.01, 0.05, 0.24, 0.70]) * (a / 7) for a in range(8)])
    p_cond /= p_cond.sum(axis=1, keepdims=True)
    # each record's condition from its age group's row: what g.choice(4, p=p_cond[a]) gives
    # record by record (one uniform each, against the row's cumulative sums), all at once
    cdf = np.cumsum(p_cond, axis=1)
    cdf /= cdf[:, -1:]
    conds = (cdf[ages] <= g.random(ages.size)[:, None]).sum(axis=1)
    table = np.zeros((8, 4))
    np.add.at(table, (ages, conds), 1)
    return table


def table_workload(n_rows, n_cols):
    """Queries over an n_rows x n_cols table, flattened row by row: every row range [a, b]
    within one column, and every row range over all columns (a 0/1 matrix, one row each)."""
    n_rows = valid_positive_int(n_rows, "n_rows", maximum=2000)
    n_cols = valid_positive_int(n_cols, "n_cols", maximum=100)
    r = range_queries(n_rows)                       # (ranges, n_rows)
    per_col = [np.kron(r, np.eye(n_cols)[c]) for c in range(n_cols)]
    any_col = np.kron(r, np.ones(n_cols))
    return np.vstack(per_col + [any_col])


def independent_marginals(table, epsilon, *, rng=None):
    """The independent-marginals baseline for a 2-D table: each 1-way marginal is released
    with Lap(2/epsilon) per cell (epsilon/2 each, sensitivity 1 under add/remove), negatives
    set to 0, and the synthetic table is their outer product scaled to the table's total.
    It keeps each marginal, and loses every relation between the two attributes."""
    t = _histogram(table, "table")
    if t.ndim != 2:
        raise ValueError(f"table must be two-dimensional, got shape {t.shape}")
    epsilon = valid_epsilon(epsilon)
    rng = valid_rng(rng)
    rows = np.maximum(t.sum(axis=1) + rng.laplace(0.0, 2.0 / epsilon, size=t.shape[0]), 0.0)
    cols = np.maximum(t.sum(axis=0) + rng.laplace(0.0, 2.0 / epsilon, size=t.shape[1]), 0.0)
    if rows.sum() == 0 or cols.sum() == 0:
        return np.full(t.shape, t.sum() / t.size)
    return t.sum() * np.outer(rows / rows.sum(), cols / cols.sum())
