"""The local model: each person randomises their own answer before it leaves them.

Randomized response for one bit (notebook 04, :func:`dpteach.randomized_response`) grows
here into two ways of reporting one of k categories, each epsilon-LDP for every person:

- **k-ary randomized response** (k-RR, generalized randomized response): report the true
  category with probability p = e^eps / (e^eps + k - 1), otherwise one of the other k - 1
  uniformly (each with probability q = 1 / (e^eps + k - 1)). For k = 2 it *is* binary
  randomized response.
- **unary encoding**: write the category as a one-hot vector of k bits and randomise each
  bit. Symmetric (SUE, the basic one-time RAPPOR): each bit kept with probability
  e^(eps/2) / (e^(eps/2) + 1), i.e. binary randomized response at eps/2 on every bit.
  Optimized (OUE, Wang et al. 2017): the 1-bit is kept with probability
  p = 1/2 and each 0-bit becomes 1 with probability q = 1 / (e^eps + 1).

Both are estimated by the same unbiased correction of the report counts,
f_hat = (c / n - q) / (p - q), whose variance (Wang, Blocki, Li & Jha, USENIX Security
2017) is

    Var[f_hat_v] = q (1 - q) / (n (p - q)^2) + f_v (1 - p - q) / (n (p - q)).

A central curator adding Laplace noise to the histogram instead has error about
1/(eps n) per frequency, against about 1/(eps sqrt(n)) in the local model. Notebook 17.

Units: values are category indices 0..k-1; frequencies are fractions of the n people;
variances are of those fractions.
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import (Epsilon, Flag, Rng, Using, checked, valid_bits, valid_count, valid_epsilon,
                        valid_flag, valid_nonnegative_int, valid_noise_scale, valid_positive_int,
                        valid_positive_ints, valid_real, valid_rng, valid_size, valid_values)
from .mechanisms import laplace_mechanism, randomized_response

__all__ = [
    "olh_hash_size",
    "olh_reports",
    "olh_estimate",
    "olh_variance",
    "MECHANISMS",
    "k_randomized_response_keep_probability",
    "k_randomized_response_probabilities",
    "k_randomized_response",
    "k_randomized_response_estimate",
    "unary_encoding_probabilities",
    "unary_encoding",
    "unary_encoding_estimate",
    "unary_encoding_output_probabilities",
    "local_epsilon",
    "local_variance",
    "central_variance",
    "report_counts",
    "estimate_from_counts",
    "central_histogram_estimate",
    "example_frequencies",
    "true_counts",
    "krr_is_better",
]

#: the local mechanisms of this module: name -> what it is
MECHANISMS = {
    "krr": "k-ary randomized response (keep with e^eps/(e^eps+k-1))",
    "sue": "symmetric unary encoding (each bit: randomized response at eps/2)",
    "oue": "optimized unary encoding (1-bit kept w.p. 1/2, 0-bit -> 1 w.p. 1/(e^eps+1))",
}

_MAX_K = 10**6
_MAX_N = 10**15          # people: every count below it is an exact float


def _valid_k(k, name="k", *, minimum=2):
    k = valid_positive_int(k, name, maximum=_MAX_K)
    if k < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum} (the number of categories), "
                         f"got {k}")
    return k


#: the smallest epsilon the local estimates accept: their variance grows like 1/epsilon^2
#: (p - q is about epsilon / k), which overflows the float range below about 1e-150
_MIN_EPSILON = 1e-100


def _valid_local_epsilon(epsilon, name="epsilon"):
    """epsilon in [1e-100, inf): smaller ones make p - q, the estimates' divisor, vanish."""
    epsilon = valid_epsilon(epsilon, name)
    if epsilon < _MIN_EPSILON:
        raise ValueError(f"{name} must be >= {_MIN_EPSILON:g} in the local model (the estimates "
                         f"divide by p - q, about epsilon / k), got {epsilon!r}")
    return epsilon


def _valid_mechanism(mechanism):
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {sorted(MECHANISMS)}, got {mechanism!r}")
    return mechanism


def _valid_people(n, per_person, name="values", what=""):
    """At most MAX_DRAWS random numbers per call: n people, ``per_person`` numbers each."""
    from ._validate import MAX_DRAWS
    if n * per_person > MAX_DRAWS:
        raise ValueError(f"{name} holds n = {n} people{what}, which needs {n * per_person:.3g} random "
                         f"numbers; at most {MAX_DRAWS:.0e} per call: simulate fewer people (or use "
                         f"report_counts, which draws the counts directly)")


