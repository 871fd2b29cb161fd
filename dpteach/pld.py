"""The privacy-loss-distribution (PLD) accountant: ε of composed Poisson-subsampled Gaussians
to within a grid step, from the distribution of the privacy loss itself.

For a pair of output distributions P, Q the privacy loss is L = ln P(Y)/Q(Y) with Y ~ P, and
the smallest δ at a given ε is the hockey-stick divergence

    δ(ε) = E_P[(1 - e^(ε - L))₊]   (+ P's mass where Q is 0)

(Balle et al. 2018 "Privacy amplification by subsampling", Theorem 1; Sommer, Meiser &
Mohammadi 2019, "Privacy loss classes"). Composing mechanisms on the same pair of datasets
adds their independent losses, so the loss of T steps is the T-fold convolution of one
step's. The accountant rounds every loss *up* to a grid of step ``interval`` (a loss that is
stochastically larger gives a larger δ at every ε, and convolution keeps the order: the
result is an upper bound, "pessimistic" in Meiser & Mohammadi 2018, "Tight on budget?"),
convolves with the FFT, sends mass above the kept range to +∞ (counted in full) and moves
mass below it up to its lower end. So its ε is never below the true ε and is above it by
about T·interval at most; RDP (:class:`dpteach.RDPAccountant`) loses more, through its
conversion.

Neighbours are add/remove. With μ₀ = N(0, σ²), μ₁ = N(1, σ²) and μ = (1 - q)μ₀ + qμ₁, a
Poisson-subsampled Gaussian step gives the pair (μ, μ₀) when the record is added and (μ₀, μ)
when it is removed; the accountant composes both directions and reports the larger δ.
Poisson sampling only: a shuffled batch of fixed size is another mechanism. Notebook 16.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ._validate import valid_delta, valid_positive_int, valid_real

__all__ = ["PLDAccountant"]

_FLOOR = 1e-15         # relative size below which the ends of a loss distribution are cut


def _log_ndtr_diff(a, b):
    """ln(Φ(b) - Φ(a)) for a < b, accurate in both tails."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    upper = a > 0        # use survival functions: Φ(-a) - Φ(-b)
    hi = np.where(upper, special.log_ndtr(-a), special.log_ndtr(b))
    lo = np.where(upper, special.log_ndtr(-b), special.log_ndtr(a))
    with np.errstate(divide="ignore"):
        return hi + np.log(-np.expm1(np.minimum(lo - hi, 0.0)))


def _one_step(q, sigma, h, direction):
    """(first grid index, probabilities, mass at +∞) of one step's loss on the grid h·k.

    Each bucket (a, b] of the loss carries P-mass p and Q-mass q' (the Q-mass is
    E_P[e^{-L}] over the bucket); it is split between a and b so that both are kept:
    p_a + p_b = p and p_a e^{-a} + p_b e^{-b} = q'. δ(ε) = E_P[(1 - e^{ε}·e^{-L})₊] is convex
    in e^{-L}, so the split can only raise δ at every ε (Doroshenko et al. 2022, "Connect
    the dots"); the result is still a pair of distributions, and it dominates the true one."""
    s2 = sigma * sigma
    log_q = math.log(q)
    log1mq = math.log1p(-q) if q < 1 else -np.inf

    def loss(z):          # ℓ(z) = ln μ(z)/μ₀(z) = ln(1 - q + q e^{(2z - 1)/(2σ²)})
        return np.logaddexp(log1mq, log_q + (2 * z - 1) / (2 * s2))

    def z_of(l):          # its inverse, for l > ln(1 - q)
        with np.errstate(divide="ignore", invalid="ignore"):
            if q == 1:
                return s2 * l + 0.5
            return s2 * (np.log(np.expm1(l - log1mq)) + log1mq - log_q) + 0.5

    sign = 1.0 if direction == "add" else -1.0
    lo, hi = np.sort(sign * loss(np.array([-12 * sigma - 1.0, 12 * sigma + 2.0])))
    k0, k1 = int(math.floor(lo / h)), int(math.ceil(hi / h))
    edges = h * np.arange(k0, k1 + 1)
    ell = sign * edges                                   # the matching values of ℓ
    inside = ell > log1mq
    z = np.where(inside, z_of(np.where(inside, ell, 1.0)), -np.inf)
    lo_z, hi_z = (z[:-1], z[1:]) if direction == "add" else (z[1:], z[:-1])

    def log_mass(shift):   # ln N(shift, σ²)(lo_z, hi_z]
        with np.errstate(divide="ignore", invalid="ignore"):
            m = _log_ndtr_diff((lo_z - shift) / sigma, (hi_z - shift) / sigma)
        return np.where(np.isnan(m), -np.inf, m)

    m0, m1 = log_mass(0.0), log_mass(1.0)
    mix = np.logaddexp(log1mq + m0, log_q + m1)
    p, qq = (np.exp(mix), np.exp(m0)) if direction == "add" else (np.exp(m0), np.exp(mix))
    ea, eb = np.exp(-edges[:-1]), np.exp(-edges[1:])
    with np.errstate(divide="ignore", invalid="ignore"):
        pa = np.clip((qq - p * eb) / (ea - eb), 0.0, p)
    pa = np.where(p > 0, pa, 0.0)
    out = np.zeros(edges.size)
    out[:-1] += pa
    out[1:] += p - pa
    # the P-mass outside twelve standard deviations of z (below 1e-30) goes to +∞
    return k0, out, max(0.0, 1.0 - out.sum())


