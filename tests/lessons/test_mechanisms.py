"""Unit and statistical tests for dpteach.mechanisms (the noisy clamped sum of notebook 06
included).

Every statistical test runs at ALPHA = 1e-6 with a fixed seed and is paired with one or
more deliberately wrong twins (noise scale x1.1, epsilon/2, the wrong distribution, the
exponential mechanism without its 1/2) that the *same* test must reject, so a test that
cannot fail would itself fail.
"""

import random

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

import dpteach as dp
from dpteach import mechanisms as m
from conftest import ALPHA, chisq_pvalue, ks_pvalue

SEED = 20261122


def fresh(seed=SEED):
    return np.random.default_rng(seed)


def accepts_and_rejects(pvalue_of, good, twins):
    """The test statistic accepts the real samples and rejects every wrong twin."""
    p_good = pvalue_of(good)
    assert p_good >= ALPHA, f"correct implementation rejected: p = {p_good:.3g}"
    assert twins, "a statistical test needs at least one wrong twin"
    for name, twin in twins.items():
        p_twin = pvalue_of(twin)
        assert p_twin < ALPHA, f"wrong twin '{name}' not rejected: p = {p_twin:.3g}"


# ----------------------------------------------------------------- references (tests only)
def laplace_difference_cdf(z, b):
    """CDF of X1 - X2 for independent X1, X2 ~ Lap(b).

    Its density is (1 + |z|/b) e^{-|z|/b} / (4b); integrating, Pr[X1 - X2 > z] =
    e^{-z/b} (2 + z/b) / 4 for z >= 0, and the law is symmetric.
    """
    z = np.asarray(z, float)
    a = np.abs(z) / b
    upper = np.exp(-a) * (2 + a) / 4
    return np.where(z >= 0, 1 - upper, upper)


def noisy_max_win_probabilities(scores, noise):
    """Pr[candidate i has the largest noisy score], by numerical integration:
    int pdf(x - u_i) prod_{j != i} cdf(x - u_j) dx, with noise a frozen scipy law."""
    u = np.asarray(scores, float)
    lo, hi = u.min() - 80 * noise.std(), u.max() + 80 * noise.std()
    out = []
    for i in range(len(u)):
        others = np.delete(u, i)

        def integrand(x, i=i, others=others):
            return noise.pdf(x - u[i]) * np.prod(noise.cdf(x - others))

        val, _ = integrate.quad(integrand, lo, hi, points=sorted(set(u)), limit=400,
                                epsabs=1e-13, epsrel=1e-11)
        out.append(val)
    return np.array(out)


def reference_gaussian_delta(sigma, l2, eps):
    """Balle & Wang 2018 Theorem 8, written directly with scipy.stats.norm.cdf."""
    return (stats.norm.cdf(l2 / (2 * sigma) - eps * sigma / l2)
            - np.exp(eps) * stats.norm.cdf(-l2 / (2 * sigma) - eps * sigma / l2))


def reference_analytic_sigma(l2, eps, delta):
    return optimize.brentq(lambda s: reference_gaussian_delta(s, l2, eps) - delta,
                           1e-4 * l2, 1e4 * l2, xtol=1e-300, rtol=1e-15, maxiter=1000)


def classic_sigma_formula(l2, eps, delta):
    return np.sqrt(2 * np.log(1.25 / delta)) * l2 / eps


# --------------------------------------------------------------------------- Laplace
def test_laplace_scale_formula_and_seed_numbers():
    assert m.laplace_scale(1, 0.5) == 2.0
    assert m.laplace_scale(3, 1.5) == pytest.approx(2.0, rel=1e-15)
    assert m.laplace_scale(0, 1) == 0.0
    # 50 counting queries: one record changes every answer by 1, so l1 = 50, l2 = sqrt(50)
    one_change = np.ones(50)
    l1, l2 = np.abs(one_change).sum(), np.linalg.norm(one_change)
    assert l1 == 50 and round(l2, 2) == 7.07
    assert m.laplace_scale(l1, 1.0) == 50.0
    assert isinstance(m.laplace_scale(1, 2), float)


def test_laplace_mechanism_shapes_follow_numpy_size_convention():
    r = fresh()
    out = m.laplace_mechanism(5, 1, 1, rng=r)
    assert type(out) is float
    assert m.laplace_mechanism(np.float64(5), 1, 1, rng=r).__class__ is float
    assert m.laplace_mechanism([1.0, 2.0, 3.0], 1, 1, rng=r).shape == (3,)
    assert m.laplace_mechanism([1.0, 2.0, 3.0], 1, 1, rng=r, size=5).shape == (5, 3)
    assert m.laplace_mechanism(0.0, 1, 1, rng=r, size=7).shape == (7,)
    assert m.laplace_mechanism(0.0, 1, 1, rng=r, size=(2, 4)).shape == (2, 4)
    assert m.laplace_mechanism(np.zeros((2, 3)), 1, 1, rng=r, size=(4,)).shape == (4, 2, 3)
    assert m.laplace_mechanism([1.0, 2.0], 1, 1, rng=r, size=0).shape == (0, 2)
    # integer input comes back as floats
    assert m.laplace_mechanism(np.arange(3), 1, 1, rng=r).dtype == np.float64


