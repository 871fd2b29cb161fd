"""Beyond global sensitivity: local sensitivity, propose-test-release, smooth sensitivity,
sample and aggregate (notebook 19).

The global sensitivity of the median of values in [lower, upper] is upper - lower: one
changed record can move the median of an unlucky dataset from one end of the range to the
other. On a typical dataset one record moves it much less: that is its *local*
sensitivity. Noise scaled to the local sensitivity is not private by itself (the noise
level depends on the data and so leaks it); the tools here make it safe.

The median: neighbours are substitutions (two datasets of the same size n differ in one
record). Values are clamped to [lower, upper] first, n is odd and the median is the m-th
smallest value, m = (n + 1) / 2. With the sorted values x_1 <= ... <= x_n and the
convention x_i = lower for i < 1 and x_i = upper for i > n:

- local sensitivity at distance k (the largest local sensitivity of any dataset at most k
  substitutions away), NRS07's closed form for the median:

      A(k) = max_{0 <= t <= k+1} (x_{m+t} - x_{m+t-k-1});

  A(0) is the local sensitivity of x itself, and A(k) = upper - lower from k = n on
  (:func:`local_sensitivity_median`);
- smooth sensitivity [NRS07]: S(x) = max_{k >= 0} e^(-k beta) A(k)
  (:func:`smooth_sensitivity_median`, exact in O(n log n)); with Laplace noise,
  beta = epsilon / (2 ln(2/delta)) and the release median + (2 S / epsilon) * Lap(1) is
  (epsilon, delta)-DP [NRS07, the Laplace distribution as admissible noise]
  (:func:`smooth_median`);
- propose-test-release [DL09; Dwork & Roth 2014, Sec. 7.2]: propose a bound b, measure the
  distance d to the nearest dataset whose local sensitivity exceeds b (d is itself
  1-sensitive), test it with Laplace noise and release median + Lap(b / epsilon) only if
  the test passes; otherwise answer "bottom" (None here) (:func:`ptr_median`);
- sample and aggregate, in the simple averaging form of Dwork & Roth 2014, Sec. 7.1: split
  the data into disjoint blocks, compute any statistic on each, clamp each block's answer
  to [lower, upper] and release their noisy average (:func:`sample_and_aggregate`; NRS07's
  own version aggregates the block answers with a smooth-sensitivity aggregator instead).

The mean: neighbours add or remove one record (the size n is private too); values are
clamped to [lower, upper] and the mean of the empty dataset is taken to be the midpoint.
Adding v to w moves the mean by |v - mean(w)| / (|w| + 1), so at x

    LS(x) = max( max(upper - mean, mean - lower) / (n + 1),  max_i |x_i - mean| / (n - 1) )

(n >= 2), at most (upper - lower) / n, and never above (upper - lower) / 2, the global
sensitivity (reached next to a single record or the empty dataset).
:func:`local_sensitivity_mean` gives A(k) for the mean exactly;
:func:`distance_to_instability_mean` and :func:`ptr_mean` run PTR on it.

Sources: K. Nissim, S. Raskhodnikova and A. Smith, "Smooth sensitivity and sampling in
private data analysis", STOC 2007 [NRS07]; C. Dwork and J. Lei, "Differential privacy and
robust statistics", STOC 2009 [DL09]; C. Dwork and A. Roth, "The algorithmic foundations
of differential privacy", 2014.
"""

from __future__ import annotations

import math

import numpy as np

from ._support.validate import (Delta, Flag, NonnegativeInt, OrNone, PositiveInt, Real, Rng, Using,
    Values, checked, describe, valid_nonnegative_int, valid_range, valid_real, valid_values)

__all__ = [
    "local_sensitivity_median",
    "median_sensitivity_window",
    "smooth_sensitivity_median",
    "distance_to_instability",
    "ptr_threshold",
    "ptr_pass_probability",
    "ptr_median",
    "ptr_answer_probability",
    "smooth_median",
    "smooth_beta",
    "sample_and_aggregate",
    "local_sensitivity_mean",
    "distance_to_instability_mean",
    "ptr_mean",
]

