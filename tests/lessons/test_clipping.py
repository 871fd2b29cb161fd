"""Clipped sums, counts and means, and the private quantile (dpteach.clipping, notebook 14).

Statistical tests run at alpha = 1e-6 and each is paired with a wrong twin it rejects."""

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import audit, clipping as cl
from conftest import ALPHA, chisq_pvalue, ks_pvalue

VALUES = np.array([2.0, 7.5, 3.0, -1.0, 12.0, 5.0, 0.5, 9.0, 30.0, 4.0])
LO, HI, EPS = 0.0, 10.0, 0.8


# ------------------------------------------------------------------ the budget split
def test_noise_scales_are_the_documented_split():
    b_sum, b_count = cl.clipped_mean_noise_scales(-3.0, 5.0, 0.5)
    assert b_sum == pytest.approx(2 * 5.0 / 0.5) and b_count == pytest.approx(2 / 0.5)
    assert b_sum != pytest.approx(5.0 / 0.5)            # the wrong twin: no split


def test_sum_and_count_noise_are_laplace_at_half_the_budget(rng):
    n = 20_000
    s, c = cl.noisy_sum_and_count(VALUES, LO, HI, EPS, rng=rng, size=n)
    b_sum, b_count = cl.clipped_mean_noise_scales(LO, HI, EPS)
    true_sum, true_count = np.clip(VALUES, LO, HI).sum(), VALUES.size
    assert ks_pvalue(s - true_sum, stats.laplace(scale=b_sum).cdf) > ALPHA
    assert ks_pvalue(c - true_count, stats.laplace(scale=b_count).cdf) > ALPHA
    # documented variances 8 D^2 / eps^2 and 8 / eps^2 (2 b^2 each)
    assert 2 * b_sum ** 2 == pytest.approx(8 * HI ** 2 / EPS ** 2)
    assert 2 * b_count ** 2 == pytest.approx(8 / EPS ** 2)
    # wrong twins: the whole budget on each part (scale halved) is rejected
    assert ks_pvalue(s - true_sum, stats.laplace(scale=b_sum / 2).cdf) < ALPHA
    assert ks_pvalue(c - true_count, stats.laplace(scale=b_count / 2).cdf) < ALPHA
    # and the two noises are independent (rank correlation test)
    assert stats.spearmanr(s, c).pvalue > ALPHA


def test_clipped_mean_is_the_floored_ratio_kept_in_range():
    s, c = cl.noisy_sum_and_count(VALUES, LO, HI, EPS, rng=np.random.default_rng(7), size=1000)
    m = cl.clipped_mean(VALUES, LO, HI, EPS, rng=np.random.default_rng(7), size=1000)
    np.testing.assert_allclose(m, np.clip(s / np.maximum(c, 1), LO, HI))
    assert ((m >= LO) & (m <= HI)).all()
    one = dp.clipped_mean(VALUES, LO, HI, EPS, rng=3)
    assert isinstance(one, float) and LO <= one <= HI


def test_empty_dataset_gives_noise_inside_the_range(rng):
    m = cl.clipped_mean([], -1.0, 1.0, 1.0, rng=rng, size=2000)
    assert ((m >= -1) & (m <= 1)).all() and np.unique(m).size > 100


def test_error_prediction_matches_simulation(rng):
    x = rng.gamma(2.0, 4.0, size=400)
    lo, hi, eps, reps = 0.0, 15.0, 1.0, 200_000
    err = cl.clipped_mean_error(x, lo, hi, eps)
    assert err.bias == pytest.approx(np.clip(x, lo, hi).mean() - x.mean())
    est = cl.clipped_mean(x, lo, hi, eps, rng=rng, size=reps)
    sd = est.std()
    assert sd == pytest.approx(err.noise_sd, rel=0.02)
    # the wrong twin: forgetting the count's noise (sd = sqrt(8 D^2)/(eps n)) is off by more
    twin = math.sqrt(8 * hi ** 2) / (eps * x.size)
    assert abs(twin / sd - 1) > 0.05
    # the average estimate's bias is the clipping bias (within 6 standard errors + the
    # ratio's own bias, about 8/(eps n)^2 of the mean)
    slack = 6 * sd / math.sqrt(reps) + 8 / (eps * x.size) ** 2 * err.clamped_mean * 2
    assert abs(est.mean() - x.mean() - err.bias) < slack
    assert err.rmse == pytest.approx(math.hypot(err.bias, err.noise_sd))


