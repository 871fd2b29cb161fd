"""Numbers at the edges (issue 19): answers that must stay right at extreme but valid
parameters -- tiny delta, huge sigma, far-apart scores, extreme confidence levels.

Reference values come from closed forms or from mpmath at 80 digits."""

import pathlib

import numpy as np
import pytest

import dpteach as dp
from dpteach import audit, tradeoff
from dpteach._support import gaussian as _gaussian

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
    out = _gaussian.gaussian_delta_exact(sigma, 1.0, eps)
    assert out.shape == (200, 200)
    assert np.isfinite(out).all() and (out >= 0).all()


@pytest.mark.parametrize("sigma", [10.0, 1e3, 1e5, 1e7])
@pytest.mark.parametrize("target", [1e-5, 1e-50, 1e-200, 1e-300])
def test_gaussian_delta_keeps_its_relative_accuracy_at_tiny_delta(sigma, target):
    # the epsilon at which delta(sigma) is about `target`
    eps = np.sqrt(2 * np.log(1 / target)) / sigma
    exact = _mp_gaussian_delta(sigma, 1.0, eps)
    assert dp.mechanisms.gaussian_delta(sigma, 1.0, eps) == pytest.approx(exact, rel=1e-11, abs=0)


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
                got = _gaussian.gaussian_delta_exact(sigma, 1.0, eps)
                assert got == pytest.approx(exact, rel=1e-12, abs=0), (sigma, eps)


def test_a_gaussian_delta_below_the_float_range_is_not_reported_as_zero():
    # the true delta at eps = 60, sigma = 1 is about 1e-800: 0 would claim pure DP
    smallest = np.nextafter(0.0, 1.0)
    assert dp.mechanisms.gaussian_delta(1.0, 1.0, 60.0) == smallest
    assert dp.tradeoff.gdp_delta(1e3, 1.0) == smallest
    loss = dp.tradeoff.privacy_loss_distribution("gaussian", sigma=1.0)
    assert np.all(loss.delta(np.array([60.0, 1e4])) == smallest)
    # where the delta truly is 0 (no sensitivity, infinite epsilon) it stays 0
    assert _gaussian.gaussian_delta_exact(1.0, 0.0, 1.0) == 0.0
    assert _gaussian.gaussian_delta_exact(1.0, 1.0, np.inf) == 0.0
    # a wrong twin: the unfloored formula does round to 0 there
    assert float(np.exp(_special_log_ndtr(1 / 2 - 60.0))) == 0.0


def _special_log_ndtr(x):
    from scipy import special
    return special.log_ndtr(x)


# ------------------------------------------------------------------ the loss distribution
def test_gaussian_loss_epsilon_at_tiny_delta_beyond_the_old_search_cap():
    loss = dp.tradeoff.privacy_loss_distribution("gaussian", sigma=1e-3)
    eps = loss.epsilon(1e-300)
    assert eps == pytest.approx(537046.11, abs=0.01)
    assert loss.delta(eps) == pytest.approx(1e-300, rel=1e-6, abs=0)


@pytest.mark.parametrize("sigma", [1e-6, 1e-3, 0.3, 1.0, 1e3])
@pytest.mark.parametrize("delta", [1e-300, 1e-10, 0.01])
def test_gaussian_loss_epsilon_inverts_delta(sigma, delta):
    loss = dp.tradeoff.privacy_loss_distribution("gaussian", sigma=sigma)
    eps = loss.epsilon(delta)
    if eps > 0:
        assert loss.delta(eps) == pytest.approx(delta, rel=1e-6, abs=0)
    # the twin: a tenth less epsilon does not reach delta
    assert eps == 0 or loss.delta(eps * 0.9) > delta


def test_gaussian_loss_refuses_delta_zero_naming_it():
    with pytest.raises(ValueError, match="delta"):
        dp.tradeoff.privacy_loss_distribution("gaussian", sigma=1.0).epsilon(0.0)


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
    low, high = audit.clopper_pearson(5, 100, alpha=1e-320)
    assert np.isfinite([low, high]).all() and 0 < low < high < 1
    with mp.workdps(50):
        # I_low(5, 96) = level / 2 (to the few digits a subnormal level carries)
        got = mp.betainc(5, 96, 0, low, regularized=True)
        assert float(got / mp.mpf(5e-321)) == pytest.approx(1.0, rel=1e-3)


# ------------------------------------------------------------------ far-apart scores
from conftest import ALPHA, chisq_pvalue  # noqa: E402

from dpteach import comparison, sparse_vector  # noqa: E402


def _two_laplace_sf(x, b1, b2):
    """Pr[nu - rho > x], nu ~ Lap(b1), rho ~ Lap(b2) independent, x >= 0 (closed form)."""
    if b1 == b2:
        return (2 + x / b1) * np.exp(-x / b1) / 4
    return (b1 ** 2 * np.exp(-x / b1) - b2 ** 2 * np.exp(-x / b2)) / (2 * (b1 ** 2 - b2 ** 2))


