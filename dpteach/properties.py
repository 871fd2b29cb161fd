"""Three properties every differentially private mechanism has (notebook 12).

- **Post-processing**: whatever is computed from a private release, without looking at
  the data again, is private with the same (eps, delta) [DR14 Proposition 2.1].
  :func:`postprocess_laplace` gives the exact output distribution of f(x + Lap(b)) for a
  few functions f (rounding, clamping, thresholding) and :func:`max_log_ratio` the
  largest log-ratio of two such distributions over all sets of outputs.
- **Group privacy**: datasets that differ in k people are k eps apart under pure eps-DP
  [DR14 Theorem 2.2, pure DP only]; under (eps, delta)-DP the chain argument gives
  (k eps, delta (e^(k eps) - 1)/(e^eps - 1)) (:func:`group_privacy_chain`), at most the
  textbook (k eps, k e^((k-1) eps) delta) of :func:`group_privacy`.
- **Parallel composition**: mechanisms run on disjoint parts of the data cost the
  largest eps, not the sum [McSherry 2009, parallel composition]: :func:`parallel_composition`.

[DR14] Dwork & Roth, The Algorithmic Foundations of Differential Privacy, 2014.
[McSherry 2009] Privacy integrated queries, SIGMOD 2009.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._support import densities as _densities
from ._support.gaussian import unit_sigma
from ._support.validate import (SCALE_RANGE, Delta, Epsilon, OrNone, PositiveInt, Real, Using,
                                Values, checked, finite_result, valid_delta, valid_epsilon,
                                valid_positive_int, valid_values)

__all__ = ["group_privacy", "group_privacy_chain", "gaussian_group_delta", "parallel_composition", "postprocess_laplace", "max_log_ratio",
           "OutputLaw", "POSTPROCESSINGS", "group_curves", "parallel_costs"]


# ------------------------------------------------------------------ group privacy
@checked(epsilon=Epsilon(), delta=Delta(), k=PositiveInt(maximum=10**9))
def group_privacy(epsilon, delta, k):
    """(k eps, k e^((k-1) eps) delta): what an (eps, delta)-DP mechanism promises about
    two datasets that differ in ``k`` people.

    Chain k neighbouring steps x = x0, x1, ..., xk = x'. Each step multiplies a
    probability by at most e^eps and adds at most delta; adding delta at step j and
    multiplying by the e^eps of the k - j later steps gives delta (1 + e^eps + ... +
    e^((k-1) eps)) <= k e^((k-1) eps) delta. [DR14 Theorem 2.2] states the pure case
    (delta = 0, k eps) only; the delta part is the chain argument with each of the k terms
    of the sum bounded by the largest, e^((k-1) eps). :func:`group_privacy_chain` keeps the
    exact sum, which is smaller. Returns floats; a delta at or above 1 promises nothing (it
    may be returned as is, or as inf when e^((k-1) eps) overflows). Notebook 12.
    """
    finite_result(k * epsilon, "epsilon", "k epsilon")
    if delta == 0.0:
        return float(k * epsilon), 0.0
    with np.errstate(over="ignore"):
        grown = float(k * np.exp((k - 1) * epsilon) * delta)
    return float(k * epsilon), grown


@checked(epsilon=Epsilon(), delta=Delta(), k=PositiveInt(maximum=10**9))
def group_privacy_chain(epsilon, delta, k):
    """(k eps, delta (e^(k eps) - 1) / (e^eps - 1)): the chain argument's group guarantee
    with the geometric sum kept exact, delta (1 + e^eps + ... + e^((k-1) eps)).

    At most :func:`group_privacy`'s k e^((k-1) eps) delta (each of the k terms is at most
    the largest), equal to it at k = 1; for eps = 0.5 and k = 10 about 4 times smaller.
    A delta at or above 1 promises nothing (inf when e^(k eps) overflows). Notebook 12, A7 Task 1.
    """
    if delta == 0.0:
        return float(k * epsilon), 0.0
    # ln((e^(k eps) - 1) / (e^eps - 1)) in log space: finite, or inf, never inf/inf = NaN
    log_ratio = _log_expm1(k * epsilon) - _log_expm1(epsilon)
    with np.errstate(over="ignore"):
        total = float(delta * np.exp(log_ratio))
    return float(k * epsilon), total


def _log_expm1(x):
    """ln(e^x - 1) for x > 0, without overflow (x + ln(1 - e^-x) for large x)."""
    return float(np.log(np.expm1(x))) if x < 30 else float(x + np.log1p(-np.exp(-x)))


def _valid_group_epsilon(epsilon, name):
    """epsilon > 0 and at most 700: the analytic sigma at a larger epsilon is below the
    float range's resolution."""
    e = valid_epsilon(epsilon, name)
    if e > 700:
        raise ValueError(f"{name} must be <= 700 here (the analytic sigma at a larger epsilon "
                         f"is below the float range's resolution), got {e!r}")
    return e


