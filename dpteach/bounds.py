"""Accuracy and utility bounds: Laplace tails and the exponential mechanism's theorem."""

from __future__ import annotations

import math

import numpy as np

from ._support.validate import (Epsilon, PositiveInt, Probability, Real, Sensitivity, Using,
                                checked, valid_positive_int, valid_values)

__all__ = ["laplace_std", "laplace_tail", "laplace_accuracy", "exponential_utility_threshold"]


def _valid_distances(t, name):
    """Distances t >= 0 (a number or an array) as a float array."""
    tt = valid_values(t, name)
    if (tt < 0).any():
        raise ValueError(f"{name} must be >= 0")
    return tt


@checked(scale=Real(low=0.0, allow_inf=True))
def laplace_std(scale) -> float:
    """Standard deviation of Lap(scale): sqrt(2) * scale, in the query's units.

    Lap(b) has variance 2 b^2 (seed 004; DR14 section 3.3). The one place the kit writes
    this formula: the panels, the comparison table and the averaging attack call it.
    Notebooks 02, 06 and 10.
    """
    return float(np.sqrt(2.0) * scale)


@checked(scale=Real(low=0.0, low_open=True), t=Using(_valid_distances))
def laplace_tail(scale, t):
    """Pr[|Y| >= t] = exp(-t / scale) for Y ~ Lap(scale) and t >= 0 [DR14 Fact 3.7].

    ``t`` may be an array. With t = k*b the chance is e^-k whatever b is. Notebook 06.
    """
    out = np.exp(-t / scale)
    return out.item() if out.ndim == 0 else out


@checked(scale=Real(low=0.0, low_open=True), beta=Probability(low_open=True, high_open=True))
def laplace_accuracy(scale, beta) -> float:
    """The error t with Pr[|Lap(scale)| >= t] = beta, namely t = scale * ln(1/beta)."""
    return float(scale * np.log(1 / beta))


@checked(opt=Real(), sensitivity=Sensitivity(positive=True), epsilon=Epsilon(),
         n_candidates=PositiveInt(), t=Real(low=0.0))
def exponential_utility_threshold(opt, sensitivity, epsilon, n_candidates, t, *, n_optimal=1) -> float:
    """OPT - (2 Delta / eps) (ln(|R| / |R_OPT|) + t), natural logarithm.

    The exponential mechanism's output scores at or below this threshold with
    probability at most e^-t (McSherry & Talwar 2007; DR14 Theorem 3.11; seed 004,
    "Utility of Exponential Mechanism"). Seed 004's nationality example (|R| = 4,
    t = 3, Delta = 1) gives a loss of 2(ln 4 + 3)/eps = 8.77/eps; the slides print 6.8,
    and the eye-colour example (|R| = 5) gives 9.22/eps where the slides print 7.4
    (a base-10 logarithm). Notebook 09.
    """
    n_optimal = valid_positive_int(n_optimal, "n_optimal", maximum=n_candidates)   # <= |R|
    # math.log takes Python ints of any size (n_candidates = 10**400 is fine)
    return float(opt - (2 * sensitivity / epsilon)
                 * (math.log(n_candidates) - math.log(n_optimal) + t))
