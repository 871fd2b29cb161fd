"""Synthetic data: the noisy histogram, independent marginals and MWEM (notebook 20).

A synthetic histogram is released once; every later query on it is post-processing and
costs nothing more. How accurate it is depends on what was measured.

*Neighbours.* A table of counts x over a domain D (its cells) changes in one of two ways
when one person's record changes: under **add/remove** one cell moves by 1 (the total n
moves too); under **substitution** (n fixed and public, as in MWEM's paper) one cell
loses 1 and another gains 1, so the whole histogram moves by 2 in L1 norm, and so does each
1-way marginal. Every function here that adds noise takes ``neighbours="substitute"``
(the default) or ``"add_remove"`` and calibrates to it.

*The noisy histogram* [DR14 Sec. 3.3; the PDP book's first synthetic-data method] adds
Lap(Delta/epsilon) to every cell, Delta = 2 (substitute) or 1 (add/remove).

*MWEM* [HLM12, Algorithm 1] spends its budget on the workload queries where its table is
worst:

    A_0 = n * uniform over the domain
    for i = 1 .. T, each round with epsilon / T (half to select, half to measure):
        select q_i by the exponential mechanism with score |q(A_{i-1}) - q(x)|
            (sensitivity 1), i.e. P(q) proportional to exp((epsilon / 2T) * score / 2)
        measure m_i = q_i(x) + Lap(2T / epsilon)
        multiplicative weights: A_i(v) proportional to
            A_{i-1}(v) * exp(q_i(v) * (m_i - q_i(A_{i-1})) / (2n)), scaled to total n
    release the average of A_1 .. A_T (the paper) or A_T (what this kit shows by default)

The total n is public, so the guarantee is for substitution: a count query's answer and
the selection score then move by at most 1. Each round is (epsilon/T)-DP by basic
composition of its two halves, and the whole is epsilon-DP [HLM12, Sec. 2]. Both releases
are post-processing of the same measurements, so both are epsilon-DP.

Sources: M. Hardt, K. Ligett and F. McSherry, "A simple and practical algorithm for
differentially private data release", NeurIPS 2012 [HLM12]; C. Dwork and A. Roth, "The
algorithmic foundations of differential privacy", 2014 [DR14]; J. P. Near and C. Abuah,
"Programming differential privacy", ch. "Synthetic data" [PDP].
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import expit, softmax

from ._support.validate import (Epsilon, NonnegativeInt, OrNone, PositiveInt, Real, Rng, Using,
                        Values, checked, valid_count, valid_noise_scale, valid_positive_int,
                        valid_positive_ints, valid_values)
from .mechanisms import laplace_mechanism

__all__ = [
    "mwem",
    "mwem_rounds",
    "mwem_error_bound",
    "multiplicative_weights_update",
    "mwem_selection_probabilities",
    "range_queries",
    "marginal_queries",
    "workload_error",
    "example_table",
    "example_binary_table",
    "table_workload",
    "noisy_histogram",
    "marginals_scale",
    "noisy_marginals",
    "independent_marginals",
    "sample_records",
]

#: the most entries a query matrix built here may have (10^7 float64 = 80 MB): a larger
#: workload is refused with the parameter's limit instead of a MemoryError
MAX_QUERY_ENTRIES = 10 ** 7
#: the most work one MWEM call may do, in estimated nanoseconds on one laptop core (3 s):
#: a round's selection costs about 3 |Q| |D| + 100,000, each multiplicative-weights step
#: about 6 |D| + 15,000 (measured; see :func:`mwem_rounds`)
MAX_MWEM_WORK = 3 * 10 ** 9
_NEIGHBOURS = {"substitute": 2, "add_remove": 1}


# ----------------------------------------------------------------------- checked inputs
def _valid_histogram(histogram, name="histogram"):
    h = valid_values(histogram, name)
    if np.any(h < 0):
        raise ValueError(f"{name} must hold non-negative counts")
    with np.errstate(over="ignore"):
        total = h.sum()
    if not np.isfinite(total):
        raise ValueError(f"{name}'s total overflows the floating-point range (got counts near 1e308)")
    if total <= 0:
        raise ValueError(f"{name} must hold at least one record (its total is positive)")
    return h


def _queries(queries, shape, name="queries", of="the histogram"):
    q = valid_values(queries, name)
    size = int(np.prod(shape))
    if q.ndim == 1:
        q = q[None, :]
    q = q.reshape(q.shape[0], -1) if q.ndim > 2 else q
    if q.ndim != 2 or q.shape[1] != size:
        raise ValueError(f"{name} must be a matrix with one row of {size} entries per query "
                         f"({of}'s size), got shape {np.shape(queries)}")
    if not np.all((q == 0) | (q == 1)):
        raise ValueError(f"{name} must hold only 0 and 1 (a query counts the cells it covers)")
    return q


def _valid_neighbours(neighbours, name):
    if not isinstance(neighbours, str) or neighbours not in _NEIGHBOURS:
        raise ValueError(f"{name} must be 'substitute' or 'add_remove', got {neighbours!r}")
    return neighbours


def _valid_table(table, name):
    """Counts with at least one attribute (axis)."""
    t = _valid_histogram(table, name)
    if t.ndim < 1:
        raise ValueError(f"{name} must have at least one attribute (axis), got the scalar "
                         f"{t.item():g}")
    return t


def _valid_joint_table(table, name):
    """Counts with at least two attributes (axes): a joint distribution to factor."""
    t = _valid_histogram(table, name)
    if t.ndim < 2:
        raise ValueError(f"{name} must have at least two attributes (axes), got shape "
                         f"{t.shape}; for one attribute use noisy_histogram")
    return t


def _valid_domain_size(domain_size, name):
    """A domain size whose k(k+1)/2 intervals fit in :data:`MAX_QUERY_ENTRIES` entries."""
    k = valid_positive_int(domain_size, name, maximum=10 ** 6)
    _entries_limit(k * k * (k + 1) // 2, f"{name}={k} is too large (at most 271)")
    return k


def _valid_shape(shape, name):
    """A table's shape: a positive int or a non-empty tuple of them, as a tuple of ints."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not shape:
        raise TypeError(f"{name} must be a non-empty tuple of positive integers, got {shape!r}")
    return tuple(valid_positive_int(s, name, maximum=10 ** 7) for s in shape)