#: the largest noise scale a release here draws with (a Laplace draw reaches about 745 b)
_MAX_SCALE = 1e305
#: the most window differences one call of :func:`local_sensitivity_median` may compute
_MAX_WORK = 2 * 10**8


def _minus_log(delta):
    """-ln(delta) for delta in (0, 1), finite down to the smallest subnormal (ln(1/delta)
    overflows there: 1/5e-324 is inf) and accurate next to 1 (log1p)."""
    return -math.log1p(delta - 1.0) if delta > 0.5 else -math.log(delta)


def _range(lower, upper):
    """Checked (lower, upper) whose width upper - lower is a finite float."""
    lo, hi = valid_range(lower, upper)
    if not math.isfinite(hi - lo):
        raise ValueError(f"upper - lower must be below 1.8e308 (the float range), got lower="
                         f"{lo:g}, upper={hi:g}")
    return lo, hi


def _clamped(values, lower, upper, *, odd):
    """Checked (lower, upper) and the sorted clamped one-dimensional values (odd n if asked)."""
    lo, hi = _range(lower, upper)
    x = valid_values(values, "values")
    if x.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {x.shape}")
    if odd and x.size % 2 == 0:
        raise ValueError(f"values must hold an odd number of records (the median is the middle "
                         f"one), got {x.size}")
    return lo, hi, np.sort(np.clip(x, lo, hi))


def _distances(distance, n):
    """A distance k or an array of them, each capped at n (A(k) is constant from k = n on),
    as an int64 array of that shape: numeric arrays checked at once, anything else (lists
    that may hide a boolean or a string, ints beyond int64) element by element."""
    try:
        arr = np.asarray(distance)
    except (TypeError, ValueError):          # ragged nesting
        raise TypeError(f"distance must be a whole number or an array of them, got "
                        f"{describe(distance)}") from None
    if not isinstance(distance, np.ndarray) or arr.ndim == 0 or arr.dtype.kind not in "iuf":
        ks = [min(valid_nonnegative_int(k, "distance"), n) for k in
              (np.ravel(np.asarray(distance, dtype=object)) if arr.ndim else [distance])]
        return np.array(ks, dtype=np.int64).reshape(arr.shape)
    bad = (arr < 0) | (~np.isfinite(arr) | (arr != np.round(arr)) if arr.dtype.kind == "f" else False)
    if np.any(bad):
        valid_nonnegative_int(arr[bad].flat[0].item(), "distance")      # its message
    return np.minimum(arr, n).astype(np.int64)


def _padded(x, lo, hi):
    """x_0 = lower, x_1..x_n, x_{n+1} = upper (index i is x_i)."""
    return np.concatenate(([lo], x, [hi]))


def _a_of_k(padded, m, k):
    """A(k) = max over t in 0..k+1 of x_{m+t} - x_{m+t-k-1}, indices clipped to 0..n+1."""
    t = np.arange(k + 2)
    top = padded[np.minimum(m + t, padded.size - 1)]
    bottom = padded[np.maximum(m + t - k - 1, 0)]
    return float((top - bottom).max())


def local_sensitivity_median(values, lower, upper, distance=0):
    """The median's local sensitivity at distance k, A(k) [NRS07, their closed form].

    ``values`` (odd length) are clamped to [lower, upper]; neighbours substitute one
    record. A(k) is the largest local sensitivity of any dataset within k substitutions of
    ``values``; A(0) is the local sensitivity of ``values`` itself, and A(k) = upper -
    lower from k = n on. ``distance`` may be an array of k (a panel sweeps it); the result
    has its shape. In the values' units.
    """
    lo, hi, x = _clamped(values, lower, upper, odd=True)
    capped = _distances(distance, x.size)
    unique = np.unique(capped)
    if int((unique + 2).sum()) > _MAX_WORK:
        raise ValueError(f"distance asks for {unique.size} values of A(k) over {x.size} records, "
                         f"more than {_MAX_WORK:.0e} differences in all: ask for fewer distances")
    padded, m = _padded(x, lo, hi), (x.size + 1) // 2
    table = np.array([_a_of_k(padded, m, int(k)) for k in unique])
    out = table[np.searchsorted(unique, capped)]
    return float(out) if capped.ndim == 0 else out


