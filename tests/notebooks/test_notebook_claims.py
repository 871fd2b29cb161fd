"""What the text of notebooks 12-18 claims, held against the committed notebooks (their
markdown, code and stored outputs) and against the kit: each statement an audit corrected
stays corrected, each gap it filled stays filled, and where the text gives a theorem or a
number the test recomputes it (statistical checks at alpha = 1e-6 with a wrong twin).
Typeset formulas and quoted numbers of every notebook: tests/notebooks/test_notebook_text.py;
the panels these notebooks draw: tests/panels/test_panel_fit.py."""

import math
import re

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import clipping, properties, sparse_vector, tradeoff
from _notebook_json import code, flat, markdown, notebook, outputs, section


# ------------------------------------------------------------------ notebook 12: properties
def test_12_parallel_composition_rule_and_cumulative_counts():
    sec = flat(section("12", "3."))
    assert "public attribute such as an age group" not in sec
    assert "rule fixed in advance" in sec and "the ages are private data" in sec
    assert "they cost the sum." not in sec.replace("Released each with its own noise they cost the sum", "")
    assert "Released each with its own noise they cost the sum" in sec
    assert "prefix sums of the one noisy histogram" in sec and "post-processing" in sec
    out = outputs("12")
    assert "cumulative counts as prefix sums of the histogram: post-processing -> (0.5, 0.0)" in out
    assert "cumulative counts, own noise each (overlapping): basic composition -> (2.5, 0.0)" in out


def test_12_group_privacy_teaches_the_pure_theorem_and_both_delta_bounds():
    sec = flat(section("12", "2."))
    assert "Theorem 2.2 and its approximate form" not in sec
    assert "which states this pure case only" in sec
    assert "\\frac{e^{k\\varepsilon} - 1}{e^{\\varepsilon} - 1}" in sec
    assert "k\\,e^{(k-1)\\varepsilon}\\,\\delta" in sec
    assert "3.96 times the chain sum" in sec and "3.96 times the chain sum" in outputs("12")
    chain = properties.group_privacy_chain(0.5, 1e-6, 10)[1]
    assert dp.group_privacy(0.5, 1e-6, 10)[1] / chain == pytest.approx(3.9614, abs=1e-4)
    # the Gaussian's true group delta stays under the chain sum (the notebook says so)
    for k in (2, 3, 5, 10):
        assert properties.gaussian_group_delta(0.5, 1e-6, k) < properties.group_privacy_chain(0.5, 1e-6, k)[1]


def test_12_group_privacy_panel_x_axis_is_in_counts():
    panel = dp.panels.group_privacy_loss()
    ax = panel.figure.axes[0]
    assert "r / b" not in ax.get_xlabel() and "counts" in ax.get_xlabel()
    curve = [line for line in ax.get_lines() if line.get_label() == "k apart"][0]
    panel.controls["k"].value = 4
    at_half = np.array(curve.get_ydata(), float)
    panel.controls["epsilon"].value = 1.8
    # loss / eps against the release in counts does not depend on eps (b = 1/eps)
    np.testing.assert_allclose(np.array(curve.get_ydata(), float), at_half)
    r = np.array(curve.get_xdata(), float)
    for eps in (0.3, 1.8):
        exact = dp.mechanisms.privacy_loss(r, 0.0, 4.0, 1 / eps) / eps
        np.testing.assert_allclose(at_half, exact, atol=1e-9)
    panel.close()


# ------------------------------------------------------------------ notebook 13: epsilon as a test
def test_13_delta_misreading_direction_and_both_directions():
    sec = flat(section("13", "2."))
    assert 'reading δ as "the probability that the loss exceeds ε" overstates it' not in sec
    assert "understates the risk" in sec and "except with probability $\\delta$" in sec
    assert "larger of the two directions" in sec
    assert "larger of the two directions' values" in flat(section("13", "Recap"))
    out = outputs("13")
    assert "Pr[L > ε] = 0.000161, 16.1 times larger" in out
    assert "smallest δ = 0.1176 (the larger)" in out and "H(x′‖x) = 0.0000" in out
    p, q = np.array([0.50, 0.30, 0.20]), np.array([0.62, 0.33, 0.05])
    assert dp.definition.smallest_delta(p, q, 0.5) == max(dp.definition.hockey_stick_divergence(p, q, 0.5),
                                               dp.definition.hockey_stick_divergence(q, p, 0.5))


def test_false_alarm_level_is_one_figure():
    assert "10⁻⁶ per side" not in markdown("13")
    assert "probability at most $10^{-6}$" in flat(section("13", "6."))
    a7 = flat(markdown("A7"))
    assert "2·10⁻⁶" not in a7 and "at most $10^{-6}$" in a7
    doc = flat(tradeoff.outside_region.__doc__)
    assert "2 * level" not in doc and "at most ``level``" in doc



