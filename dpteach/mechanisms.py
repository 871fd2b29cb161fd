"""Noise mechanisms: randomized response, Laplace, Gaussian, exponential, report noisy max.

Each function states its formula and where it comes from. The references are
Dwork & Roth, *The Algorithmic Foundations of Differential Privacy* (2014), cited as
[DR14 section], and the course seeds 000-004 (see notebooks 04, 06, 08 and 09).
"""

from __future__ import annotations

import numpy as np

from ._support.gaussian import analytic_sigma, gaussian_delta_exact
from ._support.validate import (Bits, Delta, Epsilon, Flag, Real, Rng, Scores, Sensitivity, Size,
                        Using, Values, checked, release_shape, valid_values)
from ._support.lazy import lazy_module

special = lazy_module("scipy.special")   # imported by the first function that uses it

__all__ = [
    "laplace_scale",
    "laplace_mechanism",
    "clamped_sum",
    "gaussian_sigma",
    "gaussian_delta",
    "gaussian_mechanism",
    "exponential_probabilities",
    "exponential_mechanism",
    "report_noisy_max",
    "randomized_response",
    "randomized_response_keep_probability",
    "randomized_response_estimate",
    "output_distribution",
    "privacy_loss", "sigma_curves"]


# --------------------------------------------------------------------------- Laplace
@checked(sensitivity=Sensitivity(), epsilon=Epsilon())
def laplace_scale(sensitivity, epsilon) -> float:
    """Scale of the Laplace mechanism, b = sensitivity / epsilon [DR14 3.3].

    ``sensitivity`` is the L1 sensitivity Delta f (in the query's units); the noise
    Lap(b) has density exp(-|x|/b) / (2b) and standard deviation sqrt(2)*b.
    Taught in notebook 06.
    """
    return sensitivity / epsilon


@checked(value=Values(), sensitivity=Sensitivity(), epsilon=Epsilon(), size=Size(), rng=Rng())
def laplace_mechanism(value, sensitivity, epsilon, *, rng=None, size=None):
    """Release value + Lap(sensitivity / epsilon), i.i.d. per coordinate [DR14 Def. 3.3].

    ``value`` may be a scalar or an array (a histogram, a vector of counts); the noise
    is added to every coordinate independently, so ``sensitivity`` must be the L1
    sensitivity of the whole vector. ``size`` draws that many independent releases
    (result shape ``size + shape(value)``); ``size=None`` returns one release with the
    shape of ``value``. A sensitivity of 0 adds no noise (the query is constant).
    The result is epsilon-DP (seed 000, eq. 3; seed 003, Theorem 8). Notebook 06.
    """
    b = laplace_scale(sensitivity, epsilon)
    shape = release_shape(size, value.shape)
    noise = rng.laplace(0.0, b, size=shape) if b > 0 else np.zeros(shape)
    out = value + noise
    return out.item() if out.ndim == 0 else out


@checked(values=Values(allow_empty=True), lower=Real(), upper=Real(), epsilon=Epsilon(),
         size=Size(), rng=Rng())
def clamped_sum(values, lower, upper, epsilon, *, rng=None, size=None):
    """Noisy sum of values clamped to [lower, upper]: sum_i clip(x_i, lower, upper) + Lap(b),
    b = max(|lower|, |upper|) / epsilon [DR14 3.3].

    Adding or removing one person adds or removes one clamped value, which lies in
    [lower, upper], so under add/remove neighbours the clamped sum has L1 sensitivity
    max(|lower|, |upper|) (in the values' units); the release is epsilon-DP. Clamping
    moves every value outside the range onto its nearer end, so the release estimates
    the clamped sum, not the true one: that bias does not average away. ``values`` is
    the records' values (all entries are summed); ``size`` draws that many independent
    releases of the same data. The noise is :func:`laplace_mechanism`'s. Notebook 06.
    """
    if lower >= upper:
        raise ValueError(f"lower must be < upper, got lower={lower:g}, upper={upper:g}")
    total = float(np.clip(values, lower, upper).sum())
    return laplace_mechanism(total, max(abs(lower), abs(upper)), epsilon, rng=rng, size=size)




# -------------------------------------------------------------------------- Gaussian
@checked(sigma=Real(low=0.0, low_open=True), l2_sensitivity=Sensitivity(positive=True),
         epsilon=Epsilon())