def _valid_categories(values, k, name="values"):
    arr = valid_values(values, name)
    if np.any(arr != np.floor(arr)) or np.any(arr < 0) or np.any(arr > k - 1):
        bad = arr[(arr != np.floor(arr)) | (arr < 0) | (arr > k - 1)].flat[0]
        raise ValueError(f"{name} must be category indices 0..{k - 1} (k = {k}), got {bad!r}")
    return arr.astype(np.intp)     # the index type: np.bincount takes no int64 where it is 32 bits


# ------------------------------------------------------------------ k-ary randomized response
def k_randomized_response_keep_probability(k, epsilon) -> float:
    """p = e^eps / (e^eps + k - 1): the chance k-RR reports the true category.

    Computed as 1 / (1 + (k - 1) e^-eps), which never overflows. For k = 2 it equals
    :func:`dpteach.mechanisms.randomized_response_keep_probability` (notebook 04). Each other
    category is reported with q = (1 - p) / (k - 1) = 1 / (e^eps + k - 1), so p / q = e^eps
    [Wang et al. 2017 call it "direct encoding"]. Notebook 17.
    """
    k = _valid_k(k)
    epsilon = _valid_local_epsilon(epsilon)
    return float(1.0 / (1.0 + (k - 1) * np.exp(-epsilon)))


def _krr_pq(k, epsilon):
    p = k_randomized_response_keep_probability(k, epsilon)
    q = float(1.0 / (np.exp(epsilon) + k - 1)) if epsilon < 700 else 0.0
    return p, q


def k_randomized_response_probabilities(k, epsilon) -> np.ndarray:
    """The k x k matrix P[true, reported] of k-RR: p on the diagonal, q elsewhere.

    Every row sums to one; every column's largest over smallest entry is p / q = e^eps,
    which is the mechanism's exact local epsilon (:func:`local_epsilon`). Notebook 17.
    """
    k = _valid_k(k)
    if k > 4096:
        raise ValueError(f"k must be <= 4096 for the k x k matrix (16.8 million entries), got {k}")
    p, q = _krr_pq(k, _valid_local_epsilon(epsilon))
    P = np.full((k, k), q)
    np.fill_diagonal(P, p)
    return P


@checked(k=Using(_valid_k), epsilon=Using(_valid_local_epsilon), rng=Rng())
def k_randomized_response(values, k, epsilon, *, rng=None):
    """Each person reports their category with probability e^eps/(e^eps + k - 1),
    otherwise one of the other k - 1 categories uniformly at random.

    ``values``: integers in 0..k-1 (any shape); returns reports of the same shape. Each
    person is eps-LDP: any report is at most e^eps times likelier under one true category
    than under another (p / q = e^eps). For k = 2 this calls the binary
    :func:`dpteach.randomized_response` of notebook 04. Notebook 17.
    """
    v = _valid_categories(values, k)     # integers in 0..k-1
    _valid_people(v.size, 2)             # at most MAX_DRAWS draws
    if k == 2:
        out = np.asarray(randomized_response(v, epsilon, rng=rng)).astype(np.intp)
    else:
        p = k_randomized_response_keep_probability(k, epsilon)
        keep = rng.random(v.shape) < p
        # another category, uniform over the k - 1 that are not the truth
        other = (v + rng.integers(1, k, size=v.shape)) % k
        out = np.where(keep, v, other).astype(np.intp)   # category indices, like the input
    return int(out) if out.ndim == 0 else out


def k_randomized_response_estimate(reports, k, epsilon) -> np.ndarray:
    """Unbiased estimate of the k category frequencies from k-RR reports.

    With c_v reports of category v among n, E[c_v / n] = q + f_v (p - q), so
    f_hat_v = (c_v / n - q) / (p - q) [Wang et al. 2017]. Not clipped to
    [0, 1] (clipping would bias it); the estimates sum to one. Variance:
    :func:`local_variance` with ``mechanism="krr"``. For k = 2, f_hat_1 equals
    :func:`dpteach.randomized_response_estimate`. Notebook 17.
    """
    k = _valid_k(k)
    r = _valid_categories(reports, k, "reports").ravel()
    epsilon = _valid_local_epsilon(epsilon)
    counts = np.bincount(r, minlength=k)
    return estimate_from_counts(counts, r.size, k, epsilon, mechanism="krr")


