"""Brent's root finder as scipy.optimize.brentq runs it (private; no notebook reads this).

``scipy.optimize`` takes a third of a second to import in a fresh kernel (it loads
scipy.linalg, scipy.sparse and more), which three notebooks' first panels paid for one
bracketing root find each (the analytic Gaussian sigma, epsilon(delta) of a privacy loss
distribution). :func:`brentq` is the same algorithm step for step -- scipy's
``Zeros/brentq.c`` (Brent 1973, ch. 4: inverse quadratic interpolation, secant steps,
bisection when a step is not short enough) -- so it returns the same float in the same
number of evaluations (tests/test_first_panel.py checks it against scipy.optimize.brentq),
with the same errors: ValueError for a NaN value or a bracket without a sign change,
RuntimeError when ``maxiter`` iterations do not converge.
"""

from __future__ import annotations

import math

__all__ = ["brentq"]

_RTOL_MIN = 4 * 2.220446049250313e-16      # scipy's smallest rtol, 4 machine epsilons


def brentq(f, a, b, *, xtol=2e-12, rtol=_RTOL_MIN, maxiter=100):
    """A root of ``f`` in [a, b], where f(a) and f(b) differ in sign, to within
    xtol + rtol |x| (``scipy.optimize.brentq(f, a, b, xtol=, rtol=, maxiter=)``)."""
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < _RTOL_MIN:
        raise ValueError(f"rtol too small ({rtol:g} < {_RTOL_MIN:g})")

    def value(x):
        fx = float(f(x))
        if math.isnan(fx):
            raise ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
        return fx

    xpre, xcur = float(a), float(b)
    xblk = fblk = spre = scur = 0.0
    fpre, fcur = value(xpre), value(xcur)
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if math.copysign(1.0, fpre) == math.copysign(1.0, fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and math.copysign(1.0, fpre) != math.copysign(1.0, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            try:
                if xpre == xblk:                           # interpolate (secant)
                    stry = -fcur * (xcur - xpre) / (fcur - fpre)
                else:                                      # extrapolate (inverse quadratic)
                    dpre = (fpre - fcur) / (xpre - xcur)
                    dblk = (fblk - fcur) / (xblk - xcur)
                    stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            except ZeroDivisionError:
                stry = math.inf         # C's x/0 is +-inf or NaN: never a short step, so bisect
            if 2 * abs(stry) < min(abs(spre), 3 * abs(sbis) - delta):
                spre, scur = scur, stry                    # a good short step
            else:
                spre = scur = sbis                         # bisect
        else:
            spre = scur = sbis                             # bisect
        xpre, fpre = xcur, fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta
        fcur = value(xcur)
    raise RuntimeError(f"Failed to converge after {maxiter} iterations, value is {xcur}.")
