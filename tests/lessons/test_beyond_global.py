"""Local and smooth sensitivity of the median, PTR and sample-and-aggregate (notebook 19).

The closed forms are checked against brute force over every dataset of a small grid
universe; each check is shown to reject a deliberately wrong twin. Statistical tests run
at alpha = 1e-6 (conftest.ALPHA).
"""

import functools
import itertools
from collections import Counter
import math

import numpy as np
import pytest
from scipy import stats

from conftest import ALPHA, ks_pvalue
from dpteach import beyond_global as ls
import os
import signal
import time
from _bad_values import (BAD_EPSILON, BAD_REAL, BAD_RNG, EXTREME, EXTREME_SIZES, check_row,
                         is_finite_answer)
from dpteach import beyond_global as bg

GRID = np.arange(6.0)  # the universe 0..5, with lower = 0 and upper = 5
LO, HI = 0.0, 5.0


def _median(x):
    return float(np.sort(x)[len(x) // 2])


def _brute_ls(x):
    """Largest change of the median over every substitution of one record by a grid value
    (the extremes lower and upper are on the grid, so this is the exact local sensitivity)."""
    base = _median(x)
    best = 0.0
    for i in range(len(x)):
        for v in GRID:
            y = np.array(x, float)
            y[i] = v
            best = max(best, abs(_median(y) - base))
    return best


@functools.lru_cache(maxsize=None)
def _all_datasets(n):
    """Every dataset of n grid values (as a sorted tuple: the median ignores order), with LS."""
    return [(y, _brute_ls(np.array(y))) for y in itertools.combinations_with_replacement(GRID, n)]


def _brute_a(x, k):
    """max LS(y) over every y within k substitutions of x: the substitution distance of two
    datasets of size n is n minus the number of records they share."""
    n = len(x)
    cx = Counter(np.asarray(x, float).tolist())
    best = 0.0
    for y, ls_y in _all_datasets(n):
        shared = sum(min(c, cx[v]) for v, c in Counter(y).items())
        if n - shared <= k:
            best = max(best, ls_y)
    return best


def _twin_a(x, k):
    """Wrong twin: t runs over 0..k only (one window short)."""
    x = np.sort(np.clip(x, LO, HI))
    n = len(x)
    m = (n + 1) // 2
    get = lambda i: LO if i < 1 else HI if i > n else x[i - 1]  # noqa: E731
    return max(get(m + t) - get(m + t - k - 1) for t in range(k + 1))


DATASETS = [np.array(d, float) for d in ([1, 2, 2], [0, 5, 3], [2, 2, 2], [1, 3, 4, 4, 5],
                                          [0, 0, 2, 5, 5], [3, 3, 3, 3, 3])]


@pytest.mark.parametrize("x", DATASETS, ids=lambda x: str(x.astype(int).tolist()))
def test_local_sensitivity_matches_brute_force(x):
    for k in range(len(x) + 2):
        expected = _brute_a(x, k)
        got = ls.local_sensitivity_median(x, LO, HI, distance=k)
        if expected is not None:
            assert got == pytest.approx(expected), (x, k)
    # vectorised over k, as a panel sweeps it
    ks = np.arange(len(x) + 3)
    assert np.array_equal(ls.local_sensitivity_median(x, LO, HI, distance=ks),
                          [ls.local_sensitivity_median(x, LO, HI, distance=int(k)) for k in ks])


def test_brute_force_rejects_the_short_window_twin():
    wrong = [(x, k) for x in DATASETS for k in range(3)
             if _twin_a(x, k) != pytest.approx(_brute_a(x, k))]
    assert wrong, "the twin with t in 0..k must disagree with brute force somewhere"


def test_local_sensitivity_far_away_is_the_whole_range():
    x = np.array([2.0, 2.0, 2.0, 2.0, 2.0])
    assert ls.local_sensitivity_median(x, LO, HI, distance=0) == 0.0
    assert ls.local_sensitivity_median(x, LO, HI, distance=10) == HI - LO


@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0])
@pytest.mark.parametrize("x", DATASETS[:4], ids=lambda x: str(x.astype(int).tolist()))
def test_smooth_sensitivity_is_max_of_discounted_local(x, beta):
    ks = range(len(x) + 3)
    expected = max(math.exp(-k * beta) * _brute_a(x, k) for k in ks)
    assert ls.smooth_sensitivity_median(x, LO, HI, beta) == pytest.approx(expected)


def test_smooth_sensitivity_rejects_the_fixed_discount_twin():
    """The twin discounts every distance by e^(-beta) instead of e^(-k beta)."""
    differs = []
    for x in DATASETS[:4]:
        ks = range(len(x) + 3)
        twin = max(math.exp(-0.5) * _brute_a(x, k) for k in ks)
        differs.append(twin != pytest.approx(ls.smooth_sensitivity_median(x, LO, HI, 0.5)))
    assert any(differs)


def test_smooth_sensitivity_is_smooth():
    """S(x) <= e^beta S(y) for neighbours x, y: the defining property of a smooth bound [NRS07]."""
    rng = np.random.default_rng(3)
    beta = 0.3
    for _ in range(200):
        x = rng.integers(0, 6, size=5).astype(float)
        y = x.copy()
        y[rng.integers(5)] = rng.integers(0, 6)
        sx = ls.smooth_sensitivity_median(x, LO, HI, beta)
        sy = ls.smooth_sensitivity_median(y, LO, HI, beta)
        assert sx <= math.exp(beta) * sy + 1e-12


def test_distance_to_instability_matches_its_definition():
    for x in DATASETS:
        for b in (0.0, 0.5, 1.0, 2.0, 4.9, 5.0):
            d = ls.distance_to_instability(x, LO, HI, b)
            if b >= HI - LO:
                assert d == math.inf
                continue
            ks = [k for k in range(len(x) + 2) if _brute_a(x, k) > b]
            assert d == min(ks)