def test_laplace_mechanism_zero_sensitivity_adds_no_noise():
    assert m.laplace_mechanism(4.25, 0, 0.1, rng=fresh()) == 4.25
    np.testing.assert_array_equal(m.laplace_mechanism([1, 2], 0, 1, rng=fresh(), size=3),
                                  np.tile([1.0, 2.0], (3, 1)))


def test_laplace_mechanism_is_reproducible_with_a_seeded_generator():
    a = m.laplace_mechanism([0.0, 1.0], 1, 1, rng=fresh(7), size=4)
    b = m.laplace_mechanism([0.0, 1.0], 1, 1, rng=fresh(7), size=4)
    c = m.laplace_mechanism([0.0, 1.0], 1, 1, rng=7, size=4)  # an int seeds a new Generator
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    # the noise is exactly numpy's Laplace draw with scale b = sensitivity / epsilon
    expected = np.array([0.0, 1.0]) + fresh(7).laplace(0.0, 2.0, size=(4, 2))
    np.testing.assert_allclose(m.laplace_mechanism([0.0, 1.0], 1, 0.5, rng=fresh(7), size=4),
                               expected, rtol=0, atol=0)


def test_laplace_mechanism_scalar_ks_with_wrong_twins():
    n, value, sens, eps = 100_000, 3.0, 1.0, 0.5
    b = sens / eps
    cdf = stats.laplace(loc=value, scale=b).cdf
    accepts_and_rejects(
        lambda s: ks_pvalue(s, cdf),
        m.laplace_mechanism(value, sens, eps, rng=fresh(), size=n),
        {
            "scale x1.1": m.laplace_mechanism(value, 1.1 * sens, eps, rng=fresh(1), size=n),
            "epsilon/2": m.laplace_mechanism(value, sens, eps / 2, rng=fresh(2), size=n),
            "Gaussian with the same sd": value + fresh(3).normal(0, np.sqrt(2) * b, size=n),
        })


def test_laplace_mechanism_vector_ks_and_independent_coordinates():
    n, sens, eps = 40_000, 2.0, 0.8
    b = sens / eps
    value = np.array([0.0, 10.0, -5.0])

    def pvalue(releases):
        # every coordinate is value_i + Lap(b): pool the standardised noise
        return ks_pvalue((releases - value) / b, stats.laplace.cdf)

    good = m.laplace_mechanism(value, sens, eps, rng=fresh(), size=n)
    assert good.shape == (n, 3)
    accepts_and_rejects(pvalue, good, {
        "scale x1.1": m.laplace_mechanism(value, 1.1 * sens, eps, rng=fresh(1), size=n),
        "epsilon/2": m.laplace_mechanism(value, sens, eps / 2, rng=fresh(2), size=n),
        "Gaussian": value + fresh(3).normal(0, np.sqrt(2) * b, size=(n, 3)),
    })

    # independence across coordinates: noise_0 - noise_1 has the difference-of-Laplace law
    def diff_pvalue(releases):
        d = (releases[:, 0] - value[0]) - (releases[:, 1] - value[1])
        return ks_pvalue(d, lambda z: laplace_difference_cdf(z, b))

    shared = fresh(4).laplace(0, b, size=(n, 1))
    accepts_and_rejects(diff_pvalue, good, {
        "one noise draw shared by all coordinates": value + shared,
        "scale x1.1": m.laplace_mechanism(value, 1.1 * sens, eps, rng=fresh(5), size=n),
    })


def test_laplace_standard_deviation_is_sqrt2_b():
    b = m.laplace_scale(1, 0.25)
    assert stats.laplace(scale=b).std() == pytest.approx(np.sqrt(2) * b, rel=1e-12)
    assert m.output_distribution(0, b).std() == pytest.approx(np.sqrt(2) * 4, rel=1e-12)


# -------------------------------------------------------------------------- Gaussian
@pytest.mark.parametrize("eps,delta,l2", [(0.5, 1e-5, 1.0), (0.1, 1e-3, 2.0), (0.99, 1e-8, 7.07)])
def test_gaussian_sigma_classic_formula(eps, delta, l2):
    # DR14 Theorem A.1: sigma = sqrt(2 ln(1.25/delta)) * l2 / eps
    assert m.gaussian_sigma(l2, eps, delta) == pytest.approx(classic_sigma_formula(l2, eps, delta),
                                                             rel=1e-14)


def test_gaussian_sigma_classic_hand_checked_value():
    # eps = 0.5, delta = 1e-5: ln(125000) = 11.7361, sqrt(2 * 11.7361) = 4.84480, / 0.5 = 9.6896
    assert m.gaussian_sigma(1, 0.5, 1e-5) == pytest.approx(9.6896, abs=5e-5)
    # the 50-counting-query example: l2 = sqrt(50) = 7.07
    assert m.gaussian_sigma(np.sqrt(50), 0.5, 1e-5) == pytest.approx(9.6896 * np.sqrt(50), abs=1e-3)


