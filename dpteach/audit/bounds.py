"""Empirical privacy auditing: a statistically sound lower bound on epsilon.

A mechanism M is (epsilon, delta)-DP when, for every pair of neighbouring inputs x, y and
every set of outputs E,

    P[M(x) in E] <= e^epsilon * P[M(y) in E] + delta        [DR14 Def. 2.4]

so  epsilon >= ln((P[M(x) in E] - delta) / P[M(y) in E]).  Run M many times on x and on y,
count how often E happens, replace the two unknown probabilities by exact (Clopper-Pearson)
confidence limits, and the right-hand side becomes a number that is below the true epsilon
with probability at least 1 - alpha. If that number is larger than the epsilon a mechanism
claims, the claim is refuted with confidence 1 - alpha. If it is smaller, nothing is proven:
an audit can catch a broken mechanism, never certify a correct one.

This is the black-box auditing recipe of Ding, Wang, Wang, Zhang & Kifer, "Detecting
violations of differential privacy" (CCS 2018) and Jagielski, Ullman & Oprea, "Auditing
differentially private machine learning" (NeurIPS 2020). Notebook 11 teaches it.

This module holds the bound itself: :func:`clopper_pearson`, :func:`epsilon_lower_bound`,
:func:`epsilon_point_estimate` and :func:`epsilon_interval`. Running a mechanism and
choosing the event is :mod:`dpteach.audit.experiment`; the zoo of mechanisms to audit is
:mod:`dpteach.audit.zoo`.
"""

from __future__ import annotations

import numpy as np

from .._support.validate import Delta, Probability, Using, checked, describe, valid_real
from .._support.lazy import lazy_module

special = lazy_module("scipy.special")   # imported by the first confidence bound

__all__ = [
    "epsilon_lower_bound",
    "epsilon_point_estimate",
    "epsilon_interval",
    "clopper_pearson"]


# ------------------------------------------------------------------ input checks
def valid_alpha(alpha) -> float:
    return valid_real(alpha, "alpha", low=0.0, high=1.0, low_open=True, high_open=True)


def _valid_run_counts(counts, name):
    """Whole numbers >= 0 (scalars or arrays); booleans and strings refused. Returned as
    given: :func:`_valid_within_runs` compares them with n."""
    if isinstance(counts, (bool, np.bool_, str, bytes)):
        raise TypeError(f"{name} must be a whole number of runs, got {describe(counts)}")
    arr = np.asarray(counts)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a whole number of runs, got {describe(counts)}")
    arr = arr.astype(float)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {describe(counts)}")
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be a whole number of runs, got {describe(counts)}")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (a count of runs), got {describe(counts)}")
    return counts


def _valid_within_runs(name, counts, n):
    """Counts (each checked by :func:`_valid_run_counts`) that are <= n, the number of
    runs (a float array), as a float array."""
    arr = np.asarray(counts, dtype=float)
    if np.any(arr > n):
        raise ValueError(f"{name} must be <= n (the number of runs), got {describe(counts)} "
                         f"with n={describe(n)}")
    return arr


def _valid_runs(n, name):
    """A positive whole number of runs (or an array of them), returned as given."""
    _valid_n(n)
    return n


def _valid_n(n):
    """A positive whole number of runs (or an array of them), as a float array."""
    if isinstance(n, (bool, np.bool_, str, bytes)):
        raise TypeError(f"n must be a positive whole number of runs, got {describe(n)}")
    if isinstance(n, int) and n > 2 ** 53:
        raise ValueError(f"n must be at most 2^53 runs, got {describe(n)}")
    arr = np.asarray(n)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"n must be a positive whole number of runs, got {describe(n)}")
    arr = arr.astype(float)
    if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)) or np.any(arr < 1):
        raise ValueError(f"n must be a positive whole number of runs (>= 1), got {describe(n)}")
    return arr


def _scalar_or_array(out, *inputs):
    if all(np.ndim(v) == 0 for v in inputs):
        return float(out)
    return out


