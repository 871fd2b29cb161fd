"""Privacy as a hypothesis test (notebook 13): trade-off curves, privacy loss
distributions, the membership attack.

Every formula is checked against an independent computation (Neyman-Pearson tests built
from the output densities, numerical integration, scipy.stats, sampling) and against
Google's dp-accounting where it computes the same quantity; each check also rejects a
deliberately wrong twin. Statistical tests run at alpha = 1e-6.
"""

import numpy as np
import pytest
from scipy import integrate, stats

import dpteach as dp
from dpteach import mechanisms, tradeoff

ALPHA = 1e-6
A = np.linspace(0.0, 1.0, 2001)
EPSILONS = [0.05, 0.3, 1.0, 2.0, 4.0]


# ------------------------------------------------------------------ helpers (independent)
def np_tradeoff_discrete(p, q, alpha):
    """Exact trade-off T(P, Q) of two distributions on a finite set: the Neyman-Pearson
    tests reject P on the outcomes with the largest q/p first, randomising on the last
    one, so (alpha, beta) moves along straight segments between the vertices."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    with np.errstate(divide="ignore"):
        order = np.argsort(-(q / np.where(p > 0, p, 0.0)), kind="stable")
    alphas = np.concatenate([[0.0], np.cumsum(p[order])])
    betas = 1.0 - np.concatenate([[0.0], np.cumsum(q[order])])
    return np.interp(alpha, alphas, betas)


def threshold_points(dist_p, dist_q, ts):
    """(alpha, beta) of the tests "reject P above t" for continuous P, Q."""
    return dist_p.sf(ts), dist_q.cdf(ts)


def lies_above(curve, bound, tol=1e-12):
    return bool(np.all(curve >= bound - tol))


def rr_distributions(epsilon):
    keep = np.exp(epsilon) / (1 + np.exp(epsilon))
    return np.array([keep, 1 - keep]), np.array([1 - keep, keep])


def twin_half(alpha, epsilon, delta=0.0):
    """Wrong twin: e^eps replaced by e^(eps/2) (claims more privacy than is there)."""
    e = epsilon / 2
    return np.maximum.reduce([0 * alpha, 1 - delta - np.exp(e) * alpha, np.exp(-e) * (1 - delta - alpha)])


# ------------------------------------------------------------------ tradeoff_curve
@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.1])
def test_tradeoff_curve_closed_form_and_symmetry(eps, delta):
    f = dp.tradeoff_curve(A, eps, delta)
    expected = np.maximum.reduce([0 * A, 1 - delta - np.exp(eps) * A, np.exp(-eps) * (1 - delta - A)])
    np.testing.assert_allclose(f, expected, rtol=0, atol=1e-15)
    assert dp.tradeoff_curve(0.0, eps, delta) == pytest.approx(1 - delta)
    assert dp.tradeoff_curve(1 - delta, eps, delta) == pytest.approx(0.0, abs=1e-15)
    # the kink where the two lines cross
    kink = (1 - delta) / (1 + np.exp(eps))
    assert dp.tradeoff_curve(kink, eps, delta) == pytest.approx(kink, rel=1e-12)
    # a trade-off curve of DP is symmetric: f(f(alpha)) = alpha on [0, 1 - delta]
    inner = A[A <= 1 - delta]
    np.testing.assert_allclose(dp.tradeoff_curve(dp.tradeoff_curve(inner, eps, delta), eps, delta),
                               inner, atol=1e-12)
    assert np.isscalar(dp.tradeoff_curve(0.3, eps, delta))


@pytest.mark.parametrize("eps", EPSILONS)
def test_randomized_response_attains_the_curve_and_rejects_the_half_twin(eps):
    """RR is the extremal eps-DP mechanism: its exact trade-off is f_eps (Kairouz et al.)."""
    p, q = rr_distributions(eps)
    t_rr = np_tradeoff_discrete(p, q, A)
    np.testing.assert_allclose(t_rr, dp.tradeoff_curve(A, eps), atol=1e-12)
    # RR is eps-DP, so a correct curve must lie below its trade-off; the e^(eps/2) twin does not
    assert lies_above(t_rr, dp.tradeoff_curve(A, eps))
    assert not lies_above(t_rr, twin_half(A, eps))


@pytest.mark.parametrize("eps", EPSILONS)
def test_tradeoff_region_equals_the_hockey_stick_definition(eps):
    """beta >= f(alpha) for every test <=> (eps, delta)-DP: on random finite pairs the
    smallest delta (hockey stick) makes the pair's trade-off lie above f, a smaller
    delta does not."""
    rng = np.random.default_rng(int(eps * 100))
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        d = dp.definition.smallest_delta(p, q, eps)
        t = np.minimum(np_tradeoff_discrete(p, q, A), np_tradeoff_discrete(q, p, A))
        if d < 1 - 1e-9:
            assert lies_above(t, dp.tradeoff_curve(A, eps, d), tol=1e-10)
        if d > 1e-3:
            assert not lies_above(t, dp.tradeoff_curve(A, eps, d * 0.9), tol=1e-10)


# ------------------------------------------------------------------ Laplace and Gaussian curves
@pytest.mark.parametrize("eps", EPSILONS)
def test_laplace_tradeoff_is_the_neyman_pearson_curve(eps):
    ts = np.linspace(-30, 30, 4001)
    a, b = threshold_points(stats.laplace(0, 1 / eps), stats.laplace(1, 1 / eps), ts)
    np.testing.assert_allclose(dp.tradeoff.laplace_tradeoff(a, eps), b, rtol=1e-9, atol=1e-14)
    # a wrong twin (means eps/2 apart) misses the Neyman-Pearson points
    assert not np.allclose(stats.laplace.cdf(stats.laplace.isf(a) - eps / 2), b, atol=1e-6)


@pytest.mark.parametrize("eps", EPSILONS)
def test_laplace_lies_above_the_eps_curve_touching_it_outside_the_middle(eps):
    lap = dp.tradeoff.laplace_tradeoff(A, eps)
    f = dp.tradeoff_curve(A, eps)
    assert lies_above(lap, f)
    outer = (A <= np.exp(-eps) / 2) | (A >= 0.5)
    np.testing.assert_allclose(lap[outer], f[outer], atol=1e-12)
    middle = (A > np.exp(-eps) / 2 + 1e-3) & (A < 0.5 - 1e-3)
    assert np.all(lap[middle] > f[middle])
    # the twins: e^(eps/2), and Laplace judged at a smaller eps, are both rejected
    assert not lies_above(lap, twin_half(A, eps))
    assert not lies_above(lap, dp.tradeoff_curve(A, eps * 0.9))


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0])
def test_gaussian_tradeoff_equals_the_exact_gaussian_test(mu):
    ts = np.linspace(-12, 12 + mu, 4001)
    a, b = threshold_points(stats.norm(0, 1), stats.norm(mu, 1), ts)
    np.testing.assert_allclose(dp.gaussian_tradeoff(a, mu), b, rtol=1e-9, atol=1e-12)
    # with sigma and Delta instead of units of sigma: N(0, s^2) against N(D, s^2), D/s = mu
    s = 2.5
    a2, b2 = threshold_points(stats.norm(0, s), stats.norm(mu * s, s), ts * s)
    np.testing.assert_allclose(dp.gaussian_tradeoff(a2, mu), b2, rtol=1e-9, atol=1e-12)
    # twin: mu/2
    assert not np.allclose(dp.gaussian_tradeoff(a, mu / 2), b, atol=1e-6)
    assert dp.gaussian_tradeoff(1e-12, mu) == pytest.approx(
        stats.norm.cdf(stats.norm.ppf(1 - 1e-12) - mu), rel=1e-3)


@pytest.mark.parametrize("mu", [0.2, 1.0, 2.0])
def test_gaussian_is_eps_delta_eps_dp_for_every_eps_and_not_without_delta(mu):
    """mu-GDP <=> (eps, delta(eps))-DP for all eps [Dong, Roth & Su 2019]."""
    g = dp.gaussian_tradeoff(A, mu)
    pld = dp.tradeoff.privacy_loss_distribution("gaussian", sigma=1 / mu)
    for eps in [0.1, 0.5, 1.0, 2.0]:
        d = float(pld.delta(eps))
        f = dp.tradeoff_curve(A, eps, d)
        assert lies_above(g, f, tol=1e-9)
        assert np.min(g - f) < 1e-3             # and the curve is touched: delta(eps) is tight
        if d > 1e-6:
            assert not lies_above(g, dp.tradeoff_curve(A, eps, 0.0))       # twin: delta ignored
            assert not lies_above(g, dp.tradeoff_curve(A, eps, 0.8 * d))  # twin: delta too small


# ------------------------------------------------------------------ privacy loss distributions
def _integral(pld, fn, kink=None):
    """sum over atoms + integral over the density part of fn(l) dl."""
    atoms = float(np.sum(pld.atom_probs * fn(pld.atoms)))
    if pld.mechanism == "gaussian":
        mu = pld.params["mu"]
        lo, hi = mu ** 2 / 2 - 40 * mu, mu ** 2 / 2 + 40 * mu
        dens = lambda l: stats.norm.pdf(l, mu ** 2 / 2, mu)  # noqa: E731
    elif pld.mechanism == "laplace":
        e = pld.params["epsilon"]
        lo, hi = -e, e
        dens = lambda l: 0.25 * np.exp(-(e - l) / 2)  # noqa: E731
    else:
        return atoms
    points = None if kink is None or not lo < kink < hi else [kink]
    val, _ = integrate.quad(lambda l: dens(l) * fn(np.array(l)), lo, hi, epsabs=1e-14, epsrel=1e-12,
                            limit=200, points=points)
    return atoms + val


PLDS = [("laplace", dict(epsilon=0.5)), ("laplace", dict(epsilon=2.0, sensitivity=3.0)),
        ("gaussian", dict(sigma=1.0)), ("gaussian", dict(sigma=4.0, sensitivity=2.0)),
        ("randomized_response", dict(epsilon=0.7)), ("randomized_response", dict(epsilon=3.0))]


@pytest.mark.parametrize("mech,kw", PLDS)
def test_loss_distribution_is_a_distribution_with_the_right_mean(mech, kw):
    pld = dp.tradeoff.privacy_loss_distribution(mech, **kw)
    assert _integral(pld, lambda l: np.ones_like(l, dtype=float)) == pytest.approx(1.0, abs=1e-10)
    assert _integral(pld, lambda l: l) == pytest.approx(pld.mean, rel=1e-8, abs=1e-12)
    # E[e^-L] = 1 (the loss of x against x', averaged over M(x), integrates p_x' to one)
    assert _integral(pld, lambda l: np.exp(-l)) == pytest.approx(1.0, abs=1e-9)


def test_laplace_loss_has_atoms_at_plus_minus_eps_and_bounded_support():
    e = 0.8
    pld = dp.tradeoff.privacy_loss_distribution("laplace", epsilon=e, sensitivity=2.0)
    np.testing.assert_allclose(pld.atoms, [-e, e])
    np.testing.assert_allclose(pld.atom_probs, [np.exp(-e) / 2, 0.5])
    assert pld.grid.min() > -e and pld.grid.max() < e
    assert pld.params["scale"] == pytest.approx(2.0 / e)


def test_randomized_response_loss_is_two_point():
    e = 1.3
    pld = dp.tradeoff.privacy_loss_distribution("randomized_response", epsilon=e)
    keep = np.exp(e) / (1 + np.exp(e))
    np.testing.assert_allclose(pld.atoms, [-e, e])
    np.testing.assert_allclose(pld.atom_probs, [1 - keep, keep], rtol=1e-14)
    assert pld.grid.size == 0


def _sampled_losses(mech, kw, n, rng):
    if mech == "laplace":
        b = kw.get("sensitivity", 1.0) / kw["epsilon"]
        y = rng.laplace(0.0, b, n)
        return mechanisms.privacy_loss(y, 0.0, kw.get("sensitivity", 1.0), b)
    if mech == "gaussian":
        y = rng.normal(0.0, kw["sigma"], n)
        return mechanisms.privacy_loss(y, 0.0, kw.get("sensitivity", 1.0), kw["sigma"], noise="gaussian")
    bits = mechanisms.randomized_response(np.ones(n, int), kw["epsilon"], rng=rng)
    p, q = rr_distributions(kw["epsilon"])          # P(report 1) under x (bit 1) and x' (bit 0)
    return np.where(bits == 1, np.log(p[0] / q[0]), np.log(p[1] / q[1]))


@pytest.mark.parametrize("mech,kw", PLDS)
def test_loss_distribution_matches_sampled_losses(mech, kw):
    """Pr[L > x] at several x against the fraction of sampled losses (two-sided exact
    binomial tests, Bonferroni at 1e-6), and a KS test of the whole law for the Gaussian."""
    rng = np.random.default_rng(11)
    n = 200_000
    losses = _sampled_losses(mech, kw, n, rng)
    pld = dp.tradeoff.privacy_loss_distribution(mech, **kw)
    xs = np.quantile(losses, [0.1, 0.3, 0.5, 0.7, 0.9]) - 1e-9
    for x in xs:
        x = max(float(x), 0.0)
        k = int(np.sum(losses > x))
        assert stats.binomtest(k, n, float(pld.tail(x))).pvalue > ALPHA / len(xs)
    if mech == "gaussian":
        mu = pld.params["mu"]
        assert stats.kstest(losses, stats.norm(mu ** 2 / 2, mu).cdf).pvalue > ALPHA
        # twins: a 20% wider spread; mean 0 (the loss centred at zero)
        assert stats.kstest(losses, stats.norm(mu ** 2 / 2, 1.2 * mu).cdf).pvalue < ALPHA
        assert stats.kstest(losses, stats.norm(0.0, mu).cdf).pvalue < ALPHA
    else:
        # twin: the two atoms' probabilities swapped
        e = kw["epsilon"]
        top = int(np.sum(np.isclose(losses, e, rtol=0, atol=1e-9 * max(e, 1))))
        assert stats.binomtest(top, n, float(pld.atom_probs[1])).pvalue > ALPHA
        assert stats.binomtest(top, n, float(pld.atom_probs[0])).pvalue < ALPHA


@pytest.mark.parametrize("mech,kw", PLDS)
def test_delta_is_the_hockey_stick_and_below_the_tail(mech, kw):
    pld = dp.tradeoff.privacy_loss_distribution(mech, **kw)
    for eps in [0.0, 0.1, 0.4, 1.0, 2.5]:
        brute = _integral(pld, lambda l: np.maximum(0.0, -np.expm1(eps - l)), kink=eps)
        assert float(pld.delta(eps)) == pytest.approx(brute, rel=1e-7, abs=1e-13)
        assert float(pld.delta(eps)) <= float(pld.tail(eps)) + 1e-15
        tail = _integral(pld, lambda l: (l > eps).astype(float), kink=eps)
        assert float(pld.tail(eps)) == pytest.approx(tail, rel=1e-7, abs=1e-13)
    np.testing.assert_allclose(pld.delta([0.1, 1.0]), [pld.delta(0.1), pld.delta(1.0)])


def test_delta_against_other_definitions():
    # Gaussian: Balle & Wang's closed form as written in dpteach.mechanisms
    for s, d in [(1.0, 1.0), (3.0, 2.0), (0.5, 1.0)]:
        pld = dp.tradeoff.privacy_loss_distribution("gaussian", sigma=s, sensitivity=d)
        for eps in [0.1, 1.0, 3.0]:
            assert float(pld.delta(eps)) == pytest.approx(mechanisms.gaussian_delta(s, d, eps), rel=1e-9)
            # hockey stick as Pr_P[L > eps] - e^eps Pr_Q[L > eps], with L ~ N(-mu^2/2, mu^2) under Q
            mu = d / s
            hs = pld.tail(eps) - np.exp(eps) * stats.norm.sf(eps, -mu ** 2 / 2, mu)
            assert float(pld.delta(eps)) == pytest.approx(hs, rel=1e-9)
    # randomized response: the finite hockey stick of notebook 04
    for e in [0.5, 2.0]:
        pld = dp.tradeoff.privacy_loss_distribution("randomized_response", epsilon=e)
        p, q = rr_distributions(e)
        for eps in [0.0, 0.3, e]:
            assert float(pld.delta(eps)) == pytest.approx(dp.definition.hockey_stick_divergence(p, q, eps),
                                                          abs=1e-15)
    # Laplace: sup over sets of P(S) - e^eps Q(S) integrated over outputs
    e, b = 1.5, 1 / 1.5
    pld = dp.tradeoff.privacy_loss_distribution("laplace", epsilon=e)
    for eps in [0.0, 0.5, 1.2]:
        val, _ = integrate.quad(lambda y: max(0.0, stats.laplace.pdf(y, 0, b)
                                              - np.exp(eps) * stats.laplace.pdf(y, 1, b)),
                                -40, 40, points=[0, 1], limit=200, epsabs=1e-14)
        assert float(pld.delta(eps)) == pytest.approx(val, rel=1e-8)
        assert float(pld.delta(eps)) == pytest.approx(1 - np.exp(-(e - eps) / 2), rel=1e-12)


def test_delta_differs_from_the_chance_the_loss_exceeds_eps():
    """The twin "delta = Pr[L > eps]" overstates delta, and for Laplace below eps0 by a lot."""
    sigma = mechanisms.gaussian_sigma(1.0, 1.0, 1e-5, analytic=True)
    pld = dp.tradeoff.privacy_loss_distribution("gaussian", sigma=sigma)
    assert float(pld.delta(1.0)) == pytest.approx(1e-5, rel=1e-6)
    assert float(pld.tail(1.0)) > 3 * float(pld.delta(1.0))
    lap = dp.tradeoff.privacy_loss_distribution("laplace", epsilon=1.0)
    assert float(lap.tail(0.5)) > 2 * float(lap.delta(0.5))
    assert float(lap.delta(1.0)) == 0.0 and float(lap.tail(1.0)) == 0.0


# ------------------------------------------------------------------ cross-check: dp-accounting
def test_cross_check_with_dp_accounting():
    plm = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    for b, d in [(0.5, 1.0), (2.0, 1.0), (1.0, 3.0)]:
        theirs = plm.LaplacePrivacyLoss(b, sensitivity=d)
        pld = dp.tradeoff.privacy_loss_distribution("laplace", epsilon=d / b, sensitivity=d)
        for eps in [0.0, 0.1, 0.5, 0.9 * d / b]:
            assert float(pld.delta(eps)) == pytest.approx(theirs.get_delta_for_epsilon(eps), rel=1e-6)
        tail = theirs.privacy_loss_tail().tail_probability_mass_function
        ours = dict(zip(np.round(pld.atoms, 12), pld.atom_probs))
        assert {round(k, 12): v for k, v in tail.items()} == pytest.approx(ours, rel=1e-6)
        # the loss of an output in their REMOVE orientation: ln mu(y + Delta) / mu(y)
        for y in [-2.0, 0.3, 0.7, 5.0]:
            assert theirs.privacy_loss(y) == pytest.approx(mechanisms.privacy_loss(y, -d, 0.0, b),
                                                           rel=1e-6, abs=1e-12)
    for s, d in [(1.0, 1.0), (5.0, 2.0), (0.7, 1.0)]:
        theirs = plm.GaussianPrivacyLoss(s, sensitivity=d)
        pld = dp.tradeoff.privacy_loss_distribution("gaussian", sigma=s, sensitivity=d)
        for eps in [0.0, 0.2, 1.0, 3.0]:
            assert float(pld.delta(eps)) == pytest.approx(theirs.get_delta_for_epsilon(eps), rel=1e-6)


def test_cross_check_randomized_response_with_dp_accounting_pld():
    pldmod = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    for e in [0.5, 1.0, 2.0]:
        # their RR keeps the truth with prob 1 - p and answers uniformly over 2 buckets with p
        p_noise = 2 / (1 + np.exp(e))
        theirs = pldmod.from_randomized_response(p_noise, 2, value_discretization_interval=1e-9)
        pld = dp.tradeoff.privacy_loss_distribution("randomized_response", epsilon=e)
        for eps in [0.0, 0.25, 0.5 * e]:
            assert float(pld.delta(eps)) == pytest.approx(theirs.get_delta_for_epsilon(eps), rel=1e-6)


# ------------------------------------------------------------------ the attack
def test_empirical_tradeoff_counts_and_clopper_pearson():
    out = np.array([0.0, 1.0, 2.0, 3.0])
    in_ = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    a, b = tradeoff.empirical_tradeoff(out, in_, [-1.0, 1.0, 2.5, 10.0])
    np.testing.assert_allclose(a, [1.0, 0.5, 0.25, 0.0])
    np.testing.assert_allclose(b, [0.0, 0.2, 0.4, 1.0])
    for k, n in [(0, 50), (7, 50), (50, 50), (123, 1000)]:
        lo, hi = dp.audit.clopper_pearson(k, n, alpha=1e-3)
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=1 - 1e-3, method="exact")
        assert (lo, hi) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_trial_counts_beyond_2_to_the_53_are_refused_by_name():
    # 10**400 trials raised OverflowError inside scipy; now refused before any work
    for call, name in [(lambda: tradeoff.outside_region(0.1, 0.5, 10 ** 400, 100, 1.0), "n_out"),
                       (lambda: tradeoff.outside_region(0.1, 0.5, 100, 2 ** 53 + 1, 1.0), "n_in")]:
        with pytest.raises(ValueError, match=f"{name} must be an integer"):
            call()
    with pytest.raises(ValueError, match="n must be at most 2"):
        dp.audit.clopper_pearson(3, 10 ** 400)
    lo, hi = dp.audit.clopper_pearson(3, 2 ** 53, alpha=1e-6)          # the largest count taken
    assert 0 < lo < 3 / 2 ** 53 < hi < 1e-14


def test_outside_region_is_vectorised_over_points():
    # alpha and beta are arrays of measured points (a list is a good input, not a gap)
    # at eps = 1 the curve is 0.184 at alpha = 0.5 and 0.728 at alpha = 0.1
    flags = tradeoff.outside_region([0.5, 0.1], [0.5, 0.5], 10_000, 10_000, 1.0)
    assert flags.tolist() == [False, True]
    assert tradeoff.outside_region([1.0], [0.0], 100, 100, 1.0).tolist() == [False]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0])
def test_private_attack_stays_in_the_region(seed, eps):
    """Every measured (alpha, beta) of a private release lies in the (eps, delta) region
    within Clopper-Pearson boxes (level 1e-6 split over all points)."""
    n = 20_000
    for noise in ["laplace", "gaussian"]:
        out, in_ = tradeoff.membership_attack(eps, n_trials=n, noise=noise, delta=1e-5, rng=seed)
        ts = np.quantile(np.concatenate([out, in_]), np.linspace(0.01, 0.99, 40))
        a, b = tradeoff.empirical_tradeoff(out, in_, ts)
        level = ALPHA / (2 * ts.size)
        assert not tradeoff.outside_region(a, b, n, n, eps, 1e-5, level=level).any()


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0])
def test_attack_catches_broken_releases_and_wrong_curves(eps):
    n = 20_000
    rng = np.random.default_rng(3)
    # no noise: the test at count + 1/2 is perfect, (0, 0)
    out, in_ = tradeoff.membership_attack(n_trials=n, noise="none", rng=rng)
    a, b = tradeoff.empirical_tradeoff(out, in_, [40.5])
    assert (a[0], b[0]) == (0.0, 0.0)
    assert tradeoff.outside_region(a, b, n, n, eps, 1e-5).all()
    # sensitivity understated by half: really 2 eps
    out, in_ = tradeoff.membership_attack(eps, n_trials=n, sensitivity_used=0.5, rng=rng)
    ts = np.quantile(np.concatenate([out, in_]), np.linspace(0.01, 0.99, 40))
    a, b = tradeoff.empirical_tradeoff(out, in_, ts)
    assert tradeoff.outside_region(a, b, n, n, eps, 1e-5, level=ALPHA / 80).any()
    # a correct release judged against the e^(eps/2) twin curve is flagged
    out, in_ = tradeoff.membership_attack(eps, n_trials=n, rng=rng)
    ts = np.quantile(np.concatenate([out, in_]), np.linspace(0.01, 0.99, 40))
    a, b = tradeoff.empirical_tradeoff(out, in_, ts)
    _, a_hi = dp.audit.clopper_pearson(np.round(a * n), n, alpha=ALPHA / 80)
    _, b_hi = dp.audit.clopper_pearson(np.round(b * n), n, alpha=ALPHA / 80)
    assert np.any(b_hi < twin_half(a_hi, eps))


def test_attack_is_reproducible_with_a_seed():
    a = tradeoff.membership_attack(1.0, n_trials=100, rng=5)
    b = tradeoff.membership_attack(1.0, n_trials=100, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


# ------------------------------------------------------------------ bad input
from _bad_values import BAD_REAL, INF, NAN  # noqa: E402  (the one table of bad values)
BAD_EPS = BAD_REAL + [0, -1.0]
BAD_EPS0 = BAD_REAL + [-1e-12, -1.0]   # where epsilon = 0 (perfect privacy) is valid


ROWS = (
    [(dp.tradeoff_curve, dict(alpha=0.1, epsilon=1.0, delta=0.0), "epsilon", v) for v in BAD_EPS0]
    + [(dp.tradeoff_curve, dict(alpha=0.1, epsilon=1.0, delta=0.0), "delta", v)
       for v in BAD_REAL + [-1e-9, 1.0]]
    + [(dp.tradeoff_curve, dict(alpha=0.1, epsilon=1.0), "alpha", v)
       for v in [NAN, INF, -0.1, 1.5, [0.1, NAN], "0.1", True, None, []]]
    + [(dp.gaussian_tradeoff, dict(alpha=0.1, mu=1.0), "mu", v) for v in BAD_REAL + [-0.5]]
    + [(dp.gaussian_tradeoff, dict(alpha=0.1, mu=1.0), "alpha", v) for v in [NAN, -1e-3, 2.0, "x"]]
    + [(dp.tradeoff.laplace_tradeoff, dict(alpha=0.1, epsilon=1.0), "epsilon", v) for v in BAD_EPS0]
    + [(dp.tradeoff.privacy_loss_distribution, dict(mechanism="laplace", epsilon=1.0), "epsilon", v)
       for v in BAD_EPS]
    + [(dp.tradeoff.privacy_loss_distribution, dict(mechanism="gaussian", sigma=1.0), "sigma", v)
       for v in BAD_REAL + [0.0, -1.0]]
    + [(dp.tradeoff.privacy_loss_distribution, dict(mechanism="laplace", epsilon=1.0), "sensitivity", v)
       for v in BAD_REAL + [0.0, -1.0]]
    + [(dp.tradeoff.privacy_loss_distribution, dict(mechanism="laplace", epsilon=1.0), "mechanism", v)
       for v in ["exponential", 1, None, "Laplace"]]
    + [(tradeoff.membership_attack, dict(epsilon=1.0, n_trials=10), "epsilon", v) for v in BAD_EPS]
    + [(tradeoff.membership_attack, dict(epsilon=1.0, n_trials=10), "n_trials", v)
       for v in [0, -1, 2.5, True, "3", None]]
    + [(tradeoff.membership_attack, dict(epsilon=1.0, n_trials=10), "noise", v) for v in ["lap", 1]]
    + [(tradeoff.membership_attack, dict(epsilon=1.0, n_trials=10), "sensitivity_used", v)
       for v in BAD_REAL + [0.0]]
    + [(tradeoff.membership_attack, dict(epsilon=1.0, n_trials=10, noise="gaussian"), "delta", v)
       for v in BAD_REAL + [0.0, 1.0]]
    + [(tradeoff.empirical_tradeoff, dict(out=[1.0], in_=[2.0], thresholds=[1.5]), "out", v)
       for v in [[NAN], [], "1", None]]
)


@pytest.mark.parametrize("func,good,param,bad", ROWS,
                         ids=[f"{r[0].__name__}-{r[2]}-{i}" for i, r in enumerate(ROWS)])
def test_bad_input_is_refused_with_the_parameter_named(func, good, param, bad):
    func(**good)                                   # the good call works
    with pytest.raises((ValueError, TypeError)) as err:
        func(**{**good, param: bad})
    assert param in str(err.value)


def test_loss_distribution_needs_its_parameter():
    with pytest.raises(ValueError, match="sigma"):
        dp.tradeoff.privacy_loss_distribution("gaussian")
    with pytest.raises(ValueError, match="epsilon"):
        dp.tradeoff.privacy_loss_distribution("randomized_response")


def test_epsilon_for_a_delta_inverts_the_privacy_profile():
    lap = dp.tradeoff.privacy_loss_distribution("laplace", epsilon=1.0)
    for d in [1e-6, 1e-3, 0.1]:
        assert lap.epsilon(d) == pytest.approx(1.0 + 2 * np.log1p(-d), rel=1e-9)
        assert float(lap.delta(lap.epsilon(d))) == pytest.approx(d, rel=1e-8)
    for eps, d in [(0.5, 1e-5), (1.0, 1e-6), (3.0, 1e-3)]:
        sigma = mechanisms.gaussian_sigma(1.0, eps, d, analytic=True)
        g = dp.tradeoff.privacy_loss_distribution("gaussian", sigma=sigma)
        assert g.epsilon(d) == pytest.approx(eps, rel=1e-7)
        # twin: the eps at which Pr[L > eps] = d is larger (the tail overstates delta)
        from scipy.optimize import brentq
        tail_eps = brentq(lambda e: float(g.tail(e)) - d, 0.0, 100.0)
        assert tail_eps > eps * 1.01
    rr = dp.tradeoff.privacy_loss_distribution("randomized_response", epsilon=2.0)
    keep = rr.atom_probs[1]
    assert rr.epsilon(0.01) == pytest.approx(2.0 + np.log1p(-0.01 / keep), rel=1e-9)
    assert rr.epsilon(0.9) == 0.0 or float(rr.delta(0.0)) > 0.9
    with pytest.raises(ValueError, match="delta"):
        lap.epsilon(1.5)


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.1])
def test_advantage_bound_is_the_largest_one_minus_alpha_minus_beta(eps, delta):
    best = np.max(1 - A - dp.tradeoff_curve(A, eps, delta))
    fine = np.linspace(0, 1, 200001)
    best = max(best, np.max(1 - fine - dp.tradeoff_curve(fine, eps, delta)))
    assert tradeoff.advantage_bound(eps, delta) == pytest.approx(best, abs=1e-5)
    # randomized response (delta = 0) reaches it exactly
    if delta == 0.0:
        p, q = rr_distributions(eps)
        assert tradeoff.advantage_bound(eps) == pytest.approx(p[0] - q[0], rel=1e-12)
    # the extremal (eps, delta) pair reaches it: its total variation (the best advantage)
    # equals the bound, so the twin without the 2 delta is too small for delta > 0
    c = (1 - delta) / (1 + np.exp(eps))
    p = np.array([delta, np.exp(eps) * c, c, 0.0])
    q = p[::-1].copy()
    assert dp.definition.smallest_delta(p, q, eps) == pytest.approx(delta, abs=1e-15)
    tv = dp.definition.hockey_stick_divergence(p, q, 0.0)
    assert tv == pytest.approx(tradeoff.advantage_bound(eps, delta), rel=1e-12)
    if delta > 0:
        assert np.expm1(eps) / (np.exp(eps) + 1) < tv * (1 - 1e-9)


def test_huge_epsilon_gives_a_curve_without_nan():
    f = dp.tradeoff_curve(np.array([0.0, 1e-300, 0.5, 1.0]), 1e6, 0.1)
    np.testing.assert_array_equal(f, [0.9, 0.0, 0.0, 0.0])
    assert tradeoff.advantage_bound(1e6, 0.0) == 1.0
    assert np.isfinite(dp.tradeoff.laplace_tradeoff(np.array([0.0, 0.5, 1.0]), 800.0)).all()


MORE_ROWS = (
    [(tradeoff.advantage_bound, dict(epsilon=1.0, delta=1e-5), "epsilon", v) for v in BAD_EPS0]
    + [(tradeoff.advantage_bound, dict(epsilon=1.0, delta=1e-5), "delta", v)
       for v in BAD_REAL + [1.0, -0.1]]
    + [(tradeoff.outside_region, dict(alpha=[0.1], beta=[0.8], n_out=10, n_in=10, epsilon=1.0),
        "n_out", v) for v in [0, -1, 2.5, True]]
    + [(tradeoff.outside_region, dict(alpha=[0.1], beta=[0.8], n_out=10, n_in=10, epsilon=1.0),
        "alpha", v) for v in [[1.5], [NAN], "x"]]
    + [(tradeoff.outside_region, dict(alpha=[0.1], beta=[0.8], n_out=10, n_in=10, epsilon=1.0),
        "beta", v) for v in [[1.5], [-0.1], [NAN], None]]
    + [(tradeoff.outside_region, dict(alpha=[0.1], beta=[0.8], n_out=10, n_in=10, epsilon=1.0),
        "epsilon", v) for v in BAD_EPS0]
)


@pytest.mark.parametrize("func,good,param,bad", MORE_ROWS,
                         ids=[f"{r[0].__name__}-{r[2]}-{i}" for i, r in enumerate(MORE_ROWS)])
def test_more_bad_input_is_refused(func, good, param, bad):
    func(**good)
    with pytest.raises((ValueError, TypeError), match=param):
        func(**{**good, param: bad})


def test_false_alarm_level_holds_on_a_point_on_the_curve():
    # a correct mechanism exactly on the curve: each upper end misses with prob <= level/2
    rng = np.random.default_rng(19)
    eps, n, level = 1.0, 400, 0.02
    a_true = 0.2
    b_true = float(dp.tradeoff_curve(a_true, eps))
    a = rng.binomial(n, a_true, 20000) / n
    b = rng.binomial(n, b_true, 20000) / n
    rate = tradeoff.outside_region(a, b, n, n, eps, level=level).mean()
    # at most `level`; Clopper-Pearson bound on the measured rate at 1e-6
    upper_rate = stats.binomtest(int(rate * 20000), 20000).proportion_ci(0.999999, "exact").low
    assert upper_rate <= level
