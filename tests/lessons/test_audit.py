"""The empirical auditor: the Clopper-Pearson bound, its coverage, the two-phase audit and
the zoo of correct and broken mechanisms."""

import math

import numpy as np
import pytest
from scipy import special, stats

from conftest import ALPHA

import dpteach as dp
from dpteach.audit import ZOO, audit_zoo
from dpteach.audit import (AuditResult, Event, audit, clopper_pearson,
                           epsilon_interval, epsilon_lower_bound, epsilon_point_estimate,
                           per_call_mechanism)


# ------------------------------------------------------------------ the bound
@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (300, 1000), (1, 10**6), (5, 7)])
def test_clopper_pearson_matches_scipy_binomtest(k, n):
    ci = stats.binomtest(k, n).proportion_ci(0.9, method="exact")
    low, high = clopper_pearson(k, n, alpha=0.1)
    assert low == pytest.approx(ci.low, rel=1e-9, abs=1e-12)
    assert high == pytest.approx(ci.high, rel=1e-9, abs=1e-12)


def test_clopper_pearson_at_extreme_alpha_has_the_closed_form():
    """k = 0 and k = n have closed forms; tiny alphas (the coursework audits at 1e-7) are
    where scipy 1.11's betaincinv went wrong, so the declared scipy floor must pass this."""
    n, alpha = 20_000, 1e-7
    low, high = clopper_pearson(0, n, alpha=alpha)
    assert low == 0.0 and high == pytest.approx(1 - (alpha / 2) ** (1 / n), rel=1e-9)
    low, high = clopper_pearson(n, n, alpha=alpha)
    assert high == 1.0 and low == pytest.approx((alpha / 2) ** (1 / n), rel=1e-9)
    assert epsilon_lower_bound(500, 0, n, alpha=alpha) > 3


def test_bound_formula_with_alpha_split_and_delta():
    cx, cy, n, alpha, delta = 3000, 1000, 10_000, 0.05, 0.01
    low = stats.binomtest(cx, n).proportion_ci(1 - alpha, method="exact").low
    high = stats.binomtest(cy, n).proportion_ci(1 - alpha, method="exact").high
    expected = math.log((low - delta) / high)
    assert epsilon_lower_bound(cx, cy, n, alpha=alpha, delta=delta) == pytest.approx(expected)
    assert isinstance(epsilon_lower_bound(cx, cy, n), float)


def test_bound_is_clamped_at_zero_and_never_above_point_estimate():
    n = 500
    cx, cy = np.meshgrid(np.arange(0, n + 1, 7), np.arange(0, n + 1, 7))
    for delta in (0.0, 0.05):
        lb = epsilon_lower_bound(cx, cy, n, alpha=0.05, delta=delta)
        est = epsilon_point_estimate(cx, cy, n, delta=delta)
        assert lb.shape == cx.shape
        assert np.all(lb >= 0)
        assert np.all(lb <= est + 1e-12)
    assert epsilon_lower_bound(0, 0, 100) == 0.0
    assert epsilon_lower_bound(10, 90, 100) == 0.0           # E likelier on y: nothing
    assert epsilon_lower_bound(100, 0, 100) > 0              # finite even with count_y = 0
    assert math.isinf(epsilon_point_estimate(100, 0, 100))


