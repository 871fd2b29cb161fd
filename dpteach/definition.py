"""What the definition of differential privacy promises, computed (notebook 04):
seed 004's coin-flip randomized response and its standard error, the range of posterior
beliefs an epsilon-DP release allows, and seed 003's "blip" mechanism that shows delta's
role. The panels of :mod:`dpteach.panels.dp_definition` draw these.
"""

from __future__ import annotations

import numpy as np

from . import mechanisms
from ._support.validate import (Bits, Epsilon, OrNone, Probability, Real, Rng, Sensitivity,
                                Using, checked, valid_epsilon, valid_values)
from ._support.lazy import lazy_module

special = lazy_module("scipy.special")   # imported by the first function that uses it

__all__ = ["coin_flip_survey", "randomized_response_standard_error", "posterior_bounds", "blip_distributions",
           "gaussian_loss_tail", "hockey_stick_divergence", "smallest_delta", "max_probability_ratio",
           "privacy_loss_between"]


@checked(bits=Bits(), rng=Rng())
def coin_flip_survey(bits, *, rng=None):
    """Seed 004's randomized response, literally: each respondent flips a fair coin; on
    heads they answer truthfully, on tails they flip again and answer 1 on heads, 0 on
    tails. The truth is reported with probability 1/2 + 1/4 = 3/4, so the ratio of the
    chances of any answer under the two true bits is (3/4)/(1/4) = 3: epsilon = ln 3
    [DR14 3.2]. Returns reported bits (int8 array, or an int for a single bit).
    """
    first = rng.random(bits.shape) < 0.5
    second = (rng.random(bits.shape) < 0.5).astype(np.int8)
    out = np.where(first, bits, second).astype(np.int8)
    return int(out) if out.ndim == 0 else out


def _valid_sample_sizes(n, name):
    """A whole number >= 1 or an array of them, as an array."""
    n_arr = np.asarray(n)
    if n_arr.dtype.kind not in "iuf" or n_arr.size == 0 or not np.isfinite(n_arr).all() or \
            (n_arr < 1).any() or (n_arr != np.round(n_arr)).any():
        raise ValueError(f"{name} must be a whole number >= 1 (or an array of them), got {n!r}")
    return n_arr


@checked(pi=Probability(), n=Using(_valid_sample_sizes))
def randomized_response_standard_error(pi, n, epsilon):
    """Standard error of :func:`dpteach.randomized_response_estimate` as an estimate of a
    *population's* fraction pi, when the n respondents are drawn at random from that
    population: sqrt(q(1-q)/n) / (2p - 1) (Warner 1965), where p = e^eps/(1+e^eps) keeps
    the truth and q = p pi + (1-p)(1-pi) is the chance of a reported 1 (each report is
    then an independent Bernoulli(q) draw).

    Both the sample and the coins are random here. Its square is the fixed-dataset
    variance p(1-p) / (n (2p-1)^2) -- the coins alone, for one given table whose fraction
    of ones is pi: :func:`dpteach.local.local_variance` with k = 2, ``mechanism="krr"``,
    ``frequency=pi`` -- plus the sampling variance pi(1-pi)/n. ``n`` may be an array. It
    shrinks like 1/sqrt(n) and blows up as epsilon -> 0 (2p - 1 ~ epsilon/2). Notebook 04.
    """
    p = mechanisms.randomized_response_keep_probability(epsilon)
    q = p * pi + (1 - p) * (1 - pi)
    out = np.sqrt(q * (1 - q) / n) / (2 * p - 1)
    return float(out) if out.ndim == 0 else out


def _valid_priors(prior, name):
    p = valid_values(prior, name)
    if (p < 0).any() or (p > 1).any():
        raise ValueError(f"{name} must be a probability in [0, 1], got {prior!r}")
    return p


