"""The statistical verdict of :func:`dpteach.coursework._mechanism_judge.mechanism_judge`
(machinery).

Pure statistics on what :func:`~dpteach.coursework._mechanism_judge.mechanism_collect`
gathered: the stages below run in the order the verdict reports them (shape of the data,
no noise, privacy audit, atoms, cut-off tails, one scale per input, too little noise,
bias, the Kolmogorov-Smirnov shape, then a pass that may still call the noise wasteful).
Every stage reads the statistics from one namespace ``s`` built by :func:`_statistics`.
"""

from __future__ import annotations

import math
import numbers
from functools import partial
from types import SimpleNamespace

import numpy as np

from ._feedback import NOT_SOLVED, Feedback, failure, number_text as g

#: multiples t of the scale at which the pooled tail counts are tested (the largest one
#: sets the minimum number of runs: Laplace cut off at ±10 Δ/ε must fail)
TAIL_T = (4.0, 6.0, 8.0, 10.0)
#: the same, per probe input (a cut-off that happens only for some inputs)
_CELL_TAIL_T = (4.0, 6.0)
#: relative margin above t·Δ/ε for the tail counts, so that noise clipped exactly at
#: t·Δ/ε (rounded in float64) is not counted as beyond it
TAIL_MARGIN = 1e-6
_PROBLEM_REASONS = ("error", "unsolved", "type", "not_finite")


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


def count_tests(n_points, n_inputs, n_pairs):
    """How many tests mechanism_judge runs (each gets alpha / this many)."""
    per_cell = 5 + len(_CELL_TAIL_T)        # atoms, scale, bias, KS, κ bound, tails
    per_point = 3 + n_pairs                 # too little, too much, κ bound, audits
    pooled = 2 * len(TAIL_T) + 2            # tails (Δ/ε and b̂), KS, exact answers
    return n_points * n_inputs * per_cell + n_points * per_point + pooled


def _malformed(name, what):
    return failure(name, f"the collected results are malformed ({what}). Hint: run the check "
                         "again on an unchanged release(value, sensitivity, epsilon, rng).",
                   "malformed")


def judge(data, request, name, max_waste=None):
    """The verdict: the first failing stage, or a pass (see mechanism_judge)."""
    s = _validated(data, request, name)
    if isinstance(s, Feedback):
        return s
    s.name, s.max_waste = name, max_waste
    _basics(s)
    fb = _no_noise(s)
    if fb is not None:
        return fb
    _statistics(s)
    for check in (_privacy, _atoms, _cut_off, _scale_per_input, _too_little_noise, _bias,
                  _shape):
        fb = check(s)
        if fb is not None:
            return fb
    return _passed(s)


