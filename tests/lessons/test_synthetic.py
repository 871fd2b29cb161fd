"""Synthetic data (notebook 20): the exact multiplicative-weights step, the selection and
measurement distributions of a round, the baselines' calibration (the noisy histogram,
independent marginals), sampling records, the average release, HLM12's bound, and the
edges of issue 31 (alpha = 1e-6, each statistical test against a wrong twin)."""

import numpy as np
import pytest
from scipy import stats

from conftest import ALPHA, chisq_pvalue, ks_pvalue
from dpteach import synthetic as syn
import os
import signal
import subprocess
import sys
import textwrap
from _bad_values import (BAD_COUNT, BAD_EPSILON, BAD_REAL, BAD_RNG, BAD_SEED, BAD_VALUES, EXTREME,
                         EXTREME_SIZES, check_row, is_finite_answer, rows)

HIST = np.array([30.0, 5.0, 0.0, 12.0, 40.0, 3.0, 8.0, 2.0])
QUERIES = syn.range_queries(8)


def test_range_queries_are_every_interval():
    q = syn.range_queries(4)
    assert q.shape == (10, 4)
    assert {tuple(r) for r in q} == {tuple(float(lo <= c <= hi) for c in range(4))
                                     for lo in range(4) for hi in range(lo, 4)}


def test_multiplicative_weights_update_matches_the_formula():
    a = np.array([10.0, 20.0, 30.0, 40.0])
    q = np.array([1.0, 1.0, 0.0, 0.0])
    m = 50.0
    n = a.sum()
    w = a * np.exp(q * (m - q @ a) / (2 * n))
    expected = n * w / w.sum()
    got = syn.multiplicative_weights_update(a, q, m)
    assert np.allclose(got, expected, rtol=1e-12)
    twin = a * np.exp(q * (m - q @ a) / n)  # forgets the 2 in 2n
    assert not np.allclose(got, n * twin / twin.sum(), rtol=1e-6)
    # huge measurements never overflow; zeros stay zero
    big = syn.multiplicative_weights_update([0.0, 1.0, 1.0], [1, 1, 0], 1e300)
    assert np.all(np.isfinite(big)) and big[0] == 0 and big.sum() == pytest.approx(2.0)


def test_mwem_release_shape_total_nonnegative():
    out = syn.mwem(HIST.reshape(2, 4), QUERIES, 1.0, 10, rng=np.random.default_rng(1))
    assert out.shape == (2, 4)
    assert np.all(out >= 0)
    assert out.sum() == pytest.approx(HIST.sum())


def test_first_round_selection_distribution():
    eps, T = 2.0, 4
    a0 = np.full(8, HIST.sum() / 8)
    p = syn.mwem_selection_probabilities(HIST, a0, QUERIES, eps / T)
    score = np.abs(QUERIES @ a0 - QUERIES @ HIST)
    assert np.allclose(p, np.exp(eps / T / 4 * score) / np.exp(eps / T / 4 * score).sum())
    counts = np.zeros(len(QUERIES))
    for s in range(3000):  # one round at epsilon / T is the first round of T
        _, chosen = syn.mwem_rounds(HIST, QUERIES, eps / T, 1, rng=np.random.default_rng(s))
        counts[chosen[0]] += 1
    assert chisq_pvalue(counts, p) > ALPHA
    twin = np.exp(eps / T / 2 * score)  # spends the whole round's budget on the choice
    assert chisq_pvalue(counts, twin / twin.sum()) < ALPHA


def test_first_round_measurement_noise():
    """Invert the update: the chosen query's cells gain the factor exp((m - q(A0)) / 2n)."""
    eps, T = 1.0, 5
    n = HIST.sum()
    a0 = np.full(8, n / 8)
    noise = []
    for s in range(3000):
        hist, chosen = syn.mwem_rounds(HIST, QUERIES, eps / T, 1, rng=np.random.default_rng(10_000 + s))
        q = QUERIES[chosen[0]]
        if q.all():
            continue  # a query covering everything leaves A unchanged
        a1 = hist[1]
        inside, outside = np.flatnonzero(q)[0], np.flatnonzero(1 - q)[0]
        log_ratio = np.log(a1[inside] / a0[inside]) - np.log(a1[outside] / a0[outside])
        m = q @ a0 + 2 * n * log_ratio
        noise.append(m - q @ HIST)
    assert ks_pvalue(noise, stats.laplace(scale=2 * T / eps).cdf) > ALPHA
    assert ks_pvalue(noise, stats.laplace(scale=T / eps).cdf) < ALPHA  # the twin measuring with epsilon/T