@pytest.mark.parametrize("eps", [1.0, 1.5, 10.0])
def test_gaussian_sigma_classic_refuses_large_epsilon_and_points_to_analytic(eps):
    with pytest.raises(ValueError, match="analytic=True") as info:
        m.gaussian_sigma(1, eps, 1e-5)
    assert "epsilon" in str(info.value)
    # the analytic version works there
    assert m.gaussian_sigma(1, eps, 1e-5, analytic=True) > 0


@pytest.mark.parametrize("eps,delta", [(0.01, 1e-12), (0.1, 1e-5), (0.5, 1e-5), (0.9, 1e-3),
                                       (1.0, 1e-5), (2.0, 1e-8), (5.0, 1e-5), (10.0, 0.1),
                                       (50.0, 1e-6), (1e-4, 1e-5)])
def test_gaussian_sigma_analytic_solves_balle_wang_equation(eps, delta):
    sigma = m.gaussian_sigma(1.0, eps, delta, analytic=True)
    # delta(sigma) hits the target
    assert m.gaussian_delta(sigma, 1.0, eps) == pytest.approx(delta, rel=1e-9)
    # and sigma is the smallest such: 1e-9 less noise already breaks the guarantee
    assert m.gaussian_delta(sigma * (1 - 1e-9), 1.0, eps) > delta
    assert m.gaussian_delta(sigma * (1 + 1e-9), 1.0, eps) < delta


@pytest.mark.parametrize("eps,delta,l2", [(0.5, 1e-5, 1.0), (1.0, 1e-5, 1.0), (2.0, 1e-6, 3.0),
                                          (0.1, 1e-3, 0.5), (8.0, 1e-4, 1.0)])
def test_gaussian_sigma_analytic_matches_independent_computation(eps, delta, l2):
    ref = reference_analytic_sigma(l2, eps, delta)
    assert m.gaussian_sigma(l2, eps, delta, analytic=True) == pytest.approx(ref, rel=1e-9)
    assert m.gaussian_delta(ref, l2, eps) == pytest.approx(reference_gaussian_delta(ref, l2, eps),
                                                           rel=1e-9)


def test_gaussian_sigma_analytic_well_known_value():
    # eps = 1, delta = 1e-5, l2 = 1: sigma = 3.7306 (the figure analytic-Gaussian
    # calibrations quote for this setting; the classic bound does not even apply at eps = 1)
    assert m.gaussian_sigma(1, 1, 1e-5, analytic=True) == pytest.approx(3.7306, abs=1e-4)


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.3, 0.5, 0.8, 0.999])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2, 0.2])
def test_gaussian_analytic_never_exceeds_classic(eps, delta):
    classic = m.gaussian_sigma(1, eps, delta)
    analytic = m.gaussian_sigma(1, eps, delta, analytic=True)
    assert analytic <= classic
    # the classic sigma really is (eps, delta)-DP: its exact delta is within the target
    assert m.gaussian_delta(classic, 1, eps) <= delta


def test_gaussian_sigma_scales_with_sensitivity_and_is_monotone():
    s1 = m.gaussian_sigma(1, 2, 1e-5, analytic=True)
    assert m.gaussian_sigma(3, 2, 1e-5, analytic=True) == pytest.approx(3 * s1, rel=1e-9)
    sig_by_eps = [m.gaussian_sigma(1, e, 1e-5, analytic=True) for e in (0.1, 0.5, 1, 2, 5)]
    assert all(a > b for a, b in zip(sig_by_eps, sig_by_eps[1:]))
    sig_by_delta = [m.gaussian_sigma(1, 1, d, analytic=True) for d in (1e-9, 1e-6, 1e-3, 0.1)]
    assert all(a > b for a, b in zip(sig_by_delta, sig_by_delta[1:]))
    assert m.gaussian_sigma(0, 0.5, 1e-5) == 0.0
    assert m.gaussian_sigma(0, 3, 1e-5, analytic=True) == 0.0


def test_gaussian_delta_properties():
    sigmas = np.geomspace(0.2, 20, 40)
    deltas = np.array([m.gaussian_delta(s, 1, 1) for s in sigmas])
    assert np.all(np.diff(deltas) < 0)            # more noise, smaller delta
    assert m.gaussian_delta(0.01, 1, 1) > 0.999 and m.gaussian_delta(50, 1, 1) < 1e-100
    for s in (0.3, 1.0, 4.0):
        assert m.gaussian_delta(s, 1, 0.7) == pytest.approx(reference_gaussian_delta(s, 1, 0.7),
                                                            rel=1e-9)
    # large epsilon: e^800 overflows a float, the log-space formula does not
    # (a = 0 so the first term is 1/2; the second is e^{800 + ln Phi(-40)} ~ 0.01)
    d = m.gaussian_delta(0.025, 1, 800)
    assert np.isfinite(d) and 0.45 < d < 0.5