def test_ptr_answer_rate_and_release_distribution():
    x = np.array([4.0, 5.0] + [5.0] * 29 + [6.0] * 30, float)  # stable median 5, d = 30
    eps, bound = 1.0, 1.0
    delta = math.exp(-15.0)  # the test's threshold 2 ln(1/delta) / eps = 30 = d: p = 1/2
    p = ls.ptr_answer_probability(x, 0, 10, eps, delta, proposed_bound=bound)
    rng = np.random.default_rng(11)
    assert ls.distance_to_instability(x, 0, 10, bound) == 30
    assert p == pytest.approx(0.5)
    n = 4000
    out = [ls.ptr_median(x, 0, 10, eps, delta, proposed_bound=bound, rng=rng) for _ in range(n)]
    answered = np.array([o for o in out if o is not None])
    assert stats.binomtest(len(answered), n, p).pvalue > ALPHA
    # the twin that tests with the whole budget answers more often
    d = ls.distance_to_instability(x, 0, 10, bound)
    twin = stats.laplace.sf(math.log(1 / delta) / eps - d, scale=1 / eps)
    assert stats.binomtest(len(answered), n, twin).pvalue < ALPHA
    # releases: median + Lap(2 * bound / eps), not Lap(bound / eps)
    assert ks_pvalue(answered - 5.0, stats.laplace(scale=2 * bound / eps).cdf) > ALPHA
    assert ks_pvalue(answered - 5.0, stats.laplace(scale=bound / eps).cdf) < ALPHA


def test_ptr_runs_are_single_calls_in_a_row():
    """size=N gives, bit for bit, N calls in a row with the same generator (NaN for None)
    and leaves the generator where they leave it; answer rates from 0 to 1 (so rounds
    end on a passed test whose release is drawn in the next round)."""
    for spread, bound, delta in [(2.0, 1.0, 1e-6), (5.0, 1.0, 1e-2), (20.0, 4.0, 1e-2),
                                 (0.5, 1.0, 1e-6), (5.0, 0.5, 1e-6)]:
        x = np.clip(np.round(40 + spread * np.random.default_rng(1).standard_normal(101)), 0, 100)
        one, many = np.random.default_rng(7), np.random.default_rng(7)
        loop = [ls.ptr_median(x, 0, 100, 1.0, delta, proposed_bound=bound, rng=one)
                for _ in range(501)]
        loop = np.array([np.nan if v is None else v for v in loop])
        runs = ls.ptr_median(x, 0, 100, 1.0, delta, proposed_bound=bound, rng=many, size=501)
        assert runs.shape == (501,)
        np.testing.assert_array_equal(runs, loop)
        assert one.random() == many.random()
    # a twin that draws the release whatever the test says is caught
    x = np.clip(np.round(40 + 5.0 * np.random.default_rng(1).standard_normal(101)), 0, 100)
    one, many = np.random.default_rng(7), np.random.default_rng(7)
    loop = [ls.ptr_median(x, 0, 100, 1.0, 1e-2, proposed_bound=1.0, rng=one) for _ in range(50)]
    z = many.laplace(0.0, 1.0, size=100).reshape(50, 2)
    twin = np.where(ls.distance_to_instability(x, 0, 100, 1.0) + 2.0 * z[:, 0]
                    <= math.log(1 / 1e-2) / 0.5, np.nan, x[50] + 2.0 * z[:, 1])
    assert not np.array_equal(twin, np.array([np.nan if v is None else v for v in loop]),
                              equal_nan=True)


def test_ptr_refuses_unstable_data_almost_always():
    x = np.array([0.0, 0.0, 10.0, 10.0, 10.0])  # one change moves the median by 10
    assert ls.distance_to_instability(x, 0, 10, 1.0) == 0
    p = ls.ptr_answer_probability(x, 0, 10, 1.0, 1e-4, proposed_bound=1.0)
    assert p == pytest.approx(0.5e-4)  # delta / 2 at d = 0
    rng = np.random.default_rng(5)
    answers = sum(ls.ptr_median(x, 0, 10, 1.0, 1e-4, proposed_bound=1.0, rng=rng) is not None
                  for _ in range(5000))
    assert stats.binomtest(answers, 5000, p).pvalue > ALPHA


def test_smooth_median_noise_scale():
    x = np.linspace(0, 10, 101)
    eps, delta = 1.0, 1e-6
    beta = ls.smooth_beta(eps, delta)
    assert beta == pytest.approx(eps / (2 * math.log(2 / delta)))
    s = ls.smooth_sensitivity_median(x, 0, 10, beta)
    draws = ls.smooth_median(x, 0, 10, eps, delta, rng=np.random.default_rng(2), size=20000) - 5.0
    assert ks_pvalue(draws, stats.laplace(scale=2 * s / eps).cdf) > ALPHA
    assert ks_pvalue(draws, stats.laplace(scale=s / eps).cdf) < ALPHA  # the eps/2 twin


def test_sample_and_aggregate_noise_and_clamp():
    x = np.full(100, 3.0)
    draws = np.array([ls.sample_and_aggregate(x, np.mean, 0, 10, 1.0, blocks=10,
                                              rng=np.random.default_rng(s)) for s in range(4000)])
    scale = 10 / (10 * 1.0)
    assert ks_pvalue(draws - 3.0, stats.laplace(scale=scale).cdf) > ALPHA
    assert ks_pvalue(draws - 3.0, stats.laplace(scale=10 / 1.0).cdf) < ALPHA  # forgets the blocks
    # a statistic far outside the range is clamped before averaging
    far = ls.sample_and_aggregate(x, lambda b: 1e9, 0, 10, 1e6, blocks=10, rng=np.random.default_rng(0))
    assert far == pytest.approx(10.0, abs=1e-3)


