"""Exact integer noise: the discrete Laplace mechanism, sampled without floating point.

Floating-point Laplace noise leaks through its rounding (Mironov 2012; see
:mod:`dpteach.attacks.floating_point`). The fix taught in notebook 11: release an integer
query plus integer noise, drawn with integer and rational arithmetic only, following
Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy" (NeurIPS
2020), Algorithms 1 and 2 -- cited below as [CKS20].

The discrete Laplace distribution with scale b > 0 has

    P(Y = y) = (1 - q) / (1 + q) * q^|y|,   q = e^(-1/b),   y in Z,

and value + Y with b = Delta / epsilon is epsilon-DP for an integer query with integer
sensitivity Delta: P(y | v) / P(y | v') = q^(|y - v| - |y - v'|) <= e^epsilon
[CKS20 Section 2.2; the geometric mechanism of Ghosh, Roughgarden & Sundararajan 2009].
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._support.validate import (Epsilon, PositiveInt, Real, Rng, Size, Using, Values, checked,
                                release_shape, valid_epsilon, valid_real, valid_values)

__all__ = ["discrete_laplace_mechanism", "discrete_laplace_noise", "discrete_laplace_pmf",
           "epsilon_as_fraction", "discrete_gaussian_mechanism", "discrete_gaussian_noise",
           "discrete_gaussian_pmf"]

_INT64_SAFE = 2 ** 62


def _valid_exact_epsilon(epsilon, name):
    """epsilon > 0 and finite: a Fraction is kept as it is, anything else becomes a float."""
    if isinstance(epsilon, Fraction):
        valid_epsilon(float(epsilon), name)
        return epsilon
    return valid_epsilon(epsilon, name)


@checked(epsilon=Using(_valid_exact_epsilon))
def epsilon_as_fraction(epsilon) -> Fraction:
    """The exact rational epsilon the sampler uses.

    A :class:`fractions.Fraction` is used as given. A float is read as the shortest
    decimal that prints as it (``0.1`` is exactly 1/10, not the binary double nearest to
    it). If that decimal has more than 17 significant digits' worth of denominator (it
    never does for a float), it is rounded DOWN to a multiple of 2^-40, which only adds
    privacy.
    """
    if isinstance(epsilon, Fraction):
        return epsilon
    frac = Fraction(repr(float(epsilon)))
    if frac.denominator > 10 ** 17:
        frac = Fraction(math.floor(frac * 2 ** 40), 2 ** 40)
        if frac == 0:
            raise ValueError(f"epsilon={epsilon!r} is too small for exact sampling: it rounds "
                             "down to 0 on the grid of multiples of 2^-40")
    return frac


def _bernoulli(num, den, rng, size):
    """Exact Bernoulli(num/den) draws: an integer uniform on {0..den-1} is below num.

    ``num`` and ``den`` are int64 (fast path) or object arrays of Python integers of any
    size (exact rejection sampling from 62-bit words)."""
    if isinstance(num, np.ndarray) and num.dtype == object or \
            isinstance(den, np.ndarray) and den.dtype == object:
        return _uniform_below_big(np.broadcast_to(np.asarray(den, dtype=object), (size,)),
                                  rng) < np.broadcast_to(np.asarray(num, dtype=object), (size,))
    return rng.integers(0, den, size=size) < num


def _uniform_below_big(den, rng):
    """Exact uniform integers on {0..den_i - 1} for Python-integer bounds of any size.

    Draw k 62-bit words, read them as one integer R uniform on [0, 2^(62k)), and accept
    R mod den when R < den * floor(2^(62k) / den) (no modulo bias); redraw otherwise.
    """
    m = den.shape[0]
    out = np.empty(m, dtype=object)
    if m == 0:
        return out
    k = max(int(max(den)).bit_length() // 62 + 2, 2)
    span = 1 << (62 * k)
    limit = np.array([(span // int(d)) * int(d) for d in den], dtype=object)
    todo = np.arange(m)
    while todo.size:
        words = rng.integers(0, 1 << 62, size=(todo.size, k), dtype=np.int64)
        raw = np.zeros(todo.size, dtype=object)
        for j in range(k):
            raw = raw * (1 << 62) + words[:, j].astype(object)
        ok = raw < limit[todo]
        out[todo[ok]] = raw[ok] % den[todo[ok]]
        todo = todo[~ok]
    return out


def _bernoulli_exp_neg(num, den, rng):
    """Exact Bernoulli(exp(-num/den)) for each entry, with 0 <= num/den <= 1.

    [CKS20 Algorithm 1, case gamma in [0, 1]]: K = 1; repeat A ~ Bernoulli(gamma / K),
    stop when A = 0, else K += 1; return 1 exactly when K is odd. (P(K odd) =
    sum_k (-gamma)^k / k! = e^-gamma.) Bernoulli(gamma/K) is drawn as
    Bernoulli(gamma) AND Bernoulli(1/K), so no product overflows. Vectorised: every
    still-running draw shares the same K.
    """
    big = (isinstance(num, np.ndarray) and num.dtype == object) or \
        (isinstance(den, np.ndarray) and den.dtype == object)
    dtype = object if big else np.int64
    num = np.asarray(num, dtype=dtype)
    m = num.shape[0]
    out = np.empty(m, dtype=bool)
    active = np.arange(m)
    den_arr = np.broadcast_to(np.asarray(den, dtype=dtype), (m,))
    k = 1
    while active.size:
        a = _bernoulli(num[active], den_arr[active], rng, active.size)
        if k > 1:
            a &= rng.integers(0, k, size=active.size) == 0
        stopped = active[~a]
        out[stopped] = (k % 2 == 1)
        active = active[a]
        k += 1
    return out


def _geometric_exp_neg_one(m, rng):
    """Number of successes before the first failure of Bernoulli(e^-1) trials, m times.

    P(V = v) = (1 - e^-1) e^-v [CKS20 Algorithm 2, the loop on V].
    """
    v = np.zeros(m, dtype=np.int64)
    active = np.arange(m)
    one = np.ones(m, dtype=np.int64)
    while active.size:
        success = _bernoulli_exp_neg(one[: active.size], 1, rng)
        active = active[success]
        v[active] += 1
    return v


def _discrete_laplace(t: int, s: int, count: int, rng) -> np.ndarray:
    """``count`` exact draws with P(y) proportional to exp(-|y| s / t) (scale t/s).

    [CKS20 Algorithm 2], vectorised over the draws still pending:
    U ~ Uniform{0..t-1}; reject unless Bernoulli(exp(-U/t)); V ~ the geometric count
    above; X = U + t V (so P(X = x) is proportional to e^(-x/t)); Y = floor(X / s);
    B ~ Bernoulli(1/2); reject if B = 1 and Y = 0; return (1 - 2B) Y.
    """
    out = np.empty(count, dtype=np.int64)
    pending = np.arange(count)
    while pending.size:
        m = pending.size
        u = rng.integers(0, t, size=m)
        ok = np.flatnonzero(_bernoulli_exp_neg(u, t, rng))
        v = _geometric_exp_neg_one(ok.size, rng)
        if ok.size and t * (int(v.max()) + 1) >= _INT64_SAFE:   # exact big-integer path
            x = u[ok].astype(object) + np.asarray(v, dtype=object) * t
            y = np.asarray(x // s, dtype=np.int64)
        else:
            y = (u[ok] + t * v) // s
        b = rng.integers(0, 2, size=ok.size)
        good = ~((b == 1) & (y == 0))
        done = ok[good]
        out[pending[done]] = np.where(b[good] == 1, -y[good], y[good])
        keep = np.ones(m, dtype=bool)
        keep[done] = False
        pending = pending[keep]
    return out


_MAX_SENSITIVITY = 2 ** 53    # an integer sensitivity beyond this is never a count's


def _scale_fraction(sensitivity: int, epsilon) -> tuple[int, int]:
    """(t, s) with t/s = sensitivity / epsilon in lowest terms, t < 2^62."""
    eps = epsilon_as_fraction(epsilon)
    scale = Fraction(sensitivity) / eps
    t, s = scale.numerator, scale.denominator
    if t >= _INT64_SAFE or s >= _INT64_SAFE:
        # round epsilon down (more noise, still epsilon-DP) to a dyadic with a small denominator
        eps = Fraction(math.floor(eps * 2 ** 30), 2 ** 30)
        if eps == 0:
            raise ValueError(f"epsilon too small for exact sampling, got {float(epsilon)}")
        scale = Fraction(sensitivity) / eps
        t, s = scale.numerator, scale.denominator
        if t >= _INT64_SAFE:
            raise ValueError("sensitivity / epsilon too large for exact sampling: the scale "
                             f"must be below 2^62, got sensitivity={sensitivity}, "
                             f"epsilon={float(epsilon):g}")
        if s >= _INT64_SAFE:
            raise ValueError(f"epsilon={float(epsilon):g} is too large for exact sampling: "
                             "sensitivity / epsilon must be at least 2^-62")
    return t, s


@checked(sensitivity=PositiveInt(maximum=_MAX_SENSITIVITY), size=Size(), rng=Rng())
def discrete_laplace_noise(sensitivity, epsilon, *, rng=None, size=None):
    """Exact discrete Laplace noise with scale sensitivity / epsilon (integers).

    P(Y = y) = (1 - q)/(1 + q) q^|y| with q = exp(-epsilon / sensitivity) [CKS20 Alg. 2].
    ``size=None`` returns a Python int, otherwise an int64 array of shape ``size``.
    """
    t, s = _scale_fraction(sensitivity, epsilon)
    shape = () if size is None else (size if isinstance(size, tuple) else (size,))
    count = int(np.prod(shape)) if shape else 1
    draws = _discrete_laplace(t, s, count, rng).reshape(shape)
    return int(draws) if size is None else draws


def _valid_integer_values(value, name) -> np.ndarray:
    """The query's true answer as int64: integer-valued, |value| <= 2^53."""
    arr = valid_values(value, name)
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be integer-valued (a count or a sum of integers), "
                         f"got {value!r}")
    if np.any(np.abs(arr) > 2.0 ** 53):
        raise ValueError(f"{name} must be an integer of magnitude <= 2^53, got {value!r}")
    return arr.astype(np.int64)


