"""The error of the local estimates against the central model's: the variance of one
estimated frequency (Wang, Blocki, Li & Jha, USENIX Security 2017),

    Var[f_hat_v] = q (1 - q) / (n (p - q)^2) + f_v (1 - p - q) / (n (p - q)),

against about 2 / (eps n)^2 for a central curator's Laplace histogram: error about
1/(eps sqrt(n)) per frequency in the local model, 1/(eps n) in the central one.
Notebook 17.
"""

from __future__ import annotations

import numpy as np

from .._support.validate import OrNone, PositiveInt, Real, Using, checked, valid_values
from ._inputs import MAX_N, valid_k, valid_local_epsilon
from .randomizers import report_probabilities, valid_mechanism

__all__ = ["local_variance", "central_variance", "k_randomized_response_is_better"]


def _valid_mechanism(mechanism, name):
    """:func:`valid_mechanism` as a declared constraint ``(value, name)``."""
    return valid_mechanism(mechanism)


def _valid_frequency(frequency, name):
    """Fractions in [0, 1] (a scalar or an array)."""
    f = valid_values(frequency, name)
    if np.any((f < 0) | (f > 1)):
        raise ValueError(f"{name} must lie in [0, 1]")
    return f


@checked(n=PositiveInt(maximum=MAX_N), k=Using(valid_k), epsilon=Using(valid_local_epsilon),
         mechanism=Using(_valid_mechanism), frequency=OrNone(Using(_valid_frequency)))
def local_variance(n, k, epsilon, *, mechanism="oue", frequency=None):
    """Variance of one estimated frequency f_hat_v (a fraction) in the local model.

    Wang et al. 2017, with p, q the mechanism's report probabilities:

        Var[f_hat_v] = q (1 - q) / (n (p - q)^2) + f_v (1 - p - q) / (n (p - q)).

    ``frequency=None`` gives the first term alone, Wang et al.'s Var* (the variance for a
    category nobody holds, which dominates when f_v is small); in closed form
    k-RR: (e^eps + k - 2) / (n (e^eps - 1)^2), SUE: e^(eps/2) / (n (e^(eps/2) - 1)^2),
    OUE: 4 e^eps / (n (e^eps - 1)^2). ``frequency`` may be an array (broadcasts).

    This is the variance for a *fixed dataset*: the n people and their values are given
    (f_v is the dataset's own fraction) and only the mechanism's coins are random. If the
    n people are instead drawn at random from a population with fraction f_v, add the
    sampling variance f_v (1 - f_v) / n; for k = 2 that sum is Warner's formula,
    :func:`dpteach.definition.randomized_response_standard_error` squared. Notebook 17.
    """
    p, q, gap = report_probabilities(mechanism, k, epsilon)
    var = q * (1 - q) / (n * gap**2)
    if frequency is None:
        return float(var)
    out = var + frequency * (1 - p - q) / (n * gap)
    return float(out) if out.ndim == 0 else out


@checked(n=PositiveInt(maximum=MAX_N), epsilon=Using(valid_local_epsilon),
         sensitivity=Real(low=0.0, low_open=True, high=1e100))
def central_variance(n, epsilon, *, sensitivity=1.0) -> float:
    """Variance of one frequency from a central Laplace histogram: 2 (Delta/eps)^2 / n^2.

    The curator adds Lap(Delta/eps) to every count (Delta = 1: adding or removing a person
    changes one count by one; Delta = 2: swapping one person's answer changes two counts by
    one, the relation of a local ε; Dwork & Roth 2014, section 3.3) and divides by n, taken
    as public. The standard deviation sqrt(2)/(eps n) shrinks like 1/n; the local model's
    like 1/sqrt(n). Notebook 17.
    """
    with np.errstate(over="ignore", under="ignore"):
        var = 2.0 * np.square(np.float64(sensitivity) / epsilon) / np.float64(n) ** 2
    if not np.isfinite(var):
        raise ValueError(f"epsilon and sensitivity are outside the usable range: 2 (sensitivity / "
                         f"epsilon)^2 / n^2 overflows, got epsilon={epsilon!r}, sensitivity={sensitivity!r}")
    return float(var)


@checked(k=Using(valid_k), epsilon=Using(valid_local_epsilon))
def k_randomized_response_is_better(k, epsilon) -> bool:
    """True when k-RR's Var* is below OUE's: k - 2 < 3 e^eps (Wang et al. 2017 compare the two).

    From (e^eps + k - 2) < 4 e^eps. Notebook 17.
    """
    return bool(k - 2 < 3 * np.exp(epsilon))
