"""The statistics behind :func:`dpteach.coursework.exercises.check_mechanism` (machinery).

``check_mechanism = mechanism_judge(mechanism_collect(fn, mechanism_request(rng)))``:
the request draws hidden probe inputs and (Δ, ε) points, collect is the only part that
calls the student's function, judge is pure statistics on what was collected (an
audit, scale, atoms, one scale for every input, mean, tails, Kolmogorov-Smirnov). The
public names are re-exported by :mod:`dpteach.coursework.exercises`, whose docstrings say what
each test decides. This module holds the request, the collection and the entry point of
the judge; the statistical stages of the verdict live in :mod:`dpteach.coursework._mechanism_stats`.
"""

from __future__ import annotations

import math

import numpy as np

from ._feedback import ALPHA, failure, number_text as g, unsolved
from ._mechanism_stats import TAIL_MARGIN, TAIL_T, count_tests, judge

__all__ = ["MECHANISM_PROBE", "mechanism_request", "mechanism_collect", "mechanism_judge"]

#: (sensitivity, epsilon) at which check_mechanism also runs the student's mechanism:
#: there b = Δ/ε = 8 is at least twice or half every classic slip (ε, 1/ε, Δ, Δε, ε/Δ, 2Δ/ε)
MECHANISM_PROBE = (2.0, 0.25)


# ------------------------------------------------------------------ the Laplace mechanism
# check_mechanism = mechanism_judge(mechanism_collect(fn, mechanism_request(rng))).
# The request holds the hidden probe inputs and (Δ, ε) points; collect is the only part
# that calls the student's function; judge is pure statistics on the collected outputs.

#: probe inputs per (Δ, ε) point: _BASES base values, each with a neighbour at distance Δ
_BASES = 6
#: runs per probe input for a fast function (a slow one gets the minimum, about 14,000)
_MAX_RUNS = 30_000
#: seconds the calls may take for a fast function to get _MAX_RUNS runs per input
TARGET_SECONDS = 1.5
#: the check's own cost per call (loop, bookkeeping), added to the measured time
_LOOP_SECONDS = 3e-7
#: a function whose minimum runs would take longer than this is too slow to check
MAX_SECONDS = 60.0
#: rounds (one call per probe input each) made between two looks at the clock
_CHUNK = 1000
#: the clock that sizes the runs is CPU time, so a busy machine (other processes on the
#: cores) does not change how many runs a function gets, and so not the verdict; wall time
#: counts too, divided by this, so a function that sleeps is still found too slow
_WALL_SLACK = 5.0


def _clock():
    import time

    return time.process_time(), time.perf_counter()


def _since(t0):
    """Seconds since ``t0 = _clock()`` as the run sizing counts them: CPU seconds, or
    wall seconds / _WALL_SLACK when larger (a function that waits rather than computes)."""
    cpu, wall = _clock()
    return max(cpu - t0[0], (wall - t0[1]) / _WALL_SLACK)


def _call_release(fn, value, sensitivity, epsilon, rng):
    """One release as a float, or a Feedback-ready (reason, text) when it is not one."""
    try:
        out = fn(value, sensitivity, epsilon, rng)
    except Exception as exc:                                   # the student's bug, reported
        return None, ("error", f"calling it on value {g(value)} raised "
                               f"{type(exc).__name__}: {exc}")
    return _as_release(out, value)


def _as_release(out, value):
    """``out`` as a float, or (reason, text) naming what is wrong with it."""
    if unsolved(out):
        return None, ("unsolved", None)
    if isinstance(out, (bool, np.bool_, str, bytes)):
        return None, ("type", f"it returned {out!r}; a release must be one real number")
    try:
        arr = np.asarray(out)
    except Exception:                                          # an exotic object
        arr = np.asarray(None, dtype=object)
    if arr.dtype.kind not in "iuf" or arr.size != 1:
        return None, ("type", f"it returned {type(out).__name__} of shape {arr.shape}; "
                              "return ONE release, a single real number")
    x = float(arr.reshape(()))
    if not math.isfinite(x):
        return None, ("not_finite", f"it returned {x} for value {g(value)}; a release must "
                                    "be a finite number")
    return x, None



def _loguniform(rng, lo, hi):
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))