@checked(value=Using(_valid_integer_values), sensitivity=PositiveInt(maximum=_MAX_SENSITIVITY),
         size=Size(), rng=Rng())
def discrete_laplace_mechanism(value, sensitivity, epsilon, *, rng=None, size=None):
    """Release value + Y, Y exact discrete Laplace with scale sensitivity / epsilon.

    ``value`` is an integer (or an array of integers, noise i.i.d. per coordinate, with
    ``sensitivity`` the L1 sensitivity of the whole vector); ``sensitivity`` a positive
    integer Delta; the release is epsilon-DP and integer-valued, so no floating-point
    rounding can leak the input [CKS20; Mironov 2012]. ``size`` draws that many
    independent releases (shape ``size + shape(value)``); the result is a Python int for
    a scalar value and ``size=None``, else an int64 array. Epsilon is used as the exact
    rational :func:`epsilon_as_fraction` gives (pass a Fraction to choose it yourself).
    Throughput: well over 10^5 draws per second. Notebook 11.
    """
    t, s = _scale_fraction(sensitivity, epsilon)
    shape = release_shape(size, value.shape)
    count = int(np.prod(shape)) if shape else 1
    noise = _discrete_laplace(t, s, count, rng).reshape(shape)
    out = value + noise
    return int(out) if out.ndim == 0 else out