def test_gaussian_mechanism_shapes_and_zero_sensitivity():
    r = fresh()
    assert type(m.gaussian_mechanism(1.0, 1, 0.5, 1e-5, rng=r)) is float
    assert m.gaussian_mechanism([1.0, 2.0, 3.0], 1, 0.5, 1e-5, rng=r, size=5).shape == (5, 3)
    assert m.gaussian_mechanism(0.0, 1, 2, 1e-5, analytic=True, rng=r, size=(2, 3)).shape == (2, 3)
    assert m.gaussian_mechanism(2.5, 0, 0.5, 1e-5, rng=r) == 2.5
    with pytest.raises(ValueError, match="analytic=True"):
        m.gaussian_mechanism(0.0, 1, 2.0, 1e-5, rng=r)


def test_gaussian_mechanism_classic_ks_with_wrong_twins():
    n, value, l2, eps, delta = 100_000, -2.0, 1.0, 0.5, 1e-5
    sigma = classic_sigma_formula(l2, eps, delta)
    cdf = stats.norm(loc=value, scale=sigma).cdf
    accepts_and_rejects(
        lambda s: ks_pvalue(s, cdf),
        m.gaussian_mechanism(value, l2, eps, delta, rng=fresh(), size=n),
        {
            "sigma x1.1": m.gaussian_mechanism(value, 1.1 * l2, eps, delta, rng=fresh(1), size=n),
            "epsilon/2": m.gaussian_mechanism(value, l2, eps / 2, delta, rng=fresh(2), size=n),
            "Laplace with the same sd": value + fresh(3).laplace(0, sigma / np.sqrt(2), size=n),
        })


