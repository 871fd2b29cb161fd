"""A10 · Local sensitivity and synthetic data (graded tasks).

Every task runs the student's functions on inputs the check draws itself (notebooks 19
and 20). Neighbours substitute one record; values are clamped to [lower, upper]; n is
odd and the median is the m-th smallest value, m = (n + 1)/2; x_i = lower for i < 1 and
x_i = upper for i > n.

* Task 1a (2 points) ``local_sensitivity(values, lower, upper, k)``: the median's local
  sensitivity at distance k, A(k) = max over t = 0 ... k + 1 of x_{m+t} - x_{m+t-k-1}
  [NRS07, Prop. 3.4]. Six hidden (dataset, k) pairs on three datasets with values
  outside the range, k from 0 to past n; judged exactly (1e-9 of upper - lower) against
  dp.local_sensitivity_median. The hidden draw is redrawn until each known slip gives a
  wrong answer on at least one pair: the median one place too low or too high (the
  even-n index), no clamping, t only up to k or only from 1, a window one too short or
  too long, and no padding with lower and upper.
* Task 1b (2 points) ``smooth_sensitivity(values, lower, upper, beta)``: S = max over
  k >= 0 of e^(-k beta) A(k) [NRS07, Def. 2.2]. Three hidden (dataset, beta): one tight
  cluster with beta below ln 2 / n (the maximum is at k = n), one with outliers at the
  beta of (epsilon, delta), one at a larger beta; judged exactly against
  dp.smooth_sensitivity_median. No factor e^(-k beta), the maximum over k < n, k <= m or
  k = 0 only, and Task 1a's median and clamping slips fail on every draw.
* Task 2 (4 points) ``my_ptr_median(values, lower, upper, epsilon, delta,
  proposed_bound, rng)``: propose-test-release [DL09; Dwork & Roth 2014, Sec. 7.3]:
  d = the distance to instability for the bound, answer None when d + Lap(2/epsilon) <=
  ln(1/delta) / (epsilon/2), else median + Lap(2 b / epsilon). Called 2,000, 800 and
  400 times on three hidden datasets (about as stable as the threshold, very stable,
  unstable); the answer rates are compared with dp.ptr_answer_probability (exact binomial
  tests) and the releases, standardised, with Laplace(0, 1) (Kolmogorov-Smirnov, and a
  test of the scale: the sum of |z| is Gamma(N, 1)), each of the five tests at alpha/5
  (alpha = 1e-6). The moderately stable dataset is drawn so that testing without noise,
  the threshold ln(1/delta)/epsilon or ln(1/delta), test noise Lap(1/epsilon), a distance
  off by one and a reversed test all change its answer rate by at least 0.12; a release
  noise of b/epsilon (or any scale but 2b/epsilon) fails the scale test.
  dp.distance_to_instability may be used; dp.ptr_median may not.
* Task 3 (2 points) ``mw_update(synthetic, query, measurement)``: one multiplicative
  weights step of MWEM [HLM12, Algorithm 1]: A'(v) proportional to
  A(v) exp(q(v) (m - q(A)) / (2n)), scaled to the total n of A. Five hidden (A, q, m) with
  q neither empty nor full and |m - q(A)| >= 0.05 n, of both signs; judged to 1e-9
  against dp.multiplicative_weights_update. No renormalisation, normalising to 1, the
  wrong sign, no 1/2, and no 1/n fail on every draw.

Notebook: notebooks/solutions/A10_local_sensitivity_and_synthetic_data.ipynb.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..exercises import ALPHA
from . import Task
from ._student import (UNSOLVED, call, call_each, early, fail, field, float_array, forbid, g,
                       is_unsolved, number, ok, short)

#: notebook 19's answers, which Task 1's functions must not call (however reached)
_T1_LIBRARY = ("dpteach:local_sensitivity_median",
               "dpteach.beyond_global:local_sensitivity_median",
               "dpteach:smooth_sensitivity_median",
               "dpteach.beyond_global:smooth_sensitivity_median",
               "dpteach:smooth_median", "dpteach.beyond_global:smooth_median",
               "dpteach:distance_to_instability",
               "dpteach.beyond_global:distance_to_instability",
               "dpteach.beyond_global:_a_of_k", "dpteach.beyond_global:_a_upto",
               "dpteach.beyond_global:_all_local_sensitivities")
#: what Task 2's honest solution may call although Task 1 forbids it
_T2_NEEDS = ("dpteach:distance_to_instability", "dpteach.beyond_global:distance_to_instability",
             "dpteach.beyond_global:_a_of_k", "dpteach.beyond_global:_a_upto")
_T2_LIBRARY = ("dpteach:ptr_median", "dpteach.beyond_global:ptr_median",
               "dpteach:ptr_answer_probability", "dpteach.beyond_global:ptr_answer_probability")
_T3_LIBRARY = ("dpteach:multiplicative_weights_update",
               "dpteach.synthetic:multiplicative_weights_update", "dpteach.synthetic:_mw_step")


# ------------------------------------------------------------------ the check's windows
def window_maxima(values, lower, upper, k_max, *, shift=0, clamp=True, t_first=0, t_last=1,
                  pad=True, width=0):
    """A(0), ..., A(k_max) by the windows of [NRS07, Prop. 3.4], or a known slip of it:
    the median index m + ``shift``, no clamping, t from ``t_first`` to k + ``t_last``,
    ends repeating the extreme values instead of lower and upper (``pad=False``), windows
    of k + 1 + ``width`` steps. With the defaults it is the kit's A(k)."""
    x = np.asarray(values, dtype=float)
    x = np.sort(np.clip(x, lower, upper) if clamp else x)
    n = x.size
    left, right = (lower, upper) if pad else (x[0], x[-1])
    off = n + k_max + 8                                      # x_i is padded[off + i - 1]
    padded = np.concatenate([np.full(off, left), x, np.full(off, right)])
    m = (n + 1) // 2 + shift
    kk = np.maximum(np.arange(k_max + 1) + width, -1)
    t = np.arange(k_max + 3)
    top = padded[off + m + t - 1]                            # x_{m+t}
    bottom = padded[off + m + t[None, :] - kk[:, None] - 2]  # x_{m+t-kk-1}
    inside = (t[None, :] >= t_first) & (t[None, :] <= kk[:, None] + t_last)
    return np.where(inside, top[None, :] - bottom, -np.inf).max(axis=1)


