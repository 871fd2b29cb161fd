"""Mironov's floating-point attack on textbook Laplace noise (Mironov, "On significance
of the least significant bits for differential privacy", CCS 2012).

A computer cannot draw a real number. A textbook Laplace sampler turns one 53-bit
uniform double into noise with a logarithm, and every step rounds. The outputs it can
produce from input 0 form a sparse, irregular set of doubles, and the set reachable from
input 1 is a different one: many outputs could only have come from one of the two
inputs, whatever the nominal epsilon. :func:`floating_point_attack` decides, bit for bit,
which candidate inputs could have produced each output. Notebook 11 runs it; the fix is
integer noise (:func:`dpteach.discrete_laplace_mechanism`).

Two samplers are modelled exactly:

``sampler="naive"`` -- :func:`naive_laplace_mechanism`, the inverse-CDF formula of the
textbooks (and of many early DP libraries)::

    u     = rng.random() - 0.5                 # 53-bit uniform k / 2^53, shifted: exact
    noise = (-scale * sign(u)) * log(1 - 2|u|)   # 1 - 2|u| = m / 2^52 exactly, m in 1..2^52
    out   = value + noise                        # rounded twice: the product, the sum

``sampler="numpy"`` -- numpy's ``Generator.laplace(loc, scale)`` (numpy/random/src/
distributions/distributions.c, ``random_laplace``): U = k / 2^53 (k = 0 is redrawn);
U >= 1/2 gives ``loc - scale * log(2.0 - U - U)``, U < 1/2 gives
``loc + scale * log(U + U)``. The same inverse-CDF idea with different rounding steps,
so it is just as porous; only the model of its arithmetic differs.

Both samplers take their logarithm from the C library's ``log``, one number at a time, as
numpy's C sampler does: numpy's own ``np.log`` on an array may use vector instructions
whose last bit differs from it (about 0.4% of values on a machine with AVX-512), which
would make the outputs, and so the lesson's numbers, depend on the processor.
:func:`preimages` lets one check an output by hand.
"""

from __future__ import annotations

import math

import numpy as np

from .._support.validate import (NonnegativeInt, PositiveInt, Real, Rng, Size, Using, Values,
                                 checked, release_shape, valid_epsilon, valid_values)

__all__ = ["naive_laplace_mechanism", "floating_point_attack", "preimages", "rule_out_fractions"]

_TWO52 = 2 ** 52
_SAMPLERS = ("naive", "numpy")
# the largest |noise| either sampler draws is scale * ln(2^53) < 37 scale; this keeps it finite
_MAX_SCALE = 1e306
_MAX_WINDOW = 10_000
#: uniforms each side of the vectorised search's crossing that are run exactly (the
#: crossing is at most one uniform from the exact one, measured; two is the margin)
_WINDOW = 2


def _valid_sampler(sampler, name):
    if sampler not in _SAMPLERS:
        raise ValueError(f"{name} must be one of {_SAMPLERS}, got {sampler!r}")
    return sampler


@checked(value=Values(), scale=Real(low=0.0, high=_MAX_SCALE, low_open=True), size=Size(),
         rng=Rng())
def naive_laplace_mechanism(value, scale, *, rng=None, size=None):
    """value + Laplace(scale) noise, the textbook way, in floating point (NOT private).

    u = U - 1/2 with U a 53-bit uniform double from ``rng.random`` (k / 2^53); noise =
    -scale * sign(u) * ln(1 - 2|u|), evaluated left to right in float64; output =
    value + noise. The distribution is Laplace up to rounding, but the rounding leaks:
    see :func:`floating_point_attack` (Mironov 2012, Section 3). ``scale`` is b = Δ/ε;
    ``size`` as in :func:`dpteach.laplace_mechanism`. The once-in-2^53 draw u = -1/2 gives
    -inf, as in the textbook formula.
    """
    if value.size and np.abs(value).max() > np.finfo(float).max - 37 * scale:
        raise ValueError(f"value must stay within +-(1.79e308 - 37 * scale) so that value + "
                         f"noise is finite, got a value of {np.abs(value).max():g} with "
                         f"scale={scale:g}")
    shape = release_shape(size, value.shape)
    u = rng.random(shape) - 0.5
    with np.errstate(divide="ignore"):
        noise = -scale * np.sign(u) * _libm_log(1.0 - 2.0 * np.abs(u))
    out = value + noise
    return out.item() if out.ndim == 0 else out