@checked(prior=Using(_valid_priors), epsilon=Epsilon())
def posterior_bounds(prior, epsilon):
    """The range of posterior beliefs an epsilon-DP release allows, from a prior belief.

    For any output, Pr[out | in] <= e^eps Pr[out | out of the data], so the posterior
    odds are within a factor e^(+-eps) of the prior odds (Bayes' rule):
    posterior in [p / (p + (1-p) e^eps), p e^eps / (p e^eps + 1 - p)]. ``prior`` may be
    an array in [0, 1]. Randomized response meets the upper bound exactly when it
    reports "yes". Notebook 04.
    """
    p, e = prior, epsilon
    logit = special.logit(np.clip(p, 1e-300, 1 - 1e-16))
    lo = np.where(p == 0, 0.0, np.where(p == 1, 1.0, special.expit(logit - e)))
    hi = np.where(p == 0, 0.0, np.where(p == 1, 1.0, special.expit(logit + e)))
    if lo.ndim == 0:
        return float(lo), float(hi)
    return lo, hi


def _valid_blip_epsilon(epsilon, name):
    """epsilon > 0 with a finite Laplace scale 1 / epsilon."""
    e = valid_epsilon(epsilon, name)
    if not np.isfinite(1.0 / e):
        raise ValueError(f"{name}={e!r} is too small: the Laplace scale 1/{name} overflows")
    return e


def _valid_edges(edges, name):
    arr = valid_values(edges, name)
    if arr.ndim != 1 or arr.size < 2 or np.any(np.diff(arr) <= 0):
        raise ValueError(f"{name} must be an increasing 1-D array of at least two finite numbers")
    return arr


@checked(epsilon=Using(_valid_blip_epsilon), delta=Probability(high_open=True), gap=Real(),
         edges=OrNone(Using(_valid_edges)))
def blip_distributions(epsilon, delta, *, gap=1.0, edges=None):
    """Output distributions of seed 003's "blip" mechanism on neighbours x (without
    Alice) and y (with Alice).

    With probability 1 - delta the mechanism releases count + Lap(1/epsilon); with
    probability delta it publishes Alice's record if she is in the data, and the
    message "no record" if she is not. The counts differ by ``gap`` (1 for a count).
    Returns (edges, p_x, p_y): the noisy count is binned on ``edges`` (the outer cells
    take the tails), followed by two cells, "record published" and "no record".
    The pair is (epsilon, delta)-DP in the standard additive form -- the smallest delta
    is exactly ``delta`` -- and, once delta > 0, not (epsilon', 0)-DP for any epsilon'.
    Notebook 04.
    """
    from scipy import stats
    if edges is None:
        edges = np.linspace(-40, 41, 811)
    b, d = 1.0 / epsilon, delta

    def cells(loc):
        # cdf differences left of loc, survival-function differences right of it: no
        # cancellation in the far tails
        inner = edges[1:-1]
        cdf = np.concatenate([[0.0], stats.laplace.cdf(inner, loc=loc, scale=b), [1.0]])
        sf = np.concatenate([[1.0], stats.laplace.sf(inner, loc=loc, scale=b), [0.0]])
        return np.where(inner_mid(loc), np.diff(cdf), -np.diff(sf))

    def inner_mid(loc):
        mids = np.concatenate([[-np.inf], (edges[1:-2] + edges[2:-1]) / 2, [np.inf]])
        return mids <= loc

    p_x = np.concatenate([(1 - d) * cells(0.0), [0.0, d]])
    p_y = np.concatenate([(1 - d) * cells(float(gap)), [d, 0.0]])
    return edges, p_x, p_y


@checked(sigma=Real(low=0.0, low_open=True), l2_sensitivity=Sensitivity(positive=True),
         epsilon=Real(low=0.0))
def gaussian_loss_tail(sigma, l2_sensitivity, epsilon) -> float:
    """Pr[privacy loss > epsilon] for the Gaussian mechanism, outputs drawn on x.

    With f(x) = 0, f(x') = Delta and noise N(0, sigma^2), the loss of an output o is
    ln p_x(o)/p_x'(o) = Delta (Delta - 2o) / (2 sigma^2); it passes epsilon exactly when
    o < Delta/2 - epsilon sigma^2/Delta, which has probability
    Phi(Delta/(2 sigma) - epsilon sigma/Delta) (the first term of Balle & Wang 2018,
    Theorem 8). If this is <= delta the mechanism is (epsilon, delta)-DP (a sufficient
    condition); the smallest delta, :func:`dpteach.mechanisms.gaussian_delta`, is smaller, because it
    subtracts e^eps Pr_x'[loss > epsilon]. ``epsilon`` >= 0. Notebooks 04 and 08.
    """
    d = l2_sensitivity
    return float(special.ndtr(d / (2 * sigma) - epsilon * sigma / d))


