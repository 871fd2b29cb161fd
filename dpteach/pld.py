"""The privacy-loss-distribution (PLD) accountant: ε of composed Poisson-subsampled Gaussians
to within a grid step, from the distribution of the privacy loss itself.

For a pair of output distributions P, Q the privacy loss is L = ln P(Y)/Q(Y) with Y ~ P, and
the smallest δ at a given ε is the hockey-stick divergence

    δ(ε) = E_P[(1 - e^(ε - L))₊]   (+ P's mass where Q is 0, a loss of +∞)

(Balle et al. 2018 "Privacy amplification by subsampling", Theorem 1; Sommer, Meiser &
Mohammadi 2019, "Privacy loss classes"). Composing mechanisms on the same pair of datasets
adds their independent losses, so the loss of T steps is the T-fold convolution of one
step's. The accountant rounds every loss *up* to a grid of step ``interval`` (a loss that is
stochastically larger gives a larger δ at every ε, and convolution keeps the order: the
result is an upper bound, "pessimistic" in Meiser & Mohammadi 2018, "Tight on budget?"),
and convolves with the FFT, T steps by repeated squaring (about 2·log₂ T convolutions).

Nothing is allowed to fall through the floor. Three kinds of mass are put on an atom at
L = +∞, which counts in full in every δ(ε):

* each step's P-mass outside the z-range it is discretised on (twelve standard deviations,
  computed from ``log_ndtr``, about 1e-33, not as 1 - sum);
* the ends cut off after each convolution (where the FFT's output is round-off);
* a bound on the FFT's round-off itself, √N · 2u·log₂N · (‖a‖₁‖b‖₂ + ‖a‖₂‖b‖₁) for
  inputs a, b and N outputs (u = 2⁻⁵³): the 1-norm of the error, from the usual 2-norm bound
  of an FFT convolution and Cauchy-Schwarz. It is 15-50 times the error measured against a
  direct convolution (tests), and about 1e-14 per convolution.

Composition combines the atoms as A·S_b + B·S_a + A·B (S the finite masses), a sum of
positive terms, so a small atom is never rounded away (1 - (1 - A)(1 - B) would round any
A below 1e-16 to 0). The atom therefore sets the smallest δ the accountant can certify,
about 1e-13 to 1e-12 after a few dozen convolutions: below it ``epsilon(delta)`` returns
``inf`` (no finite ε is certified; the exact ε is finite but this grid cannot bound it, and
dp-accounting does the same), and ``delta(epsilon)`` never drops below it. So ε is never
below the true ε, and above it by about T·interval at most where finite; RDP
(:class:`dpteach.RDPAccountant`) loses more through its conversion, but stays finite at any δ.

A distribution is kept on at most ``MAX_POINTS`` grid points (3,000,000, 24 MB): a tiny σ
(whose loss spans about 24/σ nats) or a long, wide composition is refused with a
ValueError naming ``sigma``, ``steps`` and ``interval`` instead of asking for gigabytes.

Neighbours are add/remove. With μ₀ = N(0, σ²), μ₁ = N(1, σ²) and μ = (1 - q)μ₀ + qμ₁, a
Poisson-subsampled Gaussian step gives the pair (μ, μ₀) when the record is added and (μ₀, μ)
when it is removed; the accountant composes both directions and reports the larger δ.
Poisson sampling only: a shuffled batch of fixed size is another mechanism. Notebook 16.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ._support.validate import Delta, PositiveInt, Probability, Real, checked, valid_real

__all__ = ["PLDAccountant"]

_FLOOR = 1e-15         # relative size below which the ends of a loss distribution are cut
_Z = 12.0              # standard deviations of z kept per step (the rest goes to +∞)
_U = 2.0 ** -53        # unit round-off of a float64
MAX_POINTS = 3_000_000  # grid points a loss distribution may use (24 MB of float64)
MAX_STEPS = 10 ** 7     # steps per call (the convolutions are O(log steps), the width is not)


class _TooWide(ValueError):
    """A distribution would need more than MAX_POINTS grid points."""

    def __init__(self, points):
        super().__init__(points)
        self.points = points


def _log_ndtr_diff(a, b):
    """ln(Φ(b) - Φ(a)) for a < b, accurate in both tails."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    upper = a > 0        # use survival functions: Φ(-a) - Φ(-b)
    hi = np.where(upper, special.log_ndtr(-a), special.log_ndtr(b))
    lo = np.where(upper, special.log_ndtr(-b), special.log_ndtr(a))
    with np.errstate(divide="ignore", invalid="ignore"):
        return hi + np.log(-np.expm1(np.minimum(lo - hi, 0.0)))


