"""Notebook 09's examples of the exponential mechanism, and notebook 08's Gaussian numbers.

Seed 004's apple pricing, its corrected utility numbers, the 1/2 that seed 000 leaves out,
randomized response and Laplace written as exponential mechanisms, the utility theorem
checked by sampling, and the compute functions behind the panels of notebooks 08 and 09.
Statistical checks use ALPHA = 1e-6 and each rejects a deliberately wrong twin.
"""

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import datasets
from dpteach import exponential as ex

from conftest import ALPHA, chisq_pvalue

VALUES = datasets.apple_buyers()["Valuation ($)"].to_numpy()


# ------------------------------------------------------------------------------- apples
def test_apple_buyers_reproduce_the_slide():
    rev = ex.posted_price_revenue(VALUES, [1.00, 4.01, 4.02, 1.01])
    assert rev.tolist() == [4.00, 4.01, 0.0, 1.01]
    prices = ex.price_grid()
    revenue = ex.posted_price_revenue(VALUES, prices)
    assert prices[np.argmax(revenue)] == 4.01 and revenue.max() == 4.01
    # the slide's "2nd best price $1.00": $4.00 of revenue, reached at $1.00 (and at $4.00)
    second = np.sort(np.unique(revenue))[-2]
    assert second == 4.00 and set(prices[revenue == second]) == {1.00, 4.00}
    # buyers willing to pay each price = revenue / price: 4, 1, 1, 0 -> three at $1.00, one at $4.01
    counts = np.array([4.00, 4.01, 0.0, 1.01]) / np.array([1.00, 4.01, 4.02, 1.01])
    assert np.allclose(counts, [4, 1, 0, 1])


def _revenue_of(released):
    return ex.posted_price_revenue(VALUES, np.clip(np.round(released, 2), 0, None))


def test_perturbed_price_falls_off_the_cliff():
    """Best price + Lap(5/eps): half the noise is positive and every price above $4.01
    sells nothing, so revenue is 0 at least half the time, whatever epsilon is."""
    eps, n = 1.0, 20_000
    out = ex.apple_outputs(eps)
    sells = out["revenue"] > 0
    p_zero = 1 - out["perturbed"][sells].sum()
    assert p_zero > 0.5
    rng = np.random.default_rng(41)
    released = dp.laplace_mechanism(4.01, 5.0, eps, rng=rng, size=n)
    zeros = int((_revenue_of(released) == 0).sum())
    assert stats.binomtest(zeros, n, p_zero).pvalue > ALPHA
    # wrong twin: the exponential mechanism's chance of a zero-revenue price is far smaller
    p_zero_exp = 1 - out["exponential"][sells].sum()
    assert p_zero_exp < 0.2
    assert stats.binomtest(zeros, n, p_zero_exp).pvalue < ALPHA


def test_exponential_prices_follow_revenue_scores():
    eps, n = 1.0, 40_000
    out = ex.apple_outputs(eps)
    rng = np.random.default_rng(42)
    draws = dp.exponential_mechanism(out["prices"], out["revenue"], 5.0, eps, rng=rng, size=n)
    bins = np.linspace(0, 5.0, 11)           # 10 bins of 50 cents
    idx = np.digitize(out["prices"], bins[1:-1])
    probs = np.bincount(idx, weights=out["exponential"], minlength=10)
    counts = np.bincount(np.digitize(draws, bins[1:-1]), minlength=10)
    assert chisq_pvalue(counts, probs) > ALPHA
    twin = np.bincount(idx, weights=dp.exponential_probabilities(out["revenue"], 5.0, 2 * eps),
                       minlength=10)           # seed 000's form, without the 1/2
    assert chisq_pvalue(counts, twin) < ALPHA


def test_exponential_beats_perturbation_and_obeys_the_theorem_on_prices():
    for copies in (1, 10, 100):
        out = ex.apple_outputs(1.0, copies=copies)
        assert out["expected_exponential"] > 2 * out["expected_perturbed"]
        # the utility theorem, checked exactly from the probabilities
        for t in (0.5, 1, 2, 4):
            thr = dp.exponential_utility_threshold(out["opt"], 5.0, 1.0, out["prices"].size, t)
            assert out["exponential"][out["revenue"] <= thr].sum() <= math.exp(-t)
    big = ex.apple_outputs(1.0, copies=100)
    assert big["expected_exponential"] > 0.95 * big["opt"]