def test_mwem_beats_uniform_with_budget():
    uniform = np.full(8, HIST.sum() / 8)
    base = syn.workload_error(HIST, uniform, QUERIES)
    def error(passes, s):
        out = syn.mwem(HIST, QUERIES, 50.0, 15, passes=passes, rng=np.random.default_rng(s))
        return syn.workload_error(HIST, out, QUERIES)
    plain = [error(1, s) for s in range(10)]
    repeated = [error(20, s) for s in range(10)]
    assert np.median(plain) < base
    assert np.median(repeated) < base / 5


@pytest.mark.parametrize("call, name", [
    (lambda: syn.mwem([1, -1, 2], np.eye(3), 1.0, 3), "histogram"),
    (lambda: syn.mwem([1, 1, 2], np.eye(2), 1.0, 3), "queries"),
    (lambda: syn.mwem([1, 1, 2], 0.5 * np.eye(3), 1.0, 3), "queries"),
    (lambda: syn.mwem([1, 1, 2], np.eye(3), 0.0, 3), "epsilon"),
    (lambda: syn.mwem([1, 1, 2], np.eye(3), float("nan"), 3), "epsilon"),
    (lambda: syn.mwem([1, 1, 2], np.eye(3), 1.0, 0), "iterations"),
    (lambda: syn.mwem([1, 1, 2], np.eye(3), 1.0, True), "iterations"),
    (lambda: syn.mwem([0, 0, 0], np.eye(3), 1.0, 2), "histogram"),
    (lambda: syn.multiplicative_weights_update([1, 2], [1, 0], float("inf")), "measurement"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


def test_example_table_is_the_record_by_record_draw():
    """All records at once give the table that drawing each record's condition with
    g.choice(4, p=its age group's row) gives (the same uniforms, the same cumulative
    sums); drawing the conditions from the wrong rows is caught."""
    for seed in (20, 0, 7):
        g = np.random.default_rng(seed)
        ages = np.clip(np.round(g.normal(3.5, 1.8, size=10_000)), 0, 7).astype(int)
        p = np.stack([np.array([0.80, 0.14, 0.05, 0.01]) * (1 - a / 7)
                      + np.array([0.01, 0.05, 0.24, 0.70]) * (a / 7) for a in range(8)])
        p /= p.sum(axis=1, keepdims=True)
        state = g.bit_generator.state
        one_by_one = np.zeros((8, 4))
        np.add.at(one_by_one, (ages, [g.choice(4, p=p[a]) for a in ages]), 1)
        table = syn.example_table(seed=seed)
        np.testing.assert_array_equal(table, one_by_one)
        assert table.sum() == 10_000
        g.bit_generator.state = state
        wrong_rows = np.zeros((8, 4))
        np.add.at(wrong_rows, (ages, [g.choice(4, p=p[7 - a]) for a in ages]), 1)
        assert not np.array_equal(table, wrong_rows)


# --------------------------------------------------------------- issue 31: the baselines
TABLE = syn.example_table()
WORKLOAD = syn.table_workload(*TABLE.shape)


def _marginals_of(records, shape=(2, 2)):
    """The two 1-way marginals of a dataset of (row, column) records, concatenated."""
    t = np.zeros(shape)
    np.add.at(t, tuple(np.asarray(records, int).reshape(-1, 2).T), 1)
    return np.concatenate([t.sum(axis=1), t.sum(axis=0)])


@pytest.mark.parametrize("neighbours, sensitivity", [("substitute", 4.0), ("add_remove", 2.0)])
def test_marginals_scale_is_the_brute_force_sensitivity_over_epsilon(neighbours, sensitivity):
    """Exact: over every dataset of 3 records from a 2 x 2 domain, the two 1-way marginals
    together move by 4 in L1 (substitution) or 2 (add/remove); the scale is that over
    epsilon. The old calibration, Lap(2/epsilon) per marginal under substitution, has a
    worst-case privacy loss of 4 / (2/epsilon) = 2 epsilon: it is not epsilon-DP."""
    from dpteach.sensitivity import global_sensitivity
    universe = [(0, 0), (0, 1), (1, 0), (1, 1)]
    found = global_sensitivity(_marginals_of, universe, 3, neighbours=neighbours)
    assert found == sensitivity
    for eps in (0.25, 1.0, 3.0):
        b = syn.marginals_scale(2, eps, neighbours=neighbours)
        assert found / b == pytest.approx(eps, rel=1e-12)           # the privacy loss is epsilon
    old = 2.0 / 1.0                                                   # the kit's scale before issue 31
    assert global_sensitivity(_marginals_of, universe, 3, neighbours="substitute") / old == 2.0
    assert syn.marginals_scale(1, 1.0) == 2.0 and syn.marginals_scale(1, 1.0, neighbours="add_remove") == 1.0


def test_independent_marginals_noise_is_lap_4_over_epsilon():
    """The released marginals carry Lap(2d/epsilon) = Lap(4/epsilon) per cell for a 2-D
    table under substitution (KS at alpha 1e-6); the old Lap(2/epsilon) is rejected."""
    eps = 0.5
    exact = np.concatenate([TABLE.sum(axis=1), TABLE.sum(axis=0)])
    noise = np.concatenate([np.concatenate(syn.noisy_marginals(TABLE, eps, rng=np.random.default_rng(s))) - exact
                            for s in range(400)])
    assert ks_pvalue(noise, stats.laplace(scale=4 / eps).cdf) > ALPHA
    assert ks_pvalue(noise, stats.laplace(scale=2 / eps).cdf) < ALPHA      # the old calibration
    ar = np.concatenate([np.concatenate(syn.noisy_marginals(TABLE, eps, neighbours="add_remove",
                                                            rng=np.random.default_rng(s))) - exact
                         for s in range(400)])
    assert ks_pvalue(ar, stats.laplace(scale=2 / eps).cdf) > ALPHA
    assert ks_pvalue(ar, stats.laplace(scale=4 / eps).cdf) < ALPHA


def test_independent_marginals_total_only_under_substitution():
    """Under substitution n is public and the release keeps it; under add/remove the total
    is an estimate from the noisy marginals (the old code revealed the exact n)."""
    n = TABLE.sum()
    sub = [syn.independent_marginals(TABLE, 1.0, rng=np.random.default_rng(s)).sum() for s in range(5)]
    assert np.allclose(sub, n)
    ar = [syn.independent_marginals(TABLE, 1.0, neighbours="add_remove", rng=np.random.default_rng(s)).sum()
          for s in range(20)]
    assert not np.any(np.isclose(ar, n, rtol=0, atol=1e-6)) and abs(np.mean(ar) - n) < 20


@pytest.mark.parametrize("neighbours, b", [("substitute", 2.0), ("add_remove", 1.0)])
def test_noisy_histogram_noise(neighbours, b):
    eps = 0.8
    noise = np.concatenate([(syn.noisy_histogram(TABLE, eps, neighbours=neighbours,
                                                 rng=np.random.default_rng(s)) - TABLE).ravel()
                            for s in range(300)])
    assert ks_pvalue(noise, stats.laplace(scale=b / eps).cdf) > ALPHA
    assert ks_pvalue(noise, stats.laplace(scale=b / eps / 2).cdf) < ALPHA        # eps/2 twin: half the noise
    assert ks_pvalue(noise, stats.laplace(scale=2 * b / eps).cdf) < ALPHA


def test_noisy_histogram_beats_mwem_on_the_small_table_and_loses_on_a_large_domain(committed_stream):
    """Notebook 20's comparison: on the 32-cell table the noisy histogram's largest error
    (median of seeds 0-4) is about 19 at epsilon = 1 and 76 at 0.25, far below MWEM's; on 12
    binary attributes (4,096 cells, 264 two-way marginal queries) MWEM wins. The notebook's
    numbers come from the committed seeds, so this test draws from them whatever
    --seed-shift says; the test below checks the comparison itself on other seeds."""
    def median(f):
        return np.median([f(committed_stream(s)) for s in range(5)])
    for eps, expected in ((1.0, 19.0), (0.25, 76.0)):
        nh = median(lambda g: syn.workload_error(TABLE, syn.noisy_histogram(TABLE, eps, rng=g), WORKLOAD))
        mw = median(lambda g: syn.workload_error(TABLE, syn.mwem(TABLE, WORKLOAD, eps, 15, passes=5, rng=g),
                                                 WORKLOAD))
        assert round(nh) == expected and mw > 4 * nh
    big = syn.example_binary_table()
    q = syn.marginal_queries(big.shape, 2)
    assert big.size == 4096 and q.shape == (264, 4096) and big.sum() == 1000
    nh = [syn.workload_error(big, syn.noisy_histogram(big, 1.0, rng=np.random.default_rng(s)), q) for s in range(3)]
    mw = [syn.workload_error(big, syn.mwem(big, q, 1.0, 20, passes=5, rng=np.random.default_rng(s)), q)
          for s in range(3)]
    assert np.median(mw) < 0.8 * np.median(nh)


def test_on_any_seeds_the_noisy_histogram_wins_on_the_small_table_and_mwem_on_the_large():
    """The comparison, not the notebook's numbers: on fresh seeds (shifted by --seed-shift)
    the noisy histogram's median largest error over 9 runs stays far below MWEM's on the
    32-cell table, at epsilon = 1 and 0.25, and above it on the 4,096-cell one."""
    for eps in (1.0, 0.25):
        nh = np.median([syn.workload_error(TABLE, syn.noisy_histogram(TABLE, eps, rng=np.random.default_rng(100 + s)),
                                           WORKLOAD) for s in range(9)])
        mw = np.median([syn.workload_error(TABLE, syn.mwem(TABLE, WORKLOAD, eps, 15, passes=5,
                                                           rng=np.random.default_rng(100 + s)), WORKLOAD)
                        for s in range(9)])
        assert mw > 3 * nh, (eps, nh, mw)
    # and on 12 binary attributes MWEM wins: over 57 seed sets of 7 runs the ratio of the
    # medians was at most 0.77 (mean 0.58), so "below the noisy histogram's" has room
    big = syn.example_binary_table()
    q = syn.marginal_queries(big.shape, 2)
    nh = np.median([syn.workload_error(big, syn.noisy_histogram(big, 1.0, rng=np.random.default_rng(100 + s)), q)
                    for s in range(7)])
    mw = np.median([syn.workload_error(big, syn.mwem(big, q, 1.0, 20, passes=5, rng=np.random.default_rng(100 + s)),
                                       q) for s in range(7)])
    assert mw < nh, (nh, mw)


def test_marginal_queries_are_every_marginal_cell():
    shape = (2, 3, 2)
    cells = list(np.ndindex(*shape))
    for order in (1, 2, 3):
        q = syn.marginal_queries(shape, order)
        expected = set()
        import itertools
        for attrs in itertools.combinations(range(3), order):
            for vals in itertools.product(*(range(shape[a]) for a in attrs)):
                expected.add(tuple(float(all(c[a] == v for a, v in zip(attrs, vals))) for c in cells))
        assert {tuple(r) for r in q} == expected and len(q) == len(expected)
        assert np.allclose(q.reshape(len(q), *shape).sum(axis=0), len(list(itertools.combinations(range(3), order))))


def test_sample_records_follow_the_clipped_histogram():
    s = np.array([[5.0, -3.0], [1.0, 4.0]])           # a noisy histogram: the negative cell counts as 0
    rec = syn.sample_records(s, 20_000, rng=np.random.default_rng(3))
    assert rec.shape == (20_000, 2) and rec.dtype.kind == "i"
    counts = np.zeros((2, 2))
    np.add.at(counts, tuple(rec.T), 1)
    assert counts[0, 1] == 0
    p = np.maximum(s, 0).ravel()
    assert chisq_pvalue(counts.ravel(), p) > ALPHA
    twin = np.abs(s).ravel()                          # negatives taken as their size: wrong
    assert chisq_pvalue(counts.ravel(), twin) < ALPHA
    shifted = (s - s.min()).ravel()                   # shifted up to make every cell >= 0: wrong too
    assert chisq_pvalue(counts.ravel(), shifted) < ALPHA


# ------------------------------------------------------------- issue 31: MWEM's release
def test_average_release_is_the_mean_of_the_rounds():
    h, _ = syn.mwem_rounds(TABLE, WORKLOAD, 1.0, 15, rng=np.random.default_rng(4))
    avg = syn.mwem(TABLE, WORKLOAD, 1.0, 15, release="average", rng=np.random.default_rng(4))
    assert np.allclose(avg, np.mean(h[1:], axis=0)) and not np.allclose(avg, np.mean(h, axis=0))
    assert np.array_equal(syn.mwem(TABLE, WORKLOAD, 1.0, 15, rng=np.random.default_rng(4)), h[-1])
    assert avg.sum() == pytest.approx(TABLE.sum())
    with pytest.raises(ValueError, match="release"):
        syn.mwem(TABLE, WORKLOAD, 1.0, 15, release="mean")


def test_mwem_error_bound_is_hlm12s_theorem_and_its_best_T():
    n, D, Q, eps = 10_000.0, 32, 180, 1.0
    T = np.arange(1, 400)
    bound = syn.mwem_error_bound(n, D, Q, eps, T)
    assert np.allclose(bound, 2 * n * np.sqrt(np.log(D) / T) + 10 * T * np.log(Q) / eps)
    best = (n * eps * np.sqrt(np.log(D)) / (10 * np.log(Q))) ** (2 / 3)
    assert abs(T[np.argmin(bound)] - best) <= 1
    twin = 2 * n * np.sqrt(np.log(D) / T) + 10 * T * np.log(Q) / (eps / 2)    # eps/2: a different T
    assert T[np.argmin(twin)] != T[np.argmin(bound)]
    assert syn.mwem_error_bound(n, D, Q, eps, 15) == pytest.approx(bound[14])


# ------------------------------------------------------------------ issue 31: the edges
def test_tiny_epsilon_gives_a_finite_release():
    for eps in (1e-308, 1e-320):
        out = syn.mwem([3.0, 1.0, 2.0], np.eye(3), eps, 1, rng=np.random.default_rng(0))
        assert np.all(np.isfinite(out)) and out.sum() == pytest.approx(6.0)
        out = syn.mwem(TABLE, WORKLOAD, eps, 3, passes=2, release="average", rng=np.random.default_rng(0))
        assert np.all(np.isfinite(out)) and out.sum() == pytest.approx(TABLE.sum())


def test_update_on_an_all_zero_synthetic_is_refused():
    for total in (None, 5.0):
        with pytest.raises(ValueError, match="synthetic"):
            syn.multiplicative_weights_update([0.0, 0.0, 0.0], [1, 0, 0], 1.0, total=total)
    # one side empty: the step is exact (nothing to move), not NaN
    assert np.allclose(syn.multiplicative_weights_update([0.0, 2.0, 3.0], [1, 0, 0], 50.0), [0.0, 2.0, 3.0])
    assert np.allclose(syn.multiplicative_weights_update([1.0, 2.0, 3.0], [1, 1, 1], -50.0), [1.0, 2.0, 3.0])


def test_huge_workloads_and_runaway_mwem_are_refused_by_name():
    assert syn.range_queries(271).shape == (271 * 272 // 2, 271)
    for k in (272, 1000, 2000):
        with pytest.raises(ValueError, match="domain_size"):
            syn.range_queries(k)
    with pytest.raises(ValueError, match="n_rows"):
        syn.table_workload(200, 10)
    with pytest.raises(ValueError, match="order"):
        syn.marginal_queries((2,) * 20, 3)
    for T, passes in ((100, 1000), (10_000, 2), (15, 100_000)):
        with pytest.raises(ValueError, match="passes"):
            syn.mwem(TABLE, WORKLOAD, 1.0, T, passes=passes)
    assert syn._mwem_work(15, 1000, 180, 32) <= syn.MAX_MWEM_WORK      # passes=1000 at T = 15 still runs


# ------------------------------------------------------------------
# Bad and extreme input for every public function of dpteach.synthetic (issue 31).
#
# Three tables, in the house style of tests/lessons/test_bad_input.py and tests/_bad_values.py:
#
# * ``_TABLE``: the usual bad values by kind (NaN, infinities, booleans, strings, None,
#   empty and ragged arrays, wrong shapes): each raises ValueError or TypeError naming the
#   parameter, before any random number is drawn;
# * ``_EDGES``: well-formed extremes (1e-320, 1e308, 10**400, -1e-320 for reals; 10**12,
#   10**400, 1e308 and 1e-320 for counts and sizes; the first entry of an array replaced by
#   each extreme): each is refused by name or answered finitely, within a few seconds;
# * ``_HUGE``: sizes that would need gigabytes or minutes (issue 31: ``range_queries(1000)``
#   raised MemoryError, ``mwem(passes=1000)`` ran for half a minute): refused by name at once,
#   checked in a child process limited to 1 GB of address space.
#
# The rows come from a fuzz over every parameter of every public function (1,231 probes,
# each in a forked child with a 2 GB and 20 s limit); a public function added to the module
# without rows fails ``test_every_public_function_has_rows``.


H = [3.0, 1.0, 2.0]
T2 = [[3.0, 1.0], [2.0, 2.0]]
Q3 = np.eye(3)
BAD_HISTOGRAM = BAD_VALUES + [[], [[1.0, 2.0], [3.0]], [-1.0, 1.0, 1.0], [0.0, 0.0, 0.0],
                              [1e308, 1e308, 1.0], [1e308] * 3]
BAD_QUERIES = [np.eye(2), 0.5 * Q3, 2 * Q3, "q", None, [[1.0, 0.0], [1.0]], np.full((2, 3), np.nan),
               [[True, False, False]], np.zeros((0, 3))]
BAD_NEIGHBOURS = ["sub", "add-remove", None, 2, True]
BAD_ORDER = BAD_COUNT + [3]              # a (2, 3) table has only two attributes
BAD_SHAPE = [(), "ab", None, (2, 0), (2, -1), (2.5, 2), [2, "a"], (True, 2), 1.5]

_TABLE = [
    (syn.mwem, dict(histogram=H, queries=Q3, epsilon=1.0, iterations=2),
     dict(histogram=BAD_HISTOGRAM, queries=BAD_QUERIES, epsilon=BAD_EPSILON, iterations=BAD_COUNT,
          passes=BAD_COUNT, release=["mean", None, 1, "Last"], rng=BAD_RNG)),
    (syn.mwem_rounds, dict(histogram=H, queries=Q3, epsilon=1.0, iterations=2),
     dict(histogram=BAD_HISTOGRAM, queries=BAD_QUERIES, epsilon=BAD_EPSILON, iterations=BAD_COUNT,
          passes=BAD_COUNT, rng=BAD_RNG)),
    (syn.mwem_error_bound, dict(n=100.0, domain_size=32, n_queries=180, epsilon=1.0, iterations=10),
     dict(n=BAD_REAL + [0.0, -1.0], domain_size=BAD_COUNT, n_queries=BAD_COUNT, epsilon=BAD_EPSILON,
          iterations=[0, -1, 2.5, float("nan"), float("inf"), True, "3", None, [1, 0], [2.5], 10 ** 400])),
    (syn.multiplicative_weights_update, dict(synthetic=[2.0, 2.0, 2.0], query=[1, 0, 0], measurement=3.0),
     dict(synthetic=BAD_HISTOGRAM + [3.0], query=[[1, 0], [0.5, 0, 0], [[1, 0, 0], [0, 1, 0]], "q", None,
                                                  [True, False, False], [np.nan, 0, 0]],
          measurement=BAD_REAL, total=[v for v in BAD_EPSILON if v is not None] + [1e-320])),
    (syn.mwem_selection_probabilities, dict(histogram=H, synthetic=[2.0, 2.0, 2.0], queries=Q3, epsilon_round=0.5),
     dict(histogram=BAD_HISTOGRAM, synthetic=BAD_HISTOGRAM + [[1.0, 2.0]], queries=BAD_QUERIES,
          epsilon_round=BAD_EPSILON)),
    (syn.range_queries, dict(domain_size=4), dict(domain_size=BAD_COUNT + [272, 10 ** 6, 10 ** 400])),
    (syn.table_workload, dict(n_rows=3, n_cols=2), dict(n_rows=BAD_COUNT + [10 ** 400], n_cols=BAD_COUNT)),
    (syn.marginal_queries, dict(shape=(2, 3), order=2), dict(shape=BAD_SHAPE, order=BAD_ORDER)),
    (syn.workload_error, dict(histogram=H, synthetic=[2.0, 2.0, 2.0], queries=Q3),
     dict(histogram=BAD_VALUES + [[], [1.0, 2.0]], synthetic=BAD_VALUES + [[1.0, 2.0]],
          queries=BAD_QUERIES)),
    (syn.example_table, dict(seed=20), dict(seed=BAD_SEED)),
    (syn.example_binary_table, dict(n_attributes=4, n_records=50, seed=1),
     dict(n_attributes=BAD_COUNT + [21], n_records=BAD_COUNT + [10 ** 6 + 1], seed=BAD_SEED)),
    (syn.noisy_histogram, dict(histogram=T2, epsilon=1.0),
     dict(histogram=BAD_HISTOGRAM, epsilon=BAD_EPSILON + [1e-320], neighbours=BAD_NEIGHBOURS, rng=BAD_RNG)),
    (syn.marginals_scale, dict(n_marginals=2, epsilon=1.0),
     dict(n_marginals=BAD_COUNT, epsilon=BAD_EPSILON + [1e-320], neighbours=BAD_NEIGHBOURS)),
    (syn.noisy_marginals, dict(table=T2, epsilon=1.0),
     dict(table=BAD_HISTOGRAM + [3.0], epsilon=BAD_EPSILON + [1e-320], neighbours=BAD_NEIGHBOURS, rng=BAD_RNG)),
    (syn.independent_marginals, dict(table=T2, epsilon=1.0),
     dict(table=BAD_HISTOGRAM + [[1.0, 2.0], 3.0], epsilon=BAD_EPSILON + [1e-320], neighbours=BAD_NEIGHBOURS,
          rng=BAD_RNG)),
    (syn.sample_records, dict(synthetic=T2, n_records=5),
     dict(synthetic=BAD_VALUES + [[], [-1.0, -2.0], [0.0, 0.0], [1e308, 1e308]],
          n_records=[-1, 2.5, float("nan"), True, "3", None, 10 ** 12], rng=BAD_RNG)),
]


@pytest.mark.parametrize("func, good, param, bad", rows(_TABLE))
def test_bad_values_are_refused_naming_the_parameter(func, good, param, bad):
    check_row(func, good, param, bad)


# ----------------------------------------------------------------- well-formed extremes
BIG = syn.example_table()
BIG_Q = syn.table_workload(8, 4)
#: (function, good kwargs, real parameters, count parameters, array parameters)
_EDGES = [
    (syn.mwem, dict(histogram=H, queries=Q3, epsilon=1.0, iterations=2, rng=0), ("epsilon",),
     ("iterations", "passes"), ("histogram",)),
    (syn.mwem, dict(histogram=BIG, queries=BIG_Q, epsilon=1.0, iterations=15, passes=5, release="average",
                    rng=0), ("epsilon",), ("iterations", "passes"), ()),
    (syn.mwem_rounds, dict(histogram=H, queries=Q3, epsilon=1.0, iterations=3, passes=2, rng=0), ("epsilon",),
     ("iterations", "passes"), ("histogram",)),
    (syn.mwem_error_bound, dict(n=100.0, domain_size=32, n_queries=180, epsilon=1.0, iterations=10),
     ("n", "epsilon"), ("domain_size", "n_queries", "iterations"), ()),
    (syn.multiplicative_weights_update, dict(synthetic=[2.0, 2.0, 2.0], query=[1, 0, 0], measurement=3.0),
     ("measurement", "total"), (), ("synthetic",)),
    (syn.mwem_selection_probabilities, dict(histogram=H, synthetic=[2.0, 2.0, 2.0], queries=Q3,
                                            epsilon_round=0.5), ("epsilon_round",), (), ("histogram", "synthetic")),
    (syn.range_queries, dict(domain_size=4), (), ("domain_size",), ()),
    (syn.table_workload, dict(n_rows=3, n_cols=2), (), ("n_rows", "n_cols"), ()),
    (syn.marginal_queries, dict(shape=(2, 3), order=2), (), ("order",), ("shape",)),
    (syn.workload_error, dict(histogram=H, synthetic=[2.0, 2.0, 2.0], queries=Q3), (), (),
     ("histogram", "synthetic")),
    (syn.example_table, dict(seed=20), (), ("seed",), ()),
    (syn.example_binary_table, dict(n_attributes=4, n_records=50, seed=1), (), ("n_attributes", "n_records", "seed"),
     ()),
    (syn.noisy_histogram, dict(histogram=T2, epsilon=1.0, rng=0), ("epsilon",), (), ("histogram",)),
    (syn.marginals_scale, dict(n_marginals=2, epsilon=1.0), ("epsilon",), ("n_marginals",), ()),
    (syn.noisy_marginals, dict(table=T2, epsilon=1.0, rng=0), ("epsilon",), (), ("table",)),
    (syn.independent_marginals, dict(table=T2, epsilon=1.0, rng=0), ("epsilon",), (), ("table",)),
    (syn.independent_marginals, dict(table=T2, epsilon=1.0, neighbours="add_remove", rng=0), ("epsilon",), (),
     ("table",)),
    (syn.sample_records, dict(synthetic=T2, n_records=5, rng=0), (), ("n_records",), ("synthetic",)),
]


def _edge_rows():
    out = []
    for func, good, reals, sizes, arrays in _EDGES:
        for kind, params, values in (("real", reals, EXTREME), ("size", sizes, EXTREME_SIZES),
                                     ("array", arrays, EXTREME)):
            for p in params:
                out.append(pytest.param(func, good, p, kind, values, id=f"{func.__name__}-{p}-{len(out)}"))
    return out


def _replace_first(value, v):
    if isinstance(value, tuple):                  # a shape: its first size
        return (v,) + value[1:]
    arr = np.array(value, dtype=object)
    arr.flat[0] = v
    return arr.tolist()


def _alarm(signum, frame):
    raise TimeoutError("the call ran for over 20 s")


@pytest.mark.parametrize("func, good, param, kind, values", _edge_rows())
def test_extremes_are_refused_by_name_or_answered_finitely(func, good, param, kind, values):
    problems = []
    for v in values:
        kwargs = dict(good)
        kwargs[param] = _replace_first(good[param], v) if kind == "array" else v
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(20)
        try:
            out = func(**kwargs)
        except (ValueError, TypeError) as err:
            if param not in str(err) and not (kind == "array" and param == "shape" and "shape" in str(err)):
                problems.append(f"{param}={v!r}: the message does not name {param!r}: {err}")
            continue
        except Exception as err:                  # noqa: BLE001 - reported, not hidden
            problems.append(f"{param}={v!r}: raised {type(err).__name__}: {err}")
            continue
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        if not is_finite_answer(out):
            problems.append(f"{param}={v!r} returned a non-finite answer: {out!r}")
    assert not problems, "\n".join(problems)


def test_the_answers_at_the_extremes_are_right():
    """Accepted extremes give the right answer, not only a finite one."""
    # a subnormal epsilon: selection uniform, the measurement's noise astronomically large,
    # so one update moves (almost) all mass to one side; the total is kept
    out = syn.mwem(H, Q3, 1e-320, 1, rng=0)
    assert out.sum() == pytest.approx(6.0) and np.isclose(out, 0).sum() >= 1
    # a huge epsilon: the exact worst query is measured exactly
    for seed in range(5):                         # errors 3, 1, 2 at the uniform start: query 0
        history, chosen = syn.mwem_rounds([5.0, 1.0, 0.0], Q3, 1e308, 1, rng=seed)
        exact = syn.multiplicative_weights_update([2.0, 2.0, 2.0], [1, 0, 0], 5.0)   # noise 0: m = q(x)
        assert chosen == [0] and np.allclose(history[1], exact, rtol=1e-12)
    # a measurement beyond what exp can take: the covered cells take everything
    assert np.allclose(syn.multiplicative_weights_update([1.0, 2.0, 3.0], [1, 0, 0], 1e308), [6.0, 0.0, 0.0])
    assert np.allclose(syn.multiplicative_weights_update([1.0, 2.0, 3.0], [1, 0, 0], -1e308), [0.0, 2.4, 3.6])
    assert syn.mwem_error_bound(1.0, 10 ** 400, 2, 1.0, 1) == pytest.approx(2 * np.sqrt(400 * np.log(10)) + 10 * np.log(2))
    assert syn.sample_records(T2, 0, rng=0).shape == (0, 2)


# -------------------------------------------------------------- huge sizes, in a child
_HUGE = textwrap.dedent("""
    import resource, time, numpy as np
    resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))
    from dpteach import synthetic as syn
    t, q = syn.example_table(), syn.table_workload(8, 4)
    calls = [("domain_size", lambda: syn.range_queries(1000)), ("domain_size", lambda: syn.range_queries(2000)),
             ("n_rows", lambda: syn.table_workload(2000, 100)),
             ("order", lambda: syn.marginal_queries((2,) * 20, 2)),
             ("passes", lambda: syn.mwem(t, q, 1.0, 100, passes=1000)),
             ("passes", lambda: syn.mwem(t, q, 1.0, 15, passes=100_000)),
             ("iterations", lambda: syn.mwem(t, q, 1.0, 10 ** 12)),
             ("n_records", lambda: syn.sample_records(t, 10 ** 12)),
             ("n_records", lambda: syn.example_binary_table(12, 10 ** 12))]
    for name, call in calls:
        start = time.time()
        try:
            call()
            print("ACCEPTED", name)
        except (ValueError, TypeError) as err:
            assert name in str(err), (name, str(err))
            assert time.time() - start < 1.0, (name, time.time() - start)
    print("done")
""")


def test_huge_sizes_are_refused_at_once_within_a_gigabyte():
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    run = subprocess.run([sys.executable, "-c", _HUGE], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["done"], run.stdout


def test_every_public_function_has_rows():
    import inspect
    covered = {}
    for func, _good, bad in _TABLE:
        covered.setdefault(func, set()).update(bad)
    missing = []
    for name in syn.__all__:
        obj = getattr(syn, name)
        if not callable(obj):
            continue
        params = set(inspect.signature(obj).parameters)
        gaps = params - covered.get(obj, set())
        if gaps:
            missing.append(f"{name}: {sorted(gaps)}")
    assert not missing, "public functions of dpteach.synthetic without bad-input rows:\n" + "\n".join(missing)
    assert {f for f, *_ in _EDGES} >= {getattr(syn, n) for n in syn.__all__ if callable(getattr(syn, n))}