def gaussian_delta(sigma, l2_sensitivity, epsilon) -> float:
    """The exact delta of the Gaussian mechanism N(0, sigma^2) at a given epsilon.

    delta(sigma) = Phi(D/(2 sigma) - eps sigma/D) - e^eps Phi(-D/(2 sigma) - eps sigma/D)
    with D the L2 sensitivity (Balle & Wang 2018, Theorem 8). Computed in log space so
    that large epsilon does not overflow.
    """
    return gaussian_delta_exact(sigma, l2_sensitivity, epsilon)


def _valid_epsilons(epsilons, name):
    grid = valid_values(epsilons, name)
    if grid.ndim != 1 or (grid <= 0).any():
        raise ValueError(f"{name} must be a 1-D list of epsilons > 0")
    return grid


@checked(epsilons=Using(_valid_epsilons), l2_sensitivity=Sensitivity(positive=True),
         delta=Delta(required=True))
def sigma_curves(epsilons, l2_sensitivity, delta):
    """Classic and analytic sigma over ``epsilons`` and the delta each really gives.

    The classic sigma is computed by :func:`gaussian_sigma` at epsilon 0.5 and
    carried to other epsilons by its 1/epsilon form, so that its (invalid) continuation
    past epsilon = 1 can be drawn and its true delta measured with
    :func:`gaussian_delta`. Returns (classic, analytic, true_delta_classic). Notebook 08.
    """
    classic = gaussian_sigma(l2_sensitivity, 0.5, delta) * 0.5 / epsilons
    analytic = l2_sensitivity * analytic_sigma(epsilons, delta)   # gaussian_sigma(.., analytic=True)
    true_delta = np.array([gaussian_delta(s, l2_sensitivity, e)
                           for s, e in zip(classic, epsilons)])
    return classic, analytic, true_delta


@checked(l2_sensitivity=Sensitivity(), epsilon=Epsilon(), delta=Delta(required=True),
         analytic=Flag())
def gaussian_sigma(l2_sensitivity, epsilon, delta, *, analytic=False) -> float:
    """Standard deviation of the Gaussian mechanism for (epsilon, delta)-DP.

    Classic (``analytic=False``): sigma = sqrt(2 ln(1.25/delta)) * Delta_2 / epsilon
    [DR14 Theorem A.1; seed 002 eq. 7]. The theorem only holds for 0 < epsilon < 1 --
    seed 002 leaves that condition out -- so larger epsilon raises ValueError.

    Analytic (``analytic=True``): the smallest sigma whose exact privacy curve meets
    delta at epsilon (Balle & Wang 2018, "Improving the Gaussian mechanism for
    differential privacy", Theorem 8), solved by bracketing root finding (brentq,
    rtol 1e-14): delta(sigma) meets the target to 1e-9 relative or better, and
    sigma * (1 - 1e-9) already misses it. Valid for every epsilon > 0 and never larger
    than the classic sigma. Taught in notebook 08.
    """
    if l2_sensitivity == 0:
        return 0.0
    if analytic:
        return float(l2_sensitivity * _analytic_sigma_per_unit(epsilon, delta))
    if epsilon >= 1:
        raise ValueError(
            f"epsilon must be < 1 for the classic Gaussian mechanism, got {epsilon}; "
            "use gaussian_sigma(..., analytic=True) for epsilon >= 1")
    return float(np.sqrt(2 * np.log(1.25 / delta)) * l2_sensitivity / epsilon)


def _analytic_sigma_per_unit(epsilon, delta) -> float:
    """The analytic sigma for Delta_2 = 1: the root of delta(sigma) = delta, bracketed
    by factors of 10 and then found by brentq (rtol 1e-14)."""
    from scipy import optimize
    # delta(sigma) decreases from 1 (sigma -> 0) to 0 (sigma -> inf); bracket the root.
    # delta depends on Delta_2 / sigma only, so solve for Delta_2 = 1 and scale by d
    # (no underflow for a tiny d such as 5e-324)
    lo, hi = 1e-3, 1.0
    while gaussian_delta_exact(lo, 1.0, epsilon) < delta:
        lo /= 10
    while gaussian_delta_exact(hi, 1.0, epsilon) > delta:
        hi *= 10
    try:
        root = optimize.brentq(lambda s: gaussian_delta_exact(s, 1.0, epsilon) - delta, lo, hi,
                               xtol=1e-300, rtol=1e-14, maxiter=500)
    except RuntimeError:
        raise ValueError(f"epsilon={epsilon:g} is too large for the analytic calibration to "
                         "converge; use a smaller epsilon") from None
    return root


@checked(value=Values(), l2_sensitivity=Sensitivity(), epsilon=Epsilon(),
         delta=Delta(required=True), analytic=Flag(), size=Size(), rng=Rng())
