"""Tests for dpteach.exercises: every check passes a correct answer, fails the classic
wrong ones with a specific message, and reports unsolved answers without crashing.

check_mechanism is statistical (alpha = 1e-6, fixed seeds): each wrong twin below is
far outside what a correct mechanism produces, so these tests are never flaky."""

import math
import time

import numpy as np
import pytest

import dpteach as dp
from dpteach import exercises as ex
from dpteach.anonymity import four_anonymous_rules, generalize


# ------------------------------------------------------------------ student mechanisms
def correct(value, sensitivity, epsilon, rng):
    return value + rng.laplace(0.0, sensitivity / epsilon)


def scale_is_epsilon(value, sensitivity, epsilon, rng):        # the classic slip
    return value + rng.laplace(0.0, epsilon)


def scale_ignores_sensitivity(value, sensitivity, epsilon, rng):
    return value + rng.laplace(0.0, 1.0 / epsilon)


def no_noise(value, sensitivity, epsilon, rng):
    return value


def ten_times_noise(value, sensitivity, epsilon, rng):
    return value + rng.laplace(0.0, 10 * sensitivity / epsilon)


def slightly_too_little(value, sensitivity, epsilon, rng):
    return value + rng.laplace(0.0, 0.9 * sensitivity / epsilon)


def biased(value, sensitivity, epsilon, rng):
    return value + sensitivity / epsilon + rng.laplace(0.0, sensitivity / epsilon)


def global_state(value, sensitivity, epsilon, rng):
    return value + np.random.laplace(0.0, sensitivity / epsilon)


def fixed_seed_inside(value, sensitivity, epsilon, rng):       # same noise every call
    return value + np.random.default_rng(0).laplace(0.0, sensitivity / epsilon)


def stub(value, sensitivity, epsilon, rng):
    ...  # YOUR CODE HERE


def raises(value, sensitivity, epsilon, rng):
    raise NotImplementedError("to do")


def vector(value, sensitivity, epsilon, rng):
    return value + rng.laplace(0.0, sensitivity / epsilon, size=3)


def library(value, sensitivity, epsilon, rng):
    return dp.laplace_mechanism(value, sensitivity, epsilon, rng=rng)


# ------------------------------------------------------------------ check_mechanism
def test_check_mechanism_passes_the_librarys_laplace_mechanism():
    # dp.laplace_mechanism validates its inputs on every call (~0.1 ms): fewer runs
    fb = ex.check_mechanism(library, sensitivity=1, epsilon=0.5, n=4000)
    assert fb.passed, fb.message


def test_check_mechanism_passes_a_correct_laplace_mechanism():
    ex.check_mechanism(correct, sensitivity=1, epsilon=0.5, n=1000)     # warm imports
    t0 = time.perf_counter()
    fb = ex.check_mechanism(correct, sensitivity=1, epsilon=0.5)
    seconds = time.perf_counter() - t0
    assert fb.passed and fb.solved, fb.message
    assert fb.details["reason"] == "passed"
    assert "✅" in repr(fb)
    # both the caller's point and the probe point were audited and measured
    pts = fb.details["points"]
    assert [(p["sensitivity"], p["epsilon"]) for p in pts] == [(1.0, 0.5), ex.MECHANISM_PROBE]
    for p in pts:
        assert not p["refuted"] and p["epsilon_lb"] <= p["epsilon"]
        lo, hi = p["accepted_interval"]
        assert lo <= p["mean_abs_error"] <= hi
        assert hi / lo < 1.06                      # tight enough to catch a 10% slip
    assert seconds < 6, seconds


def test_check_mechanism_fails_the_classic_wrong_scale_on_privacy():
    fb = ex.check_mechanism(scale_is_epsilon, sensitivity=1, epsilon=0.5)
    assert not fb.passed and fb.solved
    assert fb.details["reason"] == "privacy"          # caught by the audit, not by accuracy
    point = fb.details["points"][0]
    assert point["refuted"] and point["epsilon_lb"] > 1.0   # true loss is Δ/b = 2
    assert "b = ε" in fb.message and "Δ/ε" in fb.message and "❌" in repr(fb)
    # the correct twin at the same point and seed is not refuted
    ok = ex.check_mechanism(correct, sensitivity=1, epsilon=0.5)
    assert ok.passed and ok.details["points"][0]["epsilon_lb"] <= 0.5