# ------------------------------------------------------------------ the bound
@checked(n=Using(_valid_runs), count=Using(_valid_run_counts),
         alpha=Probability(low_open=True, high_open=True))
def clopper_pearson(count, n, *, alpha=0.05):
    """The exact two-sided (1 - alpha) Clopper-Pearson interval for a binomial proportion.

    low = Beta quantile alpha/2 with parameters (k, n - k + 1), 0 when k = 0;
    high = Beta quantile 1 - alpha/2 with parameters (k + 1, n - k), 1 when k = n
    (Clopper & Pearson 1934). The same numbers as
    ``scipy.stats.binomtest(k, n).proportion_ci(1 - alpha, method="exact")``, computed with
    :func:`scipy.special.betaincinv` so that whole arrays of counts take microseconds.
    Each end on its own is a one-sided (1 - alpha/2) bound.
    """
    n_arr = np.asarray(n, dtype=float)
    k = _valid_within_runs("count", count, n_arr)
    k, n_arr = np.broadcast_arrays(k, n_arr)
    tail = alpha / 2
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        # closed forms at the ends: (alpha/2)^(1/n) is exact where the quantile of
        # 1 - alpha/2 rounds to 1 (e.g. alpha = 1e-17, n = 10**6)
        root = np.log(tail) / n_arr
        low = np.where(k >= n_arr, np.exp(root),
                       _beta_lower_quantile(np.maximum(k, 1), n_arr - k + 1, tail))
        low = np.where(k > 0, low, 0.0)
        # upper end: the quantile whose upper tail is alpha/2, inverted directly on the
        # upper tail (betainccinv) so that a small upper end keeps its digits
        high = np.where(k <= 0, -np.expm1(root),
                        _beta_upper_quantile(k + 1, np.maximum(n_arr - k, 1), tail))
        high = np.where(k < n_arr, high, 1.0)
    return _scalar_or_array(low, count, n), _scalar_or_array(high, count, n)


def _beta_lower_quantile(a, b, y):
    """x with I_x(a, b) = y, for a tail probability y. Where scipy's betaincinv gives up
    (NaN when x is below about 1e-50), the leading term of the series
    I_x(a, b) = x^a / (a B(a, b)) (1 + O(b x)) is exact to double precision."""
    x = special.betaincinv(a, b, y)
    gave_up = np.isnan(x)
    if np.any(gave_up):     # (only there: the fallback costs as much as the quantile)
        a, b, y = np.broadcast_arrays(a, b, y)
        a, b, y = a[gave_up], b[gave_up], y[gave_up]
        x = np.array(x, float)
        x[gave_up] = np.exp((np.log(y) + np.log(a) + special.betaln(a, b)) / a)
    return x


def _beta_upper_quantile(a, b, y):
    """x with 1 - I_x(a, b) = y (the 1 - y quantile), from the upper tail directly."""
    x = special.betainccinv(a, b, y)
    gave_up = np.isnan(x)
    if np.any(gave_up):
        a, b, y = np.broadcast_arrays(a, b, y)
        x = np.array(x, float)
        x[gave_up] = 1.0 - _beta_lower_quantile(b[gave_up], a[gave_up], y[gave_up])
    return x




@checked(n=Using(_valid_runs), count_x=Using(_valid_run_counts),
         count_y=Using(_valid_run_counts), alpha=Probability(low_open=True, high_open=True),
         delta=Delta())
