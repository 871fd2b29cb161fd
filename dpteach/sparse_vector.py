"""The sparse vector technique: AboveThreshold, its exact output distribution, and the
broken variants that look almost the same.

AboveThreshold (Dwork & Roth 2014, Algorithm 1 in Section 3.6 [DR14]) answers a stream
of sensitivity-Delta queries with "below" until the first one whose noisy answer clears a
noisy threshold, reports that one, and stops:

    T^ = T + rho,           rho ~ Lap(2 Delta / epsilon)     (drawn once)
    for i = 1, 2, ...:      nu_i ~ Lap(4 Delta / epsilon)
                            if a_i + nu_i >= T^: report i and stop

It is epsilon-DP however many queries come out "below" (DR14 Theorem 3.23): the proof
shifts the single threshold noise by Delta to keep every "below" answer below, which
costs epsilon/2 once, and the reported query's noise by 2 Delta, which costs epsilon/2.
Lyu, Su & Li, "Understanding the sparse vector technique for differential privacy"
(PVLDB 10(6), 2017) analyse variants published as private that are not; :data:`VARIANTS`
implements three slips next to the correct algorithm: no noise on the answers and no stop
after the first report (two of the errors they found, each on its own), and fresh threshold
noise per query (a slip of our own that breaks the proof's coupling). Taught in notebook 15.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._support.validate import (Count, Epsilon, Flag, NonnegativeInt, PositiveInt, Probability,
                        Real, Rng, Sensitivity, Using, checked, valid_count, valid_noise_scale,
                        valid_positive_int, valid_values)
from ._support.densities import laplace_cdf, laplace_pdf, laplace_sf
from .mechanisms import laplace_mechanism

__all__ = [
    "above_threshold",
    "sparse",
    "numeric_sparse",
    "sparse_scales",
    "sparse_draws",
    "SparseRuns",
    "sparse_run_error",
    "sparse_accuracy_bound",
    "noisy_top_c",
    "above_threshold_draws",
    "above_threshold_probabilities",
    "above_threshold_scales",
    "VARIANTS",
    "variant_mechanism",
    "variant_probabilities",
    "no_stop_pattern_probability",
    "accuracy_bound",
    "run_error",
    "example_answers",
]


#: the longest stream whose exact output distribution is computed by quadrature: the work
#: grows like k^2 (k outputs, each integrand evaluation O(k), a breakpoint per kink), about
#: a second at k = 1000; longer streams are simulated (:func:`above_threshold_draws`)
MAX_EXACT_QUERIES = 1000


def _valid_answers(query_answers, name="query_answers", *, maximum=None):
    a = valid_values(query_answers, name)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if maximum is not None and a.size > maximum:
        raise ValueError(f"query_answers must hold at most {maximum} queries for an exact "
                         f"distribution (quadrature, work ~ k^2), got k = {a.size}: simulate a "
                         f"longer stream with above_threshold_draws or sparse_draws")
    return a


def _valid_exact_answers(query_answers, name):
    """Answers of a stream short enough for an exact distribution (quadrature)."""
    return _valid_answers(query_answers, name, maximum=MAX_EXACT_QUERIES)


def _valid_variant(name, param):
    if name not in VARIANTS:
        raise ValueError(f"{param} must be one of {sorted(VARIANTS)}, got {name!r}")
    return name


def _valid_stopping_variant(name, param):
    if name not in VARIANTS or name == "no_stop":
        raise ValueError(f"{param} must be a stopping variant, one of "
                         f"{sorted(set(VARIANTS) - {'no_stop'})}, got {name!r}")
    return name


def _valid_gaps(a, t):
    """Errors a_i - T must be floats: answers and threshold at opposite ends of the float
    range (1e308 and -1e308) would give an infinite error."""
    with np.errstate(over="ignore", invalid="ignore"):
        if not np.isfinite(a - t).all():
            raise ValueError("query_answers and threshold are too far apart: a_i - threshold "
                             "overflows the float range (|a_i - threshold| must stay below 1.8e308)")


def _valid_scales(epsilon, sensitivity):
    """Both noise scales 2 Delta/eps and 4 Delta/eps of a checked budget in range."""
    with np.errstate(over="ignore"):
        valid_noise_scale(2.0 * sensitivity / epsilon, "sensitivity / epsilon",
                          "2 sensitivity / epsilon")
        valid_noise_scale(4.0 * sensitivity / epsilon, "sensitivity / epsilon",
                          "4 sensitivity / epsilon")


@checked(epsilon=Epsilon(), sensitivity=Sensitivity(positive=True))
def above_threshold_scales(epsilon, sensitivity=1.0):
    """(b_threshold, b_query) = (2 Delta / epsilon, 4 Delta / epsilon) [DR14 Algorithm 1],
    in the queries' units. Half the budget goes to the threshold, half to the one query
    that is reported (whose noise must cover a shift of 2 Delta). Both scales must lie in
    [1e-300, 1e305] (an extreme epsilon or sensitivity is refused, naming them). Notebook 15."""
    _valid_scales(epsilon, sensitivity)
    return 2.0 * sensitivity / epsilon, 4.0 * sensitivity / epsilon


@checked(query_answers=Using(_valid_answers), threshold=Real(), epsilon=Epsilon(),
         sensitivity=Sensitivity(positive=True), rng=Rng())
def above_threshold(query_answers, threshold, epsilon, *, sensitivity=1.0, rng=None):
    """AboveThreshold [DR14 Algorithm 1]: index of the first query reported above, or None.

    T^ = threshold + Lap(2 Delta / epsilon) once; then, query by query,
    a_i + Lap(4 Delta / epsilon) >= T^ reports index i (counting from 0) and stops;
    None means every query came out below. epsilon-DP for any number of queries when
    each answer a_i has sensitivity Delta (``sensitivity``) [DR14 Theorem 3.23].
    ``query_answers`` are the true answers a_1, a_2, ... in order (in a real analysis
    the queries may be chosen adaptively; here they are given up front). Only the index
    is released, never a noisy value. Notebook 15.
    """
    _valid_scales(epsilon, sensitivity)
    # Laplace noise of scale 2Δ/ε on the threshold and 4Δ/ε on each query
    noisy_threshold = laplace_mechanism(threshold, 2.0 * sensitivity, epsilon, rng=rng)
    for i, answer in enumerate(query_answers):
        if laplace_mechanism(answer, 4.0 * sensitivity, epsilon, rng=rng) >= noisy_threshold:
            return i
    return None



@checked(query_answers=Using(_valid_answers), threshold=Real(), epsilon=Epsilon(),
         sensitivity=Sensitivity(positive=True), rng=Rng())
def sparse(query_answers, threshold, epsilon, c, *, sensitivity=1.0, rng=None):
    """Sparse [DR14 Algorithm 2, delta = 0]: the indices of at most c queries reported above.

    AboveThreshold restarted after each answer: with sigma = 2 c Delta / epsilon, the
    threshold gets fresh noise Lap(sigma) at the start and after every answer, each query
    Lap(2 sigma); the run stops after c answers. Each of the c AboveThreshold runs spends
    epsilon / c, so the whole is epsilon-DP [DR14 Sec. 3.6]. With c = 1 it is
    :func:`above_threshold` (same noise, same distribution). Notebook 15.
    """
    _valid_scales(epsilon, sensitivity)
    c = valid_positive_int(c, "c", maximum=max(1, query_answers.size))   # c <= k
    sigma = sparse_scales(epsilon, c, sensitivity=sensitivity)[0]
    found = []
    noisy_threshold = threshold + rng.laplace(0.0, sigma)
    for i, answer in enumerate(query_answers):
        if answer + rng.laplace(0.0, 2.0 * sigma) >= noisy_threshold:
            found.append(i)
            if len(found) == c:
                break
            noisy_threshold = threshold + rng.laplace(0.0, sigma)
    return found


@checked(query_answers=Using(_valid_answers), threshold=Real(), epsilon=Epsilon(),
         sensitivity=Sensitivity(positive=True), rng=Rng())
def numeric_sparse(query_answers, threshold, epsilon, c, *, sensitivity=1.0, rng=None):
    """NumericSparse [DR14 Algorithm 3, delta = 0]: [(index, noisy answer)] for at most c
    queries reported above.

    The budget is split as epsilon_1 = 8 epsilon / 9 for :func:`sparse`'s choices and
    epsilon_2 = 2 epsilon / 9 for the values: each reported query's answer is released as
    a_i + Lap(2 c Delta / epsilon_2). The c values cost c * epsilon_2 / (2c) = epsilon / 9,
    so the whole is epsilon_1 + epsilon / 9 = epsilon-DP [DR14 Sec. 3.6]. Notebook 15.
    """
    _valid_scales(epsilon, sensitivity)
    c = valid_positive_int(c, "c", maximum=max(1, query_answers.size))   # c <= k
    b_value = sparse_scales(epsilon, c, sensitivity=sensitivity, numeric=True)[2]
    chosen = sparse(query_answers, threshold, 8.0 * epsilon / 9.0, c, sensitivity=sensitivity,
                    rng=rng)
    return [(i, float(query_answers[i] + rng.laplace(0.0, b_value))) for i in chosen]


@checked(epsilon=Epsilon(), sensitivity=Sensitivity(positive=True),
         c=PositiveInt(maximum=10**9), numeric=Flag())
def sparse_scales(epsilon, c, *, sensitivity=1.0, numeric=False):
    """(b_threshold, b_query, b_value): the Laplace scales of :func:`sparse` or
    :func:`numeric_sparse` [DR14 Algorithms 2 and 3, delta = 0], in the queries' units.

    Sparse: sigma = 2 c Delta / epsilon on every threshold and 2 sigma on every query
    (AboveThreshold's 2 Delta / eps' and 4 Delta / eps' at eps' = epsilon / c), no value:
    b_value is None. NumericSparse runs Sparse at epsilon_1 = 8 epsilon / 9 and releases
    each value with Lap(2 c Delta / epsilon_2), epsilon_2 = 2 epsilon / 9: the scales are
    9 c Delta / (4 epsilon), 9 c Delta / (2 epsilon) and 9 c Delta / epsilon. Every scale
    grows like c: the price of answering c queries with one budget. Notebook 15.
    """
    _valid_scales(epsilon, sensitivity)
    d = sensitivity
    if numeric:
        eps1, eps2 = 8.0 * epsilon / 9.0, 2.0 * epsilon / 9.0
        scales = 2.0 * c * d / eps1, 4.0 * c * d / eps1, 2.0 * c * d / eps2
    else:
        scales = 2.0 * c * d / epsilon, 4.0 * c * d / epsilon, None
    _valid_c_scale(max(b for b in scales if b is not None), "9 c sensitivity / epsilon" if numeric
                   else "4 c sensitivity / epsilon")
    return scales


def _valid_c_scale(b, formula):
    """The largest scale of c restarts must be usable too (c = 1000 at epsilon = 5e-305
    would draw infinite noise)."""
    with np.errstate(over="ignore"):
        return valid_noise_scale(b, "epsilon, c and sensitivity", formula)


class SparseRuns(NamedTuple):
    """Runs of Sparse or NumericSparse (:func:`sparse_draws`), arrays of shape (runs, k).

    answered: query i reported above in that run. examined: the run reached query i (it
    had fewer than c answers before it). noisy_answers: a_i + nu_i (drawn for every query;
    used only where examined). noisy_thresholds: T + rho in force at query i (after the
    stop, the last one). values: NumericSparse's a_i + Lap(b_value), released only where
    answered (None for Sparse).
    """
    answered: np.ndarray
    examined: np.ndarray
    noisy_answers: np.ndarray
    noisy_thresholds: np.ndarray
    values: np.ndarray | None


@checked(query_answers=Using(_valid_answers), threshold=Real(), epsilon=Epsilon(),
         sensitivity=Sensitivity(positive=True), numeric=Flag(), rng=Rng())
def sparse_draws(query_answers, threshold, epsilon, c, *, size, sensitivity=1.0, numeric=False,
                 rng=None) -> SparseRuns:
    """``size`` independent runs of :func:`sparse` (``numeric=True``: :func:`numeric_sparse`),
    vectorised, with the noise each run drew (a :class:`SparseRuns`).

    Same distribution as calling the function ``size`` times: each run draws c threshold
    noises Lap(b_threshold) (the j-th is in force after the j-th answer), one Lap(b_query)
    per query, and, for NumericSparse, one Lap(b_value) per query, released only for the
    answered ones (:func:`sparse_scales`). Notebook 15's panel and tables.
    """
    _valid_scales(epsilon, sensitivity)
    a, t, k = query_answers, threshold, query_answers.size
    c = valid_positive_int(c, "c", maximum=max(1, k))
    size = valid_count(size, "size", per_item=max(k, 1) * 3)
    b_threshold, b_query, b_value = sparse_scales(epsilon, c, sensitivity=sensitivity,
                                                  numeric=numeric)
    rho = t + rng.laplace(0.0, b_threshold, size=(size, c))
    noisy = a + rng.laplace(0.0, b_query, size=(size, k))
    answered = np.empty((k, size), dtype=bool)
    examined = np.empty((k, size), dtype=bool)
    thresholds = np.empty((k, size))
    count = np.zeros(size, dtype=np.int64)             # answers so far, per run
    rows = np.arange(size)
    for i in range(k):
        examined[i] = count < c
        thresholds[i] = rho[rows, np.minimum(count, c - 1)]
        answered[i] = examined[i] & (noisy[:, i] >= thresholds[i])
        count += answered[i]
    values = a + rng.laplace(0.0, b_value, size=(size, k)) if numeric else None
    return SparseRuns(answered.T, examined.T, noisy, thresholds.T, values)


@checked(query_answers=Using(_valid_answers), threshold=Real())
def sparse_run_error(query_answers, threshold, answered, c):
    """The error alpha of runs of Sparse [DR14 Def. 3.9, for c answers]: the smallest alpha
    such that every answered query has a_i >= T - alpha and every query examined and
    passed over (before the c-th answer) has a_i <= T + alpha. ``answered``: booleans,
    one row per run (shape (k,) or (runs, k)); returns one alpha per run, in the queries'
    units. With c = 1 it is :func:`run_error`. Notebook 15.
    """
    a, t = query_answers, threshold
    _valid_gaps(a, t)
    ans = _valid_booleans(answered, "answered", a.size, ndim=(1, 2))
    c = valid_positive_int(c, "c", maximum=max(1, a.size))
    before = np.cumsum(ans, axis=-1) - ans             # answers before query i
    passed = (before < c) & ~ans
    too_low = np.where(ans, t - a, 0.0).max(axis=-1)
    too_high = np.where(passed, a - t, 0.0).max(axis=-1)
    return np.maximum(np.maximum(too_low, too_high), 0.0)


@checked(c=PositiveInt(maximum=10**9), epsilon=Epsilon(),
         beta=Probability(low_open=True, high_open=True))
def sparse_accuracy_bound(k, epsilon, beta, c, *, sensitivity=1.0):
    """alpha = 8 c Delta (ln k + ln(2 c / beta)) / epsilon, in the queries' units.

    Sparse is c runs of AboveThreshold at epsilon / c; each is (alpha, beta / c)-accurate
    by :func:`accuracy_bound` [DR14 Theorem 3.24] at epsilon / c, and a union bound over
    the c runs gives (alpha, beta) for the whole, when at most c queries have answer
    >= T - alpha [DR14 Sec. 3.6, Sparse's accuracy for delta = 0]. It grows like c ln c
    at a fixed epsilon. Notebook 15.
    """
    try:
        return accuracy_bound(k, epsilon / c, beta / c, sensitivity=sensitivity)
    except ValueError as exc:
        if "outside the usable range" not in str(exc):
            raise
        raise ValueError(f"epsilon, c and sensitivity are outside the usable range: alpha = "
                         f"8 c sensitivity (ln k + ln(2c/beta)) / epsilon overflows, got epsilon="
                         f"{epsilon!r}, c={c!r}, sensitivity={sensitivity!r}") from None


@checked(query_answers=Using(_valid_answers), epsilon=Epsilon(),
         sensitivity=Sensitivity(positive=True), rng=Rng())
def noisy_top_c(query_answers, epsilon, c, *, sensitivity=1.0, rng=None):
    """The indices of c queries, in the order chosen, by the exponential mechanism run c
    times without replacement ("peeling"), at epsilon / c each.

    Round j picks query i among those not yet chosen with probability proportional to
    exp((epsilon / c) a_i / (2 Delta)) (:func:`dpteach.exponential_mechanism`, DR14 Sec. 3.4);
    each round is epsilon / c-DP, so the c rounds are epsilon-DP by composition. That is
    report noisy max with *Gumbel* noise of scale 2 c Delta / epsilon (the Gumbel-max trick),
    and the order of one draw of noisy answers is exactly a sample without replacement with
    these weights, so sorting it gives the c rounds at once (Durfee & Rogers, NeurIPS 2019):
    O(k log k). Report noisy max with Laplace noise
    (:func:`dpteach.report_noisy_max`, notebook 09) is a different mechanism that picks with
    different probabilities. When every query is known in advance this selects the large
    answers better than Sparse at the same epsilon, with no threshold to choose (Lyu, Su &
    Li 2017: in the non-interactive setting the exponential mechanism replaces SVT, with
    better accuracy). Notebook 15.
    """
    _valid_scales(epsilon, sensitivity)
    c = valid_positive_int(c, "c", maximum=max(1, query_answers.size))   # c <= k
    scale = _valid_c_scale(2.0 * c * sensitivity / epsilon, "2 c sensitivity / epsilon")
    # the exponential mechanism's weights, as noise
    noisy = query_answers + rng.gumbel(0.0, scale, size=query_answers.size)
    return np.argsort(-noisy, kind="stable")[:c].tolist()


@checked(query_answers=Using(_valid_answers), threshold=Real(), epsilon=Epsilon(),
         sensitivity=Sensitivity(positive=True), rng=Rng())
def above_threshold_draws(query_answers, threshold, epsilon, *, size, sensitivity=1.0, rng=None):
    """``size`` independent runs of :func:`above_threshold`, vectorised.

    Returns an int array of reported indices, with ``len(query_answers)`` standing for
    "none reported" (None in :func:`above_threshold`). Same distribution; the noise of
    queries after the stop is drawn but never used. Notebook 15.
    """
    _valid_scales(epsilon, sensitivity)
    size = valid_count(size, "size", per_item=max(query_answers.size, 1))   # size x k draws
    return _draw(query_answers, threshold, 2.0 * sensitivity / epsilon,
                 4.0 * sensitivity / epsilon, size, rng)


def _draw(a, t, b_threshold, b_query, size, rng, *, fresh=False, stop=True):
    k = a.size
    chunk = max(1, 2_000_000 // max(k, 1))
    parts = []
    for start in range(0, size, chunk):
        m = min(chunk, size - start)
        # the noise of above_threshold, for m runs at once (Lap(b) as numpy draws it, so
        # that a scale that overflows to inf stays a simulation, not an error)
        rho = rng.laplace(0.0, b_threshold, size=(m, k) if fresh else (m, 1))
        nu = rng.laplace(0.0, b_query, size=(m, k)) if b_query > 0 else 0.0
        above = a[None, :] + nu >= t + rho
        if not stop:
            parts.append(above)
        else:
            parts.append(np.where(above.any(axis=1), above.argmax(axis=1), k))
    return np.concatenate(parts)


@checked(query_answers=Using(_valid_exact_answers), threshold=Real(), epsilon=Epsilon(),
         sensitivity=Sensitivity(positive=True))
def above_threshold_probabilities(query_answers, threshold, epsilon, *, sensitivity=1.0):
    """Exact Pr[AboveThreshold reports query i], i = 0..k-1, and Pr[none] last (length k+1).

    Given the threshold noise rho, the queries are independent, so with
    F_j(r) = Pr[a_j + nu_j < T + r] (a Laplace CDF, scale 4 Delta / epsilon):

        Pr[report i] = integral f_rho(r) * prod_{j<i} F_j(r) * (1 - F_i(r)) dr
        Pr[none]     = integral f_rho(r) * prod_j F_j(r) dr

    with f_rho the Lap(2 Delta / epsilon) density. The integral over r is computed by
    adaptive quadrature (scipy.integrate.quad_vec) over |r| <= 60 threshold scales (the
    mass left outside is below e^-60), with breakpoints at the density's peak and at the
    kinks r = a_j - T: the probabilities sum to 1 (to 1e-12) however far the answers lie
    from the threshold. Notebook 15.
    """
    _valid_scales(epsilon, sensitivity)
    return _probabilities(query_answers, threshold, 2.0 * sensitivity / epsilon,
                          4.0 * sensitivity / epsilon)


def _over_threshold_noise(integrand, a, t, b_threshold, *, epsabs):
    """integral of integrand(r) dr, where integrand carries the Lap(b_threshold) density of
    the threshold noise r: over |r| <= 60 b_threshold (the mass left out is below e^-60),
    with breakpoints at the density's peak r = 0, at +-1, 4 and 16 scales and at every
    kink r = a_j - T inside, so that the peak is never missed however far the answers
    lie from the threshold (adaptive quadrature, scipy.integrate.quad_vec)."""
    from scipy import integrate
    window = 60 * b_threshold
    steps = np.array([0.0, 1.0, 4.0, 16.0]) * b_threshold
    kinks = a - t
    points = np.unique(np.concatenate([steps, -steps, kinks[np.abs(kinks) < window]]))
    return integrate.quad_vec(integrand, -window, window, points=points, epsabs=epsabs,
                              epsrel=1e-12)[0]


def _probabilities(a, t, b_threshold, b_query, *, fresh=False):
    # scipy.stats.laplace's pdf, cdf and sf, in closed form (the same floats, without
    # scipy.stats' per-call overhead, which the quadrature pays on every evaluation)
    k = a.size

    if fresh:
        # each query has its own threshold noise: q_j = Pr[a_j + nu_j >= T + rho_j]
        def above(r):
            return laplace_pdf(r, 0.0, b_threshold) * laplace_sf(t + r - a, 0.0, b_query)
        q = _over_threshold_noise(above, a, t, b_threshold, epsabs=1e-14)
        below_before = np.concatenate([[1.0], np.cumprod(1.0 - q)])
        return np.append(below_before[:-1] * q, below_before[-1])

    def integrand(r):
        below = laplace_cdf(t + r - a, 0.0, b_query)               # F_j(r), j = 0..k-1
        before = np.concatenate([[1.0], np.cumprod(below)])        # prod_{j<i} F_j(r)
        out = np.empty(k + 1)
        out[:k] = before[:k] * (1.0 - below)
        out[k] = before[k]
        return laplace_pdf(r, 0.0, b_threshold) * out

    return _over_threshold_noise(integrand, a, t, b_threshold, epsabs=1e-14)


# ------------------------------------------------------------------ the variants
#: name -> (description, truly private, source). Each is a mechanism(data, size, rng)
#: for :func:`dpteach.audit.audit` through :func:`variant_mechanism`.
VARIANTS = {
    "above_threshold": (
        "AboveThreshold: rho ~ Lap(2Δ/ε) once, nu_i ~ Lap(4Δ/ε), report the first index "
        "above and stop.", True,
        "Dwork & Roth 2014, Algorithm 1; Lyu, Su & Li 2017, Alg. 1 and 2 with c = 1"),
    "no_query_noise": (
        "No noise on the answers (nu_i = 0), only on the threshold; report the first index "
        "above and stop.", False,
        "the missing query noise of Lyu, Su & Li 2017, Alg. 5 (from Stoddard et al. 2014), "
        "which also answers every query; here with the stop, to isolate that slip"),
    "fresh_threshold_noise": (
        "A new threshold noise rho_i ~ Lap(2Δ/ε) for every query, nu_i ~ Lap(4Δ/ε); report "
        "the first index above and stop.", False,
        "not one of Lyu, Su & Li's algorithms: a slip built here to show why the proof of "
        "Dwork & Roth 2014, Thm 3.23 needs one threshold noise shared by all queries"),
    "no_stop": (
        "AboveThreshold's noises, but it answers every query above/below instead of "
        "stopping at the first above.", False,
        "no cutoff, as in Lyu, Su & Li 2017, Alg. 6 (from Chen et al. 2015; there with "
        "query noise Lap(2Δ/ε)) and Alg. 5"),
}


@checked(name=Using(_valid_variant), threshold=Real(), epsilon=Epsilon(),
         sensitivity=Sensitivity(positive=True))
def variant_mechanism(name, threshold, epsilon, *, sensitivity=1.0):
    """``mechanism(query_answers, size, rng)`` for :func:`dpteach.audit.audit`, one per
    entry of :data:`VARIANTS`, each claiming epsilon-DP. The stopping variants return
    reported indices (k for none); ``no_stop`` returns rows of k above/below bits. The
    returned mechanism checks its own arguments first: ``data`` finite answers, ``size``
    at most 10^8 / k runs (refused before any draw), ``rng`` a Generator."""
    _valid_scales(epsilon, sensitivity)
    t = threshold
    b_threshold = 2.0 * sensitivity / epsilon
    b_query = 0.0 if name == "no_query_noise" else 4.0 * sensitivity / epsilon

    def mechanism(data, size, rng):
        a = valid_values(data, "data")
        if a.ndim != 1:
            raise ValueError(f"data must be one-dimensional query answers, got shape {a.shape}")
        size = valid_count(size, "size", per_item=max(a.size, 1))
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        return _draw(a, t, b_threshold, b_query, size, rng,
                     fresh=name == "fresh_threshold_noise", stop=name != "no_stop")

    mechanism.__name__ = f"sparse_vector_{name}"
    return mechanism


@checked(name=Using(_valid_stopping_variant), query_answers=Using(_valid_exact_answers),
         threshold=Real(), epsilon=Epsilon(), sensitivity=Sensitivity(positive=True))
def variant_probabilities(name, query_answers, threshold, epsilon, *, sensitivity=1.0):
    """Exact distribution of a stopping variant's reported index (length k+1, "none" last):
    ``above_threshold`` and ``fresh_threshold_noise`` by quadrature, ``no_query_noise``
    from the threshold noise's CDF. Notebook 15 compares their exact privacy loss."""
    _valid_scales(epsilon, sensitivity)
    a, t = query_answers, threshold
    b_threshold, b_query = 2.0 * sensitivity / epsilon, 4.0 * sensitivity / epsilon
    if name == "no_query_noise":
        # report i iff a_i >= T + rho > max_{j<i} a_j: rho in (max_{j<i} a_j - T, a_i - T]
        prev = np.concatenate([[-np.inf], np.maximum.accumulate(a)])
        def cdf(x):                    # scipy.stats.laplace.cdf's floats, in closed form
            return laplace_cdf(x, 0.0, b_threshold)
        p = np.maximum(cdf(a - t) - cdf(prev[:-1] - t), 0.0)
        return np.append(p, 1.0 - cdf(prev[-1] - t))
    return _probabilities(a, t, b_threshold, b_query, fresh=name == "fresh_threshold_noise")


@checked(query_answers=Using(_valid_exact_answers), threshold=Real(), epsilon=Epsilon(),
         sensitivity=Sensitivity(positive=True))
def no_stop_pattern_probability(query_answers, pattern, threshold, epsilon, *, sensitivity=1.0):
    """Exact Pr[the ``no_stop`` variant answers every query as in ``pattern``].

    With one threshold noise rho ~ Lap(2 Delta/eps) and nu_j ~ Lap(4 Delta/eps):
    Pr = integral f_rho(r) prod_j [above_j ? 1 - F_j(r) : F_j(r)] dr, F_j(r) =
    Pr[a_j + nu_j < T + r], by quadrature as in :func:`above_threshold_probabilities`.
    ``pattern``: booleans, True = above. Notebook 15 uses it to show that the no-stop
    variant's loss grows with the number of answers above.
    """
    _valid_scales(epsilon, sensitivity)
    a, t = query_answers, threshold
    pat = _valid_booleans(pattern, "pattern", a.size, ndim=(1,))
    b_threshold, b_query = 2.0 * sensitivity / epsilon, 4.0 * sensitivity / epsilon

    def integrand(r):                  # scipy.stats.laplace's floats, as in _probabilities
        below = laplace_cdf(t + r - a, 0.0, b_query)
        return laplace_pdf(r, 0.0, b_threshold) * np.prod(np.where(pat, 1.0 - below, below))

    return float(_over_threshold_noise(integrand, a, t, b_threshold, epsabs=1e-15))


@checked(k=PositiveInt(maximum=10 ** 15), epsilon=Epsilon(),
         beta=Probability(low_open=True, high_open=True), sensitivity=Sensitivity(positive=True))
def accuracy_bound(k, epsilon, beta, *, sensitivity=1.0):
    """alpha = 8 Delta (ln k + ln(2/beta)) / epsilon, in the queries' units.

    [DR14 Theorem 3.24] (stated for sensitivity 1; with sensitivity Delta both noises, and
    so alpha, scale by Delta): for a stream of k queries of which no query before the last
    has answer >= T - alpha, AboveThreshold is (alpha, beta)-accurate [DR14 Def. 3.9]: with
    probability at least 1 - beta it does not stop before the last query, every query it
    reports has answer >= T - alpha and every query it passes over has answer <= T + alpha.
    The proof shows that with probability >= 1 - beta the threshold noise and all k query
    noises together move no comparison by more than alpha; that part, and so the bound on
    :func:`run_error`, holds for any stream of k queries. Natural logarithms. Notebook 15.
    """
    d = sensitivity
    alpha = 8.0 * d * (np.log(k) + np.log(2.0) - np.log(beta)) / epsilon
    if not np.isfinite(alpha):
        raise ValueError(f"epsilon and sensitivity are outside the usable range: alpha = 8 Δ (ln k + "
                         f"ln(2/beta)) / epsilon overflows, got epsilon={epsilon!r}, sensitivity={d!r}")
    return alpha


@checked(query_answers=Using(_valid_answers), threshold=Real())
def run_error(query_answers, threshold, index):
    """The error alpha of one run of AboveThreshold [DR14 Def. 3.9]: the smallest alpha
    such that the reported answer is >= T - alpha and every answer passed over is
    <= T + alpha. ``index`` is the reported index (``len(query_answers)`` or None: none
    reported). In the queries' units. Notebook 15."""
    a, t = query_answers, threshold
    _valid_gaps(a, t)
    index = a.size if index is None else _valid_index(index, a.size)
    err = 0.0
    if index > 0:
        err = max(err, float(a[:index].max() - t))
    if index < a.size:
        err = max(err, float(t - a[index]))
    return err


def _valid_booleans(values, name, k, *, ndim):
    """True/False flags, one per query (last axis of length k), as a bool array."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be booleans, got a string")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):          # ragged nesting
        raise TypeError(f"{name} must be an array of booleans, got {values!r:.60}") from None
    if arr.dtype.kind != "b" or arr.ndim not in ndim or arr.shape[-1:] != (k,):
        shapes = " or ".join("(k,)" if n == 1 else "(runs, k)" for n in ndim)
        raise ValueError(f"{name} must be booleans of shape {shapes} with k = {k} (the length of "
                         f"query_answers), got {arr.dtype} of shape {arr.shape}")
    return arr


def _valid_index(index, k):
    from ._support.validate import valid_nonnegative_int
    return valid_nonnegative_int(index, "index", maximum=k)


@checked(k=Count(maximum=10 ** 6), seed=NonnegativeInt())
def example_answers(k=60, *, seed=15):
    """A seeded stream of k counting-query answers (people; sensitivity 1): mostly
    between 20 and 60 with a slow upward drift, so that later queries clear a threshold
    of 70 more often. Invented for notebook 15; not real data."""
    rng = np.random.default_rng(seed)
    return np.round(np.clip(rng.normal(35, 12, size=k) + np.linspace(0, 25, k), 0, None))