@checked(epsilon=Using(_valid_group_epsilon), delta=Delta(required=True),
         k=PositiveInt(maximum=10**6))
def gaussian_group_delta(epsilon, delta, k):
    """The true delta at k eps, for datasets ``k`` people apart, of the Gaussian mechanism
    calibrated to (eps, delta) with L2 sensitivity 1 (analytic sigma).

    k people move a count by k, so the pair is a Gaussian with mean shift k:
    delta_k = gaussian_delta(sigma, k, k eps) (Balle & Wang 2018, Theorem 8). It never
    exceeds the group-privacy bound k e^((k-1) eps) delta of :func:`group_privacy`.
    Notebook 12.
    """
    from .mechanisms import gaussian_delta

    sigma = unit_sigma(epsilon, delta)   # the analytic sigma, remembered
    return float(gaussian_delta(sigma, float(k), k * epsilon))


# ------------------------------------------------------------------ parallel composition
def _as_list(values, name):
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of numbers, got a string")
    out = list(np.atleast_1d(np.asarray(values, dtype=object)).ravel())
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


def _valid_epsilons(epsilons, name):
    return [valid_epsilon(e, f"{name}[{i}]") for i, e in enumerate(_as_list(epsilons, name))]


def _valid_deltas(deltas, name):
    return [valid_delta(d, f"{name}[{i}]") for i, d in enumerate(_as_list(deltas, name))]


@checked(epsilons=Using(_valid_epsilons), deltas=OrNone(Using(_valid_deltas)))
def parallel_composition(epsilons, deltas=None):
    """(max eps_i, max delta_i): mechanisms M_i, each (eps_i, delta_i)-DP, run on
    *disjoint* parts D_i of the data (each person in at most one part).

    One person changes one part only, so only one M_i sees a difference; the others'
    outputs have the same distribution on both datasets [McSherry 2009]. A
    histogram over disjoint bins, each bin released with Lap(1/eps), is therefore
    eps-DP in total, not (number of bins) x eps. Compare :func:`dpteach.basic_composition`,
    the sum, which holds when the parts overlap. Notebook 12.
    """
    if deltas is None:
        deltas = [0.0] * len(epsilons)
    elif len(deltas) != len(epsilons):
        raise ValueError(f"deltas has {len(deltas)} entries but epsilons has {len(epsilons)}")
    return float(max(epsilons)), float(max(deltas))


# ------------------------------------------------------------------ post-processing
#: the functions f that :func:`postprocess_laplace` applies to a Laplace release
POSTPROCESSINGS = ("identity", "round", "clamp", "threshold")


@dataclass(frozen=True)
class OutputLaw:
    """The law of a released value: point masses plus a density.

    ``atoms`` / ``atom_probs``: outputs taken with positive probability and those
    probabilities. ``grid`` / ``density``: the density of the continuous part on a grid
    (empty when there is none); ``support`` the interval it lives on.
    """

    atoms: np.ndarray
    atom_probs: np.ndarray
    grid: np.ndarray
    density: np.ndarray
    support: tuple

    @property
    def continuous_mass(self) -> float:
        return float(1.0 - self.atom_probs.sum())


_MAX_CELLS = 10**6


def _valid_cells(f, lo, hi, scale, step):
    """Rounding tabulates every cell within 60 scales of the values: refuse a step so
    small that this would be more than a million cells."""
    if f == "round" and (hi - lo + 120 * scale) / step > _MAX_CELLS:
        raise ValueError(f"step must be at least (range of the values (value, value1, value2) "
                         f"+ 120 scale) / {_MAX_CELLS:,} = "
                         f"{(hi - lo + 120 * scale) / _MAX_CELLS:.3g} for scale {scale:g}, "
                         f"got {step:g}")