#: Task 1a's known slips: hint -> arguments of window_maxima
_T1A_SLIPS = {
    "the median is one place too low: for odd n it is the (n + 1)/2-th smallest value "
    "(index n // 2 counting from 0)": {"shift": -1},
    "the median is one place too high: for odd n it is the (n + 1)/2-th smallest value "
    "(index n // 2 counting from 0)": {"shift": 1},
    "clamp the values into [lower, upper] first": {"clamp": False},
    "t runs from 0 to k + 1, not only to k": {"t_last": 0},
    "t runs from 0 (the window ending at the median), not from 1": {"t_first": 1},
    "the window is one step too short: x_{m+t} - x_{m+t-k-1} spans k + 1 steps": {"width": -1},
    "the window is one step too long: x_{m+t} - x_{m+t-k-1} spans k + 1 steps": {"width": 1},
    "beyond the data x_i is lower (i < 1) and upper (i > n), not the extreme values":
        {"pad": False},
}
_T1B_SLIPS = ("no factor e^(-k beta): each A(k) is discounted by e^(-k beta)",
              "the maximum stops too early: k runs up to n (from k = n + 1 on A(k) is "
              "upper - lower)",
              "the maximum stops at k = m: k runs up to n",
              "A(0) alone is the local sensitivity; the smooth one is a maximum over k >= 0")


