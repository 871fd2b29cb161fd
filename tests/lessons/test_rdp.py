"""Notebook 16's accounting (dpteach.rdp): every formula against an independent reference
(numerical integration, the closed form, Google's dp-accounting) and a wrong twin the same
check rejects."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

import dpteach as dp
from dpteach import rdp

dpa = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp  # noqa: E402


# -- references computed from first principles -------------------------------------------
def renyi_numeric(alpha, p_logpdf, q_logpdf, lo=-60.0, hi=60.0):
    """D_alpha(P || Q) = 1/(alpha - 1) ln ∫ p^alpha q^(1 - alpha), by quadrature."""
    def f(x):
        return math.exp(alpha * p_logpdf(x) + (1 - alpha) * q_logpdf(x))
    val, _ = integrate.quad(f, lo, hi, limit=400, epsabs=0, epsrel=1e-11, points=[0.0, 1.0])
    return math.log(val) / (alpha - 1)


def exact_delta(eps, mu):
    """Balle & Wang 2018, Theorem 8, written with scipy.stats (not dpteach's helper)."""
    return stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)


def dpa_epsilon(events, orders, delta):
    acc = dpa_rdp.RdpAccountant(orders=list(orders))
    for e in events:
        acc.compose(e)
    return acc.get_epsilon(delta), np.asarray(acc._rdp)


# -- the Gaussian's RDP and rho --------------------------------------------------------------
@pytest.mark.parametrize("alpha", [1.5, 2.0, 5.0, 12.0])
@pytest.mark.parametrize("sigma", [0.7, 1.0, 3.0])
def test_gaussian_rdp_matches_the_renyi_divergence_and_rejects_alpha_over_sigma2(alpha, sigma):
    d = 1.3
    num = renyi_numeric(alpha, stats.norm(d, sigma).logpdf, stats.norm(0, sigma).logpdf)
    assert dp.gaussian_rdp(alpha, sigma, d) == pytest.approx(num, rel=1e-7)
    wrong = alpha * d**2 / sigma**2          # the twin without the 2
    assert abs(wrong - num) > 0.4 * num


def test_gaussian_rdp_vectorises_and_rho_is_the_slope():
    orders = np.array([1.5, 2, 10, 100])
    r = dp.gaussian_rdp(orders, 2.0, 1.0)
    assert r.shape == (4,)
    np.testing.assert_allclose(r / orders, dp.rdp.gaussian_zcdp(2.0), rtol=1e-15)
    assert dp.rdp.gaussian_zcdp(2.0, 3.0) == pytest.approx(9 / 8)


# -- conversions ------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [0.6, 1.0, 4.0, 30.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_rdp_to_dp_equals_dp_accounting_conversion(sigma, delta):
    orders = rdp.DEFAULT_ORDERS
    curve = dp.gaussian_rdp(orders, sigma)
    theirs, _ = dpa_rdp.compute_epsilon(orders, curve, delta)
    assert dp.rdp_to_dp(orders, curve, delta) == pytest.approx(theirs, rel=1e-12, abs=1e-15)
    # wrong twins: no 1/(alpha - 1) on ln(1/delta); no ln(1 - 1/alpha) term
    a, r = orders, curve
    no_denominator = np.min(r + np.log(1 / delta))
    no_log_term = np.min(r - (np.log(delta) + np.log(a)) / (a - 1))
    assert abs(no_denominator - theirs) > 0.05 * theirs
    assert abs(no_log_term - theirs) > 1e-3 * theirs


