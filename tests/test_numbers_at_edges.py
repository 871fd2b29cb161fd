"""Numbers at the edges (issue 19): answers that must stay right at extreme but valid
parameters -- tiny delta, huge sigma, far-apart scores, extreme confidence levels.

Reference values come from closed forms or from mpmath at 80 digits."""

import numpy as np
import pytest

import dpteach as dp
from dpteach import audit, mechanisms, tradeoff

mp = pytest.importorskip("mpmath")


def _mp_gaussian_delta(sigma, d, eps):
    with mp.workdps(80):
        s, d, e = mp.mpf(sigma), mp.mpf(d), mp.mpf(eps)
        a = d / (2 * s) - e * s / d
        b = -d / (2 * s) - e * s / d
        return float(mp.ncdf(a) - mp.e ** e * mp.ncdf(b))


# ------------------------------------------------------------------ gaussian_delta
def test_gaussian_delta_is_never_negative():
    sigma = np.logspace(-3, 7, 200)[:, None]
    eps = np.logspace(-8, 3, 200)[None, :]
    out = mechanisms._gaussian_delta(sigma, 1.0, eps)
    assert out.shape == (200, 200)
    assert np.isfinite(out).all() and (out >= 0).all()


@pytest.mark.parametrize("sigma", [10.0, 1e3, 1e5, 1e7])
@pytest.mark.parametrize("target", [1e-5, 1e-50, 1e-200, 1e-300])
def test_gaussian_delta_keeps_its_relative_accuracy_at_tiny_delta(sigma, target):
    # the epsilon at which delta(sigma) is about `target`
    eps = np.sqrt(2 * np.log(1 / target)) / sigma
    exact = _mp_gaussian_delta(sigma, 1.0, eps)
    assert dp.gaussian_delta(sigma, 1.0, eps) == pytest.approx(exact, rel=1e-11, abs=0)


@pytest.mark.parametrize("eps", [0.01, 0.1, 1.0])
@pytest.mark.parametrize("delta", [1e-100, 1e-300])
def test_analytic_sigma_is_tight_to_1e9_at_tiny_delta(eps, delta):
    sigma = dp.gaussian_sigma(1.0, eps, delta, analytic=True)
    assert _mp_gaussian_delta(sigma, 1.0, eps) == pytest.approx(delta, rel=1e-9, abs=0)
    assert _mp_gaussian_delta(sigma * (1 - 1e-9), 1.0, eps) > delta


def test_gaussian_delta_agrees_with_mpmath_on_a_grid():
    for sigma in [1e-3, 0.1, 0.5, 1, 2, 5, 30, 1e3, 1e6]:
        for eps in [0.0, 1e-6, 1e-3, 0.1, 0.5, 1, 3, 10, 50]:
            exact = _mp_gaussian_delta(sigma, 1.0, eps)
            if exact > 1e-300:
                got = mechanisms._gaussian_delta(sigma, 1.0, eps)
                assert got == pytest.approx(exact, rel=1e-12, abs=0), (sigma, eps)


# ------------------------------------------------------------------ the loss distribution
def test_gaussian_loss_epsilon_at_tiny_delta_beyond_the_old_search_cap():
    loss = dp.privacy_loss_distribution("gaussian", sigma=1e-3)
    eps = loss.epsilon(1e-300)
    assert eps == pytest.approx(537046.11, abs=0.01)
    assert loss.delta(eps) == pytest.approx(1e-300, rel=1e-6, abs=0)


@pytest.mark.parametrize("sigma", [1e-6, 1e-3, 0.3, 1.0, 1e3])
@pytest.mark.parametrize("delta", [1e-300, 1e-10, 0.01])
def test_gaussian_loss_epsilon_inverts_delta(sigma, delta):
    loss = dp.privacy_loss_distribution("gaussian", sigma=sigma)
    eps = loss.epsilon(delta)
    if eps > 0:
        assert loss.delta(eps) == pytest.approx(delta, rel=1e-6, abs=0)
    # the twin: a tenth less epsilon does not reach delta
    assert eps == 0 or loss.delta(eps * 0.9) > delta


def test_gaussian_loss_refuses_delta_zero_naming_it():
    with pytest.raises(ValueError, match="delta"):
        dp.privacy_loss_distribution("gaussian", sigma=1.0).epsilon(0.0)


# ------------------------------------------------------------------ Clopper-Pearson
def test_clopper_pearson_upper_end_at_zero_successes_and_tiny_alpha():
    low, high = audit.clopper_pearson(0, 10**6, alpha=1e-17)
    assert low == 0.0
    assert high == pytest.approx(3.98363e-5, rel=1e-5)
    assert high == pytest.approx(-np.expm1(np.log(5e-18) / 1e6), rel=1e-12)


def test_clopper_pearson_lower_end_at_all_successes_and_tiny_alpha():
    low, high = audit.clopper_pearson(10**6, 10**6, alpha=1e-17)
    assert high == 1.0
    assert low == pytest.approx(np.exp(np.log(5e-18) / 1e6), rel=1e-14)


@pytest.mark.parametrize("k,n,alpha", [(1, 1000, 1e-6), (5, 100, 1e-12), (50, 100, 0.05),
                                       (999, 1000, 1e-9), (3, 10, 0.3)])
def test_clopper_pearson_ends_are_the_beta_quantiles(k, n, alpha):
    low, high = audit.clopper_pearson(k, n, alpha=alpha)
    with mp.workdps(50):
        exact_low = mp.findroot(lambda x: mp.betainc(k, n - k + 1, 0, x, regularized=True)
                                - mp.mpf(alpha) / 2, mp.mpf(low), tol=1e-30, verify=False)
        exact_high = mp.findroot(lambda x: mp.betainc(k + 1, n - k, x, 1, regularized=True)
                                 - mp.mpf(alpha) / 2, mp.mpf(high), tol=1e-30, verify=False)
    assert low == pytest.approx(float(exact_low), rel=1e-12, abs=0)
    assert high == pytest.approx(float(exact_high), rel=1e-12, abs=0)


def test_clopper_pearson_at_a_subnormal_level_is_finite_and_right():
    low, high = tradeoff.clopper_pearson(5, 100, level=1e-320)
    assert np.isfinite([low, high]).all() and 0 < low < high < 1
    with mp.workdps(50):
        # I_low(5, 96) = level / 2 (to the few digits a subnormal level carries)
        got = mp.betainc(5, 96, 0, low, regularized=True)
        assert float(got / mp.mpf(5e-321)) == pytest.approx(1.0, rel=1e-3)