def _law(value, scale, f, step, lower, upper, threshold, grid):
    # Lap(value, scale)'s pdf, cdf and sf: scipy.stats.laplace's floats, in closed form
    pdf, cdf, sf = (lambda x: _densities.laplace_pdf(x, value, scale),
                    lambda x: _densities.laplace_cdf(x, value, scale),
                    lambda x: _densities.laplace_sf(x, value, scale))
    empty = np.zeros(0)
    if f == "identity":
        return OutputLaw(empty, empty, grid, pdf(grid), (-np.inf, np.inf))
    if f == "round":
        # outputs k*step; Pr = F((k + 1/2) step) - F((k - 1/2) step), k over +-60 b around value
        ks = np.arange(np.floor((value - 60 * scale) / step), np.ceil((value + 60 * scale) / step) + 1)
        probs = np.exp(_log_cell(ks, step, value, scale))   # accurate in both tails
        return OutputLaw(ks * step, probs, empty, empty, (0.0, 0.0))
    if f == "clamp":
        inside = (grid > lower) & (grid < upper)
        return OutputLaw(np.array([lower, upper]),
                         np.array([cdf(lower), sf(upper)]),
                         grid[inside], pdf(grid[inside]), (lower, upper))
    # threshold: report 1 when the release is above the threshold, else 0
    return OutputLaw(np.array([0.0, 1.0]), np.array([cdf(threshold), sf(threshold)]),
                     empty, empty, (0.0, 0.0))


def _valid_postprocessing(f, name):
    if not isinstance(f, str) or f not in POSTPROCESSINGS:
        raise ValueError(f"{name} must be one of {POSTPROCESSINGS}, got {f!r}")
    return f


@checked(value=Real(), scale=Real(low=SCALE_RANGE[0], high=SCALE_RANGE[1]),
         f=Using(_valid_postprocessing), step=Real(low=0.0, low_open=True, high=1e300),
         lower=Real(), upper=Real(), threshold=Real(), grid=OrNone(Values()))
def postprocess_laplace(value, scale, f="identity", *, step=1.0, lower=0.0, upper=1.0,
                        threshold=0.5, grid=None):
    """The exact law of f(value + Lap(scale)) for a post-processing ``f``.

    f is "identity" (the release itself: a density), "round" (to the nearest multiple
    of ``step``: atoms k*step with probability F((k+1/2) step) - F((k-1/2) step), F the
    Laplace CDF), "clamp" (to [lower, upper]: atoms F(lower) and 1 - F(upper) at the
    ends, the Laplace density between) or "threshold" (1 when the release exceeds
    ``threshold``, else 0: two atoms). ``grid`` (default 801 points over +-12 scales)
    is where a density part is tabulated. Returns an :class:`OutputLaw`. Notebook 12.
    """
    if f == "clamp" and not lower < upper:
        raise ValueError(f"lower must be below upper, got lower={lower}, upper={upper}")
    _valid_cells(f, value, value, scale, step)
    if grid is None:   # finite unless value is within 12 scales of the float range's end
        grid = valid_values(np.linspace(value - 12 * scale, value + 12 * scale, 801), "grid")
    return _law(value, scale, f, step, lower, upper, threshold, grid)


@checked(value1=Real(), value2=Real(), scale=Real(low=SCALE_RANGE[0], high=SCALE_RANGE[1]),
         f=Using(_valid_postprocessing), step=Real(low=0.0, low_open=True, high=1e300),
         lower=Real(), upper=Real(), threshold=Real())