# ------------------------------------------------------------------ auditing the split
def _unsplit_mean(lo, hi, eps):
    """The wrong twin: sum and count each at the full epsilon, claimed epsilon-DP."""
    def mech(data, size, rng):
        s = dp.mechanisms.clamped_sum(data, lo, hi, eps, rng=rng, size=size)
        c = dp.laplace_mechanism(float(np.size(data)), 1.0, eps, rng=rng, size=size)
        return np.clip(s / np.maximum(c, 1.0), lo, hi)
    return mech


# worst-case neighbours: the added person (value -1) lowers the sum by D and raises the
# count by 1, and both push the mean down
MEAN_X, MEAN_Y = np.array([1.0, 1.0]), np.array([1.0, 1.0, -1.0])


def test_audit_clipped_mean_not_refuted_and_unsplit_refuted():
    eps = 1.0
    good = audit.audit(lambda d, size, rng: cl.clipped_mean(d, -1.0, 1.0, eps, rng=rng, size=size),
                       MEAN_X, MEAN_Y, n=1_000_000, alpha=ALPHA, rng=np.random.default_rng(1),
                       claimed_epsilon=eps)
    assert not good.refuted, good.summary()
    bad = audit.audit(_unsplit_mean(-1.0, 1.0, eps), MEAN_X, MEAN_Y, n=1_000_000, alpha=ALPHA,
                      rng=np.random.default_rng(2), claimed_epsilon=eps)
    assert bad.refuted and bad.epsilon_lb > 1.2 * eps, bad.summary()


def test_audit_of_the_released_pair():
    """A curator that publishes the noisy sum and count (and their ratio) is audited on
    a post-processing of the pair, S/D + C; the unsplit pair is 2 epsilon-DP."""
    lo, hi, eps = 0.0, 10.0, 1.0
    x = np.array([2.0, 7.0, 3.0, 0.0, 10.0, 5.0])
    y = np.append(x, hi)

    def pair(split):
        def mech(data, size, rng):
            if split:
                s, c = cl.noisy_sum_and_count(data, lo, hi, eps, rng=rng, size=size)
            else:
                s = dp.mechanisms.clamped_sum(data, lo, hi, eps, rng=rng, size=size)
                c = dp.laplace_mechanism(float(np.size(data)), 1.0, eps, rng=rng, size=size)
            return s / hi + c
        return mech

    good = audit.audit(pair(True), x, y, n=1_000_000, alpha=ALPHA, rng=np.random.default_rng(3),
                       claimed_epsilon=eps)
    bad = audit.audit(pair(False), x, y, n=1_000_000, alpha=ALPHA, rng=np.random.default_rng(4),
                      claimed_epsilon=eps)
    assert not good.refuted and bad.refuted, (good.summary(), bad.summary())


# ------------------------------------------------------------------ private quantile
def _by_hand(values, q, lo, hi, eps, *, half=True, sensitivity=1.0, weighted=True):
    z = np.concatenate([[lo], np.sort(np.clip(values, lo, hi)), [hi]])
    n = len(values)
    u = -np.abs(np.arange(n + 1) - q * n)
    w = np.exp(eps * u / ((2.0 if half else 1.0) * sensitivity))
    if weighted:
        w = w * np.diff(z)
    else:
        w = w * (np.diff(z) > 0)
    return w / w.sum()


def test_quantile_probabilities_closed_form():
    edges, p = cl.quantile_interval_probabilities(VALUES, 0.3, LO, HI, EPS)
    np.testing.assert_allclose(p, _by_hand(VALUES, 0.3, LO, HI, EPS), rtol=1e-12, atol=1e-15)
    assert edges[0] == LO and edges[-1] == HI and p.size == VALUES.size + 1
    assert not np.allclose(p, _by_hand(VALUES, 0.3, LO, HI, EPS, half=False), rtol=1e-3)
    # large epsilon and many values: still finite and normalised
    big = np.random.default_rng(0).normal(size=5000)
    _, p = cl.quantile_interval_probabilities(big, 0.5, -4, 4, 500.0)
    assert np.isfinite(p).all() and p.sum() == pytest.approx(1.0)