def _runs_needed(n_cells, alpha_each):
    """Runs per probe input so that noise cut off at ±10 Δ/ε fails: Laplace puts e^-10 of
    its runs beyond 10 b, so N pooled runs show none with probability (1 - e^-10)^N;
    that must be below alpha_each (N·e^-10 >= ln(1/alpha_each), about 20 expected)."""
    t = max(TAIL_T) * (1 + TAIL_MARGIN)
    pooled = math.log(1 / alpha_each) / -math.log1p(-math.exp(-t))
    return int(math.ceil(1.1 * pooled / n_cells / 1000.0) * 1000)


def mechanism_request(rng, *, sensitivity=None, epsilon=None, value=None, n=None,
                      alpha=ALPHA, seconds=TARGET_SECONDS, max_seconds=MAX_SECONDS):
    """The hidden probes of :func:`check_mechanism`, as plain data (a dict).

    Drawn from ``rng`` so that a student cannot special-case them:

    * ``points``: (Δ, ε) pairs: the caller's (``sensitivity``, ``epsilon``) if given,
      then one with Δ in [2, 20], ε in [0.05, 0.5] (every classic wrong scale -- ε, 1/ε,
      Δ, Δε, ε/Δ, Δ/(2ε) -- is at least a factor 2 below Δ/ε there), one with Δ in
      [0.2, 1], ε in [1, 10], and a third if the caller gave none (log-uniform draws);
    * ``inputs`` (points x 12): six base values -- ``value`` (or a draw in [-100, 100]),
      0, a negative non-integer, a random integer, ±[1e4, 1e7] and ±[1e8, 1e10] (capped at
      4e9·b so that float64 resolves the noise) -- each followed by its neighbour
      base ± Δ; ``pairs`` lists the neighbouring columns the audit compares (the
      first value and its neighbour);
    * ``seed`` (the student's Generator), ``order_seed`` (calls are made in a random
      order), ``repro_seed``; ``n_min`` / ``n_max`` runs per input (``n_min`` is what the
      tail test needs, raised to ``n`` if given), ``seconds`` (target time of the calls),
      ``max_seconds``, ``alpha``.
    """
    from .._support.validate import valid_epsilon, valid_positive_int, valid_real, valid_rng, \
        valid_sensitivity

    rng = valid_rng(rng)
    alpha = valid_real(alpha, "alpha", low=0.0, high=1.0, low_open=True, high_open=True)
    seconds = valid_real(seconds, "seconds", low=0.0, low_open=True)
    max_seconds = valid_real(max_seconds, "max_seconds", low=0.0, low_open=True)
    if n is not None:   # checked before the first draw from rng
        n = valid_positive_int(n, "n")
        if n < 1000:
            raise ValueError(f"n must be >= 1000 runs per input for a meaningful check, got {n}")
    first = None if value is None else valid_real(value, "value")
    points = []
    if sensitivity is not None or epsilon is not None:
        points.append((valid_sensitivity(sensitivity, positive=True), valid_epsilon(epsilon)))
    points.append((_loguniform(rng, 2, 20), _loguniform(rng, 0.05, 0.5)))
    points.append((_loguniform(rng, 0.2, 1), _loguniform(rng, 1, 10)))
    if len(points) < 3:
        points.append((_loguniform(rng, 0.5, 5), _loguniform(rng, 0.2, 2)))
    inputs = []
    for d, e in points:
        b = d / e
        cap = 4e9 * b
        sign = rng.choice([-1.0, 1.0], size=2)
        bases = [first if first is not None else rng.uniform(-100, 100), 0.0,
                 -rng.uniform(1, 1000), float(rng.integers(-1000, 1001)),
                 sign[0] * min(_loguniform(rng, 1e4, 1e7), cap / 100),
                 sign[1] * min(_loguniform(rng, 1e8, 1e10), cap)]
        row = []
        for v in bases:
            row += [float(v), float(v + rng.choice([-1.0, 1.0]) * d)]
        inputs.append(row)
    pairs = [[0, 1]]                  # audited: the caller's value and its neighbour
    n_cells = len(points) * 2 * _BASES
    alpha_each = alpha / count_tests(len(points), 2 * _BASES, len(pairs))
    n_min = _runs_needed(n_cells, alpha_each)
    if n is not None:
        n_min = max(n_min, n)
    seeds = rng.integers(2**63, size=3)
    return {"points": [list(p) for p in points], "inputs": inputs, "pairs": pairs,
            "seed": int(seeds[0]), "order_seed": int(seeds[1]), "repro_seed": int(seeds[2]),
            "n_min": int(n_min), "n_max": int(max(n_min, _MAX_RUNS)), "seconds": seconds,
            "max_seconds": max_seconds, "alpha": alpha}


