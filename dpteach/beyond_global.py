"""Beyond global sensitivity: local sensitivity, propose-test-release, smooth sensitivity,
sample and aggregate (notebook 19).

The global sensitivity of the median of values in [lower, upper] is upper - lower: one
changed record can move the median of an unlucky dataset from one end of the range to the
other. On a typical dataset one record moves it much less: that is its *local*
sensitivity. Noise scaled to the local sensitivity is not private by itself (the noise
level depends on the data and so leaks it); the tools here make it safe.

Neighbours are substitutions: two datasets of the same size n differ in one record. Values
are clamped to [lower, upper] first, n is odd and the median is the m-th smallest value,
m = (n + 1) / 2. With the sorted values x_1 <= ... <= x_n and the convention x_i = lower
for i < 1 and x_i = upper for i > n:

- local sensitivity at distance k (the largest local sensitivity of any dataset at most k
  substitutions away) [NRS07, Prop. 3.4]:

      A(k) = max_{0 <= t <= k+1} (x_{m+t} - x_{m+t-k-1});

  A(0) is the local sensitivity of x itself (:func:`local_sensitivity_median`);
- smooth sensitivity [NRS07, Def. 2.2 and Prop. 3.4]: S(x) = max_{k >= 0} e^(-k beta) A(k)
  (:func:`smooth_sensitivity_median`); with Laplace noise, beta = epsilon / (2 ln(2/delta))
  and the release median + (2 S / epsilon) * Lap(1) is (epsilon, delta)-DP [NRS07, Lemma
  2.6 and Example 2] (:func:`smooth_median`);
- propose-test-release [DL09; Dwork & Roth 2014, Sec. 7.3]: propose a bound b, measure the
  distance d to the nearest dataset whose local sensitivity exceeds b (d is itself
  1-sensitive), test it with Laplace noise and release median + Lap(b / epsilon) only if
  the test passes; otherwise answer "bottom" (None here) (:func:`ptr_median`);
- sample and aggregate [NRS07, Sec. 4]: split the data into disjoint blocks, compute any
  statistic on each, clamp each block's answer to [lower, upper] and release their noisy
  average (:func:`sample_and_aggregate`).

Sources: K. Nissim, S. Raskhodnikova and A. Smith, "Smooth sensitivity and sampling in
private data analysis", STOC 2007 [NRS07]; C. Dwork and J. Lei, "Differential privacy and
robust statistics", STOC 2009 [DL09].
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ._validate import (valid_delta, valid_nonnegative_int, valid_positive_int,
                        valid_range, valid_real, valid_rng, valid_values)

__all__ = [
    "local_sensitivity_median",
    "median_sensitivity_window",
    "smooth_sensitivity_median",
    "distance_to_instability",
    "ptr_median",
    "ptr_answer_probability",
    "smooth_median",
    "smooth_beta",
    "sample_and_aggregate",
]


def _epsilon(epsilon):
    """epsilon > 0 and at least 1e-100: below that every noise scale here overflows."""
    return valid_real(epsilon, "epsilon", low=1e-100)


def _sorted_clamped(values, lower, upper):
    """Checked (lower, upper) and the sorted clamped values; n must be odd."""
    lo, hi = valid_range(lower, upper)
    x = valid_values(values, "values")
    if x.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {x.shape}")
    if x.size % 2 == 0:
        raise ValueError(f"values must hold an odd number of records (the median is the middle "
                         f"one), got {x.size}")
    return lo, hi, np.sort(np.clip(x, lo, hi))


def _padded(x, lo, hi):
    """x_i for i = -n .. 2n+1 (1-based inside), lower to the left and upper to the right."""
    n = x.size
    return np.concatenate([np.full(n + 1, lo), x, np.full(n + 2, hi)]), n + 1  # offset of x_1 is n+1


def _a_of_k(padded, offset, m, k):
    """A(k) = max over t in 0..k+1 of x_{m+t} - x_{m+t-k-1} (indices 1-based): one row
    of :func:`_a_upto`, the same differences, without its chunking (a binary search over
    k calls this a few times per private release)."""
    t = np.arange(k + 2)
    top = padded[np.minimum(offset + m - 1 + t, padded.size - 1)]
    bottom = padded[np.maximum(offset + m - k - 2 + t, 0)]
    return float((top - bottom).max())


def _a_upto(padded, offset, m, k_max, *, start=0):
    """A(start), ..., A(k_max) at once, in chunks of at most about two million entries."""
    n_pad = padded.size
    out = np.empty(k_max - start + 1)
    chunk = max(1, 2_000_000 // (k_max + 2))
    for first in range(start, k_max + 1, chunk):
        ks = np.arange(first, min(k_max, first + chunk - 1) + 1)
        t = np.arange(ks[-1] + 2)
        top = padded[np.minimum(offset + m + t - 1, n_pad - 1)]
        bottom = padded[np.maximum(offset + m + t[None, :] - ks[:, None] - 2, 0)]
        gaps = np.where(t[None, :] <= ks[:, None] + 1, top[None, :] - bottom, -np.inf)
        out[first - start:first - start + ks.size] = gaps.max(axis=1)
    return out


def local_sensitivity_median(values, lower, upper, distance=0):
    """The median's local sensitivity at distance k, A(k) [NRS07, Prop. 3.4].

    ``values`` (odd length) are clamped to [lower, upper]; neighbours substitute one
    record. A(k) is the largest local sensitivity of any dataset within k substitutions of
    ``values``; A(0) is the local sensitivity of ``values`` itself. ``distance`` may be an
    array of k (a panel sweeps it); the result has its shape. In the values' units.
    """
    lo, hi, x = _sorted_clamped(values, lower, upper)
    if np.ndim(distance) == 0:
        ks = np.asarray(valid_nonnegative_int(distance, "distance"))
    else:
        ks = np.asarray([valid_nonnegative_int(k, "distance") for k in np.ravel(distance)],
                        dtype=np.int64).reshape(np.shape(distance))
    padded, offset = _padded(x, lo, hi)
    m = (x.size + 1) // 2
    cap = x.size + 1  # from here on every A(k) is upper - lower
    a = _a_upto(padded, offset, m, int(min(ks.max(initial=0), cap)))
    out = a[np.minimum(ks, cap)]
    return float(out) if ks.ndim == 0 else out


def median_sensitivity_window(values, lower, upper, distance=0):
    """The two clamped values whose gap is A(k): ``(x_{m+t-k-1}, x_{m+t})`` for the t in
    0..k+1 that maximises it [NRS07, Prop. 3.4], with x_i = lower for i < 1 and upper for
    i > n (the window a panel shades). ``upper - lower`` apart once k > n."""
    lo, hi, x = _sorted_clamped(values, lower, upper)
    k = valid_nonnegative_int(distance, "distance")
    k = min(k, x.size + 1)
    padded, offset = _padded(x, lo, hi)
    m = (x.size + 1) // 2
    t = np.arange(k + 2)
    top = padded[offset + m + t - 1]
    bottom = padded[offset + m + t - k - 2]
    best = int(np.argmax(top - bottom))
    return float(bottom[best]), float(top[best])


def smooth_sensitivity_median(values, lower, upper, beta):
    """beta-smooth sensitivity of the median: S(x) = max_{k >= 0} e^(-k beta) A(k).

    [NRS07, Def. 2.2; Prop. 3.4 gives this form for the median.] ``beta`` > 0. The
    maximum is reached by k <= n + 1 (A(k) is constant, upper - lower, from there on), and
    by k <= ln((upper - lower) / A(0)) / beta, beyond which no term can beat A(0).
    """
    lo, hi, x = _sorted_clamped(values, lower, upper)
    beta = valid_real(beta, "beta", low=0.0, low_open=True)
    a = _all_local_sensitivities(x.tobytes(), lo, hi)
    k_max = a.size - 1
    if a[0] > 0:  # beyond this k, e^(-k beta) (upper - lower) < A(0): no larger term
        reach = math.log((hi - lo) / a[0]) / beta
        if reach < k_max:
            k_max = int(math.ceil(reach))
    return float(np.max(np.exp(-beta * np.arange(k_max + 1)) * a[:k_max + 1]))


@functools.lru_cache(maxsize=64)
def _all_local_sensitivities(sorted_bytes, lo, hi):
    """A(0), ..., A(n + 1) of one sorted, clamped dataset (cached: a panel asks for the
    smooth sensitivity of the same data at many beta)."""
    x = np.frombuffer(sorted_bytes)
    padded, offset = _padded(x, lo, hi)
    a = _a_upto(padded, offset, (x.size + 1) // 2, x.size + 1)
    a.flags.writeable = False
    return a


def distance_to_instability(values, lower, upper, bound):
    """Substitutions needed to reach a dataset whose median has local sensitivity > bound.

    d = min{k : A(k) > bound} (A(k) is non-decreasing in k). When bound >= upper - lower
    no dataset is unstable and d is infinite. Changing one record changes d by at most
    one, so d + Lap(1/epsilon) is epsilon-DP [DL09; Dwork & Roth 2014, Sec. 7.3].
    """
    lo, hi, x = _sorted_clamped(values, lower, upper)
    bound = valid_real(bound, "bound", low=0.0)
    if bound >= hi - lo:
        return math.inf
    padded, offset = _padded(x, lo, hi)
    m = (x.size + 1) // 2
    left, right = 0, x.size + 1  # A(right) = upper - lower > bound
    while left < right:  # binary search over the non-decreasing A(k)
        mid = (left + right) // 2
        if _a_of_k(padded, offset, m, mid) > bound:
            right = mid
        else:
            left = mid + 1
    return float(left)


def _ptr_threshold(epsilon, delta):
    """Test budget epsilon/2: the noisy distance must exceed ln(1/delta) / (epsilon/2)."""
    return math.log(1.0 / delta) / (epsilon / 2.0)


def ptr_median(values, lower, upper, epsilon, delta, *, proposed_bound, rng=None, size=None):
    """Propose-test-release for the median: a noisy median, or None (bottom).

    Half the budget tests the proposal: d_hat = d + Lap(2/epsilon), where d is
    :func:`distance_to_instability` for ``proposed_bound``; if d_hat <= ln(1/delta) /
    (epsilon/2) the answer is None. Otherwise the other half releases median +
    Lap(2 * proposed_bound / epsilon). The whole is (epsilon, delta)-DP for substitution
    neighbours [DL09; Dwork & Roth 2014, Sec. 7.3]: an unstable dataset (d = 0) passes the
    test with probability delta / 2. None says only that the data are not stable enough
    for the bound; it is itself a private answer.

    ``size`` runs the mechanism that many times, independently: an array of answers with
    NaN for None. It gives exactly what ``size`` calls in a row with the same generator
    give, and leaves the generator where they would.
    """
    lo, hi, x = _sorted_clamped(values, lower, upper)
    epsilon = _epsilon(epsilon)
    delta = valid_delta(delta, required=True)
    bound = valid_real(proposed_bound, "proposed_bound", low=0.0, low_open=True, high=1e300)
    rng = valid_rng(rng)
    if size is not None:
        size = valid_positive_int(size, "size", maximum=10**8)
    d = distance_to_instability(x, lo, hi, bound)
    threshold, median = _ptr_threshold(epsilon, delta), x[x.size // 2]
    if size is not None:        # many runs at once, drawn in the order single calls draw
        return _ptr_runs(d, threshold, median, 2.0 / epsilon, 2.0 * bound / epsilon, rng, size)
    if d + rng.laplace(0.0, 2.0 / epsilon) <= threshold:
        return None
    return float(median + rng.laplace(0.0, 2.0 * bound / epsilon))


def _ptr_runs(d, threshold, median, test_scale, release_scale, rng, size):
    """``size`` runs of the test and release, drawing in the order single calls draw.

    A run draws one Laplace variate (the test) and a second one only when it answers, so
    how many draws ``size`` runs take is known only as they go. Each round draws as many
    standard Laplace variates as runs remain (every unfinished run needs at least one
    more, so none is left unused) and walks through them; ``scale * Lap(1)`` is bit for
    bit the generator's ``laplace(0, scale)``."""
    out = np.full(size, np.nan)
    i, pending = 0, False          # pending: run i passed its test, its release is next
    while i < size:
        z = rng.laplace(0.0, 1.0, size=size - i)
        k = 0
        if pending:
            out[i] = median + release_scale * z[0]
            i, k, pending = i + 1, 1, False
        while k < z.size:
            if d + test_scale * z[k] <= threshold:
                i, k = i + 1, k + 1
            elif k + 1 < z.size:
                out[i] = median + release_scale * z[k + 1]
                i, k = i + 1, k + 2
            else:
                pending, k = True, k + 1
    return out