@pytest.mark.slow
@pytest.mark.parametrize("q", [0.5, 0.9])
def test_private_quantile_matches_the_exponential_mechanism(rng, q):
    n = 200_000
    edges, p = cl.quantile_interval_probabilities(VALUES, q, LO, HI, EPS)
    out = cl.private_quantile(VALUES, q, LO, HI, EPS, rng=rng, size=n)
    assert ((out >= LO) & (out <= HI)).all()
    idx = np.searchsorted(edges, out, side="right") - 1
    idx = np.minimum(idx, p.size - 1)
    counts = np.bincount(idx, minlength=p.size)
    assert chisq_pvalue(counts, p) > ALPHA
    for twin in (dict(half=False), dict(sensitivity=2.0), dict(weighted=False)):
        assert chisq_pvalue(counts, _by_hand(VALUES, q, LO, HI, EPS, **twin)) < ALPHA, twin
    # uniform inside the chosen interval
    widths = np.diff(edges)[idx]
    ok = widths > 0
    frac = (out[ok] - edges[idx][ok]) / widths[ok]
    assert ks_pvalue(frac, stats.uniform.cdf) > ALPHA
    assert ks_pvalue(frac, stats.beta(1.1, 1.0).cdf) < ALPHA       # a slightly tilted twin


def test_private_quantile_concentrates_near_the_true_quantile(rng):
    x = rng.normal(50, 10, size=2000)
    out = dp.clipping.private_quantile(x, 0.9, 0, 100, 1.0, rng=rng, size=2000)
    assert abs(np.median(out) - np.quantile(x, 0.9)) < 1.0
    assert isinstance(dp.clipping.private_quantile(x, 0.5, 0, 100, 1.0, rng=1), float)


def test_private_quantile_empty_is_uniform(rng):
    out = cl.private_quantile([], 0.5, -2.0, 3.0, 1.0, rng=rng, size=20_000)
    assert ks_pvalue(out, stats.uniform(-2, 5).cdf) > ALPHA
    assert ks_pvalue(out, stats.uniform(-2, 4.9).cdf) < ALPHA


def test_cross_check_with_diffprivlib(rng):
    """diffprivlib's quantile (IBM) implements the same mechanism (Smith 2011): its exact
    interval probabilities agree to 1e-9 and its samples pass our chi-square test."""
    pytest.importorskip("sklearn")
    try:
        from diffprivlib.mechanisms import Exponential
        from diffprivlib.tools import quantile
    except ImportError as exc:            # diffprivlib 0.6 does not import under scikit-learn >= 1.8
        pytest.skip(f"diffprivlib does not import: {exc}")
    x = VALUES
    q, eps = 0.3, EPS
    z = np.concatenate([[LO], np.sort(np.clip(x, LO, HI)), [HI]])
    mech = Exponential(epsilon=eps, sensitivity=1, utility=list(-np.abs(np.arange(x.size + 1) - q * x.size)),
                       measure=list(np.diff(z)))
    theirs = np.diff(np.concatenate([[0.0], mech._probabilities]))
    edges, ours = cl.quantile_interval_probabilities(x, q, LO, HI, eps)
    np.testing.assert_allclose(theirs, ours, rtol=1e-9, atol=1e-12)
    gen = np.random.RandomState(11)       # diffprivlib takes a RandomState
    draws = np.array([quantile(x, q, epsilon=eps, bounds=(LO, HI), random_state=gen)
                      for _ in range(6_000)])
    idx = np.minimum(np.searchsorted(edges, draws, side="right") - 1, ours.size - 1)
    counts = np.bincount(idx, minlength=ours.size)
    assert chisq_pvalue(counts, ours) > ALPHA
    assert chisq_pvalue(counts, _by_hand(x, q, LO, HI, eps, half=False)) < ALPHA


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call, exc, word", [
    (lambda: cl.clipped_mean(VALUES, 0, 10, float("nan")), ValueError, "epsilon"),
    (lambda: cl.clipped_mean(VALUES, 0, 10, 0.0), ValueError, "epsilon"),
    (lambda: cl.clipped_mean(VALUES, 0, 10, True), TypeError, "epsilon"),
    (lambda: cl.clipped_mean(VALUES, 10, 0, 1.0), ValueError, "lower"),
    (lambda: cl.clipped_mean(VALUES, 0, float("inf"), 1.0), ValueError, "upper"),
    (lambda: cl.clipped_mean(VALUES, "0", 10, 1.0), TypeError, "lower"),
    (lambda: cl.clipped_mean([1.0, float("nan")], 0, 10, 1.0), ValueError, "values"),
    (lambda: cl.clipped_mean("abc", 0, 10, 1.0), TypeError, "values"),
    (lambda: cl.clipped_mean(VALUES, 0, 10, 1.0, size=-1), ValueError, "size"),
    (lambda: cl.clipped_mean(VALUES, 0, 10, 1.0, rng="x"), TypeError, "rng"),
    (lambda: cl.clipped_mean_error([], 0, 10, 1.0), ValueError, "values"),
    (lambda: cl.private_quantile(VALUES, 1.5, 0, 10, 1.0), ValueError, "quantile"),
    (lambda: cl.private_quantile(VALUES, float("nan"), 0, 10, 1.0), ValueError, "quantile"),
    (lambda: cl.private_quantile(VALUES, 0.5, 0, 10, -1.0), ValueError, "epsilon"),
    (lambda: cl.private_quantile(VALUES, 0.5, 3, 3, 1.0), ValueError, "lower"),
    (lambda: cl.quantile_interval_probabilities([True, False], 0.5, 0, 10, 1.0), TypeError, "values"),
])
def test_bad_input(call, exc, word):
    with pytest.raises(exc, match=word):
        call()


