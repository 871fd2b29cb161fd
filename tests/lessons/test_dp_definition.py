"""Compute functions behind the panels of notebooks 00, 04, 05 and 07: seed 004's
coin-flip survey, the randomized-response error, posterior bounds, the delta blip,
the two-cluster dataset and seed 000's joint privacy loss."""

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from conftest import ALPHA, chisq_pvalue, ks_pvalue
from dpteach import accounting as comp
from dpteach import definition as dd
from dpteach.panels import sensitivity as sp


# ------------------------------------------------------------ coin-flip survey
def test_coin_flip_survey_is_randomized_response_at_ln3(rng):
    n = 200_000
    for truth in (0, 1):
        reports = dd.coin_flip_survey(np.full(n, truth), rng=rng)
        ones = int(reports.sum())
        keep = dp.mechanisms.randomized_response_keep_probability(math.log(3))
        p1 = keep if truth else 1 - keep
        assert chisq_pvalue([n - ones, ones], [1 - p1, p1]) > ALPHA
        # wrong twin: the same test rejects epsilon = ln 2 (keep probability 2/3)
        wrong = 2 / 3 if truth else 1 / 3
        assert chisq_pvalue([n - ones, ones], [1 - wrong, wrong]) < ALPHA


def test_coin_flip_survey_ratio_is_three():
    assert math.isclose(dd.max_probability_ratio([0.75, 0.25], [0.25, 0.75]), 3.0)
    assert dd.coin_flip_survey(1, rng=np.random.default_rng(0)) in (0, 1)


# ---------------------------------------------------- randomized-response error
def test_rr_standard_error_matches_simulated_estimates(rng):
    eps, pi, n, surveys = 1.0, 0.3, 500, 4000
    truth = (np.arange(n) < int(pi * n)).astype(int)
    est = np.array([dp.randomized_response_estimate(dp.randomized_response(truth, eps, rng=rng), eps)
                    for _ in range(surveys)])
    se = dd.randomized_response_standard_error(pi, n, eps)
    # the estimate is (count/n - (1-p))/(2p-1) with count ~ Binomial(n, q) when the
    # truth fraction is exactly pi: standardised estimates follow N(0, 1) closely
    assert ks_pvalue((est - pi) / se, stats.norm.cdf) > ALPHA
    wrong = dd.randomized_response_standard_error(pi, n, eps / 2)             # wrong twin: eps/2
    assert ks_pvalue((est - pi) / wrong, stats.norm.cdf) < ALPHA


def test_rr_standard_error_shape_and_limits():
    ns = np.array([10, 100, 1000])
    se = dd.randomized_response_standard_error(0.5, ns, 1.0)
    assert se.shape == (3,) and np.allclose(se[:-1] / se[1:], math.sqrt(10))
    assert dd.randomized_response_standard_error(0.5, 100, 0.01) > 50 * dd.randomized_response_standard_error(0.5, 100, 1.0)


# ---------------------------------------------------------------- posteriors
def test_posterior_bounds_are_bayes_for_randomized_response():
    for prior in (0.01, 0.3, 0.5, 0.9):
        for eps in (0.1, math.log(3), 2.0):
            p = dp.mechanisms.randomized_response_keep_probability(eps)
            after_yes = prior * p / (prior * p + (1 - prior) * (1 - p))
            after_no = prior * (1 - p) / (prior * (1 - p) + (1 - prior) * p)
            lo, hi = dd.posterior_bounds(prior, eps)
            assert math.isclose(hi, after_yes, rel_tol=1e-12)
            assert math.isclose(lo, after_no, rel_tol=1e-12)


def test_posterior_bounds_simulated_population(rng):
    """Simulate people with the trait at rate prior, randomized response at ln 3;
    among those who said yes, the fraction with the trait matches the upper bound
    (chi-square at alpha 1e-6), and not the prior (the wrong twin)."""
    prior, eps, n = 0.2, math.log(3), 400_000
    trait = (rng.random(n) < prior).astype(int)
    said = dp.randomized_response(trait, eps, rng=rng)
    yes = said == 1
    k, m = int(trait[yes].sum()), int(yes.sum())
    hi = dd.posterior_bounds(prior, eps)[1]
    assert chisq_pvalue([m - k, k], [1 - hi, hi]) > ALPHA
    assert chisq_pvalue([m - k, k], [1 - prior, prior]) < ALPHA


def test_posterior_bounds_arrays_and_edges():
    lo, hi = dd.posterior_bounds(np.array([0.0, 0.5, 1.0]), 1.0)
    assert lo[0] == hi[0] == 0.0 and lo[2] == hi[2] == 1.0
    assert math.isclose(hi[1], math.e / (1 + math.e))


# ---------------------------------------------------------------------- blip
@pytest.mark.parametrize("eps,delta", [(0.5, 0.01), (1.0, 0.05), (2.0, 0.2)])
def test_blip_needs_exactly_delta(eps, delta):
    _, px, py = dd.blip_distributions(eps, delta)
    assert math.isclose(px.sum(), 1) and math.isclose(py.sum(), 1)
    assert math.isclose(dd.smallest_delta(px, py, eps), delta, rel_tol=1e-9)
    assert dd.smallest_delta(px, py, eps) > 0.99 * delta
    assert dd.max_probability_ratio(px, py) == math.inf
    # without the blip, the noisy count alone is eps-DP (ratio at most e^eps)
    _, qx, qy = dd.blip_distributions(eps, 0.0)
    assert dd.smallest_delta(qx, qy, eps) < 1e-12
    assert dd.max_probability_ratio(qx[:-2], qy[:-2]) <= math.exp(eps) * (1 + 1e-9)