# --------------------------------------------------------------- seed 004's worked numbers
def test_seed_004_numbers_corrected():
    nat = 2 * (math.log(4) + 3)
    eye = 2 * (math.log(5) + 3)
    assert round(nat, 2) == 8.77 and round(eye, 2) == 9.22
    assert dp.exponential_utility_threshold(0.0, 1.0, 1.0, 4, 3) == pytest.approx(-nat)
    assert dp.exponential_utility_threshold(0.0, 1.0, 1.0, 5, 3) == pytest.approx(-eye)
    # the seed's 7.4 is a base-10 logarithm ...
    assert round(2 * (math.log10(5) + 3), 1) == 7.4
    # ... and its 6.8 comes from no usual base
    for log in (math.log, math.log10, math.log2):
        assert abs(2 * (log(4) + 3) - 6.8) > 0.3
    # "1 - e^-3 (= 0.95)" is right
    assert round(1 - math.exp(-3), 2) == 0.95
    # with epsilon = 0.5 the loss doubles: the seed's "7.4 eps" must read 7.4 / eps
    assert dp.exponential_utility_threshold(0.0, 1.0, 0.5, 5, 3) == pytest.approx(-eye / 0.5)


# ---------------------------------------------------------------------------- the 1/2
def test_worst_case_ratio_with_half_is_at_most_epsilon():
    rng = np.random.default_rng(5)
    for _ in range(150):
        n = int(rng.integers(2, 7))
        u = rng.normal(0, 4, n)
        eps = float(rng.uniform(0.1, 3))
        with_half = ex.worst_case_log_ratio(u, 1.0, eps)
        without = ex.worst_case_log_ratio(u, 1.0, eps, half=False)
        assert with_half <= eps + 1e-12
        assert without <= 2 * eps + 1e-12
        assert without > with_half
    # seed 000's form: when the other candidates dominate, the ratio approaches e^(2 eps)
    u = ex.tied_scores(4, -10.0)
    assert ex.worst_case_log_ratio(u, 1.0, 1.0, half=False) > 1.99
    assert ex.worst_case_log_ratio(u, 1.0, 1.0) > 0.99


def test_worst_case_is_exhaustive_against_random_neighbours():
    rng = np.random.default_rng(6)
    u = np.array([3.0, 1.0, 0.0, -2.0])
    for half in (True, False):
        worst = ex.worst_case_log_ratio(u, 1.0, 0.8, half=half)
        moves = rng.uniform(-1, 1, size=(3000, 4))
        moves[:1000] = np.sign(moves[:1000])                 # corners of the cube too
        seen = max(np.abs(ex.log_ratio(u, u + m, 1.0, 0.8, half=half)).max() for m in moves)
        assert seen <= worst + 1e-12
        assert seen > 0.9 * worst


def test_seed_000_form_is_twice_epsilon_when_sampled():
    """Draws from seed 000's mechanism (ours at 2 eps) on the worst neighbour pair: the
    observed frequency ratio of the target exceeds e^eps; with the 1/2 it does not."""
    eps, n = 1.0, 100_000
    u = np.zeros(4)                               # four tied candidates; the target is r = 0
    v = u + np.array([-1.0, 1, 1, 1])             # its worst neighbour
    rng = np.random.default_rng(7)
    for e_used, claim_ok in ((eps, True), (2 * eps, False)):
        a = int((dp.exponential_mechanism(np.arange(4), u, 1.0, e_used, rng=rng, size=n) == 0).sum())
        b = int((dp.exponential_mechanism(np.arange(4), v, 1.0, e_used, rng=rng, size=n) == 0).sum())
        # one-sided test of H0: Pr_D(r) <= e^eps Pr_D'(r), via a conditional binomial on a+b
        p0 = math.exp(eps) / (1 + math.exp(eps))
        pvalue = stats.binomtest(a, a + b, p0, alternative="greater").pvalue
        assert (pvalue > ALPHA) == claim_ok