@checked(lower=Real(), upper=Real(), values=Values(), distance=NonnegativeInt())
def median_sensitivity_window(values, lower, upper, distance=0):
    """The two clamped values whose gap is A(k): ``(x_{m+t-k-1}, x_{m+t})`` for the t in
    0..k+1 that maximises it [NRS07], with x_i = lower for i < 1 and upper for i > n (the
    window a panel shades). ``(lower, upper)`` once k >= n."""
    lo, hi, x = _clamped(values, lower, upper, odd=True)
    k = min(distance, x.size)
    padded, m = _padded(x, lo, hi), (x.size + 1) // 2
    t = np.arange(k + 2)
    top = padded[np.minimum(m + t, x.size + 1)]
    bottom = padded[np.maximum(m + t - k - 1, 0)]
    best = int(np.argmax(top - bottom))
    return float(bottom[best]), float(top[best])


@checked(lower=Real(), upper=Real(), values=Values(), beta=Real(low=0.0, low_open=True))
def smooth_sensitivity_median(values, lower, upper, beta):
    """beta-smooth sensitivity of the median: S(x) = max_{k >= 0} e^(-k beta) A(k) [NRS07].

    ``beta`` > 0. Computed exactly in O(n log n) as the largest (x_j - x_i)
    e^(-beta (j - i - 1)) over the pairs i <= m <= j of the padded sorted values (each
    term of the maximum is one such pair; see the notes at the end of this module).
    """
    lo, hi, x = _clamped(values, lower, upper, odd=True)
    return math.exp(_median_log_smooth_sensitivity(_padded(x, lo, hi), (x.size + 1) // 2, beta))


@checked(lower=Real(), upper=Real(), values=Values(), bound=Real(low=0.0))
def distance_to_instability(values, lower, upper, bound):
    """Substitutions needed to reach a dataset whose median has local sensitivity > bound.

    d = min{k : A(k) > bound} (A(k) is non-decreasing in k). When bound >= upper - lower
    no dataset is unstable and d is infinite. Changing one record changes d by at most
    one, so d + Lap(1/epsilon) is epsilon-DP [DL09; Dwork & Roth 2014, Sec. 7.2].
    """
    lo, hi, x = _clamped(values, lower, upper, odd=True)
    if bound >= hi - lo:
        return math.inf
    padded, m = _padded(x, lo, hi), (x.size + 1) // 2
    left, right = 0, x.size  # A(n) = upper - lower > bound
    while left < right:  # binary search over the non-decreasing A(k)
        mid = (left + right) // 2
        if _a_of_k(padded, m, mid) > bound:
            right = mid
        else:
            left = mid + 1
    return float(left)


@checked(epsilon=Real(low=1e-100), delta=Delta(required=True), exact_delta=Flag())
def ptr_threshold(epsilon, delta, *, exact_delta=False):
    """The test's threshold T for a test budget of epsilon/2 (noise Lap(2/epsilon)).

    The default T = ln(1/delta) / (epsilon/2): a dataset at distance 0 passes with
    probability delta/2, so PTR is (epsilon, delta/2)-DP (hence (epsilon, delta)-DP, with
    room to spare). ``exact_delta=True``: T = ln(1/(2 delta)) / (epsilon/2), which lets it
    pass with probability exactly delta: (epsilon, delta)-DP and a lower threshold (needs
    delta < 1/2). Finite for every delta > 0, subnormal ones included.
    """
    if exact_delta and delta >= 0.5:
        raise ValueError(f"delta must be < 0.5 with exact_delta=True (ln(1/(2 delta)) > 0), "
                         f"got {describe(delta)}")
    return _ptr_threshold(epsilon, delta, exact_delta)


def _ptr_threshold(epsilon, delta, exact_delta=False):
    """ln(1/delta) / (epsilon/2), or ln(1/(2 delta)) / (epsilon/2), for checked inputs."""
    return (_minus_log(delta) - (math.log(2.0) if exact_delta else 0.0)) / (epsilon / 2.0)


def _valid_distances(distance, name):
    """A distance to instability >= 0 (inf allowed), or an array of them, as an array."""
    if not isinstance(distance, (list, tuple, np.ndarray)):
        return np.asarray(valid_real(distance, name, low=0.0, allow_inf=True))
    d = valid_values(distance, name, allow_inf=True)
    if (d < 0).any():
        raise ValueError(f"{name} must be >= 0 (a number of records)")
    return d


@checked(epsilon=Real(low=1e-100), delta=Delta(required=True), exact_delta=Flag(),
         distance=Using(_valid_distances))
def ptr_pass_probability(distance, epsilon, delta, *, exact_delta=False):
    """Pr[d + Lap(2/epsilon) > T] for a distance to instability d (an array, or inf):
    1 - e^(-(d - T)/s)/2 above T and e^(-(T - d)/s)/2 below, s = 2/epsilon, T =
    :func:`ptr_threshold`; at d = 0 it is delta/2 (or delta with ``exact_delta``)."""
    threshold = ptr_threshold(epsilon, delta, exact_delta=exact_delta)   # delta < 0.5 if exact
    gap = (distance - threshold) * (float(epsilon) / 2.0)       # in units of the test's noise scale
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.where(gap > 0, 1.0 - 0.5 * np.exp(-np.abs(gap)), 0.5 * np.exp(-np.abs(gap)))
    p = np.where(np.isposinf(distance), 1.0, p)
    return float(p) if distance.ndim == 0 else p


def _release_scale(bound, epsilon):
    """2 b / epsilon, refused beyond :data:`_MAX_SCALE` (a draw would overflow)."""
    scale = 2.0 * bound / epsilon
    if not scale <= _MAX_SCALE:
        raise ValueError(f"proposed_bound is too large for this epsilon: the release's noise scale "
                         f"2 proposed_bound / epsilon = {scale:g} exceeds {_MAX_SCALE:g}")
    return scale


def _ptr(d, value, epsilon, threshold, bound, rng, size):
    """Test d + Lap(2/epsilon) > threshold, then release value + Lap(2 bound / epsilon)."""
    release = _release_scale(bound, epsilon)
    if size is not None:        # many runs at once, drawn in the order single calls draw
        return _ptr_runs(d, threshold, value, 2.0 / epsilon, release, rng, size)
    if d + rng.laplace(0.0, 2.0 / epsilon) <= threshold:
        return None
    return float(value + rng.laplace(0.0, release))


@checked(lower=Real(), upper=Real(), values=Values(), epsilon=Real(low=1e-100),
         delta=Delta(required=True), exact_delta=Flag(),
         proposed_bound=Real(low=0.0, low_open=True, high=1e300), rng=Rng(),
         size=OrNone(PositiveInt(maximum=10**8)))
def ptr_median(values, lower, upper, epsilon, delta, *, proposed_bound, exact_delta=False,
               rng=None, size=None):
    """Propose-test-release for the median: a noisy median, or None (bottom).

    Half the budget tests the proposal: d_hat = d + Lap(2/epsilon), where d is
    :func:`distance_to_instability` for ``proposed_bound``; if d_hat <= T
    (:func:`ptr_threshold`) the answer is None. Otherwise the other half releases median +
    Lap(2 * proposed_bound / epsilon). For substitution neighbours the whole is
    (epsilon, delta/2)-DP with the default T = ln(1/delta) / (epsilon/2) (an unstable
    dataset, d = 0, passes with probability delta/2), and (epsilon, delta)-DP with
    ``exact_delta=True`` [DL09; Dwork & Roth 2014, Sec. 7.2]. None says only that the data
    are not stable enough for the bound; it is itself a private answer.

    ``size`` runs the mechanism that many times, independently: an array of answers with
    NaN for None. It gives exactly what ``size`` calls in a row with the same generator
    give, and leaves the generator where they would.
    """
    lo, hi, x = _clamped(values, lower, upper, odd=True)      # lower < upper, odd n
    threshold = ptr_threshold(epsilon, delta, exact_delta=exact_delta)
    d = distance_to_instability(x, lo, hi, proposed_bound)
    return _ptr(d, x[x.size // 2], epsilon, threshold, proposed_bound, rng, size)


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


@checked(lower=Real(), upper=Real(), values=Values(), epsilon=Real(low=1e-100),
         delta=Delta(required=True), exact_delta=Flag(),
         proposed_bound=Real(low=0.0, low_open=True, high=1e300))
def ptr_answer_probability(values, lower, upper, epsilon, delta, *, proposed_bound,
                           exact_delta=False):
    """Probability that :func:`ptr_median` answers (does not return None), in closed form:
    :func:`ptr_pass_probability` at this dataset's distance d; 1 when d is infinite."""
    lo, hi, x = _clamped(values, lower, upper, odd=True)
    ptr_threshold(epsilon, delta, exact_delta=exact_delta)   # delta < 0.5 if exact
    d = distance_to_instability(x, lo, hi, proposed_bound)
    return ptr_pass_probability(d, epsilon, delta, exact_delta=exact_delta)


@checked(epsilon=Real(low=1e-100), delta=Delta(required=True))
def smooth_beta(epsilon, delta):
    """beta = epsilon / (2 ln(2/delta)): the smoothing that Laplace noise admits [NRS07].

    ln(2/delta) is computed as ln 2 - ln(delta), finite for every delta > 0."""
    return epsilon / (2.0 * (math.log(2.0) + _minus_log(delta)))


@checked(lower=Real(), upper=Real(), values=Values(), epsilon=Real(low=1e-100),
         delta=Delta(required=True), rng=Rng(), size=OrNone(PositiveInt(maximum=10**8)))
def smooth_median(values, lower, upper, epsilon, delta, *, rng=None, size=None):
    """(epsilon, delta)-DP median with noise scaled to its smooth sensitivity.

    median + (2 S / epsilon) * Lap(1), S the beta-smooth sensitivity with beta =
    :func:`smooth_beta` (epsilon, delta) [NRS07: Laplace noise is admissible with these
    constants]. ``size`` draws independent releases. A range so wide that the noise
    scale 2 S / epsilon passes 1e305 is refused (a draw would overflow).
    """
    lo, hi, x = _clamped(values, lower, upper, odd=True)
    beta = smooth_beta(epsilon, delta)
    s = smooth_sensitivity_median(x, lo, hi, beta)
    scale = 2.0 * s / float(epsilon)
    if not scale <= _MAX_SCALE:
        raise ValueError(f"upper - lower is too wide for this epsilon: the noise scale 2 S / epsilon "
                         f"= {scale:g} exceeds {_MAX_SCALE:g} (narrow [lower, upper] or raise epsilon)")
    return x[x.size // 2] + rng.laplace(0.0, scale, size=size)


def _valid_statistic(statistic, name):
    if not callable(statistic):
        raise TypeError(f"{name} must be callable, got {type(statistic).__name__}")
    return statistic


@checked(values=Values(), statistic=Using(_valid_statistic), lower=Real(), upper=Real(),
         epsilon=Real(low=1e-100), blocks=PositiveInt(), rng=Rng())
def sample_and_aggregate(values, statistic, lower, upper, epsilon, *, blocks, rng=None):
    """Sample and aggregate, the simple averaging form [Dwork & Roth 2014, Sec. 7.1].

    The records are shuffled (a partition chosen without looking at them) and split into
    ``blocks`` disjoint blocks of nearly equal size; ``statistic`` (a function of one
    block's values returning a number) runs on each; each answer is clamped to
    [lower, upper] and the average is released with Lap((upper - lower) / (blocks *
    epsilon)). One substituted record changes one block, so one clamped answer, so the
    average by at most (upper - lower) / blocks: epsilon-DP whatever the statistic.
    (NRS07 aggregate with a smooth-sensitivity aggregator instead of the average.)
    """
    x = values
    lo, hi = _range(lower, upper)                 # lower < upper, a finite width
    if blocks > len(x):
        raise ValueError(f"blocks must be at most the number of values ({len(x)}), got {blocks}")
    if not (hi - lo) / (blocks * epsilon) <= _MAX_SCALE:
        raise ValueError(f"upper - lower is too wide for this epsilon: the noise scale "
                         f"(upper - lower) / (blocks epsilon) exceeds {_MAX_SCALE:g}")
    order = rng.permutation(len(x))
    answers = []
    for part in np.array_split(x[order], blocks):
        answer = valid_real(statistic(part), "statistic's answer", allow_inf=True)
        answers.append(min(max(answer, lo), hi))
    return float(np.mean(answers) + rng.laplace(0.0, (hi - lo) / (blocks * epsilon)))


# -------------------------------------------------------------------------- the mean
def _unit(values, lower, upper):
    """(lower, upper - lower, the clamped values sorted and rescaled to [0, 1])."""
    lo, hi, x = _clamped(values, lower, upper, odd=False)
    width = hi - lo
    return lo, width, np.clip((x - lo) / width, 0.0, 1.0)


def local_sensitivity_mean(values, lower, upper, distance=0):
    """The mean's local sensitivity at distance k under add/remove neighbours, exactly.

    ``values`` are clamped to [lower, upper]; the mean of the empty dataset is taken to be
    the midpoint. A(k) is the largest change one added or removed record makes to the mean
    of any dataset within k additions and removals of ``values``. A(0) is

        max( max(upper - mean, mean - lower) / (n + 1), max_i |x_i - mean| / (n - 1) )

    (adding a record at an end of the range, or removing the record furthest from the
    mean; for n = 1 the second term is |x_1 - midpoint|). A(k) grows with k (removing
    records shrinks n) up to the global sensitivity (upper - lower) / 2, reached by k = n.
    The maximisation is explained at the end of this module. ``distance`` may be
    an array; each A(k) costs O(min(k, n)).
    """
    _, width, z = _unit(values, lower, upper)
    capped = _distances(distance, z.size)
    unique = np.unique(capped)
    if int((unique + 1).sum()) > _MAX_WORK:
        raise ValueError(f"distance asks for {unique.size} values of A(k) over {z.size} records: "
                         f"ask for fewer distances")
    table = np.array([width * _mean_local_sensitivity(z, int(k)) for k in unique])
    out = table[np.searchsorted(unique, capped)]
    return float(out) if capped.ndim == 0 else out


@checked(lower=Real(), upper=Real(), values=Values(), bound=Real(low=0.0))
def distance_to_instability_mean(values, lower, upper, bound):
    """Additions and removals needed to reach a dataset whose mean has local sensitivity
    above ``bound``: min{k : A(k) > bound} for :func:`local_sensitivity_mean`'s A(k).
    Infinite when bound >= (upper - lower) / 2 (no dataset is that unstable). One added or
    removed record changes it by at most one."""
    _, width, z = _unit(values, lower, upper)
    if bound >= width / 2.0:
        return math.inf
    return float(_mean_distance_to_instability(z, bound / width))


@checked(lower=Real(), upper=Real(), values=Values(), epsilon=Real(low=1e-100),
         delta=Delta(required=True), exact_delta=Flag(),
         proposed_bound=Real(low=0.0, low_open=True, high=1e300), rng=Rng(),
         size=OrNone(PositiveInt(maximum=10**8)))
def ptr_mean(values, lower, upper, epsilon, delta, *, proposed_bound, exact_delta=False,
             rng=None, size=None):
    """Propose-test-release for the mean under add/remove neighbours: a noisy mean or None.

    The same test as :func:`ptr_median` on d = :func:`distance_to_instability_mean`
    (d + Lap(2/epsilon) against :func:`ptr_threshold`), then mean + Lap(2 *
    proposed_bound / epsilon). (epsilon, delta/2)-DP with the default threshold,
    (epsilon, delta)-DP with ``exact_delta=True`` [Dwork & Roth 2014, Sec. 7.2]. ``size``
    runs it that many times (NaN for None), exactly as that many calls in a row.
    """
    lo, width, z = _unit(values, lower, upper)
    threshold = ptr_threshold(epsilon, delta, exact_delta=exact_delta)
    bound = proposed_bound
    d = math.inf if bound >= width / 2.0 else float(_mean_distance_to_instability(z, bound / width))
    return _ptr(d, lo + width * float(np.mean(z)), epsilon, threshold, bound, rng, size)


# ======================================================= the exact algorithms, unchecked
# The helpers below take checked inputs from the public functions above: the median's
# smooth sensitivity in O(n log n), and the mean's local sensitivity at distance k under
# add/remove neighbours.
#
# The median [NRS07]. With the padded sorted values p_0 = lower <= p_1 <= ... <= p_n <=
# p_{n+1} = upper and the median's rank m, every term e^(-k beta) (x_{m+t} - x_{m+t-k-1})
# of S = max_k e^(-k beta) A(k) is a pair i = m + t - k - 1 <= m <= j = m + t, so S is the
# largest (p_j - p_i) e^(-beta (j - i - 1)) over 0 <= i <= m <= j <= n + 1 (indices beyond 0 and n + 1 repeat the end values at a larger k, so they never win). For
# rows i < i' and columns j < j' the ratio (p_j' - p_i) / (p_j - p_i) is at most
# (p_j' - p_i') / (p_j - p_i') (a larger p_i' only makes the far column relatively better),
# so the leftmost best column j*(i) never decreases with i. Divide and conquer over the
# rows then needs O(n log n) pair evaluations: the best column of the middle row splits the
# columns for the rows above and below it. Scores are compared as logarithms, so no
# e^(-beta k) underflows. Each level of the recursion is one vectorised pass.
#
# The mean (add/remove neighbours, the empty mean at the midpoint): two neighbours are w
# and w plus one record v, their means |v - mean(w)| / (|w| + 1) apart. In units of the
# range (z = (x - lower) / (upper - lower)) the widest pair within k operations pulls the
# mean down with the extra record high (or the mirror image): w is x without its r largest
# records plus a records at 0 and v = 1, or v = z_n (x's largest) and w is x without its
# r + 1 largest plus a zeros (distance r + a). For fixed r the gap, as a function of
# N = |w|, is (c N - q) / (N (N + 1)) with q, c >= 0: rising up to
# N* = (q + sqrt(q^2 + c q)) / c and falling after, so each r needs only the ends of its
# range of N and the two integers around N*.


def _median_log_smooth_sensitivity(padded, m, beta):
    """log S for the padded sorted values (``padded[0]`` = lower, ``padded[-1]`` = upper,
    the median at index m) and beta > 0: the largest log(p_j - p_i) - beta (j - i - 1)
    over i <= m <= j, by divide and conquer on the monotone best column."""
    p = np.asarray(padded, dtype=float)
    # pending blocks of rows [r0, r1] whose best columns lie in [c0, c1]
    r0, r1 = np.array([0]), np.array([m])
    c0, c1 = np.array([m]), np.array([p.size - 1])
    best = -np.inf
    with np.errstate(divide="ignore", over="ignore"):    # log 0 = -inf; a huge beta: -inf scores
        while r0.size:
            mid = (r0 + r1) // 2
            lengths = c1 - c0 + 1
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            cols = np.arange(lengths.sum()) - np.repeat(starts - c0, lengths)
            rows = np.repeat(mid, lengths)
            score = np.log(p[cols] - p[rows]) - beta * (cols - rows - 1)
            top = np.maximum.reduceat(score, starts)
            best = max(best, float(top.max()))
            # the leftmost column reaching each block's maximum
            hit = np.where(score == np.repeat(top, lengths), np.arange(score.size), score.size)
            jstar = cols[np.minimum.reduceat(hit, starts)]
            upper_rows, lower_rows = r0 <= mid - 1, mid + 1 <= r1
            r0, r1, c0, c1 = (np.concatenate((r0[upper_rows], mid[lower_rows] + 1)),
                              np.concatenate((mid[upper_rows] - 1, r1[lower_rows])),
                              np.concatenate((c0[upper_rows], jstar[lower_rows])),
                              np.concatenate((jstar[upper_rows], c1[lower_rows])))
    return best


def _pull_down(z, k):
    """The largest |mean(w + v) - mean(w)| over the pairs described in the notes above
    that pull the mean down (extra record high), z sorted in [0, 1], within
    k operations; in units of the range."""
    n = z.size
    tail = np.concatenate(([0.0], np.cumsum(z)))          # tail[i] = z_1 + ... + z_i
    best = 0.0
    for top, first_removed in ((1.0, 0), (z[-1], 1)):      # the extra record: at 1, or x's largest
        r = np.arange(0, min(k, n - first_removed) + 1)   # further records removed, largest first
        size0 = n - first_removed - r                     # |w| before any record at 0 is added
        q = tail[size0]                                   # sum of w's own values
        c = np.full(r.shape, float(top))
        a_max = k - r                                     # records at 0 that may still be added
        best = max(best, float(_best_over_sizes(q, c, size0, size0 + a_max, top).max()))
    return best


def _best_over_sizes(q, c, n_low, n_high, top):
    """max over integers N in [n_low, n_high] of (top - q / N) / (N + 1) (N >= 1) or
    top - 1/2 (N = 0, the empty dataset's midpoint): the mean gap of w with sum q and
    N - n_low records at 0 added, against w plus one record at ``top``."""
    n_low, n_high = n_low.astype(float), n_high.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        peak = np.where(c > 0, (q + np.sqrt(q * q + c * q)) / c, n_low)
    out = np.full(q.shape, -np.inf)
    for size in (n_low, n_high, np.floor(peak), np.ceil(peak)):
        size = np.clip(size, n_low, n_high)
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = np.where(size >= 1, (top - q / np.maximum(size, 1.0)) / (size + 1.0), top - 0.5)
        out = np.maximum(out, gap)
    return out


def _mean_local_sensitivity(z, k):
    """A(k) of the mean in units of the range, for sorted z in [0, 1] and k >= 0."""
    return max(_pull_down(z, k), _pull_down(np.sort(1.0 - z), k))


def _gap(q, size, top):
    """(top - q / N) / (N + 1) for N >= 1, top - 1/2 for the empty dataset (N = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(size >= 1, (top - q / np.maximum(size, 1)) / (size + 1.0), top - 0.5)


def _mean_distance_to_instability(z, bound):
    """min{k : A(k) > bound} (units of the range, 0 <= bound < 1/2) in O(n): for every
    pair family and every r, the fewest records at 0 to add before the gap exceeds the
    bound. The gap (c N - q) / (N (N + 1)) exceeds b exactly between the roots of
    b N^2 + (b - c) N + q = 0, so the first size is the smaller root rounded up (checked
    against the gap itself, one step either way, for rounding). A(n) = 1/2 > bound."""
    best = z.size
    for zs in (z, np.sort(1.0 - z)):
        n = zs.size
        tail = np.concatenate(([0.0], np.cumsum(zs)))
        for top, first_removed in ((1.0, 0), (float(zs[-1]), 1)):
            r = np.arange(0, n - first_removed + 1)
            size0 = (n - first_removed - r).astype(float)
            q = tail[n - first_removed - r]
            disc = (top - bound) ** 2 - 4.0 * bound * q
            with np.errstate(divide="ignore", invalid="ignore"):
                root = np.where((top > bound) & (disc >= 0),
                                2.0 * q / ((top - bound) + np.sqrt(np.maximum(disc, 0.0))), np.inf)
            size = np.maximum(size0, np.floor(root) + 1.0)
            size = np.where(np.isfinite(size), size, size0)
            size = np.where((size > size0) & (_gap(q, size - 1, top) > bound), size - 1, size)
            size = np.where(_gap(q, size, top) > bound, size,
                            np.where(_gap(q, size + 1, top) > bound, size + 1, np.inf))
            size = np.where(_gap(q, size0, top) > bound, size0, size)
            best = min(best, float(np.min(r + (size - size0))))
    return int(best)