def test_probe_point_catches_a_slip_invisible_at_the_callers_point():
    # at Δ = 1 the slip b = 1/ε equals Δ/ε; the probe Δ = 2, ε = 0.25 exposes it
    fb = ex.check_mechanism(scale_ignores_sensitivity, sensitivity=1, epsilon=0.5)
    assert not fb.passed and fb.details["reason"] == "privacy"
    first, probe = fb.details["points"]
    assert not first["refuted"] and probe["refuted"]
    assert "leaving out the sensitivity" in fb.message


@pytest.mark.parametrize("fn", [no_noise, fixed_seed_inside])
def test_check_mechanism_fails_no_noise(fn):
    fb = ex.check_mechanism(fn, sensitivity=1, epsilon=0.5)
    assert not fb.passed and fb.details["reason"] == "no_noise"
    assert "no noise" in fb.message and "Δ/ε" in fb.message


def test_check_mechanism_fails_far_too_much_noise():
    fb = ex.check_mechanism(ten_times_noise, sensitivity=1, epsilon=0.5)
    assert not fb.passed and fb.details["reason"] == "too_noisy"
    assert not fb.details["points"][0]["refuted"]     # private, just useless
    assert "far too noisy" in fb.message and "10" in fb.message


def test_check_mechanism_fails_slightly_too_little_noise():
    fb = ex.check_mechanism(slightly_too_little, sensitivity=1, epsilon=0.5)
    assert not fb.passed and fb.details["reason"] in ("privacy", "too_little_noise")


def test_check_mechanism_fails_biased_and_irreproducible_and_malformed():
    assert ex.check_mechanism(biased, sensitivity=1, epsilon=0.5).details["reason"] == "biased"
    fb = ex.check_mechanism(global_state, sensitivity=1, epsilon=0.5)
    assert fb.details["reason"] == "rng" and "rng" in fb.message
    fb = ex.check_mechanism(raises, sensitivity=1, epsilon=0.5)
    assert not fb.passed and fb.solved and "NotImplementedError" in fb.message
    fb = ex.check_mechanism(vector, sensitivity=1, epsilon=0.5)
    assert not fb.passed and "ONE release" in fb.message


@pytest.mark.parametrize("answer", [None, ..., stub])
def test_check_mechanism_unsolved(answer):
    fb = ex.check_mechanism(answer, sensitivity=1, epsilon=0.5)
    assert not fb.passed and not fb.solved
    assert ex.NOT_SOLVED in fb.message and "⏳" in repr(fb)


def test_check_mechanism_is_deterministic():
    a = ex.check_mechanism(correct, sensitivity=2, epsilon=1.0)
    b = ex.check_mechanism(correct, sensitivity=2, epsilon=1.0)
    assert a.passed and a.message == b.message


@pytest.mark.parametrize("kwargs, exc", [
    ({"sensitivity": float("nan"), "epsilon": 1}, ValueError),
    ({"sensitivity": -1, "epsilon": 1}, ValueError),
    ({"sensitivity": 0, "epsilon": 1}, ValueError),
    ({"sensitivity": "1", "epsilon": 1}, TypeError),
    ({"sensitivity": 1, "epsilon": 0}, ValueError),
    ({"sensitivity": 1, "epsilon": float("inf")}, ValueError),
    ({"sensitivity": 1, "epsilon": True}, TypeError),
    ({"sensitivity": 1, "epsilon": 1, "n": 10}, ValueError),
    ({"sensitivity": 1, "epsilon": 1, "value": float("nan")}, ValueError),
    ({"sensitivity": 1, "epsilon": 1, "alpha": 1.5}, ValueError),
])
def test_check_mechanism_bad_input(kwargs, exc):
    with pytest.raises(exc):
        ex.check_mechanism(correct, **kwargs)


# ------------------------------------------------------------------ exponential mechanism
def exp_correct(scores, sensitivity, epsilon):
    w = np.exp(epsilon * (scores - scores.max()) / (2 * sensitivity))
    return w / w.sum()


def exp_without_half(scores, sensitivity, epsilon):
    w = np.exp(epsilon * (scores - scores.max()) / sensitivity)
    return w / w.sum()


def exp_quarter(scores, sensitivity, epsilon):           # private, but needlessly flat
    w = np.exp(epsilon * (scores - scores.max()) / (4 * sensitivity))
    return w / w.sum()


def exp_unnormalised(scores, sensitivity, epsilon):
    return np.exp(epsilon * scores / (2 * sensitivity))


SCORES = np.array([4.0, 3.0, 3.0, 1.0, 0.0])