@pytest.mark.parametrize("call, name", [
    (lambda: ls.local_sensitivity_median([1, 2], 0, 5), "odd"),
    (lambda: ls.local_sensitivity_median([1, 2, 3], 5, 0), "lower"),
    (lambda: ls.local_sensitivity_median([1, 2, 3], 0, 5, distance=-1), "distance"),
    (lambda: ls.local_sensitivity_median([1, 2, 3], 0, 5, distance=True), "distance"),
    (lambda: ls.smooth_sensitivity_median([1, 2, 3], 0, 5, 0.0), "beta"),
    (lambda: ls.smooth_sensitivity_median([1, 2, 3], 0, 5, float("nan")), "beta"),
    (lambda: ls.ptr_median([1, 2, 3], 0, 5, 1.0, 0.0, proposed_bound=1.0), "delta"),
    (lambda: ls.ptr_median([1, 2, 3], 0, 5, -1.0, 1e-3, proposed_bound=1.0), "epsilon"),
    (lambda: ls.ptr_median([1, 2, 3], 0, 5, 1.0, 1e-3, proposed_bound="1"), "proposed_bound"),
    (lambda: ls.ptr_median([1, float("nan"), 3], 0, 5, 1.0, 1e-3, proposed_bound=1.0), "values"),
    (lambda: ls.sample_and_aggregate([1, 2, 3], np.mean, 0, 5, 1.0, blocks=4), "blocks"),
    (lambda: ls.sample_and_aggregate([1, 2, 3], "mean", 0, 5, 1.0, blocks=1), "statistic"),
    (lambda: ls.sample_and_aggregate([1, 2, 3], np.mean, 0, 5, float("inf"), blocks=1), "epsilon"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


# ------------------------------------------------------------------ the shaded window
@pytest.mark.parametrize("seed", range(6))
def test_the_window_spans_exactly_a_of_k_between_two_padded_values(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([3, 5, 7, 9, 11]))
    x = rng.integers(0, 30, n).astype(float)
    for k in range(n + 4):
        low, high = ls.median_sensitivity_window(x, 0.0, 30.0, k)
        assert high - low == pytest.approx(ls.local_sensitivity_median(x, 0.0, 30.0, k))
        padded = np.concatenate([[0.0], np.sort(x), [30.0]])
        assert low in padded and high in padded and low <= high


def test_the_window_of_a_wrong_twin_is_told_apart():
    """A twin that looks one value too far (t up to k + 2) widens the window."""
    x = np.array([1.0, 2.0, 3.0, 50.0, 51.0])
    low, high = ls.median_sensitivity_window(x, 0.0, 100.0, 1)
    assert (low, high) == (2.0, 50.0)                    # A(1) = max(x3 - x1, x4 - x2, x5 - x3)
    assert high - low != 51.0 - 2.0                      # the twin's x5 - x2
    import dpteach as dp
    assert dp.beyond_global.median_sensitivity_window is ls.median_sensitivity_window


# ------------------------------------------------------------------ issue 31: the far end of A(k)
def test_a_of_k_reaches_the_whole_range_only_at_k_equal_n():
    """n = 21 values all 40 in [0, 100]: A(k) = 0 for k <= 9, 60 (one end reached) for
    k = 10..20, and 100 = upper - lower only from k = n = 21 on."""
    x = np.full(21, 40.0)
    a = ls.local_sensitivity_median(x, 0, 100, distance=np.arange(30))
    assert np.array_equal(a[:10], np.zeros(10))
    assert np.array_equal(a[10:21], np.full(11, 60.0))
    assert np.array_equal(a[21:], np.full(9, 100.0))
    assert ls.median_sensitivity_window(x, 0, 100, 21) == (0.0, 100.0)
    assert ls.median_sensitivity_window(x, 0, 100, 20) != (0.0, 100.0)


# ------------------------------------------------------------ the O(n log n) smooth sensitivity
def _smooth_brute(x, lo, hi, beta):
    """O(n^2) reference: every A(k), k = 0..n + 1, from the windows, then the maximum."""
    x = np.sort(np.clip(np.asarray(x, float), lo, hi))
    n = x.size
    m = (n + 1) // 2
    get = lambda i: lo if i < 1 else hi if i > n else x[i - 1]  # noqa: E731
    return max(math.exp(-k * beta) * max(get(m + t) - get(m + t - k - 1) for t in range(k + 2))
               for k in range(n + 2))


def _smooth_twin(x, lo, hi, beta):
    """Wrong twin: stops at k = n // 2, where the window first reaches one end."""
    x = np.sort(np.clip(np.asarray(x, float), lo, hi))
    n = x.size
    m = (n + 1) // 2
    get = lambda i: lo if i < 1 else hi if i > n else x[i - 1]  # noqa: E731
    return max(math.exp(-k * beta) * max(get(m + t) - get(m + t - k - 1) for t in range(k + 2))
               for k in range(n // 2 + 1))


@pytest.mark.slow
def test_fast_smooth_sensitivity_equals_brute_force_on_thousands_of_cases():
    rng = np.random.default_rng(31)
    differs_from_twin = 0
    for case in range(3000):
        n = int(rng.choice(np.arange(1, 26, 2)))
        kind = case % 3
        if kind == 0:      # heavy ties
            x = rng.integers(0, 4, n).astype(float) * 3.0
        elif kind == 1:    # values outside the range, clamped
            x = rng.normal(5.0, 8.0, n)
        else:
            x = rng.uniform(0.0, 10.0, n)
        beta = float(rng.choice([1e-3, 0.05, 0.3, 1.0, 5.0, 50.0]))
        want = _smooth_brute(x, 0.0, 10.0, beta)
        got = ls.smooth_sensitivity_median(x, 0.0, 10.0, beta)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300), (x, beta)
        differs_from_twin += _smooth_twin(x, 0.0, 10.0, beta) != pytest.approx(want, rel=1e-12)
    assert differs_from_twin > 100     # the short-k twin is told apart


def test_fast_smooth_sensitivity_is_fast_and_right_at_100_001_records():
    import time
    x = np.round(np.random.default_rng(0).normal(40, 10, 100_001))
    beta = ls.smooth_beta(1.0, 1e-6)
    start = time.process_time()
    s = ls.smooth_sensitivity_median(x, 0, 100, beta)
    assert time.process_time() - start < 5.0      # 0.04 s here; the O(n^2) loop took minutes
    # only k up to ln(range / A(0)) / beta can win: check those against the windows
    xs = np.sort(x)
    m = 50_001
    padded = np.concatenate(([0.0], xs, [100.0]))
    reach = 2000
    want = max(math.exp(-k * beta) * float(
        (padded[np.minimum(m + np.arange(k + 2), padded.size - 1)]
         - padded[np.maximum(m + np.arange(k + 2) - k - 1, 0)]).max()) for k in range(reach))
    assert s == pytest.approx(max(want, math.exp(-100_001 * beta) * 100.0), rel=1e-12)


# ------------------------------------------------------------------ tiny delta
def test_tiny_delta_stays_finite():
    # 1e-320 is subnormal (stored to about 8 digits), so compare with its own logarithm
    assert ls.smooth_beta(1.0, 1e-320) == pytest.approx(1.0 / (2 * (math.log(2) - math.log(1e-320))),
                                                        rel=1e-12)
    assert ls.smooth_beta(1.0, 1e-320) == pytest.approx(6.78e-4, rel=1e-3)
    assert ls.smooth_beta(1.0, 5e-324) > 0
    assert ls.smooth_beta(1.0, 1 - 1e-16) == pytest.approx(1 / (2 * math.log(2.0)), rel=1e-12)
    x = np.full(101, 40.0)     # very stable: d = 50 for b = 1
    t = ls.ptr_threshold(1.0, 1e-320)
    assert t == pytest.approx(-2 * math.log(1e-320), rel=1e-12)
    p = ls.ptr_answer_probability(x, 0, 100, 1.0, 1e-320, proposed_bound=1.0)
    assert 0 < p == pytest.approx(0.5 * math.exp(-(t - 50) / 2), rel=1e-9)
    # a threshold the data clear: at delta = 1e-320 and epsilon = 100 PTR answers
    out = ls.ptr_median(x, 0, 100, 100.0, 1e-320, proposed_bound=1.0, rng=np.random.default_rng(0), size=200)
    assert np.mean(~np.isnan(out)) > 0.9


def test_both_thresholds_give_their_delta():
    """An unstable dataset (d = 0) passes with delta/2 by default and with delta exactly
    under exact_delta=True; a binomial test at alpha = 1e-6 tells the two apart."""
    x = np.array([0.0, 0.0, 10.0, 10.0, 10.0])
    delta = 0.02
    assert ls.ptr_answer_probability(x, 0, 10, 1.0, delta, proposed_bound=1.0) == pytest.approx(delta / 2)
    assert ls.ptr_answer_probability(x, 0, 10, 1.0, delta, proposed_bound=1.0,
                                     exact_delta=True) == pytest.approx(delta)
    assert ls.ptr_threshold(1.0, delta, exact_delta=True) == pytest.approx(2 * math.log(1 / (2 * delta)))
    runs = ls.ptr_median(x, 0, 10, 1.0, delta, proposed_bound=1.0, exact_delta=True,
                         rng=np.random.default_rng(4), size=100_000)
    passed = int((~np.isnan(runs)).sum())
    assert stats.binomtest(passed, runs.size, delta).pvalue > ALPHA
    assert stats.binomtest(passed, runs.size, delta / 2).pvalue < ALPHA     # the default's rate
    with pytest.raises(ValueError, match="delta"):
        ls.ptr_threshold(1.0, 0.6, exact_delta=True)


def test_pass_probability_is_vectorised_and_matches_scipy():
    ds = np.array([0.0, 3.0, 27.0, 60.0, np.inf])
    p = ls.ptr_pass_probability(ds, 1.0, 1e-6)
    t = ls.ptr_threshold(1.0, 1e-6)
    want = stats.laplace.sf(t - ds[:-1], scale=2.0)
    np.testing.assert_allclose(p[:-1], want, rtol=1e-12)
    assert p[-1] == 1.0
    assert ls.ptr_pass_probability(27.0, 1.0, 1e-6) == pytest.approx(float(want[2]))


def test_huge_ranges_are_refused_by_name():
    with pytest.raises(ValueError, match="upper"):
        ls.smooth_median([1.0, 2.0, 3.0], 0, 1e308, 1.0, 1e-6, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="upper"):
        ls.smooth_sensitivity_median([1.0, 2.0, 3.0], -1e308, 1e308, 0.1)
    with pytest.raises(ValueError, match="proposed_bound"):
        ls.ptr_median([1.0, 2.0, 3.0], 0, 1e300, 1e-100, 1e-6, proposed_bound=1e300,
                      rng=np.random.default_rng(0))
    # wide but drawable: finite
    assert math.isfinite(ls.smooth_median([1.0, 2.0, 3.0], 0, 1e300, 1.0, 1e-6, rng=np.random.default_rng(0)))


# ------------------------------------------------------------------ the mean, add/remove
def _mean(y):
    return float(np.mean(y)) if len(y) else (LO + HI) / 2


def _brute_ls_mean(y):
    """Largest change of the mean over every neighbour: add lower or upper (the change is
    linear in the added value), or remove one record; the empty mean is the midpoint."""
    base = _mean(y)
    best = max(abs(_mean(list(y) + [v]) - base) for v in (LO, HI))
    for i in range(len(y)):
        best = max(best, abs(_mean(list(y[:i]) + list(y[i + 1:])) - base))
    return best


def _brute_a_mean(x, k):
    """max LS over every dataset within k additions/removals of x: any sub-multiset of x
    removed, records added at the ends only (each LS term is linear in an added value)."""
    best = 0.0
    x = list(x)
    for r in range(min(k, len(x)) + 1):
        for removed in set(itertools.combinations(sorted(x), r)):
            rest = list(sorted(x))
            for v in removed:
                rest.remove(v)
            for a_lo in range(k - r + 1):
                for a_hi in range(k - r - a_lo + 1):
                    best = max(best, _brute_ls_mean(rest + [LO] * a_lo + [HI] * a_hi))
    return best


@pytest.mark.slow
def test_local_sensitivity_of_the_mean_matches_brute_force():
    rng = np.random.default_rng(8)
    cases = [np.array(c, float) for c in ([2.0], [5.0], [0.0, 5.0], [1, 2, 2], [2.5, 2.5, 2.5, 2.5],
                                          [0, 0, 0, 5], [1, 3, 4, 4, 5])]
    cases += [rng.uniform(-1, 6, int(rng.integers(1, 6))) for _ in range(40)]   # some clamped
    for x in cases:
        ks = np.arange(len(x) + 3)
        got = ls.local_sensitivity_mean(x, LO, HI, distance=ks)
        want = [_brute_a_mean(np.clip(x, LO, HI), int(k)) for k in ks]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=str(x))
        assert got[-1] == (HI - LO) / 2


def test_mean_local_sensitivity_closed_form_and_a_wrong_twin():
    x = np.array([10.0, 40.0, 40.0, 40.0, 90.0])
    mu, n = x.mean(), x.size
    ls0 = max(max(100 - mu, mu) / (n + 1), np.abs(x - mu).max() / (n - 1))
    assert ls.local_sensitivity_mean(x, 0, 100) == pytest.approx(ls0)
    # the twin that only adds records (forgets removals) is too small
    assert max(100 - mu, mu) / (n + 1) < ls0
    # and the twin that forgets additions fails on concentrated data
    y = np.full(5, 40.0)
    assert ls.local_sensitivity_mean(y, 0, 100) == pytest.approx(60 / 6)


@pytest.mark.slow
def test_mean_distance_to_instability_matches_its_definition():
    rng = np.random.default_rng(9)
    for _ in range(30):
        x = rng.uniform(0, 5, int(rng.integers(1, 6)))
        for b in (0.0, 0.3, 0.6, 1.0, 2.4, 2.5):
            d = ls.distance_to_instability_mean(x, LO, HI, b)
            if b >= (HI - LO) / 2:
                assert d == math.inf
                continue
            want = min(k for k in range(len(x) + 1) if _brute_a_mean(x, k) > b)
            assert d == want, (x, b)


def test_ptr_mean_answers_at_the_exact_rate_with_the_right_noise():
    x = np.round(np.random.default_rng(2).normal(40, 5, 401))
    eps, delta, b = 1.0, 1e-6, 0.163
    d = ls.distance_to_instability_mean(x, 0, 100, b)
    p = ls.ptr_pass_probability(d, eps, delta)
    assert 0.01 < p < 0.99, (d, p)
    runs = ls.ptr_mean(x, 0, 100, eps, delta, proposed_bound=b, rng=np.random.default_rng(5), size=20_000)
    answered = runs[~np.isnan(runs)]
    assert stats.binomtest(answered.size, runs.size, p).pvalue > ALPHA
    twin = ls.ptr_pass_probability(d + 10, eps, delta)          # a distance off by ten
    assert stats.binomtest(answered.size, runs.size, twin).pvalue < ALPHA
    mean = float(np.mean(x))
    assert ks_pvalue(answered - mean, stats.laplace(scale=2 * b / eps).cdf) > ALPHA
    assert ks_pvalue(answered - mean, stats.laplace(scale=b / eps).cdf) < ALPHA
    # one call equals one run of size=1 from the same generator
    one = ls.ptr_mean(x, 0, 100, eps, delta, proposed_bound=b, rng=np.random.default_rng(3))
    many = ls.ptr_mean(x, 0, 100, eps, delta, proposed_bound=b, rng=np.random.default_rng(3), size=1)
    assert (one is None and np.isnan(many[0])) or one == many[0]


# ------------------------------------------------------------------ the panels (issue 31)
def _extent(artist, fig):
    return artist.get_window_extent(fig.canvas.get_renderer())


def test_median_panel_reaches_k_equal_n_for_every_n():
    from dpteach import panels
    p = panels.median_local_sensitivity()
    ax2 = p.figure.axes[1]
    assert p.controls["k"].max == p.controls["n"].max == ax2.get_xlim()[1]
    for n in range(p.controls["n"].min, p.controls["n"].max + 1, 2):
        assert p.controls["k"].max >= n
    p.controls["n"].value = 61
    p.controls["k"].value = 61
    a_line = ax2.lines[0]
    assert a_line.get_ydata()[61] == 100.0
    assert "A(61) = 100" in p.status.value


def test_median_panel_note_is_clear_of_the_global_line_and_the_legend_is_legible():
    from dpteach import panels
    p = panels.median_local_sensitivity()
    fig = p.figure
    fig.canvas.draw()
    ax1, ax2 = fig.axes
    glob = [ln for ln in ax2.lines if ln.get_linestyle() == ":"][0]
    y100 = ax2.transData.transform((0, 100.0))[1]
    for t in ax1.texts + ax2.texts:
        box = _extent(t, fig)
        assert not (box.y0 <= y100 <= box.y1 and box.x0 <= _extent(ax2, fig).x1), t.get_text()
    assert glob.get_ydata()[0] == 100.0
    legend = ax2.get_legend()
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 9
    assert all("^" not in t.get_text() for t in legend.get_texts())    # no tiny superscripts
    # the stacked axes do not crowd: the lower title sits clear of the upper axis label
    gap = _extent(ax1.xaxis.label, fig).y0 - _extent(ax2.title, fig).y1
    assert gap >= 8, gap
    assert "white-space:nowrap" in p.status.value


def test_ptr_panel_axes_cover_what_is_drawn():
    from dpteach import panels
    p = panels.ptr_answer_rate(spread=0.0, bound=20.0)
    fig = p.figure
    ax1, ax2 = fig.axes
    dline = ax2.lines[0]
    assert max(dline.get_ydata()) <= ax2.get_ylim()[1]
    assert ax2.get_ylim()[1] >= 60
    mark = [ln for ln in ax1.lines if ln.get_label() == "this dataset"][0]
    assert mark.get_clip_on() is False
    fig.canvas.draw()
    gap = _extent(ax1.xaxis.label, fig).y0 - _extent(ax2.title, fig).y1
    assert gap >= 8, gap
    # the curve is the lesson's closed form
    ds, prob = ax1.lines[0].get_data()
    np.testing.assert_allclose(prob, ls.ptr_pass_probability(ds, 1.0, 1e-6))


# ------------------------------------------------------------------ notebook 19's text (issue 31)
def _notebook_19():
    import json
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "19_beyond_global_sensitivity.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return cells, "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_notebook_19_states_the_far_end_of_a_k_and_the_sources_rightly():
    cells, prose = _notebook_19()
    assert "about $n/2$ the window can reach both ends" not in prose
    assert "only from $k = n$ on" in prose
    assert "7.3" not in prose and "Section 7.2" in prose and "Section 7.1" in prose
    assert "2 \\cdot 100/\\varepsilon" not in prose               # the baseline's scale is 100/ε
    assert "(\\varepsilon, \\delta/2)" in prose and "\\ln(1/(2\\delta))" in prose
    for unconfirmed in ("Proposition 3.4", "Definition 2.2", "Lemma 2.6", "Lemma 2.7"):
        assert unconfirmed not in prose
    assert "add or remove" in prose and "ptr_mean" in prose      # the mean's section
    outputs = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                        for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []))
    assert "A(k) = 100 for k = 21" in outputs and "A(k) = 60 for k = 10 ... 20" in outputs
    assert "passes with probability 5.0e-07" in outputs and "passes with probability 1.0e-06" in outputs
    assert "first n beating 100/ε" in outputs                    # the Try-it's answers, computed


# ------------------------------------------------------------------
# Bad and extreme input for every public function of notebook 19's module
# (dpteach.beyond_global), from the issue-31 fuzz: NaN, infinities, zero, negatives,
# subnormals (1e-320), 1e308, 10**400, booleans, strings, None, empty and ragged arrays
# and huge sizes.
#
# Three tables, in tests/lessons/test_bad_input.py's style (tests/_bad_values.py's lists and its
# ``check_row``):
#
# * BAD: every value is refused with ValueError or TypeError naming the parameter, before
#   any random number is drawn;
# * EXTREME: a well-formed but extreme value is either refused by name, before any draw, or
#   answered with finite numbers (an infinite distance only where documented) within a few
#   seconds;
# * the targeted rows below pin the cases (tiny delta, a range near the float
#   limit, a million distances, 200,001 records).


NAN, INF = float("nan"), float("inf")
V5 = [1.0, 2.0, 3.0, 4.0, 5.0]
BAD_DELTA = BAD_REAL + [0, 0.0, -1e-12, 1, 1.0, 1.5]                   # (0, 1)
BAD_FLAG = ["yes", 1, 0, None, 1.0]
BAD_VALUES = [NAN, INF, [1.0, NAN], [1.0, INF], [1.0, -INF], "1.0", ["1", "2"], True,
              [True, False], None, [1.0, None], [], [1 + 1j], [[1.0], [1.0, 2.0]],
              [10 ** 400, 1.0, 2.0]]
BAD_ODD = BAD_VALUES + [[1.0, 2.0], [[1.0, 2.0, 3.0]] * 3]                # the median needs odd n, 1-D
BAD_RANGE = BAD_REAL + [10 ** 400, -10 ** 400]
BAD_DISTANCE = [-1, 2.5, True, "1", NAN, INF, None, [0, -1], [0, 2.5], [0, True], ["1"],
                [[1.0], [1.0, 2.0]], np.array([0.0, NAN]), np.array([-3]), 1j]
BAD_BOUND = BAD_REAL + [-1.0, -1e-320]
BAD_PROPOSED = BAD_REAL + [0, 0.0, -1.0, 1e301, 10 ** 400]
BAD_RUNS = [0, -1, 2.5, True, "5", NAN, INF, 10 ** 12, 10 ** 400, 1j]
BAD_DELTA_EXACT = [0.5, 0.7, 1 - 1e-16]                                   # ln(1/(2 delta)) <= 0

MEDIAN = dict(values=V5, lower=0, upper=10)
PTR = dict(MEDIAN, epsilon=1.0, delta=1e-3, proposed_bound=1.0)

BAD = [
    (bg.local_sensitivity_median, dict(MEDIAN, distance=1),
     dict(values=BAD_ODD, lower=BAD_RANGE + [20], upper=BAD_RANGE + [-5], distance=BAD_DISTANCE)),
    (bg.median_sensitivity_window, dict(MEDIAN, distance=1),
     dict(values=BAD_ODD, lower=BAD_RANGE + [20], upper=BAD_RANGE + [-5],
          distance=[d for d in BAD_DISTANCE if not isinstance(d, (list, np.ndarray))])),
    (bg.smooth_sensitivity_median, dict(MEDIAN, beta=0.1),
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE, beta=BAD_EPSILON)),
    (bg.distance_to_instability, dict(MEDIAN, bound=1.0),
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE, bound=BAD_BOUND)),
    (bg.ptr_threshold, dict(epsilon=1.0, delta=1e-6),
     dict(epsilon=BAD_EPSILON + [1e-101, 1e-320], delta=BAD_DELTA, exact_delta=BAD_FLAG)),
    (bg.ptr_pass_probability, dict(distance=[0.0, 30.0], epsilon=1.0, delta=1e-6),
     dict(distance=[NAN, -1.0, -INF, [0.0, NAN], [-1.0], "1", None, [True], [[1.0], [1.0, 2.0]], 1j],
          epsilon=BAD_EPSILON, delta=BAD_DELTA, exact_delta=BAD_FLAG)),
    (bg.ptr_median, dict(PTR, size=3),
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE, epsilon=BAD_EPSILON, delta=BAD_DELTA,
          proposed_bound=BAD_PROPOSED, exact_delta=BAD_FLAG, rng=BAD_RNG, size=BAD_RUNS)),
    (bg.ptr_answer_probability, PTR,
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE, epsilon=BAD_EPSILON, delta=BAD_DELTA,
          proposed_bound=BAD_PROPOSED, exact_delta=BAD_FLAG)),
    (bg.smooth_beta, dict(epsilon=1.0, delta=1e-6), dict(epsilon=BAD_EPSILON, delta=BAD_DELTA)),
    (bg.smooth_median, dict(MEDIAN, epsilon=1.0, delta=1e-6, size=3),
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE + [1e308], epsilon=BAD_EPSILON,
          delta=BAD_DELTA, rng=BAD_RNG, size=BAD_RUNS)),
    (bg.sample_and_aggregate, dict(MEDIAN, statistic=np.mean, epsilon=1.0, blocks=2),
     dict(values=[v for v in BAD_VALUES if v != [[1.0], [1.0, 2.0]]] + [[2.0]],
          statistic=["mean", None, 3, lambda b: NAN, lambda b: "x", lambda b: [1.0, 2.0]],
          lower=BAD_RANGE, upper=BAD_RANGE, epsilon=BAD_EPSILON, blocks=BAD_RUNS + [6], rng=BAD_RNG)),
    (bg.local_sensitivity_mean, dict(MEDIAN, distance=1),
     dict(values=BAD_VALUES + [[[1.0, 2.0]] * 2], lower=BAD_RANGE + [20], upper=BAD_RANGE + [-5],
          distance=BAD_DISTANCE)),
    (bg.distance_to_instability_mean, dict(MEDIAN, bound=1.0),
     dict(values=BAD_VALUES, lower=BAD_RANGE, upper=BAD_RANGE, bound=BAD_BOUND)),
    (bg.ptr_mean, dict(PTR, size=3),
     dict(values=BAD_VALUES, lower=BAD_RANGE, upper=BAD_RANGE, epsilon=BAD_EPSILON, delta=BAD_DELTA,
          proposed_bound=BAD_PROPOSED, exact_delta=BAD_FLAG, rng=BAD_RNG, size=BAD_RUNS)),
]
BAD += [(f, dict(good, exact_delta=True), dict(delta=BAD_DELTA_EXACT)) for f, good in
        [(bg.ptr_threshold, dict(epsilon=1.0, delta=1e-6)), (bg.ptr_median, PTR), (bg.ptr_mean, PTR),
         (bg.ptr_answer_probability, PTR)]]