def _valid_weights(synthetic, name):
    """A histogram to sample from: a positive, finite total once negatives are set to 0."""
    s = valid_values(synthetic, name)
    with np.errstate(over="ignore"):
        total = np.maximum(s.ravel(), 0.0).sum()
    if not np.isfinite(total) or total <= 0:
        raise ValueError(f"{name} must have a positive, finite total once negatives are set to 0")
    return s


def _valid_release(release, name):
    if not isinstance(release, str) or release not in ("last", "average"):
        raise ValueError(f"{name} must be 'last' or 'average', got {release!r}")
    return release


def _valid_iterations(iterations, name):
    """Whole numbers of rounds >= 1 (a scalar or an array), as floats."""
    T = valid_positive_ints(iterations, name)
    try:
        return np.asarray(T, dtype=float)
    except OverflowError:
        raise ValueError(f"{name} must be below 1.8e308 (the float range)") from None


def _entries_limit(entries, names):
    if entries > MAX_QUERY_ENTRIES:
        raise ValueError(f"{names}: the query matrix would have {entries:,} entries, more than "
                         f"the {MAX_QUERY_ENTRIES:,} (80 MB) allowed; use a smaller domain")


# ------------------------------------------------------------------------ the workloads
@checked(domain_size=Using(_valid_domain_size))
def range_queries(domain_size):
    """Every interval [a, b] of 0..domain_size-1 as a 0/1 matrix (one row per interval):
    k(k+1)/2 rows of k entries. ``domain_size`` k is at most 271 (the matrix's
    k^2 (k+1)/2 entries stay within :data:`MAX_QUERY_ENTRIES`). Notebook 20."""
    lo, hi = np.triu_indices(domain_size)
    cells = np.arange(domain_size)
    return ((cells >= lo[:, None]) & (cells <= hi[:, None])).astype(float)


@checked(n_rows=PositiveInt(maximum=10 ** 6), n_cols=PositiveInt(maximum=10 ** 6))
def table_workload(n_rows, n_cols):
    """Queries over an n_rows x n_cols table, flattened row by row: every row range [a, b]
    within one column, and every row range over all columns (a 0/1 matrix, one row each).
    At most :data:`MAX_QUERY_ENTRIES` entries in all. Notebook 20."""
    ranges = n_rows * (n_rows + 1) // 2
    _entries_limit((n_cols + 1) * ranges * n_rows * n_cols, f"n_rows={n_rows} and n_cols={n_cols}")
    r = range_queries(n_rows)                       # (ranges, n_rows)
    per_col = [np.kron(r, np.eye(n_cols)[c]) for c in range(n_cols)]
    any_col = np.kron(r, np.ones(n_cols))
    return np.vstack(per_col + [any_col])


