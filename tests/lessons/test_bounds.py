"""Tests for dpteach.bounds: Laplace tails and accuracy, the exponential mechanism's
utility theorem (with the seed's misprinted numbers corrected)."""

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import bounds, mechanisms
from conftest import ALPHA

SEED = 20261122


def accepts_and_rejects(pvalue_of, good, twins):
    assert pvalue_of(good) >= ALPHA, "correct implementation rejected"
    assert twins
    for name, twin in twins.items():
        assert pvalue_of(twin) < ALPHA, f"wrong twin '{name}' not rejected"


# ------------------------------------------------------------------------ laplace_tail
def test_laplace_tail_formula_and_scipy():
    for b in (0.1, 1.0, 7.5):
        t = np.array([0.0, 0.3, 1.0, 5.0, 40.0]) * b
        np.testing.assert_allclose(bounds.laplace_tail(b, t), np.exp(-t / b), rtol=1e-14)
        # two-sided tail of scipy's Laplace law
        np.testing.assert_allclose(bounds.laplace_tail(b, t), 2 * stats.laplace(scale=b).sf(t),
                                   rtol=1e-12)
    assert bounds.laplace_tail(2.0, 0) == 1.0
    assert type(bounds.laplace_tail(2.0, 1.0)) is float
    assert bounds.laplace_tail(1.0, [[1.0, 2.0]]).shape == (1, 2)


def test_laplace_tail_at_k_scales_is_e_to_minus_k_whatever_b():
    for k in (1, 2, 3):
        for b in (0.01, 1, 100):
            assert bounds.laplace_tail(b, k * b) == pytest.approx(np.exp(-k), rel=1e-14)


def test_laplace_tail_against_samples_with_wrong_twin():
    n, sens, eps, t = 100_000, 1.0, 0.5, 3.0
    b = sens / eps
    prob = bounds.laplace_tail(b, t)

    def pvalue(releases):
        hits = int((np.abs(releases) >= t).sum())
        return stats.binomtest(hits, n, prob).pvalue

    rng = np.random.default_rng
    accepts_and_rejects(pvalue, mechanisms.laplace_mechanism(0.0, sens, eps, rng=rng(SEED), size=n), {
        "scale x1.1": mechanisms.laplace_mechanism(0.0, 1.1 * sens, eps, rng=rng(1), size=n),
        "Gaussian with the same sd": rng(2).normal(0, np.sqrt(2) * b, size=n),
    })


# -------------------------------------------------------------------- laplace_accuracy
def test_laplace_accuracy_inverts_the_tail():
    for b in (0.5, 2.0):
        for beta in (0.5, 0.05, 1e-6):
            t = bounds.laplace_accuracy(b, beta)
            assert t == pytest.approx(b * np.log(1 / beta), rel=1e-14)
            assert bounds.laplace_tail(b, t) == pytest.approx(beta, rel=1e-12)
    # 95% of Lap(1) noise is within ln 20 = 3.0
    assert round(bounds.laplace_accuracy(1.0, 0.05), 2) == 3.0
    assert type(bounds.laplace_accuracy(1.0, 0.05)) is float


# --------------------------------------------------------- exponential_utility_threshold
def test_exponential_utility_threshold_seed_examples_corrected():
    # seed 004: |R| = 4 nationalities, t = 3, Delta = 1, eps = 1: loss 2(ln 4 + 3) = 8.77
    # (the slides print 6.8)
    x = bounds.exponential_utility_threshold(0, 1, 1, 4, 3)
    assert x == pytest.approx(-2 * (np.log(4) + 3), rel=1e-14)
    assert round(x, 2) == -8.77
    # |R| = 5 eye colours: 2(ln 5 + 3) = 9.22 (the slides print 7.4, a base-10 logarithm)
    y = bounds.exponential_utility_threshold(0, 1, 1, 5, 3)
    assert round(y, 2) == -9.22
    assert round(-2 * (np.log10(5) + 3), 1) == -7.4           # where the misprint comes from
    assert type(x) is float


def test_exponential_utility_threshold_general_formula():
    opt, d, eps, n, t, n_opt = 120.0, 2.0, 0.5, 1000, 1.5, 4
    expected = opt - (2 * d / eps) * (np.log(n / n_opt) + t)
    assert bounds.exponential_utility_threshold(opt, d, eps, n, t, n_optimal=n_opt) == \
        pytest.approx(expected, rel=1e-14)
    # every candidate optimal and t = 0: the threshold is OPT itself
    assert bounds.exponential_utility_threshold(5, 1, 1, 7, 0, n_optimal=7) == 5.0
    # the loss shrinks as 1/eps
    loss = [5 - bounds.exponential_utility_threshold(5, 1, e, 10, 2) for e in (0.5, 1, 2)]
    assert loss[0] == pytest.approx(2 * loss[1]) and loss[1] == pytest.approx(2 * loss[2])


def _mass_at_or_below(scores, threshold, sensitivity, eps):
    p = mechanisms.exponential_probabilities(scores, sensitivity, eps)
    return p[scores <= threshold].sum()


@pytest.mark.parametrize("n,t,eps", [(4, 3, 1.0), (5, 3, 0.5), (1000, 1, 1.0), (50, 0.5, 2.0)])
def test_the_theorem_holds_exactly_and_the_log10_misprint_does_not(n, t, eps):
    # worst case for the theorem: one optimal candidate, the rest exactly at the threshold
    d, opt = 1.0, 0.0
    x = bounds.exponential_utility_threshold(opt, d, eps, n, t)
    scores = np.r_[opt, np.full(n - 1, x)]
    mass = _mass_at_or_below(scores, x, d, eps)
    assert mass <= np.exp(-t)
    assert mass > 0.5 * np.exp(-t)                  # and the bound is nearly tight here
    # the base-10 version (the slides' 7.4) puts the threshold too close to OPT
    x10 = opt - (2 * d / eps) * (np.log10(n) + t)
    scores10 = np.r_[opt, np.full(n - 1, x10)]
    assert _mass_at_or_below(scores10, x10, d, eps) > np.exp(-t)


def test_the_theorem_on_random_score_vectors():
    rng = np.random.default_rng(SEED)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        d = float(rng.uniform(0.1, 3))
        eps = float(rng.uniform(0.05, 5))
        t = float(rng.uniform(0, 6))
        scores = rng.normal(0, 10, size=n).round(1)
        opt = scores.max()
        n_opt = int((scores == opt).sum())
        x = bounds.exponential_utility_threshold(opt, d, eps, n, t, n_optimal=n_opt)
        assert _mass_at_or_below(scores, x, d, eps) <= np.exp(-t) * (1 + 1e-12)


def test_public_names_are_exported():
    for name in set(bounds.__all__) & set(dp.CONTRACT):
        assert getattr(dp, name) is getattr(bounds, name)