def _one_step(q, sigma, h, direction, z_sd=_Z):
    """(first grid index, probabilities, mass at +∞) of one step's loss on the grid h·k.

    Each bucket (a, b] of the loss carries P-mass p and Q-mass q' (the Q-mass is
    E_P[e^{-L}] over the bucket); it is split between a and b so that both are kept:
    p_a + p_b = p and p_a e^{-a} + p_b e^{-b} = q'. δ(ε) = E_P[(1 - e^{ε}·e^{-L})₊] is convex
    in e^{-L}, so the split can only raise δ at every ε (Doroshenko et al. 2022, "Connect
    the dots"); the result is still a pair of distributions, and it dominates the true one.
    The split is computed as p_a = (q'e^{a} - p e^{-h})/(1 - e^{-h}) from log-masses, so a
    loss of hundreds of nats (a small σ) does not overflow. P's mass outside the buckets
    goes to +∞, computed from the normal tails. Raises _TooWide beyond MAX_POINTS."""
    log_q = math.log(q)
    log1mq = math.log1p(-q) if q < 1 else -np.inf

    def t_of(z):          # (2z - 1)/(2σ²), without forming σ² (no overflow for a huge σ)
        return ((2 * z - 1) / sigma) / (2 * sigma)

    def loss(z):          # ℓ(z) = ln μ(z)/μ₀(z) = ln(1 - q + q e^{(2z - 1)/(2σ²)})
        return np.logaddexp(log1mq, log_q + t_of(z))

    def z_of(l):          # its inverse, for l > ln(1 - q)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            inner = l if q == 1 else np.log(np.expm1(l - log1mq)) + log1mq - log_q
            return sigma * (sigma * inner) + 0.5

    # the z-range where P has its mass: P = μ when added, μ₀ when removed
    if direction == "add":
        z_lo, z_hi = (1.0 if q == 1 else 0.0) - z_sd * sigma, 1.0 + z_sd * sigma
        sign = 1.0
    else:
        z_lo, z_hi = -z_sd * sigma, z_sd * sigma
        sign = -1.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        lo, hi = np.sort(sign * loss(np.array([z_lo, z_hi])))
        points = (hi - lo) / h + 3.0
    if not np.isfinite(points) or points > MAX_POINTS:
        raise _TooWide(points)
    k0, k1 = int(math.floor(lo / h)), int(math.ceil(hi / h))
    edges = h * np.arange(k0, k1 + 1)
    ell = sign * edges                                   # the matching values of ℓ
    inside = ell > log1mq
    z = np.where(inside, z_of(np.where(inside, ell, 1.0)), -np.inf)
    lo_z, hi_z = (z[:-1], z[1:]) if direction == "add" else (z[1:], z[:-1])

    def log_mass(shift):   # ln N(shift, σ²)(lo_z, hi_z]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            m = _log_ndtr_diff((lo_z - shift) / sigma, (hi_z - shift) / sigma)
        return np.where(np.isnan(m), -np.inf, m)

    def log_mix(m0, m1):   # ln of (1 - q)·N(0) + q·N(1)
        return np.logaddexp(log1mq + m0, log_q + m1)

    m0, m1 = log_mass(0.0), log_mass(1.0)
    log_p, log_qq = (log_mix(m0, m1), m0) if direction == "add" else (m0, log_mix(m0, m1))
    p = np.exp(log_p)
    with np.errstate(over="ignore", invalid="ignore"):
        pa = (np.exp(log_qq + edges[:-1]) - p * math.exp(-h)) / -math.expm1(-h)
    pa = np.where(p > 0, np.clip(np.nan_to_num(pa, nan=0.0, posinf=0.0), 0.0, p), 0.0)
    out = np.zeros(edges.size)
    out[:-1] += pa
    out[1:] += p - pa
    # P's mass below and above the buckets' z-range, from the tails (not 1 - sum)
    z_min, z_max = float(np.min(z)), float(np.max(z))

    def tails(shift):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            below = special.ndtr((z_min - shift) / sigma) if np.isfinite(z_min) else 0.0
            above = special.ndtr(-(z_max - shift) / sigma) if np.isfinite(z_max) else 0.0
        return float(np.nan_to_num(below)) + float(np.nan_to_num(above))

    outside = tails(0.0) if direction == "remove" else (1 - q) * tails(0.0) + q * tails(1.0)
    # masses below 1e-308 are subnormal floats, rounded to absolute multiples of 5e-324:
    # 1e-319 a point covers that rounding (an atom of about 1e-314, still below 1e-300)
    return k0, out, outside + 1e-319 * out.size