# ------------------------------------------------------------------ unary encoding
def unary_encoding_probabilities(epsilon, *, optimized=True) -> tuple[float, float]:
    """(p, q): the chance a reported bit is 1 when the true bit is 1, and when it is 0.

    Symmetric (``optimized=False``): p = e^(eps/2) / (e^(eps/2) + 1), q = 1 - p (binary
    randomized response at eps/2 on every bit; two bits differ between any two inputs, so
    the total is eps). Optimized (OUE, Wang et al. 2017): p = 1/2,
    q = 1 / (e^eps + 1), chosen to minimise the estimator's variance. In both,
    p (1 - q) / ((1 - p) q) = e^eps. Notebook 17.
    """
    epsilon = _valid_local_epsilon(epsilon)
    optimized = valid_flag(optimized, "optimized")
    if optimized:
        return 0.5, float(1.0 / (1.0 + np.exp(epsilon))) if epsilon < 700 else 0.0
    p = float(1.0 / (1.0 + np.exp(-epsilon / 2)))
    return p, 1.0 - p


@checked(k=Using(_valid_k), epsilon=Using(_valid_local_epsilon), optimized=Flag(), rng=Rng())
def unary_encoding(values, k, epsilon, *, optimized=True, rng=None) -> np.ndarray:
    """Each person sends a randomised one-hot vector of k bits.

    ``values``: integers in 0..k-1, shape (n,) (or any shape S); returns 0/1 reports of
    shape S + (k,). The true category's bit is 1 with probability p, every other bit is 1
    with probability q (:func:`unary_encoding_probabilities`). Symmetric unary encoding is
    literally :func:`dpteach.randomized_response` at eps/2 applied to every bit of the
    one-hot vector (the basic one-time RAPPOR, Erlingsson, Pihur & Korolova 2014).
    Notebook 17.
    """
    v = _valid_categories(values, k)     # integers in 0..k-1
    _valid_people(v.size, k, what=f" of k = {k} bits each (values and k)")
    onehot = (v[..., None] == np.arange(k)).astype(np.int8)
    if not optimized:
        return np.asarray(randomized_response(onehot, epsilon / 2, rng=rng), dtype=np.int8)
    p, q = unary_encoding_probabilities(epsilon, optimized=True)
    return (rng.random(onehot.shape) < np.where(onehot == 1, p, q)).astype(np.int8)


def unary_encoding_estimate(reports, epsilon, *, optimized=True) -> np.ndarray:
    """Unbiased estimate of the k category frequencies from unary-encoding reports.

    ``reports``: 0/1 array of shape (n, k) (any leading shape; the last axis is the k
    bits). With c_v the number of reports whose bit v is 1, f_hat_v = (c_v / n - q) / (p - q)
    [Wang et al. 2017]. Variance: :func:`local_variance`. Notebook 17.
    """
    try:
        np.asarray(reports)
    except (TypeError, ValueError):          # ragged rows of different lengths
        raise TypeError("reports must be an (n, k) array of 0/1 bits, got rows of different "
                        "lengths") from None
    r = valid_bits(reports, "reports")
    if r.ndim < 1 or r.shape[-1] < 2:
        raise ValueError(f"reports must have the k >= 2 bits on its last axis, got shape {r.shape}")
    epsilon = _valid_local_epsilon(epsilon)
    optimized = valid_flag(optimized, "optimized")
    k = r.shape[-1]
    r = r.reshape(-1, k)
    return estimate_from_counts(r.sum(axis=0), r.shape[0], k, epsilon,
                                mechanism="oue" if optimized else "sue")


def unary_encoding_output_probabilities(k, epsilon, *, optimized=True) -> np.ndarray:
    """The full 2^k-output table P[true category, report] of unary encoding (k <= 12).

    Column j is the bit vector whose bit i is (j >> i) & 1. For checking the exact local
    epsilon by brute force (:func:`local_epsilon`); the mechanism itself never builds it.
    Notebook 17.
    """
    k = valid_positive_int(k, "k", maximum=12)
    if k < 2:
        raise ValueError(f"k must be an integer >= 2 (the number of categories), got {k}")
    p, q = unary_encoding_probabilities(epsilon, optimized=optimized)
    bits = (np.arange(2**k)[None, :] >> np.arange(k)[:, None]) & 1      # (k bits, 2^k outputs)
    out = np.empty((k, 2**k))
    for v in range(k):
        one = np.where(np.arange(k) == v, p, q)[:, None]                  # Pr[bit i = 1 | v]
        out[v] = np.prod(np.where(bits == 1, one, 1 - one), axis=0)
    return out


