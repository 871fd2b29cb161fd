"""The exact delta of the Gaussian mechanism, computed without cancellation and for
arrays, unchecked: the one numerical home of Balle & Wang's (2018, Theorem 8) formula,
shared by :func:`dpteach.mechanisms.gaussian_delta` and :func:`dpteach.gaussian_sigma`
(:mod:`dpteach.mechanisms`) and the Gaussian trade-off curves (:mod:`dpteach.tradeoff`),
and its two inversions: in sigma for the panels' curves (:func:`analytic_sigma`), and in
epsilon (:func:`epsilon_of_mu`), the one home of the exact Gaussian epsilon of
:func:`dpteach.gaussian_epsilon`, :func:`dpteach.rdp.composition_epsilons` and a Gaussian
privacy loss distribution's ``epsilon``. Callers validate their inputs."""

from __future__ import annotations

import functools

import numpy as np

from .lazy import lazy_module

special = lazy_module("scipy.special")   # imported by the first call


#: Gauss-Legendre nodes and weights on [0, 1] for the cancellation-free branch below
_GL_X, _GL_W = np.polynomial.legendre.leggauss(48)
_GL_X, _GL_W = (_GL_X + 1) / 2, _GL_W / 2


def gaussian_delta_exact(sigma, d, epsilon):
    """Phi(a) - e^eps Phi(b), a = D/(2 sigma) - eps sigma/D, b = a - D/sigma; never negative.

    Where the two terms are far apart, the difference is taken in log space:
    Phi(a) (1 - e^(eps + log Phi(b) - log Phi(a))). Where they nearly cancel (the ratio
    above 1/2, e.g. sigma >> D at a tiny delta), that loses digits; there
    e^eps phi(b) = phi(a) (since b^2 = a^2 + 2 eps) gives the difference without
    cancellation as phi(a) times the integral over t in [-a, -b] of 1 - t M(t), with
    M(t) = Phi(-t)/phi(t) = sqrt(pi/2) erfcx(t/sqrt(2)) the Mills ratio (M' = t M - 1),
    a smooth positive integrand, by 48-point Gauss-Legendre quadrature.
    """
    sigma, d, epsilon = np.broadcast_arrays(*(np.asarray(v, dtype=float)
                                              for v in (sigma, d, epsilon)))
    shape = sigma.shape
    sigma, d, epsilon = (np.ravel(v) for v in (sigma, d, epsilon))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        a = d / (2 * sigma) - epsilon * sigma / d
        b = -d / (2 * sigma) - epsilon * sigma / d
        log_a = special.log_ndtr(a)
        log_ratio = epsilon + special.log_ndtr(b) - log_a
        direct = np.exp(log_a) * -np.expm1(np.minimum(log_ratio, 0.0))
        direct = np.where(np.isneginf(log_a), 0.0, direct)      # Phi(a) itself underflows
        near = log_ratio > -np.log(2.0)
        out = direct
        if np.any(near):
            lo, width = -a[near], (d / sigma)[near]
            t = lo[..., None] + width[..., None] * _GL_X
            integrand = 1.0 - t * np.sqrt(np.pi / 2) * special.erfcx(t / np.sqrt(2))
            integral = width * (integrand @ _GL_W)
            out = direct.copy()
            out[near] = np.exp(-a[near] ** 2 / 2) / np.sqrt(2 * np.pi) * integral
    # A true delta below the float range rounds to 0, which would read as pure DP: where
    # the delta is positive (D > 0, eps finite) report the smallest positive float, an
    # upper bound of it, instead.
    positive = (d > 0) & np.isfinite(epsilon)
    out = np.where(positive, np.maximum(out, _SMALLEST), np.maximum(out, 0.0)).reshape(shape)
    return out.item() if out.ndim == 0 else out


_SMALLEST = np.nextafter(0.0, 1.0)      # 5e-324, the smallest positive (subnormal) float


def analytic_sigma(epsilon, delta, *, iterations=64):
    """The analytic Gaussian sigma for L2 sensitivity 1, elementwise over arrays: the
    smallest sigma whose exact delta at ``epsilon`` is at most ``delta`` (what
    ``dpteach.gaussian_sigma(1, epsilon, delta, analytic=True)`` finds one at a time with
    scipy's brentq). Bisection on ln sigma in numpy, every point at once and without
    importing scipy.optimize (a panel's first drawing); the bracket grows tenfold until
    it holds the root, then 64 halvings leave it far below a float's spacing, and the
    upper end (whose delta meets the target) is returned. Agrees with brentq to 1e-12
    (tests). Taught with notebook 08's panel."""
    eps, target = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(delta, float))
    step = np.log(10.0)
    lo = np.full(eps.shape, np.log(1e-3))
    hi = np.zeros(eps.shape)
    for _ in range(400):
        short = gaussian_delta_exact(np.exp(lo), 1.0, eps) <= target
        if not short.any():
            break
        lo = np.where(short, lo - step, lo)
    for _ in range(400):
        long = gaussian_delta_exact(np.exp(hi), 1.0, eps) > target
        if not long.any():
            break
        hi = np.where(long, hi + step, hi)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        above = gaussian_delta_exact(np.exp(mid), 1.0, eps) > target
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    out = np.exp(hi)
    return out.item() if out.ndim == 0 else out