def _bad_rows():
    """One pytest case per (function, parameter), trying every bad value in it (a case per
    value would spend most of its time in pytest's bookkeeping)."""
    return [pytest.param(func, good, param, values, id=f"{func.__name__}-{param}")
            for func, good, bad in BAD for param, values in bad.items()]


def _refused(func, good, param, bad):
    """None when ``bad`` is refused as it must be, else what went wrong."""
    try:
        if param == "statistic" and callable(bad):      # garbage answers, named as such
            with pytest.raises((ValueError, TypeError), match="statistic"):
                func(**dict(good, statistic=bad, rng=np.random.default_rng(0)))
        elif func is bg.sample_and_aggregate and param == "values" and bad == [2.0]:
            with pytest.raises(ValueError, match="values"):     # fewer values than blocks
                func(**dict(good, values=bad))
        else:
            check_row(func, good, param, bad)
    except BaseException as err:                        # noqa: BLE001 - collected, reported
        return f"{param}={bad!r}: {type(err).__name__}: {err}"
    return None


@pytest.mark.parametrize("func, good, param, values", _bad_rows())
def test_bad_values_are_refused_by_name_before_any_draw(func, good, param, values):
    slipped = [msg for v in values if (msg := _refused(func, good, param, v))]
    assert not slipped, "\n".join(slipped)