def ptr_answer_probability(values, lower, upper, epsilon, delta, *, proposed_bound):
    """Probability that :func:`ptr_median` answers (does not return None), in closed form.

    Pr[d + Lap(2/epsilon) > T] with T = ln(1/delta) / (epsilon/2): 1 - F(T - d), F the
    Laplace CDF of scale 2/epsilon; 1 when d is infinite.
    """
    from scipy.stats import laplace

    lo, hi, x = _sorted_clamped(values, lower, upper)
    epsilon = _epsilon(epsilon)
    delta = valid_delta(delta, required=True)
    bound = valid_real(proposed_bound, "proposed_bound", low=0.0, low_open=True, high=1e300)
    d = distance_to_instability(x, lo, hi, bound)
    if math.isinf(d):
        return 1.0
    return float(laplace.sf(_ptr_threshold(epsilon, delta) - d, scale=2.0 / epsilon))


def smooth_beta(epsilon, delta):
    """beta = epsilon / (2 ln(2/delta)): the smoothing that Laplace noise admits [NRS07, Ex. 2]."""
    epsilon = _epsilon(epsilon)
    delta = valid_delta(delta, required=True)
    return epsilon / (2.0 * math.log(2.0 / delta))


def smooth_median(values, lower, upper, epsilon, delta, *, rng=None, size=None):
    """(epsilon, delta)-DP median with noise scaled to its smooth sensitivity.

    median + (2 S / epsilon) * Lap(1), S the beta-smooth sensitivity with beta =
    :func:`smooth_beta` (epsilon, delta) [NRS07, Lemma 2.6 with the Laplace distribution,
    which is (epsilon/2, beta)-admissible]. ``size`` draws independent releases.
    """
    lo, hi, x = _sorted_clamped(values, lower, upper)
    beta = smooth_beta(epsilon, delta)
    rng = valid_rng(rng)
    if size is not None:
        size = valid_positive_int(size, "size", maximum=10**8)
    s = smooth_sensitivity_median(x, lo, hi, beta)
    noise = rng.laplace(0.0, 2.0 * s / float(epsilon), size=size)
    return x[x.size // 2] + noise


def sample_and_aggregate(values, statistic, lower, upper, epsilon, *, blocks, rng=None):
    """Sample and aggregate [NRS07, Sec. 4]: a statistic on disjoint blocks, averaged with noise.

    The records are shuffled (a partition chosen without looking at them) and split into
    ``blocks`` disjoint blocks of nearly equal size; ``statistic`` (a function of one
    block's values returning a number) runs on each; each answer is clamped to
    [lower, upper] and the average is released with Lap((upper - lower) / (blocks *
    epsilon)). One substituted record changes one block, so one clamped answer, so the
    average by at most (upper - lower) / blocks: epsilon-DP whatever the statistic.
    """
    x = valid_values(values, "values")
    if not callable(statistic):
        raise TypeError(f"statistic must be callable, got {type(statistic).__name__}")
    lo, hi = valid_range(lower, upper)
    epsilon = _epsilon(epsilon)
    blocks = valid_positive_int(blocks, "blocks", maximum=max(1, len(x)))
    rng = valid_rng(rng)
    order = rng.permutation(len(x))
    answers = []
    for part in np.array_split(x[order], blocks):
        answer = valid_real(statistic(part), "statistic's answer", allow_inf=True)
        answers.append(min(max(answer, lo), hi))
    return float(np.mean(answers) + rng.laplace(0.0, (hi - lo) / (blocks * epsilon)))
