"""dpteach.comparison: seed 002's Table 1 generated from the code, the decision guide and
the count-release error comparison of notebook 10."""

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import comparison
from dpteach.comparison import MECHANISMS, MechanismCard

from conftest import ALPHA, chisq_pvalue, ks_pvalue


# ----------------------------------------------------------------------------- the table
def test_table_has_seed_002_rows_and_columns():
    table = dp.comparison.mechanism_table()
    assert list(table.index) == ["Laplace", "Gaussian", "Exponential"]
    assert list(table.columns[:5]) == ["guarantee", "data type", "kind", "noise", "sensitivity"]
    # the cells seed 002's Table 1 prints, derived here from the functions' signatures
    assert list(table["guarantee"]) == ["ε-DP", "(ε, δ)-DP", "ε-DP"]
    assert list(table["data type"]) == ["numeric", "numeric", "categorical"]
    assert list(table["kind"]) == ["output perturbation", "output perturbation",
                                   "scoring function"]
    assert list(table["sensitivity"][:2]) == ["L1 norm", "L2 norm"]
    assert list(table["function"]) == ["dp.laplace_mechanism", "dp.gaussian_mechanism",
                                       "dp.exponential_mechanism"]


def test_extended_table_adds_two_rows():
    table = dp.comparison.mechanism_table(extended=True)
    assert list(table.index[3:]) == ["Report noisy max", "Randomized response"]
    assert table.loc["Randomized response", "data type"] == "binary"
    assert table.loc["Report noisy max", "kind"] == "scoring function"


def test_columns_are_read_from_the_signature_not_typed():
    # a card for a made-up function: the derived columns follow its parameters
    def fake_release(value, l2_sensitivity, epsilon, delta, *, rng=None):
        return value

    def fake_select(candidates, scores, sensitivity, epsilon, *, rng=None):
        return candidates[0]

    a = MechanismCard("a", fake_release, "norm", None, "", "")
    b = MechanismCard("b", fake_select, None, None, "", "")
    assert (a.guarantee, a.kind, a.data_type, a.sensitivity) == (
        "(ε, δ)-DP", "output perturbation", "numeric", "L2 norm")
    assert (b.guarantee, b.kind, b.data_type, b.sensitivity) == (
        "ε-DP", "scoring function", "categorical", "Δu of the score")
    with pytest.raises(ValueError, match="cannot classify"):
        _ = MechanismCard("c", lambda x: x, None, None, "", "").kind


@pytest.mark.parametrize("name, args", [
    ("Laplace", dict(sensitivity=2.0, epsilon=0.7)),
    ("Gaussian", dict(l2_sensitivity=2.0, epsilon=0.7, delta=1e-5)),
])
def test_noise_card_matches_samples_of_the_real_function(name, args):
    """The card's noise family and scale function describe what the function adds;
    the other family with the same standard deviation, and the scale at epsilon/2, are
    both rejected by the same samples."""
    card = MECHANISMS[name]
    rng = np.random.default_rng(8)
    samples = card.function(0.0, *args.values(), rng=rng, size=60_000)
    scale = card.scale(*args.values())
    family = getattr(stats, card.noise)
    assert ks_pvalue(samples, family(scale=scale).cdf) > ALPHA
    # wrong twins: the other family with the same std, and the scale at epsilon / 2
    std = family(scale=scale).std()
    other = stats.norm(scale=std) if card.noise == "laplace" else stats.laplace(scale=std / math.sqrt(2))
    assert ks_pvalue(samples, other.cdf) < ALPHA
    assert ks_pvalue(samples, family(scale=2 * scale).cdf) < ALPHA


def test_exponential_card_samples_follow_the_scoring_rule():
    card = MECHANISMS["Exponential"]
    scores = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    rng = np.random.default_rng(9)
    draws = card.function(np.arange(5), scores, 1.0, 1.0, rng=rng, size=40_000)
    counts = np.bincount(draws, minlength=5)
    assert chisq_pvalue(counts, dp.exponential_probabilities(scores, 1.0, 1.0)) > ALPHA
    # wrong twin: seed 000's form without the 1/2 (our function at 2 epsilon)
    assert chisq_pvalue(counts, dp.exponential_probabilities(scores, 1.0, 2.0)) < ALPHA