# ------------------------------------------------------------------ the standard bad values
from _bad_values import (BAD_COUNT, BAD_EPSILON, BAD_REAL, BAD_RNG, BAD_SEED, BAD_SIZE,  # noqa: E402
                         BAD_VALUES, check_row, rows, swept)

_GOOD = dict(values=[1.0, 7.0, 30.0], lower=0.0, upper=10.0, epsilon=0.5)
_LOWER, _UPPER = BAD_REAL + [10.0, 11.0], BAD_REAL + [0.0, -1.0]
_TABLE = [
    (cl.clip_range, dict(lower=0.0, upper=1.0), dict(lower=BAD_REAL + [1.0, 2.0], upper=BAD_REAL + [0.0])),
    # the bound and epsilon may be arrays (the notebook 14 panel sweeps the bound): each bad
    # value alone, in a list and in an array
    (cl.clipped_mean_noise_scales, dict(lower=0.0, upper=10.0, epsilon=0.5),
     dict(lower=swept(_LOWER, 0.0), upper=swept(_UPPER, 10.0), epsilon=swept(BAD_EPSILON, 0.5))),
    (cl.noisy_sum_and_count, dict(_GOOD, size=3),
     dict(values=BAD_VALUES, lower=_LOWER, upper=_UPPER, epsilon=BAD_EPSILON, rng=BAD_RNG, size=BAD_SIZE)),
    (cl.clipped_mean, dict(_GOOD, size=3),
     dict(values=BAD_VALUES, lower=_LOWER, upper=_UPPER, epsilon=BAD_EPSILON, rng=BAD_RNG, size=BAD_SIZE)),
    (cl.clipped_mean_error, _GOOD,
     dict(values=BAD_VALUES + [[]], lower=swept(_LOWER, 0.0), upper=swept(_UPPER, 10.0),
          epsilon=swept(BAD_EPSILON, 0.5))),
    (cl.clipped_mean_releases, dict(_GOOD, unit_noise=[[0.1, -0.3], [0.2, 1.0]]),
     dict(values=BAD_VALUES + [[]], lower=swept(_LOWER, 0.0), upper=swept(_UPPER, 10.0),
          epsilon=swept(BAD_EPSILON, 0.5), unit_noise=BAD_VALUES + [[0.1, 0.2], [[0.1], [0.2], [0.3]]])),
    (cl.clipped_mean_ratio, dict(noisy_sum=[3.0, 40.0], noisy_count=[2.0, -1.0], lower=0.0, upper=10.0),
     dict(noisy_sum=BAD_VALUES[:-2], noisy_count=BAD_VALUES[:-2], lower=swept(_LOWER, 0.0),
          upper=swept(_UPPER, 10.0))),
    (cl.quantile_interval_probabilities, dict(_GOOD, quantile=0.5),
     dict(values=BAD_VALUES, quantile=BAD_REAL + [-0.1, 1.1], lower=_LOWER, upper=_UPPER, epsilon=BAD_EPSILON)),
    (cl.private_quantile, dict(_GOOD, quantile=0.5, size=3),
     dict(values=BAD_VALUES, quantile=BAD_REAL + [-0.1, 1.1], lower=_LOWER, upper=_UPPER, epsilon=BAD_EPSILON,
          rng=BAD_RNG, size=BAD_SIZE)),
    (cl.example_incomes, dict(n=10, seed=1), dict(n=BAD_COUNT, seed=BAD_SEED)),
]


