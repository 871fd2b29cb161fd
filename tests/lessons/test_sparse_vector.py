"""AboveThreshold and its broken variants (dpteach.sparse_vector, notebook 15).

Statistical tests run at alpha = 1e-6 and each is paired with a wrong twin it rejects."""

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import audit, sparse_vector as sv
from conftest import ALPHA, chisq_pvalue

ANSWERS = np.array([3.0, 1.0, 5.0, 2.0, 8.0, 0.0, 9.0])
T, EPS = 6.0, 1.0


def _sum_sf(t, b1, b2):
    """Pr[L1 + L2 >= t] for independent Lap(b1), Lap(b2), b1 != b2, t >= 0 (closed form)."""
    return (b1 ** 2 * np.exp(-t / b1) - b2 ** 2 * np.exp(-t / b2)) / (2 * (b1 ** 2 - b2 ** 2))


def test_scales():
    assert sv.above_threshold_scales(0.5, 2.0) == (pytest.approx(8.0), pytest.approx(16.0))


@pytest.mark.parametrize("gap", [0.0, 1.5, 7.0])
def test_one_query_closed_form(gap):
    # one query: reported iff nu - rho >= T - a, and nu - rho is a sum of two Laplaces
    eps, d = 0.7, 1.0
    b_t, b_q = 2 * d / eps, 4 * d / eps
    p = sv.above_threshold_probabilities([T - gap], T, eps, sensitivity=d)
    assert p[0] == pytest.approx(_sum_sf(gap, b_q, b_t), rel=1e-9)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    if gap > 0:   # the wrong twin: query noise at 2 Delta/eps
        assert abs(p[0] - _sum_sf(gap, 2 * d / eps + 1e-9, b_t)) > 1e-3


def test_exact_probabilities_match_both_samplers(rng):
    p = sv.above_threshold_probabilities(ANSWERS, T, EPS)
    assert p.shape == (ANSWERS.size + 1,) and p.sum() == pytest.approx(1.0, abs=1e-10)
    draws = sv.above_threshold_draws(ANSWERS, T, EPS, size=300_000, rng=rng)
    counts = np.bincount(draws, minlength=p.size)
    assert chisq_pvalue(counts, p) > ALPHA
    # the one-at-a-time algorithm a student reads
    loop = [dp.above_threshold(ANSWERS, T, EPS, rng=rng) for _ in range(20_000)]
    loop_counts = np.bincount([ANSWERS.size if i is None else i for i in loop], minlength=p.size)
    assert chisq_pvalue(loop_counts, p) > ALPHA
    # wrong twins: half the budget, or fresh threshold noise per query
    for twin in (sv.above_threshold_probabilities(ANSWERS, T, EPS / 2),
                 sv.variant_probabilities("fresh_threshold_noise", ANSWERS, T, EPS)):
        assert chisq_pvalue(counts, twin) < ALPHA
    assert chisq_pvalue(loop_counts, sv.above_threshold_probabilities(ANSWERS, T, EPS / 2)) < ALPHA


def test_returns_index_or_none():
    assert dp.above_threshold([0.0, 0.0], 1e6, 1.0, rng=0) is None
    i = dp.above_threshold([0.0, 1e6, 0.0], 0.0, 1.0, rng=0)
    assert isinstance(i, int) and i in (0, 1)
    assert dp.above_threshold([-1e6, 1e6], 0.0, 1.0, rng=0) == 1


@pytest.mark.parametrize("name", ["no_query_noise", "fresh_threshold_noise"])
def test_variant_probabilities_match_their_samplers(rng, name):
    p = sv.variant_probabilities(name, ANSWERS, T, EPS)
    counts = np.bincount(sv.variant_mechanism(name, T, EPS)(ANSWERS, 300_000, rng), minlength=p.size)
    assert chisq_pvalue(counts, p) > ALPHA
    assert chisq_pvalue(counts, sv.above_threshold_probabilities(ANSWERS, T, EPS)) < ALPHA


def test_exact_loss_stays_within_epsilon_however_many_queries():
    for k in (1, 10, 50):
        for x, y in [(np.zeros(k), np.ones(k)), (np.r_[np.ones(k), 0.0], np.r_[np.zeros(k), 1.0])]:
            for t in (0.5, 3.0, 8.0):
                loss = dp.definition.privacy_loss_between(sv.above_threshold_probabilities(x, t, EPS),
                                               sv.above_threshold_probabilities(y, t, EPS))
                assert loss <= EPS * (1 + 1e-9), (k, t, loss)
    # the broken variant's loss grows with the number of below-threshold queries
    fresh = [dp.definition.privacy_loss_between(sv.variant_probabilities("fresh_threshold_noise", np.zeros(k), 3.0, EPS),
                                     sv.variant_probabilities("fresh_threshold_noise", np.ones(k), 3.0, EPS))
             for k in (1, 10, 50)]
    assert fresh[0] <= EPS and fresh[1] < fresh[2] and fresh[2] > 3 * EPS
    assert dp.definition.privacy_loss_between([0.5, 0.5], [1.0, 0.0]) == np.inf


