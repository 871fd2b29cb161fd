"""The exponential mechanism, analysed (notebook 09): its privacy loss on every
neighbour with and without the 1/2 of exp(eps u / (2 Delta)), the utility theorem
checked by drawing outputs, and seed 004's apple pricing. The panels of
:mod:`dpteach.panels.exponential` draw these.
"""

from __future__ import annotations

import numpy as np

from . import bounds, datasets, mechanisms
from ._support.validate import (Epsilon, Flag, OrNone, PositiveInt, Real, Scores, Sensitivity,
                                Using, Values, checked, valid_values)

_MAX_CANDIDATES = 10 ** 7     # tied_scores builds an array of this many floats at most
_MAX_DRAWS = 10 ** 7

__all__ = ["NATIONALITY", "EYE_COLOUR", "log_ratio", "worst_case_log_ratio", "utility_tail",
           "tied_scores", "price_grid", "apple_outputs", "posted_price_revenue"]

#: Seed 004's "most common nationality" (|R| = 4) and "eye colour" (|R| = 5) questions,
#: with the invented rooms of :func:`dpteach.datasets.nationality_counts` and
#: :func:`dpteach.datasets.eye_colour_counts`.
NATIONALITY = datasets.nationality_counts().to_dict()
EYE_COLOUR = datasets.eye_colour_counts().to_dict()


def _probabilities(scores, sensitivity, epsilon, half):
    # Seed 000's form exp(eps u / Delta) is exactly dpteach's exp(eps' u / (2 Delta)) at
    # eps' = 2 eps, so both forms come from the one real implementation.
    return mechanisms.exponential_probabilities(scores, sensitivity,
                                                epsilon if half else 2 * epsilon)


@checked(scores=Scores(), neighbour_scores=Scores(), sensitivity=Sensitivity(positive=True),
         epsilon=Epsilon(), half=Flag())
def log_ratio(scores, neighbour_scores, sensitivity, epsilon, *, half=True):
    """ln Pr[M(D) = r] - ln Pr[M(D') = r] for every candidate r.

    ``scores`` are u(D, .), ``neighbour_scores`` u(D', .); ``half=False`` uses seed 000's
    form without the 1/2.
    """
    if scores.shape != neighbour_scores.shape:
        raise ValueError(f"neighbour_scores must have one score per candidate ({scores.size}), "
                         f"got {neighbour_scores.size}")
    with np.errstate(divide="ignore"):
        return (np.log(_probabilities(scores, sensitivity, epsilon, half))
                - np.log(_probabilities(neighbour_scores, sensitivity, epsilon, half)))


@checked(scores=Scores(), sensitivity=Sensitivity(positive=True), epsilon=Epsilon(), half=Flag())
def worst_case_log_ratio(scores, sensitivity, epsilon, *, half=True) -> float:
    """The largest |ln Pr[M(D) = r] / Pr[M(D') = r]| over candidates r and neighbours D'.

    Any D' may move every score by up to Delta. For a fixed r the ratio
    Pr_D(r) / Pr_D'(r) is largest when r's score drops by Delta and every other score
    rises by Delta (and the reverse ratio in the opposite case), so trying those 2|R|
    neighbours is exhaustive. With the 1/2 the answer is at most epsilon (DR14 Thm 3.10);
    without it, it tends to 2 epsilon when the other candidates dominate (seed 000's
    "2 epsilon-differentially private").
    """
    worst = 0.0
    for r in range(scores.size):
        step = np.full(scores.shape, sensitivity)
        step[r] = -sensitivity
        for sign in (1, -1):
            lr = log_ratio(scores, scores + sign * step, sensitivity, epsilon, half=half)[r]
            worst = max(worst, abs(float(lr)))
    return worst


@checked(n_candidates=PositiveInt(maximum=_MAX_CANDIDATES), gap=Real(), opt=Real())
def tied_scores(n_candidates, gap, *, opt=0.0):
    """One optimal candidate scoring ``opt`` and n_candidates - 1 tied at opt - gap
    (at most 10^7 candidates)."""
    if not np.isfinite(opt - gap):
        raise ValueError(f"opt - gap must be finite, got opt={opt:g}, gap={gap:g}")
    u = np.full(n_candidates, opt - gap)
    u[0] = opt
    return u


def _valid_ts(t_grid, name):
    t = valid_values(t_grid, name)
    if (t < 0).any():
        raise ValueError(f"{name} must hold values t >= 0")
    return t