def smooth_slips(values, lower, upper, beta):
    """hint -> Task 1b's answer with that slip (the known slips of the maximum over k,
    and Task 1a's median and clamping slips)."""
    n = len(values)
    a = window_maxima(values, lower, upper, n + 1)
    disc = np.exp(-beta * np.arange(n + 2)) * a
    out = dict(zip(_T1B_SLIPS, (float(a.max()), float(disc[:n].max()),
                                float(disc[:(n + 1) // 2 + 1].max()), float(a[0]))))
    for hint, kw in list(_T1A_SLIPS.items())[:3]:
        out[hint] = float(np.max(np.exp(-beta * np.arange(n + 2)) *
                                 window_maxima(values, lower, upper, n + 1, **kw)))
    return out


def _t1_dataset(rng, *, tight=False, side=1):
    """An odd-sized dataset over [0, hi]: a tight cluster, or spread with a few outliers
    below the range (``side`` -1), above it (1) or none (0)."""
    n = int(rng.choice(np.arange(13, 42, 2)))
    hi = float(rng.choice([10.0, 20.0, 50.0, 100.0]))
    if tight:
        x = hi * (rng.uniform(0.35, 0.65) + rng.uniform(-0.05, 0.05, n))
    else:
        x = hi * rng.beta(2.0, 2.0, n)
        k = int(rng.integers(2, 5)) * abs(side)
        x[:k] = hi * (rng.uniform(-1.0, -0.1, k) if side < 0 else rng.uniform(1.1, 2.0, k))
    return {"values": np.round(rng.permutation(x), 2).tolist(), "lower": 0.0, "upper": hi}


def _told_apart(found, want, scale):
    return abs(found - want) > 1e-6 * scale


def _t1a_request(rng):
    """Six (dataset, k) pairs, redrawn until every slip misses at least one."""
    from ...beyond_global import local_sensitivity_median
    for _ in range(500):
        cases = []
        for side in rng.permutation([-1, 0, 1]):
            data = _t1_dataset(rng, side=side)
            n = len(data["values"])
            m = (n + 1) // 2
            ks = sorted({int(rng.integers(0, 3)), int(rng.integers(3, m - 1)),
                         int(rng.integers(m - 2, n + 4))})
            for k in rng.choice(ks, 2, replace=False):
                cases.append({**data, "k": int(k)})
        truth = [local_sensitivity_median(c["values"], c["lower"], c["upper"], c["k"])
                 for c in cases]
        def missed_somewhere(kw):
            return any(_told_apart(window_maxima(c["values"], c["lower"], c["upper"], c["k"],
                                                 **kw)[-1], t, c["upper"])
                       for c, t in zip(cases, truth))
        if all(missed_somewhere(kw) for kw in _T1A_SLIPS.values()):
            return {"cases": cases}, {"values": truth}
    raise RuntimeError("no hidden draw tells every slip apart")     # pragma: no cover


def _t1b_request(rng):
    """Three (dataset, beta): a tight cluster at beta < ln 2 / n, outliers at the beta of
    (epsilon, delta), and a larger beta; redrawn until every slip misses one."""
    from ...beyond_global import smooth_beta, smooth_sensitivity_median
    for _ in range(500):
        side = int(rng.choice([-1, 1]))
        tight, spread, other = (_t1_dataset(rng, tight=True), _t1_dataset(rng, side=side),
                                _t1_dataset(rng, side=-side))
        cases = [{**tight, "beta": float(np.round(rng.uniform(0.2, 0.7) * math.log(2) /
                                                  len(tight["values"]), 5))},
                 {**spread, "beta": float(np.round(smooth_beta(rng.uniform(0.5, 2.0),
                                                               10 ** rng.uniform(-7, -4)), 5))},
                 {**other, "beta": float(np.round(rng.uniform(0.2, 1.0), 3))}]
        cases = [cases[i] for i in rng.permutation(3)]
        truth = [smooth_sensitivity_median(c["values"], c["lower"], c["upper"], c["beta"])
                 for c in cases]
        slips = [smooth_slips(c["values"], c["lower"], c["upper"], c["beta"]) for c in cases]
        if all(any(_told_apart(s[hint], t, c["upper"]) for c, s, t in zip(cases, slips, truth))
               for hint in slips[0]):
            return {"cases": cases}, {"values": truth}
    raise RuntimeError("no hidden draw tells every slip apart")     # pragma: no cover


def _t1_collect_for(name, param):
    def collect(answers, req):
        fn = answers.get(name)
        if is_unsolved(fn):
            return dict(UNSOLVED)
        with forbid(*_T1_LIBRARY, code=[fn]) as guard:
            data = call_each(fn, ((np.array(c["values"]), c["lower"], c["upper"], c[param])
                                  for c in req["cases"]), "values")
        if "values" in data:
            data["called_library"] = bool(guard.used)
        return data
    return collect


def _t1_judge_for(key, name, param):
    def judge(data, req, truth):
        bad = early(key, data, "Hint: sort the clamped values and take the largest gap "
                               "x_{m+t} - x_{m+t-k-1}.")
        if bad is not None:
            return bad
        if data.get("called_library") is True:
            return fail(key, "your function calls the kit's local or smooth sensitivity "
                             "(dp.local_sensitivity_median, dp.smooth_sensitivity_median or "
                             "dp.distance_to_instability); the task is to compute it yourself.",
                        "library")
        found, expected = data.get("values"), field(truth, "values", [])
        cases = req.get("cases", []) if isinstance(req, dict) else []
        if not isinstance(found, list) or len(found) != len(expected) or \
                len(cases) != len(expected):
            return fail(key, "the check's data is malformed.", "malformed")
        for c, f, want in zip(cases, found, expected):
            shown = f"{name}(<{len(c['values'])} values>, {g(c['lower'])}, {g(c['upper'])}, " \
                    f"{param}={g(c[param])})"
            v = number(f)
            if v is None:
                return fail(key, f"{shown} returned {short(f)}; expected a number.", "type")
            if abs(v - want) > 1e-9 * (c["upper"] - c["lower"]):
                return fail(key, f"{shown} returned {g(v, 8)}; the answer is {g(want, 8)}"
                                 f"{_t1_hint(c, v, param)}", "wrong")
        return ok(key, f"exact on {len(cases)} hidden cases (" + "; ".join(
            f"n = {len(c['values'])}, {param} = {g(c[param])}: {g(w, 6)}"
            for c, w in zip(cases, expected)) + ").")
    return judge


def _t1_hint(case, value, param):
    """": " and the slip the value matches, or a general hint."""
    args = (case["values"], case["lower"], case["upper"])
    if param == "k":
        named = {hint: window_maxima(*args, case["k"], **kw)[-1]
                 for hint, kw in _T1A_SLIPS.items()}
    else:
        named = smooth_slips(*args, case["beta"])
    for hint, slip in named.items():
        if not _told_apart(value, slip, case["upper"]):
            return f": {hint}."
    return (". Hint: clamp, sort, pad with lower/upper, and take the largest "
            "x_{m+t} - x_{m+t-k-1} over t = 0 ... k + 1" +
            (" (then the maximum of e^(-k beta) A(k) over k = 0 ... n + 1)."
             if param == "beta" else "."))


# ------------------------------------------------------------------ Task 2
_T2_CALLS = (2000, 800, 400)          # moderate, stable, unstable
_T2_GAP = 0.12                         # each slip moves the moderate answer rate this much


def ptr_threshold(epsilon, delta):
    """ln(1/delta) / (epsilon/2): the noisy distance must pass it (Dwork & Roth, Sec. 7.3)."""
    return math.log(1.0 / delta) / (epsilon / 2.0)


def ptr_slip_rates(d, epsilon, delta):
    """hint -> the probability of an answer with that slip, at distance d."""
    t, s = ptr_threshold(epsilon, delta), 2.0 / epsilon
    sf = stats.laplace.sf
    return {
        "the distance is tested without noise: add Lap(2/ε) to it": float(d > t),
        "the threshold is ln(1/δ)/(ε/2) (the test has ε/2), not ln(1/δ)/ε":
            float(sf(t / 2 - d, scale=s)),
        "the threshold is ln(1/δ)/(ε/2), not ln(1/δ)":
            float(sf(math.log(1 / delta) - d, scale=s)),
        "the test's noise is Lap(2/ε) (it has ε/2), not Lap(1/ε)": float(sf(t - d, scale=s / 2)),
        "the test has ε/2 of the budget: threshold ln(1/δ)/(ε/2) and noise Lap(2/ε)":
            float(sf(t / 2 - d, scale=s / 2)),
        "the distance to instability is one too small": float(sf(t - d + 1, scale=s)),
        "the distance to instability is one too large": float(sf(t - d - 1, scale=s)),
        "answer when the noisy distance is above the threshold, not below":
            float(stats.laplace.cdf(t - d, scale=s)),
    }


def _block_dataset(rng, r, bound, hi):
    """2r + 1 values within 0.6 bound of each other around the median, and a few on each
    side more than 1.5 bound away: the distance to instability is r."""
    w = bound * rng.uniform(0.2, 0.6)
    c = hi * rng.uniform(0.35, 0.65)
    outer = int(rng.integers(2, 8))
    x = np.concatenate([c + w * (rng.uniform(size=2 * r + 1) - 0.5),
                        rng.uniform(0.02 * hi, c - w / 2 - 1.5 * bound, outer),
                        rng.uniform(c + w / 2 + 1.5 * bound, 0.98 * hi, outer)])
    return np.round(rng.permutation(x), 3).tolist()


def _t2_case(rng, kind):
    """One hidden PTR input of ``kind`` (moderate, stable, unstable) with its answer rate."""
    from ...beyond_global import distance_to_instability, ptr_answer_probability
    while True:
        eps = float(np.round(rng.uniform(1.0, 2.0), 2))
        delta = float(10.0 ** -int(rng.integers(4, 7)))
        bound = float(np.round(rng.uniform(1.0, 4.0), 2))
        hi = float(rng.choice([100.0, 150.0, 200.0]))
        t = ptr_threshold(eps, delta)
        if kind == "unstable":
            r = 0
        elif kind == "stable":
            r = int(math.ceil(t + 14.0 / eps))
        else:
            good = [r for r in range(max(1, int(t) - 6), int(t) + 8)
                    if 0.15 <= stats.laplace.sf(t - r, scale=2 / eps) <= 0.85 and
                    all(abs(p - stats.laplace.sf(t - r, scale=2 / eps)) >= _T2_GAP
                        for p in ptr_slip_rates(r, eps, delta).values())]
            if not good:
                continue
            r = int(rng.choice(good))
        values = _block_dataset(rng, r, bound, hi)
        if distance_to_instability(values, 0.0, hi, bound) != r:   # pragma: no cover
            continue
        case = {"values": values, "lower": 0.0, "upper": hi, "epsilon": eps, "delta": delta,
                "proposed_bound": bound, "kind": kind}
        p = ptr_answer_probability(values, 0.0, hi, eps, delta, proposed_bound=bound)
        return case, {"p": float(p), "d": r, "median": float(np.sort(values)[len(values) // 2])}


def _t2_request(rng):
    cases, truth = [], []
    for kind in ("moderate", "stable", "unstable"):
        c, t = _t2_case(rng, kind)
        cases.append(c)
        truth.append(t)
    return {"cases": cases, "calls": list(_T2_CALLS), "seed": int(rng.integers(2**62))}, \
        {"cases": truth}


#: a probe that must answer (the distance is 100, the threshold below 7): None there and
#: in every call is a stub's answer
_T2_PROBE = ([50.0] * 201, 0.0, 100.0, 2.0, 1e-3, 1.0)


def _t2_collect(answers, req):
    fn = answers.get("my_ptr_median")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    rng = np.random.default_rng(req["seed"])
    out = []
    with forbid(*_T2_LIBRARY, code=[fn]) as guard:
        try:
            probe = fn(np.array(_T2_PROBE[0]), *_T2_PROBE[1:], rng)
        except Exception as exc:                         # the student's bug, as data
            return {"error": f"{type(exc).__name__}: {exc}"[:300]}
        for c, calls in zip(req["cases"], req["calls"]):
            args = (np.array(c["values"]), c["lower"], c["upper"], c["epsilon"], c["delta"],
                    c["proposed_bound"], rng)
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


def _t2_judge(data, req, truth):
    key = "Task 2"
    bad = early(key, data, "Hint: d + Lap(2/ε) against ln(1/δ)/(ε/2), then median + "
                           "Lap(2b/ε).")
    if bad is not None:
        return bad
    if data.get("called_library") is True:
        return fail(key, "your function calls dp.ptr_median (notebook 19's answer); the task is "
                         "to write the test and the release yourself.", "library")
    if "type" in data:
        return fail(key, f"my_ptr_median must return a number (the release) or None (⊥), found "
                         f"{str(data['type'])[:100]}.", "type")
    cases = req.get("cases", []) if isinstance(req, dict) else []
    facts = field(truth, "cases", [])
    got = data.get("releases")
    if not isinstance(got, list) or len(got) != len(cases) or len(facts) != len(cases):
        return fail(key, "the check's data is malformed.", "malformed")
    tests = len(cases) + 2          # a binomial test per dataset, KS and the scale test
    rows, z = [], []
    for c, fact, rel, calls in zip(cases, facts, got, req.get("calls", [])):
        if not isinstance(rel, list) or len(rel) != calls or \
                any(r is not None and number(r) is None for r in rel):
            return fail(key, "the check's data is malformed.", "malformed")
        answered = np.array([r for r in rel if r is not None], dtype=float)
        p = fact["p"]
        pval = float(stats.binomtest(answered.size, calls, p).pvalue)
        shown = (f"on a hidden dataset of n = {len(c['values'])} values in [0, {g(c['upper'])}] "
                 f"at distance d = {fact['d']} from instability for the bound b = "
                 f"{g(c['proposed_bound'])} (ε = {g(c['epsilon'])}, δ = {g(c['delta'])})")
        if pval < ALPHA / tests:
            return fail(key, f"{shown}, your function answered (did not return None) in "
                             f"{answered.size} of {calls} calls "
                             f"({g(100 * answered.size / calls, 3)}%); PTR answers with "
                             f"probability {g(100 * p, 3)}% (binomial p = {g(pval, 3)}, "
                             f"rejected at α = {g(ALPHA / tests, 3)})"
                             f"{_t2_rate_hint(answered.size / calls, fact['d'], c)}", "rate")
        z.append((answered - fact["median"]) / (2 * c["proposed_bound"] / c["epsilon"]))
        rows.append(f"d = {fact['d']}: answered {answered.size}/{calls} (expected "
                    f"{g(100 * p, 3)}%)")
    z = np.concatenate(z)
    ks, scale = _release_tests(z)
    if min(ks, scale) < ALPHA / tests:
        spread, centre = float(np.mean(np.abs(z))), float(np.median(z)) if z.size else 0.0
        hint = ("they are not centred on the median of the clamped values"
                if abs(centre) > 0.2 else
                "the noise is Lap(2b/ε) with b the proposed bound: the release has ε/2"
                if abs(spread - 0.5) < 0.1 else
                "the noise scale must be 2b/ε, b the proposed bound (not the local or global "
                "sensitivity)")
        return fail(key, f"your {z.size} releases, minus the median and divided by 2b/ε, have "
                         f"median {g(centre, 3)} and mean absolute value {g(spread, 3)}; "
                         f"they should be Laplace(0, 1) (median 0, mean absolute value 1; KS p = "
                         f"{g(ks, 3)}, scale test p = {g(scale, 3)}, each rejected below α = "
                         f"{g(ALPHA / tests, 3)}): {hint}.", "release")
    return ok(key, "your ⊥ rates match PTR on 3 hidden datasets (" + "; ".join(rows) +
              f") and your {z.size} releases are the median plus Lap(2b/ε) (KS p = "
              f"{g(ks, 3)}, scale test p = {g(scale, 3)}).")


def _release_tests(z):
    """p-values for standardised releases z ~ Laplace(0, 1): Kolmogorov-Smirnov, and a
    two-sided test of the scale (sum |z| is Gamma(N, 1))."""
    if z.size == 0:
        return 0.0, 0.0
    total = float(np.sum(np.abs(z)))
    scale = 2 * min(stats.gamma.cdf(total, z.size), stats.gamma.sf(total, z.size))
    return float(stats.kstest(z, "laplace").pvalue), float(min(1.0, scale))


def _t2_rate_hint(rate, d, case):
    """": " and the slip whose rate is nearest the observed one, when it is close."""
    slips = ptr_slip_rates(d, case["epsilon"], case["delta"])
    hint, p = min(slips.items(), key=lambda kv: abs(kv[1] - rate))
    if abs(p - rate) < 0.03:
        return f": {hint}."
    return (". Hint: d is the number of substitutions to reach a dataset whose local "
            "sensitivity exceeds b; compare d + Lap(2/ε) with ln(1/δ)/(ε/2), return None at "
            "or below it.")


# ------------------------------------------------------------------ Task 3
def _t3_request(rng):
    """Five hidden (A, q, m): q a range or a subset, neither empty nor full; m - q(A) of
    both signs and at least 0.05 n in size."""
    from ...synthetic import multiplicative_weights_update
    cases, truth = [], []
    for sign in rng.permutation([1.0, -1.0, 1.0, -1.0, rng.choice([-1.0, 1.0])]):
        size = int(rng.integers(6, 40))
        n = float(rng.choice([200.0, 1000.0, 5000.0, 20000.0]))
        a = rng.gamma(2.0, size=size)
        a = np.round(n * a / a.sum(), 4)
        if rng.random() < 0.5:
            lo = int(rng.integers(0, size - 1))
            hi = int(rng.integers(lo, size - 1 if lo == 0 else size))
            q = ((np.arange(size) >= lo) & (np.arange(size) <= hi)).astype(float)
        else:
            q = np.zeros(size)
            q[rng.choice(size, int(rng.integers(1, size)), replace=False)] = 1.0
        total = float(a.sum())
        qa = float(q @ a)
        m = float(np.round(qa + sign * rng.uniform(0.05, 0.5) * total, 3))
        cases.append({"synthetic": a.tolist(), "query": q.astype(int).tolist(),
                      "measurement": m})
        truth.append(multiplicative_weights_update(a, q, m).tolist())
    return {"cases": cases}, {"updated": truth}


def mw_slips(a, q, m):
    """hint -> the update with that slip."""
    a, q = np.asarray(a, dtype=float), np.asarray(q, dtype=float)
    n, c = a.sum(), m - q @ a

    def scaled(exponent, to=n):                  # to * a e^exponent / sum, in log space
        with np.errstate(divide="ignore"):
            w = np.log(a) + exponent
        w = np.exp(w - w.max())
        return to * w / w.sum()
    return {
        "scale the result to the total n of the synthetic histogram (renormalise)":
            a * np.exp(q * c / (2 * n)),
        "scale to the total n, not to 1: the synthetic data keep n records":
            scaled(q * c / (2 * n), 1.0),
        "the sign: cells of the query grow when the measurement is above q(A)":
            scaled(-q * c / (2 * n)),
        "the exponent is q(v)·(m - q(A))/(2n): the factor 1/2 is missing": scaled(q * c / n),
        "the exponent is divided by 2n: the total n is missing": scaled(q * c / 2),
    }


def _t3_collect(answers, req):
    fn = answers.get("mw_update")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    out = []
    with forbid(*_T3_LIBRARY, code=[fn]) as guard:
        for c in req["cases"]:
            value, problem = call(fn, np.array(c["synthetic"]), np.array(c["query"]),
                                  c["measurement"])
            if problem is not None:
                return problem
            arr = float_array(value, (len(c["synthetic"]),))
            out.append(arr if arr is not None else short(value))
    return {"updated": out, "called_library": bool(guard.used)}


def _t3_judge(data, req, truth):
    key = "Task 3"
    bad = early(key, data, "Hint: A(v)·exp(q(v)(m - q(A))/(2n)), then scale to total n.")
    if bad is not None:
        return bad
    if data.get("called_library") is True:
        return fail(key, "your function calls dp.multiplicative_weights_update (notebook 20's "
                         "answer); the task is to write the update yourself.", "library")
    cases = req.get("cases", []) if isinstance(req, dict) else []
    found, expected = data.get("updated"), field(truth, "updated", [])
    if not isinstance(found, list) or len(found) != len(cases) or len(expected) != len(cases):
        return fail(key, "the check's data is malformed.", "malformed")
    for c, f, want in zip(cases, found, expected):
        a = np.array(c["synthetic"], dtype=float)
        want = np.asarray(want, dtype=float)
        shown = (f"mw_update(<{a.size} cells, total {g(a.sum())}>, <a query of "
                 f"{int(np.sum(c['query']))} cells>, {g(c['measurement'])})")
        arr = float_array(f, a.shape)
        if arr is None:
            return fail(key, f"{shown} returned {short(f)}; expected a finite array of "
                             f"{a.size} non-negative counts.", "type")
        n = float(a.sum())
        if not np.allclose(arr, want, rtol=1e-9, atol=1e-9 * n):
            hint = next((h for h, s in mw_slips(a, c["query"], c["measurement"]).items()
                         if np.allclose(arr, s, rtol=1e-6, atol=1e-6 * n)),
                        "A'(v) is proportional to A(v)·exp(q(v)·(m - q(A))/(2n)), with the "
                        "same total n as A")
            i = int(np.argmax(np.abs(arr - want)))
            return fail(key, f"{shown}: cell {i} came back as {g(arr[i], 6)}, the update gives "
                             f"{g(want[i], 6)} (your total {g(arr.sum(), 6)}, expected "
                             f"{g(n, 6)}): {hint}.", "wrong")
    gaps = [c["measurement"] - float(np.dot(c["query"], c["synthetic"])) for c in cases]
    return ok(key, f"exact on {len(cases)} hidden updates (m - q(A) from {g(min(gaps), 4)} to "
                   f"{g(max(gaps), 4)}).")


TASKS = [
    Task("Task 1a", 2, ("local_sensitivity",), _t1a_request,
         _t1_collect_for("local_sensitivity", "k"),
         _t1_judge_for("Task 1a", "local_sensitivity", "k"),
         title="the median's local sensitivity at distance k"),
    Task("Task 1b", 2, ("smooth_sensitivity",), _t1b_request,
         _t1_collect_for("smooth_sensitivity", "beta"),
         _t1_judge_for("Task 1b", "smooth_sensitivity", "beta"),
         title="the median's smooth sensitivity"),
    Task("Task 2", 4, ("my_ptr_median",), _t2_request, _t2_collect, _t2_judge,
         title="propose-test-release for the median", extra={"needs": _T2_NEEDS}),
    Task("Task 3", 2, ("mw_update",), _t3_request, _t3_collect, _t3_judge,
         title="one multiplicative-weights update of MWEM"),
]