def test_classic_conversion_is_mironov_proposition_3_and_never_tighter():
    orders = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
    curve = dp.gaussian_rdp(orders, 2.0)
    delta = 1e-5
    classic = dp.rdp_to_dp(orders, curve, delta, method="classic")
    assert classic == pytest.approx(np.min(curve + np.log(1 / delta) / (orders - 1)), rel=1e-14)
    assert dp.rdp_to_dp(orders, curve, delta) < classic
    eps, order = rdp.rdp_to_dp_order(orders, curve, delta)
    assert order in orders


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 10.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_conversions_are_sound_against_the_exact_gaussian_and_a_wrong_twin_is_not(sigma, delta):
    exact = dp.gaussian_epsilon(sigma, delta)
    rho = dp.rdp.gaussian_zcdp(sigma)
    improved = dp.zcdp_to_dp(rho, delta)
    classic = dp.zcdp_to_dp(rho, delta, method="classic")
    assert exact <= improved * (1 + 1e-12) <= classic * (1 + 1e-12)
    assert classic == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-14)
    assert dp.rdp_to_dp(rdp.DEFAULT_ORDERS, dp.gaussian_rdp(rdp.DEFAULT_ORDERS, sigma), delta) >= exact
    # the twin without the 2 claims less than the exact privacy curve allows: unsound
    assert rho + math.sqrt(rho * math.log(1 / delta)) < exact


def test_zcdp_to_dp_is_the_minimum_over_every_order():
    for rho, delta in [(0.01, 1e-6), (0.5, 1e-5), (2.63, 1e-10), (40.0, 1e-3)]:
        a = 1 + np.logspace(-6, 5, 400_001)
        grid = np.min(a * rho + np.log1p(-1 / a) - (np.log(delta) + np.log(a)) / (a - 1))
        got = dp.zcdp_to_dp(rho, delta)
        assert got <= max(grid, 0) * (1 + 1e-9)
        assert got >= max(grid, 0) * (1 - 1e-6)
    assert dp.zcdp_to_dp(0.0, 1e-5) == 0.0


def test_census_rho_conversion():
    # rho = 2.63 at delta = 1e-10 (notebook 16); the classic conversion is ~0.76 looser
    assert dp.zcdp_to_dp(2.63, 1e-10) == pytest.approx(17.4306, abs=1e-3)
    assert dp.zcdp_to_dp(2.63, 1e-10, method="classic") == pytest.approx(18.1938, abs=1e-3)
    # the persons budget of the production code (global_scale = 339/542, rho = 1/scale^2)
    # converts to the persons epsilon the Census Bureau published, 17.14
    assert dp.zcdp_to_dp((542 / 339) ** 2, 1e-10) == pytest.approx(17.14, abs=5e-3)
    assert dp.zcdp_to_dp((542 / 339) ** 2, 1e-10, method="classic") > 17.8     # classic twin misses it


# -- the exact epsilon of k Gaussians -----------------------------------------------------------
@pytest.mark.parametrize("sigma,k,delta", [(1.0, 1, 1e-5), (2.0, 10, 1e-6), (5.0, 1000, 1e-8),
                                           (0.5, 3, 1e-3), (50.0, 1, 1e-10), (1.0, 50, 0.2)])
def test_gaussian_epsilon_inverts_the_closed_form(sigma, k, delta):
    eps = dp.gaussian_epsilon(sigma, delta, k=k, l2_sensitivity=1.5)
    mu = 1.5 * math.sqrt(k) / sigma
    if eps == 0:
        assert exact_delta(0.0, mu) <= delta
        return
    assert exact_delta(eps, mu) == pytest.approx(delta, rel=1e-6)
    assert exact_delta(eps * (1 - 1e-6), mu) > delta       # the smallest such eps
    # k releases at sigma are one release at sigma / sqrt(k)
    assert dp.gaussian_epsilon(sigma / math.sqrt(k), delta, l2_sensitivity=1.5) == pytest.approx(eps, rel=1e-9)
    # wrong twin: sigma * sqrt(k) (adding noise instead of adding releases)
    assert abs(exact_delta(eps, 1.5 / (sigma * math.sqrt(k))) - delta) > 0.5 * delta or k == 1


def test_gaussian_epsilon_is_zero_when_delta_covers_everything():
    mu = 0.1
    assert dp.gaussian_epsilon(10.0, 0.5) == 0.0
    assert exact_delta(0.0, mu) < 0.5


