"""The Laplace and normal densities and distribution functions the panels draw, in closed
form (private; no notebook reads this).

``scipy.stats`` costs most of a second to import in a fresh kernel, more than the first
panel of a notebook may take in all (benchmarks/bench_first_panel.py), while Lap(loc, b)
and N(loc, sigma^2) have closed forms. Each function here computes exactly what the
``scipy.stats`` call named in its docstring computes -- the same formula on the same
standardised value (x - loc) / scale, so the same floats (tests/notebooks/test_first_panel.py
compares them bit for bit) -- and a lesson that teaches ``scipy.stats`` still uses it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["laplace_pdf", "laplace_cdf", "laplace_sf", "laplace_logcdf", "laplace_logsf",
           "normal_cdf"]


def _standard(x, loc, scale):
    return np.asarray((np.asarray(x) - loc) / scale, dtype=float)


def _result(out):
    return out[()] if out.ndim == 0 else out


def laplace_pdf(x, loc, scale):
    """``scipy.stats.laplace.pdf(x, loc, scale)``: exp(-|x - loc|/b) / (2b)."""
    z = _standard(x, loc, scale)
    return _result(0.5 * np.exp(-np.abs(z)) / scale)


def _cdf(z):
    with np.errstate(over="ignore"):
        return np.where(z > 0, 1.0 - 0.5 * np.exp(-z), 0.5 * np.exp(z))


def laplace_cdf(x, loc, scale):
    """``scipy.stats.laplace.cdf(x, loc, scale)``: e^z/2 below the centre, 1 - e^-z/2
    above it (z = (x - loc)/b)."""
    return _result(_cdf(_standard(x, loc, scale)))


def laplace_sf(x, loc, scale):
    """``scipy.stats.laplace.sf(x, loc, scale)``: the distribution function at -z."""
    return _result(_cdf(-_standard(x, loc, scale)))


def laplace_logcdf(x, loc, scale):
    """``scipy.stats.laplace.logcdf(x, loc, scale)``: ln(e^z/2) below the centre,
    ln(1 - e^-z/2) (log1p) from it on."""
    z = _standard(x, loc, scale)
    with np.errstate(divide="ignore", over="ignore"):
        return _result(np.where(z < 0, np.log(_cdf(z)), np.log1p(-_cdf(-z))))


def laplace_logsf(x, loc, scale):
    """``scipy.stats.laplace.logsf(x, loc, scale)``: ln(e^-z/2) above the centre,
    ln(1 - e^z/2) (log1p) up to it."""
    z = _standard(x, loc, scale)
    with np.errstate(divide="ignore", over="ignore"):
        return _result(np.where(z > 0, np.log(_cdf(-z)), np.log1p(-_cdf(z))))


def normal_cdf(x, loc, scale):
    """``scipy.stats.norm.cdf(x, loc, scale)``: Phi((x - loc)/sigma) by scipy.special.ndtr."""
    from scipy import special
    return _result(special.ndtr(_standard(x, loc, scale)))
