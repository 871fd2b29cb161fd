"""Modern accounting: Rényi DP, zero-concentrated DP, the exact Gaussian, subsampling.

A mechanism M is (α, r)-RDP (Mironov 2017, Definition 4) when the Rényi divergence of
order α > 1 between M(x) and M(x') is at most r for all neighbours x, x':

    D_α(P || Q) = 1/(α - 1) · ln E_Q[(P/Q)^α].

It is ρ-zCDP (Bun & Steinke 2016, Definition 1.1) when it is (α, αρ)-RDP for every α > 1.
RDP composes by adding: k releases cost the sum of their RDP curves, order by order. The
curve is then turned into (ε, δ)-DP by a conversion (:func:`rdp_to_dp`).

The Gaussian mechanism N(0, σ²) on a query of L2 sensitivity Δ has

    RDP curve α Δ² / (2σ²)  (Mironov 2017, Proposition 7),  ρ = Δ² / (2σ²)  (Bun & Steinke
    2016, Proposition 1.6),

and its exact (ε, δ) curve is known in closed form (Balle & Wang 2018, Theorem 8,
:func:`dpteach.mechanisms.gaussian_delta`). k Gaussians of σ on the same data are one Gaussian with
Δ√k, i.e. σ/√k (the sum of their log-likelihood ratios is again Gaussian), so their exact ε
is known too (:func:`gaussian_epsilon`). Taught in notebook 16.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from ._support.validate import (Delta, OrNone, PositiveInt, Probability, Real, Sensitivity, Using,
                        checked, valid_delta, valid_sensitivity, valid_values)
from .accounting import advanced_composition
from ._support import gaussian as _gaussian

__all__ = ["gaussian_rdp", "gaussian_zcdp", "rdp_to_dp", "rdp_to_dp_order", "zcdp_to_dp",
           "gaussian_epsilon", "subsampled_gaussian_rdp", "RDPAccountant", "DEFAULT_ORDERS",
           "composition_epsilons"]

#: The orders the accountant tracks by default: 1.1, 1.2, ..., 10.9, then 11, ..., 63 and
#: 128, 256, 512, 1024 (the grid Google's dp-accounting uses for the Gaussian).
DEFAULT_ORDERS = np.array([1 + x / 10 for x in range(1, 100)] + list(range(11, 64))
                          + [128, 256, 512, 1024], dtype=float)


# -- checks ------------------------------------------------------------------------------
# sigma > 0 is Real(low=0.0, low_open=True); a usable sigma, Real(low=1e-150, high=1e300), is
# one whose RDP curve stays finite (below 1e-150, 1/sigma^2 overflows)
def _l2(l2_sensitivity, *, positive=False):
    """An L2 sensitivity of at most 1e150 (its square must stay finite)."""
    d = valid_sensitivity(l2_sensitivity, "l2_sensitivity", positive=positive)
    if d > 1e150:
        raise ValueError(f"l2_sensitivity must be <= 1e150 (its square enters every RDP), got {d!r}")
    return d


_MAX_INTEGER_ORDER = 10_000     # the binomial sum has alpha + 1 terms per order


def _orders(orders, *, integer=False, name="orders"):
    arr = valid_values(orders, name)
    if np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    if (arr <= 1).any():
        raise ValueError(f"{name} must all be > 1, got {arr[arr <= 1][0]:g}")
    if integer and (arr != np.round(arr)).any():
        bad = arr[arr != np.round(arr)][0]
        raise ValueError(f"{name} must be whole numbers (2, 3, ...) for the exact binomial "
                         f"formula, got {bad:g}")
    if integer and arr.max() > _MAX_INTEGER_ORDER:
        raise ValueError(f"{name} must be <= {_MAX_INTEGER_ORDER} for the exact binomial "
                         f"formula, got {arr.max():g}")
    return arr


def _valid_orders(orders, name):
    """RDP orders: finite numbers > 1 (:func:`_orders`)."""
    return _orders(orders, name=name)


def _valid_l2(l2_sensitivity, name):
    """An L2 sensitivity >= 0 of at most 1e150 (:func:`_l2`)."""
    return _l2(l2_sensitivity)


def _valid_positive_l2(l2_sensitivity, name):
    """An L2 sensitivity > 0 of at most 1e150 (:func:`_l2`)."""
    return _l2(l2_sensitivity, positive=True)


def _valid_method(method, name):
    """'improved' or 'classic' (:func:`_method`)."""
    return _method(method)


# -- the Gaussian's curves -----------------------------------------------------------------
@checked(order=Using(_valid_orders), sigma=Real(low=1e-150, high=1e300),
         l2_sensitivity=Using(_valid_l2))
def gaussian_rdp(order, sigma, l2_sensitivity=1.0):
    """RDP of the Gaussian mechanism at order α: α Δ² / (2σ²) (nats).

    Mironov 2017, "Rényi differential privacy", Proposition 7 (Table II). Vectorised over
    ``order`` (every order > 1). Notebook 16.
    """
    d = l2_sensitivity
    out = order * d * d / (2 * sigma * sigma)
    return float(out) if out.ndim == 0 else out


@checked(sigma=Real(low=0.0, low_open=True), l2_sensitivity=Sensitivity())
def gaussian_zcdp(sigma, l2_sensitivity=1.0):
    """ρ of the Gaussian mechanism: ρ = Δ² / (2σ²) (Bun & Steinke 2016, Proposition 1.6).
    ρ adds up under composition (their Lemma 1.7). A σ so small (or Δ so large) that Δ²/(2σ²)
    overflows gives ρ = inf (no privacy). Notebook 16."""
    with np.errstate(over="ignore"):   # a sigma near 5e-324: ρ = inf (no privacy)
        return float(0.5 * (np.float64(l2_sensitivity) / sigma) ** 2)


# -- conversions ---------------------------------------------------------------------------
def _conversion(orders, rdp, delta, method):
    """ε at each order; orders and rdp broadcast (any shape)."""
    a = np.asarray(orders, float)
    r = np.asarray(rdp, float)
    log_delta = np.log(delta)
    if method == "classic":
        return r - log_delta / (a - 1)
    # improved: r + ln(1 - 1/α) - (ln δ + ln α)/(α - 1)
    eps = r + np.log1p(-1 / a) - (log_delta + np.log(a)) / (a - 1)
    # an RDP value bounds the KL divergence, and δ(0) = TV <= sqrt(1 - e^{-KL}) (the
    # Bretagnolle-Huber inequality): when δ already covers it, ε = 0 (dp-accounting does
    # the same)
    return np.where(delta * delta + np.expm1(-r) > 0, 0.0, eps)


def _delta_of_curve(orders, rdp, epsilon, method):
    """The δ at ε of each order's conversion (the formulas of :func:`rdp_to_dp` solved
    for δ), the smallest over the orders, at most 1: improved ln δ = (α - 1)(r - ε) +
    (α - 1) ln(1 - 1/α) - ln α (Canonne, Kamath & Steinke 2020, Proposition 12), and
    δ <= sqrt(1 - e^(-r)) at every ε (the Bretagnolle-Huber bound on δ(0) = TV);
    classic ln δ = (α - 1)(r - ε) (Mironov 2017, Proposition 3). A positive bound below
    the float range reads as the smallest positive float, never as 0."""
    a, r = np.asarray(orders, float), np.asarray(rdp, float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        log_d = (a - 1) * (r - epsilon)
        if method == "improved":
            log_d = log_d + (a - 1) * np.log1p(-1 / a) - np.log(a)
            log_d = np.minimum(log_d, 0.5 * np.log(-np.expm1(-r)))
        log_d = np.where(np.isnan(log_d) | np.isinf(r), np.inf, log_d)   # inf: no bound
    best = float(np.min(log_d))
    if best >= 0.0:
        return 1.0
    return max(math.exp(best), 5e-324) if best > -np.inf else 0.0


def _method(method):
    if method not in ("improved", "classic"):
        raise ValueError(f"method must be 'improved' or 'classic', got {method!r}")
    return method


def _valid_rdp(rdp, name):
    """RDP values (nats): >= 0 at every order, inf allowed."""
    r = valid_values(rdp, name, allow_inf=True)
    if (r < 0).any():
        raise ValueError(f"{name} must be >= 0 at every order")
    return r


@checked(orders=Using(_valid_orders), rdp=Using(_valid_rdp), delta=Delta(required=True),
         method=Using(_valid_method))
def rdp_to_dp_order(orders, rdp, delta, *, method="improved"):
    """(ε, best order) of :func:`rdp_to_dp`."""
    if orders.shape != rdp.shape:
        raise ValueError(f"orders and rdp must have the same shape, got {orders.shape} and "
                         f"{rdp.shape}")
    eps = np.maximum(_conversion(orders, rdp, delta, method), 0.0).ravel()
    i = int(np.argmin(eps))
    return float(eps[i]), float(orders.ravel()[i])


def rdp_to_dp(orders, rdp, delta, *, method="improved"):
    """The ε of (ε, δ)-DP implied by an RDP curve: the smallest over the orders given.

    method="improved" (default): ε = r(α) + ln(1 - 1/α) - (ln δ + ln α)/(α - 1)
    (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
    Proposition 12; the same bound is Balle et al. 2020, "Hypothesis testing
    interpretations and Rényi DP", Theorem 21), and ε = 0 when δ² ≥ 1 - e^(-r(α)).
    method="classic": ε = r(α) + ln(1/δ)/(α - 1) (Mironov 2017, Proposition 3).
    The improved ε is never larger: ln(1 - 1/α) - ln α/(α - 1) < 0 for every α > 1.
    ``orders`` and ``rdp`` are arrays of one shape (rdp in nats, may be inf); 0 < δ < 1.
    Notebook 16.
    """
    return rdp_to_dp_order(orders, rdp, delta, method=method)[0]


@checked(rho=Real(low=0.0, high=1e300), delta=Delta(required=True), method=Using(_valid_method))
def zcdp_to_dp(rho, delta, *, method="improved"):
    """The ε of (ε, δ)-DP implied by ρ-zCDP.

    ρ-zCDP is (α, αρ)-RDP for every α > 1, so the improved conversion of :func:`rdp_to_dp`
    is minimised over all real α > 1 (bounded scalar search, xatol 1e-12; Canonne, Kamath &
    Steinke 2020, Corollary 13 states the same δ(ε)). method="classic":
    ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Proposition 1.3), the exact minimum of
    the classic conversion. The improved ε is never above the classic one. ρ >= 0;
    ρ = 0 gives ε = 0. Notebook 16.
    """
    from scipy import optimize
    if rho == 0:
        return 0.0
    log_inv = -np.log(delta)                         # ln(1/delta), finite for a subnormal delta
    classic = rho + 2 * np.sqrt(rho) * np.sqrt(log_inv)
    if method == "classic":
        return float(classic)
    best = 1 + np.sqrt(log_inv) / np.sqrt(rho)       # the classic optimum: a good bracket
    if not np.isfinite(2 * best + 10.0):
        raise ValueError(f"rho must be >= 1e-300 for the improved conversion (its best order "
                         f"1 + sqrt(ln(1/delta)/rho) overflows), got {rho!r}; use method='classic'")
    hi = max(2 * best, best + 10.0)

    def f(a):
        return float(_conversion(a, a * rho, delta, "improved"))

    res = optimize.minimize_scalar(f, bounds=(1 + 1e-12, hi), method="bounded",
                                   options={"xatol": 1e-12 * max(1.0, hi)})
    return float(max(0.0, min(res.fun, f(best), classic)))


# -- the exact answer for k Gaussians --------------------------------------------------------
@checked(sigma=Real(low=0.0, low_open=True), delta=Delta(required=True), k=PositiveInt(),
         l2_sensitivity=Sensitivity(positive=True))
def gaussian_epsilon(sigma, delta, *, k=1, l2_sensitivity=1.0):
    """The exact ε of k composed Gaussian releases N(0, σ²) of L2 sensitivity Δ at δ.

    k Gaussians with σ are one Gaussian with σ/√k, whose exact privacy curve is
    δ(ε) = Φ(μ/2 - ε/μ) - e^ε Φ(-μ/2 - ε/μ) with μ = Δ√k/σ (Balle & Wang 2018,
    Theorem 8, :func:`dpteach.mechanisms.gaussian_delta`). δ(ε) falls from 2Φ(μ/2) - 1 at ε = 0 to
    0; it is inverted by bisection to neighbouring floats
    (:func:`dpteach._support.gaussian.epsilon_of_mu`). Returns 0 when δ ≥ δ(0). No accountant can
    give a smaller ε for this δ: this is the privacy curve itself. Notebook 16.
    """
    d = l2_sensitivity
    try:
        mu = d * np.sqrt(float(k)) / sigma
    except OverflowError:   # k beyond the float range (10**400): μ from logarithms
        log_mu = np.log(d) + 0.5 * math.log(k) - np.log(sigma)
        mu = np.exp(log_mu) if log_mu < 709 else np.inf
    if not np.isfinite(mu):
        raise ValueError("l2_sensitivity * sqrt(k) / sigma overflows; use a larger sigma "
                         "(or a smaller l2_sensitivity or k)")
    return _epsilon_of_mu(mu, delta)


def _epsilon_of_mu(mu, delta):
    """One exact epsilon (:func:`dpteach._support.gaussian.epsilon_of_mu`), refused by name where
    it leaves the float range."""
    with np.errstate(over="ignore"):
        if not np.isfinite(mu * mu):   # mu > 1e154: epsilon is about mu^2/2, beyond floats
            raise ValueError("the exact epsilon is beyond the float range; use a larger sigma "
                             "(or a smaller l2_sensitivity or k)")
    return float(_gaussian.epsilon_of_mu(mu, delta))


def _epsilon_of_mu_array(mu, delta):
    """:func:`dpteach._support.gaussian.epsilon_of_mu` over arrays, remembered: a panel's slider
    comes back to the same sigma (notebook 16)."""
    mu, delta = np.broadcast_arrays(np.asarray(mu, float), np.asarray(delta, float))
    return _epsilon_of_mu_bytes(mu.tobytes(), delta.tobytes(), mu.shape).copy()


@functools.lru_cache(maxsize=64)
def _epsilon_of_mu_bytes(mu_bytes, delta_bytes, shape):
    mu = np.frombuffer(mu_bytes, float).reshape(shape)
    delta = np.frombuffer(delta_bytes, float).reshape(shape)
    return np.asarray(_gaussian.epsilon_of_mu(mu, delta), dtype=float)


# -- subsampling ---------------------------------------------------------------------------
def _valid_binomial_orders(orders, name):
    """RDP orders (:func:`_orders`) of at most _MAX_INTEGER_ORDER (the binomial sum has
    α + 1 terms)."""
    a = _orders(orders, name=name)
    if a.max() > _MAX_INTEGER_ORDER:
        raise ValueError(f"{name} must be <= {_MAX_INTEGER_ORDER} (the binomial sum has "
                         f"α + 1 terms), got {a.max():g}")
    return a


@checked(q=Probability(), sigma=Real(low=1e-150, high=1e300),
         orders=Using(_valid_binomial_orders))
def subsampled_gaussian_rdp(q, sigma, orders):
    """RDP of the Poisson-subsampled Gaussian (sensitivity 1) at every order α > 1.

    Each record is in the sample independently with probability q; the Gaussian's σ is the
    noise multiplier (σ / Δ). The neighbours are add/remove: one dataset holds one record
    more. With μ₀ = N(0, σ²), μ₁ = N(1, σ²), the curve is r(α) = ln A_α / (α - 1) with
    A_α = E_{z~μ₀}[((1 - q) + q μ₁(z)/μ₀(z))^α] (Mironov, Talwar & Zhang 2019, "Rényi
    differential privacy of the sampled Gaussian mechanism", Section 3). For integer α the
    binomial expansion is exact:

        A_α = Σ_{i=0}^{α} C(α, i) (1 - q)^(α - i) q^i exp((i² - i)/(2σ²)).

    The binomial weights C(α, i)(1 - q)^(α - i) q^i add up to 1 and the exponent is 0 for
    i = 0, 1, so A_α - 1 = Σ_{i=2}^{α} C(α, i)(1 - q)^(α - i) q^i (exp((i² - i)/(2σ²)) - 1):
    the kit sums these non-negative terms in log space, so r(α) = log1p(A_α - 1)/(α - 1) is
    never negative and keeps its relative accuracy for tiny q. For a fractional α the same
    A_α - 1 = E_{μ₀}[(1 + x)^α - 1 - αx] with x = q(μ₁/μ₀ - 1) (E_{μ₀}[x] = 0, and the
    integrand is ≥ 0 by Bernoulli's inequality) is integrated numerically (trapezoidal
    rule on a fine grid; agrees with 40-digit quadrature to 1e-9 relative).
    q = 1 gives α/(2σ²) back; q = 0 gives 0. For small q, r(α) ≈ q² α (e^(1/σ²) - 1)/2: the
    cost shrinks like q², not like q (privacy amplification by subsampling). Notebook 16.
    """
    a = orders
    is_int = a == np.round(a)
    shape = a.shape
    flat, is_int = a.ravel(), is_int.ravel()
    if q == 0:
        out = np.zeros(flat.shape)
    elif q == 1:
        out = flat / (2 * sigma * sigma)
    else:
        log_am1 = np.empty(flat.shape)              # ln(A_α - 1)
        if is_int.any():
            log_am1[is_int] = _log_a_minus_1_int(q, sigma, flat[is_int].astype(np.int64))
        if (~is_int).any():
            log_am1[~is_int] = _log_a_minus_1_frac(q, sigma, flat[~is_int])
        out = np.logaddexp(0.0, log_am1) / (flat - 1)
        out = np.maximum(out, 0.0)
    out = out.reshape(shape)
    return float(out) if out.ndim == 0 else out


@functools.lru_cache(maxsize=256)
def _subsampled_curve(q, sigma, orders):
    """:func:`subsampled_gaussian_rdp` on a tuple of orders, remembered (an accountant
    composes the same (q, σ) many times; A9's grader asks for it again and again)."""
    out = np.asarray(subsampled_gaussian_rdp(q, sigma, np.array(orders, float)), float)
    out.flags.writeable = False
    return out


def _log_a_minus_1_int(q, sigma, a):
    """ln(A_α - 1) for integer orders a (1-d int array), 0 < q < 1: the binomial terms
    i = 2..α with exp((i² - i)/(2σ²)) - 1 in place of exp(...), in log space."""
    valid, ii, alpha, log_comb = _binomial_table(a.tobytes())
    c = (ii * ii - ii) / (2 * sigma * sigma)
    with np.errstate(over="ignore"):
        log_em1 = np.where(c > 30, c, np.log(np.expm1(np.minimum(c, 30))))   # ln(e^c - 1)
    terms = log_comb + ii * np.log(q) + (alpha - ii) * np.log1p(-q) + log_em1
    return special.logsumexp(np.where(valid, terms, -np.inf), axis=0)


@functools.lru_cache(maxsize=16)
def _binomial_table(orders_bytes):
    """For integer orders (an int64 array's bytes): which (i, α) terms exist (2 <= i <= α),
    i and α as floats, and ln C(α, i); the same for every q and σ, so remembered (a
    panel's slider moves q and σ over the same orders)."""
    a = np.frombuffer(orders_bytes, np.int64)
    i = np.arange(int(a.max()) + 1)[:, None]             # (i, 1)
    alpha = a[None, :].astype(float)                     # (1, orders)
    valid = (i <= alpha) & (i >= 2)
    ii = np.where(valid, i, 2).astype(float)
    log_comb = (special.gammaln(alpha + 1) - special.gammaln(ii + 1)
                - special.gammaln(np.where(valid, alpha - ii, 0) + 1))
    for table in (valid, ii, alpha, log_comb):
        table.flags.writeable = False
    return valid, ii, alpha, log_comb


def _log_f(alpha, q, L):
    """ln((1 + x)^α - 1 - αx) with x = q(e^L - 1), elementwise over L (x > -q > -1)."""
    L = np.asarray(L, float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        x = q * np.expm1(np.minimum(L, 700.0))
        # series C(α,2)x² + C(α,3)x³ + ... + C(α,5)x⁵ while α|x| is small (the terms
        # shrink by about α|x| each; |x| alone small is not enough for large α)
        small = np.abs(x) * np.maximum(alpha, 1.0) < 1e-3
        c2 = alpha * (alpha - 1) / 2
        c3 = c2 * (alpha - 2) / 3
        c4 = c3 * (alpha - 3) / 4
        c5 = c4 * (alpha - 4) / 5
        series = x * x * (c2 + x * (c3 + x * (c4 + x * c5)))
        # moderate x: direct
        direct = np.expm1(alpha * np.log1p(x)) - alpha * x
        # large x (L > 0): (1 + x)^α dominates; ln(1 + x) = ln(1 - q + q e^L)
        log1px = np.logaddexp(np.log1p(-q), np.log(q) + L)
        log_x = np.log(q) + L + np.log(-np.expm1(-np.maximum(L, 1e-300)))
        log_rest = np.logaddexp(0.0, np.log(alpha) + log_x)       # ln(1 + αx)
        large = alpha * log1px + np.log1p(-np.exp(np.minimum(log_rest - alpha * log1px, 0.0)))
        out = np.where(small, np.log(np.maximum(series, 0.0)),
                       np.where(x < 1.0, np.log(np.maximum(direct, 0.0)), large))
    return out


def _log_a_minus_1_frac(q, sigma, alphas):
    """ln(A_α - 1) for fractional orders (1-d array): ∫ N(z; 0, σ²) f(x(z)) dz, with
    x(z) = q(e^{L(z)} - 1) and L(z) = (2z - 1)/(2σ²) the privacy loss of μ₁ against μ₀.

    The integrand is smooth and ≥ 0; a scan of 201 points finds, for each order, where its
    logarithm is within 60 of the top, and the trapezoidal rule on that window integrates
    it, every order at once, with a step of at most min(σ, σ²)/4. The trapezoidal rule
    converges geometrically here: the Gaussian factor's error is about exp(-2π²σ²/h²) and
    the integrand is analytic in a strip |Im z| < πσ² (the branch points of (1 + x)^α),
    which bounds the rest by about exp(-2π²σ²/h); both are below 1e-30 at this step
    (agrees with 40-digit mpmath quadrature to 1e-9, see the tests)."""
    s2 = sigma * sigma
    a = np.asarray(alphas, float)[:, None]

    def log_integrand(z):
        return (-z * z / (2 * s2) - 0.5 * math.log(2 * math.pi * s2)
                + _log_f(a, q, (2 * z - 1) / (2 * s2)))

    # the mass lies around z = 0 ... max(α, 2) (tilted Gaussians N(i, σ²)), width σ
    lo, hi = -1.0 - 40 * sigma, max(float(a.max()), 2.0) + 1.0 + 40 * sigma
    scan = np.linspace(lo, hi, 201)
    step = scan[1] - scan[0]
    g = log_integrand(scan[None, :])
    m = np.max(g, axis=1)
    keep = g > (m[:, None] - 60)
    first = np.argmax(keep, axis=1)
    last = scan.size - 1 - np.argmax(keep[:, ::-1], axis=1)
    z_lo, z_hi = scan[first] - 2 * step, scan[last] + 2 * step
    h = min(sigma, s2) / 4
    n = int(min(max(np.ceil(np.max(z_hi - z_lo) / h), 100), 20_000)) + 1
    t = np.linspace(0.0, 1.0, n)[None, :]
    z = z_lo[:, None] + (z_hi - z_lo)[:, None] * t
    g = log_integrand(z)
    m = np.max(g, axis=1)                  # the scan can step over a narrow top
    w = np.exp(g - m[:, None])
    val = (np.sum(w, axis=1) - 0.5 * (w[:, 0] + w[:, -1])) * (z[:, 1] - z[:, 0])
    with np.errstate(divide="ignore"):
        out = m + np.log(val)
    return np.where(np.isfinite(m) & (val > 0), out, -np.inf)


# -- the accountant -------------------------------------------------------------------------
class RDPAccountant:
    """Adds up the RDP curves of a sequence of Gaussian releases, then converts to (ε, δ).

    ``orders`` (default :data:`DEFAULT_ORDERS`) is the grid the curve is kept on.
    ``compose_gaussian(sigma, q=1.0, steps=1)`` adds ``steps`` releases of a Gaussian with
    noise multiplier σ (σ / Δ), each on a Poisson subsample with rate q; the curve is
    :func:`subsampled_gaussian_rdp` at every order, fractional ones included. Neighbours
    are add/remove (one dataset holds one record more): the ε it reports is for that
    relation, and for Poisson sampling only (a shuffled fixed-size batch is another
    mechanism). ``epsilon(delta)`` converts with :func:`rdp_to_dp` and ``delta(epsilon)``
    with the same conversion solved for δ; it follows
    :class:`dpteach.accounting.CompositionAccountant`. Notebook 16.
    """

    def __init__(self, orders=None):
        self.orders = DEFAULT_ORDERS.copy() if orders is None else _orders(orders).ravel().copy()
        self.rdp = np.zeros_like(self.orders)
        self.history: list[tuple[float, float, int]] = []

    @checked(sigma=Real(low=1e-150, high=1e300), q=Probability(),
             steps=PositiveInt(maximum=10 ** 15))
    def compose_gaussian(self, sigma, *, q=1.0, steps=1):
        """Add ``steps`` releases of a Gaussian of noise multiplier ``sigma``, each on a
        Poisson subsample of rate ``q``: the curve grows by ``steps`` times
        :func:`subsampled_gaussian_rdp`. Returns the accountant itself."""
        curve = _subsampled_curve(q, sigma, tuple(self.orders.tolist()))
        self.rdp = self.rdp + steps * curve
        self.history.append((sigma, q, steps))
        return self

    def epsilon(self, delta, *, method="improved"):
        """ε at δ: the best order of the composed curve (:func:`rdp_to_dp`)."""
        return rdp_to_dp(self.orders, self.rdp, delta, method=method)

    @checked(epsilon=Real(low=0.0, allow_inf=True), method=Using(_valid_method))
    def delta(self, epsilon, *, method="improved"):
        """δ at ε (>= 0, inf allowed): the best order of the composed curve, each order's
        conversion of :func:`rdp_to_dp` solved for δ; an upper bound, at most 1."""
        return _delta_of_curve(self.orders, self.rdp, epsilon, method)

    def epsilon_and_order(self, delta, *, method="improved"):
        return rdp_to_dp_order(self.orders, self.rdp, delta, method=method)

    def __repr__(self):
        return f"RDPAccountant({len(self.history)} compositions, {self.orders.size} orders)"


# -- five accountants side by side (for the panel) ------------------------------------------
def _valid_share_delta(delta, name):
    """delta in (0, 1) and >= 1e-300: each release's share delta/(2k) must stay a normal
    float."""
    delta = valid_delta(delta, name, required=True)
    if delta < 1e-300:
        raise ValueError(f"{name} must be >= 1e-300 here (each release gets {name}/(2k)), got "
                         f"{delta!r}")
    return delta


def _valid_ks(ks, name):
    """Numbers of releases: whole numbers in [1, 1e15], as a flat float array."""
    k = np.atleast_1d(valid_values(ks, name).astype(float)).ravel()
    if (k < 1).any() or (k != np.round(k)).any() or (k > 1e15).any():
        raise ValueError(f"{name} must be whole numbers in [1, 1e15]")
    return k


@checked(sigma=Real(low=1e-150, high=1e300), delta=Using(_valid_share_delta),
         l2_sensitivity=Using(_valid_positive_l2), ks=Using(_valid_ks),
         orders=OrNone(Using(_valid_orders)))
def composition_epsilons(sigma, delta, ks, *, l2_sensitivity=1.0, orders=None):
    """ε after k Gaussian releases (σ, Δ) at total δ, for each k in ``ks``, by five accountants.

    Returns a dict of arrays:
    - "basic": each release gets δ/k and its exact ε₀ (Balle & Wang); total k ε₀
      (DR14 Theorem 3.16);
    - "advanced": δ' = δ/2, each release δ/(2k), ε₀ exact; ε₀√(2k ln(1/δ')) +
      k ε₀(e^ε₀ - 1) (DR14 Theorem 3.20);
    - "zcdp": ρ = kΔ²/(2σ²), ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Proposition 1.3);
    - "rdp": the curve kαΔ²/(2σ²) on ``orders`` (default :data:`DEFAULT_ORDERS`), improved
      conversion (:func:`rdp_to_dp`);
    - "exact": the ε of one Gaussian with σ/√k (:func:`gaussian_epsilon`).
    Vectorised (the panel of notebook 16 calls it on every slider move). Usable ranges:
    σ in [1e-150, 1e300], Δ <= 1e150, δ >= 1e-300, k <= 1e15 (refused by name beyond).
    """
    d, k = l2_sensitivity, ks
    a = DEFAULT_ORDERS if orders is None else orders.ravel()
    mu1 = d / sigma
    eps_basic0 = _epsilon_of_mu_array(np.full_like(k, mu1), delta / k)
    eps_adv0 = _epsilon_of_mu_array(np.full_like(k, mu1), delta / (2 * k))
    advanced = np.zeros_like(k)              # a release with epsilon 0 composes to 0
    pos = eps_adv0 > 0
    if pos.any():
        try:
            advanced[pos] = advanced_composition(eps_adv0[pos], 0.0, k[pos], delta / 2)[0]
        except ValueError:
            raise ValueError(f"sigma={sigma!r} is too small for advanced composition: its total "
                             f"epsilon overflows the float range; use a larger sigma") from None
    rho = k * mu1 * mu1 / 2
    zcdp = rho + 2 * np.sqrt(rho) * np.sqrt(-np.log(delta))
    rdp_eps = np.maximum(_conversion(a[None, :], rho[:, None] * a[None, :], delta,
                                     "improved"), 0.0).min(axis=1)
    exact = _epsilon_of_mu_array(mu1 * np.sqrt(k), delta)
    return {"basic": k * eps_basic0, "advanced": advanced, "zcdp": zcdp, "rdp": rdp_eps,
            "exact": exact}