def test_gaussian_epsilon_against_dp_accounting_pld():
    # the PLD accountant discretises the privacy loss pessimistically, so it may only be
    # above the exact answer; with a 1e-4 grid it is above by about 4e-10 relative here
    # (connect-the-dots discretisation), well inside the 1e-6 asked for
    from dp_accounting.pld import pld_privacy_accountant as pld
    for sigma, k, delta in [(2.0, 10, 1e-6), (5.0, 100, 1e-5)]:
        acc = pld.PLDAccountant(value_discretization_interval=1e-4)
        acc.compose(dpa.GaussianDpEvent(sigma), k)
        theirs = acc.get_epsilon(delta)
        ours = dp.gaussian_epsilon(sigma, delta, k=k)
        assert ours <= theirs * (1 + 1e-12)
        assert theirs - ours < 1e-6 * ours


def test_the_exact_gaussian_epsilon_has_one_home():
    """gaussian_epsilon, composition_epsilons' "exact" curve and a Gaussian privacy loss
    distribution's epsilon are one computation (_gaussian.epsilon_of_mu): equal floats."""
    from dpteach._support import gaussian as _gaussian
    mus = np.array([0.01, 0.3, 1.0, 4.0, 30.0])
    for delta in [1e-3, 1e-10]:
        one = _gaussian.epsilon_of_mu(mus, delta)
        assert np.array_equal(rdp._epsilon_of_mu_array(mus, delta), one)
        assert [dp.gaussian_epsilon(1.0 / m, delta) for m in mus] == [float(v) for v in one]
        assert [dp.tradeoff.privacy_loss_distribution("gaussian", sigma=1.0 / m).epsilon(delta)
                for m in mus] == [float(v) for v in one]
        curves = dp.rdp.composition_epsilons(1.0 / mus[2], delta, ks=[1, 4])["exact"]
        assert curves[0] == one[2] and curves[1] == _gaussian.epsilon_of_mu(2 * mus[2], delta)


def test_exact_epsilon_is_the_smallest_float_that_meets_delta():
    """The answer meets delta and the float just below it does not (the bisection ends at
    neighbouring floats); a twin that stops at a 1e-9 bracket is not the smallest float."""
    from dpteach._support import gaussian as _gaussian
    for mu, delta in [(0.05, 1e-6), (0.5, 1e-5), (1.0, 0.2), (3.0, 1e-12), (40.0, 1e-300)]:
        eps = _gaussian.epsilon_of_mu(mu, delta)
        assert _gaussian.gaussian_delta_exact(1.0, mu, eps) <= delta
        assert _gaussian.gaussian_delta_exact(1.0, mu, np.nextafter(eps, 0.0)) > delta
        assert _gaussian.gaussian_delta_exact(1.0, mu, eps * (1 - 1e-9)) > delta  # not 1e-9 early