def test_13_gdp_section_and_functions():
    sec = flat(section("13", "5."))
    assert "\\sqrt{\\mu_1^2 + \\dots + \\mu_k^2}" in sec and "central-limit" in sec
    assert "\\Phi\\Bigl(-\\frac{\\varepsilon}{\\mu} + \\frac{\\mu}{2}\\Bigr)" in sec
    assert tradeoff.gdp_compose([0.5] * 10) == pytest.approx(math.sqrt(2.5))
    # composition is exact: the exact accountant of ten Gaussians agrees with one conversion
    mu = tradeoff.gdp_compose([0.5] * 10)
    exact = dp.gaussian_epsilon(2.0, 1e-5, k=10)
    assert dp.tradeoff.privacy_loss_distribution("gaussian", sigma=1 / mu).epsilon(1e-5) == pytest.approx(exact, rel=1e-6)
    wrong = dp.tradeoff.privacy_loss_distribution("gaussian", sigma=1 / (0.5 * 10)).epsilon(1e-5)  # sum of mu
    assert abs(wrong - exact) > 1.0
    # conversion: the closed form of Balle & Wang
    phi = stats.norm.cdf
    for e in (0.3, 1.0, 2.5):
        closed = phi(-e / mu + mu / 2) - math.exp(e) * phi(-e / mu - mu / 2)
        assert tradeoff.gdp_delta(e, mu) == pytest.approx(closed, rel=1e-9)
    assert "7.511" in outputs("13") and "7.511" in sec


def test_13_gdp_clt_matches_a_simulated_composition():
    rng = np.random.default_rng(1319)
    eps0, k, n = 0.1, 100, 60_000
    b = dp.laplace_scale(1, eps0)
    s = np.zeros(n)
    for _ in range(k):
        s += dp.mechanisms.privacy_loss(dp.laplace_mechanism(0.0, 1, eps0, rng=rng, size=n), 0.0, 1.0, b)
    mu = tradeoff.gdp_clt_mu(dp.tradeoff.privacy_loss_distribution("laplace", epsilon=eps0).mean, s.var() / k, k)
    for e in (0.5, 1.0):
        w = np.maximum(0, 1 - np.exp(e - s))
        se = w.std() / math.sqrt(n)
        assert abs(w.mean() - tradeoff.gdp_delta(e, mu)) < 5 * se + 2e-3
        # a wrong twin (mu from the basic-composition epsilon) is far off
        assert abs(w.mean() - tradeoff.gdp_delta(e, k * eps0)) > 0.3


# ------------------------------------------------------------------ notebook 14: clipping and means
def test_14_clipping_citation_and_adaptive_composition():
    sec1 = flat(section("14", "1."))
    assert "whatever they earn (Dwork & Roth 2014, §3.3)" not in sec1
    assert "Definition 3.1" in sec1
    sec4 = flat(section("14", "4."))
    assert "the whole release is ε-DP by basic composition" not in sec4
    assert "**adaptive** composition" in sec4


def _ks(sample, reference):
    return stats.ks_2samp(sample, reference).pvalue


def test_14_centred_clipped_mean_noise_and_a_wrong_twin():
    x = np.array([3.0, 7.5, 12.0, 19.0, 1.0, 8.0] * 5)
    lo, hi, eps = 0.0, 20.0, 1.0
    rng = np.random.default_rng(14)
    got = clipping.centred_clipped_mean(x, lo, hi, eps, rng=rng, size=60_000)
    c = (lo + hi) / 2

    def construction(scale_sum, size):
        s = np.sum(np.clip(x, lo, hi) - c) + rng.laplace(0, scale_sum, size)
        n = x.size + rng.laplace(0, 2 / eps, size)
        return np.clip(c + s / np.maximum(n, 1), lo, hi)
    assert _ks(got, construction((hi - lo) / eps, 60_000)) > 1e-6                  # (u - l)/2 at eps/2
    assert _ks(got, construction(2 * max(abs(lo), abs(hi)) / eps, 60_000)) < 1e-6  # uncentred scale
    sec = flat(section("14", "5."))
    assert "\\Delta = \\frac{u - l}{2}" in sec and "\\Delta = \\frac{u - l}{n}" in sec
    assert "Finding the range privately" in sec