@pytest.mark.parametrize("func, good, param, bad", rows(_TABLE))
def test_standard_bad_values_are_refused(func, good, param, bad):
    check_row(func, good, param, bad)


# ------------------------------------------------------------------ the panel's sweep (issue 21)
def test_clipped_mean_error_takes_arrays_elementwise():
    x = np.random.default_rng(3).gamma(2.0, 4.0, size=300)
    uppers = np.geomspace(2.0, 200.0, 9)
    eps = np.array([0.1, 1.0])
    e = cl.clipped_mean_error(x, 0.0, uppers[None, :], eps[:, None])
    assert e.rmse.shape == e.bias.shape == e.clamped_mean.shape == (2, 9)
    for i, ep in enumerate(eps):
        for j, u in enumerate(uppers):
            one = cl.clipped_mean_error(x, 0.0, float(u), float(ep))
            assert tuple(f[i, j] for f in e) == one
    assert isinstance(cl.clipped_mean_error(x, 0.0, 10.0, 1.0).rmse, float)
    with pytest.raises(ValueError, match="lower"):
        cl.clipped_mean_error(x, 0.0, [5.0, 0.0], 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        cl.clipped_mean_error(x, 0.0, [5.0, 6.0], [1.0, float("nan")])


def test_clipped_mean_releases_are_clipped_mean_with_given_noise():
    """The simulation is the mechanism: with the Lap(1) draws the mechanism would scale,
    it gives clipped_mean's releases; its wrong twin (the count's noise left out) does not."""
    reps = 4000
    got = cl.clipped_mean(VALUES, LO, HI, EPS, rng=np.random.default_rng(5), size=reps)
    r = np.random.default_rng(5)
    z = np.stack([r.laplace(0.0, 1.0, reps), r.laplace(0.0, 1.0, reps)])
    sim = cl.clipped_mean_releases(VALUES, LO, HI, EPS, z)
    np.testing.assert_allclose(sim, got, rtol=1e-12, atol=1e-12)
    twin = cl.clipped_mean_releases(VALUES, LO, HI, EPS, z * np.array([[1.0], [0.0]]))
    assert np.abs(twin - got).max() > 0.1
    # a sweep of the bound: one row of releases per bound, the same draws in each
    rows_ = cl.clipped_mean_releases(VALUES, LO, [HI, 20.0], EPS, z)
    assert rows_.shape == (2, reps)
    np.testing.assert_array_equal(rows_[0], sim)


def test_the_panel_draws_from_the_lessons(monkeypatch):
    """Notebook 14's panel: its predicted RMSE line is clipped_mean_error's and its
    simulated curves come from clipped_mean_releases; wrong twins of either show."""
    import matplotlib
    matplotlib.use("Agg")
    from dpteach.panels import clipping as panel_module

    panel = panel_module.clipping_tradeoff()
    ax = panel.figure.axes[1]
    pred, rmse = ax.lines[3].get_ydata().copy(), ax.lines[2].get_ydata().copy()
    x = cl.example_incomes()
    np.testing.assert_array_equal(pred, cl.clipped_mean_error(x, 0.0, panel_module._GRID, 0.5).rmse)
    real_error, real_releases = cl.clipped_mean_error, cl.clipped_mean_releases
    monkeypatch.setattr(cl, "clipped_mean_error",
                        lambda v, lo, hi, e: real_error(v, lo, hi, 2 * e))      # half the noise
    monkeypatch.setattr(cl, "clipped_mean_releases",
                        lambda v, lo, hi, e, z: real_releases(v, lo, hi, 2 * e, z))
    panel.controls["epsilon"].value = 0.25
    panel.controls["epsilon"].value = 0.5
    assert not np.allclose(ax.lines[3].get_ydata(), pred)
    assert not np.allclose(ax.lines[2].get_ydata(), rmse)
