"""The statistics behind :func:`dpteach.exercises.check_mechanism` (machinery).

``check_mechanism = mechanism_judge(mechanism_collect(fn, mechanism_request(rng)))``:
the request draws hidden probe inputs and (Δ, ε) points, collect is the only part that
calls the student's function, judge is pure statistics on what was collected (an
audit, scale, atoms, one scale for every input, mean, tails, Kolmogorov-Smirnov). The
public names are re-exported by :mod:`dpteach.exercises`, whose docstrings say what
each test decides; this module holds how.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._feedback import ALPHA, NOT_SOLVED, Feedback, _fail, _g, _unsolved

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
#: multiples t of the scale at which the pooled tail counts are tested (the largest one
#: sets the minimum number of runs: Laplace cut off at ±10 Δ/ε must fail)
_TAIL_T = (4.0, 6.0, 8.0, 10.0)
#: the same, per probe input (a cut-off that happens only for some inputs)
_CELL_TAIL_T = (4.0, 6.0)
#: runs per probe input for a fast function (a slow one gets the minimum, about 14,000)
_MAX_RUNS = 30_000
#: seconds the calls may take for a fast function to get _MAX_RUNS runs per input
_TARGET_SECONDS = 1.5
#: the check's own cost per call (loop, bookkeeping), added to the measured time
_LOOP_SECONDS = 3e-7
#: a function whose minimum runs would take longer than this is too slow to check
_MAX_SECONDS = 60.0
#: rounds (one call per probe input each) made between two looks at the clock
_CHUNK = 1000
#: relative margin above t·Δ/ε for the tail counts, so that noise clipped exactly at
#: t·Δ/ε (rounded in float64) is not counted as beyond it
_TAIL_MARGIN = 1e-6
_PROBLEM_REASONS = ("error", "unsolved", "type", "not_finite")


def _call_release(fn, value, sensitivity, epsilon, rng):
    """One release as a float, or a Feedback-ready (reason, text) when it is not one."""
    try:
        out = fn(value, sensitivity, epsilon, rng)
    except Exception as exc:                                   # the student's bug, reported
        return None, ("error", f"calling it on value {_g(value)} raised "
                               f"{type(exc).__name__}: {exc}")
    return _as_release(out, value)


def _as_release(out, value):
    """``out`` as a float, or (reason, text) naming what is wrong with it."""
    if _unsolved(out):
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
        return None, ("not_finite", f"it returned {x} for value {_g(value)}; a release must "
                                    "be a finite number")
    return x, None


def _slip_guess(b_hat, sensitivity, epsilon):
    """The classic wrong scale that b_hat matches (within 6%), or ''."""
    b = sensitivity / epsilon
    slips = [("b = ε", epsilon), ("b = 1/ε, leaving out the sensitivity", 1 / epsilon),
             ("b = Δ, leaving out ε", sensitivity), ("b = Δ·ε", sensitivity * epsilon),
             ("b = ε/Δ", epsilon / sensitivity), ("b = 2Δ/ε", 2 * b),
             ("b = Δ/(2ε)", b / 2), ("b = 10Δ/ε", 10 * b), ("b = Δ/(10ε)", b / 10)]
    for text, s in slips:
        if abs(s / b - 1) > 0.1 and abs(b_hat / s - 1) < 0.06:
            return text
    return ""


def _loguniform(rng, lo, hi):
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _n_tests(n_points, n_inputs, n_pairs):
    """How many tests mechanism_judge runs (each gets alpha / this many)."""
    per_cell = 5 + len(_CELL_TAIL_T)        # atoms, scale, bias, KS, κ bound, tails
    per_point = 3 + n_pairs                 # too little, too much, κ bound, audits
    pooled = 2 * len(_TAIL_T) + 2           # tails (Δ/ε and b̂), KS, exact answers
    return n_points * n_inputs * per_cell + n_points * per_point + pooled


def _runs_needed(n_cells, alpha_each):
    """Runs per probe input so that noise cut off at ±10 Δ/ε fails: Laplace puts e^-10 of
    its runs beyond 10 b, so N pooled runs show none with probability (1 - e^-10)^N;
    that must be below alpha_each (N·e^-10 >= ln(1/alpha_each), about 20 expected)."""
    t = max(_TAIL_T) * (1 + _TAIL_MARGIN)
    pooled = math.log(1 / alpha_each) / -math.log1p(-math.exp(-t))
    return int(math.ceil(1.1 * pooled / n_cells / 1000.0) * 1000)


def mechanism_request(rng, *, sensitivity=None, epsilon=None, value=None, n=None,
                      alpha=ALPHA, seconds=_TARGET_SECONDS, max_seconds=_MAX_SECONDS):
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
    from ._checks import check_epsilon, check_positive_int, check_real, check_rng, \
        check_sensitivity

    rng = check_rng(rng)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    seconds = check_real("seconds", seconds, low=0.0, low_open=True)
    max_seconds = check_real("max_seconds", max_seconds, low=0.0, low_open=True)
    if n is not None:   # checked before the first draw from rng
        n = check_positive_int(n, "n")
        if n < 1000:
            raise ValueError(f"n must be >= 1000 runs per input for a meaningful check, got {n}")
    first = None if value is None else check_real("value", value)
    points = []
    if sensitivity is not None or epsilon is not None:
        points.append((check_sensitivity(sensitivity, positive=True), check_epsilon(epsilon)))
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
    alpha_each = alpha / _n_tests(len(points), 2 * _BASES, len(pairs))
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
    return ("type", f"it returned None for value {_g(value)} (Δ = {_g(sensitivity)}, ε = "
                    f"{_g(epsilon)}); every call must return a release")


def mechanism_collect(student_fn, request):
    """Run ``student_fn(value, sensitivity, epsilon, rng)`` on the request's probes.

    Returns plain data: ``problem`` (None, or {"reason", "text"} when the function
    raised, returned something that is not one finite real number, or is not written
    yet), ``repro`` (two releases made with identically seeded generators),
    ``outputs`` (inputs x runs float array: run j of every input is made in round j, the
    inputs of a round in random order, all from one Generator seeded by
    ``request["seed"]``), ``runs``, ``seconds_per_call``, ``seconds``, ``too_slow``.
    The number of runs adapts to the function's speed, measured on 200 warm-up calls:
    ``n_max`` per input if that fits in ``seconds``, else ``n_min`` (what the tail test
    needs); a function too slow for ``n_min`` runs within ``max_seconds`` is not run
    further (``too_slow``; decided after the first 1,000 rounds, which already show an
    input that never varies). This is the only part of the check that calls student
    code.
    """
    import time

    data = {"problem": None, "repro": [], "outputs": np.empty((0, 0)), "runs": 0,
            "seconds_per_call": float("nan"), "seconds": 0.0, "too_slow": False}
    start = time.perf_counter()

    def problem(reason, text):
        data["problem"] = {"reason": reason, "text": text}
        data["seconds"] = time.perf_counter() - start
        return data

    if _unsolved(student_fn):
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
    for _ in range(2):
        x, prob = _call_release(student_fn, float(cells_v[0]), float(cells_d[0]),
                                float(cells_e[0]), np.random.default_rng(request["repro_seed"]))
        if prob is not None:
            return problem(*prob)
        data["repro"].append(x)

    # 2. speed: 200 warm-up calls on random probes (outputs checked, then discarded)
    warm_rng = np.random.default_rng(request["repro_seed"] + 1)
    idx = warm_rng.integers(n_cells, size=200)
    warm = []
    t0 = time.perf_counter()
    try:
        for i in idx:
            warm.append(student_fn(float(cells_v[i]), float(cells_d[i]), float(cells_e[i]),
                                   warm_rng))
    except Exception as exc:                                   # the student's bug, reported
        i = idx[len(warm)]
        return problem("error", f"calling it on value {_g(cells_v[i])} (Δ = {_g(cells_d[i])}, "
                                f"ε = {_g(cells_e[i])}) raised {type(exc).__name__}: {exc}")
    elapsed = time.perf_counter() - t0
    for i, w in zip(idx, warm):
        x, prob = _as_release(w, cells_v[i])
        if prob is not None:
            return problem(*_some_none(prob, cells_v[i], cells_d[i], cells_e[i]))
    per_call = elapsed / idx.size
    data["seconds_per_call"] = per_call
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
    fn = student_fn
    limit = float(request["max_seconds"])
    res, cells = [], []
    done = 0
    t0 = time.perf_counter()
    while done < n:
        rounds = min(_CHUNK, n - done)
        order = order_rng.permuted(np.tile(np.arange(n_cells), (rounds, 1)), axis=1).ravel()
        cv, cd, ce = cells_v[order].tolist(), cells_d[order].tolist(), cells_e[order].tolist()
        chunk = [None] * order.size
        k = 0
        try:
            for k in range(order.size):
                chunk[k] = fn(cv[k], cd[k], ce[k], gen)
        except Exception as exc:                               # the student's bug, reported
            return problem("error", f"calling it on value {_g(cv[k])} (Δ = {_g(cd[k])}, "
                                    f"ε = {_g(ce[k])}) raised {type(exc).__name__}: {exc}")
        res += chunk
        cells.append(order)
        done += rounds
        if done == rounds:                # after the first chunk: an input that never varies
            first = np.empty((n_cells, rounds))
            first[order, np.repeat(np.arange(rounds), n_cells)] = np.asarray(
                [r if type(r) in (float, np.float64) else np.nan for r in chunk])
            if np.any(np.all(first == first[:, :1], axis=1)):
                break                     # no noise: the verdict needs no more runs
        elapsed = time.perf_counter() - t0
        if done < n and elapsed * n / done > limit:       # slower than it looked
            if done >= n_min:
                break
            data["too_slow"] = True
            data["seconds_per_call"] = elapsed / (done * n_cells)
            data["seconds"] = time.perf_counter() - start
            return data
    order = np.concatenate(cells)
    vals, ds, es = cells_v[order], cells_d[order], cells_e[order]
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
                return problem(*_some_none(prob, vals[j], ds[j], es[j]))
            fixed.append(x)
        res = fixed
    arr = np.asarray(res, dtype=float)
    bad = ~np.isfinite(arr)
    if bad.any():
        j = int(np.argmax(bad))
        return problem("not_finite", f"it returned {arr[j]} for value {_g(vals[j])} (Δ = "
                                     f"{_g(ds[j])}, ε = {_g(es[j])}); a release must be a "
                                     "finite number")
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
#: probability below 1e-300 (tests/test_mechanism_waste.py), so both verdicts hold on
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
        return _judge(data, request, name, max_waste)
    except Exception as exc:                     # malformed data must never crash a grader
        return _fail(name, f"the collected results could not be judged "
                           f"({type(exc).__name__}: {str(exc)[:200]}). Hint: run the check "
                           "again on an unchanged release(value, sensitivity, epsilon, rng).",
                     "malformed")


def _malformed(name, what):
    return _fail(name, f"the collected results are malformed ({what}). Hint: run the check "
                       "again on an unchanged release(value, sensitivity, epsilon, rng).",
                 "malformed")


def _judge(data, request, name, max_waste=None):
    from scipy import stats, special

    from .audit import audit

    if not isinstance(data, dict) or not isinstance(request, dict):
        return _malformed(name, "expected dicts")
    prob = data.get("problem")
    if prob is not None:
        if not isinstance(prob, dict) or prob.get("reason") not in _PROBLEM_REASONS:
            return _malformed(name, "unknown problem report")
        text = prob.get("text")
        return _problem_feedback(name, (prob["reason"], None if text is None else
                                        str(text)[:400]))
    points = np.asarray(request["points"], dtype=float)
    inputs = np.asarray(request["inputs"], dtype=float)
    pairs = np.asarray(request["pairs"], dtype=int)
    alpha = float(request["alpha"])
    n_min = int(request["n_min"])
    if (points.ndim != 2 or points.shape[1] != 2 or inputs.ndim != 2
            or inputs.shape[0] != points.shape[0] or pairs.ndim != 2 or pairs.shape[1] != 2
            or not (np.all(np.isfinite(points)) and np.all(points > 0)
                    and np.all(np.isfinite(inputs)) and 0 < alpha < 1)):
        return _malformed(name, "the request")
    n_points, m = inputs.shape
    per_call = data.get("seconds_per_call")
    if data.get("too_slow"):
        us = _g(float(per_call) * 1e6, 3) if isinstance(per_call, numbers.Real) else "?"
        return _fail(name, f"too slow to check properly: about {us} µs per call, and the "
                           f"check needs at least {n_min * n_points * m:,} calls to see the "
                           f"tails of the noise (more than {_g(float(request['max_seconds']))} s). "
                           "Hint: keep the function to value + noise; no input checks, "
                           "printing or new Generators inside it.", "too_slow",
                     seconds_per_call=per_call)
    repro = data.get("repro")
    if (not isinstance(repro, (list, tuple, np.ndarray)) or len(repro) != 2
            or not all(isinstance(r, numbers.Real) and math.isfinite(r) for r in repro)):
        return _malformed(name, "the two seeded releases")
    if float(repro[0]) != float(repro[1]):
        return _fail(name, f"two calls with identically seeded generators returned "
                           f"{_g(repro[0])} and {_g(repro[1])}. Hint: draw the noise from the "
                           "rng argument (rng.laplace(...)), not from np.random or a new "
                           "generator, so that results are reproducible.", "rng")
    out = np.asarray(data.get("outputs"))
    if out.dtype.kind not in "iuf" or out.ndim != 2 or out.shape[0] != n_points * m:
        return _malformed(name, f"outputs of shape {out.shape}, expected "
                                f"({n_points * m}, runs)")
    n = out.shape[1]
    out = out.astype(float)
    if n < 2 or not np.all(np.isfinite(out)):
        return _malformed(name, "fewer than 2 runs, or non-finite outputs")
    constant = np.all(out == out[:, :1], axis=1)
    if n < n_min and not constant.any():
        return _malformed(name, f"{n} runs per input, at least {n_min} needed")

    n_tests = _n_tests(n_points, m, len(pairs))
    a_i = alpha / n_tests
    d, e = points[:, 0], points[:, 1]
    b = d / e                                          # the scale ε-DP needs, per point
    v = inputs.ravel()
    z = out - v[:, None]                               # the noise, (cells, runs)
    zs = np.sort(z, axis=1)
    absz = np.abs(z)
    bc = absz.mean(axis=1)                             # mean |z| per input
    bp = bc.reshape(n_points, m).mean(axis=1)          # per point
    cell_point = np.repeat(np.arange(n_points), m)

    def where(c):
        p = cell_point[c]
        return f"value {_g(v[c], 6)} (Δ = {_g(d[p])}, ε = {_g(e[p])}, so b = Δ/ε = {_g(b[p])})"

    # --- 1. no noise
    same = zs[:, 0] == zs[:, -1]
    if same.any():
        cells = np.flatnonzero(same)
        c = int(cells[0])
        others = f" (and {cells.size - 1} other probe inputs)" if cells.size > 1 else ""
        exact = zs[c, 0] == 0
        what = (f"returned the exact value every time" if exact else
                f"returned {_g(out[c, 0], 8)} every time")
        large = "" if cells.size == same.size else (
            " It does add noise for other inputs: every input needs the same noise, "
            "whatever its size or sign.")
        return _fail(name, f"no noise: on {where(c)}{others} all {n:,} runs {what}. An answer "
                           f"that never varies gives the value away.{large} Hint: return "
                           "value + rng.laplace(0, b) with b = Δ/ε, fresh noise on every call "
                           "and for every value.", "no_noise", value=float(v[c]))

    # --- every statistic first; the verdict then reports the most telling failure
    big_n = m * n
    # scale per point: N·mean|z| ~ Gamma(N, b')
    low = stats.gamma.ppf(a_i, big_n, scale=b / big_n)
    high = stats.gamma.isf(a_i, big_n, scale=b / big_n)
    factor = bp / b
    too_little = np.flatnonzero(bp < low)
    # atoms: repeated values
    eq = zs[:, 1:] == zs[:, :-1]
    mult = _max_run(eq) + 1                            # the largest multiplicity per input
    b_lo = bc / 2.0                                    # b' >= b̂/2 except w.p. < 1e-300
    width = 2.0 * np.spacing(np.abs(v) + 50 * bc) + bc * 2.0 ** -50
    p_one = np.minimum(width / (2 * b_lo), 1.0)
    k_max = _atom_threshold(n, p_one, a_i)
    exact = (z == 0).sum(axis=1)
    # exact answers are counted where float64 resolves the noise finely (|v| small next
    # to b): there even two exact answers among all runs are beyond chance
    fine = p_one <= 1e-9
    lam = float(np.sum(n * p_one[fine]))
    n_exact = int(exact[fine].sum())
    log_p_exact = n_exact * math.log(max(lam, 1e-300)) - special.gammaln(n_exact + 1)
    atoms = np.flatnonzero(mult >= k_max)
    has_atoms = bool(atoms.size) or (n_exact >= 1 and log_p_exact < math.log(a_i))
    # one scale for every input: mean|z| of one input over that of the others ~ F
    rest = (bp[cell_point] * m - bc) / (m - 1)
    ratio = bc / rest
    f_lo = stats.f.ppf(a_i / 2, 2 * n, 2 * (m - 1) * n)
    f_hi = stats.f.isf(a_i / 2, 2 * n, 2 * (m - 1) * n)
    off = np.flatnonzero((ratio < f_lo) | (ratio > f_hi))
    # bias: mean z = 0 per input
    mean = z.mean(axis=1)
    se = z.std(axis=1, ddof=1) / math.sqrt(n)
    zcrit = float(stats.norm.isf(a_i / 2))
    biased = np.flatnonzero(np.abs(mean) > zcrit * se)
    # tails: counts beyond t·Δ/ε (valid for every b' >= Δ/ε) and beyond t·b̂
    kappa_p = stats.gamma.isf(a_i, big_n, scale=1.0 / big_n) - 1.0
    kappa_c = stats.gamma.isf(a_i, n, scale=1.0 / n) - 1.0
    u_claim = (absz.reshape(n_points, -1) / b[:, None]).ravel()
    u_hat = (absz.reshape(n_points, -1) / bp[:, None]).ravel()
    total = u_claim.size
    claim_tails, hat_tails = [], []
    for t in _TAIL_T:
        tt = t * (1 + _TAIL_MARGIN)
        claim_tails.append(("Δ/ε", t, int(np.count_nonzero(u_claim > tt)), total,
                            math.exp(-tt), None))
        hat_tails.append(("b̂", t, int(np.count_nonzero(u_hat > t)), total,
                          math.exp(-t * (1 + kappa_p)), None))
    for t in _CELL_TAIL_T:
        counts = np.count_nonzero(absz > t * bc[:, None], axis=1)
        pc = math.exp(-t * (1 + kappa_c))
        c = int(np.argmin(stats.binom.cdf(counts, n, pc)))
        hat_tails.append(("b̂", t, int(counts[c]), n, pc, c))
    bad_claim = [x for x in claim_tails if stats.binom.cdf(x[2], x[3], x[4]) < a_i]
    bad_hat = [x for x in hat_tails if stats.binom.cdf(x[2], x[3], x[4]) < a_i]
    # the bulk: beyond 3·b̂ Laplace puts e^-3 (5.0%); a cut-off far out leaves it intact
    frac3 = float(np.mean(u_hat > 3.0))
    bulk_ok = frac3 > 0.7 * math.exp(-3.0)
    cut_off = bulk_ok and (bool(bad_hat) or (bool(bad_claim) and not too_little.size))
    # shape: |z| / b̂ against Exponential(1), pooled; z / b̂ against Laplace(0, 1) per input
    ks_pool = _ks_exponential(np.sort(u_hat))
    p_pool = float(stats.kstwo.sf(ks_pool, total))
    ks_cell = _ks_laplace(zs / bc[:, None])
    p_cell = stats.kstwo.sf(ks_cell, n)
    bad_shape = bool(bad_hat or bad_claim) or p_pool < a_i or bool(np.any(p_cell < a_i))

    def kurtosis():
        """Mean excess kurtosis of z per input (Laplace 3, Gaussian 0, uniform -1.2)."""
        zc = z - mean[:, None]
        return float(np.mean(np.mean(zc ** 4, axis=1) / np.mean(zc ** 2, axis=1) ** 2 - 3))

    def slip_text(p):
        slip = _slip_guess(bp[p], d[p], e[p])
        return f" It looks like {slip}." if slip else ""

    def diagnosis(p):
        """Why a refuted mechanism is not private, in one sentence."""
        if has_atoms:
            return (" Your outputs repeat exact values (a clip, rounding, discrete noise or "
                    "exact answers), which continuous Laplace noise never does.")
        if cut_off:
            return " Your noise is cut off: it has no tails beyond a few times b."
        if off.size:
            return " Your noise scale changes with the input value."
        if bp[p] < low[p]:
            return (f" Your noise has mean |error| {_g(bp[p])}, where Lap(Δ/ε) has "
                    f"{_g(b[p])}.{slip_text(p)} The scale is b = Δ/ε: more sensitivity or a "
                    "smaller ε needs MORE noise.")
        if bad_shape:
            return (f" Your noise has about the right size (mean |error| {_g(bp[p])}, "
                    f"Lap(Δ/ε) has {_g(b[p])}) but not the Laplace shape: it looks "
                    f"{_looks(kurtosis())}. "
                    "Only Laplace noise gives pure ε-DP by the Laplace argument.")
        return ""

    # --- 2. privacy: audit neighbouring pairs
    audits = []
    for p in range(n_points):
        for i, j in pairs:
            ci, cj = p * m + int(i), p * m + int(j)
            runs = {"x": out[ci], "y": out[cj]}
            res = audit(lambda data_, size, _rng: runs[data_][:size], "x", "y", n=n,
                        alpha=a_i, rng=0, claimed_epsilon=float(e[p]))
            audits.append(res)
            if res.refuted:
                more, less = (cj, ci) if res.numerator == "y" else (ci, cj)
                c_more, c_less = ((res.count_y, res.count_x) if res.numerator == "y"
                                  else (res.count_x, res.count_y))
                return _fail(name, f"not ε-differentially private at Δ = {_g(d[p])}, ε = "
                                   f"{_g(e[p])}: the audit proves ε ≥ {_g(res.epsilon_lb, 3)} "
                                   f"with confidence 1 − {_g(a_i, 2)}, more than the claimed "
                                   f"{_g(e[p])}. The event '{res.event}' happened in "
                                   f"{c_more:,} of {res.n_count:,} runs on value "
                                   f"{_g(v[more], 8)} but only {c_less:,} on its neighbour "
                                   f"{_g(v[less], 8)}.{diagnosis(p)} Hint: "
                                   "value + rng.laplace(0, b) with b = Δ/ε.", "privacy",
                             epsilon_lb=res.epsilon_lb, point=(float(d[p]), float(e[p])))

    # --- 3. atoms
    if has_atoms:
        c = (int(atoms[np.argmax(mult[atoms])]) if atoms.size
             else int(np.argmax(np.where(fine, exact, -1))))
        return _atoms_feedback(name, c, zs[c], eq[c], exact, n, b[cell_point[c]], where,
                               n_exact, n * int(fine.sum()), not atoms.size)

    # --- 4. a cut-off tail (truncation, resampling, clipping)
    if cut_off:
        kind, t, count, tot, p0, cell = min(bad_hat or bad_claim, key=lambda x: x[1])
        scope = "over all probe inputs" if cell is None else f"on {where(cell)}"
        unit = "Δ/ε" if kind == "Δ/ε" else "b̂ (your noise's mean |error|)"
        biggest = (f"; the largest error {scope} is {_g(float(u_claim.max()), 4)}·Δ/ε"
                   if cell is None else "")
        return _fail(name, f"the noise has no tails: Laplace noise lands beyond {_g(t)}·{unit} "
                           f"in e^-{_g(t)} = {_g(math.exp(-t), 3)} of runs, so at least "
                           f"{_g(tot * p0, 3)} of {tot:,} runs {scope} should be there; "
                           f"{count:,} are{biggest}. The noise looks cut off (truncated, "
                           "resampled or clipped). A cut-off breaks ε-DP: an output just "
                           "beyond the cut is possible from one input and impossible from its "
                           "neighbour. Hint: use rng.laplace(0, b) as it is, unbounded.",
                     "truncated", count=count, t=t)

    # --- 5. one scale for every input
    if off.size:
        p = int(cell_point[off[np.argmax(np.abs(np.log(ratio[off])))]])
        cs = np.arange(p * m, (p + 1) * m)
        lo_c, hi_c = int(cs[np.argmin(bc[cs])]), int(cs[np.argmax(bc[cs])])
        return _fail(name, f"the noise scale depends on the input: at Δ = {_g(d[p])}, ε = "
                           f"{_g(e[p])} the mean |error| is {_g(bc[lo_c])} on value "
                           f"{_g(v[lo_c], 8)} but {_g(bc[hi_c])} on value {_g(v[hi_c], 8)} "
                           f"(Lap(Δ/ε) has {_g(b[p])} on every value). ε-DP needs the same "
                           "noise distribution for every input; a scale that changes with the "
                           "value gives the value away in the tails (the density ratio of "
                           "neighbours grows without bound). Hint: b = Δ/ε only, never a "
                           "function of the value.", "scale_depends_on_input",
                     values=(float(v[lo_c]), float(v[hi_c])),
                     scales=(float(bc[lo_c]), float(bc[hi_c])))

    # --- 6. enough noise at every point
    for p in too_little:
        return _fail(name, f"too little noise at Δ = {_g(d[p])}, ε = {_g(e[p])}: mean |error| "
                           f"{_g(bp[p])}, where Lap(Δ/ε) gives {_g(b[p])} (at least {_g(low[p])} "
                           f"expected from {big_n:,} runs). Noise of scale b only buys "
                           f"(Δ/b)-DP, about ε = {_g(d[p] / bp[p], 3)} here, more than the "
                           f"claimed {_g(e[p])}.{slip_text(p)} Hint: b = Δ/ε, computed from "
                           "the sensitivity and epsilon arguments of every call.",
                     "too_little_noise", factor=float(factor[p]),
                     point=(float(d[p]), float(e[p])))

    # --- 7. no bias
    if biased.size:
        c = int(biased[np.argmax(np.abs(mean[biased]) / se[biased])])
        return _fail(name, f"biased: on {where(c)} the releases miss the true value by "
                           f"{_g(mean[c], 3)} on average (± {_g(se[c], 2)}), but Laplace noise "
                           "has mean 0. Hint: add rng.laplace(0, b), centred at 0, to the "
                           "value itself.", "biased", value=float(v[c]))

    # --- 8. the shape
    if bad_shape:
        kurt = kurtosis()
        worst = int(np.argmin(p_cell))
        pooled = p_pool <= p_cell[worst]
        where_ks = "over all probe inputs" if pooled else f"on {where(worst)}"
        dist = ks_pool if pooled else ks_cell[worst]
        return _fail(name, f"the noise is not Laplace: {where_ks} its distribution differs "
                           f"from Laplace's by up to {_g(100 * dist, 2)} percentage points "
                           f"(Kolmogorov-Smirnov, p = {_g(min(p_pool, float(p_cell[worst])), 2)});"
                           f" {_g(100 * frac3, 3)}% of errors exceed 3 times the mean |error| "
                           f"(Laplace: 5.0%) and the excess kurtosis is {_g(kurt, 3)} "
                           f"(Laplace: 3). It looks {_looks(kurt)}. Only Laplace noise of scale "
                           "≥ Δ/ε gives pure ε-DP by the Laplace argument; Gaussian noise gives "
                           "only (ε, δ)-DP and bounded noise none. Hint: rng.laplace(0, b) "
                           "with b = Δ/ε.", "distribution", kurtosis=kurt,
                     fraction_beyond_3=frac3)

    # --- pass, saying whether the noise is larger than needed
    audits_text = max(r.epsilon_lb for r in audits)
    details = {"points": [{"sensitivity": float(d[p]), "epsilon": float(e[p]),
                           "expected_b": float(b[p]), "mean_abs_error": float(bp[p]),
                           "factor": float(factor[p]),
                           "accepted_interval": (float(low[p]), float(high[p]))}
                          for p in range(n_points)],
               "runs": n, "inputs": n_points * m, "tests": n_tests,
               "largest_audit_bound": float(audits_text),
               "seconds_per_call": per_call}
    shown = "; ".join(f"Δ = {_g(d[p])}, ε = {_g(e[p])}: mean |error| {_g(bp[p], 4)} "
                      f"(b = {_g(b[p], 4)})" for p in range(n_points))
    more = np.flatnonzero(bp > high)
    q_lo = stats.gamma.ppf(a_i, big_n, scale=1 / big_n)   # b̂/b' lies in [q_lo, q_hi]
    q_hi = stats.gamma.isf(a_i, big_n, scale=1 / big_n)
    if max_waste is not None:
        wasteful = np.flatnonzero(factor / q_hi > float(max_waste))
        if wasteful.size:
            p = int(wasteful[np.argmax(factor[wasteful])])
            slip = _slip_guess(bp[p], d[p], e[p])
            return _fail(name, f"private, but wasteful: at Δ = {_g(d[p])}, ε = {_g(e[p])} the "
                               f"noise has mean |error| {_g(bp[p], 4)}, about {_g(factor[p], 3)} "
                               f"times the Δ/ε = {_g(b[p], 4)} that ε-DP needs (at least "
                               f"{_g(factor[p] / q_hi, 3)} times, with confidence 1 − "
                               f"{_g(a_i, 2)}){', as if ' + slip if slip else ''}. More noise "
                               "never hurts privacy, but every answer is about "
                               f"{_g(factor[p], 3)} times less accurate than ε allows. Hint: "
                               "b = Δ/ε exactly.", "wasteful", factor=float(factor[p]),
                         point=(float(d[p]), float(e[p])))
    if more.size:
        parts = []
        for p in more:
            f_lo_p, f_hi_p = factor[p] / q_hi, factor[p] / q_lo
            slip = _slip_guess(bp[p], d[p], e[p])
            parts.append(f"about {_g(factor[p], 3)} times Δ/ε at Δ = {_g(d[p])}, ε = "
                         f"{_g(e[p])} (between {_g(f_lo_p, 3)} and {_g(f_hi_p, 3)})"
                         + (f", as if {slip}" if slip else ""))
        return Feedback(True, f"{name}: passes, but with more noise than needed: the noise is "
                              f"Laplace and the same for every input, but its scale is "
                              f"{'; '.join(parts)}. Still ε-differentially private (more "
                              "noise never hurts privacy), but the answers are less accurate "
                              "than ε allows. Hint: b = Δ/ε exactly.",
                        details={"reason": "too_much_noise", **details})
    return Feedback(True, f"{name}: passes. The noise is Laplace with scale Δ/ε, the same for "
                          f"every input, with full tails and no repeated values, and no "
                          f"privacy violation was found ({n_points * m} probe inputs × {n:,} "
                          f"runs; {shown}). A check can refute a privacy claim, never prove "
                          "it: the proof is the Laplace argument.",
                    details={"reason": "passed", **details})


def _max_run(eq):
    """Per row, the longest run of True in a boolean (rows, k) array."""
    if eq.shape[1] == 0:
        return np.zeros(eq.shape[0], dtype=int)
    best = np.zeros(eq.shape[0], dtype=int)
    rows = np.flatnonzero(eq.any(axis=1))
    for r in rows:                      # only rows with a repeat at all (rare for Laplace)
        x = np.concatenate([[0], eq[r].view(np.int8), [0]])
        edges = np.flatnonzero(np.diff(x))
        best[r] = int((edges[1::2] - edges[::2]).max())
    return best


def _atom_threshold(n, p_one, a_i):
    """Smallest k >= 2 with C(n, k)·p^(k-1) <= a_i, per input (p = p_one)."""
    from scipy import special

    k = np.full(p_one.shape, 2)
    log_a = math.log(a_i)
    logp = np.log(np.maximum(p_one, 1e-300))
    for _ in range(200):
        logc = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
        ok = logc + (k - 1) * logp <= log_a
        if ok.all():
            break
        k = np.where(ok, k, k + 1)
    return k


def _atoms_feedback(name, c, zc, eqc, exact, n, bb, where, n_exact, total, only_exact):
    """What the repeated values look like: the exact answer, a clip, or discrete noise."""
    distinct = int(zc.size - eqc.sum())
    if only_exact or (exact[c] >= max(2, 0.5 * (zc.size - distinct))):
        return _fail(name, f"on {where(c)} your function returned the exact value in "
                           f"{int(exact[c]):,} of {n:,} runs ({n_exact:,} of {total:,} runs on "
                           "the inputs where float64 resolves the noise finely). Continuous "
                           "noise is never exactly 0; an exact answer, even rarely, is a "
                           "release with no privacy at all. Hint: add fresh Laplace noise on "
                           "every call (no special cases).", "atoms",
                     kind="exact", count=int(exact[c]))
    lo_n = int(np.argmax(~eqc)) if (~eqc).any() else eqc.size
    hi_n = int(np.argmax(~eqc[::-1])) if (~eqc).any() else eqc.size
    if max(lo_n, hi_n) >= 2 and zc[-1] > 0 > zc[0] and distinct > 0.5 * n:
        at = zc[-1] if hi_n >= lo_n else zc[0]
        cnt = (hi_n if hi_n >= lo_n else lo_n) + 1
        return _fail(name, f"on {where(c)}, {cnt:,} of {n:,} runs returned exactly "
                           f"value {'+' if at > 0 else '−'} {_g(abs(at))} = value "
                           f"{'+' if at > 0 else '−'} {_g(abs(at) / bb, 4)}·b, the largest "
                           "error seen: the noise looks clipped (np.clip or min/max). A clip "
                           "piles probability on one output, and it differs between neighbours "
                           "(value + c is possible from one input and has a different "
                           "probability from the other), so ε-DP fails. Hint: never clip or "
                           "bound Laplace noise.", "atoms", kind="clipped", count=cnt)
    return _fail(name, f"on {where(c)} the {n:,} runs gave only {distinct:,} distinct values; "
                       f"one of them repeats {int(_max_run(eqc[None])[0]) + 1:,} times. "
                       "Continuous Laplace noise practically never repeats a float64 value, so "
                       "the noise looks discrete (integers, rounding) or mixed with fixed "
                       "answers. Discrete noise added to a real value lets a neighbour's "
                       "outputs fall on a different grid, so ε-DP fails. Hint: "
                       "rng.laplace(0, b) returns a real number; do not round it.", "atoms",
                 kind="discrete", distinct=distinct)


def _ks_exponential(sorted_u):
    """Kolmogorov-Smirnov distance of sorted samples from Exponential(1)."""
    nn = sorted_u.size
    cdf = -np.expm1(-sorted_u)
    i = np.arange(1, nn + 1)
    return float(max(np.max(i / nn - cdf), np.max(cdf - (i - 1) / nn)))


def _ks_laplace(sorted_rows):
    """Per row, the Kolmogorov-Smirnov distance of sorted samples from Laplace(0, 1)."""
    nn = sorted_rows.shape[1]
    x = sorted_rows
    half = 0.5 * np.exp(-np.abs(x))
    cdf = np.where(x < 0, half, 1 - half)
    i = np.arange(1, nn + 1)
    return np.maximum(np.max(i / nn - cdf, axis=1), np.max(cdf - (i - 1) / nn, axis=1))


def _looks(kurt):
    """What noise of this excess kurtosis looks like (Laplace 3, Gaussian 0, uniform -1.2)."""
    if kurt > 2.0:
        return "heavy-tailed but not Laplace"
    if kurt > -0.6:
        return f"like Gaussian noise (excess kurtosis {_g(kurt, 2)}; Gaussian 0, Laplace 3)"
    if kurt > -1.5:
        return f"like uniform noise (excess kurtosis {_g(kurt, 2)}; uniform −1.2, Laplace 3)"
    return f"bounded (excess kurtosis {_g(kurt, 2)}; Laplace 3)"


def _problem_feedback(name, problem):
    reason, text = problem
    if reason == "unsolved":
        return Feedback(False, f"{name}: {NOT_SOLVED} (the function returns None; fill in its "
                               "body).", solved=False, details={"reason": "unsolved"})
    hint = " Hint: the signature is release(value, sensitivity, epsilon, rng)." \
        if reason == "error" else ""
    return _fail(name, f"{text}.{hint}", reason)