@checked(k=Values(), sensitivity=PositiveInt(maximum=_MAX_SENSITIVITY), epsilon=Epsilon())
def discrete_laplace_pmf(k, sensitivity, epsilon):
    """P(Y = k) = (1 - q)/(1 + q) q^|k|, q = exp(-epsilon/sensitivity), for integer k."""
    q = math.exp(-epsilon / sensitivity)
    out = (1 - q) / (1 + q) * np.exp(-np.abs(k) * epsilon / sensitivity)
    out = np.where(k == np.round(k), out, 0.0)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------- discrete Gaussian
def _valid_sigma(sigma, name):
    """sigma in (0, 2^52]: a Fraction is kept as it is, anything else becomes a float."""
    # sigma <= 2^52 keeps the sampler's integers (about sigma + 1, and the draws) in int64
    if isinstance(sigma, Fraction):
        if sigma <= 0 or sigma > 2 ** 52:
            raise ValueError(f"{name} must be in (0, 2^52], got {sigma}")
        return sigma
    return valid_real(sigma, name, low=0.0, high=2.0 ** 52, low_open=True)


def _sigma_squared(sigma) -> Fraction:
    """sigma^2 as an exact rational, a float sigma read as its shortest decimal."""
    frac = sigma if isinstance(sigma, Fraction) else Fraction(repr(float(sigma)))
    return frac * frac


