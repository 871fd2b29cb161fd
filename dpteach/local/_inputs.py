"""The local model's input checks, shared by its modules (private: no notebook reads
this): a number of categories k, an epsilon the local estimates can divide by, category
indices, and how many people one call may simulate."""

from __future__ import annotations

import numpy as np

from .._support.validate import valid_epsilon, valid_positive_int, valid_values

MAX_K = 10**6
MAX_N = 10**15          # people: every count below it is an exact float


def valid_k(k, name="k", *, minimum=2):
    k = valid_positive_int(k, name, maximum=MAX_K)
    if k < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum} (the number of categories), "
                         f"got {k}")
    return k


#: the smallest epsilon the local estimates accept: their variance grows like 1/epsilon^2
#: (p - q is about epsilon / k), which overflows the float range below about 1e-150
MIN_EPSILON = 1e-100


def valid_local_epsilon(epsilon, name="epsilon"):
    """epsilon in [1e-100, inf): smaller ones make p - q, the estimates' divisor, vanish."""
    epsilon = valid_epsilon(epsilon, name)
    if epsilon < MIN_EPSILON:
        raise ValueError(f"{name} must be >= {MIN_EPSILON:g} in the local model (the estimates "
                         f"divide by p - q, about epsilon / k), got {epsilon!r}")
    return epsilon


def valid_people(n, per_person, name="values", what=""):
    """At most MAX_DRAWS random numbers per call: n people, ``per_person`` numbers each."""
    from .._support.validate import MAX_DRAWS
    if n * per_person > MAX_DRAWS:
        raise ValueError(f"{name} holds n = {n} people{what}, which needs {n * per_person:.3g} random "
                         f"numbers; at most {MAX_DRAWS:.0e} per call: simulate fewer people (or use "
                         f"report_counts, which draws the counts directly)")


def valid_categories(values, k, name="values"):
    arr = valid_values(values, name)
    if np.any(arr != np.floor(arr)) or np.any(arr < 0) or np.any(arr > k - 1):
        bad = arr[(arr != np.floor(arr)) | (arr < 0) | (arr > k - 1)].flat[0]
        raise ValueError(f"{name} must be category indices 0..{k - 1} (k = {k}), got {bad!r}")
    return arr.astype(np.intp)     # the index type: np.bincount takes no int64 where it is 32 bits