# ------------------------------------------------------------------------ noise_std
def test_noise_std_values():
    assert comparison.noise_std("Laplace", epsilon=0.5, l1_sensitivity=50) == pytest.approx(
        math.sqrt(2) * 100)
    classic = comparison.noise_std("Gaussian", epsilon=0.5, l2_sensitivity=1, delta=1e-5,
                                   analytic=False)
    assert classic == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5)
    analytic = comparison.noise_std("Gaussian", epsilon=0.5, l2_sensitivity=1, delta=1e-5)
    assert analytic < classic


def test_noise_std_matches_sample_std():
    rng = np.random.default_rng(3)
    x = dp.laplace_mechanism(np.zeros(1), 3.0, 0.6, rng=rng, size=200_000).ravel()
    sd = comparison.noise_std("Laplace", epsilon=0.6, l1_sensitivity=3.0)
    # the sample variance of 2e5 Laplace draws is within 2% of the truth (kurtosis 6)
    assert abs(x.std() / sd - 1) < 0.02
    assert abs(x.std() / (sd / math.sqrt(2)) - 1) > 0.2   # wrong twin: std = b, not sqrt(2) b


# -------------------------------------------------------------------------- decision guide
def test_decision_guide_50_counting_queries_prefers_gaussian():
    rec = dp.comparison.choose_mechanism("numeric", epsilon=0.5, delta=1e-5, l1_sensitivity=50,
                              l2_sensitivity=math.sqrt(50))
    assert rec.mechanism == "Gaussian"
    assert rec.numbers["Gaussian"] < rec.numbers["Laplace"]
    one = dp.comparison.choose_mechanism("numeric", epsilon=0.5, delta=1e-5, l1_sensitivity=1,
                              l2_sensitivity=1)
    assert one.mechanism == "Laplace"


def test_decision_guide_crossover_is_single():
    picks = [dp.comparison.choose_mechanism("numeric", epsilon=0.5, delta=1e-5, l1_sensitivity=k,
                                 l2_sensitivity=math.sqrt(k)).mechanism for k in range(1, 60)]
    first = picks.index("Gaussian")
    assert set(picks[:first]) == {"Laplace"} and set(picks[first:]) == {"Gaussian"}


def test_decision_guide_other_branches():
    assert dp.comparison.choose_mechanism("numeric", epsilon=1.0, l1_sensitivity=50).mechanism == "Laplace"
    assert dp.comparison.choose_mechanism("categorical", epsilon=1.0).mechanism == "Exponential"
    rr = dp.comparison.choose_mechanism("binary", epsilon=math.log(3), local=True)
    assert rr.mechanism == "Randomized response"
    assert rr.numbers["keep_probability"] == pytest.approx(0.75)


# --------------------------------------------------------------------- count release errors
def test_count_release_errors_match_simulation():
    eps, delta = 0.5, 1e-5
    exact = comparison.count_release_errors(eps, delta=delta, count=50, n_max=100)
    rng = np.random.default_rng(11)
    n = 100_000
    lap = np.abs(dp.laplace_mechanism(50.0, 1.0, eps, rng=rng, size=n) - 50)
    gau = np.abs(dp.gaussian_mechanism(50.0, 1.0, eps, delta, analytic=True, rng=rng, size=n) - 50)
    r = dp.exponential_mechanism(np.arange(101), -np.abs(np.arange(101) - 50), 1.0, eps,
                                 rng=rng, size=n)
    exp = np.abs(r - 50)
    for name, x in [("Laplace", lap), ("Gaussian", gau), ("Exponential", exp)]:
        z = (x.mean() - exact[name]) / (x.std() / math.sqrt(n))
        assert 2 * stats.norm.sf(abs(z)) > ALPHA, name
        # wrong twin: the error at epsilon / 2 is about twice as large
        twin = comparison.count_release_errors(eps / 2, delta=delta, count=50, n_max=100)[name]
        z_twin = (x.mean() - twin) / (x.std() / math.sqrt(n))
        assert 2 * stats.norm.sf(abs(z_twin)) < ALPHA, name