@pytest.mark.parametrize("scores,scale", [([0.0, 100.0], 1e-3), ([0.0, 5000.0], 0.04),
                                          ([0.0, 1e9], 1.0), ([3.0, -1e6, 2.0], 1e-2)])
def test_noisy_argmax_sums_to_one_when_gaps_are_huge(scores, scale):
    p = comparison.noisy_argmax_probabilities(scores, scale)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert p[int(np.argmax(scores))] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("gap_in_scales", [0.0, 0.5, 3.0, 30.0, 600.0])
def test_noisy_argmax_matches_the_closed_form_for_two_candidates(gap_in_scales):
    b = 0.25
    p = comparison.noisy_argmax_probabilities([0.0, gap_in_scales * b], b)
    lose = _two_laplace_sf(gap_in_scales * b, b, b)
    assert p[0] == pytest.approx(lose, rel=1e-9, abs=1e-13)
    assert p[1] == pytest.approx(1 - lose, rel=1e-12)


def test_noisy_argmax_agrees_with_simulation_and_rejects_a_wrong_twin():
    rng = np.random.default_rng(2026)
    scores, b, n = np.array([0.0, 1.0, 1.5, 4.0]), 0.8, 200_000
    wins = np.argmax(scores + rng.laplace(0.0, b, size=(n, scores.size)), axis=1)
    counts = np.bincount(wins, minlength=scores.size)
    assert chisq_pvalue(counts, comparison.noisy_argmax_probabilities(scores, b)) > ALPHA
    # twin: the distribution of twice the noise
    assert chisq_pvalue(counts, comparison.noisy_argmax_probabilities(scores, 2 * b)) < ALPHA


def test_above_threshold_probabilities_when_answers_are_far_from_the_threshold():
    p = sparse_vector.above_threshold_probabilities([0, 1e4], 5e3, 50)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    # query 0 is 5000 below: reported only if nu - rho > 5000 (b = 0.08, 0.04)
    assert p[0] == pytest.approx(_two_laplace_sf(5000.0, 0.08, 0.04), abs=1e-300)
    assert p[1] == pytest.approx(1.0, abs=1e-12)
    assert p[2] < 1e-300


@pytest.mark.parametrize("answer,threshold,epsilon", [(0.0, 5e3, 50.0), (10.0, 12.0, 1.0),
                                                      (1e6, 0.0, 1e-3), (-1e7, 1e7, 2.0)])
def test_above_threshold_one_query_matches_the_closed_form(answer, threshold, epsilon):
    b_t, b_q = sparse_vector.above_threshold_scales(epsilon)
    p = sparse_vector.above_threshold_probabilities([answer], threshold, epsilon)
    x = threshold - answer
    report = _two_laplace_sf(x, b_q, b_t) if x >= 0 else 1 - _two_laplace_sf(-x, b_t, b_q)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert p[0] == pytest.approx(report, rel=1e-9, abs=1e-14)


def test_variants_sum_to_one_far_from_the_threshold():
    for name in ("above_threshold", "fresh_threshold_noise", "no_query_noise"):
        p = sparse_vector.variant_probabilities(name, [0.0, 1e4, 3.0], 5e3, 50.0)
        assert p.sum() == pytest.approx(1.0, abs=1e-12), name
        assert p[1] == pytest.approx(1.0, abs=1e-12), name
    both = [sparse_vector.no_stop_pattern_probability([0.0, 1e4], pat, 5e3, 50.0)
            for pat in ([False, False], [False, True], [True, False], [True, True])]
    assert sum(both) == pytest.approx(1.0, abs=1e-12) and both[1] == pytest.approx(1.0, abs=1e-12)


def test_above_threshold_probabilities_agree_with_draws_and_reject_a_wrong_twin():
    answers, threshold, eps = np.array([10.0, 30.0, 50.0, 70.0, 90.0]), 60.0, 0.5
    draws = sparse_vector.above_threshold_draws(answers, threshold, eps, size=200_000,
                                                rng=np.random.default_rng(15))
    counts = np.bincount(draws, minlength=answers.size + 1)
    exact = sparse_vector.above_threshold_probabilities(answers, threshold, eps)
    assert chisq_pvalue(counts, exact) > ALPHA
    twin = sparse_vector.variant_probabilities("fresh_threshold_noise", answers, threshold, eps)
    assert chisq_pvalue(counts, twin) < ALPHA


# ------------------------------------------------------------------ epsilon = 0
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.2])
def test_tradeoff_curve_accepts_epsilon_zero(delta):
    alpha = np.linspace(0, 1, 11)
    assert np.allclose(tradeoff.tradeoff_curve(alpha, 0.0, delta), np.maximum(0, 1 - delta - alpha),
                       rtol=0, atol=1e-15)
    assert tradeoff.advantage_bound(0.0, delta) == pytest.approx(delta, abs=1e-15)
    assert dp.tradeoff_curve(0.3, 0) == pytest.approx(0.7)