@functools.lru_cache(maxsize=4096)
def unit_sigma(epsilon: float, delta: float) -> float:
    """:func:`analytic_sigma` of one checked (epsilon, delta), remembered: a panel asks
    for the same pairs whenever a slider comes back (notebooks 10 and 12)."""
    return float(analytic_sigma(epsilon, delta))


def epsilon_of_mu(mu, delta):
    """The exact epsilon of the Gaussian mechanism with mu = sensitivity / sigma at
    ``delta``, elementwise over arrays: the smallest eps >= 0 with
    ``gaussian_delta_exact(1, mu, eps) <= delta`` (0 where delta(0) = 2 Phi(mu/2) - 1 is
    already small enough). delta(eps) falls as eps grows, so the root is bracketed in
    numpy (every point at once, no root finder to import) between 0 and
    mu^2/2 + mu z with Pr[N(0, 1) > z] = delta: the privacy loss is N(mu^2/2, mu^2), so
    there delta(eps) <= Pr[L > eps] = delta. The bracket shrinks by Newton steps on
    ln delta(eps), whose slope is -e^eps Phi(-mu/2 - eps/mu) / delta(eps) (the mu-terms of
    the derivative cancel, as e^eps phi(b) = phi(a)), kept inside the bracket and replaced
    by the midpoint where they stall; once a step is below a few float spacings, the point
    a few spacings to the other side closes the bracket, and halvings end with neighbouring
    floats (about ten evaluations in all, against some sixty for bisection alone; at most
    200). The upper end, whose delta meets ``delta``, is returned. Callers validate:
    mu > 0 with mu^2 finite, 0 < delta < 1."""
    mu, target = np.broadcast_arrays(np.asarray(mu, float), np.asarray(delta, float))
    done = gaussian_delta_exact(1.0, mu, np.zeros(mu.shape)) <= target
    with np.errstate(over="ignore"):
        hi = mu * mu / 2 + mu * np.maximum(-special.ndtri(target), 0.0)
    hi = np.where(done, 0.0, np.maximum(hi, np.finfo(float).tiny))
    for _ in range(64):                          # guard against rounding at the upper end
        short = ~done & (gaussian_delta_exact(1.0, mu, hi) > target)
        if not short.any():
            break
        hi = np.where(short, 2.0 * hi, hi)
    lo = np.zeros(mu.shape)
    log_target = np.log(target)
    x, step = hi, _newton_step(mu, hi, log_target)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        open_ = ~done & (lo < mid) & (mid < hi)  # not yet neighbouring floats
        if not open_.any():
            break
        guess = x + step
        small = np.abs(step) <= 4 * np.spacing(np.maximum(x, np.finfo(float).tiny))
        nudge = 8 * np.spacing(np.maximum(x, np.finfo(float).tiny))
        guess = np.where(small, np.where(x == hi, x - nudge, x + nudge), guess)
        inside = np.isfinite(guess) & (lo < guess) & (guess < hi) & (hi - lo > 0)
        x = np.where(inside, guess, mid)
        above = gaussian_delta_exact(1.0, mu, x) > target
        lo = np.where(open_ & above, x, lo)
        hi = np.where(open_ & ~above, x, hi)
        step = _newton_step(mu, x, log_target)
    out = np.where(done, 0.0, hi)
    return out.item() if out.ndim == 0 else out


def _newton_step(mu, eps, log_target):
    """The Newton step on ln delta(eps) - ln target at eps: (ln delta - ln target) / rate
    with rate = e^eps Phi(b) / delta, b = -mu/2 - eps/mu (NaN where it cannot be had)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        log_delta = np.log(gaussian_delta_exact(1.0, mu, eps))
        rate = np.exp(eps + special.log_ndtr(-mu / 2 - eps / mu) - log_delta)
        step = (log_delta - log_target) / rate
    return np.where(np.isfinite(step) & (rate > 0), step, np.nan)
