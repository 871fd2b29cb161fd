"""A10 Task 2's check: propose-test-release for the median, judged against a family of
PTRs (the test budget, the threshold and the release scale each within stated bounds) by
confidence bands on the data (:mod:`.a10_local_synthetic` states the task)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..exercises import ALPHA
from ._student import (UNSOLVED, fail, field, forbid, g, is_unsolved, number, ok, opening, short)

T2_FORBIDDEN = ("dpteach:ptr_median", "dpteach.beyond_global:ptr_median",
               "dpteach:ptr_answer_probability", "dpteach.beyond_global:ptr_answer_probability",
               "dpteach.beyond_global:_ptr_runs", "dpteach.beyond_global:_ptr_threshold",
               "dpteach.beyond_global:_ptr", "dpteach.beyond_global:ptr_threshold",
               "dpteach.beyond_global:ptr_pass_probability")
#: what Task 2's honest solution may call although Task 1 forbids it
T2_NEEDS = ("dpteach:distance_to_instability",
            "dpteach.beyond_global:distance_to_instability",
            "dpteach.beyond_global:_a_of_k")


# ------------------------------------------------------------------ Task 2
# The graded family. A PTR of the asked form spends epsilon_1 on the test and the rest on
# the release: it answers when d + Lap(1/epsilon_1) > c / epsilon_1, with c between
# ln(1/(2 delta)) (the unstable dataset passes with probability exactly delta) and
# ln(1/delta) (delta/2, the kit's), and releases median + Lap(b / (epsilon - epsilon_1)).
# Its answer rate at distance d is F(epsilon_1 d - c), F the Laplace(0, 1) CDF: a line in
# (epsilon_1, c) for each d. The judge accepts when some (epsilon_1, c) of the family
# lies in every confidence band the data give (a band per dataset for the answer rate,
# one for the release scale): a member is then refused only when a band misses its true
# value, which happens with probability at most alpha (Bonferroni over the bands).
T2_SPLIT = (0.25, 0.75)                # epsilon_1 / epsilon: the split the family allows
#: hidden datasets: (kind, calls); the kit's PTR answers the moderate ones 10-90% of the time
_T2_KINDS = (("unstable", 400), ("moderate", 800), ("moderate", 800), ("moderate", 800),
             ("stable, median beyond the range", 1000), ("far", 300))
_T2_TESTS = len(_T2_KINDS) + 2          # a band per dataset, the scale band, the KS band
#: a slip must stay outside the family even with bands this wide around its expected data
_T2_DESIGN_ALPHA = 1e-12


def ptr_threshold(epsilon, delta):
    """ln(1/delta) / (epsilon/2): the kit's threshold (Dwork & Roth, Sec. 7.2)."""
    return math.log(1.0 / delta) / (epsilon / 2.0)