# ------------------------------------------------ every mechanism is an exponential mechanism
def test_randomized_response_is_an_exponential_mechanism():
    for eps in (0.1, math.log(3), 2.0):
        keep = dp.mechanisms.randomized_response_keep_probability(eps)
        for bit in (0, 1):
            score = np.log(np.where(np.arange(2) == bit, keep, 1 - keep))  # u(x, r) = ln Pr[RR(x) = r]
            # the score moves by at most ln(keep / (1 - keep)) = eps between the two inputs
            p = dp.exponential_probabilities(score, eps, 2 * eps)
            assert np.allclose(p, [1 - keep, keep] if bit else [keep, 1 - keep])
    eps, n = math.log(3), 50_000
    rng = np.random.default_rng(8)
    score = np.log([0.25, 0.75])
    draws = dp.exponential_mechanism(np.array([0, 1]), score, eps, 2 * eps, rng=rng, size=n)
    reports = dp.randomized_response(np.ones(n, dtype=int), eps, rng=rng)
    assert stats.binomtest(int(draws.sum()), n, 0.75).pvalue > ALPHA
    assert stats.binomtest(int(reports.sum()), n, 0.75).pvalue > ALPHA
    twin = dp.exponential_probabilities(score, eps, eps)[1]      # forgetting the factor 2
    assert stats.binomtest(int(draws.sum()), n, twin).pvalue < ALPHA


def test_laplace_on_a_grid_is_an_exponential_mechanism():
    grid = np.arange(-60, 61) * 0.5
    f, delta_f, eps = 3.0, 1.0, 0.7
    p = dp.exponential_probabilities(-np.abs(grid - f), delta_f, 2 * eps)
    lap = dp.mechanisms.output_distribution(f, dp.laplace_scale(delta_f, eps)).pdf(grid)
    assert np.allclose(p, lap / lap.sum())
    wrong = dp.exponential_probabilities(-np.abs(grid - f), delta_f, eps)
    assert not np.allclose(wrong, lap / lap.sum(), atol=1e-3)


# ------------------------------------------------------------------------ utility theorem
@pytest.mark.parametrize("n, eps, t", [(4, 1.0, 3.0), (100, 0.5, 1.0), (1000, 2.0, 2.0)])
def test_utility_theorem_by_sampling(n, eps, t):
    """Against the adversary tailored to each claimed threshold (every other candidate
    exactly at it), the natural-log threshold holds and a base-10 threshold does not."""
    n_draws = 20_000
    bound = math.exp(-t)
    thr = dp.exponential_utility_threshold(0.0, 1.0, eps, n, t)
    emp, thresholds = ex.utility_tail(ex.tied_scores(n, -thr), 1.0, eps, [t], n_draws=n_draws,
                                      rng=np.random.default_rng(9))
    assert thresholds[0] == thr
    k = int(round(emp[0] * n_draws))
    assert k > 0                                                    # the check is not vacuous
    assert stats.binomtest(k, n_draws, bound, alternative="greater").pvalue > ALPHA
    # wrong twin: the seed's log10 threshold, attacked the same way
    thr10 = -(2 / eps) * (math.log10(n) + t)
    draws = dp.exponential_mechanism(np.arange(n), ex.tied_scores(n, -thr10), 1.0, eps,
                                     rng=np.random.default_rng(10), size=n_draws)
    k10 = int((draws != 0).sum())                                   # outputs at or below thr10
    assert stats.binomtest(k10, n_draws, bound, alternative="greater").pvalue < ALPHA


def test_utility_tail_counts_optimal_ties():
    u = np.array([5.0, 5.0, 0.0, 0.0])
    emp, thr = ex.utility_tail(u, 1.0, 1.0, [0.0, 1.0], n_draws=1000, rng=np.random.default_rng(1))
    assert thr[0] == pytest.approx(5 - 2 * math.log(2))             # |R| / |R_OPT| = 2
    assert emp.shape == (2,) and (emp >= 0).all() and (emp <= 1).all()