def _trim(k, p, inf, floor=_FLOOR):
    """Drop the ends where p is below ``floor`` times its top (FFT round-off lives there):
    mass below the kept range moves up to its first point, mass above goes to +∞ (both can
    only raise δ)."""
    p = np.maximum(p, 0.0)
    top = float(p.max()) if p.size else 0.0
    if top <= 0.0:
        return k, np.zeros(1), inf
    keep = np.flatnonzero(p > floor * top)
    lo, hi = int(keep[0]), int(keep[-1])
    out = p[lo:hi + 1].copy()
    out[0] += p[:lo].sum()
    return k + lo, out, inf + float(p[hi + 1:].sum())


def _fft_slack(a, b, n):
    """A bound on the 1-norm of the FFT convolution's round-off (see the module text)."""
    two = np.linalg.norm(a) * b.sum() + np.linalg.norm(b) * a.sum()
    return float(math.sqrt(n) * 2.0 * _U * math.log2(n) * two)


def _compose(a, b):
    """Convolve two (first index, probabilities, mass at +∞) losses, then trim the tails.

    The atoms combine as A·S_b + B·S_a + A·B, plus the FFT's round-off bound."""
    from scipy import signal
    if a is None:
        return b
    n = a[1].size + b[1].size - 1
    if n > MAX_POINTS:
        raise _TooWide(n)
    if min(a[1].size, b[1].size) == 1:      # a scaled copy: no FFT, no round-off to bound
        p, slack = a[1][0] * b[1] if a[1].size == 1 else b[1][0] * a[1], 0.0
    else:
        p, slack = signal.fftconvolve(a[1], b[1]), _fft_slack(a[1], b[1], n)
    inf = a[2] * float(b[1].sum()) + b[2] * float(a[1].sum()) + a[2] * b[2] + slack
    return _trim(a[0] + b[0], p, inf)


def _refuse_too_wide(step, n):
    """Refuse at once a composition that is sure to outgrow MAX_POINTS: the n-fold loss has
    n times one step's variance, and its central part alone (±8.3 standard deviations, where
    a normal density falls to 1e-15 of its peak, the trim floor) spans 16.6·√n·sd grid
    points; twice the limit leaves room for that estimate's error (the convolutions still
    check the true width)."""
    p = step[1]
    x = np.arange(p.size)
    total = float(p.sum())
    if total <= 0.0 or n == 1:
        return
    mean = float(p @ x) / total
    sd = math.sqrt(max(float(p @ (x - mean) ** 2) / total, 0.0))
    points = 16.6 * math.sqrt(n) * sd
    if points > 2 * MAX_POINTS:
        raise _TooWide(points)


def _power(step, n):
    """The n-fold convolution of ``step`` by repeated squaring."""
    result = None
    base = step
    while n:
        if n & 1:
            result = _compose(result, base)
        n >>= 1
        if n:
            base = _compose(base, base)
    return result