# ------------------------------------------------------------------ extreme, well formed
#: parameters whose extreme values may give a documented infinity (a distance to
#: instability is infinite when no dataset is that unstable: a bound at least the range)
INFINITE_OK = {bg.distance_to_instability: {"bound", "upper"},
               bg.distance_to_instability_mean: {"bound", "upper"}}

EXTREME_TABLE = [
    (bg.local_sensitivity_median, dict(MEDIAN, distance=1), ("lower", "upper"), ("distance",), ("values",)),
    (bg.median_sensitivity_window, dict(MEDIAN, distance=1), ("lower", "upper"), ("distance",), ("values",)),
    (bg.smooth_sensitivity_median, dict(MEDIAN, beta=0.1), ("lower", "upper", "beta"), (), ("values",)),
    (bg.distance_to_instability, dict(MEDIAN, bound=1.0), ("lower", "upper", "bound"), (), ("values",)),
    (bg.ptr_threshold, dict(epsilon=1.0, delta=1e-6), ("epsilon", "delta"), (), ()),
    (bg.ptr_pass_probability, dict(distance=3.0, epsilon=1.0, delta=1e-6),
     ("distance", "epsilon", "delta"), (), ()),
    (bg.ptr_median, dict(PTR, size=3), ("lower", "upper", "epsilon", "delta", "proposed_bound"),
     ("size",), ("values",)),
    (bg.ptr_answer_probability, PTR, ("lower", "upper", "epsilon", "delta", "proposed_bound"), (),
     ("values",)),
    (bg.smooth_beta, dict(epsilon=1.0, delta=1e-6), ("epsilon", "delta"), (), ()),
    (bg.smooth_median, dict(MEDIAN, epsilon=1.0, delta=1e-6, size=3),
     ("lower", "upper", "epsilon", "delta"), ("size",), ("values",)),
    (bg.sample_and_aggregate, dict(MEDIAN, statistic=np.mean, epsilon=1.0, blocks=2),
     ("lower", "upper", "epsilon"), ("blocks",), ("values",)),
    (bg.local_sensitivity_mean, dict(MEDIAN, distance=1), ("lower", "upper"), ("distance",), ("values",)),
    (bg.distance_to_instability_mean, dict(MEDIAN, bound=1.0), ("lower", "upper", "bound"), (),
     ("values",)),
    (bg.ptr_mean, dict(PTR, size=3), ("lower", "upper", "epsilon", "delta", "proposed_bound"),
     ("size",), ("values",)),
]