def test_check_exponential_probabilities():
    fb = ex.check_exponential_probabilities(exp_correct, scores=SCORES, sensitivity=1, epsilon=1)
    assert fb.passed, fb.message
    assert fb.details["privacy_loss"] <= 1 + 1e-9
    bad = ex.check_exponential_probabilities(exp_without_half, scores=SCORES, sensitivity=1,
                                             epsilon=1)
    assert not bad.passed and bad.details["reason"] == "privacy"
    assert bad.details["privacy_loss"] > 1.5 and "1/2" in bad.message
    flat = ex.check_exponential_probabilities(exp_quarter, scores=SCORES, sensitivity=1, epsilon=1)
    assert not flat.passed and flat.details["reason"] == "accuracy"
    raw = ex.check_exponential_probabilities(exp_unnormalised, scores=SCORES, sensitivity=1,
                                             epsilon=1)
    assert not raw.passed and raw.details["reason"] == "normalise"
    for answer in (None, lambda s, d, e: None):
        fb = ex.check_exponential_probabilities(answer, scores=SCORES, sensitivity=1, epsilon=1)
        assert not fb.solved and ex.NOT_SOLVED in fb.message
    fb = ex.check_exponential_probabilities(lambda s, d, e: s[:2], scores=SCORES, sensitivity=1,
                                            epsilon=1)
    assert not fb.passed and fb.solved and "shape" in fb.message
    with pytest.raises(ValueError):
        ex.check_exponential_probabilities(exp_correct, scores=SCORES, sensitivity=1,
                                           epsilon=float("nan"))


# ------------------------------------------------------------------ sensitivity
def test_check_sensitivity():
    def mean(x):
        return float(np.mean(x))
    ok = ex.check_sensitivity(25, mean, [0, 50, 100], 2, neighbours="substitute",
                              min_size=0)
    expected = dp.global_sensitivity(mean, [0, 50, 100], 2, neighbours="substitute")
    assert math.isclose(expected, 50.0)
    assert not ok.passed and "50" in ok.message and "too small" in ok.message
    good = ex.check_sensitivity(50, mean, [0, 50, 100], 2, neighbours="substitute")
    assert good.passed
    assert ex.check_sensitivity(1, len, [0, 1], 3).passed
    assert not ex.check_sensitivity(None, len, [0, 1], 3).solved
    assert not ex.check_sensitivity("one", len, [0, 1], 3).passed


# ------------------------------------------------------------------ anonymity
QIS = ["Zip Code", "Age", "Nationality"]


def test_check_k_anonymous():
    raw = dp.datasets.hospital_conditions()
    released = generalize(raw, four_anonymous_rules())
    fb = ex.check_k_anonymous(released, QIS, 4, original=raw, sensitive="Condition")
    assert fb.passed and "4-anonymous" in fb.message
    bad = ex.check_k_anonymous(raw, QIS, 4)
    assert not bad.passed and "1 row" in bad.message
    fewer = ex.check_k_anonymous(released.iloc[4:], QIS, 4, original=raw)
    assert not fewer.passed and fewer.details["reason"] == "suppressed"
    changed = released.copy()
    changed["Condition"] = "*"
    fb = ex.check_k_anonymous(changed, QIS, 4, original=raw, sensitive="Condition")
    assert not fb.passed and fb.details["reason"] == "sensitive_changed"
    assert not ex.check_k_anonymous(released.drop(columns=["Age"]), QIS, 4).passed
    assert not ex.check_k_anonymous(None, QIS, 4).solved
    assert not ex.check_k_anonymous([1, 2], QIS, 4).passed


def test_check_l_and_t():
    t = dp.datasets.salary_disease_3diverse()
    qis = ["ZIP Code", "Age"]
    assert ex.check_l_diversity(3, t, qis, "Disease").passed
    fb = ex.check_l_diversity(2, t, qis, "Disease")
    assert not fb.passed and "l = 3" in fb.message
    assert ex.check_t_closeness(0.375, t, qis, "Salary", ordered=True).passed
    equal = dp.anonymity.t_closeness(t, qis, "Salary")
    fb = ex.check_t_closeness(equal, t, qis, "Salary", ordered=True)
    assert not fb.passed and "equal" in fb.message
    assert not ex.check_t_closeness(None, t, qis, "Salary").solved
    assert not ex.check_l_diversity(..., t, qis, "Disease").solved


def test_check_disclosure():
    released = dp.datasets.hospital_conditions_4anonymous()
    bob = {"Zip Code": "130**", "Age": "3*", "Nationality": "*"}
    assert ex.check_disclosure("Cancer", released, QIS, "Condition", bob).passed
    assert ex.check_disclosure(" cancer ", released, QIS, "Condition", bob).passed
    wrong = ex.check_disclosure("Heart Disease", released, QIS, "Condition", bob)
    assert not wrong.passed and "'Cancer'" in wrong.message
    mixed = {"Zip Code": "130**", "Age": "< 30", "Nationality": "*"}
    assert ex.check_disclosure("none", released, QIS, "Condition", mixed).passed
    assert not ex.check_disclosure(None, released, QIS, "Condition", bob).solved


