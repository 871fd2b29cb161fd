"""The exact discrete Laplace mechanism (Canonne, Kamath & Steinke 2020)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from conftest import ALPHA, chisq_pvalue

import dpteach as dp
from dpteach.audit import audit
from dpteach.discrete import (discrete_laplace_mechanism, discrete_laplace_noise,
                              discrete_laplace_pmf, epsilon_as_fraction)


def _binned(samples, lo, hi):
    """Counts of each integer in [lo, hi] plus the two tails."""
    ks = np.arange(lo, hi + 1)
    counts = np.bincount(np.clip(samples, lo - 1, hi + 1) - (lo - 1), minlength=hi - lo + 3)
    return ks, counts


def _pmf_binned(ks, pmf_k, below, above):
    return np.concatenate([[below], pmf_k, [above]])


def _dlap_probs(ks, sensitivity, epsilon):
    q = math.exp(-epsilon / sensitivity)
    p = discrete_laplace_pmf(ks, sensitivity, epsilon)
    # P(Y < lo) = q^|lo| / (1 + q) for lo <= 0 ; P(Y > hi) = q^(hi+1) / (1 + q)
    below = q ** (-ks[0] + 1) / (1 + q)
    above = q ** (ks[-1] + 1) / (1 + q)
    return _pmf_binned(ks, p, below, above)


def test_pmf_sums_to_one_and_matches_formula():
    ks = np.arange(-200, 201)
    p = discrete_laplace_pmf(ks, 2, 0.7)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    q = math.exp(-0.35)
    assert discrete_laplace_pmf(3, 2, 0.7) == pytest.approx((1 - q) / (1 + q) * q ** 3)
    probs = _dlap_probs(np.arange(-5, 6), 1, 1.0)
    assert probs.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("sensitivity,epsilon", [(1, 1.0), (1, 0.1), (3, 0.5), (1, math.log(3)),
                                                 (2, 5.0)])
def test_distribution_matches_exact_pmf(sensitivity, epsilon):
    """Chi-square against the exact pmf at alpha = 1e-6; wrong twins (epsilon/2, and the
    continuous Laplace rounded to the nearest integer) are rejected by the same test."""
    rng = np.random.default_rng(71)
    n = 400_000
    y = discrete_laplace_noise(sensitivity, epsilon, rng=rng, size=n)
    assert y.dtype == np.int64
    b = sensitivity / epsilon
    half = int(max(3, min(60, 4 * b)))
    ks, counts = _binned(y, -half, half)
    assert chisq_pvalue(counts, _dlap_probs(ks, sensitivity, epsilon)) > ALPHA
    # wrong twin 1: half the epsilon (twice the scale)
    assert chisq_pvalue(counts, _dlap_probs(ks, sensitivity, epsilon / 2)) < ALPHA
    # wrong twin 2: a 10% larger epsilon
    assert chisq_pvalue(counts, _dlap_probs(ks, sensitivity, epsilon * 1.1)) < ALPHA
    # wrong twin 3: continuous Laplace(b) rounded to the nearest integer (it differs
    # visibly only at small scales; at b = 10 the two are too close for 4e5 draws)
    if b <= 3:
        lap = stats.laplace(scale=b)
        rounded = np.concatenate([[lap.cdf(ks[0] - 0.5)], lap.cdf(ks + 0.5) - lap.cdf(ks - 0.5),
                                  [lap.sf(ks[-1] + 0.5)]])
        assert chisq_pvalue(counts, rounded) < ALPHA


def test_big_integer_paths_keep_the_distribution():
    """An epsilon with a 17-digit decimal makes t = Delta * 10^17 exceed the int64-safe
    range in t * V; the exact big-integer path must give the same distribution."""
    rng = np.random.default_rng(72)
    eps = 0.12345678901234568                 # repr has 17 digits: t = 10 * 10^17
    y = discrete_laplace_noise(10, eps, rng=rng, size=100_000)
    ks, counts = _binned(y, -150, 150)
    assert chisq_pvalue(counts, _dlap_probs(ks, 10, eps)) > ALPHA
    assert chisq_pvalue(counts, _dlap_probs(ks, 10, eps * 0.8)) < ALPHA
    # sensitivity so large that epsilon must be rounded down (more noise, still private)
    y = discrete_laplace_noise(1000, eps, rng=rng, size=1000)
    assert y.dtype == np.int64 and np.abs(y).max() > 1000


def test_mechanism_shapes_types_and_reproducibility():
    rng = np.random.default_rng(73)
    out = discrete_laplace_mechanism(5, 1, 1.0, rng=rng)
    assert isinstance(out, int)
    arr = discrete_laplace_mechanism(5, 1, 1.0, rng=rng, size=10)
    assert arr.shape == (10,) and arr.dtype == np.int64
    vec = discrete_laplace_mechanism([1, 2, 3], 2, 1.0, rng=rng, size=(4, 5))
    assert vec.shape == (4, 5, 3)
    assert discrete_laplace_mechanism(np.array([7, 8]), 1, 1.0, rng=rng).shape == (2,)
    a = discrete_laplace_mechanism(100, 1, 0.5, rng=np.random.default_rng(1), size=50)
    b = discrete_laplace_mechanism(100, 1, 0.5, rng=np.random.default_rng(1), size=50)
    assert np.array_equal(a, b)
    assert dp.discrete_laplace_mechanism is discrete_laplace_mechanism
    # the value shifts the distribution exactly
    y = discrete_laplace_mechanism(1000, 1, 1.0, rng=rng, size=200_000) - 1000
    ks, counts = _binned(y, -10, 10)
    assert chisq_pvalue(counts, _dlap_probs(ks, 1, 1.0)) > ALPHA


def test_epsilon_is_read_as_an_exact_rational():
    assert epsilon_as_fraction(0.1) == Fraction(1, 10)
    assert epsilon_as_fraction(Fraction(1, 3)) == Fraction(1, 3)
    assert epsilon_as_fraction(2) == 2
    rng = np.random.default_rng(74)
    y = discrete_laplace_noise(1, Fraction(1, 3), rng=rng, size=200_000)
    ks, counts = _binned(y, -20, 20)
    assert chisq_pvalue(counts, _dlap_probs(ks, 1, 1 / 3)) > ALPHA


def test_auditor_finds_nothing_above_epsilon():
    rng = np.random.default_rng(75)
    for eps in (0.5, 1.0):
        mech = lambda v, size, rng, eps=eps: discrete_laplace_mechanism(v, 1, eps, rng=rng, size=size)  # noqa: E731
        res = audit(mech, 10, 11, n=200_000, rng=rng, alpha=ALPHA, claimed_epsilon=eps)
        assert not res.refuted
        assert 0.85 * eps < res.epsilon_lb <= eps


@pytest.mark.parametrize("kwargs,exc,word", [
    ({"value": 2.5}, ValueError, "value"),
    ({"value": "3"}, TypeError, "value"),
    ({"value": np.nan}, ValueError, "value"),
    ({"value": 2.0 ** 60}, ValueError, "value"),
    ({"sensitivity": 0}, ValueError, "sensitivity"),
    ({"sensitivity": 1.5}, ValueError, "sensitivity"),
    ({"sensitivity": -1}, ValueError, "sensitivity"),
    ({"sensitivity": True}, TypeError, "sensitivity"),
    ({"epsilon": 0}, ValueError, "epsilon"),
    ({"epsilon": -1.0}, ValueError, "epsilon"),
    ({"epsilon": np.nan}, ValueError, "epsilon"),
    ({"epsilon": np.inf}, ValueError, "epsilon"),
    ({"epsilon": "1"}, TypeError, "epsilon"),
    ({"epsilon": True}, TypeError, "epsilon"),
    ({"size": -1}, ValueError, "size"),
    ({"size": 2.5}, ValueError, "size"),
    ({"rng": "seed"}, TypeError, "rng"),
])
def test_bad_input_is_refused_clearly(kwargs, exc, word):
    args = {"value": 3, "sensitivity": 1, "epsilon": 1.0}
    args.update(kwargs)
    value = args.pop("value")
    with pytest.raises(exc, match=word):
        discrete_laplace_mechanism(value, **args)
    if "value" not in kwargs:
        with pytest.raises(exc, match=word):
            discrete_laplace_noise(**args)


# ----------------------------------------------------------------- discrete Gaussian
def _dgauss_probs(h, sigma):
    ks = np.arange(-h, h + 1)
    p = dp.discrete.discrete_gaussian_pmf(ks, sigma)
    tail = dp.discrete.discrete_gaussian_pmf(np.arange(h + 1, h + 400), sigma).sum()
    return np.concatenate([[tail], p, [tail]])


@pytest.mark.parametrize("sigma", [0.7, 1.5, 4.0, 2.718281828])
def test_discrete_gaussian_matches_exact_pmf(sigma):
    """Chi-square at alpha = 1e-6 against the exact pmf; wrong twins (sigma * 1.1, and for
    small sigma the continuous Gaussian rounded to integers) are rejected. sigma =
    2.718281828 exercises the exact big-integer Bernoulli path."""
    from dpteach.discrete import discrete_gaussian_noise
    rng = np.random.default_rng(76)
    y = discrete_gaussian_noise(sigma, rng=rng, size=200_000)
    assert y.dtype == np.int64
    h = int(5 * sigma) + 2
    ks, counts = _binned(y, -h, h)
    assert chisq_pvalue(counts, _dgauss_probs(h, sigma)) > ALPHA
    assert chisq_pvalue(counts, _dgauss_probs(h, sigma * 1.1)) < ALPHA
    if sigma < 1:
        g = stats.norm(scale=sigma)
        rounded = np.concatenate([[g.cdf(-h - 0.5)], g.cdf(ks + 0.5) - g.cdf(ks - 0.5),
                                  [g.sf(h + 0.5)]])
        assert chisq_pvalue(counts, rounded) < ALPHA


def test_discrete_gaussian_mechanism_shapes_and_bad_input():
    from dpteach.discrete import discrete_gaussian_mechanism
    rng = np.random.default_rng(77)
    assert isinstance(discrete_gaussian_mechanism(5, 2.0, rng=rng), int)
    assert discrete_gaussian_mechanism([1, 2], 2.0, rng=rng, size=3).shape == (3, 2)
    assert discrete_gaussian_mechanism(3, Fraction(3, 2), rng=rng, size=4).dtype == np.int64
    for bad, exc in [({"sigma": 0.0}, ValueError), ({"sigma": -1.0}, ValueError),
                     ({"sigma": np.nan}, ValueError), ({"sigma": "2"}, TypeError),
                     ({"sigma": True}, TypeError), ({"value": 1.5}, ValueError),
                     ({"size": -1}, ValueError)]:
        args = {"value": 3, "sigma": 2.0}
        args.update(bad)
        with pytest.raises(exc, match=list(bad)[0]):
            discrete_gaussian_mechanism(args.pop("value"), **args)