def test_gaussian_mechanism_analytic_ks_with_wrong_twins():
    n, l2, eps, delta = 100_000, 2.0, 2.0, 1e-5
    value = np.array([1.0, 4.0])
    sigma = reference_analytic_sigma(l2, eps, delta)

    def pvalue(releases):
        return ks_pvalue((releases - value) / sigma, stats.norm.cdf)

    good = m.gaussian_mechanism(value, l2, eps, delta, analytic=True, rng=fresh(), size=n // 2)
    assert good.shape == (n // 2, 2)
    accepts_and_rejects(pvalue, good, {
        # the classic formula misapplied at eps >= 1: about 21% more noise
        "classic sigma": value + fresh(1).normal(0, classic_sigma_formula(l2, eps, delta),
                                                 size=(n // 2, 2)),
        "sigma x1.1": value + fresh(2).normal(0, 1.1 * sigma, size=(n // 2, 2)),
        "Laplace with the same sd": value + fresh(3).laplace(0, sigma / np.sqrt(2),
                                                             size=(n // 2, 2)),
    })


# ----------------------------------------------------------------------- Exponential
def test_exponential_probabilities_hand_formula():
    u = np.array([3.0, 1.0, 0.0, 2.5])
    eps, d = 0.7, 1.5
    w = np.exp(eps * u / (2 * d))
    np.testing.assert_allclose(m.exponential_probabilities(u, d, eps), w / w.sum(), rtol=1e-13)
    # two candidates one sensitivity apart: odds e^{eps/2}
    p = m.exponential_probabilities([1.0, 0.0], 1.0, 1.0)
    assert p[0] / p[1] == pytest.approx(np.exp(0.5), rel=1e-13)
    np.testing.assert_allclose(m.exponential_probabilities([5, 5, 5, 5], 1, 1), 0.25, rtol=1e-15)
    assert m.exponential_probabilities([2.0], 1, 1).tolist() == [1.0]


def test_exponential_probabilities_stable_for_extreme_finite_inputs():
    p = m.exponential_probabilities([1e308, -1e308, 0.0], 1.0, 10.0)
    assert np.all(np.isfinite(p)) and p.tolist() == [1.0, 0.0, 0.0]
    p = m.exponential_probabilities([0.0, 1.0], 1e-310, 1.0)       # eps / (2 delta) overflows
    assert p.tolist() == [0.0, 1.0]
    # eps * u = 1e309 overflows a float; the probabilities are still softmax([0, -50])
    p = m.exponential_probabilities([1e307, 9e306], 1e306, 100.0)
    np.testing.assert_allclose(p, special.softmax([0.0, -50.0]), rtol=1e-9)
    assert np.isclose(m.exponential_probabilities(np.arange(10**6), 1, 1).sum(), 1.0)


def test_exponential_mechanism_returns_candidates_with_numpy_shapes():
    r = fresh()
    cands = ["blue", "brown", "green"]
    one = m.exponential_mechanism(cands, [10, 20, 5], 1, 1, rng=r)
    assert one in cands and np.ndim(one) == 0
    many = m.exponential_mechanism(cands, [10, 20, 5], 1, 1, rng=r, size=8)
    assert isinstance(many, np.ndarray) and many.shape == (8,)
    assert set(many) <= set(cands)
    assert m.exponential_mechanism(np.arange(4), [0, 0, 0, 0], 1, 1, rng=r, size=(2, 3)).shape == (2, 3)
    assert m.exponential_mechanism(np.arange(4), [0, 0, 0, 0], 1, 1, rng=r, size=0).shape == (0,)
    with pytest.raises(ValueError, match="candidates"):
        m.exponential_mechanism([1, 2], [1, 2, 3], 1, 1, rng=r)
    with pytest.raises(ValueError, match="candidates"):
        m.exponential_mechanism([[1, 2]], [1, 2], 1, 1, rng=r)


def test_exponential_mechanism_never_draws_zero_probability_candidates():
    # with eps/2 * (score gap) ~ 1e5 the other candidates have probability exactly 0
    draws = m.exponential_mechanism(np.arange(5), [0, 0, 2e5, 0, 0], 1, 1, rng=fresh(), size=10_000)
    assert np.all(draws == 2)
    # first and last candidates can be drawn (no off-by-one at the ends of the CDF)
    draws = m.exponential_mechanism(np.arange(3), [0.0, -1e6, 0.0], 1, 1, rng=fresh(), size=10_000)
    assert set(draws.tolist()) == {0, 2}
    # a zero-weight candidate at either end is never drawn
    draws = m.exponential_mechanism(np.arange(4), [-1e6, 0.0, 0.0, -1e6], 1, 1, rng=fresh(), size=10_000)
    assert set(draws.tolist()) == {1, 2}


def test_exponential_functions_leave_the_callers_scores_alone():
    scores = np.array([3.0, 1.0, 2.0])
    m.exponential_probabilities(scores, 1, 1)
    m.exponential_mechanism(np.arange(3), scores, 1, 1, rng=fresh(), size=5)
    m.report_noisy_max(scores, 1, 1, rng=fresh())
    assert scores.tolist() == [3.0, 1.0, 2.0]


def test_exponential_mechanism_over_a_million_candidates():
    n = 10**6
    scores = np.zeros(n)
    scores[123_456] = 60.0        # e^{30} / (10^6 + e^{30}) ~ 1 - 1e-7
    draws = m.exponential_mechanism(np.arange(n), scores, 1.0, 1.0, rng=fresh(), size=1000)
    assert np.all(draws == 123_456)


def test_exponential_mechanism_chisquare_against_probabilities_with_wrong_twins():
    n, eps, d = 60_000, 1.0, 1.0
    cands = np.array(["A", "B", "C", "D", "E"])
    scores = np.array([4.0, 3.0, 1.0, 0.0, 3.5])
    probs = m.exponential_probabilities(scores, d, eps)

    def pvalue(draws):
        counts = np.array([(draws == c).sum() for c in cands])
        return chisq_pvalue(counts, probs)

    def without_the_half(rng):      # seed 000's version: exp(eps u / Delta)
        p = special.softmax(eps * scores / d)
        return cands[rng.choice(len(cands), size=n, p=p)]

    accepts_and_rejects(pvalue, m.exponential_mechanism(cands, scores, d, eps, rng=fresh(), size=n), {
        "without the 1/2": without_the_half(fresh(1)),
        "epsilon/2": m.exponential_mechanism(cands, scores, d, eps / 2, rng=fresh(2), size=n),
        "uniform": cands[fresh(3).integers(0, len(cands), size=n)],
    })


def test_exponential_mechanism_seed_nationality_example():
    # seed 004: four nationalities, counts as utility, Delta = 1
    scores = np.array([15.0, 12.0, 8.0, 3.0])
    for eps in (0.1, 1.0, 5.0):
        p = m.exponential_probabilities(scores, 1, eps)
        assert np.argmax(p) == 0
        assert p[0] / p[1] == pytest.approx(np.exp(eps * 3 / 2), rel=1e-12)


# ------------------------------------------------------------------ Report noisy max
def test_report_noisy_max_returns_an_index():
    r = fresh()
    out = m.report_noisy_max([1.0, 5.0, 2.0], 1, 1, rng=r)
    assert type(out) is int and 0 <= out < 3
    assert m.report_noisy_max([0.0, 1e6, 0.0], 1, 1, rng=r) == 1
    assert m.report_noisy_max([7.0], 1, 1, rng=r) == 0
    assert m.report_noisy_max(np.array([3, 1]), 1, 1, monotonic=np.bool_(True), rng=r) in (0, 1)


def test_two_candidate_closed_form_matches_integration():
    b, c = 2.0, 1.5
    closed = 1 - np.exp(-c / b) * (2 + c / b) / 4
    numeric = noisy_max_win_probabilities([c, 0.0], stats.laplace(scale=b))
    assert numeric[0] == pytest.approx(closed, rel=1e-9)
    assert laplace_difference_cdf(0.0, 1.0) == 0.5


@pytest.mark.parametrize("monotonic", [False, True])
def test_report_noisy_max_two_candidates_closed_form(monotonic):
    n, eps, d = 8_000, 1.0, 1.0
    scores = [1.5, 0.0]
    b = (1 if monotonic else 2) * d / eps
    p_first = laplace_difference_cdf(scores[0] - scores[1], b)   # Pr[X2 - X1 < u1 - u2]
    probs = np.array([p_first, 1 - p_first])

    def pvalue(winners):
        return chisq_pvalue(np.bincount(winners, minlength=2), probs)

    r = fresh()
    good = np.array([m.report_noisy_max(scores, d, eps, monotonic=monotonic, rng=r)
                     for _ in range(n)])
    twin_rng = fresh(1)
    wrong_flag = np.array([m.report_noisy_max(scores, d, eps, monotonic=not monotonic, rng=twin_rng)
                           for _ in range(n)])
    # eps/2 doubles the noise (the same as calibrating to 2 * Delta)
    half_eps = np.argmax(np.array(scores) + fresh(2).laplace(0, 2 * b, size=(n, 2)), axis=1)
    accepts_and_rejects(pvalue, good, {"other monotonic flag": wrong_flag, "epsilon/2": half_eps})


def test_report_noisy_max_four_candidates_against_exact_integration():
    n, eps, d = 20_000, 1.0, 1.0
    scores = np.array([0.0, 1.0, 2.0, 3.0])
    b = 2 * d / eps
    probs = noisy_max_win_probabilities(scores, stats.laplace(scale=b))
    assert probs.sum() == pytest.approx(1.0, abs=1e-9)

    def pvalue(winners):
        return chisq_pvalue(np.bincount(winners, minlength=4), probs)

    r = fresh()
    good = np.array([m.report_noisy_max(scores, d, eps, rng=r) for _ in range(n)])
    gauss = np.argmax(scores + fresh(1).normal(0, np.sqrt(2) * b, size=(n, 4)), axis=1)
    monotone_scale = np.argmax(scores + fresh(2).laplace(0, b / 2, size=(n, 4)), axis=1)
    accepts_and_rejects(pvalue, good, {"Gaussian with the same sd": gauss,
                                       "scale Delta/eps on non-monotone scores": monotone_scale})


# ---------------------------------------------------------------- Randomized response
def test_randomized_response_keep_probability():
    # seed 004's coin-flip survey keeps the truth with probability 1/2 + 1/4 = 3/4: eps = ln 3
    assert m.randomized_response_keep_probability(np.log(3)) == pytest.approx(0.75, rel=1e-15)
    for eps in (0.01, 0.5, 1, 5, 30):
        p = m.randomized_response_keep_probability(eps)
        assert p == pytest.approx(np.exp(eps) / (1 + np.exp(eps)), rel=1e-14)
        if eps <= 5:                 # 1 - p loses digits for large eps
            assert p / (1 - p) == pytest.approx(np.exp(eps), rel=1e-9)   # the e^eps ratio
    assert m.randomized_response_keep_probability(800) == 1.0       # no overflow


def test_randomized_response_shapes_and_types():
    r = fresh()
    out = m.randomized_response([0, 1, 1, 0], 1.0, rng=r)
    assert out.shape == (4,) and set(np.unique(out)) <= {0, 1}
    assert m.randomized_response(np.zeros((3, 2)), 1.0, rng=r).shape == (3, 2)
    assert type(m.randomized_response(1, 1.0, rng=r)) is int
    assert m.randomized_response(np.array([True, False]), 1.0, rng=r).shape == (2,)
    # very large epsilon: essentially always the truth
    bits = fresh(5).integers(0, 2, 1000)
    np.testing.assert_array_equal(m.randomized_response(bits, 700, rng=r), bits)


def test_randomized_response_flip_rate_chisquare_with_wrong_twin():
    n, eps = 100_000, np.log(3)
    bits = fresh(9).integers(0, 2, size=n)
    keep = 0.75

    def pvalue(reports):
        kept = int((reports == bits).sum())
        return chisq_pvalue([kept, n - kept], [keep, 1 - keep])

    accepts_and_rejects(pvalue, m.randomized_response(bits, eps, rng=fresh()), {
        "epsilon/2": m.randomized_response(bits, eps / 2, rng=fresh(1)),
        "keep probability e^-eps": np.where(fresh(2).random(n) < np.exp(-eps), bits, 1 - bits),
    })


def test_randomized_response_estimate_formula():
    eps = np.log(3)                  # p = 3/4, so pi_hat = (mean - 1/4) / (1/2)
    assert m.randomized_response_estimate([1, 0, 0, 0], eps) == pytest.approx(0.0, abs=1e-15)
    assert m.randomized_response_estimate([1, 1, 0, 0], eps) == pytest.approx(0.5, abs=1e-15)
    assert m.randomized_response_estimate([1, 1, 1, 1], eps) == pytest.approx(1.5, abs=1e-15)
    assert m.randomized_response_estimate([0, 0, 0, 0], eps) == pytest.approx(-0.5, abs=1e-15)
    assert isinstance(m.randomized_response_estimate([1, 0], 1.0), float)


def test_randomized_response_estimate_is_unbiased_statistically():
    n, eps, pi = 200_000, 0.5, 0.3
    truth = (fresh(3).random(n) < pi).astype(int)
    p = m.randomized_response_keep_probability(eps)
    q = p * truth.mean() + (1 - p) * (1 - truth.mean())
    se = np.sqrt(q * (1 - q) / n) / (2 * p - 1)

    def pvalue(estimate):
        return 2 * stats.norm.sf(abs(estimate - truth.mean()) / se)

    reports = m.randomized_response(truth, eps, rng=fresh())
    accepts_and_rejects(pvalue, m.randomized_response_estimate(reports, eps), {
        "raw mean of the reports": reports.mean(),
        "estimate with epsilon/2": m.randomized_response_estimate(reports, eps / 2),
    })


# ------------------------------------------------------------ Densities and privacy loss
def test_output_distribution_is_the_scipy_law():
    x = np.linspace(-10, 10, 41)
    lap = m.output_distribution(2.0, 1.5)
    np.testing.assert_allclose(lap.pdf(x), stats.laplace(loc=2, scale=1.5).pdf(x), rtol=1e-14)
    np.testing.assert_allclose(lap.pdf(x), np.exp(-np.abs(x - 2) / 1.5) / 3, rtol=1e-12)
    gau = m.output_distribution(-1.0, 2.0, noise="gaussian")
    np.testing.assert_allclose(gau.cdf(x), stats.norm(loc=-1, scale=2).cdf(x), rtol=1e-14)
    with pytest.raises(ValueError, match="noise"):
        m.output_distribution(0, 1, noise="cauchy")


def test_privacy_loss_laplace_formula_and_plateaus():
    b, v1, v2 = 2.0, 0.0, 1.0
    r = np.linspace(-20, 20, 401)
    loss = m.privacy_loss(r, v1, v2, b)
    np.testing.assert_allclose(loss, (np.abs(r - v2) - np.abs(r - v1)) / b, atol=1e-12)
    eps = abs(v1 - v2) / b
    assert np.all(np.abs(loss) <= eps + 1e-12)
    np.testing.assert_allclose(loss[r <= v1], eps, atol=1e-12)      # plateau at +eps
    np.testing.assert_allclose(loss[r >= v2], -eps, atol=1e-12)     # and at -eps
    assert type(m.privacy_loss(0.3, v1, v2, b)) is float


def test_privacy_loss_is_finite_far_in_the_tails():
    # there both densities underflow to 0 (log-density -inf); the loss is still +-eps
    b = 1e-3
    loss = m.privacy_loss([-1e4, 1.0, 1e4], 0.0, 0.5, b)
    np.testing.assert_allclose(loss, [500.0, -500.0, -500.0], rtol=1e-12)
    g = m.privacy_loss([-1e4, 1e4], 0.0, 1.0, 1e-3, noise="gaussian")
    assert np.all(np.isfinite(g)) and g[0] > 0 > g[1]
    assert m.privacy_loss(0.5, 0.0, 1.0, 1e-3, noise="gaussian") == 0.0


def test_privacy_loss_gaussian_is_linear_and_unbounded():
    s, v1, v2 = 1.0, 0.0, 1.0
    r = np.array([-100.0, 0.0, 0.5, 3.0, 100.0])
    loss = m.privacy_loss(r, v1, v2, s, noise="gaussian")
    np.testing.assert_allclose(loss, ((r - v2) ** 2 - (r - v1) ** 2) / (2 * s**2), atol=1e-9)
    assert loss[0] > 99 and loss[-1] < -99 and loss[2] == 0.0


# ------------------------------------------------------------------ randomness hygiene
RANDOM_CALLS = {
    "laplace_mechanism": lambda rng: m.laplace_mechanism([1.0, 2.0], 1, 1, rng=rng, size=3),
    "gaussian_mechanism": lambda rng: m.gaussian_mechanism([1.0, 2.0], 1, 0.5, 1e-5, rng=rng, size=3),
    "gaussian_mechanism analytic": lambda rng: m.gaussian_mechanism(1.0, 1, 2, 1e-5, analytic=True,
                                                                    rng=rng, size=3),
    "exponential_mechanism": lambda rng: m.exponential_mechanism(np.arange(50), np.zeros(50), 1, 1,
                                                                 rng=rng, size=3),
    "report_noisy_max": lambda rng: m.report_noisy_max(np.zeros(1000), 1, 1, rng=rng),
    "randomized_response": lambda rng: m.randomized_response(np.zeros(64), 0.1, rng=rng),
}


@pytest.mark.parametrize("name", sorted(RANDOM_CALLS))
def test_random_functions_never_touch_global_state(name):
    call = RANDOM_CALLS[name]
    np.random.seed(1234)
    random.seed(1234)
    np_state, py_state = np.random.get_state(), random.getstate()
    call(None)
    call(fresh())
    after = np.random.get_state()
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1]) and after[2:] == np_state[2:]
    assert random.getstate() == py_state


@pytest.mark.parametrize("name", sorted(RANDOM_CALLS))
def test_random_functions_use_fresh_entropy_and_respect_seeds(name):
    call = RANDOM_CALLS[name]
    seeded = [np.asarray(call(fresh(11))) for _ in range(2)]
    np.testing.assert_array_equal(seeded[0], seeded[1])
    # rng=None draws fresh entropy: five calls are not all identical
    unseeded = [np.asarray(call(None)) for _ in range(5)]
    assert any(not np.array_equal(unseeded[0], u) for u in unseeded[1:])


def test_random_functions_reject_global_random_state_objects():
    with pytest.raises(TypeError, match="rng"):
        m.laplace_mechanism(0.0, 1, 1, rng=np.random.RandomState(0))
    with pytest.raises(TypeError, match="rng"):
        m.randomized_response([0, 1], 1, rng=np.random)


def test_public_names_are_exported():
    for name in set(m.__all__) & set(dp.CONTRACT):
        assert getattr(dp, name) is getattr(m, name)


def test_the_helpers_analytic_sigma_is_gaussian_sigmas():
    """noise_std, count_release_errors and gaussian_group_delta take the analytic sigma
    from the remembered bisection (_gaussian.unit_sigma): gaussian_sigma's brentq answer
    to 1e-12 from epsilon 1e-6 to 1e15, refused by name beyond 1e100; the classic sigma
    stays the classic formula."""
    from dpteach import comparison, properties

    for delta in (1e-300, 1e-12, 1e-5, 0.5):
        for eps in np.geomspace(1e-6, 1e15, 22):
            want = dp.gaussian_sigma(2.0, eps, delta, analytic=True)
            got = comparison.noise_std("Gaussian", epsilon=eps, l2_sensitivity=2.0, delta=delta)
            assert got == pytest.approx(want, rel=1e-12, abs=0), (eps, delta)
    with pytest.raises(ValueError, match="epsilon"):
        comparison.noise_std("Gaussian", epsilon=1e101, l2_sensitivity=1.0, delta=1e-5)
    assert comparison.noise_std("Gaussian", epsilon=0.5, l2_sensitivity=1.0, delta=1e-5,
                                analytic=False) == dp.gaussian_sigma(1.0, 0.5, 1e-5)
    errors = comparison.count_release_errors(2.0, delta=1e-6, count=5, n_max=10)
    assert errors["Gaussian"] == pytest.approx(
        dp.gaussian_sigma(1.0, 2.0, 1e-6, analytic=True) * np.sqrt(2 / np.pi), rel=1e-12)
    sigma = dp.gaussian_sigma(1.0, 0.8, 1e-6, analytic=True)
    assert properties.gaussian_group_delta(0.8, 1e-6, 3) == pytest.approx(
        dp.mechanisms.gaussian_delta(sigma, 3.0, 2.4), rel=1e-9)


def test_the_panels_bisection_gives_the_analytic_sigma_of_brentq():
    """_gaussian.analytic_sigma (numpy bisection, all epsilons at once, for the panels'
    first drawing without scipy.optimize) gives dp.gaussian_sigma(..., analytic=True)'s
    brentq answer to 1e-12, and its delta meets the target; the classic sigma, a wrong
    twin, is far off."""
    from dpteach._support.gaussian import analytic_sigma, gaussian_delta_exact

    eps = np.geomspace(0.005, 60.0, 41)
    for delta in (1e-12, 1e-5, 0.1, 0.9):
        ours = analytic_sigma(eps, delta)
        want = np.array([dp.gaussian_sigma(1.0, e, delta, analytic=True) for e in eps])
        np.testing.assert_allclose(ours, want, rtol=1e-12)
        assert np.all(gaussian_delta_exact(ours, 1.0, eps) <= delta * (1 + 1e-9))
        assert isinstance(analytic_sigma(0.5, delta), float)
    small = eps < 1
    classic = np.sqrt(2 * np.log(1.25 / 1e-5)) / eps[small]
    assert not np.allclose(analytic_sigma(eps[small], 1e-5), classic, rtol=1e-3)


# ------------------------------------------------------------------
# The noisy clamped sum of notebook 06 (dp.mechanisms.clamped_sum): the clamped sum plus Laplace
# noise of scale (upper - lower)/epsilon, a KS test at alpha = 1e-6 that rejects a twin with
# half the noise, reproducible scalars, and its parameter checks.


VALUES = np.array([-7.0, 0.5, 3.0, 12.0, 40.0, 2.5])          # two values outside [-5, 10]


def _ks_pvalue(releases, centre, scale):
    return stats.kstest(releases - centre, stats.laplace(scale=scale).cdf).pvalue


@pytest.mark.parametrize("lower, upper, epsilon", [(-5.0, 10.0, 0.5), (0.0, 10.0, 2.0),
                                                   (-20.0, 3.0, 1.0)])
def test_clamped_sum_is_the_clamped_sum_plus_laplace_of_the_right_scale(lower, upper, epsilon):
    rng = np.random.default_rng(61)
    out = dp.mechanisms.clamped_sum(VALUES, lower, upper, epsilon, rng=rng, size=20_000)
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
    a = dp.mechanisms.clamped_sum(VALUES, 0, 10, 1.0, rng=np.random.default_rng(5))
    b = dp.mechanisms.clamped_sum(VALUES, 0, 10, 1.0, rng=np.random.default_rng(5))
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
        dp.mechanisms.clamped_sum(VALUES, **kwargs)


def test_clamped_sum_rejects_nan_values():
    with pytest.raises(ValueError, match="values"):
        dp.mechanisms.clamped_sum([1.0, np.nan], 0, 1, 1.0)
    with pytest.raises(TypeError, match="values"):
        dp.mechanisms.clamped_sum([True, False], 0, 1, 1.0)