def test_bound_grows_with_evidence():
    # the same 3:1 ratio, more runs -> a tighter bound, converging to ln 3
    ns = np.array([100, 1_000, 10_000, 100_000, 1_000_000])
    lbs = epsilon_lower_bound(ns * 3 // 10, ns // 10, ns)
    assert np.all(np.diff(lbs) > 0)
    assert math.log(3) - 0.01 < lbs[-1] < math.log(3)
    lo, hi = epsilon_interval(ns * 3 // 10, ns // 10, ns)
    assert np.all(lo <= math.log(3)) and np.all(hi >= math.log(3))
    assert np.all(np.diff(hi - lo) < 0)


def _cp_bound_one_side_only(cx, cy, n, alpha, delta=0.0):
    """WRONG TWIN: a Clopper-Pearson bound for P_x(E) but the plug-in count_y / n for
    P_y(E), as if the second probability were known exactly."""
    low = np.where(cx > 0, special.betaincinv(np.maximum(cx, 1), n - cx + 1, alpha / 2), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(np.maximum(np.log(np.maximum(low - delta, 1e-300) / (cy / n)), 0.0),
                             posinf=np.inf)


def _cp_bound_without_split(cx, cy, n, alpha):
    """A bound with each end at one-sided level alpha (no split). Measured: it still covers
    (about 1.2% misses at alpha = 5%), because both ends rarely fail together; the split
    is the simple union-bound argument, not the only sufficient one."""
    low = np.where(cx > 0, special.betaincinv(np.maximum(cx, 1), n - cx + 1, alpha), 0.0)
    high = np.where(cy < n, special.betaincinv(cy + 1, np.maximum(n - cy, 1), 1 - alpha), 1.0)
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(np.maximum(low, 1e-300) / high), 0.0)


def _miss_pvalue(misses, trials, alpha):
    """p-value of 'the bound misses at most alpha of the time' given observed misses."""
    return stats.binomtest(int(misses), int(trials), alpha, alternative="greater").pvalue


@pytest.mark.parametrize("px,eps,delta", [(0.3, 1.0, 0.0), (0.05, 0.5, 0.0), (0.4, 1.0, 0.05)])
def test_bound_covers_true_epsilon_at_the_stated_rate(px, eps, delta):
    """Repeated audits: counts drawn from binomials whose ln-ratio is exactly eps; the
    lower bound may exceed eps in at most alpha of the repetitions. Wrong twins (the
    point estimate; a bound that treats P_y(E) as known) exceed it far more often and are
    rejected by the same test."""
    rng = np.random.default_rng(61)
    alpha, n, reps = 0.05, 2_000, 40_000
    py = (px - delta) / math.exp(eps)
    cx = rng.binomial(n, px, size=reps)
    cy = rng.binomial(n, py, size=reps)
    truth = math.log((px - delta) / py)
    lb = epsilon_lower_bound(cx, cy, n, alpha=alpha, delta=delta)
    assert _miss_pvalue(np.sum(lb > truth + 1e-12), reps, alpha) > ALPHA
    one_side = _cp_bound_one_side_only(cx, cy, n, alpha, delta)
    assert _miss_pvalue(np.sum(one_side > truth + 1e-12), reps, alpha) < ALPHA
    point = epsilon_point_estimate(cx, cy, n, delta=delta)
    assert _miss_pvalue(np.sum(point > truth + 1e-12), reps, alpha) < ALPHA
    if delta == 0:
        no_split = _cp_bound_without_split(cx, cy, n, alpha)
        assert np.all(no_split >= lb - 1e-12)          # less conservative than the split


def test_full_audit_covers_true_epsilon_in_repeated_audits():
    """Whole audits of a correct Laplace mechanism (epsilon = 1, attained by threshold
    events): the bound exceeds 1 in at most alpha of them. The wrong twin -- choose the
    event and count on the SAME runs, with the point estimate -- exceeds it often."""
    rng = np.random.default_rng(62)
    alpha, reps, n = 0.2, 120, 4_000

    def lap(data, size, rng):
        return data + rng.laplace(0.0, 1.0, size=size)

    misses = twin_misses = 0
    for _ in range(reps):
        res = audit(lap, 0.0, 1.0, n=n, alpha=alpha, rng=rng)
        misses += res.epsilon_lb > 1.0
        ox, oy = lap(0.0, n, rng), lap(1.0, n, rng)
        ts = np.quantile(np.concatenate([ox, oy]), np.linspace(0.01, 0.99, 99))
        cx = (ox[:, None] <= ts).sum(0)
        cy = (oy[:, None] <= ts).sum(0)
        twin_misses += np.max(epsilon_point_estimate(cx, cy, n)) > 1.0
    assert _miss_pvalue(misses, reps, alpha) > ALPHA
    assert _miss_pvalue(twin_misses, reps, alpha) < ALPHA


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("args,kwargs,exc,word", [
    ((11, 5, 10), {}, ValueError, "count_x"),            # count above n
    ((5, 11, 10), {}, ValueError, "count_y"),
    ((-1, 5, 10), {}, ValueError, "count_x"),            # negative count
    ((5, -2, 10), {}, ValueError, "count_y"),
    ((2.5, 1, 10), {}, ValueError, "count_x"),           # not a whole number
    ((np.nan, 1, 10), {}, ValueError, "count_x"),
    ((True, 1, 10), {}, TypeError, "count_x"),
    (("3", 1, 10), {}, TypeError, "count_x"),
    ((0, 0, 0), {}, ValueError, "n"),                    # n <= 0
    ((0, 0, -5), {}, ValueError, "n"),
    ((1, 1, 10.5), {}, ValueError, "n"),
    ((1, 1, np.inf), {}, ValueError, "n"),
    ((1, 1, "10"), {}, TypeError, "n"),
    ((1, 1, True), {}, TypeError, "n"),
    ((3, 1, 10), {"alpha": 0.0}, ValueError, "alpha"),    # alpha outside (0, 1)
    ((3, 1, 10), {"alpha": 1.0}, ValueError, "alpha"),
    ((3, 1, 10), {"alpha": -0.1}, ValueError, "alpha"),
    ((3, 1, 10), {"alpha": 1.5}, ValueError, "alpha"),
    ((3, 1, 10), {"alpha": np.nan}, ValueError, "alpha"),
    ((3, 1, 10), {"alpha": "0.05"}, TypeError, "alpha"),
    ((3, 1, 10), {"delta": 1.0}, ValueError, "delta"),
    ((3, 1, 10), {"delta": -0.1}, ValueError, "delta"),
    ((np.array([1, 12]), 1, 10), {}, ValueError, "count_x"),
])
def test_bad_input_to_bound_is_refused_clearly(args, kwargs, exc, word):
    for fn in (epsilon_lower_bound, epsilon_interval):
        with pytest.raises(exc, match=word):
            fn(*args, **kwargs)
    if "alpha" not in kwargs:
        with pytest.raises(exc, match=word):
            epsilon_point_estimate(*args, **kwargs)


def _lap(data, size, rng):
    return data + rng.laplace(0.0, 1.0, size=size)


@pytest.mark.parametrize("mech,kwargs,exc,word", [
    ("not callable", {"n": 100}, TypeError, "mechanism"),
    (_lap, {"n": 0}, ValueError, "n"),
    (_lap, {"n": 10}, ValueError, "n"),
    (_lap, {"n": 2.5}, ValueError, "n"),
    (_lap, {"n": True}, TypeError, "n"),
    (_lap, {"n": 100, "alpha": 0}, ValueError, "alpha"),
    (_lap, {"n": 100, "alpha": 1}, ValueError, "alpha"),
    (_lap, {"n": 100, "delta": 1.0}, ValueError, "delta"),
    (_lap, {"n": 100, "claimed_epsilon": -1}, ValueError, "claimed_epsilon"),
    (_lap, {"n": 100, "rng": "seed"}, TypeError, "rng"),
    (_lap, {"n": 100, "select_fraction": 1.0}, ValueError, "select_fraction"),
    (lambda d, size, rng: 3.0, {"n": 100}, ValueError, "100 outputs"),
    (lambda d, size, rng: np.zeros(size - 1), {"n": 100}, ValueError, "100 outputs"),
    (lambda d, size, rng: np.full(size, np.nan), {"n": 100}, ValueError, "NaN"),
])
def test_bad_input_to_audit_is_refused_clearly(mech, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        audit(mech, 0.0, 1.0, **kwargs)


# ------------------------------------------------------------------ the audit
def test_laplace_epsilon_one_reaches_0_9_with_a_million_runs():
    rng = np.random.default_rng(63)
    mech = lambda v, size, rng: dp.laplace_mechanism(v, 1.0, 1.0, rng=rng, size=size)  # noqa: E731
    audit(mech, 0.0, 1.0, n=1_000, rng=rng)        # warm up imports
    res = audit(mech, 0.0, 1.0, n=1_000_000, rng=rng, claimed_epsilon=1.0)
    assert 0.9 <= res.epsilon_lb <= 1.0   # its time budget (2 s) is benchmarks/bench_audit.py's
    assert res.refuted is False
    assert isinstance(res, AuditResult) and res.event.kind == "threshold"
    assert res.n_select == 100_000 and res.n_count == 900_000
    # the reported counts are the event's counts on the counting runs
    a, b = (res.count_x, res.count_y) if res.numerator == "x" else (res.count_y, res.count_x)
    assert res.epsilon_lb == pytest.approx(epsilon_lower_bound(a, b, res.n_count))
    text = res.summary()
    assert "epsilon >=" in text and "no violation" in text and str(res.event) in text


def test_audit_with_categories_strings_and_vector_outputs():
    rng = np.random.default_rng(64)

    def words(data, size, rng):        # a leaky categorical mechanism (string outputs)
        keep = rng.random(size) < (0.9 if data == "yes" else 0.5)
        return np.where(keep, "yes", "no")

    res = audit(words, "yes", "no", n=20_000, rng=rng)
    assert res.event.kind == "set"
    # P(no | "yes") = 0.1 and P(no | "no") = 0.5: the event {no} has ratio 5
    assert math.log(5) - 0.15 < res.epsilon_lb <= math.log(5)
    assert res.event.outcomes == ("no",) and res.numerator == "y"

    def pairs(data, size, rng):         # 2-D outputs: rows are outputs
        first = rng.random(size) < (0.8 if data else 0.2)
        return np.column_stack([first, rng.random(size) < 0.5])

    res = audit(pairs, 1, 0, n=20_000, rng=rng)
    assert res.event.kind == "set" and all(isinstance(o, tuple) for o in res.event.outcomes)
    assert 0.9 < res.epsilon_lb <= math.log(4)
    mask = res.event.contains(pairs(1, 50, rng))
    assert mask.dtype == bool and mask.shape == (50,)


def test_audit_is_reproducible_with_a_seed():
    a = audit(_lap, 0.0, 1.0, n=5_000, rng=5)
    b = audit(_lap, 0.0, 1.0, n=5_000, rng=5)
    assert a.epsilon_lb == b.epsilon_lb and a.event == b.event


def test_per_call_mechanism_wraps_one_release_per_call():
    def student_fn(value, sensitivity, epsilon, rng):            # rng positional-or-keyword
        return value + rng.laplace(0.0, sensitivity / epsilon)

    def student_positional(value, sensitivity, epsilon, gen, /):  # rng only positional
        return value + gen.laplace(0.0, sensitivity / epsilon)

    def student_broken(value, sensitivity, epsilon, rng):        # noise 4x too small
        return value + rng.laplace(0.0, sensitivity / epsilon / 4)

    rng = np.random.default_rng(65)
    for fn in (student_fn, student_positional):
        mech = per_call_mechanism(fn, 1.0, 0.5)
        out = mech(10.0, 7, rng)
        assert out.shape == (7,)
        res = audit(mech, 10.0, 11.0, n=20_000, rng=rng, claimed_epsilon=0.5, alpha=1e-3)
        assert not res.refuted and res.epsilon_lb <= 0.5
    res = audit(per_call_mechanism(student_broken, 1.0, 0.5), 10.0, 11.0, n=20_000, rng=rng,
                claimed_epsilon=0.5, alpha=1e-3)
    assert res.refuted and res.epsilon_lb > 1.0
    with pytest.raises(TypeError, match="release"):
        per_call_mechanism(42)


def test_event_contains_and_text():
    e = Event("threshold", threshold=1.5, direction=">=")
    assert list(e.contains([1, 1.5, 2])) == [False, True, True]
    assert "≥ 1.5" in str(e)
    s = Event("set", outcomes=(1, 3))
    assert list(s.contains(np.array([1, 2, 3]))) == [True, False, True]
    assert str(s) == "output in {1, 3}"


# ------------------------------------------------------------------ the zoo
def test_zoo_has_the_required_entries():
    assert len(ZOO) >= 6
    broken = [k for k, e in ZOO.items() if not e.private]
    assert len(broken) >= 4
    for name in ("laplace_scale_is_epsilon", "sum_sensitivity_understated",
                 "noisy_max_releases_value", "randomized_response_wrong_keep",
                 "sparse_vector_no_query_noise", "exponential_without_half"):
        assert name in broken
    assert sum(e.private for e in ZOO.values()) >= 4
    for entry in ZOO.values():
        assert callable(entry.mechanism) and entry.description and entry.claimed_epsilon > 0
        assert entry.x is not None and entry.y is not None
        if entry.actual_epsilon is not None:
            assert (entry.actual_epsilon <= entry.claimed_epsilon + 1e-12) == entry.private


@pytest.mark.parametrize("name", list(ZOO))
def test_every_zoo_verdict(name):
    """Audited at alpha = 1e-6: each broken entry is caught, no correct one is accused, and
    no bound exceeds the true privacy loss where it is known (the time each takes is
    measured by benchmarks/bench_audit.py)."""
    entry = ZOO[name]
    rng = np.random.default_rng(66 + list(ZOO).index(name))
    res = entry.audit(alpha=ALPHA, rng=rng)
    assert res.refuted == (not entry.private), res.summary()
    if entry.actual_epsilon is not None:
        assert res.epsilon_lb <= entry.actual_epsilon
    if not entry.private:
        truth = entry.actual_epsilon
        # the bound gets most of the way to the true loss (a real catch, not a fluke)
        assert res.epsilon_lb > min(0.9 * truth, entry.claimed_epsilon + 3)


def test_correct_laplace_like_entries_are_audited_tightly():
    rng = np.random.default_rng(67)
    for name in ("laplace", "randomized_response", "discrete_laplace"):
        res = ZOO[name].audit(rng=rng)
        assert 0.9 * ZOO[name].claimed_epsilon < res.epsilon_lb <= ZOO[name].claimed_epsilon


def test_audit_zoo_table():
    table = audit_zoo(["laplace", "randomized_response_wrong_keep"], n=200_000, rng=68)
    assert list(table.index) == ["laplace", "randomized_response_wrong_keep"]
    assert table.loc["laplace", "verdict"] == "no violation found"
    assert table.loc["randomized_response_wrong_keep", "verdict"] == "REFUTED"
    assert {"claimed ε", "ε lower bound", "truly private", "event", "seconds"} <= set(table.columns)
    with pytest.raises(ValueError, match="names"):
        audit_zoo(["no_such_mechanism"])
