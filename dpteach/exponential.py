"""The exponential mechanism, analysed (notebook 09): its privacy loss on every
neighbour with and without the 1/2 of exp(eps u / (2 Delta)), the utility theorem
checked by drawing outputs, and seed 004's apple pricing. The panels of
:mod:`dpteach.panels.exponential` draw these.
"""

from __future__ import annotations

import numpy as np

from . import bounds, datasets, mechanisms
from ._support.validate import (valid_epsilon, valid_flag, valid_positive_int, valid_real, valid_scores,
                        valid_sensitivity, valid_values)

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


def log_ratio(scores, neighbour_scores, sensitivity, epsilon, *, half=True):
    """ln Pr[M(D) = r] - ln Pr[M(D') = r] for every candidate r.

    ``scores`` are u(D, .), ``neighbour_scores`` u(D', .); ``half=False`` uses seed 000's
    form without the 1/2.
    """
    u = valid_scores(scores)
    v = valid_scores(neighbour_scores, "neighbour_scores")
    if u.shape != v.shape:
        raise ValueError(f"neighbour_scores must have one score per candidate ({u.size}), "
                         f"got {v.size}")
    d = valid_sensitivity(sensitivity, positive=True)
    e = valid_epsilon(epsilon)
    half = valid_flag(half, "half")
    with np.errstate(divide="ignore"):
        return np.log(_probabilities(u, d, e, half)) - np.log(_probabilities(v, d, e, half))


def worst_case_log_ratio(scores, sensitivity, epsilon, *, half=True) -> float:
    """The largest |ln Pr[M(D) = r] / Pr[M(D') = r]| over candidates r and neighbours D'.

    Any D' may move every score by up to Delta. For a fixed r the ratio
    Pr_D(r) / Pr_D'(r) is largest when r's score drops by Delta and every other score
    rises by Delta (and the reverse ratio in the opposite case), so trying those 2|R|
    neighbours is exhaustive. With the 1/2 the answer is at most epsilon (DR14 Thm 3.10);
    without it, it tends to 2 epsilon when the other candidates dominate (seed 000's
    "2 epsilon-differentially private").
    """
    u = valid_scores(scores)
    d = valid_sensitivity(sensitivity, positive=True)
    valid_epsilon(epsilon)
    half = valid_flag(half, "half")
    worst = 0.0
    for r in range(u.size):
        step = np.full(u.shape, d)
        step[r] = -d
        for sign in (1, -1):
            lr = log_ratio(u, u + sign * step, d, epsilon, half=half)[r]
            worst = max(worst, abs(float(lr)))
    return worst


def tied_scores(n_candidates, gap, *, opt=0.0):
    """One optimal candidate scoring ``opt`` and n_candidates - 1 tied at opt - gap
    (at most 10^7 candidates)."""
    n = valid_positive_int(n_candidates, "n_candidates", maximum=_MAX_CANDIDATES)
    g = valid_real(gap, "gap")
    top = valid_real(opt, "opt")
    if not np.isfinite(top - g):
        raise ValueError(f"opt - gap must be finite, got opt={top:g}, gap={g:g}")
    u = np.full(n, top - g)
    u[0] = top
    return u


def utility_tail(scores, sensitivity, epsilon, t_grid, *, n_draws=20_000, rng=None):
    """Empirical Pr[u(r*) <= threshold(t)] for each t, from ``n_draws`` outputs.

    The outputs r* are drawn by :func:`dpteach.exponential_mechanism` (vectorised with
    ``size=``); threshold(t) is :func:`dpteach.exponential_utility_threshold` with
    |R_OPT| counted from the scores. The utility theorem says each entry is at most e^-t.
    Returns (empirical, thresholds).
    """
    u = valid_scores(scores)
    valid_sensitivity(sensitivity, positive=True)
    valid_epsilon(epsilon)
    t = valid_values(t_grid, "t_grid")
    if (t < 0).any():
        raise ValueError("t_grid must hold values t >= 0")
    n_draws = valid_positive_int(n_draws, "n_draws", maximum=_MAX_DRAWS)
    opt = u.max()
    n_opt = int((u == opt).sum())
    draws = mechanisms.exponential_mechanism(u, u, sensitivity, epsilon, rng=rng, size=n_draws)
    thresholds = np.array([bounds.exponential_utility_threshold(
        opt, sensitivity, epsilon, u.size, ti, n_optimal=n_opt) for ti in np.ravel(t)])
    ranked = np.sort(draws)
    empirical = np.searchsorted(ranked, thresholds, side="right") / n_draws
    return empirical, thresholds


def price_grid(top=5.0):
    """Posted prices $0.01, $0.02, ..., ``top`` (whole cents; $0.01 <= top <= $100,000)."""
    top = valid_real(top, "top", low=0.01, high=1e5)
    return np.arange(1, int(round(top * 100)) + 1) / 100


def posted_price_revenue(valuations, prices):
    """Revenue p * #{buyers with valuation >= p} of each posted price p, in dollars.

    One buyer joining or leaving changes the revenue at price p by at most p, so the
    sensitivity of this score is the largest price on offer. Prices and valuations are
    compared in whole cents, so $4.01 against $4.01 is a sale despite floating point.
    Seed 004's apple market (:func:`dpteach.datasets.apple_buyers`); notebook 09.
    """
    v = np.round(valid_values(valuations, "valuations").ravel() * 100).astype(np.int64)
    p = valid_values(prices, "prices")
    if (p < 0).any() or (v < 0).any():
        raise ValueError("prices and valuations must be >= 0")
    cents = np.round(p * 100).astype(np.int64)
    buyers = (v[None, :] >= cents.reshape(-1, 1)).sum(axis=1).reshape(cents.shape)
    out = cents * buyers / 100
    return out.item() if np.ndim(out) == 0 else out


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
    copies = valid_positive_int(copies, "copies", maximum=10 ** 5)
    epsilon = valid_epsilon(epsilon)
    prices = price_grid() if prices is None else valid_values(prices, "prices")
    if prices.ndim != 1 or (prices <= 0).any():
        raise ValueError("prices must be a 1-D list of positive prices")
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