def _extreme_rows():
    out = []
    for func, good, reals, sizes, arrays in EXTREME_TABLE:
        for kind, params, values in (("real", reals, EXTREME + [-1e308, 5e-324]),
                                     ("size", sizes, EXTREME_SIZES), ("array", arrays, EXTREME)):
            out += [pytest.param(func, good, param, kind, list(values), id=f"{func.__name__}-{param}-{kind}")
                    for param in params]
    return out


def _alarm(signum, frame):
    raise TimeoutError("no answer within the guard")


def _extreme_problem(func, good, param, kind, value):
    """None when ``func`` refuses the extreme ``value`` by name before any draw, or answers
    finitely (a documented infinite distance, never NaN); else what went wrong."""
    kwargs = dict(good)
    rng = np.random.default_rng(0)
    if func in (bg.ptr_median, bg.smooth_median, bg.sample_and_aggregate, bg.ptr_mean):
        kwargs["rng"] = rng
    before = rng.bit_generator.state
    kwargs[param] = [value] + list(good[param])[1:] if kind == "array" else value
    where = f"{func.__name__}({param}={value!r})"
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(os.environ.get("DPTEACH_HANG_GUARD", "60")))
    try:
        out = func(**kwargs)
    except (ValueError, TypeError) as err:
        if param not in str(err):
            return f"{where}: the message does not name {param!r}: {err}"
        if rng.bit_generator.state != before:
            return f"{where}: a random number was drawn before the check"
        return None
    except Exception as err:                            # noqa: BLE001 - reported
        return f"{where}: raised {type(err).__name__}: {err}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if param in INFINITE_OK.get(func, ()):
        ok = not np.isnan(np.asarray(out, dtype=float)).any()
    elif func in (bg.ptr_median, bg.ptr_mean):
        ok = out is None or bool(np.isfinite(np.asarray(out)[~np.isnan(np.asarray(out))]).all())
    else:
        ok = is_finite_answer(out)
    return None if ok else f"{where} returned {out!r}"