def _compose(a, b):
    """Convolve two (first index, probabilities, mass at +∞) losses, then trim the tails."""
    from scipy import signal
    k = a[0] + b[0]
    p = np.maximum(signal.fftconvolve(a[1], b[1]), 0.0)
    inf = 1 - (1 - a[2]) * (1 - b[2])
    return _trim(k, p, inf)


def _trim(k, p, inf):
    """Drop the ends where p is below 1e-15 of its top (FFT round-off lives there): mass
    below the kept range moves up to its first point, mass above goes to +∞ (both can only
    raise δ)."""
    keep = np.flatnonzero(p > _FLOOR * p.max())
    lo, hi = int(keep[0]), int(keep[-1])
    out = p[lo:hi + 1].copy()
    out[0] += p[:lo].sum()
    return k + lo, out, inf + float(p[hi + 1:].sum())


def _power(step, n):
    result = None
    base = step
    while n:
        if n & 1:
            result = base if result is None else _compose(result, base)
        n >>= 1
        if n:
            base = _compose(base, base)
    return result


class PLDAccountant:
    """Adds up the privacy-loss distributions of Poisson-subsampled Gaussian steps.

    ``interval`` (default 1e-3 nats) is the grid step of the loss. ``compose_gaussian(sigma,
    q=1.0, steps=1)`` has the interface of :class:`dpteach.RDPAccountant` (noise multiplier
    σ = σ_noise/Δ, sampling rate q); ``delta(epsilon)`` is the hockey-stick divergence of the
    composed (rounded-up) losses, the larger of the add and remove directions, and
    ``epsilon(delta)`` inverts it (brentq, xtol 1e-9). Both are upper bounds: the true ε is
    below, by at most about steps·interval. Notebook 16.
    """

    def __init__(self, interval=1e-3):
        self.interval = valid_real(interval, "interval", low=1e-6, high=1.0)
        self.history: list[tuple[float, float, int]] = []
        self._dists = {"add": (0, np.ones(1), 0.0), "remove": (0, np.ones(1), 0.0)}

    def compose_gaussian(self, sigma, *, q=1.0, steps=1):
        sigma = valid_real(sigma, "sigma", low=0.0, low_open=True)
        q = valid_real(q, "q", low=0.0, high=1.0)
        steps = valid_positive_int(steps, "steps", maximum=10**7)
        self.history.append((sigma, q, steps))
        if q == 0:
            return self
        for d in ("add", "remove"):
            one = _trim(*_one_step(q, sigma, self.interval, d))
            self._dists[d] = _compose(self._dists[d], _power(one, steps))
        return self

    def _delta(self, epsilon, direction):
        k, p, inf = self._dists[direction]
        losses = self.interval * (k + np.arange(p.size))
        over = losses > epsilon
        return float(np.sum(p[over] * -np.expm1(epsilon - losses[over])) + inf)

    def delta(self, epsilon):
        """δ at ε: the larger of the two directions' hockey-stick divergences."""
        epsilon = valid_real(epsilon, "epsilon", low=0.0)
        return max(self._delta(epsilon, "add"), self._delta(epsilon, "remove"))

    def epsilon(self, delta):
        """The smallest ε whose δ is at most ``delta`` (0 if δ(0) already is)."""
        from scipy import optimize
        delta = valid_delta(delta, required=True)
        if self.delta(0.0) <= delta:
            return 0.0
        top = max(self.interval * (d[0] + d[1].size) for d in self._dists.values())
        if self.delta(top) > delta:
            raise ValueError(f"no epsilon reaches delta={delta:g}: the mass sent to +inf "
                             f"is larger; use a larger delta")
        return float(optimize.brentq(lambda e: self.delta(e) - delta, 0.0, top, xtol=1e-9))

    def __repr__(self):
        return f"PLDAccountant({len(self.history)} compositions, interval {self.interval:g})"
