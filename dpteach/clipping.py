"""Clipping, private means and private quantiles: statistics with no bounded sensitivity.

A sum of raw values has unbounded sensitivity: one person with an enormous value moves
it arbitrarily far. Clipping every value into [lower, upper] bounds the sensitivity,
at the price of a bias when values fall outside the range. This module releases

- the noisy clamped sum and the noisy count, each with half the budget
  (:func:`noisy_sum_and_count`), and the mean as their ratio (:func:`clipped_mean`);
- the bias and the noise of that mean (:func:`clipped_mean_error`), so the clipping
  bound can be chosen by the bias-variance trade-off;
- a private quantile by the exponential mechanism (Smith 2011), which can choose the
  clipping bound itself (:func:`private_quantile`, :func:`quantile_interval_probabilities`).

Sources: Dwork & Roth 2014 (Sections 3.3, 3.4) [DR14]; A. Smith, "Privacy-preserving
statistical estimation with optimal convergence rates", STOC 2011, Section 3 (the
quantile mechanism). Taught in notebook 14; notebook 06 section 6 introduces the ratio.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ._support.validate import (Count, Epsilon, NonnegativeInt, Probability, Real, Reals, Rng, Size,
                        Using, Values, checked, valid_epsilon, valid_noise_scale, valid_reals,
                        valid_range, valid_values)
from .mechanisms import clamped_sum, exponential_mechanism, exponential_probabilities, laplace_mechanism

__all__ = [
    "clip_range",
    "clipped_mean_noise_scales",
    "noisy_sum_and_count",
    "clipped_mean",
    "clipped_mean_ratio",
    "clipped_mean_releases",
    "centred_clipped_mean",
    "known_n_mean",
    "clipped_mean_error",
    "ClippedMeanError",
    "quantile_interval_probabilities",
    "private_quantile",
    "example_incomes",
]


def clip_range(lower, upper):
    """Check a clipping range: finite reals with lower < upper. Returns (lower, upper)."""
    return valid_range(lower, upper)


def _ranges(lower, upper):
    """:func:`clip_range` for numbers; for arrays (a panel sweeping a bound) every element
    checked the same way. Returns (lower, upper) as floats or float arrays."""
    if np.ndim(lower) == 0 and np.ndim(upper) == 0:
        return clip_range(lower, upper)
    lo, hi = valid_reals(lower, "lower"), valid_reals(upper, "upper")
    try:
        bad = np.broadcast_arrays(lo >= hi, lo, hi)
    except ValueError:
        raise ValueError(f"lower and upper must broadcast together, got shapes {np.shape(lo)} "
                         f"and {np.shape(hi)}") from None
    if bad[0].any():
        raise ValueError(f"lower must be < upper, got lower={bad[1][bad[0]].flat[0]:g}, "
                         f"upper={bad[2][bad[0]].flat[0]:g}")
    return lo, hi


@checked(lower=Reals(), upper=Reals(), epsilon=Reals(low=0.0, low_open=True))
def clipped_mean_noise_scales(lower, upper, epsilon):
    """Laplace scales (b_sum, b_count) used by :func:`clipped_mean` at total budget epsilon.

    The budget is split in two equal halves (basic composition, [DR14 Thm 3.14]):
    the clamped sum, whose add/remove sensitivity is D = max(|lower|, |upper|), gets
    epsilon/2, so b_sum = 2 D / epsilon (in the values' units); the count (sensitivity 1)
    gets epsilon/2, so b_count = 2 / epsilon (in people). Each Laplace noise Lap(b) has
    variance 2 b^2: Var(sum noise) = 8 D^2 / epsilon^2, Var(count noise) = 8 / epsilon^2.
    Both scales must lie in [1e-300, 1e305]: a subnormal epsilon or a range near the
    float limit is refused, naming lower, upper and epsilon. ``lower``, ``upper`` and
    ``epsilon`` may be arrays (broadcast; floats in, floats out). Notebook 14.
    """
    lo, hi = _ranges(lower, upper)                 # lower < upper
    with np.errstate(over="ignore"):
        b_sum = 2.0 * np.maximum(np.abs(lo), np.abs(hi)) / epsilon
        b_count = 2.0 / epsilon
    positive = np.asarray(b_sum)[np.asarray(b_sum) > 0]
    for b in (positive.min(), positive.max()) if positive.size else ():
        valid_noise_scale(b, "lower, upper or epsilon", "2 max(|lower|, |upper|) / epsilon")
    for b in (np.min(b_count), np.max(b_count)):
        valid_noise_scale(b, "epsilon", "2 / epsilon (the count's)")
    if np.ndim(b_sum) == 0 and np.ndim(b_count) == 0:
        return float(b_sum), float(b_count)
    return b_sum, b_count


@checked(values=Values(allow_empty=True), lower=Real(), upper=Real(), epsilon=Epsilon(),
         size=Size(per_draw=2), rng=Rng())
def noisy_sum_and_count(values, lower, upper, epsilon, *, rng=None, size=None):
    """(noisy clamped sum, noisy count), each released with epsilon/2: epsilon-DP in total.

    sum~   = sum_i clip(x_i, lower, upper) + Lap(2 D / epsilon),  D = max(|lower|, |upper|)
    count~ = n + Lap(2 / epsilon)

    The sum is :func:`dpteach.mechanisms.clamped_sum` at epsilon/2, the count
    :func:`dpteach.laplace_mechanism` at epsilon/2; the two noises are independent. Under
    add/remove neighbours each part is (epsilon/2)-DP, so the pair is epsilon-DP (basic
    composition, [DR14 Thm 3.14]). ``size`` draws that many independent pairs. Notebook 14.
    """
    lo, hi = clip_range(lower, upper)                # lower < upper
    clipped_mean_noise_scales(lo, hi, epsilon)       # both scales in the usable range
    noisy_sum = clamped_sum(values, lo, hi, epsilon / 2, rng=rng, size=size)
    noisy_count = laplace_mechanism(float(values.size), 1.0, epsilon / 2, rng=rng, size=size)
    return noisy_sum, noisy_count


def clipped_mean(values, lower, upper, epsilon, *, rng=None, size=None):
    """An epsilon-DP mean: the noisy clamped sum over the noisy count, kept in [lower, upper].

    estimate = clip( sum~ / max(count~, 1), lower, upper )

    with sum~ and count~ from :func:`noisy_sum_and_count`: the budget is split in two
    equal halves, the sum gets Lap(2 D / epsilon) (D = max(|lower|, |upper|), variance
    8 D^2 / epsilon^2) and the count Lap(2 / epsilon) (variance 8 / epsilon^2); see
    :func:`clipped_mean_noise_scales`. Flooring the count at 1 (a noisy count of an empty
    or tiny dataset can be 0 or negative) and clipping the ratio into [lower, upper] are
    post-processing: they cost no privacy [DR14 Prop. 2.1].

    Error (see :func:`clipped_mean_error`): the bias is that of clipping,
    mean(clip(x)) - mean(x), plus the ratio's small-n bias (about 8/(epsilon^2 n^2) of the
    mean); the noise has standard deviation about sqrt(8 D^2 + 8 m^2) / (epsilon n), with
    m the clamped mean (first-order expansion of the ratio). ``values`` may be empty (the
    result is then noise clipped into the range). ``size`` draws that many independent
    releases. Notebook 14.
    """
    noisy_sum, noisy_count = noisy_sum_and_count(values, lower, upper, epsilon, rng=rng, size=size)
    return clipped_mean_ratio(noisy_sum, noisy_count, lower, upper)


@checked(noisy_sum=Values(allow_empty=True), noisy_count=Values(allow_empty=True), lower=Reals(),
         upper=Reals())
def clipped_mean_ratio(noisy_sum, noisy_count, lower, upper):
    """The post-processing step of :func:`clipped_mean`: clip(sum~ / max(count~, 1), lower,
    upper). Flooring the count at 1 and clipping into the range cost no privacy
    [DR14 Prop. 2.1]. Broadcasts (floats in, float out). Notebook 14."""
    lo, hi = _ranges(lower, upper)                 # lower < upper
    out = np.clip(noisy_sum / np.maximum(noisy_count, 1.0), lo, hi)
    return out.item() if out.ndim == 0 else out


def _valid_unit_noise(unit_noise, name):
    """Lap(1) draws of shape (2, runs), each within [-1000, 1000]."""
    z = valid_values(unit_noise, name)
    if z.ndim != 2 or z.shape[0] != 2:
        raise ValueError(f"{name} must have shape (2, runs), got {z.shape}")
    if np.abs(z).max(initial=0.0) > 1000:     # a Lap(1) draw of a float64 generator is below 750
        raise ValueError(f"{name} must hold Lap(1) draws, each within [-1000, 1000]")
    return z


@checked(values=Values(), lower=Reals(), upper=Reals(), epsilon=Reals(low=0.0, low_open=True),
         unit_noise=Using(_valid_unit_noise))
def clipped_mean_releases(values, lower, upper, epsilon, unit_noise):
    """What :func:`clipped_mean` releases when its two Laplace noises are b_sum z_1 and
    b_count z_2 for given Lap(1) draws ``unit_noise`` = (z_1, z_2), shape (2, runs):
    :func:`clipped_mean_ratio` of sum_i clip(x_i, lower, upper) + b_sum z_1 and n + b_count
    z_2, with the scales of :func:`clipped_mean_noise_scales` (a Laplace draw of scale b is
    b times one of scale 1).

    ``lower``, ``upper``, ``epsilon`` broadcast to a shape B; the result has shape
    B + (runs,). The same draws at every bound are common random numbers: error curves
    against the bound come out smooth (notebook 14's panel). A simulation, never a
    release: the same noise at two bounds would give the data away.
    """
    x, z = values.ravel(), unit_noise
    lo, hi = _ranges(lower, upper)                 # lower < upper
    b_sum, b_count = clipped_mean_noise_scales(lo, hi, epsilon)
    lo, hi, b_sum, b_count = (np.asarray(a, float)[..., None] for a in np.broadcast_arrays(
        lo, hi, b_sum, b_count))
    clamped_sum = np.clip(x, lo, hi).sum(axis=-1, keepdims=True)
    return clipped_mean_ratio(clamped_sum + b_sum * z[0], x.size + b_count * z[1], lo, hi)


@checked(values=Values(allow_empty=True), lower=Real(), upper=Real(), epsilon=Epsilon(),
         size=Size(), rng=Rng())
def centred_clipped_mean(values, lower, upper, epsilon, *, rng=None, size=None):
    """:func:`clipped_mean` with the range centred first: epsilon-DP, less noise on the sum.

    With c = (lower + upper)/2, the clamped values minus c lie in [-(upper - lower)/2,
    (upper - lower)/2], so adding or removing one person moves their sum by at most
    (upper - lower)/2 <= max(|lower|, |upper|). Release that centred sum + Lap((upper -
    lower)/epsilon) and the count + Lap(2/epsilon) (epsilon/2 each), then
    estimate = clip(c + sum~ / max(count~, 1), lower, upper) (post-processing). For
    [0, U] the sum's noise is halved. Notebook 14.
    """
    lo, hi = clip_range(lower, upper)              # lower < upper
    centre, half = (lo + hi) / 2.0, (hi - lo) / 2.0
    shifted = np.clip(values.ravel(), lo, hi) - centre
    noisy_sum = laplace_mechanism(float(shifted.sum()), half, epsilon / 2, rng=rng, size=size)
    noisy_count = laplace_mechanism(float(values.size), 1.0, epsilon / 2, rng=rng, size=size)
    out = np.clip(centre + np.asarray(noisy_sum) / np.maximum(np.asarray(noisy_count), 1.0), lo, hi)
    return out.item() if out.ndim == 0 else out


@checked(values=Values(), lower=Real(), upper=Real(), epsilon=Epsilon(), size=Size(), rng=Rng())
def known_n_mean(values, lower, upper, epsilon, *, rng=None, size=None):
    """The mean of values clamped to [lower, upper] + Lap((upper - lower) / (n epsilon)).

    For a dataset whose size n is public and fixed, neighbours *replace* one person
    (substitution), and the clamped mean then moves by at most (upper - lower)/n: the
    whole budget goes to one Laplace release, no count is needed [DR14 Def. 3.1, Thm 3.6].
    It is epsilon-DP under substitution neighbours only (a different guarantee from
    :func:`clipped_mean`'s add/remove), and it releases n. Notebook 14.
    """
    lo, hi = clip_range(lower, upper)              # lower < upper
    n = values.size                                # not empty: Values() refuses []
    valid_noise_scale((hi - lo) / (n * epsilon), "epsilon", "(upper - lower) / (n epsilon)")
    mean = float(np.clip(values.ravel(), lo, hi).mean())
    return laplace_mechanism(mean, (hi - lo) / n, epsilon, rng=rng, size=size)


ClippedMeanError = namedtuple("ClippedMeanError", ["bias", "noise_sd", "rmse", "clamped_mean"])
ClippedMeanError.__doc__ = """Predicted error of :func:`clipped_mean` (values' units):
bias = mean(clip(x)) - mean(x), noise_sd (first-order), rmse = sqrt(bias^2 + noise_sd^2),
clamped_mean = mean(clip(x))."""


@checked(values=Values(), lower=Reals(), upper=Reals())
def clipped_mean_error(values, lower, upper, epsilon):
    """The bias and noise of :func:`clipped_mean`, to first order in 1/n.

    bias     = mean(clip(x, lower, upper)) - mean(x)         (clipping; does not average away)
    noise_sd = sqrt(Var(sum noise) + m^2 Var(count noise)) / n
             = sqrt(8 D^2 + 8 m^2) / (epsilon n),   m = mean(clip(x)), D = max(|lower|, |upper|)
    rmse     = sqrt(bias^2 + noise_sd^2)

    The noise line is the delta method for (S + e_s)/(n + e_c) ~ S/n + e_s/n - S e_c/n^2.
    It ignores the ratio's own bias (relative size about 8/(epsilon^2 n^2)) and the floor
    and clip of :func:`clipped_mean`, so it is accurate once n is a few dozen (notebook
    14 compares it with simulation). ``values``: a non-empty array, every entry used;
    ``lower``, ``upper``, ``epsilon``: numbers, or arrays that broadcast (a sweep of the
    bound, as notebook 14's panel draws), each field then an array of their shape.
    Returns a :class:`ClippedMeanError`. Notebook 14.
    """
    lo, hi = _ranges(lower, upper)                # lower < upper; values not empty
    b_sum, b_count = clipped_mean_noise_scales(lo, hi, epsilon)
    x = values.ravel()
    n = x.size
    if np.ndim(lo) == 0 and np.ndim(hi) == 0:
        m = float(np.clip(x, lo, hi).mean())
    else:                           # one clamped mean per bound (last axis: as for a number)
        m = np.clip(x, np.asarray(lo)[..., None], np.asarray(hi)[..., None]).mean(axis=-1)
    bias = m - float(x.mean())
    noise_sd = np.sqrt(2 * b_sum ** 2 + m ** 2 * 2 * b_count ** 2) / n
    if np.ndim(noise_sd) == 0:
        noise_sd = float(noise_sd)
        return ClippedMeanError(bias, noise_sd, float(np.hypot(bias, noise_sd)), m)
    bias, noise_sd, m = np.broadcast_arrays(bias, noise_sd, m)
    return ClippedMeanError(bias, noise_sd, np.hypot(bias, noise_sd), m)


# ------------------------------------------------------------------ private quantile
def _quantile_scores(values, quantile, lower, upper):
    """Edges z_0 = lower <= z_1 <= ... <= z_n <= z_{n+1} = upper (the clipped values,
    sorted), interval lengths z_{i+1} - z_i and scores -|i - quantile n|, i = 0..n."""
    x = np.sort(np.clip(values.ravel(), lower, upper))
    n = x.size
    edges = np.concatenate([[lower], x, [upper]])
    lengths = np.diff(edges)
    scores = -np.abs(np.arange(n + 1) - quantile * n)
    return edges, lengths, scores


def _valid_quantile_epsilon(epsilon, name="epsilon"):
    """epsilon > 0 with 2/epsilon finite (the scores carry (2/epsilon) ln(length))."""
    epsilon = valid_epsilon(epsilon, name)
    if not np.isfinite(2.0 / epsilon) or epsilon < 1e-300:
        raise ValueError(f"{name} must be >= 1e-300 for the quantile mechanism (its scores "
                         f"carry (2/epsilon) ln(length)), got {epsilon!r}")
    return epsilon


@checked(values=Values(allow_empty=True), quantile=Probability(), lower=Real(), upper=Real(),
         epsilon=Using(_valid_quantile_epsilon))
def quantile_interval_probabilities(values, quantile, lower, upper, epsilon):
    """Exact probabilities with which :func:`private_quantile` picks each interval.

    Sort the values clipped to [lower, upper] and add the two ends:
    lower = z_0 <= z_1 <= ... <= z_n <= z_{n+1} = upper. Interval i = [z_i, z_{i+1}]
    (i = 0..n) has exactly i values below it, so its score is u_i = -|i - quantile n|, and
    adding or removing one person moves every u_i by at most 1 (sensitivity 1). The
    exponential mechanism over the points of [lower, upper] (base measure: length)
    picks interval i with probability

        P(i) = (z_{i+1} - z_i) exp(epsilon u_i / 2) / sum_j (z_{j+1} - z_j) exp(epsilon u_j / 2)

    (Smith 2011, Section 3; [DR14 Def. 3.4]). Computed with
    :func:`dpteach.exponential_probabilities` on the scores u_i + (2/epsilon) ln(length_i),
    which is the same formula; empty intervals get probability 0.
    Returns (edges, probabilities): n + 2 edges and n + 1 probabilities. Notebook 14.
    """
    clip_range(lower, upper)                       # lower < upper
    edges, lengths, scores = _quantile_scores(values, quantile, lower, upper)
    probs = np.zeros(lengths.size)
    pos = lengths > 0
    probs[pos] = exponential_probabilities(scores[pos] + (2.0 / epsilon) * np.log(lengths[pos]),
                                           1.0, epsilon)
    return edges, probs


@checked(values=Values(allow_empty=True), quantile=Probability(), lower=Real(), upper=Real(),
         epsilon=Using(_valid_quantile_epsilon), size=Size(), rng=Rng())
def private_quantile(values, quantile, lower, upper, epsilon, *, rng=None, size=None):
    """An epsilon-DP estimate of the ``quantile`` (a number in [0, 1]) of values in [lower, upper] (Smith 2011).

    Picks interval i of the sorted, clipped values with probability
    P(i) proportional to (z_{i+1} - z_i) exp(-epsilon |i - quantile n| / 2)
    (see :func:`quantile_interval_probabilities`: the exponential mechanism with score
    -|rank - quantile n| of sensitivity 1), through :func:`dpteach.exponential_mechanism`, then a
    point uniformly inside it. The result is always in [lower, upper], in the values'
    units. ``quantile`` in [0, 1] (0.5 is the median). ``size`` draws that many independent
    releases. Used in notebook 14 to choose a clipping bound privately.
    """
    lo, hi = clip_range(lower, upper)              # lower < upper
    edges, lengths, scores = _quantile_scores(values, quantile, lo, hi)
    pos = np.flatnonzero(lengths > 0)
    idx = exponential_mechanism(pos, scores[pos] + (2.0 / epsilon) * np.log(lengths[pos]), 1.0,
                                epsilon, rng=rng, size=size)
    idx = np.asarray(idx)
    out = edges[idx] + rng.random(idx.shape) * lengths[idx]
    out = np.minimum(out, hi)
    return out.item() if out.ndim == 0 else out


# ------------------------------------------------------------------ example data
@checked(n=Count(), seed=NonnegativeInt())
def example_incomes(n=500, *, seed=14):
    """A seeded synthetic population of ``n`` annual incomes in thousand euros.

    Log-normal with median 35 and log-sd 0.8 (so a long right tail: a few incomes are
    ten times the median). Invented for notebook 14; not real data.
    """
    rng = np.random.default_rng(seed)
    return np.round(rng.lognormal(np.log(35.0), 0.8, size=n), 1)

