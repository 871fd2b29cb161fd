"""The noisy clamped sum of notebook 06 (dp.clamped_sum): the clamped sum plus Laplace
noise of scale (upper - lower)/epsilon, a KS test at alpha = 1e-6 that rejects a twin with
half the noise, reproducible scalars, and its parameter checks."""

import numpy as np
import pytest
from scipy import stats

import dpteach as dp

ALPHA = 1e-6
VALUES = np.array([-7.0, 0.5, 3.0, 12.0, 40.0, 2.5])          # two values outside [-5, 10]


def _ks_pvalue(releases, centre, scale):
    return stats.kstest(releases - centre, stats.laplace(scale=scale).cdf).pvalue


@pytest.mark.parametrize("lower, upper, epsilon", [(-5.0, 10.0, 0.5), (0.0, 10.0, 2.0),
                                                   (-20.0, 3.0, 1.0)])
def test_clamped_sum_is_the_clamped_sum_plus_laplace_of_the_right_scale(lower, upper, epsilon):
    rng = np.random.default_rng(61)
    out = dp.clamped_sum(VALUES, lower, upper, epsilon, rng=rng, size=20_000)
    assert out.shape == (20_000,)
    centre = np.clip(VALUES, lower, upper).sum()
    b = max(abs(lower), abs(upper)) / epsilon
    assert _ks_pvalue(out, centre, b) > ALPHA
    # wrong twins are rejected by the same test: eps/2, the range width, the unclamped sum
    assert _ks_pvalue(out, centre, 2 * b) < ALPHA
    if upper - lower != max(abs(lower), abs(upper)):
        assert _ks_pvalue(out, centre, (upper - lower) / epsilon) < ALPHA
    assert _ks_pvalue(out, VALUES.sum(), b) < ALPHA


def test_a_twin_mechanism_with_half_the_noise_fails_the_check():
    rng = np.random.default_rng(62)
    centre = np.clip(VALUES, 0.0, 10.0).sum()
    twin = centre + rng.laplace(0.0, 10.0 / 2.0 / 2, size=20_000)      # eps doubled
    assert _ks_pvalue(twin, centre, 10.0 / 2.0) < ALPHA


def test_clamped_sum_scalar_and_reproducible():
    a = dp.clamped_sum(VALUES, 0, 10, 1.0, rng=np.random.default_rng(5))
    b = dp.clamped_sum(VALUES, 0, 10, 1.0, rng=np.random.default_rng(5))
    assert isinstance(a, float) and a == b
    c = dp.laplace_mechanism(np.clip(VALUES, 0, 10).sum(), 10, 1.0, rng=np.random.default_rng(5))
    assert a == c                                        # the kit's Laplace mechanism, reused


@pytest.mark.parametrize("kwargs, error, word", [
    (dict(lower=5, upper=5, epsilon=1), ValueError, "lower"),
    (dict(lower=6, upper=5, epsilon=1), ValueError, "lower"),
    (dict(lower=np.nan, upper=5, epsilon=1), ValueError, "lower"),
    (dict(lower=0, upper=np.inf, epsilon=1), ValueError, "upper"),
    (dict(lower=True, upper=5, epsilon=1), TypeError, "lower"),
    (dict(lower=0, upper="5", epsilon=1), TypeError, "upper"),
    (dict(lower=0, upper=5, epsilon=0), ValueError, "epsilon"),
    (dict(lower=0, upper=5, epsilon=np.nan), ValueError, "epsilon"),
    (dict(lower=0, upper=5, epsilon=-1), ValueError, "epsilon"),
])
def test_clamped_sum_rejects_bad_parameters(kwargs, error, word):
    with pytest.raises(error, match=word):
        dp.clamped_sum(VALUES, **kwargs)


def test_clamped_sum_rejects_nan_values():
    with pytest.raises(ValueError, match="values"):
        dp.clamped_sum([1.0, np.nan], 0, 1, 1.0)
    with pytest.raises(TypeError, match="values"):
        dp.clamped_sum([True, False], 0, 1, 1.0)