def test_14_range_is_found_privately_before_clipping():
    """Two private quantiles at eps_r/2 each find the range in a wide public one; the
    centred mean gets the rest of the budget, so the releases add up to the stated
    total; the notebook prints the range found and what it costs in accuracy."""
    src = code("14")
    assert "dp.clipping.private_quantile(incomes, 0.01, 0.0, public_range, eps_range / 2" in src
    assert "dp.clipping.private_quantile(incomes, 0.9, 0.0, public_range, eps_range / 2" in src
    assert "dp.clipping.centred_clipped_mean(incomes, lo_r, hi_r, total - eps_range" in src
    out = outputs("14")
    assert "private range: median [" in out and "RMSE of the centred mean" in out
    # the composition the text states: eps_r/2 + eps_r/2 + (1 - eps_r) = 1
    sec = flat(section("14", "5."))
    assert r"$\varepsilon_r/2$ each" in sec and r"$1 - \varepsilon_r$" in sec
    assert "compose adaptively to $\\varepsilon = 1$" in sec


def test_14_known_n_mean_is_laplace_at_width_over_n():
    x = np.linspace(0, 30, 40)
    rng = np.random.default_rng(141)
    got = clipping.known_n_mean(x, 0.0, 20.0, 0.5, rng=rng, size=50_000)
    centre = np.clip(x, 0, 20).mean()
    assert stats.kstest(got, stats.laplace(centre, 20 / 40 / 0.5).cdf).pvalue > 1e-6
    assert stats.kstest(got, stats.laplace(centre, 20 / 0.5).cdf).pvalue < 1e-6   # no 1/n: wrong
    with pytest.raises(ValueError, match="values"):
        clipping.known_n_mean([], 0.0, 1.0, 1.0)


# ------------------------------------------------------------------ notebook 15: the sparse vector
def test_15_accuracy_theorem_hypothesis_and_delta():
    sec = flat(section("15", "4."))
    assert "no query before the last" in sec.replace("*", "")
    assert "8\\Delta\\,(\\ln k + \\ln(2/\\beta))" in sec
    assert sparse_vector.accuracy_bound(40, 0.5, 0.05, sensitivity=2.0) == pytest.approx(
        2 * sparse_vector.accuracy_bound(40, 0.5, 0.05))


def test_15_variant_attributions_follow_lyu_su_li():
    v = sparse_vector.VARIANTS
    assert "answers every query" in v["no_query_noise"][2]
    assert "not one of Lyu, Su & Li's algorithms" in v["fresh_threshold_noise"][2]
    assert "Alg. 6" in v["no_stop"][2]
    assert "Alg. 1 and 2 with c = 1" in v["above_threshold"][2]
    out = outputs("15")
    assert all(text[2] in out for text in v.values())           # the sources are shown
    assert "Lyu, Su & Li 2017, Algorithm 5 (Stoddard et al. 2014)" not in out


# ------------------------------------------------------------------ notebook 16: modern accounting
def test_16_and_18_say_add_remove_and_poisson_only():
    for name in ("16", "18"):
        text = markdown(name)
        assert "add/remove" in text, name
        assert "Poisson" in text and "fixed size" in text, name
        assert "does not cover" in text, name


def test_16_zcdp_and_rdp_compared_with_the_same_conversion():
    text = markdown("16")
    assert "zCDP is 22% above it, RDP 7% above" not in text
    assert "2.4191" in text and "conversion" in text
    out = outputs("16")
    assert "zCDP improved 2.4191, RDP improved 2.4191" in out
    rho = 100 * dp.rdp.gaussian_zcdp(20.0)
    assert round(dp.zcdp_to_dp(rho, 1e-6), 4) == 2.4191
    grid = dp.rdp.DEFAULT_ORDERS
    assert round(dp.rdp_to_dp(grid, 100 * dp.gaussian_rdp(grid, 20.0), 1e-6), 4) == 2.4191


