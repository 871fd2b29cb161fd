"""MWEM (notebook 20): the exact multiplicative-weights step, the selection and measurement
distributions of a round (alpha = 1e-6, each against a wrong twin), and the release's shape."""

import numpy as np
import pytest
from scipy import stats

from conftest import ALPHA, chisq_pvalue, ks_pvalue
from dpteach import synthetic as syn

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