def _some_none(prob, value, sensitivity, epsilon):
    """A None from a function that returned a number before is a bug, not 'unsolved'."""
    if prob[0] != "unsolved":
        return prob
    return ("type", f"it returned None for value {g(value)} (Δ = {g(sensitivity)}, ε = "
                    f"{g(epsilon)}); every call must return a release")


def _released_floats(res, vals, ds, es):
    """The releases of one collection as a float array, or (None, the first problem);
    vals, ds, es are the value, Δ and ε each release was made for."""
    kinds = set(map(type, res))
    if not kinds <= {float, np.float64}:
        ok = (float, int, np.float64, np.float32, np.float16, np.int64, np.int32)
        fixed = []
        for j, r in enumerate(res):
            if type(r) in ok:
                fixed.append(r)
                continue
            x, prob = _as_release(r, vals[j])
            if prob is not None:
                return None, _some_none(prob, vals[j], ds[j], es[j])
            fixed.append(x)
        res = fixed
    arr = np.asarray(res, dtype=float)
    bad = ~np.isfinite(arr)
    if bad.any():
        j = int(np.argmax(bad))
        return None, ("not_finite", f"it returned {arr[j]} for value {g(vals[j])} (Δ = "
                                    f"{g(ds[j])}, ε = {g(es[j])}); a release must be a "
                                    "finite number")
    return arr, None


def _warm_up(student_fn, request, cells_v, cells_d, cells_e):
    """Seconds taken by 200 warm-up calls on random probes (outputs checked, then
    discarded), or (None, the first problem)."""
    warm_rng = np.random.default_rng(request["repro_seed"] + 1)
    idx = warm_rng.integers(cells_v.size, size=200)
    warm = []
    t0 = _clock()
    try:
        for i in idx:
            warm.append(student_fn(float(cells_v[i]), float(cells_d[i]), float(cells_e[i]),
                                   warm_rng))
    except Exception as exc:                                   # the student's bug, reported
        i = idx[len(warm)]
        return None, ("error", f"calling it on value {g(cells_v[i])} (Δ = {g(cells_d[i])}, "
                               f"ε = {g(cells_e[i])}) raised {type(exc).__name__}: {exc}")
    elapsed = _since(t0)
    for i, w in zip(idx, warm):
        x, prob = _as_release(w, cells_v[i])
        if prob is not None:
            return None, _some_none(prob, cells_v[i], cells_d[i], cells_e[i])
    return elapsed, None


def _seeded_twice(student_fn, request, value, sensitivity, epsilon, repro):
    """Two releases with identically seeded generators, appended to repro; a problem or None."""
    for _ in range(2):
        x, prob = _call_release(student_fn, float(value), float(sensitivity),
                                float(epsilon), np.random.default_rng(request["repro_seed"]))
        if prob is not None:
            return prob
        repro.append(x)
    return None


def _never_varies(chunk, order, n_cells, rounds):
    """After the first chunk of rounds: does some input always give one value?"""
    first = np.empty((n_cells, rounds))
    first[order, np.repeat(np.arange(rounds), n_cells)] = np.asarray(
        [r if type(r) in (float, np.float64) else np.nan for r in chunk])
    return bool(np.any(np.all(first == first[:, :1], axis=1)))