# ---------------------------------------------------------------- the exact forward maps
def _libm_log(x):
    """The C library's log, element by element (what numpy's C sampler calls); -inf at 0."""
    x = np.asarray(x, dtype=np.float64)
    positive = x > 0
    flat = np.where(positive, x, 1.0).ravel().tolist()
    logs = np.fromiter(map(math.log, flat), dtype=np.float64, count=len(flat)).reshape(x.shape)
    return np.where(positive, logs, -np.inf)


def _naive_forward(c, scale, sign, m, log=_libm_log):
    """Output of the naive sampler for input c, sign of u, and 1 - 2|u| = m / 2^52."""
    with np.errstate(divide="ignore"):
        return c + (-scale * sign) * log(np.asarray(m, dtype=np.float64) * 2.0 ** -52)


def _numpy_forward(c, scale, k, log=_libm_log):
    """Output of numpy's random_laplace for input c and U = k / 2^53 (1 <= k < 2^53)."""
    k = np.asarray(k, dtype=np.int64)
    u = k.astype(np.float64) * 2.0 ** -53
    upper = k >= _TWO52
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = log(np.where(upper, (2.0 - u) - u, u + u))     # one logarithm per uniform
    return np.where(upper, c - scale * logs, c + scale * logs)


def _lower_bound(key, target, lo, hi, guess=None, width=32):
    """Smallest integer j in [lo, hi] with key(j) >= target, for nondecreasing key, vectorised.

    Returns hi + 1 where no such j exists. With ``guess`` (an estimate of the answer, from
    inverting the sampler's formula in floating point), the search starts in
    [guess - width, guess + width] wherever key itself shows that the answer lies there
    (key just below the window < target, and key at its top >= target or the top is hi),
    and in [lo, hi] elsewhere: for a nondecreasing key the answer is the same, found in
    6 halvings instead of 52 (the guess is typically a few uniforms off; where the
    arithmetic is coarser than that, e.g. a large value with a tiny scale, the whole
    range is searched).
    """
    lo = lo.copy()
    hi_plus = hi + 1
    if guess is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.clip(np.nan_to_num(guess, nan=0.0), lo, hi).astype(np.int64)
        start, top = np.maximum(g - width, lo), np.minimum(g + width, hi)
        inside = (((start == lo) | (key(np.maximum(start - 1, lo)) < target))
                  & ((top == hi) | (key(top) >= target)))
        lo = np.where(inside, start, lo)
        hi_plus = np.where(inside, top + 1, hi_plus)
    h = hi_plus.copy()
    while True:
        open_ = lo < h
        if not open_.any():
            return lo
        mid = lo + (h - lo) // 2
        ok = key(mid) >= target
        h = np.where(open_ & ok, mid, h)
        lo = np.where(open_ & ~ok, mid + 1, lo)


def _uniform_guess(outputs, cands, scale, sampler, branch):
    """The uniform's index that maps ``cands`` to ``outputs`` in exact arithmetic (the
    sampler's formula solved for it), as floats: a starting point for the exact search."""
    with np.errstate(over="ignore", invalid="ignore"):
        if sampler == "naive":        # out = c - scale * sign * ln(m / 2^52)
            return 2.0 ** 52 * np.exp(-branch * (outputs - cands) / scale)
        if branch == "hi":            # out = c - scale * ln(2 - 2U), U = k / 2^53
            return 2.0 ** 53 - 2.0 ** 52 * np.exp((cands - outputs) / scale)
        return 2.0 ** 52 * np.exp((outputs - cands) / scale)   # out = c + scale * ln(2U)