# -- Poisson subsampling ---------------------------------------------------------------------------
@pytest.mark.parametrize("q", [1e-3, 0.01, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("sigma", [0.7, 1.0, 4.0])
def test_subsampled_rdp_matches_dp_accounting_at_integer_orders(q, sigma):
    orders = np.arange(2, 65)
    ours = dp.subsampled_gaussian_rdp(q, sigma, orders)
    theirs = dpa_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("q,sigma,alpha", [(0.1, 1.0, 2), (0.05, 2.0, 5), (0.3, 1.5, 3)])
def test_subsampled_rdp_is_the_divergence_of_the_mixture(q, sigma, alpha):
    def mix(x):
        return np.logaddexp(math.log1p(-q) + stats.norm.logpdf(x, 0, sigma),
                            math.log(q) + stats.norm.logpdf(x, 1, sigma))
    num = renyi_numeric(alpha, mix, stats.norm(0, sigma).logpdf)
    assert dp.subsampled_gaussian_rdp(q, sigma, alpha) == pytest.approx(num, rel=1e-7)


def test_subsampling_amplifies_like_q_squared_not_q():
    sigma, orders = 4.0, np.array([2, 4, 8, 16])
    q = 1e-3
    got = dp.subsampled_gaussian_rdp(q, sigma, orders)
    q2 = q * q * orders * np.expm1(1 / sigma**2) / 2
    np.testing.assert_allclose(got, q2, rtol=1e-2)
    linear_twin = q * orders / (2 * sigma**2)
    assert np.all(linear_twin > 100 * got)
    np.testing.assert_allclose(dp.subsampled_gaussian_rdp(1.0, sigma, orders),
                               dp.gaussian_rdp(orders, sigma), rtol=1e-15)
    assert np.all(dp.subsampled_gaussian_rdp(0.0, sigma, orders) == 0)


# -- the accountant against dp-accounting's RdpAccountant ---------------------------------------
GRID = [(q, s, k, d) for q in (1.0, 0.1, 0.01) for s in (0.8, 1.5, 4.0)
        for k in (1, 100, 1000) for d in (1e-5, 1e-8)]


def accountant_gap(q, sigma, k, delta):
    """(relative difference in eps, largest relative difference in RDP) for like-for-like
    orders: the default grid for plain Gaussians, integers 2..64 and 128..1024 otherwise."""
    orders = rdp.DEFAULT_ORDERS if q == 1 else np.r_[np.arange(2, 65), 128, 256, 512, 1024]
    event = dpa.GaussianDpEvent(sigma)
    if q < 1:
        event = dpa.PoissonSampledDpEvent(q, event)
    theirs, their_rdp = dpa_epsilon([dpa.SelfComposedDpEvent(event, k)], orders, delta)
    acc = dp.RDPAccountant(orders).compose_gaussian(sigma, q=q, steps=k)
    ours = acc.epsilon(delta)
    fin = np.isfinite(their_rdp) & (their_rdp > 0)
    rdp_gap = np.max(np.abs(acc.rdp[fin] - their_rdp[fin]) / their_rdp[fin])
    return abs(ours - theirs) / max(theirs, 1e-300), rdp_gap


@pytest.mark.parametrize("q,sigma,k,delta", GRID)
def test_accountant_agrees_with_dp_accounting(q, sigma, k, delta):
    eps_gap, rdp_gap = accountant_gap(q, sigma, k, delta)
    assert rdp_gap < 1e-6
    assert eps_gap < 1e-6            # the brief's bound is 1%; the agreement is far closer


def test_accountant_rejects_a_q_instead_of_q_squared_twin():
    sigma, k, delta, q = 1.0, 1000, 1e-5, 0.01
    orders = np.arange(2, 65)
    theirs, _ = dpa_epsilon([dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), k)], orders, delta)
    twin = dp.rdp_to_dp(orders, k * q * orders / (2 * sigma**2), delta)
    assert twin > 2 * theirs


def test_accountant_mixed_sequence_and_fractional_orders():
    acc = dp.RDPAccountant()
    acc.compose_gaussian(2.0, steps=3).compose_gaussian(1.0, q=0.02, steps=500)
    events = [dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(2.0), 3),
              dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.02, dpa.GaussianDpEvent(1.0)), 500)]
    theirs, _ = dpa_epsilon(events, rdp.DEFAULT_ORDERS, 1e-6)
    ours = acc.epsilon(1e-6)
    # fractional orders exact: never above dp-accounting, and within 1e-5 of it here
    assert theirs * (1 - 1e-5) <= ours <= theirs * (1 + 1e-12)
    assert len(acc.history) == 2


# -- fractional orders, exactly (issue 19: up to 15% looser than dp-accounting before) ----------
def mp_subsampled_rdp(alpha, q, sigma):
    """ln E_{N(0,σ²)}[((1-q) + q e^{(2z-1)/(2σ²)})^α] / (α - 1) with 40-digit mpmath quadrature."""
    mp = pytest.importorskip("mpmath")
    with mp.workdps(40):
        q_, s_, a_ = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)

        def f(z):
            return mp.npdf(z, 0, s_) * ((1 - q_) + q_ * mp.exp((2 * z - 1) / (2 * s_ * s_))) ** a_
        v = mp.quad(f, [-mp.inf, -50 * s_, 0, 1, a_, a_ + 50 * s_, mp.inf])
        return float(mp.log(v) / (a_ - 1))