# --------------------------------------------------------------- notebook 08's computations
def test_sigma_curves_classic_and_analytic():
    e = np.array([0.1, 0.5, 0.9, 5.0, 20.0])
    classic, analytic, true_delta = dp.mechanisms.sigma_curves(e, 1.0, 1e-5)
    for i in range(3):
        assert classic[i] == pytest.approx(dp.gaussian_sigma(1.0, e[i], 1e-5))
        assert true_delta[i] <= 1e-5                     # valid below epsilon = 1
    assert (analytic[:3] < classic[:3]).all()            # analytic never needs more noise
    assert true_delta[-1] > 1e-5                          # the formula past 1 breaks delta
    assert dp.mechanisms.gaussian_delta(analytic[-1], 1.0, 20.0) == pytest.approx(1e-5, rel=1e-6)


def test_queries_noise_seed_002_numbers():
    lap, gau = dp.comparison.queries_noise([1, 50], 0.5, 1e-5, analytic=False)
    assert lap[1] == pytest.approx(math.sqrt(2) * 50 / 0.5)
    assert gau[1] / gau[0] == pytest.approx(math.sqrt(50))      # L2 sensitivity 7.07
    assert round(math.sqrt(50), 2) == 7.07
    assert lap[0] < gau[0] and gau[1] < lap[1]                  # Laplace wins at 1, Gaussian at 50


# ------------------------------------------------------------------------------ bad input
BAD = [
    (lambda: ex.worst_case_log_ratio([0, 1], 0.0, 1.0), ValueError, "sensitivity"),
    (lambda: ex.worst_case_log_ratio([0, np.nan], 1.0, 1.0), ValueError, "scores"),
    (lambda: ex.worst_case_log_ratio([0, 1], 1.0, -1.0), ValueError, "epsilon"),
    (lambda: ex.worst_case_log_ratio("ab", 1.0, 1.0), TypeError, "scores"),
    (lambda: ex.log_ratio([0, 1], [0, 1], 1.0, float("inf")), ValueError, "epsilon"),
    (lambda: ex.tied_scores(0, 1.0), ValueError, "n_candidates"),
    (lambda: ex.tied_scores(True, 1.0), TypeError, "n_candidates"),
    (lambda: ex.utility_tail([0, 1], 1.0, 0.0, [1.0]), ValueError, "epsilon"),
    (lambda: ex.utility_tail([0, 1], 1.0, 1.0, [-1.0]), ValueError, "t"),
    (lambda: ex.utility_tail([0, 1], 1.0, 1.0, [1.0], n_draws=-5), ValueError, "n_draws"),
    (lambda: ex.apple_outputs(0.0), ValueError, "epsilon"),
    (lambda: ex.apple_outputs(1.0, copies=0), ValueError, "copies"),
    (lambda: ex.apple_outputs(1.0, copies=1.5), ValueError, "copies"),
    (lambda: ex.posted_price_revenue([1.0], [-1.0]), ValueError, "prices"),
    (lambda: ex.posted_price_revenue([np.nan], [1.0]), ValueError, "valuations"),
    (lambda: ex.posted_price_revenue([1.0], "1"), TypeError, "prices"),
    (lambda: dp.mechanisms.sigma_curves([0.5], 1.0, 0.0), ValueError, "delta"),
    (lambda: dp.mechanisms.sigma_curves([0.5], -1.0, 1e-5), ValueError, "l2_sensitivity"),
    (lambda: dp.comparison.queries_noise([1], 2.0, 1e-5, analytic=False), ValueError, "epsilon"),
    (lambda: dp.comparison.queries_noise([1], float("nan"), 1e-5), ValueError, "epsilon"),
]


@pytest.mark.parametrize("call, error, word", BAD)
def test_bad_input(call, error, word):
    with pytest.raises(error, match=word):
        call()


def test_seed_004_question_rooms():
    nat, eye = datasets.nationality_counts(), datasets.eye_colour_counts()
    assert list(nat.index) == ["Chinese", "Indian", "American", "Greek"] and nat.sum() == 30
    assert list(eye.index) == ["Red", "Blue", "Green", "Brown", "Purple"] and eye.sum() == 30
    assert ex.NATIONALITY == nat.to_dict() and ex.EYE_COLOUR == eye.to_dict()
    nat["Chinese"] = 0                                   # a fresh copy on every call
    assert datasets.nationality_counts()["Chinese"] == 11