def test_laplace_tradeoff_at_epsilon_zero_is_one_minus_alpha():
    alpha = np.linspace(0, 1, 11)
    assert np.allclose(tradeoff.laplace_tradeoff(alpha, 0.0), 1 - alpha, atol=1e-15)


@pytest.mark.parametrize("bad", [-1e-12, -0.0 - 1e-300, float("nan")])
def test_epsilon_zero_opens_no_door_to_negative_or_nan(bad):
    for func in (lambda e: tradeoff.tradeoff_curve(0.1, e), tradeoff.advantage_bound,
                 lambda e: tradeoff.laplace_tradeoff(0.1, e)):
        with pytest.raises(ValueError, match="epsilon"):
            func(bad)


def test_epsilon_zero_is_still_refused_where_it_means_infinite_noise():
    for func in (lambda: dp.laplace_scale(1.0, 0.0), lambda: dp.gaussian_sigma(1.0, 0.0, 1e-5),
                 lambda: dp.tradeoff.privacy_loss_distribution("laplace", epsilon=0.0)):
        with pytest.raises(ValueError, match="epsilon"):
            func()


# ------------------------------------------------------------------ two variances of RR
def test_warner_and_fixed_dataset_variances_are_told_apart():
    pi, n, eps = 0.5, 1000, 3.0
    warner = dp.definition.randomized_response_standard_error(pi, n, eps) ** 2
    fixed = dp.local.local_variance(n, 2, eps, mechanism="krr", frequency=pi)
    assert warner == pytest.approx(3.05e-4, rel=1e-3) and fixed == pytest.approx(5.51e-5, rel=1e-3)
    assert warner == pytest.approx(fixed + pi * (1 - pi) / n, rel=1e-12)
    doc_w, doc_f = dp.definition.randomized_response_standard_error.__doc__, dp.local.local_variance.__doc__
    assert "Warner" in doc_w and "population" in doc_w and "fixed-dataset" in doc_w
    assert "fixed dataset" in doc_f and "Warner" in doc_f and "sampling variance" in doc_f


def _notebook(name):
    import nbformat
    nb = nbformat.read(pathlib.Path(__file__).resolve().parents[2] / "notebooks" / name,
                       as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    out = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                    for o in c.outputs)
    return text, out


def test_the_notebooks_say_which_variance_of_randomized_response_is_which():
    """Notebooks 04 and 17 tell Warner's error (respondents sampled from a population)
    from the fixed-table one (only the coins random), with both numbers printed; the
    panel of notebook 04, which samples respondents, names its curve Warner's."""
    text04, out04 = _notebook("04_differential_privacy.ipynb")
    assert "Which standard error?" in text04 and "Warner" in text04
    assert "one fixed table" in text04 and r"\pi(1 - \pi)/n" in text04
    warner = dp.definition.randomized_response_standard_error(0.3, 10_000, np.log(3))
    fixed = np.sqrt(dp.local.local_variance(10_000, 2, np.log(3), mechanism="krr", frequency=0.3))
    assert f"(Warner): {warner:.4f}" in out04
    assert f"(only the coins are random): {fixed:.4f}" in out04
    assert f"{warner:.4f}" != f"{fixed:.4f}"                  # the two are told apart
    text17, out17 = _notebook("17_local_model.ipynb")
    assert "**one fixed table**" in text17 and "Warner" in text17
    assert "difference 2.1000e-05; f(1 − f)/n = 2.1000e-05" in out17
    panel = dp.panels.dp_randomized_response()
    labels = [ln.get_label() for ln in panel.figure.axes[1].get_lines()]
    assert "Warner's standard error (formula)" in labels
    assert "Warner" in panel.status.value


def test_fixed_dataset_variance_matches_simulation_and_warner_does_not():
    # one fixed table with half ones; only the coins are random
    rng = np.random.default_rng(4)
    n, eps, reps = 1000, 3.0, 4000
    bits = np.repeat([0, 1], n // 2)
    estimates = np.array([dp.randomized_response_estimate(dp.randomized_response(bits, eps, rng=rng), eps)
                          for _ in range(reps)])
    s2 = estimates.var(ddof=1)
    lo, hi = stats_chi2_interval(s2, reps)
    fixed = dp.local.local_variance(n, 2, eps, mechanism="krr", frequency=0.5)
    assert lo <= fixed <= hi
    assert not lo <= dp.definition.randomized_response_standard_error(0.5, n, eps) ** 2 <= hi   # the twin


def stats_chi2_interval(s2, reps, alpha=ALPHA):
    """Two-sided (1 - alpha) chi-square interval for a variance from reps samples."""
    from scipy import stats
    df = reps - 1
    return df * s2 / stats.chi2.isf(alpha / 2, df), df * s2 / stats.chi2.ppf(alpha / 2, df)


# ------------------------------------------------------------------ the lazy loader
def test_the_lazy_loader_still_imports_nothing_heavy():
    import subprocess
    import sys
    code = ("import sys, dpteach; assert 'numpy' not in sys.modules and 'scipy' not in sys.modules;"
            "dpteach.sparse_vector.above_threshold_scales; assert 'dpteach.sparse_vector' in sys.modules;"
            "assert 'dpteach.sgd' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(__import__("pathlib").Path(
        dp.__file__).parent.parent))


