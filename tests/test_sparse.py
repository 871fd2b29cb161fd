"""Sparse and NumericSparse (Dwork & Roth 2014, Algorithms 2 and 3): c answers above the
threshold with fresh threshold noise after each, and noisy values with NumericSparse.
Statistical tests at alpha = 1e-6, each against a wrong twin."""

import numpy as np
import pytest
from scipy import stats

from conftest import ALPHA, chisq_pvalue, ks_pvalue
import dpteach as dp

ANSWERS = np.array([3.0, 9.0, 4.0, 11.0, 2.0, 10.0, 12.0, 1.0])


def test_c_one_is_above_threshold_in_distribution():
    k = ANSWERS.size
    p = dp.sparse_vector.above_threshold_probabilities(ANSWERS, 8.0, 1.0)
    counts = np.zeros(k + 1)
    rng = np.random.default_rng(1)
    for _ in range(20_000):
        out = dp.sparse(ANSWERS, 8.0, 1.0, 1, rng=rng)
        counts[out[0] if out else k] += 1
    assert chisq_pvalue(counts, p) > ALPHA
    twin = dp.sparse_vector.above_threshold_probabilities(ANSWERS, 8.0, 2.0)  # budget not split
    assert chisq_pvalue(counts, twin) < ALPHA


def _simulate(answers, t, eps, c, rng, runs, *, fresh=True, split=True):
    """Reference simulation of Algorithm 2, with switches for the wrong twins."""
    sigma = 2 * (c if split else 1) / eps
    out = []
    for _ in range(runs):
        found, thr = [], t + rng.laplace(0, sigma)
        for i, a in enumerate(answers):
            if a + rng.laplace(0, 2 * sigma) >= thr:
                found.append(i)
                if len(found) == c:
                    break
                if fresh:
                    thr = t + rng.laplace(0, sigma)
        out.append(tuple(found))
    return out


def _histogram(outcomes, support):
    index = {o: j for j, o in enumerate(support)}
    counts = np.zeros(len(support))
    for o in outcomes:
        counts[index[o]] += 1
    return counts


def test_sparse_matches_the_algorithm_and_rejects_twins():
    t, eps, c, runs = 8.0, 2.0, 2, 20_000
    rng = np.random.default_rng(2)
    got = [tuple(dp.sparse(ANSWERS, t, eps, c, rng=rng)) for _ in range(runs)]
    ref = _simulate(ANSWERS, t, eps, c, np.random.default_rng(3), 200_000)
    support = sorted(set(got) | set(ref))
    p = _histogram(ref, support) / len(ref)
    assert chisq_pvalue(_histogram(got, support), p + 1e-12) > ALPHA
    for twin in (_simulate(ANSWERS, t, eps, c, np.random.default_rng(4), 200_000, split=False),
                 _simulate(ANSWERS, t, eps, c, np.random.default_rng(5), 200_000, fresh=False)):
        support_t = sorted(set(got) | set(twin) | set(ref))
        q = _histogram(twin, support_t) / len(twin)
        assert chisq_pvalue(_histogram(got, support_t), q + 1e-12) < ALPHA


def test_sparse_returns_at_most_c_increasing_indices():
    rng = np.random.default_rng(6)
    for c in (1, 2, 3, 8):
        for _ in range(200):
            out = dp.sparse(ANSWERS, 5.0, 1.0, c, rng=rng)
            assert len(out) <= c and out == sorted(set(out))


def test_numeric_sparse_values_are_laplace_with_the_right_scale():
    answers = np.array([1000.0, 1000.0, 1000.0])  # far above the threshold: always reported
    eps, c = 1.0, 3
    rng = np.random.default_rng(7)
    noise = []
    for _ in range(6000):
        out = dp.numeric_sparse(answers, 0.0, eps, c, rng=rng)
        assert [i for i, _ in out] == [0, 1, 2]
        noise += [v - 1000.0 for _, v in out]
    scale = 2 * c / (2 * eps / 9)   # 2c / epsilon_2 with epsilon_2 = 2 epsilon / 9
    assert ks_pvalue(noise, stats.laplace(scale=scale).cdf) > ALPHA
    assert ks_pvalue(noise, stats.laplace(scale=2 * c / eps).cdf) < ALPHA  # the unsplit twin


@pytest.mark.parametrize("call, name", [
    (lambda: dp.sparse(ANSWERS, 5.0, 1.0, 0), "c"),
    (lambda: dp.sparse(ANSWERS, 5.0, 1.0, True), "c"),
    (lambda: dp.sparse(ANSWERS, 5.0, 1.0, 9), "c"),
    (lambda: dp.sparse(ANSWERS, 5.0, 0.0, 1), "epsilon"),
    (lambda: dp.sparse(ANSWERS, float("nan"), 1.0, 1), "threshold"),
    (lambda: dp.numeric_sparse(ANSWERS, 5.0, 1.0, 2, sensitivity=-1.0), "sensitivity"),
    (lambda: dp.numeric_sparse(ANSWERS, 5.0, float("inf"), 2), "epsilon"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()