def _validated(data, request, name):
    """The request and the collected data as a namespace, or a failing Feedback."""

    if not isinstance(data, dict) or not isinstance(request, dict):
        return _malformed(name, "expected dicts")
    prob = data.get("problem")
    if prob is not None:
        if not isinstance(prob, dict) or prob.get("reason") not in _PROBLEM_REASONS:
            return _malformed(name, "unknown problem report")
        text = prob.get("text")
        return problem_feedback(name, (prob["reason"], None if text is None else
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
        us = g(float(per_call) * 1e6, 3) if isinstance(per_call, numbers.Real) else "?"
        return failure(name, f"too slow to check properly: about {us} µs per call, and the "
                             f"check needs at least {n_min * n_points * m:,} calls to see the "
                             "tails of the noise (more than "
                             f"{g(float(request['max_seconds']))} s). "
                             "Hint: keep the function to value + noise; no input checks, "
                             "printing or new Generators inside it.", "too_slow",
                       seconds_per_call=per_call)
    repro = data.get("repro")
    if (not isinstance(repro, (list, tuple, np.ndarray)) or len(repro) != 2
            or not all(isinstance(r, numbers.Real) and not isinstance(r, (bool, np.bool_))
                       and math.isfinite(r) for r in repro)):
        return _malformed(name, "the two seeded releases")
    if float(repro[0]) != float(repro[1]):
        return failure(name, f"two calls with identically seeded generators returned "
                             f"{g(repro[0])} and {g(repro[1])}. Hint: draw the noise from the "
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
    if n > int(request.get("n_max", n)):      # collect never makes more runs than asked
        return _malformed(name, f"{n:,} runs per input, more than the {int(request['n_max']):,} "
                                "the check asks for")
    constant = np.all(out == out[:, :1], axis=1)
    if n < n_min and not constant.any():
        return _malformed(name, f"{n} runs per input, at least {n_min} needed")
    return SimpleNamespace(points=points, inputs=inputs, pairs=pairs, alpha=alpha,
                           n_min=n_min, n_points=n_points, m=m, per_call=per_call,
                           out=out, n=n)


def _basics(s):
    """The noise z = output - input and its mean |z| per input and per point."""
    alpha, inputs, m, n_points, out, pairs = s.alpha, s.inputs, s.m, s.n_points, s.out, s.pairs
    points = s.points
    n_tests = count_tests(n_points, m, len(pairs))
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
    s.__dict__.update({k: x for k, x in locals().items() if k != "s"})


def _where(s, c):
    """The probe input c, its point and the scale b it needs."""
    b, cell_point, d, e, v = s.b, s.cell_point, s.d, s.e, s.v
    p = cell_point[c]
    return f"value {g(v[c], 6)} (Δ = {g(d[p])}, ε = {g(e[p])}, so b = Δ/ε = {g(b[p])})"


def _no_noise(s):
    """1. Every run on some input returned one value."""
    where = partial(_where, s)
    n, name, out, v, zs = s.n, s.name, s.out, s.v, s.zs
    # --- 1. no noise
    same = zs[:, 0] == zs[:, -1]
    if same.any():
        cells = np.flatnonzero(same)
        c = int(cells[0])
        others = f" (and {cells.size - 1} other probe inputs)" if cells.size > 1 else ""
        exact = zs[c, 0] == 0
        what = ("returned the exact value every time" if exact else
                f"returned {g(out[c, 0], 8)} every time")
        large = "" if cells.size == same.size else (
            " It does add noise for other inputs: every input needs the same noise, "
            "whatever its size or sign.")
        return failure(name, f"no noise: on {where(c)}{others} all {n:,} runs {what}. An answer "
                             f"that never varies gives the value away.{large} Hint: return "
                             "value + rng.laplace(0, b) with b = Δ/ε, fresh noise on every call "
                             "and for every value.", "no_noise", value=float(v[c]))


def _statistics(s):
    """Every statistic first; the verdict then reports the most telling failure."""
    from scipy import special, stats

    a_i, absz, b, bc, bp, cell_point = s.a_i, s.absz, s.b, s.bc, s.bp, s.cell_point
    m, n, n_points, v, z, zs = s.m, s.n, s.n_points, s.v, s.z, s.zs
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
    for t in TAIL_T:
        tt = t * (1 + TAIL_MARGIN)
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
    loop = ("s", "t", "tt", "c", "counts", "pc", "x")          # loop variables, not statistics
    s.__dict__.update({k: x for k, x in locals().items() if k not in loop})


def _kurtosis(s):
    """Mean excess kurtosis of z per input (Laplace 3, Gaussian 0, uniform -1.2)."""
    mean, z = s.mean, s.z
    zc = z - mean[:, None]
    return float(np.mean(np.mean(zc ** 4, axis=1) / np.mean(zc ** 2, axis=1) ** 2 - 3))


def _slip_text(s, p):
    """The classic slip the scale at point p matches, as a sentence."""
    bp, d, e = s.bp, s.d, s.e
    slip = _slip_guess(bp[p], d[p], e[p])
    return f" It looks like {slip}." if slip else ""


def _diagnosis(s, p):
    """Why a refuted mechanism is not private, in one sentence."""
    kurtosis = partial(_kurtosis, s)
    slip_text = partial(_slip_text, s)
    b, bad_shape, bp = s.b, s.bad_shape, s.bp
    cut_off, has_atoms, low = s.cut_off, s.has_atoms, s.low
    off = s.off
    if has_atoms:
        return (" Your outputs repeat exact values (a clip, rounding, discrete noise or "
                "exact answers), which continuous Laplace noise never does.")
    if cut_off:
        return " Your noise is cut off: it has no tails beyond a few times b."
    if off.size:
        return " Your noise scale changes with the input value."
    if bp[p] < low[p]:
        return (f" Your noise has mean |error| {g(bp[p])}, where Lap(Δ/ε) has "
                f"{g(b[p])}.{slip_text(p)} The scale is b = Δ/ε: more sensitivity or a "
                "smaller ε needs MORE noise.")
    if bad_shape:
        return (f" Your noise has about the right size (mean |error| {g(bp[p])}, "
                f"Lap(Δ/ε) has {g(b[p])}) but not the Laplace shape: it looks "
                f"{_looks(kurtosis())}. "
                "Only Laplace noise gives pure ε-DP by the Laplace argument.")
    return ""


def _privacy(s):
    """2. Privacy: audit neighbouring pairs (the audits are kept for the pass)."""
    from ..audit import audit

    diagnosis = partial(_diagnosis, s)
    a_i, d, e, m, n, n_points = s.a_i, s.d, s.e, s.m, s.n, s.n_points
    name, out, pairs, v = s.name, s.out, s.pairs, s.v
    audits = s.audits = []
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
                return failure(name, f"not ε-differentially private at Δ = {g(d[p])}, ε = "
                                     f"{g(e[p])}: the audit proves ε ≥ {g(res.epsilon_lb, 3)} "
                                     f"with confidence 1 − {g(a_i, 2)}, more than the claimed "
                                     f"{g(e[p])}. The event '{res.event}' happened in "
                                     f"{c_more:,} of {res.n_count:,} runs on value "
                                     f"{g(v[more], 8)} but only {c_less:,} on its neighbour "
                                     f"{g(v[less], 8)}.{diagnosis(p)} Hint: "
                                     "value + rng.laplace(0, b) with b = Δ/ε.", "privacy",
                               epsilon_lb=res.epsilon_lb, point=(float(d[p]), float(e[p])))


def _atoms(s):
    """3. Repeated values: the exact answer, a clip, or discrete noise."""
    where = partial(_where, s)
    atoms, b, cell_point, eq, exact, fine = s.atoms, s.b, s.cell_point, s.eq, s.exact, s.fine
    has_atoms, mult, n, n_exact, name, zs = s.has_atoms, s.mult, s.n, s.n_exact, s.name, s.zs
    if has_atoms:
        c = (int(atoms[np.argmax(mult[atoms])]) if atoms.size
             else int(np.argmax(np.where(fine, exact, -1))))
        return _atoms_feedback(name, c, zs[c], eq[c], exact, n, b[cell_point[c]], where,
                               n_exact, n * int(fine.sum()), not atoms.size)


def _cut_off(s):
    """4. A cut-off tail (truncation, resampling, clipping)."""
    where = partial(_where, s)
    bad_claim, bad_hat = s.bad_claim, s.bad_hat
    cut_off, name, u_claim = s.cut_off, s.name, s.u_claim
    if cut_off:
        kind, t, count, tot, p0, cell = min(bad_hat or bad_claim, key=lambda x: x[1])
        scope = "over all probe inputs" if cell is None else f"on {where(cell)}"
        unit = "Δ/ε" if kind == "Δ/ε" else "b̂ (your noise's mean |error|)"
        biggest = (f"; the largest error {scope} is {g(float(u_claim.max()), 4)}·Δ/ε"
                   if cell is None else "")
        return failure(name, f"the noise has no tails: Laplace noise lands beyond {g(t)}·{unit} "
                             f"in e^-{g(t)} = {g(math.exp(-t), 3)} of runs, so at least "
                             f"{g(tot * p0, 3)} of {tot:,} runs {scope} should be there; "
                             f"{count:,} are{biggest}. The noise looks cut off (truncated, "
                             "resampled or clipped). A cut-off breaks ε-DP: an output just "
                             "beyond the cut is possible from one input and impossible from its "
                             "neighbour. Hint: use rng.laplace(0, b) as it is, unbounded.",
                       "truncated", count=count, t=t)


def _scale_per_input(s):
    """5. One scale for every input."""
    b, bc, cell_point, d, e, m = s.b, s.bc, s.cell_point, s.d, s.e, s.m
    name, off, ratio, v = s.name, s.off, s.ratio, s.v
    if off.size:
        p = int(cell_point[off[np.argmax(np.abs(np.log(ratio[off])))]])
        cs = np.arange(p * m, (p + 1) * m)
        lo_c, hi_c = int(cs[np.argmin(bc[cs])]), int(cs[np.argmax(bc[cs])])
        return failure(name, f"the noise scale depends on the input: at Δ = {g(d[p])}, ε = "
                             f"{g(e[p])} the mean |error| is {g(bc[lo_c])} on value "
                             f"{g(v[lo_c], 8)} but {g(bc[hi_c])} on value {g(v[hi_c], 8)} "
                             f"(Lap(Δ/ε) has {g(b[p])} on every value). ε-DP needs the same "
                             "noise distribution for every input; a scale that changes with the "
                             "value gives the value away in the tails (the density ratio of "
                             "neighbours grows without bound). Hint: b = Δ/ε only, never a "
                             "function of the value.", "scale_depends_on_input",
                       values=(float(v[lo_c]), float(v[hi_c])),
                       scales=(float(bc[lo_c]), float(bc[hi_c])))


def _too_little_noise(s):
    """6. Enough noise at every point."""
    slip_text = partial(_slip_text, s)
    b, big_n, bp, d, e, factor = s.b, s.big_n, s.bp, s.d, s.e, s.factor
    low, name, too_little = s.low, s.name, s.too_little
    for p in too_little:
        return failure(name, f"too little noise at Δ = {g(d[p])}, ε = {g(e[p])}: mean |error| "
                             f"{g(bp[p])}, where Lap(Δ/ε) gives {g(b[p])} (at least {g(low[p])} "
                             f"expected from {big_n:,} runs). Noise of scale b only buys "
                             f"(Δ/b)-DP, about ε = {g(d[p] / bp[p], 3)} here, more than the "
                             f"claimed {g(e[p])}.{slip_text(p)} Hint: b = Δ/ε, computed from "
                             "the sensitivity and epsilon arguments of every call.",
                       "too_little_noise", factor=float(factor[p]),
                       point=(float(d[p]), float(e[p])))


def _bias(s):
    """7. No bias."""
    where = partial(_where, s)
    biased, mean, name, se, v = s.biased, s.mean, s.name, s.se, s.v
    if biased.size:
        c = int(biased[np.argmax(np.abs(mean[biased]) / se[biased])])
        return failure(name, f"biased: on {where(c)} the releases miss the true value by "
                             f"{g(mean[c], 3)} on average (± {g(se[c], 2)}), but Laplace noise "
                             "has mean 0. Hint: add rng.laplace(0, b), centred at 0, to the "
                             "value itself.", "biased", value=float(v[c]))


def _shape(s):
    """8. The shape (Kolmogorov-Smirnov)."""
    where = partial(_where, s)
    kurtosis = partial(_kurtosis, s)
    bad_shape, frac3, ks_cell = s.bad_shape, s.frac3, s.ks_cell
    ks_pool, name, p_cell = s.ks_pool, s.name, s.p_cell
    p_pool = s.p_pool
    if bad_shape:
        kurt = kurtosis()
        worst = int(np.argmin(p_cell))
        pooled = p_pool <= p_cell[worst]
        where_ks = "over all probe inputs" if pooled else f"on {where(worst)}"
        dist = ks_pool if pooled else ks_cell[worst]
        return failure(name, f"the noise is not Laplace: {where_ks} its distribution differs "
                             f"from Laplace's by up to {g(100 * dist, 2)} percentage points "
                             f"(Kolmogorov-Smirnov, p = {g(min(p_pool, float(p_cell[worst])), 2)});"
                             f" {g(100 * frac3, 3)}% of errors exceed 3 times the mean |error| "
                             f"(Laplace: 5.0%) and the excess kurtosis is {g(kurt, 3)} "
                             f"(Laplace: 3). It looks {_looks(kurt)}. Only Laplace noise of scale "
                             "≥ Δ/ε gives pure ε-DP by the Laplace argument; Gaussian noise "
                             "gives only (ε, δ)-DP and bounded noise none. Hint: "
                             "rng.laplace(0, b) with b = Δ/ε.", "distribution", kurtosis=kurt,
                       fraction_beyond_3=frac3)


def _passed(s):
    """A pass, saying whether the noise is larger than needed (or fail as wasteful)."""
    from scipy import stats

    a_i, audits, b, big_n, bp, d = s.a_i, s.audits, s.b, s.big_n, s.bp, s.d
    e, factor, high, low, m, max_waste = s.e, s.factor, s.high, s.low, s.m, s.max_waste
    n, n_points, n_tests, name, per_call = s.n, s.n_points, s.n_tests, s.name, s.per_call
    audits_text = max(r.epsilon_lb for r in audits)
    details = {"points": [{"sensitivity": float(d[p]), "epsilon": float(e[p]),
                           "expected_b": float(b[p]), "mean_abs_error": float(bp[p]),
                           "factor": float(factor[p]),
                           "accepted_interval": (float(low[p]), float(high[p]))}
                          for p in range(n_points)],
               "runs": n, "inputs": n_points * m, "tests": n_tests,
               "largest_audit_bound": float(audits_text),
               "seconds_per_call": per_call}
    shown = "; ".join(f"Δ = {g(d[p])}, ε = {g(e[p])}: mean |error| {g(bp[p], 4)} "
                      f"(b = {g(b[p], 4)})" for p in range(n_points))
    more = np.flatnonzero(bp > high)
    q_lo = stats.gamma.ppf(a_i, big_n, scale=1 / big_n)   # b̂/b' lies in [q_lo, q_hi]
    q_hi = stats.gamma.isf(a_i, big_n, scale=1 / big_n)
    if max_waste is not None:
        wasteful = np.flatnonzero(factor / q_hi > float(max_waste))
        if wasteful.size:
            p = int(wasteful[np.argmax(factor[wasteful])])
            slip = _slip_guess(bp[p], d[p], e[p])
            return failure(name, f"private, but wasteful: at Δ = {g(d[p])}, ε = {g(e[p])} the "
                                 f"noise has mean |error| {g(bp[p], 4)}, about {g(factor[p], 3)} "
                                 f"times the Δ/ε = {g(b[p], 4)} that ε-DP needs (at least "
                                 f"{g(factor[p] / q_hi, 3)} times, with confidence 1 − "
                                 f"{g(a_i, 2)}){', as if ' + slip if slip else ''}. More noise "
                                 "never hurts privacy, but every answer is about "
                                 f"{g(factor[p], 3)} times less accurate than ε allows. Hint: "
                                 "b = Δ/ε exactly.", "wasteful", factor=float(factor[p]),
                           point=(float(d[p]), float(e[p])))
    if more.size:
        parts = []
        for p in more:
            f_lo_p, f_hi_p = factor[p] / q_hi, factor[p] / q_lo
            slip = _slip_guess(bp[p], d[p], e[p])
            parts.append(f"about {g(factor[p], 3)} times Δ/ε at Δ = {g(d[p])}, ε = "
                         f"{g(e[p])} (between {g(f_lo_p, 3)} and {g(f_hi_p, 3)})"
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
        return failure(name, f"on {where(c)} your function returned the exact value in "
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
        return failure(name, f"on {where(c)}, {cnt:,} of {n:,} runs returned exactly "
                             f"value {'+' if at > 0 else '−'} {g(abs(at))} = value "
                             f"{'+' if at > 0 else '−'} {g(abs(at) / bb, 4)}·b, the largest "
                             "error seen: the noise looks clipped (np.clip or min/max). A clip "
                             "piles probability on one output, and it differs between neighbours "
                             "(value + c is possible from one input and has a different "
                             "probability from the other), so ε-DP fails. Hint: never clip or "
                             "bound Laplace noise.", "atoms", kind="clipped", count=cnt)
    return failure(name, f"on {where(c)} the {n:,} runs gave only {distinct:,} distinct values; "
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
        return f"like Gaussian noise (excess kurtosis {g(kurt, 2)}; Gaussian 0, Laplace 3)"
    if kurt > -1.5:
        return f"like uniform noise (excess kurtosis {g(kurt, 2)}; uniform −1.2, Laplace 3)"
    return f"bounded (excess kurtosis {g(kurt, 2)}; Laplace 3)"


def problem_feedback(name, problem):
    reason, text = problem
    if reason == "unsolved":
        return Feedback(False, f"{name}: {NOT_SOLVED} (the function returns None; fill in its "
                               "body).", solved=False, details={"reason": "unsolved"})
    hint = " Hint: the signature is release(value, sensitivity, epsilon, rng)." \
        if reason == "error" else ""
    return failure(name, f"{text}.{hint}", reason)