class PLDAccountant:
    """Adds up the privacy-loss distributions of Poisson-subsampled Gaussian steps.

    ``interval`` (default 1e-3 nats, in [1e-6, 1]) is the grid step of the loss.
    ``compose_gaussian(sigma, q=1.0, steps=1)`` has the interface of
    :class:`dpteach.RDPAccountant` (noise multiplier σ = σ_noise/Δ, sampling rate q, steps up
    to 10**7, cost O(log steps) convolutions); ``delta(epsilon)`` is the hockey-stick
    divergence of the composed (rounded-up) losses, the larger of the add and remove
    directions, and ``epsilon(delta)`` inverts it. Both are upper bounds: the true ε is below,
    by at most about steps·interval, and the true δ is below. ``epsilon(delta)`` is ``inf``
    where ``delta`` is below the mass the accountant had to put at +∞ (``floor_delta``,
    about 1e-13): this grid cannot certify such a δ. A σ or a composition whose loss needs
    more than 3,000,000 grid points is refused with a ValueError. It follows
    :class:`dpteach.accounting.CompositionAccountant`. Notebook 16.
    """

    def __init__(self, interval=1e-3):
        self.interval = valid_real(interval, "interval", low=1e-6, high=1.0)
        self.history: list[tuple[float, float, int]] = []
        self._dists = {"add": None, "remove": None}      # None: nothing composed yet

    @checked(sigma=Real(low=0.0, low_open=True), q=Probability(),
             steps=PositiveInt(maximum=MAX_STEPS))
    def compose_gaussian(self, sigma, *, q=1.0, steps=1):
        """Add ``steps`` Poisson-subsampled Gaussian steps (noise multiplier ``sigma``,
        sampling rate ``q``) to the loss distributions of both directions; nothing is
        changed if the grid would grow too wide. Returns the accountant itself."""
        if q == 0:
            self.history.append((sigma, q, steps))
            return self
        new = {}
        try:
            for d in ("add", "remove"):
                total = self._steps(q, sigma, d, steps)
                new[d] = _compose(self._dists[d], total)
        except _TooWide as err:
            size = (f"about {err.points:.3g} grid points" if np.isfinite(err.points)
                    else "more grid points than a float can count (the loss overflows)")
            raise ValueError(
                f"the privacy loss distribution would need {size} "
                f"(at most {MAX_POINTS:,}) for sigma={sigma:g}, q={q:g}, steps={steps} with "
                f"interval={self.interval:g}: use a larger sigma, fewer steps or a larger "
                f"interval (or dp.gaussian_epsilon / dp.RDPAccountant)") from None
        self._dists = new                 # only once both directions have succeeded
        self.history.append((sigma, q, steps))
        return self

    def _steps(self, q, sigma, direction, steps):
        """``steps`` composed steps. A single step needs no FFT, so it keeps every positive
        point and 38 standard deviations of z (its atom at +∞ is then below 1e-300 and ε is
        certified down to δ = 1e-300), where that fits the grid; else 12 (atom 1e-33)."""
        if steps == 1:
            try:
                return _trim(*_one_step(q, sigma, self.interval, direction, z_sd=38.0), floor=0.0)
            except _TooWide:
                pass
        step = _trim(*_one_step(q, sigma, self.interval, direction))
        _refuse_too_wide(step, steps)
        return _power(step, steps)

    @property
    def floor_delta(self):
        """The mass at +∞ (the larger direction's): the smallest δ the accountant can
        certify. ``delta(epsilon)`` is never below it, ``epsilon(delta)`` is inf under it."""
        return max(min(d[2], 1.0) if d else 0.0 for d in self._dists.values())

    def _delta(self, epsilon, direction):
        if self._dists[direction] is None:
            return 0.0
        k, p, inf = self._dists[direction]
        start = epsilon / self.interval - k            # grid index of ε (inf for ε = 1e308)
        first = p.size if start >= p.size else max(0, int(math.floor(start)))
        losses = self.interval * (k + np.arange(first, p.size))   # only the tail above ε
        over = losses > epsilon
        tail = p[first:][over]
        return min(1.0, float(np.sum(tail * -np.expm1(epsilon - losses[over])) + inf))

    @checked(epsilon=Real(low=0.0))
    def delta(self, epsilon):
        """δ at ε: the larger of the two directions' hockey-stick divergences (never below
        the true δ, nor below ``floor_delta``)."""
        return max(self._delta(epsilon, "add"), self._delta(epsilon, "remove"))

    @checked(delta=Delta(required=True))
    def epsilon(self, delta):
        """The smallest ε whose δ is at most ``delta`` (0 if δ(0) already is), or ``inf``
        when ``delta`` is below ``floor_delta`` (no finite ε can be certified)."""
        from scipy import optimize
        if self.delta(0.0) <= delta:
            return 0.0
        top = max(self.interval * (d[0] + d[1].size) for d in self._dists.values() if d)
        if self.delta(top) > delta:       # only the atom at +∞ is left above top
            return math.inf
        eps = float(optimize.brentq(lambda e: self.delta(e) - delta, 0.0, top, xtol=1e-10))
        step = 1e-10
        while self.delta(eps) > delta:    # brentq may stop just below the root
            eps = min(top, eps + step)
            step *= 2
        return eps

    def __repr__(self):
        return f"PLDAccountant({len(self.history)} compositions, interval {self.interval:g})"
