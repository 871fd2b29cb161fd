"""What notebooks 15 and 17's new sections compute: vectorised runs of Sparse and
NumericSparse, their error and accuracy bound, report noisy max c times, and the local
protocols' variances and crossing points; and the two panels that draw them. Statistical
tests at alpha = 1e-6, each against a wrong twin."""

import math

import numpy as np
import pytest
from scipy import stats

from conftest import ALPHA, chisq_pvalue
import dpteach as dp
from dpteach import local, local_protocols as lp, panels
from dpteach import sparse_vector as sv

ANSWERS = np.array([3.0, 9.0, 4.0, 11.0, 2.0, 10.0, 12.0, 1.0])


def _tuples(answered):
    return [tuple(np.flatnonzero(row)) for row in answered]


def _histogram(outcomes, support):
    index = {o: j for j, o in enumerate(support)}
    counts = np.zeros(len(support))
    for o in outcomes:
        counts[index[o]] += 1
    return counts


def _two_sample_pvalue(a, b):
    """Chi-square test that two samples of outcomes come from one distribution (outcomes
    seen fewer than 20 times in all are pooled into one cell)."""
    support = sorted(set(a) | set(b))
    table = np.array([_histogram(a, support), _histogram(b, support)])
    rare = table.sum(axis=0) < 20
    table = np.column_stack([table[:, ~rare], table[:, rare].sum(axis=1)])
    table = table[:, table.sum(axis=0) > 0]
    return stats.chi2_contingency(table).pvalue


def test_sparse_draws_has_sparse_distribution_and_rejects_a_twin():
    t, eps, c = 8.0, 2.0, 2
    got = _tuples(sv.sparse_draws(ANSWERS, t, eps, c, size=40_000, rng=np.random.default_rng(1)).answered)
    rng = np.random.default_rng(2)
    ref = [tuple(dp.sparse(ANSWERS, t, eps, c, rng=rng)) for _ in range(40_000)]
    twin = _tuples(sv.sparse_draws(ANSWERS, t, eps / c, c, size=40_000,        # budget split twice
                                   rng=np.random.default_rng(3)).answered)
    assert _two_sample_pvalue(got, ref) > ALPHA
    assert _two_sample_pvalue(got, twin) < ALPHA


def test_sparse_draws_with_c_one_is_above_threshold():
    k = ANSWERS.size
    runs = sv.sparse_draws(ANSWERS, 8.0, 1.0, 1, size=50_000, rng=np.random.default_rng(4)).answered
    index = np.where(runs.any(axis=1), runs.argmax(axis=1), k)
    counts = np.bincount(index, minlength=k + 1)
    assert chisq_pvalue(counts, sv.above_threshold_probabilities(ANSWERS, 8.0, 1.0)) > ALPHA
    assert chisq_pvalue(counts, sv.above_threshold_probabilities(ANSWERS, 8.0, 2.0)) < ALPHA


def test_sparse_draws_traces_are_consistent():
    runs = sv.sparse_draws(ANSWERS, 8.0, 1.0, 3, size=2_000, rng=np.random.default_rng(5))
    assert (runs.answered.sum(axis=1) <= 3).all() and runs.values is None   # Sparse: no value
    before = np.cumsum(runs.answered, axis=1) - runs.answered
    np.testing.assert_array_equal(runs.examined, before < 3)
    np.testing.assert_array_equal(runs.answered,
                                  runs.examined & (runs.noisy_answers >= runs.noisy_thresholds))
    # the threshold changes only right after an answer
    moved = runs.noisy_thresholds[:, 1:] != runs.noisy_thresholds[:, :-1]
    assert not (moved & ~runs.answered[:, :-1]).any()
    assert (moved == (runs.answered[:, :-1] & runs.examined[:, 1:])).all()


def test_numeric_sparse_draws_release_laplace_values_with_the_right_scale():
    eps, c = 1.0, 2
    b_value = sv.sparse_scales(eps, c, numeric=True)[2]
    assert b_value == pytest.approx(9 * c / eps)
    runs = sv.sparse_draws(ANSWERS, 8.0, eps, c, size=20_000, numeric=True, rng=np.random.default_rng(6))
    noise = (runs.values - ANSWERS)[runs.answered]
    assert stats.kstest(noise, stats.laplace(scale=b_value).cdf).pvalue > ALPHA
    assert stats.kstest(noise, stats.laplace(scale=2 * c / eps).cdf).pvalue < ALPHA   # eps not split