def mechanism_collect(student_fn, request):
    """Run ``student_fn(value, sensitivity, epsilon, rng)`` on the request's probes.

    Returns plain data: ``problem`` (None, or {"reason", "text"} when the function
    raised, returned something that is not one finite real number, or is not written
    yet), ``repro`` (two releases made with identically seeded generators),
    ``outputs`` (inputs x runs float array: run j of every input is made in round j, the
    inputs of a round in random order, all from one Generator seeded by
    ``request["seed"]``), ``runs``, ``seconds_per_call``, ``seconds``, ``too_slow``.
    The number of runs adapts to the function's speed, measured on 200 warm-up calls:
    ``n_max`` per input if that fits in ``seconds`` (CPU time: :func:`_since`), else
    ``n_min`` (what the tail test needs); one too slow for ``n_min`` runs within
    ``max_seconds`` is not run further (``too_slow``; decided after the first 1,000
    rounds, which already show an input that never varies). Only this calls student code.
    """
    import time

    data = {"problem": None, "repro": [], "outputs": np.empty((0, 0)), "runs": 0,
            "seconds_per_call": float("nan"), "seconds": 0.0, "too_slow": False}
    start = time.perf_counter()

    def problem(reason, text):
        data["problem"] = {"reason": reason, "text": text}
        data["seconds"] = time.perf_counter() - start
        return data

    if unsolved(student_fn):
        return problem("unsolved", None)
    if not callable(student_fn):
        return problem("type", f"expected a function release(value, sensitivity, epsilon, "
                               f"rng), found {type(student_fn).__name__}")
    points = np.asarray(request["points"], dtype=float)
    inputs = np.asarray(request["inputs"], dtype=float)
    n_points, n_inputs = inputs.shape
    cells_v = inputs.ravel()
    cells_d = np.repeat(points[:, 0], n_inputs)
    cells_e = np.repeat(points[:, 1], n_inputs)
    n_cells = cells_v.size

    # 1. reproducibility: the same seed must give the same release
    prob = _seeded_twice(student_fn, request, cells_v[0], cells_d[0], cells_e[0], data["repro"])
    if prob is not None:
        return problem(*prob)

    # 2. speed: 200 warm-up calls on random probes (outputs checked, then discarded)
    elapsed, prob = _warm_up(student_fn, request, cells_v, cells_d, cells_e)
    if prob is not None:
        return problem(*prob)
    data["seconds_per_call"] = per_call = elapsed / 200  # elapsed: reused if runs stop early
    n_min, n_max = int(request["n_min"]), int(request["n_max"])
    if 1.5 * per_call * n_cells * min(_CHUNK, n_min) > float(request["max_seconds"]):
        data["too_slow"] = True
        data["seconds"] = time.perf_counter() - start
        return data
    # 3. the runs: round j calls every probe once, in a random order. A function fast
    # enough for n_max runs within the target time gets n_max, others n_min: two levels
    # keep the verdict reproducible (the same seed gives the same runs) on any machine
    est = per_call + _LOOP_SECONDS
    n = n_max if est * n_cells * n_max <= float(request["seconds"]) else n_min
    order_rng = np.random.default_rng(request["order_seed"])
    gen = np.random.default_rng(request["seed"])
    limit = float(request["max_seconds"])
    res, cells = [], []
    done = 0
    t0 = _clock()
    while done < n:
        rounds = min(_CHUNK, n - done)
        order = order_rng.permuted(np.tile(np.arange(n_cells), (rounds, 1)), axis=1).ravel()
        cv, cd, ce = cells_v[order].tolist(), cells_d[order].tolist(), cells_e[order].tolist()
        chunk = [None] * order.size
        k = 0
        try:
            for k in range(order.size):
                chunk[k] = student_fn(cv[k], cd[k], ce[k], gen)
        except Exception as exc:                               # the student's bug, reported
            return problem("error", f"calling it on value {g(cv[k])} (Δ = {g(cd[k])}, "
                                    f"ε = {g(ce[k])}) raised {type(exc).__name__}: {exc}")
        res += chunk
        cells.append(order)
        done += rounds
        if done == rounds and _never_varies(chunk, order, n_cells, rounds):
            break                         # no noise: the verdict needs no more runs
        elapsed = _since(t0)
        if done < n and elapsed * n / done > limit:       # slower than it looked
            if done >= n_min:
                break
            data["too_slow"] = True
            data["seconds_per_call"] = elapsed / (done * n_cells)
            data["seconds"] = time.perf_counter() - start
            return data
    order = np.concatenate(cells)
    arr, prob = _released_floats(res, cells_v[order], cells_d[order], cells_e[order])
    if prob is not None:
        return problem(*prob)
    outputs = np.empty((n_cells, done))
    outputs[order, np.repeat(np.arange(done), n_cells)] = arr
    data.update(outputs=outputs, runs=done, seconds_per_call=elapsed / (done * n_cells),
                seconds=time.perf_counter() - start)
    return data


