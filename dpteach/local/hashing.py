"""Optimal local hashing (OLH, Wang, Blocki, Li & Jha 2017 [WBLJ17]): each person hashes
their category into g = round(e^eps + 1) buckets with a hash function of their own and
reports the bucket through g-ary randomized response, so a report is a few bits whatever
the domain size k, and the variance of a count does not grow with k. Notebook 17.
"""

from __future__ import annotations

import math

import numpy as np

from .._support.validate import (Epsilon, OrNone, PositiveInt, Real, Rng, Using, checked,
                                 valid_count, valid_values)
from ._inputs import valid_categories, valid_k

__all__ = ["olh_hash_size", "olh_reports", "olh_estimate", "olh_variance"]


@checked(epsilon=Real(low=1e-100, high=30.0))     # g = e^epsilon + 1 buckets
def olh_hash_size(epsilon) -> int:
    """g = round(e^epsilon + 1), the hash range that minimises OLH's variance [WBLJ17]."""
    return max(2, int(round(math.exp(epsilon) + 1.0)))


_GOLDEN, _MIX1, _MIX2 = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9),
                         np.uint64(0x94D049BB133111EB))

#: the most (person, value) pairs :func:`olh_estimate` hashes in one call: the collector
#: hashes every value of the domain with every person's function, n * k pairs (about 2 s
#: per 10^8 here); 10^5 people and k = 10^6 would take minutes
MAX_OLH_PAIRS = 10 ** 8


def _hash(seeds, values, g):
    """A keyed hash of ``values`` into 0..g-1 (uint64), one key per user (splitmix64
    finalisation of seed + value, then the top 32 bits scaled to g buckets): each user's
    function behaves as a fresh random function. Arrays broadcast."""
    with np.errstate(over="ignore"):
        z = seeds.astype(np.uint64) + _GOLDEN * (values.astype(np.uint64) + np.uint64(1))
        z ^= z >> np.uint64(30)
        z *= _MIX1
        z ^= z >> np.uint64(27)
        z *= _MIX2
        z ^= z >> np.uint64(31)
        if g < 2 ** 32:                  # multiply-high: (top 32 bits) * g / 2^32, no division
            z >>= np.uint64(32)
            z *= np.uint64(g)
            z >>= np.uint64(32)
        else:
            z %= np.uint64(g)
    return z


def _olh_pq(epsilon, g):
    """(p, q, p - q) of OLH: p = e^eps / (e^eps + g - 1), q = 1/g, and p - q computed as
    (g - 1)(e^eps - 1) / (g (e^eps + g - 1)), without cancellation (at epsilon = 1e-20,
    p and q are both 0.5 in floating point, and p - q would be 0)."""
    e = math.exp(epsilon)
    return e / (e + g - 1), 1.0 / g, (g - 1) * math.expm1(epsilon) / (g * (e + g - 1))


def _valid_people(values, name):
    """Numeric values of at most MAX_DRAWS / 3 people (three draws per person)."""
    people = valid_values(values, name)
    valid_count(people.size, f"{name} (people)", per_item=3)
    return values                    # the category check, against k, is the function's


@checked(k=Using(valid_k), values=Using(_valid_people), epsilon=Epsilon(), rng=Rng())
def olh_reports(values, k, epsilon, *, rng=None):
    """Optimal local hashing [WBLJ17], the users' side: (seeds, reports), one per person.

    Each user draws a hash function H (a random seed) from 0..k-1 to 0..g-1, g =
    :func:`olh_hash_size`, and reports H with H(v) passed through g-ary randomized
    response: kept with probability p = e^epsilon / (e^epsilon + g - 1), otherwise one of
    the other g - 1 buckets uniformly. epsilon-LDP: the seed does not depend on v.
    ``values``: category indices 0..k-1, any shape (one person per entry, flattened).
    """
    x = valid_categories(values, k).ravel()           # integers in 0..k-1
    g = olh_hash_size(epsilon)                         # epsilon <= 30
    seeds = rng.integers(0, 2**63, size=x.size, dtype=np.int64)
    hashed = _hash(seeds, x, g).astype(np.int64)
    keep = rng.random(x.size) < math.exp(epsilon) / (math.exp(epsilon) + g - 1)
    other = (hashed + rng.integers(1, g, size=x.size)) % g
    return seeds, np.where(keep, hashed, other)


@checked(k=Using(valid_k), epsilon=Epsilon(), rng=Rng())   # epsilon <= 30: olh_hash_size
def olh_estimate(values, k, epsilon, *, rng=None):
    """Unbiased OLH estimates of the counts of 0..k-1 [WBLJ17].

    From the users' (seed, report) pairs of :func:`olh_reports`, the support count of v is
    C(v) = #{users with H(v) = report}; with p = e^epsilon / (e^epsilon + g - 1) and
    q = 1/g (another value collides with the report by chance), the estimate is
    (C(v) - n q) / (p - q). Its variance is about n * 4 e^epsilon / (e^epsilon - 1)^2 at
    g = e^epsilon + 1 (:func:`olh_variance`), independent of k. The collector hashes all
    n * k (person, value) pairs, at most :data:`MAX_OLH_PAIRS` per call.
    """
    n = valid_categories(values, k).size
    if n * k > MAX_OLH_PAIRS:
        raise ValueError(f"values and k ask the collector to hash n * k = {n * k:.3g} (person, value) "
                         f"pairs (n = {n} people, k = {k}); at most {MAX_OLH_PAIRS:.0e} per call: use "
                         f"fewer people or a smaller domain (olh_variance gives the variance at any n)")
    seeds, reports = olh_reports(values, k, epsilon, rng=rng)
    g = olh_hash_size(epsilon)
    _, q, gap = _olh_pq(epsilon, g)
    support = np.zeros(k, dtype=np.int64)
    step = max(1, 2_000_000 // k)
    cells = np.arange(k)[None, :]
    for start in range(0, seeds.size, step):
        s, r = seeds[start:start + step, None], reports[start:start + step, None]
        support += np.count_nonzero(_hash(s, cells, g) == r.astype(np.uint64), axis=0)
    return (support - seeds.size * q) / gap


@checked(n=PositiveInt(maximum=10**15), epsilon=Real(low=1e-100, high=30.0),
         g=OrNone(Real(low=2.0, high=1e12)))
def olh_variance(n, epsilon, *, g=None):
    """Variance of one OLH count estimate (true count small against n) [WBLJ17]:
    n q (1 - q) / (p - q)^2 with q = 1/g. ``g`` defaults to :func:`olh_hash_size`; any
    real g >= 2 is accepted so that the formula can be read at g = e^epsilon + 1 exactly,
    where it equals n * 4 e^epsilon / (e^epsilon - 1)^2."""
    g = olh_hash_size(epsilon) if g is None else g
    _, q, gap = _olh_pq(epsilon, g)
    return n * q * (1 - q) / gap ** 2