def gaussian_mechanism(value, l2_sensitivity, epsilon, delta, *, analytic=False,
                       rng=None, size=None):
    """Release value + N(0, sigma^2) per coordinate, sigma from :func:`gaussian_sigma`.

    (epsilon, delta)-DP for a query whose L2 sensitivity is ``l2_sensitivity``
    [DR14 Theorem A.1]; ``size`` as in :func:`laplace_mechanism`. Notebook 08.
    """
    sigma = gaussian_sigma(l2_sensitivity, epsilon, delta, analytic=analytic)
    shape = release_shape(size, value.shape)
    out = value + (rng.normal(0.0, sigma, size=shape) if sigma > 0 else np.zeros(shape))
    return out.item() if out.ndim == 0 else out


# ------------------------------------------------------------------------ Exponential
@checked(scores=Scores(), sensitivity=Sensitivity(positive=True), epsilon=Epsilon())
def exponential_probabilities(scores, sensitivity, epsilon) -> np.ndarray:
    """P(r) = exp(eps u(r) / (2 Delta_u)) / sum_s exp(eps u(s) / (2 Delta_u)).

    The exponential mechanism of McSherry & Talwar 2007 [DR14 3.4; seed 002 eq. 8;
    seed 004]. ``scores`` are the utilities u(D, r) of each candidate, ``sensitivity``
    is Delta_u > 0. The softmax is computed by :func:`scipy.special.softmax`, which
    subtracts the largest score first, so any finite scores are safe. Note the 1/2:
    seed 000 leaves it out, and its mechanism is then only 2 epsilon-DP. Notebook 09.
    """
    return special.softmax(_exponential_exponents(scores, sensitivity, epsilon))


def _exponential_exponents(scores, sensitivity, epsilon) -> np.ndarray:
    """eps (u - max u) / (2 Delta) of checked scores: <= 0, the best candidate at 0."""
    # Shift by the best score first and divide before multiplying, so that neither
    # eps * u nor eps / (2 Delta) can overflow. In place on a new array (scores may be
    # the caller's own array).
    with np.errstate(over="ignore"):
        z = scores - scores.max()
        z /= sensitivity
        z *= epsilon / 2
    return z


def _valid_candidates(candidates, name):
    cand = np.asarray(candidates)
    if cand.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {cand.shape}")
    return cand


@checked(candidates=Using(_valid_candidates), scores=Scores(),
         sensitivity=Sensitivity(positive=True), epsilon=Epsilon(), size=Size(), rng=Rng())
def exponential_mechanism(candidates, scores, sensitivity, epsilon, *, rng=None, size=None):
    """Draw candidate r with the probabilities of :func:`exponential_probabilities`.

    Returns one candidate (``size=None``) or a numpy array of ``size`` candidates,
    drawn independently by inverse-CDF sampling: the weights exp(eps (u - max u) / (2
    Delta)) (the best is exactly 1, so nothing overflows) are summed cumulatively once,
    then each draw is a binary search for uniform * total, so 10^3 draws over 10^6
    candidates take a few tens of milliseconds. epsilon-DP when ``sensitivity`` bounds
    how much any score can change between neighbouring datasets [DR14 Theorem 3.10].
    Notebook 09.
    """
    z = _exponential_exponents(scores, sensitivity, epsilon)
    if z.shape[0] != candidates.shape[0]:
        raise ValueError(f"scores has {z.shape[0]} entries but candidates has "
                         f"{candidates.shape[0]}")
    cdf = np.cumsum(np.exp(z, out=z), out=z)
    total = cdf[-1]
    # never past the last candidate of positive weight, even if uniform * total rounds up
    last = np.searchsorted(cdf, total, side="left")
    draws = rng.random(1 if size is None else size) * total
    idx = np.minimum(np.searchsorted(cdf, draws, side="right"), last)
    return candidates[idx[0]] if size is None else candidates[idx]


@checked(scores=Scores(), sensitivity=Sensitivity(positive=True), epsilon=Epsilon(),
         monotonic=Flag(), rng=Rng())
def report_noisy_max(scores, sensitivity, epsilon, *, monotonic=False, rng=None):
    """Index of the largest noisy score, argmax_i (u_i + Lap(scale)) [DR14 3.3].

    Scale 2 Delta/epsilon in general. When the scores are *monotonic* -- adding a
    record can only raise every score or only lower every score, as with counting
    queries -- scale Delta/epsilon suffices (DR14 Claim 3.9): the argument that
    shifts one noise value to keep the winner fixed needs only one direction of
    change, so the factor 2 that covers scores moving in opposite directions is not
    needed. Only the index is released, never the noisy value (releasing the value
    too costs extra privacy: see the zoo in notebook 11). Notebook 09.
    """
    scale = (1.0 if monotonic else 2.0) * sensitivity / epsilon
    return int(np.argmax(scores + rng.laplace(0.0, scale, size=scores.shape)))