def _reachable(outputs, cands, scale, sampler, window=_WINDOW):
    """For flat arrays of (output, candidate) pairs: can the sampler map some uniform to it?

    Each sampler has two branches: one adds non-negative noise (naive: u > 0; numpy:
    U >= 1/2), so its outputs are never below the input (rounding is monotone and the
    input is a float), the other non-positive noise; a pair is searched only on the
    branches that can reach its output. The binary search runs on numpy's vectorised
    np.log, which is fast; where it differs from the C library's log (in the last bit), the
    crossing it finds is at most one uniform from the exact one (measured over 1.9 million
    searches, both samplers, scales 0.01 to 1000). The uniforms within ``window`` of it are
    then run with the C library's log, as the samplers do, and compared with ``==``."""
    found = np.zeros(outputs.shape, dtype=bool)
    offsets = np.arange(-window, window + 1)
    # (branch, its uniforms' range, whether its noise is >= 0)
    if sampler == "naive":
        branches = [(+1.0, 1, _TWO52, True), (-1.0, 1, _TWO52, False)]
    else:
        branches = [("hi", _TWO52, 2 * _TWO52 - 1, True), ("lo", 1, _TWO52 - 1, False)]
    for branch, lo_int, hi_int, upward in branches:
        sel = np.flatnonzero(outputs >= cands if upward else outputs <= cands)
        if sel.size == 0:
            continue
        out, c = outputs[sel], cands[sel]
        if sampler == "naive":
            # output as a function of m: sign +1 -> nonincreasing, sign -1 -> nondecreasing
            direction = -branch

            def fwd(j, log=_libm_log, branch=branch, c=c):
                return _naive_forward(c, scale, branch, j, log)
        else:
            direction = 1.0   # both branches of random_laplace increase with k

            def fwd(j, log=_libm_log, c=c):
                return _numpy_forward(c, scale, j, log)

        lo = np.full(out.shape, lo_int, dtype=np.int64)
        hi = np.full(out.shape, hi_int, dtype=np.int64)

        def key(j, fwd=fwd, direction=direction):
            return direction * fwd(j, np.log)

        j0 = _lower_bound(key, direction * out, lo, hi,
                          guess=_uniform_guess(out, c, scale, sampler, branch))
        hit = np.zeros(out.shape, dtype=bool)
        for off in offsets:
            j = np.clip(j0 + off, lo_int, hi_int)
            hit |= fwd(j) == out
        found[sel] |= hit
    return found


@checked(outputs=Values(), candidates=Values(),
         scale=Real(low=0.0, high=_MAX_SCALE, low_open=True), sampler=Using(_valid_sampler))
def floating_point_attack(outputs, candidates, scale, *, sampler="naive"):
    """Which candidate inputs could have produced each output, bit for bit?

    For every output o and candidate input c, search the uniforms the sampler can draw for
    one that it maps exactly to o when run on c. The sampler's output is monotone in its
    uniform, so a binary search over the 2^52 (naive: m in 1..2^52 for each sign of u) or
    2^53 (numpy: k) uniforms finds the crossing point, and the few uniforms around it are
    re-run exactly and compared with ``==`` (neighbouring floats included).

    Returns a boolean array of shape (len(outputs), len(candidates)): True where the
    candidate is consistent with the output. A row may be all False (an output no
    candidate can produce). For noise from the modelled sampler, the true input's entry
    is always True; the attack never errs that way, because it is an exact computation,
    not a statistical test.

    ``scale`` is the Laplace scale b (= Δ/ε) the mechanism used; ``sampler`` is "naive"
    (:func:`naive_laplace_mechanism`) or "numpy" (``numpy.random.Generator.laplace``).
    Mironov 2012, Section 4. Notebook 11.
    """
    out, cand = outputs.ravel(), candidates.ravel()
    o_grid, c_grid = np.meshgrid(out, cand, indexing="ij")
    res = _reachable(o_grid.ravel(), c_grid.ravel(), scale, sampler)
    return res.reshape(out.size, cand.size)