# -- the definition itself: how far apart two output distributions are (notebook 04)
def _valid_distribution(p, name):
    arr = valid_values(p, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D vector of probabilities, got shape {arr.shape}")
    if (arr < 0).any():
        raise ValueError(f"{name} must not contain negative probabilities")
    if not np.isclose(arr.sum(), 1.0, rtol=0, atol=1e-9):
        raise ValueError(f"{name} must sum to 1, got {arr.sum():.12g}")
    return arr


@checked(p=Using(_valid_distribution), q=Using(_valid_distribution), epsilon=Real(low=0.0))
def hockey_stick_divergence(p, q, epsilon) -> float:
    """max over events S of P(S) - e^eps Q(S) = sum_i max(0, p_i - e^eps q_i), for two
    distributions on the same finite set of outputs (the best S collects the outputs
    where p_i > e^eps q_i). ``epsilon`` >= 0; at 0 it is the total variation distance.
    A mechanism is (eps, delta)-DP on a neighbouring pair exactly when this is <= delta
    in both directions [DR14 Def. 2.4]. Notebook 04.
    """
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same length, got {p.size} and {q.size}")
    with np.errstate(over="ignore"):
        scale = np.exp(epsilon)                # inf for a huge epsilon: then only q_i = 0 counts
    excess = np.where(q > 0, p - scale * np.where(q > 0, q, 1.0), p)
    return float(np.maximum(excess, 0.0).sum())


def smallest_delta(p, q, epsilon) -> float:
    """The smallest delta for which output distributions p = M(x) and q = M(y) satisfy
    Pr[M(x) in S] <= e^eps Pr[M(y) in S] + delta for every S, in both directions:
    max(HS(p, q), HS(q, p)) with HS the :func:`hockey_stick_divergence`. Notebook 04."""
    return max(hockey_stick_divergence(p, q, epsilon), hockey_stick_divergence(q, p, epsilon))


@checked(p=Using(_valid_distribution), q=Using(_valid_distribution))
def privacy_loss_between(p, q) -> float:
    """The exact epsilon of one neighbouring pair whose outputs are finite: for p = M(x)
    and q = M(y), max over outputs of |ln p_i / q_i|, the log of
    :func:`max_probability_ratio` (inf when one gives probability 0 where the other does
    not; outputs impossible under both are skipped). The mechanism is eps-DP on this pair
    exactly when this is <= eps [DR14 Def. 2.4, delta = 0]. Notebooks 04 and 15; the local
    model's version over every pair of inputs is :func:`dpteach.local.local_epsilon`."""
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same length, got {p.size} and {q.size}")
    both = (p > 0) | (q > 0)
    with np.errstate(divide="ignore"):
        return float(np.max(np.abs(np.log(p[both]) - np.log(q[both]))))


@checked(p=Using(_valid_distribution), q=Using(_valid_distribution))
def max_probability_ratio(p, q) -> float:
    """max over events S (both directions) of Pr[M(x) in S] / Pr[M(y) in S].

    The largest ratio is reached on a single output (a ratio of sums never exceeds the
    largest ratio of its terms), so this is max_i max(p_i/q_i, q_i/p_i), infinite when
    one distribution gives an output probability 0 that the other does not. Seed 002
    writes (eps, delta)-DP as "this ratio <= e^eps + delta"; that is pure
    ln(e^eps + delta)-DP, not the standard additive definition. Notebook 04.
    """
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same length, got {p.size} and {q.size}")
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = np.where(p > 0, p / q, 0.0)
        r2 = np.where(q > 0, q / p, 0.0)
    return float(max(r1.max(), r2.max()))
