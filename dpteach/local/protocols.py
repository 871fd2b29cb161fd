"""Choosing a frequency oracle: k-RR, unary encoding (SUE, OUE) or optimal local hashing.

Wang, Blocki, Li & Jha, "Locally differentially private protocols for frequency
estimation" (USENIX Security 2017) [WBLJ17] compare the protocols of :mod:`dpteach.local`
by the variance of one estimated frequency for a value nobody holds, Var*. Times n it
is

    k-RR: (e^eps + k - 2) / (e^eps - 1)^2        (grows with the domain size k)
    SUE:  e^(eps/2) / (e^(eps/2) - 1)^2
    OUE:  4 e^eps / (e^eps - 1)^2
    OLH:  q (1 - q) / (p - q)^2, q = 1/g, g = round(e^eps + 1)   (OUE's at g = e^eps + 1)

so k-RR is best for small k, OUE and OLH for large k, and OLH sends a few bits where OUE
sends k. Every value below comes from :func:`dpteach.local.local_variance` and
:func:`dpteach.local.olh_variance`; nothing is retyped. Notebook 17, section 6.
"""

from __future__ import annotations

import math

import numpy as np

from .._support.validate import PositiveInt, Real, Using, Values, checked
from ._inputs import valid_k
from .hashing import olh_hash_size, olh_variance
from .variance import local_variance

__all__ = ["PROTOCOLS", "protocol_variances", "k_randomized_response_crossover_k", "k_randomized_response_crossover_epsilon", "report_bits"]

#: the frequency oracles compared: k-RR, symmetric and optimized unary encoding, OLH
PROTOCOLS = ("krr", "sue", "oue", "olh")
#: the most variance evaluations one call of :func:`protocol_variances` makes (each is a
#: checked scalar call of the lesson function, about 20 µs): a panel's grid is a few hundred
MAX_POINTS = 20_000


def _var_star(k, epsilon, protocol):
    """n Var* of one frequency for one protocol, scalars (checked by the lesson functions)."""
    if protocol == "olh":
        return olh_variance(1, epsilon)          # a count's variance for n = 1 = n Var*
    return local_variance(1, k, epsilon, mechanism=protocol)


def _valid_protocol(protocol, name="protocol", allowed=PROTOCOLS):
    if not isinstance(protocol, str) or protocol not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {protocol!r}")
    return protocol


def _valid_against(against, name):
    """A protocol k-RR is compared with: one of PROTOCOLS but k-RR itself."""
    return _valid_protocol(against, name, PROTOCOLS[1:])


def _valid_protocols(protocols, name):
    """One name of PROTOCOLS, or a tuple or list of them, as a list."""
    if isinstance(protocols, str):
        protocols = (protocols,)
    if not isinstance(protocols, (tuple, list)):
        raise TypeError(f"{name} must be a tuple of names from {PROTOCOLS}, got {protocols!r}")
    return [_valid_protocol(p, name) for p in protocols]


@checked(k=Values(), epsilon=Values(), protocols=Using(_valid_protocols))
def protocol_variances(k, epsilon, protocols=PROTOCOLS) -> dict:
    """protocol -> n Var* (the variance of one estimated frequency, times n) at every
    (k, epsilon) (arrays broadcast), for the ``protocols`` asked (default all four).

    From :func:`dpteach.local.local_variance` (n = 1) and :func:`dpteach.local.olh_variance`
    (n = 1, g = round(e^eps + 1)). Only k-RR's depends on k [WBLJ17]. Notebook 17.
    """
    kk, ee = np.broadcast_arrays(k, epsilon)
    eps, where = np.unique(ee.ravel(), return_inverse=True)      # all but k-RR ignore k
    calls = eps.size * (len(set(protocols) - {"krr"})) + kk.size * ("krr" in protocols)
    if calls > MAX_POINTS:
        raise ValueError(f"k and epsilon ask for {calls} variance evaluations ({kk.size} (k, epsilon) "
                         f"points, {eps.size} distinct epsilons); at most {MAX_POINTS} per call: "
                         f"use a coarser grid")
    out = {p: np.array([_var_star(2, float(b), p) for b in eps])[where].reshape(kk.shape)
           for p in protocols if p != "krr"}
    if "krr" in protocols:
        out["krr"] = np.array([_var_star(a.item(), float(b), "krr")
                               for a, b in zip(kk.ravel(), ee.ravel())]).reshape(kk.shape)
    return out


@checked(epsilon=Real(low=1e-3, high=30.0), against=Using(_valid_against))
def k_randomized_response_crossover_k(epsilon, *, against="oue") -> float:
    """The domain size k at which k-RR's Var* equals ``against``'s; k-RR is better below it.

    k-RR's n Var* = (e^eps + k - 2) / (e^eps - 1)^2 grows linearly in k [WBLJ17];
    the others' V do not depend on k, so k = V (e^eps - 1)^2 - e^eps + 2. Against OUE
    (V = 4 e^eps / (e^eps - 1)^2) it is 3 e^eps + 2, :func:`dpteach.local.k_randomized_response_is_better`'s
    rule [WBLJ17]; against OLH the rounding of g moves it slightly. Notebook 17.
    """
    v = _var_star(2, epsilon, against)
    return float(v * np.expm1(epsilon) ** 2 - np.exp(epsilon) + 2.0)


@checked(k=PositiveInt(maximum=10**6), against=Using(_valid_against),
         low=Real(low=1e-3, high=30.0), high=Real(low=1e-3, high=30.0))
def k_randomized_response_crossover_epsilon(k, *, against="oue", low=1e-3, high=20.0):
    """The epsilon at which k-RR's Var* equals ``against``'s at domain size k (k-RR is
    better above it), or None when one of them is better on all of [low, high].

    Against OUE it is ln((k - 2) / 3); in general the root of the difference of the two
    variances (:func:`protocol_variances`), by scipy.optimize.brentq. Notebook 17.
    """
    if not low < high:
        raise ValueError(f"low must be below high, got low={low!r}, high={high!r}")

    def gap(e):
        return _var_star(k, e, "krr") - _var_star(k, e, against)

    if k < 2 or gap(low) * gap(high) > 0:
        return None
    from scipy.optimize import brentq   # loaded on first use: a fresh kernel pays for it only here

    return float(brentq(gap, low, high, xtol=1e-12))


@checked(k=Using(valid_k), epsilon=Real(low=1e-100, high=30.0),
         seed_bits=PositiveInt(maximum=4096), protocol=Using(_valid_protocol))
def report_bits(k, epsilon, protocol, *, seed_bits=64) -> int:
    """Bits one person sends: k-RR ceil(log2 k) (one category), SUE and OUE k (one bit per
    category), OLH ceil(log2 g) plus the hash function's seed (``seed_bits``). OLH keeps
    OUE's variance at a cost free of k [WBLJ17]. Notebook 17."""
    if protocol == "krr":
        return math.ceil(math.log2(k))
    if protocol == "olh":
        return math.ceil(math.log2(olh_hash_size(epsilon))) + seed_bits
    return k
