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
    """S(x) <= e^beta S(y) for neighbours x, y: the defining property [NRS07, Def. 2.1]."""
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
    assert dp.median_sensitivity_window is ls.median_sensitivity_window