def olh_hash_size(epsilon) -> int:
    """g = round(e^epsilon + 1), the hash range that minimises OLH's variance [WBLJ17]."""
    epsilon = valid_real(epsilon, "epsilon", low=1e-100, high=30.0)  # g = e^epsilon + 1 buckets
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


def olh_reports(values, k, epsilon, *, rng=None):
    """Optimal local hashing [WBLJ17], the users' side: (seeds, reports), one per person.

    Each user draws a hash function H (a random seed) from 0..k-1 to 0..g-1, g =
    :func:`olh_hash_size`, and reports H with H(v) passed through g-ary randomized
    response: kept with probability p = e^epsilon / (e^epsilon + g - 1), otherwise one of
    the other g - 1 buckets uniformly. epsilon-LDP: the seed does not depend on v.
    ``values``: category indices 0..k-1, any shape (one person per entry, flattened).
    """
    x = _valid_categories(values, _valid_k(k)).ravel()
    epsilon = valid_epsilon(epsilon)
    g = olh_hash_size(epsilon)
    valid_count(x.size, "values (people)", per_item=3)       # three draws per person
    rng = valid_rng(rng)
    seeds = rng.integers(0, 2**63, size=x.size, dtype=np.int64)
    hashed = _hash(seeds, x, g).astype(np.int64)
    keep = rng.random(x.size) < math.exp(epsilon) / (math.exp(epsilon) + g - 1)
    other = (hashed + rng.integers(1, g, size=x.size)) % g
    return seeds, np.where(keep, hashed, other)


@checked(k=Using(_valid_k), epsilon=Epsilon(), rng=Rng())   # epsilon <= 30: olh_hash_size
def olh_estimate(values, k, epsilon, *, rng=None):
    """Unbiased OLH estimates of the counts of 0..k-1 [WBLJ17].

    From the users' (seed, report) pairs of :func:`olh_reports`, the support count of v is
    C(v) = #{users with H(v) = report}; with p = e^epsilon / (e^epsilon + g - 1) and
    q = 1/g (another value collides with the report by chance), the estimate is
    (C(v) - n q) / (p - q). Its variance is about n * 4 e^epsilon / (e^epsilon - 1)^2 at
    g = e^epsilon + 1 (:func:`olh_variance`), independent of k. The collector hashes all
    n * k (person, value) pairs, at most :data:`MAX_OLH_PAIRS` per call.
    """
    n = _valid_categories(values, k).size
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


def olh_variance(n, epsilon, *, g=None):
    """Variance of one OLH count estimate (true count small against n) [WBLJ17]:
    n q (1 - q) / (p - q)^2 with q = 1/g. ``g`` defaults to :func:`olh_hash_size`; any
    real g >= 2 is accepted so that the formula can be read at g = e^epsilon + 1 exactly,
    where it equals n * 4 e^epsilon / (e^epsilon - 1)^2."""
    n = valid_positive_int(n, "n", maximum=10**15)
    epsilon = valid_real(epsilon, "epsilon", low=1e-100, high=30.0)
    g = olh_hash_size(epsilon) if g is None else valid_real(g, "g", low=2.0, high=1e12)
    _, q, gap = _olh_pq(epsilon, g)
    return n * q * (1 - q) / gap ** 2