@checked(output=Real(), candidate=Real(), scale=Real(low=0.0, high=_MAX_SCALE, low_open=True),
         sampler=Using(_valid_sampler), window=NonnegativeInt(maximum=_MAX_WINDOW))
def preimages(output, candidate, scale, *, sampler="naive", window=2):
    """The uniforms nearest to producing ``output`` from ``candidate``, and what they give.

    A pandas DataFrame, one row per uniform tried (the binary-search crossing point and
    ``window`` neighbours each side, per branch; 0 <= window <= 10,000): the integer index of the uniform
    (naive: m with 1 - 2|u| = m/2^52; numpy: k with U = k/2^53), the branch, the
    output it produces (as a float and in hex) and whether it equals ``output`` exactly.
    For a step-by-step look at :func:`floating_point_attack`.
    """
    import pandas as pd

    rows = []
    oa, ca = np.array([output]), np.array([candidate])
    if sampler == "naive":
        specs = [("u > 0", +1.0, 1, _TWO52), ("u < 0", -1.0, 1, _TWO52)]
    else:
        specs = [("U >= 1/2", None, _TWO52, 2 * _TWO52 - 1), ("U < 1/2", None, 1, _TWO52 - 1)]
    for label, sign, lo_int, hi_int in specs:
        if sampler == "naive":
            def key(j, sign=sign):
                return -sign * _naive_forward(ca, scale, sign, j, np.log)
            direction = -sign
        else:
            def key(j):
                return _numpy_forward(ca, scale, j, np.log)
            direction = 1.0
        j0 = int(_lower_bound(key, direction * oa, np.array([lo_int]), np.array([hi_int]))[0])
        for j in range(max(lo_int, j0 - window), min(hi_int, j0 + window) + 1):
            if sampler == "naive":
                val = float(_naive_forward(ca, scale, sign, np.array([j]))[0])
            else:
                val = float(_numpy_forward(ca, scale, np.array([j]))[0])
            rows.append({"branch": label, "uniform index": j, "output": val,
                         "output (hex)": float.hex(val), "equals": val == output})
    return pd.DataFrame(rows)


def _valid_epsilons(epsilons, name):
    return [valid_epsilon(e, name) for e in valid_values(epsilons, name).ravel()]


@checked(values=Values(), epsilons=Using(_valid_epsilons), n_outputs=PositiveInt(maximum=10**6),
         rng=Rng())
def rule_out_fractions(values, epsilons, *, n_outputs=150, rng=None):
    """Fraction of releases that rule out the neighbouring input (value + 1), for every
    (sampler, true value, epsilon) on a grid; epsilon is that of a count (scale 1/eps).
    The samplers are the textbook one (:func:`naive_laplace_mechanism`) and numpy's own
    ``Generator.laplace`` (the sampler under attack, drawn directly on purpose).
    Returns sampler -> (fractions, truth): arrays (len(values), len(epsilons)) of the
    share ruling out value + 1 and the share ruling out the true value (always 0).
    Notebook 11's panel draws them."""
    values = [float(v) for v in values.ravel()]
    table = {}
    for sampler in ("naive", "numpy"):
        frac = np.zeros((len(values), len(epsilons)))
        truth = np.zeros_like(frac)
        for i, value in enumerate(values):
            for j, eps in enumerate(epsilons):
                scale = 1.0 / eps
                out = (naive_laplace_mechanism(value, scale, rng=rng, size=n_outputs)
                       if sampler == "naive" else rng.laplace(value, scale, size=n_outputs))
                ok = floating_point_attack(out, [value, value + 1.0], scale, sampler=sampler)
                truth[i, j] = np.mean(~ok[:, 0])
                frac[i, j] = np.mean(~ok[:, 1])
        table[sampler] = (frac, truth)
    return table