@checked(shape=Using(_valid_shape))
def marginal_queries(shape, order=2):
    """Every cell of every ``order``-way marginal of a table of ``shape``, as 0/1 rows over
    the flattened table: for each set of ``order`` attributes and each combination of their
    values, the row covers the cells with those values (e.g. all 2-way marginals of 12
    binary attributes: 66 pairs x 4 cells = 264 queries). Notebook 20."""
    order = valid_positive_int(order, "order", maximum=len(shape))
    size = int(np.prod(shape, dtype=object))
    combos = list(itertools.combinations(range(len(shape)), order)) if len(shape) <= 64 else None
    n_queries = sum(int(np.prod([shape[a] for a in c], dtype=object)) for c in combos) if combos else size
    _entries_limit(n_queries * size, f"shape={shape} and order={order}")
    cells = np.indices(shape).reshape(len(shape), -1)   # each cell's value of each attribute
    rows = [np.all(cells[list(attrs)] == np.array(values)[:, None], axis=0)
            for attrs in combos for values in itertools.product(*(range(shape[a]) for a in attrs))]
    return np.array(rows, dtype=float)


@checked(histogram=Values(), synthetic=Values())
def workload_error(histogram, synthetic, queries):
    """Largest absolute error over the workload: max_q |q(synthetic) - q(histogram)|, in
    records (people). Notebook 20."""
    h, s = histogram.ravel(), synthetic.ravel()
    if s.size != h.size:
        raise ValueError(f"synthetic must have the histogram's {h.size} cells, got {s.size}")
    q = _queries(queries, h.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        err = np.max(np.abs(q @ s - q @ h))
    if not np.isfinite(err):
        raise ValueError("histogram and synthetic: the query answers overflow the floating-point range")
    return float(err)


# ----------------------------------------------------------------- non-adaptive baselines
@checked(n_marginals=PositiveInt(maximum=10 ** 6), epsilon=Epsilon(),
         neighbours=Using(_valid_neighbours))
def marginals_scale(n_marginals, epsilon, *, neighbours="substitute"):
    """Laplace scale b for releasing ``n_marginals`` marginals of one table at once, each
    cell + Lap(b), epsilon-DP in all: b = Delta / epsilon with Delta the L1 sensitivity of
    the concatenated marginals.

    One person's record lies in exactly one cell of each marginal. Under substitution it
    leaves one cell and enters another in each: Delta = 2 * n_marginals. Under add/remove
    it enters or leaves one cell of each: Delta = n_marginals. The same argument by
    composition: each marginal is (epsilon / n_marginals)-DP with Lap(2 n_marginals /
    epsilon) (substitution), and n_marginals of them compose to epsilon [DR14 Thm. 3.16].
    The whole histogram is one marginal (n_marginals = 1): b = 2/epsilon or 1/epsilon.
    Notebook 20."""
    d = _NEIGHBOURS[neighbours] * n_marginals        # the L1 sensitivity of the marginals
    return valid_noise_scale(d / epsilon, "epsilon", f"{d}/epsilon")


@checked(histogram=Using(_valid_histogram), epsilon=Epsilon(), rng=Rng())
def noisy_histogram(histogram, epsilon, *, neighbours="substitute", rng=None):
    """The noisy histogram: every cell + Lap(2/epsilon) under substitution (one record
    moving leaves one cell and enters another: L1 sensitivity 2), Lap(1/epsilon) under
    add/remove [DR14 Sec. 3.3]. An epsilon-DP synthetic table of the same shape; its cells
    can be negative (clip them, round them, sample records from it: all post-processing).
    A query covering k cells gets noise of standard deviation sqrt(2k) b. Notebook 20."""
    b = marginals_scale(1, epsilon, neighbours=neighbours)
    return laplace_mechanism(histogram, b * epsilon, epsilon, rng=rng)


@checked(table=Using(_valid_table), epsilon=Epsilon(), rng=Rng())
def noisy_marginals(table, epsilon, *, neighbours="substitute", rng=None):
    """Every 1-way marginal of ``table`` (one per axis: the counts of each value of that
    attribute) + Lap(b) per cell, b = :func:`marginals_scale` (ndim, epsilon): 2 ndim /
    epsilon under substitution, ndim / epsilon under add/remove. epsilon-DP in all.
    Returns a list of arrays, one per axis. Notebook 20."""
    b = marginals_scale(table.ndim, epsilon, neighbours=neighbours)
    axes = range(table.ndim)
    exact = [table.sum(axis=tuple(a for a in axes if a != k)) for k in axes]
    flat = laplace_mechanism(np.concatenate(exact), b * epsilon, epsilon, rng=rng)
    return np.split(flat, np.cumsum([m.size for m in exact])[:-1])


@checked(table=Using(_valid_joint_table))
def independent_marginals(table, epsilon, *, neighbours="substitute", rng=None):
    """The independent-marginals baseline: the product of the noisy 1-way marginals
    (:func:`noisy_marginals`, negatives set to 0, each normalised), times the total.

    Under substitution the total n is public and used as is; under add/remove it is not,
    and the estimate is the mean of the noisy marginals' sums (post-processing). epsilon-DP
    either way. It keeps each attribute's distribution and loses every relation between
    attributes: that bias stays at any epsilon. Notebook 20."""
    t = table
    margins = noisy_marginals(t, epsilon, neighbours=neighbours, rng=rng)
    # the mean of the marginals' sums, each divided first (a sum of huge counts stays finite)
    n = t.sum() if neighbours == "substitute" else max(float(sum(m.sum() / len(margins) for m in margins)), 0.0)
    out = np.full((), n)
    for m in margins:
        m = np.maximum(m, 0.0)
        p = m / m.sum() if m.sum() > 0 else np.full(m.shape, 1.0 / m.size)
        out = np.multiply.outer(out, p)
    return out


@checked(synthetic=Using(_valid_weights), rng=Rng())
def sample_records(synthetic, n_records, *, rng=None):
    """``n_records`` records drawn from a synthetic histogram: each record's cell with
    probability proportional to the cell's count (negative counts, as in a noisy histogram,
    count as 0). Returns an int array (n_records, ndim) of cell coordinates, one row per
    record: a synthetic *dataset*. Post-processing, so as private as the histogram.
    Notebook 20."""
    s = synthetic
    n = valid_count(n_records, "n_records", minimum=0, per_item=max(s.ndim, 1))
    w = np.maximum(s.ravel(), 0.0)
    cells = rng.choice(w.size, size=n, p=w / w.sum())
    return np.stack(np.unravel_index(cells, s.shape), axis=-1) if s.ndim else np.zeros((n, 0), int)


# -------------------------------------------------------------------------------- MWEM
@checked(histogram=Using(_valid_histogram), synthetic=Using(_valid_histogram),
         epsilon_round=Epsilon())
def mwem_selection_probabilities(histogram, synthetic, queries, epsilon_round):
    """Probabilities of the exponential mechanism's choice in one round: P(q) proportional
    to exp(epsilon_select * |q(A) - q(x)| / 2) with epsilon_select = epsilon_round / 2
    (score sensitivity 1). Notebook 20."""
    h, s = histogram.ravel(), synthetic.ravel()
    if s.size != h.size:
        raise ValueError(f"synthetic must have the histogram's {h.size} cells, got {s.size}")
    q = _queries(queries, h.shape)
    return _selection(q @ h, q @ s, epsilon_round)


def _selection(true_answers, synthetic_answers, eps_round):
    score = np.abs(synthetic_answers - true_answers)
    # shifted by the largest score: exp never overflows, even at a huge epsilon
    with np.errstate(over="ignore"):
        return softmax((eps_round / 4.0) * (score - score.max()))


@checked(synthetic=Using(_valid_histogram), total=OrNone(Real(low=0.0, low_open=True)),
         measurement=Real())
def multiplicative_weights_update(synthetic, query, measurement, total=None):
    """One multiplicative-weights step [HLM12, Alg. 1]:
    A'(v) proportional to A(v) * exp(q(v) * (m - q(A)) / (2n)), scaled to total n.

    ``synthetic`` A (non-negative, positive total; its total is n unless ``total`` is
    given), ``query`` a 0/1 row, ``measurement`` m the noisy answer. A 0/1 query multiplies
    the cells it covers by one factor, so the step moves mass between the covered and the
    other cells: covered share = expit(delta + ln S_in - ln S_out), delta = (m - q(A))/(2n).
    Exact and finite for any finite m (a covered share of 0 or 1 at the extremes).
    Notebook 20."""
    mass = float(synthetic.sum())
    n = mass if total is None else total
    q = _queries(query, synthetic.shape, "query", "synthetic")
    if q.shape[0] != 1:
        raise ValueError(f"query must be one 0/1 row, got {q.shape[0]} rows")
    q = q[0]
    with np.errstate(over="ignore"):
        scaled = measurement / (2.0 * n)         # +-inf only beyond the float range
        half_mass = mass / (2.0 * n)
    if not np.isfinite(half_mass):
        raise ValueError(f"total={n:g} is too small for synthetic's total {mass:g}: "
                         "(m - q(A)) / (2 total) overflows")
    return n * _mw_step(synthetic.ravel() / mass, q, scaled, half_mass).reshape(synthetic.shape)


def _mw_step(p, q, scaled_m, half_mass):
    """The update on a distribution p (sum 1): ``scaled_m`` = m / (2n), and q(A)/(2n) =
    q(p) * ``half_mass`` (= 1/2 when A has total n). Returns the new distribution."""
    inside = q @ p
    outside = (1.0 - q) @ p
    if inside <= 0.0 or outside <= 0.0:          # every cell on one side: nothing moves
        return p
    delta = scaled_m - inside * half_mass
    share = expit(delta + np.log(inside) - np.log(outside))
    grow_out = (1.0 - share) / outside
    return p * (grow_out + q * (share / inside - grow_out))


def _noise_over_2n(laplace, iterations, epsilon, n):
    """Lap(2T/epsilon) / (2n) for a standard Laplace draw: laplace * T / (epsilon n), in
    log space where the scale itself overflows (a subnormal epsilon or n): +-inf there."""
    with np.errstate(over="ignore", divide="ignore"):
        rate = iterations / (epsilon * n)
        if np.isfinite(rate):
            return laplace * rate
        if laplace == 0.0:
            return 0.0
        log_rate = np.log(iterations) - np.log(epsilon) - np.log(n)
        return float(np.sign(laplace) * np.exp(np.log(abs(laplace)) + log_rate))


def _mwem_work(T, passes, n_queries, n_cells):
    steps = T + (passes - 1) * T * (T + 1) // 2
    return T * (3 * n_queries * n_cells + 100_000) + steps * (6 * n_cells + 15_000)


@checked(histogram=Using(_valid_histogram), epsilon=Epsilon(),
         iterations=PositiveInt(maximum=100_000), passes=PositiveInt(maximum=100_000), rng=Rng())
def mwem_rounds(histogram, queries, epsilon, iterations, *, passes=1, rng=None):
    """Run MWEM and return the synthetic histogram after each round (T + 1 arrays, A_0 first)
    with the index of the query chosen in each round. See the module docstring.

    ``passes`` > 1 applies the update again over every measurement taken so far, that many
    times per round in all (the improvement of [HLM12, Sec. 3]); it only post-processes the
    measurements, so it costs no privacy. ``passes=1`` is the update of Algorithm 1. The
    work, about 3 T |Q| |D| + 3 T^2 passes |D| nanoseconds, is bounded by :data:`MAX_MWEM_WORK` (3 s).
    Notebook 20.
    """
    h, T = histogram, iterations
    q = _queries(queries, h.shape)
    work = _mwem_work(T, passes, q.shape[0], h.size)
    if work > MAX_MWEM_WORK:
        raise ValueError(f"iterations={T} and passes={passes} on {h.size} cells and {q.shape[0]} queries "
                         f"would take about {work / 1e9:.3g} s, more than the {MAX_MWEM_WORK / 1e9:g} s "
                         "allowed: use fewer iterations or passes (the work grows as T^2 passes)")
    n = float(h.sum())
    true = q @ h.ravel()                             # q(x), for every query
    true_scaled = (q @ (h.ravel() / n)) / 2.0        # q(x) / (2n)
    p = np.full(h.size, 1.0 / h.size)
    history, chosen, measured = [n * p.reshape(h.shape)], [], []
    for _ in range(T):
        probs = _selection(true, n * (q @ p), epsilon / T)
        i = int(rng.choice(len(probs), p=probs))
        scaled = true_scaled[i] + _noise_over_2n(rng.laplace(0.0, 1.0), T, epsilon, n)
        measured.append((q[i], scaled))
        p = _mw_step(p, q[i], scaled, 0.5)
        for _ in range(passes - 1):
            for row, value in measured:
                p = _mw_step(p, row, value, 0.5)
        history.append(n * p.reshape(h.shape))
        chosen.append(i)
    return history, chosen


@checked(release=Using(_valid_release))
def mwem(histogram, queries, epsilon, iterations, *, passes=1, release="last", rng=None):
    """MWEM [HLM12]: an epsilon-DP (substitution, n public) synthetic histogram of the same
    shape and total.

    ``histogram``: non-negative counts (any shape; the domain is its cells); ``queries``:
    one 0/1 row per query over the flattened cells; ``iterations`` T rounds of epsilon / T
    each; ``passes`` as in :func:`mwem_rounds`. ``release="average"`` returns the average
    of the rounds' tables A_1 .. A_T, the output of HLM12's Algorithm 1 and the one its
    theorem (:func:`mwem_error_bound`) is about; ``release="last"`` returns A_T, what the
    paper's experiments and most implementations release. Both are post-processing of the
    same measurements: both are epsilon-DP. Notebook 20.
    """
    history, _ = mwem_rounds(histogram, queries, epsilon, iterations, passes=passes, rng=rng)
    return history[-1] if release == "last" else np.mean(history[1:], axis=0)


@checked(n=Real(low=0.0, low_open=True), domain_size=PositiveInt(), n_queries=PositiveInt(),
         epsilon=Epsilon(), iterations=Using(_valid_iterations))
def mwem_error_bound(n, domain_size, n_queries, epsilon, iterations):
    """HLM12's accuracy theorem (Thm. 2.2): with probability at least 1 - 2T/|Q|, the
    average release of MWEM (``release="average"``, ``passes=1``) has

        max_q |q(A) - q(x)| <= 2n sqrt(ln|D| / T) + 10 T ln|Q| / epsilon   (records).

    The first term is multiplicative weights' regret after T rounds, the second the
    selection and measurement noise: the exponential mechanism at epsilon/(2T) picks a
    query within 8T ln|Q|/epsilon of the worst with probability 1 - 1/|Q|, and Lap(2T/eps)
    stays within 2T ln|Q|/epsilon with probability 1 - 1/|Q| (8 + 2 = 10; a union bound
    over the T rounds gives 2T/|Q|). More rounds shrink the first term and grow the
    second: the bound is smallest at T = (n epsilon sqrt(ln|D|) / (10 ln|Q|))^(2/3).
    It is a worst case over all tables; a table's actual error can be far below it.
    ``iterations`` may be an array. Notebook 20."""
    d, k, T = domain_size, n_queries, iterations
    with np.errstate(over="ignore"):
        bound = 2.0 * n * np.sqrt(math.log(d) / T) + 10.0 * T * math.log(k) / epsilon
    if not np.all(np.isfinite(bound)):
        raise ValueError("n, iterations or epsilon: the bound 2n sqrt(ln|D|/T) + 10T ln|Q|/epsilon "
                         "overflows the floating-point range")
    return float(bound) if bound.ndim == 0 else bound


@checked(seed=NonnegativeInt())
def example_table(*, seed=20):
    """An invented table of 10,000 patients: counts over 8 age groups x 4 conditions, with
    age and condition strongly related (the young mostly have condition 0, the old mostly
    condition 3). Notebook 20."""
    g = np.random.default_rng(seed)
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


@checked(n_attributes=PositiveInt(maximum=20), n_records=PositiveInt(maximum=10 ** 6),
         seed=NonnegativeInt())
def example_binary_table(n_attributes=12, n_records=1000, *, seed=20):
    """An invented survey: ``n_records`` people answering ``n_attributes`` yes/no questions,
    drawn from three hidden groups with their own answer rates (so the answers are related).
    Returned as a histogram of shape (2,) * n_attributes (2^12 = 4,096 cells by default,
    most of them empty). Notebook 20: a domain much larger than its workload."""
    d, n = n_attributes, n_records
    g = np.random.default_rng(seed)
    rates = g.uniform(0.05, 0.95, size=(3, d))
    group = g.choice(3, size=n, p=[0.5, 0.3, 0.2])
    answers = (g.random((n, d)) < rates[group]).astype(int)
    table = np.zeros((2,) * d)
    np.add.at(table, tuple(answers.T), 1)
    return table