# ------------------------------------------------------------------ audits
ZEROS, ONES = np.zeros(30), np.ones(30)
HALVES_X, HALVES_Y = np.r_[np.ones(4), np.zeros(4)], np.r_[np.zeros(4), np.ones(4)]


@pytest.mark.parametrize("x, y, t", [(ZEROS, ONES, 4.0), (np.array([1.0, 0.0]), np.array([0.0, 1.0]), 0.5),
                                     (HALVES_X, HALVES_Y, 0.5)])
def test_audit_does_not_refute_above_threshold(x, y, t):
    res = audit.audit(sv.variant_mechanism("above_threshold", t, EPS), x, y, n=1_000_000, alpha=ALPHA,
                      rng=np.random.default_rng(5), claimed_epsilon=EPS)
    assert not res.refuted, res.summary()


@pytest.mark.parametrize("name, x, y, t", [
    ("no_query_noise", np.array([1.0, 0.0]), np.array([0.0, 1.0]), 0.5),
    ("fresh_threshold_noise", ZEROS, ONES, 4.0),
    ("no_stop", HALVES_X, HALVES_Y, 0.5),
])
def test_audit_refutes_the_broken_variants(name, x, y, t):
    res = audit.audit(sv.variant_mechanism(name, t, EPS), x, y, n=1_000_000, alpha=ALPHA,
                      rng=np.random.default_rng(6), claimed_epsilon=EPS)
    assert res.refuted, res.summary()
    assert not sv.VARIANTS[name][1] and sv.VARIANTS["above_threshold"][1]


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call, exc, word", [
    (lambda: dp.above_threshold(ANSWERS, T, float("nan")), ValueError, "epsilon"),
    (lambda: dp.above_threshold(ANSWERS, T, 0), ValueError, "epsilon"),
    (lambda: dp.above_threshold(ANSWERS, T, True), TypeError, "epsilon"),
    (lambda: dp.above_threshold(ANSWERS, float("inf"), 1.0), ValueError, "threshold"),
    (lambda: dp.above_threshold(ANSWERS, "6", 1.0), TypeError, "threshold"),
    (lambda: dp.above_threshold(ANSWERS, T, 1.0, sensitivity=-1), ValueError, "sensitivity"),
    (lambda: dp.above_threshold(ANSWERS, T, 1.0, sensitivity=0), ValueError, "sensitivity"),
    (lambda: dp.above_threshold([1.0, float("nan")], T, 1.0), ValueError, "query_answers"),
    (lambda: dp.above_threshold([[1.0, 2.0]], T, 1.0), ValueError, "query_answers"),
    (lambda: dp.above_threshold([], T, 1.0), ValueError, "query_answers"),
    (lambda: dp.above_threshold("abc", T, 1.0), TypeError, "query_answers"),
    (lambda: dp.above_threshold(ANSWERS, T, 1.0, rng="x"), TypeError, "rng"),
    (lambda: sv.above_threshold_draws(ANSWERS, T, 1.0, size=0), ValueError, "size"),
    (lambda: sv.variant_mechanism("nope", T, 1.0), ValueError, "name"),
    (lambda: sv.variant_probabilities("no_stop", ANSWERS, T, 1.0), ValueError, "name"),
    (lambda: dp.definition.privacy_loss_between([0.5, 0.5], [1.0]), ValueError, "same length"),
])
def test_bad_input(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


def test_accuracy_bound_holds_in_simulation(rng):
    a = sv.example_answers(60)
    k, t, eps, beta = 40, 70.0, 0.5, 0.05
    alpha = sv.accuracy_bound(k, eps, beta)
    assert alpha == pytest.approx(8 * (np.log(k) + np.log(2 / beta)) / eps)
    assert alpha != pytest.approx(8 * (np.log10(k) + np.log10(2 / beta)) / eps)    # base-10 twin
    idx = sv.above_threshold_draws(a[:k], t, eps, size=20_000, rng=rng)
    errors = np.array([sv.run_error(a[:k], t, i) for i in range(k + 1)])[idx]
    assert sv.run_error([1.0, 5.0, 4.5], 4.0, 2) == 1.0 and sv.run_error([1.0, 3.0], 4.0, None) == 0.0
    assert sv.run_error([6.0, 3.0], 4.0, 1) == 2.0
    # Pr[error > alpha] <= beta: a one-sided binomial test at alpha 1e-6
    assert stats.binomtest(int((errors > alpha).sum()), idx.size, beta, alternative="greater").pvalue > ALPHA


# ------------------------------------------------------------------ the standard bad values
from _bad_values import (BAD_COUNT, BAD_EPSILON, BAD_REAL, BAD_RNG, BAD_SCORES, BAD_SEED,  # noqa: E402
                         BAD_SENSITIVITY_POSITIVE, check_row, rows)

_GOOD = dict(query_answers=[1.0, 5.0], threshold=3.0, epsilon=0.5, sensitivity=1.0)
_COMMON = dict(query_answers=BAD_SCORES, threshold=BAD_REAL, epsilon=BAD_EPSILON,
               sensitivity=BAD_SENSITIVITY_POSITIVE)
_TABLE = [
    (sv.above_threshold, _GOOD, dict(_COMMON, rng=BAD_RNG)),
    (sv.above_threshold_draws, dict(_GOOD, size=4), dict(_COMMON, rng=BAD_RNG, size=BAD_COUNT)),
    (sv.above_threshold_probabilities, _GOOD, _COMMON),
    (sv.above_threshold_scales, dict(epsilon=0.5, sensitivity=1.0),
     dict(epsilon=BAD_EPSILON, sensitivity=BAD_SENSITIVITY_POSITIVE)),
    (sv.accuracy_bound, dict(k=10, epsilon=0.5, beta=0.05),
     dict(k=BAD_COUNT, epsilon=BAD_EPSILON, beta=BAD_REAL + [0.0, 1.0, -0.1])),
    (sv.example_answers, dict(k=10, seed=1), dict(k=BAD_COUNT, seed=BAD_SEED)),
    (sv.run_error, dict(query_answers=[1.0, 5.0], threshold=3.0, index=1),
     dict(query_answers=BAD_SCORES, threshold=BAD_REAL, index=[-1, 3, 1.5, "1", True, float("nan")])),
    (sv.variant_mechanism, dict(name="no_stop", threshold=3.0, epsilon=0.5, sensitivity=1.0),
     dict(name=["x", None, 3], threshold=BAD_REAL, epsilon=BAD_EPSILON, sensitivity=BAD_SENSITIVITY_POSITIVE)),
    (sv.variant_probabilities, dict(_GOOD, name="no_query_noise"), dict(_COMMON, name=["x", "no_stop", None])),
    (sv.no_stop_pattern_probability, dict(_GOOD, pattern=[True, False]),
     dict(_COMMON, pattern=[[True], [1, 0], ["a", "b"], None, [True, False, True]])),
]


@pytest.mark.parametrize("func, good, param, bad", rows(_TABLE))
def test_standard_bad_values_are_refused(func, good, param, bad):
    check_row(func, good, param, bad)


def test_no_stop_pattern_probability_matches_sampling(rng):
    x = np.r_[np.ones(3), np.zeros(3)]
    pattern = np.array([True, True, True, False, False, False])
    p = sv.no_stop_pattern_probability(x, pattern, 0.5, EPS)
    rows = sv.variant_mechanism("no_stop", 0.5, EPS)(x, 400_000, rng)
    hits = int(np.all(rows == pattern, axis=1).sum())
    assert stats.binomtest(hits, rows.shape[0], p).pvalue > ALPHA
    twin = sv.no_stop_pattern_probability(x, pattern, 0.5, EPS / 2)
    assert stats.binomtest(hits, rows.shape[0], twin).pvalue < ALPHA
    # the loss on the pattern grows with the number of answers above
    losses = [np.log(sv.no_stop_pattern_probability(np.r_[np.ones(m), np.zeros(m)], np.r_[[True] * m, [False] * m], 0.5, EPS)
                     / sv.no_stop_pattern_probability(np.r_[np.zeros(m), np.ones(m)], np.r_[[True] * m, [False] * m], 0.5, EPS))
              for m in (1, 2, 4)]
    assert losses[0] <= EPS < losses[2] and losses[0] < losses[1] < losses[2]
    with pytest.raises(ValueError, match="pattern"):
        sv.no_stop_pattern_probability(x, [True], 0.5, EPS)


# ------------------------------------------------------------------ notebook 15's text (issue 31)
def _notebook_15():
    import json
    from pathlib import Path
    nb = json.loads((Path(__file__).resolve().parents[2] / "notebooks" / "15_sparse_vector.ipynb").read_text())
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    out = "\n".join("".join(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
                    for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", []))
    return md, out


def test_notebook_15_states_sparse_hypothesis_and_shows_it_fails_on_its_stream():
    md, out = _notebook_15()
    assert "Theorem 3.26" in md and "at most $c$ queries have answer $\\ge T - \\alpha$" in md
    assert "hypothesis (at most c) holds" in out and "False" in out
    assert "The hypothesis fails on our stream" in md


def test_laplace_noisy_max_is_not_called_a_form_of_the_exponential_mechanism():
    md, out = _notebook_15()
    text = " ".join((md + sv.noisy_top_c.__doc__).split())
    assert "of which report noisy max is a form" not in text
    assert "Gumbel" in sv.noisy_top_c.__doc__ and "Laplace" in sv.noisy_top_c.__doc__
    for number in ("0.431", "0.388", "0.385", "1.16", "0.20"):     # quoted in the text
        assert number in md and number in out, number