@checked(scores=Scores(), sensitivity=Sensitivity(positive=True), epsilon=Epsilon(),
         t_grid=Using(_valid_ts), n_draws=PositiveInt(maximum=_MAX_DRAWS))
def utility_tail(scores, sensitivity, epsilon, t_grid, *, n_draws=20_000, rng=None):
    """Empirical Pr[u(r*) <= threshold(t)] for each t, from ``n_draws`` outputs.

    The outputs r* are drawn by :func:`dpteach.exponential_mechanism` (vectorised with
    ``size=``); threshold(t) is :func:`dpteach.exponential_utility_threshold` with
    |R_OPT| counted from the scores. The utility theorem says each entry is at most e^-t.
    Returns (empirical, thresholds).
    """
    opt = scores.max()
    n_opt = int((scores == opt).sum())
    draws = mechanisms.exponential_mechanism(scores, scores, sensitivity, epsilon, rng=rng,
                                             size=n_draws)
    thresholds = np.array([bounds.exponential_utility_threshold(
        opt, sensitivity, epsilon, scores.size, ti, n_optimal=n_opt) for ti in np.ravel(t_grid)])
    ranked = np.sort(draws)
    empirical = np.searchsorted(ranked, thresholds, side="right") / n_draws
    return empirical, thresholds


@checked(top=Real(low=0.01, high=1e5))
def price_grid(top=5.0):
    """Posted prices $0.01, $0.02, ..., ``top`` (whole cents; $0.01 <= top <= $100,000)."""
    return np.arange(1, int(round(top * 100)) + 1) / 100


@checked(valuations=Values(), prices=Values())
def posted_price_revenue(valuations, prices):
    """Revenue p * #{buyers with valuation >= p} of each posted price p, in dollars.

    One buyer joining or leaving changes the revenue at price p by at most p, so the
    sensitivity of this score is the largest price on offer. Prices and valuations are
    compared in whole cents, so $4.01 against $4.01 is a sale despite floating point.
    Seed 004's apple market (:func:`dpteach.datasets.apple_buyers`); notebook 09.
    """
    v = np.round(valuations.ravel() * 100).astype(np.int64)
    if (prices < 0).any() or (v < 0).any():
        raise ValueError("prices and valuations must be >= 0")
    cents = np.round(prices * 100).astype(np.int64)
    buyers = (v[None, :] >= cents.reshape(-1, 1)).sum(axis=1).reshape(cents.shape)
    out = cents * buyers / 100
    return out.item() if np.ndim(out) == 0 else out


def _valid_prices(prices, name):
    p = valid_values(prices, name)
    if p.ndim != 1 or (p <= 0).any():
        raise ValueError(f"{name} must be a 1-D list of positive prices")
    return p


@checked(copies=PositiveInt(maximum=10 ** 5), epsilon=Epsilon(),
         prices=OrNone(Using(_valid_prices)))
def apple_outputs(epsilon, *, copies=1, prices=None):
    """Distributions of the price chosen by two private sellers, for seed 004's apples.

    The market is ``copies`` copies of :func:`dpteach.datasets.apple_buyers`. One buyer
    changes the revenue at price p by at most p, so the score's sensitivity is the top
    price. Returns a dict with ``prices``, ``revenue``, ``exponential`` (probabilities of
    the exponential mechanism with revenue as the score) and ``perturbed`` (probability
    that the best price plus Lap(top price / epsilon), rounded to the cent, lands on each
    price; mass that falls outside the grid sells nothing and is reported as ``lost``),
    and the expected revenue of each.
    """
    if prices is None:
        prices = price_grid()
    values = np.tile(datasets.apple_buyers()["Valuation ($)"].to_numpy(), copies)
    revenue = posted_price_revenue(values, prices)
    top = float(prices.max())
    p_exp = mechanisms.exponential_probabilities(revenue, top, epsilon)
    best = float(prices[np.argmax(revenue)])
    noise = mechanisms.output_distribution(best, mechanisms.laplace_scale(top, epsilon))
    edges = np.concatenate([prices - 0.005, [prices[-1] + 0.005]])
    p_pert = np.diff(noise.cdf(edges))
    return {"prices": prices, "revenue": revenue, "exponential": p_exp, "perturbed": p_pert,
            "lost": float(1 - p_pert.sum()), "opt": float(revenue.max()),
            "expected_exponential": float(p_exp @ revenue),
            "expected_perturbed": float(p_pert @ revenue)}