@pytest.mark.parametrize("func, good, param, kind, values", _extreme_rows())
def test_extreme_values_are_refused_by_name_or_answered_finitely(func, good, param, kind, values):
    problems = [p for v in values if (p := _extreme_problem(func, good, param, kind, v))]
    assert not problems, "\n".join(problems)


def test_every_public_function_has_rows():
    covered = {f for f, *_ in BAD} & {f for f, *_ in EXTREME_TABLE}
    missing = [name for name in bg.__all__ if getattr(bg, name) not in covered]
    assert not missing, missing


# ------------------------------------------------------------------ the cases
def test_tiny_delta_is_computed_with_minus_log_delta():
    assert bg.smooth_beta(1.0, 1e-320) == pytest.approx(6.78e-4, rel=1e-3)       # was 0
    assert bg.smooth_beta(1.0, 5e-324) > 0
    assert math.isfinite(bg.ptr_threshold(1.0, 5e-324))
    stable = np.full(101, 40.0)
    assert bg.ptr_answer_probability(stable, 0, 100, 1.0, 1e-320, proposed_bound=100.0) == 1.0
    assert bg.ptr_answer_probability(stable, 0, 100, 50.0, 1e-320, proposed_bound=1.0) > 0.5  # was 0
    runs = bg.ptr_median(stable, 0, 100, 50.0, 1e-320, proposed_bound=1.0,
                         rng=np.random.default_rng(0), size=100)
    assert np.mean(~np.isnan(runs)) > 0.5                                          # was always ⊥


