"""Property tests (hypothesis) for the package core: the privacy guarantees themselves,
checked on many generated inputs rather than on a few hand-picked ones.

Examples are derandomized, so the suite is reproducible. When changing the core, explore
further with DPTEACH_HYPOTHESIS_EXAMPLES=5000 (more examples) and
DPTEACH_HYPOTHESIS_EXPLORE=1 (fresh random examples on every run).
"""

import os
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from dpteach import accounting, bounds, mechanisms

EXAMPLES = int(os.environ.get("DPTEACH_HYPOTHESIS_EXAMPLES", "100"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    derandomize=not os.environ.get("DPTEACH_HYPOTHESIS_EXPLORE"),
                    suppress_health_check=[HealthCheck.too_slow])

# reals that are never NaN/inf; sensible magnitudes for a teaching kit
def reals(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


positive_eps = st.floats(1e-3, 20, allow_nan=False, allow_infinity=False)
sensitivities = st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False)


# ------------------------------------------------------------------ Laplace privacy loss
@SETTINGS
@given(eps=positive_eps, sens=sensitivities, f1=reals(-1e4, 1e4), frac=reals(-1, 1),
       r=st.lists(reals(-1e5, 1e5), min_size=1, max_size=30))
def test_laplace_privacy_loss_within_epsilon_for_every_output(eps, sens, f1, frac, r):
    """|f(D1) - f(D2)| <= Delta  =>  |ln p(r|D1)/p(r|D2)| <= eps for every output r
    (seed 000 eq. 3; DR14 Theorem 3.6)."""
    f2 = f1 + frac * sens
    assume(abs(f2 - f1) <= sens)
    b = mechanisms.laplace_scale(sens, eps)
    r = np.array(r + [f1, f2, (f1 + f2) / 2])
    loss = np.atleast_1d(mechanisms.privacy_loss(r, f1, f2, b))
    # floating-point slack: the loss is a difference of terms of size |r - f| / b
    slack = 1e-12 * (1 + np.abs(r - f1) / b + np.abs(r - f2) / b)
    assert np.all(np.abs(loss) <= eps + slack)
    # and the bound is attained (outside the interval between f1 and f2) at |f1-f2|/b
    outside = np.atleast_1d(mechanisms.privacy_loss(min(f1, f2) - 1.0, f1, f2, b))
    assert abs(outside[0]) == pytest.approx(abs(f1 - f2) / b, rel=1e-9, abs=1e-9 * (1 + 1 / b))


@SETTINGS
@given(eps=st.floats(0.01, 5), sens=st.floats(0.01, 10), factor=st.floats(1.05, 5))
def test_laplace_privacy_loss_exceeds_epsilon_when_sensitivity_is_wrong(eps, sens, factor):
    """The twin: noise calibrated to a too-small Delta breaks the bound for some output."""
    b = mechanisms.laplace_scale(sens, eps)
    f1, f2 = 0.0, factor * sens
    loss = mechanisms.privacy_loss(-1.0, f1, f2, b)
    assert loss > eps


@SETTINGS
@given(eps=st.floats(0.01, 5), delta=st.floats(1e-12, 0.5), sens=st.floats(0.01, 10))
def test_gaussian_privacy_loss_is_unbounded(eps, delta, sens):
    sigma = mechanisms.gaussian_sigma(sens, eps, delta, analytic=True)
    far = sens + 2 * (eps + 50) * sigma**2 / sens      # loss there is > eps + 50
    assert mechanisms.privacy_loss(-far, 0.0, sens, sigma, noise="gaussian") > eps


# ---------------------------------------------------------- exponential mechanism laws
score_lists = st.lists(reals(-1e3, 1e3), min_size=1, max_size=40)


@SETTINGS
@given(scores=score_lists, sens=st.floats(0.01, 100), eps=positive_eps)
def test_exponential_probabilities_are_a_distribution(scores, sens, eps):
    p = mechanisms.exponential_probabilities(scores, sens, eps)
    assert p.shape == (len(scores),)
    assert np.all(p >= 0) and np.all(np.isfinite(p))
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    # a better score never gets a smaller probability
    order = np.argsort(scores, kind="stable")
    assert np.all(np.diff(p[order]) >= -1e-15)


@SETTINGS
@given(scores=score_lists, sens=st.floats(0.01, 100), eps=positive_eps, c=reals(-1e4, 1e4))
def test_exponential_probabilities_ignore_a_constant_shift(scores, sens, eps, c):
    u = np.array(scores)
    p = mechanisms.exponential_probabilities(u, sens, eps)
    q = mechanisms.exponential_probabilities(u + c, sens, eps)
    # shifting changes the rounding of u - max(u) by ulp(c); allow for it
    np.testing.assert_allclose(q, p, rtol=1e-9 * (1 + eps * abs(c) / sens), atol=1e-300)


@SETTINGS
@given(data=st.data(), scores=score_lists, sens=st.floats(0.01, 100), eps=positive_eps)
def test_exponential_probabilities_ratio_on_neighbours_at_most_e_eps(data, scores, sens, eps):
    """Every score moving by at most Delta changes each probability by at most e^eps
    (DR14 Theorem 3.10): the factor e^{eps/2} from the numerator, e^{eps/2} from the sum."""
    u = np.array(scores)
    moves = data.draw(st.lists(reals(-1, 1), min_size=len(u), max_size=len(u)))
    u2 = u + np.array(moves) * sens
    p = mechanisms.exponential_probabilities(u, sens, eps)
    q = mechanisms.exponential_probabilities(u2, sens, eps)
    bound = np.exp(eps) * (1 + 1e-9)
    assert np.all(p <= bound * q + 1e-290)
    assert np.all(q <= bound * p + 1e-290)


@SETTINGS
@given(n=st.integers(200, 2000), sens=st.floats(0.1, 10), eps=st.floats(0.05, 5))
def test_exponential_without_the_half_breaks_the_ratio(n, sens, eps):
    """The twin (seed 000's exp(eps u / Delta)): on the pair below, candidate 0's odds grow
    by n e^eps / (e^eps + (n - 1) e^-eps), which passes e^eps once n > e^eps + 1 and tends
    to e^{2 eps}."""
    u = np.zeros(n)
    u2 = u.copy()
    u2[0] += sens
    u2[1:] -= sens
    p = mechanisms.exponential_probabilities(u, sens, 2 * eps)     # exp(eps u / Delta)
    q = mechanisms.exponential_probabilities(u2, sens, 2 * eps)
    assert q[0] / p[0] > np.exp(eps)
    # while the real mechanism stays within e^eps on the same pair
    p = mechanisms.exponential_probabilities(u, sens, eps)
    q = mechanisms.exponential_probabilities(u2, sens, eps)
    assert q[0] / p[0] <= np.exp(eps) * (1 + 1e-12)


@SETTINGS
@given(scores=st.lists(st.integers(-50, 50), min_size=1, max_size=60),
       sens=st.floats(0.1, 5), eps=st.floats(0.05, 5), t=st.floats(0, 8))
def test_exponential_utility_theorem_holds(scores, sens, eps, t):
    u = np.array(scores, float)
    opt = u.max()
    x = bounds.exponential_utility_threshold(opt, sens, eps, len(u), t,
                                             n_optimal=int((u == opt).sum()))
    p = mechanisms.exponential_probabilities(u, sens, eps)
    assert p[u <= x].sum() <= np.exp(-t) * (1 + 1e-12)


# ----------------------------------------------------------------------- accountant
def decimal_floats(lo, hi, places):
    return st.integers(int(lo * 10**places), int(hi * 10**places)).map(
        lambda i: float(Fraction(i, 10**places)))


spends = st.lists(st.tuples(decimal_floats(0, 0.5, 3), decimal_floats(0, 1e-5, 8)),
                  min_size=1, max_size=40)


@SETTINGS
@given(budget_eps=decimal_floats(0.001, 3, 3), budget_delta=decimal_floats(0, 1e-4, 8),
       seq=spends)
def test_accountant_never_exceeds_its_budget(budget_eps, budget_delta, seq):
    acc = accounting.PrivacyAccountant(budget_eps, budget_delta)
    B = (Fraction(repr(budget_eps)), Fraction(repr(budget_delta)))
    spent = [Fraction(0), Fraction(0)]
    accepted = []
    for i, (e, d) in enumerate(seq):
        E, D = Fraction(repr(e)), Fraction(repr(d))
        fits = spent[0] + E <= B[0] and spent[1] + D <= B[1]
        assert acc.can_spend(e, d) == fits
        before = (acc.spent, acc.remaining, acc.history)
        if fits:
            acc.spend(e, d, label=i)
            spent = [spent[0] + E, spent[1] + D]
            accepted.append((i, e, d))
        else:
            with pytest.raises(accounting.BudgetExceededError):
                acc.spend(e, d, label=i)
            assert (acc.spent, acc.remaining, acc.history) == before
        assert spent[0] <= B[0] and spent[1] <= B[1]
        assert acc.spent == (float(spent[0]), float(spent[1]))
        assert acc.remaining == (float(B[0] - spent[0]), float(B[1] - spent[1]))
        assert acc.remaining[0] >= 0 and acc.remaining[1] >= 0
    assert acc.history == accepted


@SETTINGS
@given(eps=st.lists(decimal_floats(0.001, 2, 4), min_size=1, max_size=50))
def test_basic_composition_is_the_exact_sum(eps):
    assert accounting.basic_composition(eps)[0] == float(sum(Fraction(repr(e)) for e in eps))


@SETTINGS
@given(eps=st.floats(1e-4, 2), k=st.integers(1, 10_000), slack=st.floats(1e-12, 0.5))
def test_advanced_composition_delta_and_monotonicity(eps, k, slack):
    e1, d1 = accounting.advanced_composition(eps, 0.0, k, slack)
    e2, _ = accounting.advanced_composition(eps, 0.0, k + 1, slack)
    assert d1 == slack and e2 > e1 > 0


# ------------------------------------------------------------------ randomized response
def reported_ones_pmf(n, k, p):
    """Distribution of the number of reported ones: Bin(k, p) + Bin(n - k, 1 - p)."""
    return np.convolve(stats.binom.pmf(np.arange(k + 1), k, p),
                       stats.binom.pmf(np.arange(n - k + 1), n - k, 1 - p))


@SETTINGS
@given(n=st.integers(1, 40), data=st.data(), eps=st.floats(0.01, 8))
def test_randomized_response_estimate_is_exactly_unbiased(n, data, eps):
    k = data.draw(st.integers(0, n))
    p = mechanisms.randomized_response_keep_probability(eps)
    pmf = reported_ones_pmf(n, k, p)
    estimates = np.array([mechanisms.randomized_response_estimate(np.r_[np.ones(j), np.zeros(n - j)],
                                                                  eps) for j in range(n + 1)])
    expectation = float(pmf @ estimates)
    tol = 1e-9 / (2 * p - 1)      # the estimator divides by 2p - 1
    assert expectation == pytest.approx(k / n, abs=tol)
    # the twin: the raw share of reported ones is off by (1 - p)(1 - 2 pi), so it is
    # biased whenever the truth is not one half
    raw = float(pmf @ (np.arange(n + 1) / n))
    assert raw - k / n == pytest.approx((1 - p) * (1 - 2 * k / n), abs=1e-12)
    if 2 * k != n:
        assert raw != pytest.approx(k / n, abs=1e-3 * (1 - p) / n)


@SETTINGS
@given(eps=st.floats(1e-3, 10))
def test_randomized_response_likelihood_ratio_is_e_eps(eps):
    p = mechanisms.randomized_response_keep_probability(eps)
    # Pr[report 1 | bit 1] / Pr[report 1 | bit 0] = p / (1 - p) = e^eps, computed stably
    assert np.log(p) - np.log1p(-p) == pytest.approx(eps, rel=1e-6, abs=1e-9)


# ------------------------------------------------------------------ Gaussian calibration
@SETTINGS
@given(eps=st.floats(1e-3, 50), delta=st.floats(1e-15, 0.9), sens=st.floats(1e-2, 1e2))
def test_analytic_gaussian_meets_delta_and_is_minimal(eps, delta, sens):
    sigma = mechanisms.gaussian_sigma(sens, eps, delta, analytic=True)
    assert mechanisms.gaussian_delta(sigma, sens, eps) == pytest.approx(delta, rel=1e-9)
    assert mechanisms.gaussian_delta(sigma * (1 - 1e-9), sens, eps) > delta
    if eps < 1:
        assert sigma <= mechanisms.gaussian_sigma(sens, eps, delta)


# ----------------------------------------------------------------------- Laplace tails
@SETTINGS
@given(b=st.floats(1e-3, 1e3), beta=st.floats(1e-12, 1 - 1e-9, exclude_max=True))
def test_laplace_accuracy_and_tail_are_inverse(b, beta):
    t = bounds.laplace_accuracy(b, beta)
    assert bounds.laplace_tail(b, t) == pytest.approx(beta, rel=1e-9)