#: a graded task fails a mechanism whose scale is, with confidence 1 - alpha_i, more than
#: this many times Δ/ε: N·mean|z|/b' ~ Gamma(N, 1), so the lower bound b̂/q_hi on b'
#: exceeds 1.5·b only when mean|z| > 1.5·q_hi·b. With N >= 12 × 14,000 runs per (Δ, ε)
#: point and alpha_i = 1e-6/274, q_hi = 1.014: 1.1 × Δ/ε fails only if its mean |z| is
#: 1.38 times its expectation, 2 × Δ/ε passes only if it is 0.76 times it; both have
#: probability below 1e-300 (tests/coursework/test_mechanism_waste.py), so both verdicts hold on
#: every seed, and a correct mechanism's chance of failing is unchanged.
WASTE_TOLERANCE = 1.5


def mechanism_judge(data, request, *, name="mechanism", max_waste=None):
    """Decide, from collected outputs alone, whether they come from Lap(Δ/ε) noise.

    Pure statistics on ``data`` (from :func:`mechanism_collect`) and ``request`` (from
    :func:`mechanism_request`); never calls student code; malformed data (missing keys,
    wrong shapes, NaN) gives a failing :class:`Feedback`, never an exception. The noise is
    z = output - input. Pure ε-DP for additive noise needs the SAME continuous
    distribution at every input with density ratio p(z)/p(z + Δ) <= e^ε: for Laplace,
    Lap(b') with b' >= b = Δ/ε [DR14 Thm 3.6]. In the order the verdict reports them:

    1. **no noise**: every run on some input returned one value;
    2. **privacy**: :func:`dpteach.audit.audit` on the pair (v, v ± Δ) of each point
       gives a (1 - alpha_i) lower bound on ε; above the claimed ε refutes it;
    3. **too little noise**: for Lap(b'), |z| ~ Exponential(b'), so N·mean|z| ~
       Gamma(N, b'); one-sided test of b' >= Δ/ε per (Δ, ε) point;
    4. **atoms**: continuous noise repeats a float64 value only by rounding: a value seen
       k times among n runs has probability <= C(n, k)·p^(k-1), p = the largest
       probability of one float (density 1/(2b') times the float spacing near the
       output, or the sampler's own 2^-53 grid); and the exact answer (z = 0) is
       returned at most as often as a Poisson bound allows. Clipping (np.clip), discrete
       noise, and "sometimes the exact answer" all repeat values far more often;
    5. **scale depends on the input**: per input, mean|z| against the mean over the
       other inputs of the same point: their ratio is F(2n, 2(m-1)n)-distributed under
       one common scale (two-sided);
    6. **bias**: mean z = 0 per input (normal approximation, two-sided);
    7. **cut-off tails**: counts of |z| > t·Δ/ε (t = 4, 6, 8, 10, all inputs pooled) are
       at least Binomial(N, e^-t) for any b' >= Δ/ε; counts of |z| > t·b̂ (b̂ = mean|z|
       per point; pooled, and t = 4, 6 per input) are at least Binomial(N, e^-t(1+κ)),
       where b̂ <= b'(1+κ) except with probability alpha_i (Gamma quantile). Too few
       means truncation, resampling or clipping, any of which breaks pure DP (an output
       beyond the cut is possible from one input, impossible from its neighbour);
    8. **shape**: Kolmogorov-Smirnov of z / b̂ against Laplace(0, 1) per input and of
       |z| / b̂ against Exponential(1) pooled (scipy.stats.kstwo p-values; estimating b̂
       from the same data makes the test conservative, as in Lilliefors' test).

    Every test runs at alpha_i = alpha / K (Bonferroni, K = 274 tests), so a correct
    Lap(b') mechanism with b' >= Δ/ε fails with probability at most alpha = 1e-6 (the
    bias test relies on the normal approximation to a mean of >= 14,000 Laplace
    variables). A pass with b' significantly above Δ/ε says by how much (reason
    "too_much_noise"). With ``max_waste`` (a graded "implement the Laplace mechanism"
    task passes :data:`WASTE_TOLERANCE`), a scale whose (1 - alpha_i) lower confidence
    bound exceeds ``max_waste`` × Δ/ε fails instead (reason "wasteful"): private, but it
    throws accuracy away by that factor. Notebook A3.
    """
    try:
        return judge(data, request, name, max_waste)
    except Exception as exc:                     # malformed data must never crash a grader
        return failure(name, f"the collected results could not be judged "
                             f"({type(exc).__name__}: {str(exc)[:200]}). Hint: run the check "
                             "again on an unchanged release(value, sensitivity, epsilon, rng).",
                       "malformed")