def test_a_range_near_the_float_limit_is_refused_by_name():
    with pytest.raises(ValueError, match="upper"):
        bg.smooth_median(V5, 0, 1e308, 1.0, 1e-6, rng=np.random.default_rng(0))     # was inf
    with pytest.raises(ValueError, match="upper"):
        bg.local_sensitivity_median(V5, -1e308, 1e308)
    with pytest.raises(ValueError, match="proposed_bound"):
        bg.ptr_mean(V5, 0, 1e300, 1e-100, 1e-6, proposed_bound=1e300, rng=np.random.default_rng(0))
    assert math.isfinite(bg.smooth_sensitivity_median(V5, 0, 1e308, 0.1))


def test_large_inputs_are_answered_quickly():
    """A guard against runaway work, not a benchmark: each call takes well under a second
    here (CPU time, so a loaded machine does not fail it)."""
    big = np.random.default_rng(0).normal(40, 30, 100_001)
    flat = np.full(200_001, 40.0)
    calls = [lambda: bg.smooth_median(big, 0, 100, 1.0, 1e-6, rng=np.random.default_rng(0)),
             lambda: bg.local_sensitivity_median(V5, 0, 10, distance=np.arange(10 ** 6)),
             lambda: bg.local_sensitivity_mean(V5, 0, 10, distance=np.arange(10 ** 6)),
             lambda: bg.distance_to_instability(big, 0, 100, 1.0),
             lambda: bg.distance_to_instability_mean(flat, 0, 10, 1.0),
             lambda: bg.ptr_mean(flat, 0, 100, 1.0, 1e-6, proposed_bound=1.0, rng=np.random.default_rng(0)),
             lambda: bg.local_sensitivity_median(big, 0, 100, distance=10 ** 400)]
    for call in calls:
        start = time.process_time()
        out = call()
        assert time.process_time() - start < 5.0
        assert out is None or is_finite_answer(out)
    assert bg.distance_to_instability_mean(flat, 0, 10, 1.0) == 199_993      # n - 8: (u - l)/N > 1


def test_the_size_of_one_record_is_handled_for_the_mean():
    """n = 1: removing the record leaves the empty dataset, whose mean is the midpoint."""
    assert bg.local_sensitivity_mean([2.0], 0, 10) == pytest.approx(max(8 / 2, 2 / 2, abs(2.0 - 5.0)))
    assert bg.distance_to_instability_mean([2.0], 0, 10, 4.99) == 1.0        # the empty dataset: 5