def epsilon_lower_bound(count_x, count_y, n, *, alpha=0.05, delta=0.0):
    """One-sided (1 - alpha) lower confidence bound on epsilon from event counts.

    An event E happened ``count_x`` times in ``n`` runs of the mechanism on x and
    ``count_y`` times in ``n`` runs on the neighbour y. With p_x,low the lower and
    p_y,high the upper end of the exact two-sided (1 - alpha) Clopper-Pearson intervals
    (so alpha is split equally, alpha/2 on each side),

        epsilon_lb = max(0, ln((p_x,low - delta) / p_y,high))

    (0 when p_x,low <= delta). By a union bound, p_x,low <= P[M(x) in E] and
    p_y,high >= P[M(y) in E] hold together with probability >= 1 - alpha, and then
    epsilon_lb <= ln((P[M(x) in E] - delta) / P[M(y) in E]) <= epsilon for every
    (epsilon, delta)-DP mechanism [DR14 Def. 2.4]. The bound never exceeds
    :func:`epsilon_point_estimate`. Units: nats (natural log), like epsilon.

    Counts and n may be arrays (they broadcast); scalars give a float.

    Examples
    --------
    >>> round(epsilon_lower_bound(3000, 1000, 10_000, alpha=0.05), 3)
    1.012
    """
    n_arr = np.asarray(n, dtype=float)
    cx = _valid_within_runs("count_x", count_x, n_arr)
    cy = _valid_within_runs("count_y", count_y, n_arr)
    px_low, _ = clopper_pearson(cx, n_arr, alpha=alpha)
    _, py_high = clopper_pearson(cy, n_arr, alpha=alpha)
    num = np.asarray(px_low) - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        lb = np.where(num > 0, np.log(np.maximum(num, 1e-300) / np.asarray(py_high)), 0.0)
    lb = np.maximum(lb, 0.0)
    return _scalar_or_array(lb, count_x, count_y, n)


@checked(n=Using(_valid_runs), count_x=Using(_valid_run_counts),
         count_y=Using(_valid_run_counts), delta=Delta())
def epsilon_point_estimate(count_x, count_y, n, *, delta=0.0):
    """The plug-in estimate max(0, ln((count_x/n - delta) / (count_y/n))).

    ``inf`` when count_y = 0 < count_x - delta n. Not a bound: it is above the true
    ln-ratio about half the time, which is why audits report :func:`epsilon_lower_bound`.
    """
    n_arr = np.asarray(n, dtype=float)
    cx = _valid_within_runs("count_x", count_x, n_arr)
    cy = _valid_within_runs("count_y", count_y, n_arr)
    num = cx / n_arr - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(num > 0, np.log(np.maximum(num, 1e-300) / (cy / n_arr)), 0.0)
    est = np.maximum(np.nan_to_num(est, nan=0.0, posinf=np.inf), 0.0)
    return _scalar_or_array(est, count_x, count_y, n)


@checked(n=Using(_valid_runs), count_x=Using(_valid_run_counts),
         count_y=Using(_valid_run_counts), alpha=Probability(low_open=True, high_open=True),
         delta=Delta())
def epsilon_interval(count_x, count_y, n, *, alpha=0.05, delta=0.0):
    """(lower, upper): a two-sided (1 - 2 alpha) band for ln((P_x(E) - delta) / P_y(E)).

    lower is :func:`epsilon_lower_bound`; upper = ln((p_x,high - delta) / p_y,low) from the
    other ends of the same Clopper-Pearson intervals (inf when count_y = 0). The band
    narrows like 1/sqrt(n); notebook 11's audit panel draws it.
    """
    lower = epsilon_lower_bound(count_x, count_y, n, alpha=alpha, delta=delta)  # counts <= n
    n_arr = np.asarray(n, dtype=float)
    cx, cy = np.asarray(count_x, dtype=float), np.asarray(count_y, dtype=float)
    _, px_high = clopper_pearson(cx, n_arr, alpha=alpha)
    py_low, _ = clopper_pearson(cy, n_arr, alpha=alpha)
    num = np.asarray(px_high) - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = np.where(num > 0, np.log(np.maximum(num, 1e-300) / np.asarray(py_low)), 0.0)
    upper = np.maximum(np.nan_to_num(upper, nan=0.0, posinf=np.inf), 0.0)
    return lower, _scalar_or_array(upper, count_x, count_y, n)