@pytest.mark.parametrize("q,sigma", [(0.1, 3.0), (0.01, 1.0), (0.5, 0.7), (0.9, 1.0),
                                     (0.01, 0.3), (0.2, 10.0), (1e-3, 2.0), (0.05, 50.0)])
def test_fractional_orders_are_the_exact_divergence(q, sigma):
    orders = np.array([1.05, 1.5, 2.5, 3.7, 7.3, 10.9])
    ours = dp.subsampled_gaussian_rdp(q, sigma, orders)
    want = np.array([mp_subsampled_rdp(a, q, sigma) for a in orders])
    np.testing.assert_allclose(ours, want, rtol=1e-9)
    # the old bound (the next integer order) is a wrong twin: it is visibly above
    ceil = dp.subsampled_gaussian_rdp(q, sigma, np.ceil(orders))
    assert np.all(ceil[:2] > want[:2] * (1 + 1e-3))


def test_high_fractional_orders_at_large_sigma_are_exact_too():
    """The small-x series of (1 + x)^α - 1 - αx is used only while α|x| is small: for
    α = 200.5 at σ = 30 the terms shrink by α|x| each, not by |x| (before: 6e-7 off)."""
    orders = np.array([63.5, 200.5])
    for q, sigma in [(0.01, 30.0), (0.5, 1000.0)]:
        ours = dp.subsampled_gaussian_rdp(q, sigma, orders)
        want = np.array([mp_subsampled_rdp(a, q, sigma) for a in orders])
        np.testing.assert_allclose(ours, want, rtol=1e-9)


LOOSE_GRID = [(q, s, k) for q in (0.5, 0.1, 0.01) for s in (0.8, 1.5, 4.0) for k in (1, 100, 1000)]


@pytest.mark.parametrize("q,sigma,k", LOOSE_GRID)
def test_default_orders_never_looser_than_dp_accounting_and_sound(q, sigma, k):
    """With the default orders the accountant agrees with dp-accounting's RdpAccountant
    (same orders) to 1e-6 relative or is tighter; it is never looser (before: up to 15%
    looser, fractional orders bounded by the next integer). dp-accounting sums the
    magnitudes of its fractional-order series, an upper bound; ours is the divergence."""
    delta = 1e-5
    event = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), k)
    theirs, their_rdp = dpa_epsilon([event], rdp.DEFAULT_ORDERS, delta)
    acc = dp.RDPAccountant().compose_gaussian(sigma, q=q, steps=k)
    ours = acc.epsilon(delta)
    assert ours <= theirs * (1 + 1e-9)
    fin = np.isfinite(their_rdp)
    assert np.all(acc.rdp[fin] <= their_rdp[fin] * (1 + 1e-9) + 1e-15)
    integer = rdp.DEFAULT_ORDERS == np.round(rdp.DEFAULT_ORDERS)
    np.testing.assert_allclose(acc.rdp[integer], their_rdp[integer], rtol=1e-6)
    # the twin that bounds a fractional order by the next integer order
    twin = k * dp.subsampled_gaussian_rdp(q, sigma, np.ceil(rdp.DEFAULT_ORDERS))
    assert dp.rdp_to_dp(rdp.DEFAULT_ORDERS, twin, delta) >= ours * (1 - 1e-12)


@pytest.mark.parametrize("q,sigma,k", [(0.1, 3.0, 100), (0.5, 0.8, 100), (0.01, 1.0, 1000)])
def test_accountant_is_sound_against_dp_accounting_pld(q, sigma, k):
    """RDP is an upper bound on the true ε, which the privacy-loss-distribution accountant
    (pessimistic discretisation, 1e-3 grid) approaches from above: PLD ≤ RDP."""
    from dp_accounting.pld import pld_privacy_accountant as pld
    acc = pld.PLDAccountant(value_discretization_interval=1e-3)
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), k)
    exact = acc.get_epsilon(1e-5)
    ours = dp.RDPAccountant().compose_gaussian(sigma, q=q, steps=k).epsilon(1e-5)
    assert exact <= ours <= 1.2 * exact


