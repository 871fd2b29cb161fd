"""Optimal local hashing (Wang, Blocki, Li & Jha 2017): unbiased counts, the variance
formula, and the epsilon-LDP of the report given the hash function; each against a twin."""

import math

import numpy as np
import pytest
from scipy import stats

from conftest import ALPHA
import dpteach as dp
from dpteach import local


def test_hash_size_is_e_to_the_epsilon_plus_one():
    assert local.olh_hash_size(1.0) == round(math.e + 1)
    assert local.olh_hash_size(3.0) == round(math.exp(3) + 1)


def test_estimates_are_unbiased_with_the_stated_variance():
    k, n, eps = 50, 4000, 2.0
    values = np.random.default_rng(0).integers(0, 10, size=n)  # only 0..9 occur
    truth = np.bincount(values, minlength=k)
    runs = 60
    est = np.array([dp.olh_estimate(values, k, eps, rng=np.random.default_rng(100 + s)) for s in range(runs)])
    err = est - truth
    # each count's error has mean 0: a z-test over all runs and cells at alpha = 1e-6
    g = local.olh_hash_size(eps)
    p = math.exp(eps) / (math.exp(eps) + g - 1)
    q = 1 / g
    cell_var = (truth * p * (1 - p) + (n - truth) * q * (1 - q)) / (p - q) ** 2
    z = err.sum() / math.sqrt(runs * cell_var.sum())
    assert abs(z) < stats.norm.isf(ALPHA / 2)
    var = local.olh_variance(n, eps)
    # the variance of an absent value's estimate matches n q(1 - q) / (p - q)^2 (chi-square test)
    absent = err[:, 10:].ravel()
    chi2 = (absent ** 2).sum() / var
    lo, hi = stats.chi2.ppf(ALPHA / 2, absent.size), stats.chi2.isf(ALPHA / 2, absent.size)
    assert lo < chi2 < hi
    twin = n * p * (1 - p) / (p - 1 / g) ** 2    # wrong twin: the variance of the true value's own bucket
    assert not (stats.chi2.ppf(ALPHA / 2, absent.size) < (absent ** 2).sum() / twin
                < stats.chi2.isf(ALPHA / 2, absent.size))
    # at g = e^eps + 1 the variance is close to n 4 e^eps / (e^eps - 1)^2
    assert local.olh_variance(n, 3.0, g=math.exp(3.0) + 1) == pytest.approx(
        n * 4 * math.exp(3.0) / (math.exp(3.0) - 1) ** 2, rel=1e-9)


def test_report_is_epsilon_ldp_given_the_hash():
    """Given the user's hash seed, the report is g-ary randomized response of H(v):
    the probability ratio of any report between two inputs is at most e^epsilon."""
    eps = 1.5
    g = local.olh_hash_size(eps)
    p = math.exp(eps) / (math.exp(eps) + g - 1)
    q = 1 / (math.exp(eps) + g - 1)
    assert p / q == pytest.approx(math.exp(eps))
    rng = np.random.default_rng(3)
    seeds, reports = local.olh_reports(np.zeros(40_000, int), 5, eps, rng=rng)
    hashed = local._hash(seeds, np.zeros(seeds.size, np.int64), g)
    kept = np.mean(reports == hashed)
    assert stats.binomtest(int(kept * seeds.size), seeds.size, p).pvalue > ALPHA
    assert stats.binomtest(int(kept * seeds.size), seeds.size, 1 / g).pvalue < ALPHA  # no-privacy twin


@pytest.mark.parametrize("call, name", [
    (lambda: dp.olh_estimate([0, 1, 5], 3, 1.0), "values"),
    (lambda: dp.olh_estimate([0, 1], 1, 1.0), "k"),
    (lambda: dp.olh_estimate([0, 1], 3, 0.0), "epsilon"),
    (lambda: dp.olh_estimate([0, 1], 3, 100.0), "epsilon"),
    (lambda: dp.olh_estimate([0, 1], 3, float("nan")), "epsilon"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()