def test_sparse_scales_are_above_thresholds_at_epsilon_over_c():
    for eps, c in [(0.5, 1), (1.0, 3), (2.0, 10)]:
        b_t, b_q, b_v = sv.sparse_scales(eps, c)
        assert (b_t, b_q) == pytest.approx(sv.above_threshold_scales(eps / c)) and b_v is None
        assert sv.sparse_scales(eps, c, numeric=True)[:2] == pytest.approx(
            sv.above_threshold_scales(8 * eps / 9 / c))


def test_sparse_run_error_with_c_one_is_run_error():
    a = sv.example_answers(30)
    for index in range(a.size + 1):
        answered = np.arange(a.size) == index
        assert sv.sparse_run_error(a, 40.0, answered, 1) == sv.run_error(a, 40.0, index)


def test_sparse_run_error_ignores_queries_after_the_stop():
    a = np.array([5.0, 20.0, 20.0, 50.0])
    answered = np.array([True, True, False, False])
    assert sv.sparse_run_error(a, 10.0, answered, 2) == 5.0      # stop after 2: 50 unseen
    assert sv.sparse_run_error(a, 10.0, answered, 3) == 40.0     # c = 3: 20 and 50 passed over


def test_sparse_accuracy_bound_is_c_runs_of_theorem_3_24():
    k, eps, beta = 60, 1.0, 0.05
    for c in (1, 3, 10):
        want = 8 * c * (math.log(k) + math.log(2 * c / beta)) / eps
        assert sv.sparse_accuracy_bound(k, eps, beta, c) == pytest.approx(want)
        assert sv.sparse_accuracy_bound(k, eps, beta, c) != pytest.approx(   # twin: beta not split
            8 * c * (math.log(k) + math.log(2 / beta)) / eps) or c == 1


def test_sparse_bound_covers_the_measured_error():
    a = sv.example_answers(60)
    for c in (1, 3, 6):
        runs = sv.sparse_draws(a, 60.0, 1.0, c, size=4_000, rng=np.random.default_rng(c))
        err = sv.sparse_run_error(a, 60.0, runs.answered, c)
        assert np.quantile(err, 0.95) <= sv.sparse_accuracy_bound(a.size, 1.0, 0.05, c)


def test_noisy_top_c_picks_c_distinct_queries_and_the_top_ones_at_large_epsilon():
    a = sv.example_answers(60)
    rng = np.random.default_rng(7)
    for c in (1, 3, 5):
        chosen = sv.noisy_top_c(a, 1.0, c, rng=rng)
        assert len(chosen) == len(set(chosen)) == c
    top = set(np.argsort(-a, kind="stable")[:1])
    assert set(sv.noisy_top_c(a, 1e4, 1, rng=rng)) == top


def test_noisy_top_c_with_c_one_is_report_noisy_max():
    a = np.array([3.0, 5.0, 4.0, 1.0])
    rng = np.random.default_rng(8)
    got = np.bincount([sv.noisy_top_c(a, 1.0, 1, rng=rng)[0] for _ in range(20_000)], minlength=4)
    rng = np.random.default_rng(9)
    ref = np.bincount([dp.report_noisy_max(a, 1.0, 1.0, rng=rng) for _ in range(60_000)], minlength=4)
    assert chisq_pvalue(got, ref / ref.sum()) > ALPHA
    rng = np.random.default_rng(10)
    twin = np.bincount([dp.report_noisy_max(a, 1.0, 1.0, monotonic=True, rng=rng)
                        for _ in range(60_000)], minlength=4)
    assert chisq_pvalue(got, twin / twin.sum()) < ALPHA