def local_epsilon(probabilities) -> float:
    """Exact local epsilon of a mechanism given as a table P[input, output]:
    max over outputs y and inputs x, x' of ln P[x, y] / P[x', y].

    Every person can hold any input, so every pair of inputs counts (the local model's
    neighbours). An output possible under one input and impossible under another gives
    inf. Notebook 17. (For one pair of output distributions:
    :func:`dpteach.definition.privacy_loss_between`.)
    """
    P = valid_values(probabilities, "probabilities")
    if P.ndim != 2 or P.shape[0] < 2:
        raise ValueError(f"probabilities must be a table with a row per input (>= 2 rows), "
                         f"got shape {P.shape}")
    if np.any(P < 0) or not np.allclose(P.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("probabilities must have non-negative rows that sum to 1")
    hi, lo = P.max(axis=0), P.min(axis=0)
    used = hi > 0
    if np.any(lo[used] == 0):
        return float("inf")
    return float(np.max(np.log(hi[used]) - np.log(lo[used])))


# ------------------------------------------------------------------ estimators' error
def _pq(mechanism, k, epsilon):
    """(p, q, p - q), with p - q computed without cancellation (it is tiny for small eps):
    k-RR (e^eps - 1)/(e^eps + k - 1), OUE tanh(eps/2)/2, SUE tanh(eps/4)."""
    if mechanism == "krr":
        p, q = _krr_pq(k, epsilon)
        gap = float(np.expm1(epsilon) / (np.exp(epsilon) + k - 1)) if epsilon < 700 else 1.0
    else:
        p, q = unary_encoding_probabilities(epsilon, optimized=mechanism == "oue")
        gap = float(np.tanh(epsilon / 2) / 2) if mechanism == "oue" else float(np.tanh(epsilon / 4))
    if gap == 0.0:
        raise ValueError(f"epsilon = {epsilon!r} is too small: the reports carry no signal in "
                         f"floating point (p - q = 0), so no estimate or variance exists")
    return p, q, gap


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
    :func:`dpteach.definition.rr_standard_error` squared. Notebook 17.
    """
    n = valid_positive_int(n, "n", maximum=_MAX_N)
    k = _valid_k(k)
    epsilon = _valid_local_epsilon(epsilon)
    mechanism = _valid_mechanism(mechanism)
    p, q, gap = _pq(mechanism, k, epsilon)
    var = q * (1 - q) / (n * gap**2)
    if frequency is None:
        return float(var)
    f = valid_values(frequency, "frequency")
    if np.any((f < 0) | (f > 1)):
        raise ValueError("frequency must lie in [0, 1]")
    out = var + f * (1 - p - q) / (n * gap)
    return float(out) if out.ndim == 0 else out


def central_variance(n, epsilon, *, sensitivity=1.0) -> float:
    """Variance of one frequency from a central Laplace histogram: 2 (Delta/eps)^2 / n^2.

    The curator adds Lap(Delta/eps) to every count (Delta = 1: adding or removing a person
    changes one count by one; Delta = 2: swapping one person's answer changes two counts by
    one, the relation of a local ε; Dwork & Roth 2014, section 3.3) and divides by n, taken
    as public. The standard deviation sqrt(2)/(eps n) shrinks like 1/n; the local model's
    like 1/sqrt(n). Notebook 17.
    """
    n = valid_positive_int(n, "n", maximum=_MAX_N)
    epsilon = _valid_local_epsilon(epsilon)
    sensitivity = valid_real(sensitivity, "sensitivity", low=0.0, low_open=True, high=1e100)
    with np.errstate(over="ignore", under="ignore"):
        var = 2.0 * np.square(np.float64(sensitivity) / epsilon) / np.float64(n) ** 2
    if not np.isfinite(var):
        raise ValueError(f"epsilon and sensitivity are outside the usable range: 2 (sensitivity / "
                         f"epsilon)^2 / n^2 overflows, got epsilon={epsilon!r}, sensitivity={sensitivity!r}")
    return float(var)


def krr_is_better(k, epsilon) -> bool:
    """True when k-RR's Var* is below OUE's: k - 2 < 3 e^eps (Wang et al. 2017 compare the two).

    From (e^eps + k - 2) < 4 e^eps. Notebook 17.
    """
    k = _valid_k(k)
    epsilon = _valid_local_epsilon(epsilon)
    return bool(k - 2 < 3 * np.exp(epsilon))


# ------------------------------------------------------------------ simulating many people fast
def example_frequencies(k) -> np.ndarray:
    """A skewed example distribution over k categories: f_v proportional to 1/(v + 1)
    (a Zipf law, as for the popularity of web pages or words). Notebook 17."""
    k = _valid_k(k)
    w = 1.0 / np.arange(1, k + 1)
    return w / w.sum()


def true_counts(n, frequencies) -> np.ndarray:
    """Integer counts summing to n, as close as possible to n * frequencies (largest
    remainders). Notebook 17."""
    n = valid_nonnegative_int(n, "n", maximum=_MAX_N)
    f = valid_values(frequencies, "frequencies")
    if f.ndim != 1 or np.any(f < 0) or not np.isclose(f.sum(), 1.0):
        raise ValueError("frequencies must be a 1-D array of non-negative numbers summing to 1")
    raw = n * f
    counts = np.floor(raw).astype(np.int64)
    short = n - counts.sum()
    counts[np.argsort(raw - counts)[::-1][:short]] += 1
    # the index type where the counts fit in it (np.repeat and np.bincount take no int64
    # where np.intp is 32 bits, as in the browser's Python)
    return counts.astype(np.intp) if n <= np.iinfo(np.intp).max else counts


def report_counts(counts, epsilon, *, mechanism="oue", rng=None, size=None) -> np.ndarray:
    """The k report counts c_v of n people, drawn from their exact joint distribution.

    ``counts``: how many people hold each category (length k). Same distribution as
    running :func:`k_randomized_response` or :func:`unary_encoding` person by person and
    counting, without the n x k work: for unary encoding c_v = Bin(n_v, p) + Bin(n - n_v, q),
    independent over v (the bits are independent). k-RR is the same as "with probability
    p - q report the truth, otherwise a category drawn uniformly from all k" (then the
    truth comes out with p - q + q = p and each other category with q), so
    c = Bin(n_v, p - q) for every v plus one Multinomial(rest, 1/k each). ``size``: that
    many independent repetitions (shape size + counts.shape; leading axes of ``counts``
    are separate datasets). Notebook 17.
    """
    c = valid_values(counts, "counts")
    if c.ndim < 1 or c.shape[-1] < 2 or np.any(c < 0) or np.any(c != np.floor(c)):
        raise ValueError("counts must hold k >= 2 non-negative whole numbers on its last axis")
    if np.any(c.sum(axis=-1) > _MAX_N):
        raise ValueError(f"counts must add up to at most {_MAX_N:g} people per dataset")
    c = c.astype(np.int64)
    epsilon = _valid_local_epsilon(epsilon)
    mechanism = _valid_mechanism(mechanism)
    # binomial draws are slow (about 0.1 µs each): at most 2 * 10^7 per call, two per cell
    size = valid_size(size, per_draw=2 * c.size, maximum=2 * 10 ** 7)
    if c.size > 10 ** 7:
        raise ValueError(f"counts must hold at most 10^7 cells (two binomial draws each), got {c.size}")
    rng = valid_rng(rng)
    k = c.shape[-1]
    n = c.sum(axis=-1, keepdims=True)
    shape = () if size is None else (size if isinstance(size, tuple) else (size,))
    shape = shape + c.shape          # several datasets (leading axes of counts) broadcast
    p, q, gap = _pq(mechanism, k, epsilon)
    if mechanism == "krr":
        truthful = rng.binomial(c, gap, size=shape)
        rest = n[..., 0] - truthful.sum(axis=-1)
        return truthful + rng.multinomial(rest, np.full(k, 1.0 / k))
    return rng.binomial(c, p, size=shape) + rng.binomial(n - c, q, size=shape)


def estimate_from_counts(counts, n, k, epsilon, *, mechanism="oue"):
    """f_hat_v = (c_v / n - q) / (p - q) for every report count c_v (last axis: the k
    categories; leading axes broadcast; ``n`` may be an array broadcasting against
    ``counts``, one n per dataset). The correction shared by
    :func:`k_randomized_response_estimate` and :func:`unary_encoding_estimate`. Notebook 17.
    """
    c = valid_values(counts, "counts")
    if np.ndim(n) == 0:
        n = valid_positive_int(n, "n", maximum=_MAX_N)
    else:
        n = valid_positive_ints(n, "n")
        if np.any(n > _MAX_N):
            raise ValueError(f"n must be <= {_MAX_N} in every entry, got {np.max(n):.6g}")
    k = _valid_k(k)
    epsilon = _valid_local_epsilon(epsilon)
    mechanism = _valid_mechanism(mechanism)
    _, q, gap = _pq(mechanism, k, epsilon)
    return (c / n - q) / gap


def central_histogram_estimate(counts, epsilon, *, sensitivity=1.0, rng=None,
                               size=None) -> np.ndarray:
    """The central model's frequencies: (counts + Lap(Δ/eps) each) / n, via
    :func:`dpteach.laplace_mechanism` (notebook 06). Δ = ``sensitivity``: 1 when one person
    is added or removed (one count moves by one), 2 when one person's answer is swapped for
    another (two counts move by one), the relation the local model's ε speaks of. Notebook 17."""
    c = valid_values(counts, "counts")
    if c.ndim != 1 or np.any(c < 0):
        raise ValueError("counts must be a 1-D array of non-negative counts")
    sensitivity = valid_real(sensitivity, "sensitivity", low=0.0, low_open=True)
    n = c.sum()
    if n <= 0:
        raise ValueError("counts must hold at least one person")
    epsilon = _valid_local_epsilon(epsilon)
    with np.errstate(over="ignore"):
        valid_noise_scale(sensitivity / epsilon, "epsilon and sensitivity", "sensitivity / epsilon")
    return laplace_mechanism(c, sensitivity, epsilon, rng=rng, size=size) / n