def test_16_rdp_looseness_for_few_steps_is_measured():
    out = outputs("16")
    table = re.search(r"ε, PLD \(tight\)\s+ε, RDP\s+RDP / PLD.*", out, flags=re.S)
    assert table, "the PLD-vs-RDP table is missing"
    rows = {int(m.group(1)): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^(\d+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+$", table.group(0), re.M)}
    assert sorted(rows) == [1, 10, 100, 1000]
    assert rows[1] == (0.20, 0.96) and rows[1000][0] == 1.83
    for T, (tight, loose) in rows.items():
        assert tight < loose
    text = markdown("16")
    assert "0.20" in text and "0.96" in text


def test_16_classic_dpsgd_example_is_abadi_et_al():
    text = markdown("16")
    assert "the classic DP-SGD example, q = 0.01, σ = 1" not in text
    assert r"$\sigma = 4$" in text and r"$T = 10{,}000$" in text and "Abadi" in text
    assert "steps=10_000" in code("16")


def test_16_try_it_points_to_the_integration_cell():
    cells = notebook("16").cells
    i = next(i for i, c in enumerate(cells) if c.cell_type == "markdown"
             and "Why bother with a curve" in c.source)
    assert "in the cell above" not in cells[i].source
    assert "integrate.quad" in cells[i].source
    assert any("integrate.quad" in c.source and "sigma = 2.0" in c.source
               for c in cells[:i] if c.cell_type == "code")


# ------------------------------------------------------------------ notebook 17: the local model
def test_17_central_baseline_judged_alike():
    text, src = markdown("17"), code("17")
    assert "√(2n)" not in text and r"\sqrt{n/2}" in text
    assert "sensitivity=2.0" in src
    assert r"\mathrm{Lap}(2/\varepsilon)" in text
    # the exercise's key: 4.6e5 people, not 1.84e6
    needed = dp.local.local_variance(1, 8, 1.0, mechanism="oue") / \
        dp.local.central_variance(1_000, 1.0, sensitivity=2.0)
    assert needed == pytest.approx(4.6e5, rel=0.01)
    assert "central_variance(1_000, 1.0, sensitivity=2.0)" in src
    # measured ratio about sqrt(n/2) = 71 at n = 10,000
    assert "ratio 70 (√(n/2) = 71)" in outputs("17")


def test_17_intro_and_recap_agree_with_the_derivation():
    text = markdown("17")
    assert "1/(ε√n)" not in text
    assert text.count(r"2/(\varepsilon\sqrt{n})") >= 3           # intro, section 4, recap


# ------------------------------------------------------------------ notebook 18: DP-SGD
def test_18_attack_plays_the_add_remove_game():
    src, text = code("18"), markdown("18")
    assert "membership_game" in src                       # each example in or out by a coin
    assert "X_test[:n], y_test[:n])\n    alpha, beta" not in src
    assert "add/remove" in text and "swap" in text
    assert "119 of the 602" not in text                    # the swap comparison's count
    out = outputs("18")
    assert "ε = 1.39 (exact, add/remove)" in out
    # the region is drawn at the exact add/remove ε the PLD accountant gives
    eps = dp.PLDAccountant().compose_gaussian(3.0, q=0.1, steps=100).epsilon(1e-5)
    assert f"{eps:.2f}" == "1.39"


def test_18_game_is_add_remove_and_private_model_is_never_flagged():
    """The game's mask is an independent fair coin per example, and on three seeds the
    private model (σ = 3) has no threshold outside the region of its exact ε while the
    non-private one has many."""
    sgd = dp.sgd
    ex = sgd.EXAMPLE
    X, y, Xt, yt = sgd.make_overfit_data(ex["n_train"], ex["n_test"], ex["d"],
                                         noise_scale=ex["noise_scale"], signal=ex["signal"], rng=0)
    pool_X, pool_y = np.vstack([X, Xt[:300]]), np.r_[y, yt[:300]]
    recipe = dict(epochs=ex["epochs"], sampling_rate=ex["sampling_rate"],
                  learning_rate=ex["learning_rate"], delta=ex["delta"])
    eps = dp.PLDAccountant().compose_gaussian(3.0, q=0.1, steps=100).epsilon(1e-5)
    for seed in (18, 19, 20):
        coins = np.random.default_rng(seed).random(600) < 0.5
        flagged = {}
        for name, kw in [("plain", dict(clip=np.inf, noise_multiplier=0.0)),
                         ("private", dict(clip=1.0, noise_multiplier=3.0))]:
            r, joined = sgd.membership_game(pool_X, pool_y, rng=seed, **kw, **recipe)
            assert np.array_equal(joined, coins)
            loss = sgd.logistic_loss(r.weights, pool_X, pool_y)
            a, b, _ = dp.sgd.membership_inference(loss[joined], loss[~joined])
            flagged[name] = int(dp.tradeoff.outside_region(
                a, b, int((~joined).sum()), int(joined.sum()), eps, 1e-5, level=1e-6).sum())
        assert flagged["private"] == 0 and flagged["plain"] > 50, flagged


def test_18_exercise_4_asks_about_the_swap():
    cells = notebook("18").cells
    i = next(i for i, c in enumerate(cells) if c.cell_type == "code" and "answer_4" in c.source)
    assert 'check_choice(answer_4, "swap"' in cells[i].source
    assert "non-private" not in cells[i].source


def test_18_no_subsampling_figure_is_named_rdp_and_exact_given():
    text, out = markdown("18"), outputs("18")
    assert "would cost\nε = 20.39:" not in text
    assert "20.39$ by RDP, exactly $19.13" in text
    assert "20.39 without" in out and "19.13 without" in out
    assert round(dp.gaussian_epsilon(3.0, 1e-5, k=100), 2) == 19.13


def test_18_less_noise():
    assert "Fewer noise" not in markdown("18")
    assert "Less noise means" in markdown("18")