def max_log_ratio(value1, value2, scale, f="identity", *, step=1.0, lower=0.0, upper=1.0,
                  threshold=0.5):
    """sup over sets S of |ln Pr[f(M(x)) in S] / Pr[f(M(x')) in S]| for the Laplace
    release M(x) = value1 + Lap(scale), M(x') = value2 + Lap(scale).

    A ratio of sums never exceeds the largest ratio of its terms, so the supremum is
    reached on single outputs: the largest |log-ratio| over the atoms and over the
    density part. On the density part of "identity" and "clamp" the loss
    (|r - v2| - |r - v1|)/scale is monotone in r, so its extremes sit at the ends of the
    support. Post-processing can only shrink it: the result is <= |value1 - value2|/scale
    for every f [DR14 Proposition 2.1], up to float rounding in the log-probabilities of
    the cells (about 1e-14 relative; 1e-10 for a step of a thousandth of the scale).
    Notebook 12.
    """
    from .mechanisms import privacy_loss

    logcdf, logsf = _densities.laplace_logcdf, _densities.laplace_logsf   # scipy.stats.laplace's
    v1, v2, b = value1, value2, scale
    if f == "clamp" and not lower < upper:
        raise ValueError(f"lower must be below upper, got lower={lower}, upper={upper}")
    _valid_cells(f, min(v1, v2), max(v1, v2), b, step)
    if f == "identity":
        return abs(v1 - v2) / b
    worst = 0.0
    if f == "clamp":
        worst = float(np.max(np.abs(privacy_loss(np.array([lower, upper]), v1, v2, b))))
        p = np.array([logcdf(lower, v1, b), logsf(upper, v1, b)])
        q = np.array([logcdf(lower, v2, b), logsf(upper, v2, b)])
    elif f == "threshold":
        p = np.array([logcdf(threshold, v1, b), logsf(threshold, v1, b)])
        q = np.array([logcdf(threshold, v2, b), logsf(threshold, v2, b)])
    else:  # round: log-probabilities of each cell, differences of CDFs in log space
        lo, hi = min(v1, v2), max(v1, v2)
        ks = np.arange(np.floor((lo - 60 * b) / step), np.ceil((hi + 60 * b) / step) + 1)
        p = _log_cell(ks, step, v1, b)
        q = _log_cell(ks, step, v2, b)
    ratio = np.abs(p - q)
    return float(max(worst, np.max(ratio[np.isfinite(ratio)], initial=0.0)))


def _log_cell(ks, step, v, b):
    """ln Pr[(k - 1/2) step < v + Lap(b) <= (k + 1/2) step], stable far in the tails."""
    a, c = (ks - 0.5) * step, (ks + 0.5) * step
    with np.errstate(divide="ignore"):   # np.where evaluates both branches
        return _log_cell_both(a, c, v, b)


def _log_cell_both(a, c, v, b):
    logcdf, logsf = _densities.laplace_logcdf, _densities.laplace_logsf   # scipy.stats.laplace's
    # below v use the CDF, above it the survival function (both computed in log space)
    left = logcdf(c, v, b) + np.log1p(-np.exp(np.minimum(
        logcdf(a, v, b) - logcdf(c, v, b), -1e-300)))
    right = logsf(a, v, b) + np.log1p(-np.exp(np.minimum(
        logsf(c, v, b) - logsf(a, v, b), -1e-300)))
    return np.where(c <= v, left, right)


def _valid_ks(ks, name):
    return [valid_positive_int(k, name, maximum=10**6)
            for k in np.atleast_1d(np.asarray(ks, object))]


@checked(ks=Using(_valid_ks))
def group_curves(epsilon, delta, ks):
    """For groups of k people: the Gaussian mechanism calibrated to (eps, delta) (analytic
    sigma, L2 sensitivity 1) has true delta at k eps equal to gaussian_delta(sigma, k, k
    eps); the group-privacy bound is k e^((k-1) eps) delta. Returns (true, bound)."""
    true = np.array([gaussian_group_delta(epsilon, delta, int(k)) for k in ks])
    bound = np.array([group_privacy(epsilon, delta, k)[1] for k in ks])
    return true, bound


@checked(epsilon=Epsilon(), n_bins=PositiveInt(maximum=10**6))
def parallel_costs(epsilon, n_bins):
    """Worst-case privacy loss of releasing ``n_bins`` counts, each with Lap(1/eps), when
    one person is added: disjoint bins change by (1, 0, ..., 0), cumulative counts
    ("age group <= j") by (1, 1, ..., 1) for the youngest person. The joint loss of
    independent Laplace releases is the sum of |change_i| eps. Returns (disjoint,
    cumulative), equal to parallel_composition and basic_composition of n_bins eps."""
    finite_result(n_bins * epsilon, "epsilon", "n_bins epsilon")
    disjoint = np.zeros(n_bins)
    disjoint[0] = 1.0
    cumulative = np.ones(n_bins)
    return float(np.abs(disjoint).sum() * epsilon), float(np.abs(cumulative).sum() * epsilon)