# ------------------------------------------------------------------ attacks and curator
def test_check_reconstruction():
    truth = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 1])
    assert ex.check_reconstruction(truth, truth, 0.95).passed
    guess = truth.copy()
    guess[:3] ^= 1
    fb = ex.check_reconstruction(guess, truth, 0.95)
    assert not fb.passed and "70.0%" in fb.message
    assert not ex.check_reconstruction(truth[:5], truth, 0.9).passed
    assert not ex.check_reconstruction(None, truth, 0.9).solved
    with pytest.raises(ValueError):
        ex.check_reconstruction(truth, truth, 1.5)


def test_check_budget_respected():
    table = dp.datasets.sickle_cell()
    cur = dp.Curator(table, epsilon=1.0, rng=0)
    for _ in range(4):
        cur.count(lambda t: t["Sickle cell trait"], epsilon=0.25)
    fb = ex.check_budget_respected(cur, max_epsilon=1.0)
    assert fb.passed and "4 answers" in fb.message
    loose = dp.Curator(table, epsilon=100.0, rng=0)
    fb = ex.check_budget_respected(loose, max_epsilon=1.0)
    assert not fb.passed and fb.details["reason"] == "over_budget"
    assert not ex.check_budget_respected(table, max_epsilon=1.0).passed
    assert not ex.check_budget_respected(None, max_epsilon=1.0).solved


def test_check_zoo_verdicts():
    truth = {name: e.private for name, e in dp.audit.ZOO.items()}
    assert ex.check_zoo_verdicts(truth).passed
    flipped = dict(truth, laplace_scale_is_epsilon=True)
    fb = ex.check_zoo_verdicts(flipped)
    assert not fb.passed and "laplace_scale_is_epsilon is NOT private" in fb.message
    part = ex.check_zoo_verdicts({"laplace": None}, names=["laplace"])
    assert not part.solved
    assert not ex.check_zoo_verdicts({"no_such": True}).passed
    assert not ex.check_zoo_verdicts(None).solved


def test_check_fraction_at_most():
    # 1,000 of 100,000 trials against a bound of 0.0100: fine; against 0.005: refuted
    assert ex.check_fraction_at_most(0.01, 0.01, 100_000).passed
    fb = ex.check_fraction_at_most(0.01, 0.005, 100_000)
    assert not fb.passed and fb.details["p"] < ex.ALPHA
    assert not ex.check_fraction_at_most(None, 0.1, 10).solved
    assert not ex.check_fraction_at_most(1.5, 0.1, 10).passed


def test_generic_checks_unsolved():
    for fb in (ex.check_number(None, 1.0), ex.check_choice(..., "a"), ex.check_true(None)):
        assert not fb.passed and not fb.solved and "⏳" in repr(fb)
    assert ex.check_number(1.0005, 1.0).passed
    assert not ex.check_number(1.1, 1.0).passed


def test_check_audit():
    broken = dp.audit.ZOO["laplace_scale_is_epsilon"]
    res = broken.audit(n=50_000, rng=1)
    assert ex.check_audit(res, expect_refuted=True).passed
    assert not ex.check_audit(res, expect_refuted=False).passed
    fine = dp.audit.ZOO["laplace"].audit(n=50_000, rng=1)
    fb = ex.check_audit(fine, expect_refuted=True)
    assert not fb.passed and fb.details["reason"] == "not_refuted"
    assert ex.check_audit(fine, expect_refuted=False).passed
    no_claim = dp.audit.audit(broken.mechanism, broken.x, broken.y, n=1000, rng=1)
    assert ex.check_audit(no_claim, expect_refuted=True).details["reason"] == "no_claim"
    assert not ex.check_audit(None, expect_refuted=True).solved
    assert not ex.check_audit(0.5, expect_refuted=True).passed


def test_check_neighbours():
    assert ex.check_neighbours([1, 2, 3], [3, 1, 2, 10]).passed
    assert not ex.check_neighbours([1, 2, 3], [1, 2, 10]).passed
    assert ex.check_neighbours([1, 2, 3], [1, 2, 10], neighbours="substitute").passed
    assert not ex.check_neighbours([1, 2], [1, 2, 3, 4]).passed
    assert not ex.check_neighbours(None, [1]).solved
    with pytest.raises(ValueError):
        ex.check_neighbours([1], [1, 2], neighbours="swap")