def _laplace_ppf(p):
    """F^-1 of Laplace(0, 1), -inf at 0 and inf at 1."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return math.log(2 * p) if p < 0.5 else -math.log(2 * (1 - p))


def rate_band(answered, calls, a):
    """Clopper-Pearson interval of an answer rate at level 1 - a, as the interval of
    u = F^-1(rate) (the member's epsilon_1 d - c must lie in it)."""
    lo = 0.0 if answered <= 0 else float(stats.beta.ppf(a / 2, answered, calls - answered + 1))
    hi = 1.0 if answered >= calls else float(stats.beta.ppf(1 - a / 2, answered + 1,
                                                             calls - answered))
    return _laplace_ppf(lo), _laplace_ppf(hi)


def scale_band(total, count, a):
    """Exact interval of s at level 1 - a when |z| / s ~ Exp(1): sum |z| ~ Gamma(count, s)."""
    return (total / float(stats.gamma.isf(a / 2, count)),
            total / float(stats.gamma.ppf(a / 2, count)))


def ks_hull(z, lo, hi, a, grid=601):
    """(smallest, largest) scale s in [lo, hi] at which the Kolmogorov-Smirnov test of z
    against Laplace(0, s) is not rejected at a, or None. Checked on a grid in log s; the
    KS distance moves by at most 0.19 per unit of log s (x f(x) <= 1/(2e) for Laplace),
    so a grid point within that slack of the critical value counts as not rejected."""
    m = z.size
    crit = float(stats.kstwo.isf(a, m))
    zs = np.sort(np.asarray(z, dtype=float))
    logs = np.linspace(math.log(lo), math.log(hi), grid)
    step = float(logs[1] - logs[0]) if grid > 1 else 0.0
    f = stats.laplace.cdf(zs[None, :] / np.exp(logs)[:, None])
    i = np.arange(1, m + 1)
    dist = np.maximum(np.max(i / m - f, axis=1), np.max(f - (i - 1) / m, axis=1))
    keep = logs[dist - 0.19 * step <= crit]
    if keep.size == 0:
        return None
    return math.exp(keep.min() - step), math.exp(keep.max() + step)


def _feasible(lower, upper, e_lo, e_hi):
    """Is there e in [e_lo, e_hi] with max over ``lower`` of (slope e + intercept) <= min
    over ``upper``? Both sides are piecewise linear, the gap convex: its minimum is at an
    end or where two lines cross."""
    if not e_lo <= e_hi:
        return False
    lines = lower + upper
    points = {e_lo, e_hi}
    for i, (a1, b1) in enumerate(lines):
        for a2, b2 in lines[i + 1:]:
            if a1 != a2 and e_lo <= (b2 - b1) / (a1 - a2) <= e_hi:
                points.add((b2 - b1) / (a1 - a2))
    for e in points:
        low = max(a * e + b for a, b in lower)
        up = min(a * e + b for a, b in upper)
        if low <= up + 1e-12 * (1.0 + abs(up)):
            return True
    return False


def ptr_family_fit(rates, release, epsilon, delta, bound, a):
    """Does some PTR of the graded family fit the data? ``rates``: (d, answered, calls)
    per dataset; ``release``: the releases minus the clamped median (an array), or
    ("expected", count, scale) for the design check. Each band at level 1 - a. Returns
    {"fits", "split" (epsilon_1 range the releases allow, or None), "bands" (the family's
    answer rates per dataset under that split), "scale" (the measured release scale)}."""
    c_lo, c_hi = math.log(1 / (2 * delta)), math.log(1 / delta)
    e_lo, e_hi = T2_SPLIT[0] * epsilon, T2_SPLIT[1] * epsilon
    scale = None
    if isinstance(release, tuple):
        _, count, s = release
        if count > 0:
            s_lo, s_hi = scale_band(count * s, int(round(count)), a)
            e_lo, e_hi = max(e_lo, epsilon - bound / s_lo), min(e_hi, epsilon - bound / s_hi)
            scale = s
    elif release.size:
        scale = float(np.mean(np.abs(release)))
        s_lo, s_hi = scale_band(float(np.sum(np.abs(release))), release.size, a)
        hull = ks_hull(release, s_lo, s_hi, a) if s_lo > 0 else None
        if hull is None:
            return {"fits": False, "split": None, "bands": None, "scale": scale}
        e_lo, e_hi = max(e_lo, epsilon - bound / hull[0]), min(e_hi, epsilon - bound / hull[1])
    if e_lo > e_hi:
        return {"fits": False, "split": None, "bands": None, "scale": scale}
    lower, upper = [(0.0, c_lo)], [(0.0, c_hi)]          # c >= c_lo, c <= c_hi
    for d, answered, calls in rates:
        u_lo, u_hi = rate_band(answered, calls, a)
        if math.isfinite(u_hi):
            lower.append((float(d), -u_hi))               # c >= e d - u_hi
        if math.isfinite(u_lo):
            upper.append((float(d), -u_lo))               # c <= e d - u_lo
    sf = stats.laplace.cdf
    bands = [(float(sf(e_lo * d - c_hi)), float(sf(e_hi * d - c_lo))) for d, _, _ in rates]
    return {"fits": _feasible(lower, upper, e_lo, e_hi), "split": (e_lo, e_hi),
            "bands": bands, "scale": scale}


def ptr_slips(epsilon, delta, bound, lower, upper):
    """hint -> (answer rate as a function of d, release scale) of a PTR with that slip."""
    t, s = ptr_threshold(epsilon, delta), 2.0 / epsilon
    ln = math.log(1 / delta)
    sf, cdf = stats.laplace.sf, stats.laplace.cdf
    rel = 2 * bound / epsilon
    return {
        "the distance is tested without noise: add Lap(1/ε₁) to it (Lap(2/ε) with half "
        "the budget)": (lambda d: float(d > t), rel),
        "the threshold ln(1/δ)/ε is too low for a test with noise Lap(2/ε): it is ln(1/δ)/ε₁ "
        "= ln(1/δ)/(ε/2)": (lambda d: float(sf(ln / epsilon - d, scale=s)), rel),
        "the threshold ln(1/δ) is too low: it is ln(1/δ)/ε₁ = ln(1/δ)/(ε/2)":
            (lambda d: float(sf(ln - d, scale=s)), rel),
        "the test's noise Lap(1/ε) spends the whole budget on the test: with half of it the "
        "noise is Lap(2/ε)": (lambda d: float(sf(t - d, scale=s / 2)), rel),
        "the test with threshold ln(1/δ)/ε and noise Lap(1/ε) spends all of ε, and the "
        "release spends ε/2 more": (lambda d: float(sf(t / 2 - d, scale=s / 2)), rel),
        "the test with ε/4 needs the threshold ln(1/δ)/(ε/4), not ln(1/δ)/(ε/2)":
            (lambda d: float(sf(t - d, scale=2 * s)), 4 * bound / (3 * epsilon)),
        "answer when the noisy distance is above the threshold, not below":
            (lambda d: float(cdf(t - d, scale=s)), rel),
        "the release comes only after the test: return None when the noisy distance is at "
        "or below the threshold": (lambda d: 1.0, rel),
        "the release noise Lap(b/ε) spends the whole budget: with the test's half spent it "
        "is Lap(b/(ε/2)) = Lap(2b/ε)": (lambda d: float(sf(t - d, scale=s)), bound / epsilon),
        "the release noise is scaled to the proposed bound b, not to the global "
        "sensitivity upper - lower": (lambda d: float(sf(t - d, scale=s)),
                                      2 * (upper - lower) / epsilon),
        "the release noise Lap(4b/ε) spends ε/4: the release has ε - ε₁ (ε/2 with the kit's "
        "split)": (lambda d: float(sf(t - d, scale=s)), 4 * bound / epsilon),
    }


def _block_dataset(rng, r, bound, hi):
    """2r + 1 values within 0.6 bound of each other around the median, and a few on each
    side more than 1.5 bound away, some of them outside [0, hi]: the distance to
    instability is r."""
    w = bound * rng.uniform(0.2, 0.6)
    c = hi * rng.uniform(0.35, 0.65)
    outer = int(rng.integers(3, 8))
    x = np.concatenate([c + w * (rng.uniform(size=2 * r + 1) - 0.5),
                        rng.uniform(-0.3 * hi, c - w / 2 - 1.5 * bound, outer),
                        rng.uniform(c + w / 2 + 1.5 * bound, 1.3 * hi, outer),
                        [-hi * rng.uniform(0.01, 0.3), hi * rng.uniform(1.01, 1.3)]])
    return np.round(rng.permutation(x), 3).tolist()


def _beyond_dataset(rng, r, bound, hi, side):
    """A dataset whose median lies beyond the range (above hi for ``side`` 1, below 0 for
    -1): L values inside it, more than 1.5 bound from that end, and L + 1 + 2r beyond it,
    far from it (up to twice the range away). Clamped, the beyond ones all sit at the end,
    the median is that end and the distance to instability is r; the unclamped median
    is at least 0.3 (upper - lower) away."""
    low = int(rng.integers(3, 9))
    inside = rng.uniform(0.05 * hi, hi - 1.5 * bound - 0.05 * hi, low)
    beyond = hi + rng.uniform(0.3 * hi, 2.0 * hi, low + 1 + 2 * r)
    x = np.concatenate([inside, beyond])
    if side < 0:
        x = hi - x
    return np.round(rng.permutation(x), 3).tolist()


def t2_request(rng):
    """One (epsilon, delta, b, range) and six hidden datasets at known distances: d = 0,
    three around the kit's threshold, a stable one whose median lies beyond the range,
    and one so far from instability that every member of the family answers there;
    redrawn until each known slip that is not DP stays outside the family by a margin."""
    from ...beyond_global import distance_to_instability
    for _ in range(400):
        eps = float(np.round(rng.uniform(1.0, 1.35), 2))
        delta = float(10.0 ** -int(rng.integers(3, 5)))
        bound = float(np.round(rng.uniform(1.0, 4.0), 2))
        hi = float(rng.choice([100.0, 150.0, 200.0]))
        ln = math.log(1 / delta)
        t = ptr_threshold(eps, delta)
        kit = lambda d: float(stats.laplace.sf(t - d, scale=2 / eps))     # noqa: E731
        near = [d for d in range(max(1, int(t) - 10), int(t) + 12) if 0.1 <= kit(d) <= 0.9]
        if len(near) < 3:
            continue
        mids = sorted(int(d) for d in rng.choice(near, 3, replace=False))
        if mids[-1] - mids[0] < 3:
            continue
        stable = int(math.ceil(t + 12.0 / eps))
        far = int(math.ceil((ln + 4.0) / (T2_SPLIT[0] * eps)))
        dists = [0, *mids, stable, far]
        slips = ptr_slips(eps, delta, bound, 0.0, hi)
        if not all(_slip_is_out(rate, scale, dists, eps, delta, bound)
                   for rate, scale in slips.values()):
            continue
        side = int(rng.choice([-1, 1]))
        sets = [_block_dataset(rng, d, bound, hi) for d in dists]
        sets[4] = _beyond_dataset(rng, stable, bound, hi, side)
        if any(distance_to_instability(v, 0.0, hi, bound) != d for v, d in zip(sets, dists)):
            continue                                     # pragma: no cover
        cases = [{"values": v, "kind": kind} for v, (kind, _) in zip(sets, _T2_KINDS)]
        truth = [{"d": d, "median": float(np.sort(np.clip(v, 0.0, hi))[len(v) // 2]),
                  "raw_median": float(np.sort(v)[len(v) // 2])}
                 for v, d in zip(sets, dists)]
        return ({"cases": cases, "calls": [n for _, n in _T2_KINDS], "lower": 0.0,
                 "upper": hi, "epsilon": eps, "delta": delta, "proposed_bound": bound,
                 "seed": int(rng.integers(2**62))}, {"cases": truth})
    raise RuntimeError("no hidden draw tells every slip apart")     # pragma: no cover


def _slip_is_out(rate, scale, dists, eps, delta, bound):
    """A slip's expected data lie outside the family even with bands at _T2_DESIGN_ALPHA."""
    calls = [n for _, n in _T2_KINDS]
    ps = [rate(d) for d in dists]
    rates = [(d, int(round(n * p)), n) for d, p, n in zip(dists, ps, calls)]
    count = sum(n * p for n, p in zip(calls, ps))
    fit = ptr_family_fit(rates, ("expected", count, scale), eps, delta, bound,
                         _T2_DESIGN_ALPHA)
    return not fit["fits"]


#: a probe that must answer (the distance is 100; every member's threshold is below 14):
#: None there and in every call is a stub's answer
_T2_PROBE = ([50.0] * 201, 0.0, 100.0, 2.0, 1e-3, 1.0)


def t2_collect(answers, req):
    fn = answers.get("my_ptr_median")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    rng = np.random.default_rng(req["seed"])
    out = []
    with forbid(*T2_FORBIDDEN, code=[fn]) as guard:
        try:
            probe = fn(np.array(_T2_PROBE[0]), *_T2_PROBE[1:], rng)
        except Exception as exc:                         # the student's bug, as data
            return {"error": f"{type(exc).__name__}: {exc}"[:300]}
        for c, calls in zip(req["cases"], req["calls"]):
            args = (np.array(c["values"]), req["lower"], req["upper"], req["epsilon"],
                    req["delta"], req["proposed_bound"], rng)
            got = []
            for _ in range(calls):
                try:
                    value = fn(*args)
                except Exception as exc:                 # the student's bug, as data
                    return {"error": f"{type(exc).__name__}: {exc}"[:300]}
                v = None if value is None else number(value)
                if value is not None and v is None:
                    return {"type": f"{type(value).__name__}: {short(value)}"}
                got.append(v)
            out.append(got)
    if probe is None and all(v is None for got in out for v in got):
        return dict(UNSOLVED)                        # a stub's None, every time
    return {"releases": out, "called_library": bool(guard.used)}


def t2_judge(data, req, truth):
    key = "Task 2"
    bad = opening(key, data, "Hint: d + Lap(2/ε) against ln(1/δ)/(ε/2), then median + "
                             "Lap(2b/ε).",
                  library="your function calls dp.ptr_median (notebook 19's answer); the task is "
                          "to write the test and the release yourself.",
                  returns="my_ptr_median must return a number (the release) or None (⊥)")
    if bad is not None:
        return bad
    req = req if isinstance(req, dict) else {}
    cases, calls = req.get("cases", []), req.get("calls", [])
    facts = field(truth, "cases", [])
    got = data.get("releases")
    if not isinstance(got, list) or not cases or len(got) != len(cases) or \
            len(facts) != len(cases) or len(calls) != len(cases):
        return fail(key, "the check's data is malformed.", "malformed")
    rates, z, raw = [], [], []
    for fact, rel, n in zip(facts, got, calls):
        if not isinstance(rel, list) or len(rel) != n or \
                any(r is not None and number(r) is None for r in rel):
            return fail(key, "the check's data is malformed.", "malformed")
        answered = np.array([r for r in rel if r is not None], dtype=float)
        rates.append((fact["d"], int(answered.size), n))
        z.append(answered - fact["median"])
        raw.append(answered - fact["raw_median"])
    z = np.concatenate(z)
    eps, delta, b = req["epsilon"], req["delta"], req["proposed_bound"]
    a = ALPHA / _T2_TESTS
    fit = ptr_family_fit(rates, z, eps, delta, b, a)
    counts = "; ".join(f"d = {g(d)}: {k}/{n}" for d, k, n in rates)
    shown = (f"on {len(rates)} hidden datasets in [{g(req['lower'])}, {g(req['upper'])}] with "
             f"b = {g(b)}, ε = {g(eps)}, δ = {g(delta)}, your function answered (did not return "
             f"None) at distance d from instability: {counts}")
    if fit["fits"]:
        e_lo, e_hi = fit["split"]
        return ok(key, f"{shown}; your {z.size} releases have mean absolute deviation "
                       f"{g(fit['scale'], 3)} from the clamped median. A PTR of the graded "
                       f"form with a test budget ε₁ in [{g(e_lo, 3)}, {g(e_hi, 3)}] fits them "
                       f"(α = {g(ALPHA, 2)}).")
    hint = _t2_hint(rates, z, raw, req, a)
    family = (f"no PTR of the graded form fits them (test noise Lap(1/ε₁) with ε₁ from "
              f"{g(T2_SPLIT[0])}ε to {g(T2_SPLIT[1])}ε, threshold between ln(1/(2δ))/ε₁ and "
              f"ln(1/δ)/ε₁, release noise Lap(b/(ε - ε₁)); each band at α = {g(a, 3)})")
    if fit["split"] is None:
        spread = "none" if z.size == 0 else g(float(np.mean(np.abs(z))), 3)
        centre = "none" if z.size == 0 else g(float(np.median(z)), 3)
        return fail(key, f"{shown}. Your {z.size} releases, minus the clamped median, have "
                         f"median {centre} and mean absolute value {spread}, but a release "
                         f"of the family is the clamped median plus Laplace noise of scale "
                         f"b/(ε - ε₁), from {g(b / ((1 - T2_SPLIT[0]) * eps), 3)} to "
                         f"{g(b / ((1 - T2_SPLIT[1]) * eps), 3)} here: {family}{hint}",
                    "release")
    e_lo, e_hi = fit["split"]
    bands = "; ".join(f"d = {g(d)}: {_pct(lo)} to {_pct(hi)}"
                      for (d, _, _), (lo, hi) in zip(rates, fit["bands"]))
    return fail(key, f"{shown}. Your releases allow a test budget ε₁ in [{g(e_lo, 3)}, "
                     f"{g(e_hi, 3)}], with which PTR answers {bands}: {family}{hint}",
                "rate")


def _pct(p):
    """A probability as a percentage a reader can take in (the ends shown as < or >)."""
    if p < 0.001:
        return "<0.1%"
    if p > 0.999:
        return ">99.9%"
    return f"{100 * p:.1f}%"


def _t2_hint(rates, z, raw, req, a):
    """": " and the first slip the data fit as well as a member of the family would (the
    same bands at the same level), or "." and the general recipe."""
    eps, delta, b = req["epsilon"], req["delta"], req["proposed_bound"]
    for hint, (rate, scale) in ptr_slips(eps, delta, b, req["lower"], req["upper"]).items():
        if _fits_slip(rates, z, rate, scale, a):
            return f". They fit this slip: {hint}."
    raw = np.concatenate(raw)
    if raw.size and float(np.mean(np.abs(raw))) > 0 and \
            stats.kstest(raw / float(np.mean(np.abs(raw))), "laplace").pvalue >= a:
        return (". Your releases are centred on the median of the unclamped values: clamp "
                "the values into [lower, upper] first.")
    return (". Hint: d is the number of substitutions to reach a dataset whose local "
            "sensitivity exceeds b; with ε₁ = ε/2 compare d + Lap(2/ε) with ln(1/δ)/(ε/2), "
            "return None at or below it, else the median plus Lap(2b/ε).")


def _fits_slip(rates, z, rate, scale, a):
    """The data fit a slip's answer rates and release scale within the same bands."""
    for d, answered, calls in rates:
        u_lo, u_hi = rate_band(answered, calls, a)
        u = _laplace_ppf(rate(d))
        if not (u_lo <= u <= u_hi):
            return False
    if z.size:
        s_lo, s_hi = scale_band(float(np.sum(np.abs(z))), z.size, a)
        if not s_lo <= scale <= s_hi:
            return False
        if stats.kstest(z / scale, "laplace").pvalue < a:
            return False
    return True