def _discrete_gaussian(sigma2: Fraction, count: int, rng) -> np.ndarray:
    """[CKS20 Algorithm 3]: t = floor(sigma) + 1; repeat Y ~ discrete Laplace with scale
    t, C ~ Bernoulli(exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2))), until C = 1; return Y.

    With sigma^2 = a/b the exponent is gamma = (|Y| b t - a)^2 / (2 a b t^2), an exact
    rational. Bernoulli(exp(-gamma)) = [floor(gamma) Bernoulli(e^-1) successes in a row]
    AND Bernoulli(exp(-(gamma - floor(gamma)))); the first part is the geometric count
    V >= floor(gamma).
    """
    a, b = sigma2.numerator, sigma2.denominator
    t = math.isqrt(a // b) + 1              # floor(sigma) + 1 (exact: floor(sqrt(floor(s^2))))
    den = 2 * a * b * t * t
    out = np.empty(count, dtype=np.int64)
    pending = np.arange(count)
    while pending.size:
        m = pending.size
        y = _discrete_laplace(t, 1, m, rng)
        absy = np.abs(y)
        big = den >= _INT64_SAFE or (int(absy.max()) * b * t + a) ** 2 >= _INT64_SAFE
        if big:
            num = (absy.astype(object) * (b * t) - a) ** 2
            whole = num // den
            frac = num % den
            den_arr = np.full(m, den, dtype=object)
        else:
            num = (absy * (b * t) - a) ** 2
            whole, frac = num // den, num % den
            den_arr = den
        v = _geometric_exp_neg_one(m, rng)
        # V is a geometric count far below 2^62, so capping floor(gamma) there is exact
        # for this comparison and keeps huge gammas (tiny sigma) inside int64
        c = np.asarray(v >= np.minimum(whole, 2 ** 62).astype(np.int64), dtype=bool)
        idx = np.flatnonzero(c)
        if idx.size:
            sub_den = den_arr[idx] if big else den
            c[idx] = _bernoulli_exp_neg(frac[idx], sub_den, rng)
        out[pending[c]] = y[c]
        pending = pending[~c]
    return out


@checked(sigma=Using(_valid_sigma), size=Size(), rng=Rng())
def discrete_gaussian_noise(sigma, *, rng=None, size=None):
    """Exact discrete Gaussian noise: P(Y = y) proportional to exp(-y^2 / (2 sigma^2)), y in Z.

    Sampled with integer arithmetic only [CKS20 Algorithm 3]; ``sigma`` is read as an
    exact decimal (or pass a Fraction). Its variance is slightly below sigma^2
    [CKS20 Corollary 9]. ``size=None`` gives a Python int.
    """
    sigma2 = _sigma_squared(sigma)
    shape = () if size is None else (size if isinstance(size, tuple) else (size,))
    count = int(np.prod(shape)) if shape else 1
    draws = _discrete_gaussian(sigma2, count, rng).reshape(shape)
    return int(draws) if size is None else draws


@checked(value=Using(_valid_integer_values), sigma=Using(_valid_sigma), size=Size(), rng=Rng())
def discrete_gaussian_mechanism(value, sigma, *, rng=None, size=None):
    """Release an integer value plus exact discrete Gaussian noise N_Z(0, sigma^2).

    For an integer query with L2 sensitivity Delta it satisfies (Delta^2 / (2 sigma^2))-
    concentrated DP and hence (epsilon, delta)-DP for a range of pairs [CKS20 Theorems 4,
    7]; unlike the continuous Gaussian no floating-point rounding is involved. Shapes as
    in :func:`discrete_laplace_mechanism`.
    """
    sigma2 = _sigma_squared(sigma)
    shape = release_shape(size, value.shape)
    count = int(np.prod(shape)) if shape else 1
    out = value + _discrete_gaussian(sigma2, count, rng).reshape(shape)
    return int(out) if out.ndim == 0 else out


@checked(k=Values(), sigma=Real(low=0.0, low_open=True))
def discrete_gaussian_pmf(k, sigma):
    """P(Y = k) for the discrete Gaussian: exp(-k^2 / (2 sigma^2)) / Z, Z the sum over all
    integers. For sigma <= 10, Z is summed over |k| <= 40 sigma + 40; above, Z = sqrt(2 pi)
    sigma to double precision (Poisson summation: the relative correction
    2 sum_j exp(-2 pi^2 sigma^2 j^2) is below e^-1900)."""
    if sigma <= 10:
        half = int(40 * sigma) + 40
        grid = np.arange(-half, half + 1)
        z = np.exp(-0.5 * (grid / sigma) ** 2).sum()
    else:
        z = math.sqrt(2 * math.pi) * sigma
    with np.errstate(over="ignore", under="ignore"):
        out = np.where(k == np.round(k), np.exp(-0.5 * (k / sigma) ** 2) / z, 0.0)
    return float(out) if out.ndim == 0 else out