def test_error_curves_are_the_errors_at_each_epsilon():
    """count_release_error_curves (one bisection for all the Gaussian's sigmas) gives
    count_release_errors at every epsilon, to 1e-12; the errors at eps / 2 do not match."""
    eps = np.geomspace(0.02, 10, 17)
    for delta, count in [(1e-5, 50), (1e-9, 0), (0.2, 100)]:
        curves = comparison.count_release_error_curves(eps, delta=delta, count=count)
        for name in ("Laplace", "Gaussian", "Exponential"):
            one_by_one = [comparison.count_release_errors(e, delta=delta, count=count)[name]
                          for e in eps]
            np.testing.assert_allclose(curves[name], one_by_one, rtol=1e-12)
            halves = [comparison.count_release_errors(e / 2, delta=delta, count=count)[name]
                      for e in eps]
            assert not np.allclose(curves[name], halves, rtol=1e-3), name


# ----------------------------------------------------------------------------- bad input
BAD = [
    (lambda: dp.comparison.mechanism_table(extended="yes"), TypeError, "extended"),
    (lambda: comparison.noise_std("Laplace", epsilon=0.0, l1_sensitivity=1), ValueError, "epsilon"),
    (lambda: comparison.noise_std("Laplace", epsilon=1.0), ValueError, "l1_sensitivity"),
    (lambda: comparison.noise_std("Gaussian", epsilon=1.0, delta=1e-5), ValueError, "l2_sensitivity"),
    (lambda: comparison.noise_std("Gaussian", epsilon=1.0, l2_sensitivity=1, delta=0.0),
     ValueError, "delta"),
    (lambda: comparison.noise_std("Cauchy", epsilon=1.0), ValueError, "mechanism"),
    (lambda: dp.comparison.choose_mechanism("text", epsilon=1.0), ValueError, "output"),
    (lambda: dp.comparison.choose_mechanism("numeric", epsilon=float("nan"), l1_sensitivity=1),
     ValueError, "epsilon"),
    (lambda: dp.comparison.choose_mechanism("numeric", epsilon=True, l1_sensitivity=1), TypeError, "epsilon"),
    (lambda: dp.comparison.choose_mechanism("numeric", epsilon=1.0, delta=1.0, l1_sensitivity=1),
     ValueError, "delta"),
    (lambda: dp.comparison.choose_mechanism("numeric", epsilon=1.0, l1_sensitivity=-1), ValueError,
     "l1_sensitivity"),
    (lambda: dp.comparison.choose_mechanism("numeric", epsilon=1.0, l1_sensitivity="1"), TypeError,
     "l1_sensitivity"),
    (lambda: dp.comparison.choose_mechanism("numeric", epsilon=1.0), ValueError, "l1_sensitivity"),
    (lambda: dp.comparison.choose_mechanism("numeric", epsilon=1.0, delta=1e-5, l1_sensitivity=1),
     ValueError, "l2_sensitivity"),
    (lambda: dp.comparison.choose_mechanism("numeric", epsilon=1.0, local=True), ValueError, "local"),
    (lambda: dp.comparison.choose_mechanism("binary", epsilon=1.0, local=1), TypeError, "local"),
    (lambda: comparison.count_release_errors(float("inf")), ValueError, "epsilon"),
    (lambda: comparison.count_release_errors(1.0, delta=0.0), ValueError, "delta"),
    (lambda: comparison.count_release_errors(1.0, count=101, n_max=100), ValueError, "count"),
    (lambda: comparison.count_release_errors(1.0, count=2.5), ValueError, "count"),
    (lambda: comparison.count_release_errors(1.0, n_max=0), ValueError, "n_max"),
]


@pytest.mark.parametrize("call, error, word", BAD)
def test_bad_input(call, error, word):
    with pytest.raises(error, match=word):
        call()