# -- never negative (issue 19: -8.3e-25 at q = 1e-9, σ = 1000, order 2) -------------------------
def test_subsampled_rdp_is_never_negative_and_the_accountant_answers():
    orders = np.r_[1.01, 1.5, 2, 3, 5.5, 8, 32, 256]
    for q in np.r_[np.logspace(-9, 0, 19), 0.999999]:
        for sigma in (0.5, 1.0, 10.0, 100.0, 1000.0):
            r = dp.subsampled_gaussian_rdp(q, sigma, orders)
            assert np.all(r >= 0), (q, sigma, r)
            assert np.all(np.isfinite(r))
    # the small-q limit q² α (e^{1/σ²} - 1)/2 holds to 1e-6 where the old sum cancelled
    got = dp.subsampled_gaussian_rdp(1e-9, 1000.0, np.array([2.0, 3.0]))
    want = 1e-18 * np.array([2.0, 3.0]) * np.expm1(1e-6) / 2
    np.testing.assert_allclose(got, want, rtol=1e-5)
    acc = dp.RDPAccountant().compose_gaussian(1000.0, q=1e-9, steps=10)
    assert acc.epsilon(1e-5) == 0.0


def test_five_accountants_in_order_and_against_accounting_module():
    ks = np.array([1, 10, 100, 1000])
    sigma, delta = 3.0, 1e-6
    c = rdp.composition_epsilons(sigma, delta, ks)
    assert np.all(c["exact"] <= c["rdp"] * (1 + 1e-12))
    assert np.all(c["rdp"] <= c["zcdp"] * (1 + 1e-12))
    for i, k in enumerate(ks):
        eps0 = dp.gaussian_epsilon(sigma, delta / k)
        assert c["basic"][i] == pytest.approx(dp.basic_composition([eps0] * int(k))[0], rel=1e-9)
        eps0 = dp.gaussian_epsilon(sigma, delta / (2 * k))
        adv = dp.advanced_composition(eps0, delta / (2 * k), int(k), delta / 2)
        assert c["advanced"][i] == pytest.approx(adv[0], rel=1e-9)
        assert adv[1] == pytest.approx(delta)
        assert c["exact"][i] == pytest.approx(dp.gaussian_epsilon(sigma, delta, k=int(k)), rel=1e-9)
        assert c["zcdp"][i] == pytest.approx(
            dp.zcdp_to_dp(k * dp.rdp.gaussian_zcdp(sigma), delta, method="classic"), rel=1e-12)


