"""What notebooks 04, 08, 10 and 11 teach about epsilon, delta and their exercises, checked:
e^eps bounds probability ratios (the Bayes factor) while the odds of an outcome can move
by e^(2 eps); delta is the hockey-stick excess, and Pr[loss > eps] <= delta is sufficient,
not necessary; the classic Gaussian sigma past eps = 1; noisy histogram + argmax is report
noisy max; the exercises' checks accept a computed answer and refuse copied or wrong ones.
Statistical tests use alpha = 1e-6 and each rejects a wrong twin."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from conftest import ALPHA, chisq_pvalue
from dpteach import comparison
from dpteach import definition as dd
from dpteach.attacks import floating_point as fp

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _classic_sigma(epsilon, delta, l2=1.0):
    return math.sqrt(2 * math.log(1.25 / delta)) * l2 / epsilon


def _binom_p(successes, n, p):
    return stats.binomtest(int(successes), int(n), p).pvalue


# ------------------------------------------------------------- 04: ratios, odds, Bayes
def test_randomized_response_odds_move_by_e_to_the_2eps_probabilities_by_e_to_the_eps():
    eps = math.log(3)
    keep = dp.mechanisms.randomized_response_keep_probability(eps)
    odds = lambda p: p / (1 - p)
    assert math.isclose(keep / (1 - keep), math.exp(eps))                    # ratio 3
    assert math.isclose(odds(keep), 3.0) and math.isclose(odds(1 - keep), 1 / 3)
    assert math.isclose(odds(keep) / odds(1 - keep), math.exp(2 * eps))      # factor 9
    # the attacker's Bayes factor (posterior odds / prior odds) is e^eps, for any prior
    for prior in (0.01, 0.3, 0.5, 0.9):
        hi = dd.posterior_bounds(prior, eps)[1]
        assert math.isclose(odds(hi) / odds(prior), math.exp(eps), rel_tol=1e-9)


def test_any_eps_dp_binary_output_moves_odds_by_at_most_e_to_the_2eps(rng):
    # a yes/no release with Pr[yes | x] = a, Pr[yes | y] = c is eps-DP for the smallest eps
    # bounding both the yes and the no ratios; its odds factor never passes e^(2 eps)
    a, c = rng.uniform(0.001, 0.999, size=(2, 20_000))
    eps = np.maximum(np.abs(np.log(a / c)), np.abs(np.log((1 - a) / (1 - c))))
    log_factor = np.abs(np.log(a / (1 - a)) - np.log(c / (1 - c)))
    assert np.all(log_factor <= 2 * eps * (1 + 1e-12))
    assert np.max(log_factor / eps) > 1.99          # approached (randomized response attains it)
    assert np.any(log_factor > 1.5 * eps)           # so e^eps is not a bound on odds


# ------------------------------------------------------ 04/08: what delta measures
def test_gaussian_loss_tail_formula_and_the_notebooks_numbers():
    sigma = dp.gaussian_sigma(1.0, 0.5, 1e-3, analytic=True)
    tail = dd.gaussian_loss_tail(sigma, 1.0, 0.5)
    cut = 0.5 - 0.5 * sigma**2                # loss > eps exactly when the output is below it
    assert math.isclose(tail, stats.norm.cdf(cut, 0, sigma), rel_tol=1e-12)
    assert round(tail, 3) == 0.014 and math.isclose(dp.mechanisms.gaussian_delta(sigma, 1.0, 0.5), 1e-3,
                                                   rel_tol=1e-8)


@pytest.mark.parametrize("l2", [0.5, 1.0, 3.0])
def test_hockey_stick_identity_and_sufficient_not_necessary(l2):
    for sigma in np.array([0.3, 1.0, 2.5, 4.6, 10.0]) * l2:
        for eps in (0.0, 0.1, 0.5, 1.0, 2.0):
            tail_x = dd.gaussian_loss_tail(sigma, l2, eps)
            tail_y = stats.norm.cdf(-l2 / (2 * sigma) - eps * sigma / l2)   # the same event on x'
            delta = dp.mechanisms.gaussian_delta(sigma, l2, eps) if eps > 0 else tail_x - tail_y
            # delta = Pr_x[loss > eps] - e^eps Pr_x'[loss > eps]  (Balle & Wang 2018)
            assert math.isclose(delta, tail_x - math.exp(eps) * tail_y, rel_tol=1e-9,
                                abs_tol=1e-15)
            assert delta <= tail_x + 1e-15      # the "failure probability" is never smaller
    sigma = dp.gaussian_sigma(1.0, 0.5, 1e-3, analytic=True)
    assert dd.gaussian_loss_tail(sigma, 1.0, 0.5) > 10 * dp.mechanisms.gaussian_delta(sigma, 1.0, 0.5)


def test_hockey_stick_of_binned_gaussians_approaches_the_exact_delta():
    sigma = dp.gaussian_sigma(1.0, 0.5, 1e-3, analytic=True)
    edges = np.arange(-60, 60.005, 0.01)

    def binned(loc):
        c = stats.norm.cdf(edges, loc, sigma)
        return np.r_[c[0], np.diff(c), 1 - c[-1]]

    for eps in (0.25, 0.5, 1.0):
        exact = dp.mechanisms.gaussian_delta(sigma, 1.0, eps)
        approx = dp.definition.hockey_stick_divergence(binned(0.0), binned(1.0), eps)
        assert approx <= exact * (1 + 1e-9)                 # binning is post-processing
        assert math.isclose(approx, exact, rel_tol=1e-4)


def test_gaussian_loss_tail_matches_sampled_losses_and_rejects_a_wrong_twin(rng):
    sigma, eps, n = 4.6, 0.5, 200_000
    out = rng.normal(0.0, sigma, size=n)
    k = int(np.sum(dp.mechanisms.privacy_loss(out, 0.0, 1.0, sigma, noise="gaussian") > eps))
    assert _binom_p(k, n, dd.gaussian_loss_tail(sigma, 1.0, eps)) > ALPHA
    assert _binom_p(k, n, dd.gaussian_loss_tail(sigma, 1.0, eps / 2)) < ALPHA   # eps/2 twin
    assert _binom_p(k, n, dp.mechanisms.gaussian_delta(sigma, 1.0, eps)) < ALPHA           # delta is not it


def test_single_outputs_do_not_suffice_when_delta_is_positive():
    eps = 0.05
    p_x = np.r_[np.full(10, 0.05), np.full(10, 0.045), 0.05]
    p_y = np.r_[np.full(10, 0.045), np.full(10, 0.05), 0.05]
    per_output = max(np.max(p_x - np.exp(eps) * p_y), np.max(p_y - np.exp(eps) * p_x))
    assert per_output <= 0.01 < dp.definition.smallest_delta(p_x, p_y, eps)
    assert math.isclose(dp.definition.smallest_delta(p_x, p_y, eps), 10 * per_output, rel_tol=1e-12)
    # with delta = 0 the single-output and set versions agree: the largest set ratio is
    # reached on a single output
    assert math.isclose(dp.definition.max_probability_ratio(p_x, p_y), 0.05 / 0.045)


# ---------------------------------------------------- 08: the classic sigma past eps = 1
@pytest.mark.parametrize("delta,expected", [(1e-2, 6.77), (1e-3, 7.46), (1e-5, 8.42),
                                            (1e-8, 9.37), (1e-10, 9.85)])
def test_classic_gaussian_epsilon_limit(delta, expected):
    limit = comparison.classic_gaussian_epsilon_limit(delta)
    assert round(limit, 2) == expected
    for l2 in (1.0, 3.0):                         # the answer does not depend on Delta_2
        at = dp.mechanisms.gaussian_delta(_classic_sigma(limit, delta, l2), l2, limit)
        assert math.isclose(at, delta, rel_tol=1e-7)
        assert dp.mechanisms.gaussian_delta(_classic_sigma(0.99 * limit, delta, l2), l2, 0.99 * limit) < delta
        assert dp.mechanisms.gaussian_delta(_classic_sigma(1.01 * limit, delta, l2), l2, 1.01 * limit) > delta
    # the ratio true delta / target only grows with eps, so the crossing is unique
    grid = np.linspace(0.05, 30, 600)
    ratio = [dp.mechanisms.gaussian_delta(_classic_sigma(e, delta), 1.0, e) / delta for e in grid]
    assert np.all(np.diff(np.log(ratio)) > 0)


def test_classic_sigma_at_eps_2_holds_although_theorem_a1_does_not_cover_it():
    with pytest.raises(ValueError, match="epsilon must be < 1"):
        dp.gaussian_sigma(1.0, 2.0, 1e-5)                 # the theorem's condition, enforced
    achieved = dp.mechanisms.gaussian_delta(_classic_sigma(2.0, 1e-5), 1.0, 2.0)
    assert f"{achieved:.3g}" == "1.34e-07" and achieved <= 1e-5


def test_notebook_08_exercise_3_check():
    ns = _exercise_namespace("08_gaussian_mechanism.ipynb", "Exercise 3b")
    truth_3b = dp.mechanisms.gaussian_delta(_classic_sigma(3.0, 1e-6), 1.0, 3.0)
    assert _run_check(ns, {"answer_3": '"c"', "answer_3b": repr(truth_3b)}) == [True, True]
    for wrong in ('"a"', '"b"', '"no"', '"yes"'):
        assert _run_check(ns, {"answer_3": wrong, "answer_3b": "None"})[0] is False
    # the table's eps = 2 value and the target are not the answer to 3b
    for wrong in (1.34e-7, 1e-6, 0.0):
        assert _run_check(ns, {"answer_3": '"c"', "answer_3b": repr(wrong)})[1] is False


# ------------------------------------------------ 10: noisy histogram argmax = noisy max
@pytest.mark.parametrize("g,b", [(0.0, 1.0), (1.0, 1.0), (2.0, 0.5), (5.0, 3.0)])
def test_noisy_argmax_probabilities_two_candidates_closed_form(g, b):
    # difference of two Lap(b) variables: Pr[D <= g] = 1 - e^(-g/b)(1 + g/(2b))/2, g >= 0
    p = comparison.noisy_argmax_probabilities([g, 0.0], b)
    assert math.isclose(p[0], 1 - 0.5 * math.exp(-g / b) * (1 + g / (2 * b)), rel_tol=1e-9)
    assert math.isclose(p.sum(), 1.0, rel_tol=1e-10)


def test_noisy_argmax_probabilities_symmetry_and_order():
    assert np.allclose(comparison.noisy_argmax_probabilities([4.0, 4.0, 4.0, 4.0], 2.0), 0.25,
                       atol=1e-10)
    p = comparison.noisy_argmax_probabilities([11.0, 9.0, 7.0, 3.0], 2.0)
    assert math.isclose(p.sum(), 1.0, rel_tol=1e-10) and np.all(np.diff(p) < 0)
    assert round(p[0], 4) == 0.6653


def test_noisy_histogram_argmax_and_report_noisy_max_are_one_distribution(rng):
    counts = dp.datasets.nationality_counts().to_numpy(dtype=float)
    eps, n = 0.5, 20_000
    exact = comparison.noisy_argmax_probabilities(counts, 1 / eps)
    hist = dp.laplace_mechanism(counts, 1.0, eps, rng=rng, size=n).argmax(axis=1)
    rnm = np.array([dp.report_noisy_max(counts, 1.0, eps, monotonic=True, rng=rng)
                    for _ in range(n)])
    for picks in (hist, rnm):
        assert chisq_pvalue(np.bincount(picks, minlength=4), exact) > ALPHA
    # wrong twins: the general (non-monotonic) scale 2/eps, and the exponential mechanism
    twin = np.array([dp.report_noisy_max(counts, 1.0, eps, rng=rng) for _ in range(n)])
    assert chisq_pvalue(np.bincount(twin, minlength=4), exact) < ALPHA
    expo = dp.exponential_mechanism(np.arange(4), counts, 1.0, eps, rng=rng, size=n)
    assert chisq_pvalue(np.bincount(expo, minlength=4), exact) < ALPHA
    # the two routes against each other: a two-sample chi-square test
    table = np.vstack([np.bincount(hist, minlength=4), np.bincount(rnm, minlength=4)])
    assert stats.chi2_contingency(table).pvalue > ALPHA


def test_the_old_2000_run_estimate_was_three_standard_errors_low():
    counts = dp.datasets.nationality_counts().to_numpy(dtype=float)
    p = comparison.noisy_argmax_probabilities(counts, 2.0)[0]
    z = (0.634 - p) / math.sqrt(p * (1 - p) / 2000)
    assert -3.1 < z < -2.9


# ------------------------------------------------------- 11: exercise 4 is computed
def test_notebook_11_exercise_4_accepts_a_fresh_computation_and_refuses_copies():
    ns = _exercise_namespace("11_auditing_and_floating_point.ipynb", "Exercise 4")
    ns.update(fp=fp, SEED=11)
    for seed in (1, 2, 3):
        out = fp.naive_laplace_mechanism(10.0, 10.0, rng=np.random.default_rng(seed), size=10_000)
        mine = float(np.mean(~fp.floating_point_attack(out, [10.0, 11.0], 10.0)[:, 1]))
        assert _run_check(ns, {"answer_4": repr(mine)}) == [True]
    # the numbers the notebook prints (section 5's attack and the magnitude table) fail
    for copied in (0.8123, 0.8085, 0.802, 0.808, 0.342, 0.048, 0.006, 0.2561):
        assert _run_check(ns, {"answer_4": repr(copied)}) == [False]


def test_notebook_11_exercise_4_truth_is_not_in_the_printed_outputs():
    nb = json.loads((NOTEBOOKS / "11_auditing_and_floating_point.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                      for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"])
    out = fp.naive_laplace_mechanism(10.0, 10.0, rng=np.random.default_rng([11, 4]), size=200_000)
    truth = float(np.mean(~fp.floating_point_attack(out, [10.0, 11.0], 10.0)[:, 1]))
    for shown in (f"{truth:.3f}", f"{truth:.2f}"):          # as a number of its own
        assert not re.search(rf"(?<![\d.]){re.escape(shown)}(?!\d)", printed), shown
    # and it is far from every fraction the notebook prints (0.81, 0.34, 0.05, ...)
    assert 0.3 < truth < 0.75


# ------------------------------------------------------------- the prose no longer says
@pytest.mark.parametrize("name,wrong", [
    ("04_differential_privacy.ipynb", "change the odds of any outcome"),
    ("04_differential_privacy.ipynb", "δ is the chance that the guarantee simply fails"),
    ("04_differential_privacy.ipynb", "the probability of a blip in which the guarantee fails"),
    ("08_gaussian_mechanism.ipynb", 'check_choice(answer_3, "no"'),
    ("10_choosing_a_mechanism.ipynb", "three private routes exist"),
    ("11_auditing_and_floating_point.ipynb", "Give the number the notebook"),
])
def test_corrected_statements_are_gone(name, wrong):
    assert wrong not in (NOTEBOOKS / name).read_text()


# --------------------------------------------------------------------- bad input
@pytest.mark.parametrize("call,param", [
    (lambda v: dd.gaussian_loss_tail(v, 1.0, 0.5), "sigma"),
    (lambda v: dd.gaussian_loss_tail(1.0, v, 0.5), "l2_sensitivity"),
    (lambda v: dd.gaussian_loss_tail(1.0, 1.0, v), "epsilon"),
    (lambda v: comparison.classic_gaussian_epsilon_limit(v), "delta"),
    (lambda v: comparison.noisy_argmax_probabilities([1.0, 2.0], v), "scale"),
])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, True, "1"])
def test_new_helpers_refuse_bad_input_naming_the_parameter(call, param, bad):
    with pytest.raises((ValueError, TypeError), match=param):
        call(bad)


def test_new_helpers_refuse_edge_values():
    with pytest.raises(ValueError, match="delta"):
        comparison.classic_gaussian_epsilon_limit(0.0)
    with pytest.raises(ValueError, match="delta"):
        comparison.classic_gaussian_epsilon_limit(1.0)
    with pytest.raises(ValueError, match="scale"):
        comparison.noisy_argmax_probabilities([1.0, 2.0], 0.0)
    with pytest.raises((ValueError, TypeError), match="scores"):
        comparison.noisy_argmax_probabilities([1.0, float("nan")], 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        dd.gaussian_loss_tail(1.0, 1.0, float("inf"))


# ------------------------------------------------------------------------ helpers
def _exercise_namespace(notebook, marker):
    """The source of the check cell that mentions ``marker``, and a namespace to run it."""
    nb = json.loads((NOTEBOOKS / notebook).read_text())
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"
             and f'name="{marker}"' in "".join(c["source"])]
    assert len(cells) == 1, f"{notebook}: expected one check cell for {marker}"
    return {"source": "".join(cells[0]["source"]), "np": np, "dp": dp, "fp": fp}


def _run_check(ns, answers):
    """Run the check cell with the answers substituted; the verdicts, in order."""
    source = ns["source"]
    for var, value in answers.items():
        lines = source.split("\n")
        hits = [i for i, line in enumerate(lines) if line.startswith(f"{var} = None")]
        assert len(hits) == 1, var
        lines[hits[0]] = f"{var} = {value}"
        source = "\n".join(lines)
    verdicts = []
    env = {k: v for k, v in ns.items() if k != "source"}
    env["display"] = lambda fb: verdicts.append(fb.passed)
    body, last = source.rsplit("\ndp.exercises.", 1) if "\ndp.exercises." in source else (source, None)
    exec(body, env)
    if last is not None:
        verdicts.append(eval("dp.exercises." + last, env).passed)
    return verdicts