# ------------------------------------------------------------------ local protocols
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_protocol_variances_are_the_lesson_formulas(eps):
    ks = np.array([2, 5, 64, 1000])
    v = lp.protocol_variances(ks, eps)
    for m in ("krr", "sue", "oue"):
        np.testing.assert_allclose(v[m], [dp.local_variance(1, int(k), eps, mechanism=m) for k in ks])
    np.testing.assert_allclose(v["olh"], dp.olh_variance(1, eps))
    np.testing.assert_allclose(v["oue"], 4 * math.exp(eps) / math.expm1(eps) ** 2)
    e = math.exp(eps)
    np.testing.assert_allclose(v["krr"], (e + ks - 2) / (e - 1) ** 2)
    # OLH at g = e^eps + 1 exactly has OUE's variance; rounding g can only cost
    assert dp.olh_variance(1, eps, g=e + 1) == pytest.approx(v["oue"][0])
    assert v["olh"][0] >= v["oue"][0] * (1 - 1e-12)


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_krr_crossover_k_is_where_the_variances_meet(eps):
    k_oue = lp.krr_crossover_k(eps, against="oue")
    assert k_oue == pytest.approx(3 * math.exp(eps) + 2)
    assert k_oue != pytest.approx(3 * math.exp(eps))                      # twin: k - 2 dropped
    for against in ("oue", "sue", "olh"):
        k = lp.krr_crossover_k(eps, against=against)
        lo, hi = math.floor(k), math.ceil(k)
        if lo < 2:
            continue
        v = lp.protocol_variances(np.array([lo, hi]), eps)
        assert v["krr"][0] <= v[against][0] <= v["krr"][1]
        # k-RR's variance is linear in k: interpolating at k meets the other exactly
        assert np.interp(k, [lo, hi], v["krr"]) == pytest.approx(v[against][0]) if hi > lo else True
    for k in range(2, 40):
        assert local.krr_is_better(k, eps) == (k < k_oue)


@pytest.mark.parametrize("k", [6, 16, 64, 1000])
def test_krr_crossover_epsilon_is_where_the_variances_meet(k):
    e = lp.krr_crossover_epsilon(k, against="oue")
    assert e == pytest.approx(math.log((k - 2) / 3), abs=1e-9)
    for against in ("oue", "olh"):
        e = lp.krr_crossover_epsilon(k, against=against)
        gap = [lp.protocol_variances(k, x)["krr"] - lp.protocol_variances(k, x)[against]
               for x in (e - 1e-6, e + 1e-6)]
        assert gap[0] > 0 > gap[1] or abs(gap[0] - gap[1]) > 0       # k-RR worse below, better above
    assert lp.krr_crossover_epsilon(4) is None                     # k <= 5: k-RR always better


def test_report_bits():
    assert lp.report_bits(1024, 1.0, "krr") == 10
    assert lp.report_bits(1024, 1.0, "oue") == 1024
    assert lp.report_bits(1024, 1.0, "olh") == 2 + 64            # g = 4 buckets
    with pytest.raises(ValueError, match="protocol"):
        lp.report_bits(8, 1.0, "rappor")


# ------------------------------------------------------------------ the two panels
def test_local_protocols_panel_marks_the_crossings_the_lesson_computes():
    panel = panels.local_protocols_variance(epsilon=1.0, k=64)
    ax1, ax2 = panel.figure.axes[:2]
    cross_k = [ln for ln in ax1.get_lines() if "3e" in (ln.get_label() or "")][0]
    assert cross_k.get_xdata()[0] == pytest.approx(lp.krr_crossover_k(1.0))
    cross_e = [ln for ln in ax2.get_lines() if ln.get_label() == "k-RR = OUE"][0]
    assert cross_e.get_xdata()[0] == pytest.approx(math.log(62 / 3))
    assert "best: OUE" in panel.status.value
    panel.controls["k"].value = 4
    assert "best: KRR" in panel.status.value
    panel.close()


def test_sparse_answers_panel_shows_the_lesson_runs():
    panel = panels.sparse_answers(epsilon=1.0, c=3, threshold=60.0, seed=4)
    ax1 = panel.figure.axes[0]
    run = sv.sparse_draws(sv.example_answers(60), 60.0, 1.0, 3, size=1, rng=np.random.default_rng([4, 15]))
    hits = [ln for ln in ax1.get_lines() if ln.get_label() == "answered"][0]
    np.testing.assert_array_equal(hits.get_xdata(), np.flatnonzero(run.answered[0]))
    first = panel.png()
    panel.controls["seed"].value = 5
    assert panel.png() != first
    panel.controls["seed"].value = 4
    assert panel.png() == first
    panel.close()


def test_sparse_answers_panel_error_grows_with_c():
    panel = panels.sparse_answers(epsilon=1.0, threshold=60.0)
    ax2 = panel.figure.axes[1]
    measured = [ln for ln in ax2.get_lines() if ln.get_label().startswith("measured")][0].get_ydata()
    bound = [ln for ln in ax2.get_lines() if ln.get_label().startswith("bound")][0].get_ydata()
    assert measured[-1] > measured[0] and (np.diff(bound) > 0).all()
    assert (measured <= bound).all()
    panel.close()