# ------------------------------------------------------------------ the fuzz findings, one by one
from dpteach import clipping, local, rdp, sgd as dpsgd_module  # noqa: E402


def test_clip_gradients_does_not_overflow_the_norm():
    out = dp.sgd.clip_gradients([[1e200, 1e200], [3.0, 4.0]], 1.0)
    np.testing.assert_allclose(out, [[2 ** -0.5, 2 ** -0.5], [0.6, 0.8]], rtol=1e-15)


def test_zcdp_to_dp_at_a_subnormal_delta_is_finite():
    eps = dp.zcdp_to_dp(0.5, 1e-320, method="classic")
    assert eps == pytest.approx(0.5 + 2 * np.sqrt(0.5 * -np.log(1e-320)), rel=1e-14)
    assert np.isfinite(dp.zcdp_to_dp(0.5, 1e-320)) and dp.zcdp_to_dp(0.5, 1e-320) <= eps


def test_zcdp_to_dp_at_a_subnormal_rho_is_finite_not_a_scipy_error():
    # used to surface scipy's "Optimization bounds must be finite"
    eps = dp.zcdp_to_dp(1e-320, 1e-5)
    assert 0 <= eps <= dp.zcdp_to_dp(1e-320, 1e-5, method="classic") < 1e-150


def test_composition_epsilons_takes_a_single_k():
    out = rdp.composition_epsilons(1.0, 1e-5, 1)
    assert out["exact"].shape == (1,)
    assert out["exact"][0] == pytest.approx(dp.gaussian_epsilon(1.0, 1e-5), rel=1e-9)


@pytest.mark.parametrize("call,param", [
    (lambda: local.local_variance(100, 4, 1e-320), "epsilon"),
    (lambda: local.k_randomized_response_estimate([0, 1, 3], 4, 1e-320), "epsilon"),
    (lambda: clipping.noisy_sum_and_count([0.2, 0.5], 0.0, 1.0, 1e-320, rng=0), "epsilon"),
    (lambda: dp.tradeoff.privacy_loss_distribution("gaussian", sigma=1e-320), "sigma"),
    (lambda: dp.subsampled_gaussian_rdp(0.01, 1e-320, [2, 4]), "sigma"),
    (lambda: dp.RDPAccountant().compose_gaussian(1e-320, q=0.01), "sigma"),
    (lambda: dp.sparse_vector.above_threshold_probabilities([0.0, 1.0], 0.5, 1e-320), "epsilon"),
])
def test_a_subnormal_epsilon_or_sigma_is_refused_by_name(call, param):
    with pytest.raises(ValueError, match=param):
        call()


@pytest.mark.parametrize("size", [10 ** 12, 10 ** 400, 1e308])
def test_huge_sizes_are_refused_before_any_draw(size):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises((ValueError, TypeError), match="size"):
        dp.sparse_vector.above_threshold_draws([1.0, 2.0], 1.5, 1.0, size=size, rng=rng)
    for name in dp.sparse_vector.VARIANTS:
        mechanism = dp.sparse_vector.variant_mechanism(name, 1.5, 1.0)
        with pytest.raises((ValueError, TypeError), match="size"):
            mechanism([1.0, 2.0], size, rng)
    assert rng.bit_generator.state == state


def test_dp_sgd_checks_noise_multiplier_and_accountant_before_training():
    X, y = np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0, 1])
    kwargs = dict(epochs=1, sampling_rate=0.5, clip=1.0, learning_rate=0.1)
    for bad, param in ((dict(noise_multiplier=1e-320), "noise_multiplier"),
                       (dict(noise_multiplier=1.0, accountant="rpd"), "accountant"),
                       (dict(noise_multiplier=1.0, accountant=object()), "accountant"),
                       (dict(noise_multiplier=1.0, learning_rate=1e308), "learning_rate")):
        rng = np.random.default_rng(0)
        state = rng.bit_generator.state
        with pytest.raises((ValueError, TypeError), match=param):
            dpsgd_module.dp_sgd(X, y, **{**kwargs, **bad}, rng=rng)
        assert rng.bit_generator.state == state, param