# -- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("call,name", [
    (lambda: dp.gaussian_rdp(1.0, 1.0), "order"),
    (lambda: dp.gaussian_rdp(2.0, 0.0), "sigma"),
    (lambda: dp.gaussian_rdp(2.0, float("nan")), "sigma"),
    (lambda: dp.gaussian_rdp(2.0, 1.0, -1.0), "l2_sensitivity"),
    (lambda: dp.gaussian_rdp("2", 1.0), "order"),
    (lambda: dp.subsampled_gaussian_rdp(0.1, 1.0, [10**6]), "orders"),
    (lambda: dp.rdp_to_dp([2.0, 3.0], [0.1], 1e-5), "same shape"),
    (lambda: dp.rdp_to_dp([2.0], [-0.1], 1e-5), "rdp"),
    (lambda: dp.rdp_to_dp([2.0], [0.1], 0.0), "delta"),
    (lambda: dp.rdp_to_dp([2.0], [0.1], 1.0), "delta"),
    (lambda: dp.rdp_to_dp([2.0], [0.1], 1e-5, method="exact"), "method"),
    (lambda: dp.zcdp_to_dp(-1.0, 1e-5), "rho"),
    (lambda: dp.zcdp_to_dp(True, 1e-5), "rho"),
    (lambda: dp.zcdp_to_dp(float("inf"), 1e-5), "rho"),
    (lambda: dp.zcdp_to_dp(1.0, float("nan")), "delta"),
    (lambda: dp.gaussian_epsilon(1.0, 1e-5, k=0), "k"),
    (lambda: dp.gaussian_epsilon(1.0, 1e-5, k=2.5), "k"),
    (lambda: dp.gaussian_epsilon(-1.0, 1e-5), "sigma"),
    (lambda: dp.gaussian_epsilon(1.0, 1e-5, l2_sensitivity=0.0), "l2_sensitivity"),
    (lambda: dp.subsampled_gaussian_rdp(1.5, 1.0, [2]), "q"),
    (lambda: dp.subsampled_gaussian_rdp(0.1, 1.0, [1.0]), "orders"),
    (lambda: dp.subsampled_gaussian_rdp(0.1, "1", [2]), "sigma"),
    (lambda: dp.RDPAccountant([0.5]), "orders"),
    (lambda: dp.RDPAccountant().compose_gaussian(1.0, q=-0.1), "q"),
    (lambda: dp.RDPAccountant().compose_gaussian(1.0, steps=0), "steps"),
    (lambda: dp.RDPAccountant().epsilon(2.0), "delta"),
    (lambda: rdp.composition_epsilons(1.0, 1e-5, [0]), "ks"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


def test_extreme_sigma_and_k_answer_or_refuse_clearly():
    # a sigma so small that Δ²/(2σ²) overflows: ρ = inf (no privacy), not a ZeroDivisionError
    assert rdp.gaussian_zcdp(5e-324) == math.inf
    assert rdp.gaussian_zcdp(5e-324, l2_sensitivity=0.0) == 0.0
    assert rdp.gaussian_zcdp(2.0) == 0.125
    # k beyond the float range: μ = Δ√k/σ from logarithms; σ = 1e200 and k = 10**400 is
    # the same Gaussian as σ = 1, k = 1
    assert math.isclose(rdp.gaussian_epsilon(1e200, 1e-5, k=10 ** 400),
                        rdp.gaussian_epsilon(1.0, 1e-5), rel_tol=1e-10)
    with pytest.raises(ValueError, match="larger sigma"):
        rdp.gaussian_epsilon(1.0, 1e-5, k=10 ** 400)      # ε about 5e399
    with pytest.raises(ValueError, match="larger sigma"):
        rdp.gaussian_epsilon(1e-160, 1e-5)                # μ² overflows


# -- delta(epsilon): the same conversion solved for delta -------------------------------------
@pytest.mark.parametrize("q,sigma,k", [(1.0, 2.0, 10), (0.01, 1.0, 1000), (0.1, 0.8, 100),
                                       (1.0, 50.0, 1)])
def test_accountant_delta_equals_dp_accounting_and_bounds_the_exact_gaussian(q, sigma, k):
    """On integer orders (where both compute the curve exactly) the δ at ε equals
    dp-accounting's ``get_delta`` (the same conversions, Canonne, Kamath & Steinke 2020 and
    Bretagnolle-Huber); at q = 1 it is never below the exact Gaussian δ, and a twin that
    forgets the composition (one step's curve) is."""
    orders = np.arange(2, 65)
    event = dpa.GaussianDpEvent(sigma) if q == 1 else \
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma))
    theirs = dpa_rdp.RdpAccountant(orders=list(orders))
    theirs.compose(event, k)
    ours = dp.RDPAccountant(orders=orders).compose_gaussian(sigma, q=q, steps=k)
    for eps in (0.0, 0.5, 2.0, 8.0):
        ref = theirs.get_delta(eps)
        assert ours.delta(eps) == pytest.approx(ref, rel=1e-9) or (ref == 0 and ours.delta(eps) <= 5e-324)
        if q == 1:
            mu = math.sqrt(k) / sigma
            assert ours.delta(eps) >= exact_delta(eps, mu) * (1 - 1e-9)
            if k > 1:
                one = rdp._delta_of_curve(ours.orders, ours.rdp / k, eps, "improved")
                assert one < exact_delta(eps, mu)