# ---------------------------------------------------------------- Randomized response
@checked(epsilon=Epsilon())
def randomized_response_keep_probability(epsilon) -> float:
    """Probability of reporting the true bit, e^eps / (1 + e^eps) [DR14 3.2].

    Seed 004's coin-flip survey (heads: tell the truth; tails: flip again and answer
    yes on heads) keeps the truth with probability 3/4, which is epsilon = ln 3.
    """
    return float(special.expit(epsilon))


@checked(bits=Bits(), epsilon=Epsilon(), rng=Rng())
def randomized_response(bits, epsilon, *, rng=None):
    """Report each bit truthfully with probability e^eps/(1+e^eps), else its flip.

    The ratio of the chances of any report under the two possible true bits is
    (e^eps/(1+e^eps)) / (1/(1+e^eps)) = e^eps, so each respondent has epsilon-DP
    [DR14 3.2]. Seed 004's coin-flip version is the case epsilon = ln 3. Notebook 04.
    """
    keep = randomized_response_keep_probability(epsilon)
    flip = rng.random(bits.shape) >= keep
    out = np.where(flip, 1 - bits, bits).astype(np.int8)
    return int(out) if out.ndim == 0 else out


@checked(reports=Bits(), epsilon=Epsilon())
def randomized_response_estimate(reports, epsilon) -> float:
    """Unbiased estimate of the true fraction of ones from randomized-response reports.

    With keep probability p, E[mean report] = p pi + (1-p)(1-pi), so
    pi_hat = (mean - (1 - p)) / (2p - 1). The estimate may fall outside [0, 1] for
    small samples; it is not clipped, so that it stays unbiased. Its standard error is
    sqrt(q(1-q)/n) / (2p - 1) with q the chance of a reported one. Notebook 04.
    """
    p = randomized_response_keep_probability(epsilon)
    return float((reports.mean() - (1 - p)) / (2 * p - 1))


# ------------------------------------------------------------ Densities and privacy loss
def _valid_noise(noise, name):
    if not isinstance(noise, str) or noise not in ("laplace", "gaussian"):
        raise ValueError(f"{name} must be 'laplace' or 'gaussian', got {noise!r}")
    return noise


@checked(value=Real(), scale=Real(low=0.0, low_open=True), noise=Using(_valid_noise))
def output_distribution(value, scale, *, noise="laplace"):
    """The frozen scipy.stats distribution of value + noise, for plotting densities.

    ``noise="laplace"``: Lap(scale) (scale = b); ``noise="gaussian"``: N(0, scale^2)
    (scale = sigma).
    """
    from scipy import stats
    if noise == "laplace":
        return stats.laplace(loc=value, scale=scale)
    return stats.norm(loc=value, scale=scale)


@checked(r=Values(), value1=Real(), value2=Real(), scale=Real(low=0.0, low_open=True),
         noise=Using(_valid_noise))
def privacy_loss(r, value1, value2, scale, *, noise="laplace"):
    """Privacy loss ln p(r | D1) / p(r | D2) of an output r, for every r in an array.

    p(. | D) is the density of f(D) + noise (see :func:`output_distribution`). For
    Laplace noise with scale b = Delta/eps the loss lies in [-eps, eps] for every r
    whenever |f(D1) - f(D2)| <= Delta (seed 000 eq. 3); for Gaussian noise it is
    unbounded, which is why the Gaussian mechanism needs a delta. Notebooks 06, 08.

    The log-ratio is computed in closed form -- Laplace: (|r - v2| - |r - v1|) / b;
    Gaussian: (v1 - v2)(2r - v1 - v2) / (2 sigma^2) -- rather than as a difference of
    log-densities, which far in the tails underflow to -inf and would give NaN.
    """
    if noise == "laplace":
        gap = abs(value1 - value2)
        # the clip only removes rounding error: |r - v2| - |r - v1| lies in [-gap, gap]
        out = np.clip(np.abs(r - value2) - np.abs(r - value1), -gap, gap) / scale
    else:
        out = (value1 - value2) * (2 * r - value1 - value2) / (2 * scale**2)
    return out.item() if np.ndim(out) == 0 else out
