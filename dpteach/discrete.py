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

from ._checks import (check_epsilon, check_positive_int, check_rng, check_size,
                      check_values)

__all__ = ["discrete_laplace_mechanism", "discrete_laplace_noise", "discrete_laplace_pmf",
           "epsilon_as_fraction"]

_INT64_SAFE = 2 ** 62


def epsilon_as_fraction(epsilon) -> Fraction:
    """The exact rational epsilon the sampler uses.

    A :class:`fractions.Fraction` is used as given. A float is read as the shortest
    decimal that prints as it (``0.1`` is exactly 1/10, not the binary double nearest to
    it). If that decimal has more than 17 significant digits' worth of denominator (it
    never does for a float), it is rounded DOWN to a multiple of 2^-40, which only adds
    privacy.
    """
    if isinstance(epsilon, Fraction):
        check_epsilon(float(epsilon))
        return epsilon
    eps = check_epsilon(epsilon)
    frac = Fraction(repr(float(eps)))
    if frac.denominator > 10 ** 17:
        frac = Fraction(math.floor(frac * 2 ** 40), 2 ** 40)
    return frac


def _bernoulli(num, den, rng, size):
    """Exact Bernoulli(num/den) draws: an integer uniform on {0..den-1} is below num."""
    return rng.integers(0, den, size=size) < num


def _bernoulli_exp_neg(num, den, rng):
    """Exact Bernoulli(exp(-num/den)) for each entry, with 0 <= num/den <= 1.

    [CKS20 Algorithm 1, case gamma in [0, 1]]: K = 1; repeat A ~ Bernoulli(gamma / K),
    stop when A = 0, else K += 1; return 1 exactly when K is odd. (P(K odd) =
    sum_k (-gamma)^k / k! = e^-gamma.) Bernoulli(gamma/K) is drawn as
    Bernoulli(gamma) AND Bernoulli(1/K), so no product overflows. Vectorised: every
    still-running draw shares the same K.
    """
    num = np.asarray(num, dtype=np.int64)
    m = num.shape[0]
    out = np.empty(m, dtype=bool)
    active = np.arange(m)
    den_arr = np.broadcast_to(np.asarray(den, dtype=np.int64), (m,))
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
            raise ValueError(f"sensitivity / epsilon too large for exact sampling: {float(scale)}")
    return t, s


def discrete_laplace_noise(sensitivity, epsilon, *, rng=None, size=None):
    """Exact discrete Laplace noise with scale sensitivity / epsilon (integers).

    P(Y = y) = (1 - q)/(1 + q) q^|y| with q = exp(-epsilon / sensitivity) [CKS20 Alg. 2].
    ``size=None`` returns a Python int, otherwise an int64 array of shape ``size``.
    """
    sensitivity = check_positive_int(sensitivity, "sensitivity")
    t, s = _scale_fraction(sensitivity, epsilon)
    size = check_size(size)
    rng = check_rng(rng)
    shape = () if size is None else (size if isinstance(size, tuple) else (size,))
    count = int(np.prod(shape)) if shape else 1
    draws = _discrete_laplace(t, s, count, rng).reshape(shape)
    return int(draws) if size is None else draws


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
    arr = check_values("value", value)
    if np.any(arr != np.round(arr)):
        raise ValueError(f"value must be integer-valued (a count or a sum of integers), got {value!r}")
    if np.any(np.abs(arr) > 2.0 ** 53):
        raise ValueError(f"value must be an integer of magnitude <= 2^53, got {value!r}")
    ints = arr.astype(np.int64)
    sensitivity = check_positive_int(sensitivity, "sensitivity")
    t, s = _scale_fraction(sensitivity, epsilon)
    size = check_size(size)
    rng = check_rng(rng)
    if size is None:
        shape = ints.shape
    elif isinstance(size, tuple):
        shape = size + ints.shape
    else:
        shape = (size,) + ints.shape
    count = int(np.prod(shape)) if shape else 1
    noise = _discrete_laplace(t, s, count, rng).reshape(shape)
    out = ints + noise
    return int(out) if out.ndim == 0 else out


def discrete_laplace_pmf(k, sensitivity, epsilon):
    """P(Y = k) = (1 - q)/(1 + q) q^|k|, q = exp(-epsilon/sensitivity), for integer k."""
    k = check_values("k", k)
    sensitivity = check_positive_int(sensitivity, "sensitivity")
    eps = check_epsilon(epsilon)
    q = math.exp(-eps / sensitivity)
    out = (1 - q) / (1 + q) * np.exp(-np.abs(k) * eps / sensitivity)
    out = np.where(k == np.round(k), out, 0.0)
    return float(out) if out.ndim == 0 else out