# ------------------------------------------------------------ two-cluster data
def test_two_cluster_dataset():
    x = sp.two_cluster_dataset(11, 0.0, 100.0)
    assert sorted(x.tolist()) == [0] * 5 + [100] * 6
    # the extreme split: local sensitivity of the median equals the global 100
    assert dp.sensitivity.local_sensitivity(np.median, x, range(101), neighbours="substitute") == 100.0
    y = sp.two_cluster_dataset(11, 5.0, 0.0)
    assert y.min() >= 0 and y.max() <= 100 and len(y) == 11
    assert dp.sensitivity.local_sensitivity(np.median, y, range(101), neighbours="substitute") < 10


# ---------------------------------------------------------- joint privacy loss
def test_joint_loss_is_the_sum_of_laplace_losses():
    r1 = np.linspace(-5, 7, 13)
    r2 = np.linspace(-3, 9, 13)
    got = comp.joint_privacy_loss(r1, r2, 1.0, 2.0, 3.0, 3.0)
    ref = dp.mechanisms.privacy_loss(r1, 1.0, 0.0, 3.0) + dp.mechanisms.privacy_loss(r2, 2.0, 0.0, 3.0)
    assert np.allclose(got, ref)


def test_seed000_calibration_keeps_the_pair_eps_dp():
    g = np.linspace(-20, 20, 401)
    R1, R2 = np.meshgrid(g, g)
    for eps, d1, d2 in [(1.0, 1.0, 2.0), (0.3, 5.0, 0.5)]:
        s = (d1 + d2) / eps
        loss = comp.joint_privacy_loss(R1, R2, d1, d2, s, s)
        assert loss.max() <= eps + 1e-12 and math.isclose(loss.max(), eps)
        naive = comp.joint_privacy_loss(R1, R2, d1, d2, d1 / eps, d2 / eps)
        assert math.isclose(naive.max(), 2 * eps)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("fn,args,kwargs,exc,match", [
    (dd.coin_flip_survey, ([0, 2],), {}, ValueError, "bits"),
    (dd.coin_flip_survey, ("01",), {}, TypeError, "bits"),
    (dd.coin_flip_survey, ([0, 1],), dict(rng="x"), TypeError, "rng"),
    (dd.randomized_response_standard_error, (1.5, 10, 1.0), {}, ValueError, "pi"),
    (dd.randomized_response_standard_error, (0.5, 0, 1.0), {}, ValueError, "n"),
    (dd.randomized_response_standard_error, (0.5, 2.5, 1.0), {}, ValueError, "n"),
    (dd.randomized_response_standard_error, (0.5, "10", 1.0), {}, ValueError, "n"),
    (dd.randomized_response_standard_error, (0.5, 10, 0.0), {}, ValueError, "epsilon"),
    (dd.randomized_response_standard_error, (0.5, 10, float("nan")), {}, ValueError, "epsilon"),
    (dd.posterior_bounds, (1.2, 1.0), {}, ValueError, "prior"),
    (dd.posterior_bounds, (float("nan"), 1.0), {}, ValueError, "prior"),
    (dd.posterior_bounds, (0.5, -1.0), {}, ValueError, "epsilon"),
    (dd.posterior_bounds, (0.5, True), {}, TypeError, "epsilon"),
    (dd.blip_distributions, (0.0, 0.1), {}, ValueError, "epsilon"),
    (dd.blip_distributions, (1.0, 1.0), {}, ValueError, "delta"),
    (dd.blip_distributions, (1.0, -0.1), {}, ValueError, "delta"),
    (dd.blip_distributions, (1.0, 0.1), dict(edges=[3, 1]), ValueError, "edges"),
    (sp.two_cluster_dataset, (0, 1.0, 1.0), {}, ValueError, "n"),
    (sp.two_cluster_dataset, (5, -1.0, 1.0), {}, ValueError, "spread"),
    (sp.two_cluster_dataset, (5, 1.0, 101.0), {}, ValueError, "split"),
    (sp.two_cluster_dataset, (5, "a", 1.0), {}, TypeError, "spread"),
    (comp.joint_privacy_loss, (0.0, 0.0, -1.0, 1.0, 1.0, 1.0), {}, ValueError, "gap1"),
    (comp.joint_privacy_loss, (0.0, 0.0, 1.0, 1.0, 0.0, 1.0), {}, ValueError, "scale1"),
    (comp.joint_privacy_loss, (float("nan"), 0.0, 1.0, 1.0, 1.0, 1.0), {}, ValueError, "r1"),
    (comp.joint_privacy_loss, (0.0, "x", 1.0, 1.0, 1.0, 1.0), {}, TypeError, "r2"),
])
def test_bad_input(fn, args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)
