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
* Task 1c (1 point) ``beta_for(epsilon, delta)``: beta = epsilon / (2 ln(2/delta)), the
  smoothing Laplace noise admits [NRS07, Example 2]; five hidden (epsilon, delta), judged
  to 1e-9. ln(1/delta), no factor 2 (a beta twice too large breaks the delta), half the
  beta and log10 fail, each named only when the value is that slip's to 1e-9.
* Task 1d (2 points) ``smooth_median(values, lower, upper, epsilon, delta, rng)``: the
  clamped median + Lap(2 S / epsilon), S the smooth sensitivity at Task 1c's beta. 500
  calls on each of three hidden datasets (a tight cluster, a spread one, one whose median
  lies beyond the range); each dataset's releases against exactly that Laplace
  (Kolmogorov-Smirnov and the scale test, 2 x 3 tests at alpha/6). The draw is redrawn
  until each slip's scale is off by a factor 1.6, or its centre by two scales, on some
  dataset: beta twice too large, noise S/epsilon or 4S/epsilon, A(0) or the global
  sensitivity for S, the unclamped median.
* Task 2 (4 points) ``my_ptr_median(values, lower, upper, epsilon, delta,
  proposed_bound, rng)``: propose-test-release [DL09; Dwork & Roth 2014, Sec. 7.3]. The
  graded family, stated in the notebook: a test budget epsilon_1 from epsilon/4 to
  3 epsilon/4, d + Lap(1/epsilon_1) against a threshold from ln(1/(2 delta))/epsilon_1 to
  ln(1/delta)/epsilon_1, and median + Lap(b/(epsilon - epsilon_1)). Six hidden datasets
  share (epsilon, delta, b, range), at known distances d: 0, three near the kit's
  threshold, one stable whose median lies beyond the range, one so far that every member
  answers. The judge accepts when some (epsilon_1, c) of the family lies in every band
  the data give (a Clopper-Pearson band per answer rate, an exact Gamma band for the
  release scale, a Kolmogorov-Smirnov band; Bonferroni, alpha overall): a member is
  refused with probability at most alpha. The draw is redrawn until every known slip
  that is not DP (no noise on d, thresholds ln(1/delta)/epsilon or ln(1/delta), test noise
  Lap(1/epsilon), an epsilon/4 test at the epsilon/2 threshold, a reversed test, no test,
  release noise b/epsilon, 4b/epsilon or global) stays outside the family with bands at
  1e-12 around its expected data; epsilon <= 1.35 keeps a distance one too large inside
  the family (it is the threshold moved by one step). A hint names a slip only when the
  data fit that slip within the same bands; otherwise the message gives the measured
  rates and the rates the family allows. dp.distance_to_instability may be used;
  dp.ptr_median may not.
* Task 3a (2 points) ``mw_update(synthetic, query, measurement)``: one multiplicative
  weights step of MWEM [HLM12, Algorithm 1]: A'(v) proportional to
  A(v) exp(q(v) (m - q(A)) / (2n)), scaled to the total n of A. Five hidden (A, q, m) with
  q neither empty nor full and |m - q(A)| >= 0.05 n, of both signs; judged to 1e-9
  against dp.multiplicative_weights_update. No renormalisation, normalising to 1, the
  wrong sign, no 1/2, and no 1/n fail on every draw.
* Task 3b (2 points) ``mwem_round(histogram, synthetic, queries, epsilon, iterations,
  rng)`` -> (index, measurement): the selection P(q) proportional to
  exp((epsilon/2T) |q(A) - q(x)| / 2) and the measurement q(x) + Lap(2T/epsilon). 2,000
  calls; each query's count against its exact binomial, the measurements' noise against
  Lap(2T/epsilon) (KS and the scale test). The draw is redrawn until each slip (the
  exponent times 2, 4, 1/2 or T, a uniform or the worst query, noise T/epsilon,
  1/epsilon, 2/epsilon or 4T/epsilon) is off by 0.15 in some query's probability or by a
  factor 1.6 in the noise scale.

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
               "dpteach.beyond_global:_all_local_sensitivities",
               "dpteach:median_sensitivity_window",
               "dpteach.beyond_global:median_sensitivity_window")
#: what Task 2's honest solution may call although Task 1 forbids it
_T2_NEEDS = ("dpteach:distance_to_instability", "dpteach.beyond_global:distance_to_instability",
             "dpteach.beyond_global:_a_of_k", "dpteach.beyond_global:_a_upto")
_T2_LIBRARY = ("dpteach:ptr_median", "dpteach.beyond_global:ptr_median",
               "dpteach:ptr_answer_probability", "dpteach.beyond_global:ptr_answer_probability",
               "dpteach.beyond_global:_ptr_runs", "dpteach.beyond_global:_ptr_threshold")
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


# ------------------------------------------------------------------ Task 1c, 1d: smooth median
_T1C_LIBRARY = ("dpteach:smooth_beta", "dpteach.beyond_global:smooth_beta")
_T1C_SLIPS = {
    "ln(2/δ), not ln(1/δ)": lambda e, d: e / (2 * math.log(1 / d)),
    "the factor 2 is missing: β = ε/(2 ln(2/δ)); twice that β breaks (ε, δ)-DP":
        lambda e, d: e / math.log(2 / d),
    "β = ε/(2 ln(2/δ)), not half of it": lambda e, d: e / (4 * math.log(2 / d)),
    "the logarithm is the natural one (math.log), not log10":
        lambda e, d: e / (2 * math.log10(2 / d)),
    "ε/(2 ln(2/δ)): ε is in the numerator": lambda e, d: 2 * math.log(2 / d) / e,
}


def _t1c_request(rng):
    from ...beyond_global import smooth_beta
    cases = [{"epsilon": float(np.round(rng.uniform(0.2, 3.0), 3)),
              "delta": float(np.round(10 ** rng.uniform(-9, -3), 12))} for _ in range(5)]
    return {"cases": cases}, {"values": [smooth_beta(c["epsilon"], c["delta"]) for c in cases]}


def _t1c_collect(answers, req):
    fn = answers.get("beta_for")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    with forbid(*_T1C_LIBRARY, code=[fn]) as guard:
        data = call_each(fn, ((c["epsilon"], c["delta"]) for c in req["cases"]), "values")
    if "values" in data:
        data["called_library"] = bool(guard.used)
    return data


def _t1c_judge(data, req, truth):
    key = "Task 1c"
    bad = early(key, data, "Hint: β = ε/(2 ln(2/δ)).")
    if bad is not None:
        return bad
    if data.get("called_library") is True:
        return fail(key, "your function calls dp.smooth_beta; the task is to write the "
                         "formula yourself.", "library")
    cases = req.get("cases", []) if isinstance(req, dict) else []
    found, expected = data.get("values"), field(truth, "values", [])
    if not isinstance(found, list) or len(found) != len(expected) or len(cases) != len(expected):
        return fail(key, "the check's data is malformed.", "malformed")
    for c, f, want in zip(cases, found, expected):
        shown = f"beta_for({g(c['epsilon'])}, {g(c['delta'])})"
        v = number(f)
        if v is None:
            return fail(key, f"{shown} returned {short(f)}; expected a number.", "type")
        if abs(v - want) > 1e-9 * want:
            hint = next((h for h, slip in _T1C_SLIPS.items()
                         if abs(v - slip(c["epsilon"], c["delta"])) <= 1e-9 * abs(v)),
                        "β = ε/(2 ln(2/δ)) (NRS07, Example 2)")
            return fail(key, f"{shown} returned {g(v, 8)}; the answer is {g(want, 8)} (your "
                             f"value is {g(v / want, 4)} times it): {hint}.", "wrong")
    return ok(key, f"exact on {len(cases)} hidden (ε, δ).")


_T1D_CALLS = 500
_T1D_LIBRARY = ("dpteach:smooth_median", "dpteach.beyond_global:smooth_median")


def _smooth_s(values, lower, upper, beta, clamp=True):
    n = len(values)
    a = window_maxima(values, lower, upper, n + 1, clamp=clamp)
    return float(np.max(np.exp(-beta * np.arange(n + 2)) * a))


def smooth_median_slips(values, lower, upper, epsilon, delta):
    """hint -> (centre, noise scale) of a smooth median with that slip."""
    from ...beyond_global import smooth_beta
    beta = smooth_beta(epsilon, delta)
    x = np.sort(np.clip(values, lower, upper))
    med, raw = float(x[x.size // 2]), float(np.sort(values)[len(values) // 2])
    s = _smooth_s(values, lower, upper, beta)
    a0 = float(window_maxima(values, lower, upper, 0)[0])
    return {
        "β is twice too large: β = ε/(2 ln(2/δ)), with the factor 2":
            (med, 2 * _smooth_s(values, lower, upper, 2 * beta) / epsilon),
        "the noise scale is 2S/ε (Laplace with ε/2 of admissibility), not S/ε": (med, s / epsilon),
        "the median is that of the clamped values: clamp into [lower, upper] first":
            (raw, 2 * s / epsilon),
        "the noise is scaled to the smooth sensitivity S, not to the local sensitivity A(0), "
        "which is not private": (med, 2 * a0 / epsilon),
        "the noise is 2S/ε with the smooth sensitivity S, not the global sensitivity":
            (med, 2 * (upper - lower) / epsilon),
        "the noise is 2S/ε, not 4S/ε": (med, 4 * s / epsilon),
    }


def _t1d_dataset(rng, kind, hi):
    n = int(rng.choice(np.arange(15, 30, 2)))
    if kind == "tight":
        x = hi * (rng.uniform(0.35, 0.65) + rng.uniform(-0.04, 0.04, n))
        x[:2] = [-0.3 * hi, 1.4 * hi]                            # two outside the range
    elif kind == "spread":
        x = hi * rng.beta(2.0, 2.0, n)
        k = int(rng.integers(2, 5))
        x[:k] = hi * rng.uniform(1.1, 2.0, k)
    else:                                                        # the median beyond the range
        inside = int(rng.integers(2, n // 2 - 1))
        x = np.concatenate([hi * rng.uniform(0.7, 0.99, inside),
                            hi * rng.uniform(6.0, 11.0, n - inside)])
        if rng.random() < 0.5:
            x = hi - x
    return np.round(rng.permutation(x), 2).tolist()


def _t1d_request(rng):
    """Three hidden datasets (a tight cluster, a spread one, one whose median lies beyond
    the range), each with its (epsilon, delta); redrawn until every slip's noise scale
    is off by a factor of at least 1.6 on some dataset, or its centre by 2 scales."""
    from ...beyond_global import smooth_beta
    for _ in range(500):
        hi = float(rng.choice([10.0, 50.0, 100.0]))
        cases = []
        for kind in ("tight", "spread", "beyond"):
            eps = float(np.round(rng.uniform(1.0, 2.0), 2))
            delta = float(10.0 ** -int(rng.integers(5, 8)))
            cases.append({"values": _t1d_dataset(rng, kind, hi), "lower": 0.0, "upper": hi,
                          "epsilon": eps, "delta": delta})
        truth = []
        for c in cases:
            beta = smooth_beta(c["epsilon"], c["delta"])
            x = np.sort(np.clip(c["values"], 0.0, hi))
            truth.append({"median": float(x[x.size // 2]),
                          "scale": 2 * _smooth_s(c["values"], 0.0, hi, beta) / c["epsilon"]})
        if min(t["scale"] for t in truth) <= 0:
            continue
        slips = [smooth_median_slips(c["values"], 0.0, hi, c["epsilon"], c["delta"])
                 for c in cases]
        def out(hint):
            return any(abs(math.log(max(s[hint][1], 1e-300) / t["scale"])) >= math.log(1.6) or
                       abs(s[hint][0] - t["median"]) >= 2 * t["scale"]
                       for s, t in zip(slips, truth))
        if all(out(h) for h in slips[0]):
            order = rng.permutation(3)
            return ({"cases": [cases[i] for i in order], "calls": _T1D_CALLS,
                     "seed": int(rng.integers(2**62))}, {"cases": [truth[i] for i in order]})
    raise RuntimeError("no hidden draw tells every slip apart")     # pragma: no cover


def _t1d_collect(answers, req):
    fn = answers.get("smooth_median")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    rng = np.random.default_rng(req["seed"])
    out = []
    with forbid(*_T1D_LIBRARY, *_T1_LIBRARY, *_T1C_LIBRARY, code=[fn]) as guard:
        for c in req["cases"]:
            args = (np.array(c["values"]), c["lower"], c["upper"], c["epsilon"], c["delta"], rng)
            got = []
            for i in range(req["calls"]):
                value, problem = call(fn, *args)
                if problem is not None:
                    return problem
                v = number(value)
                if v is None:
                    if i == 0 and value is None:
                        return dict(UNSOLVED)
                    return {"type": f"{type(value).__name__}: {short(value)}"}
                got.append(v)
            out.append(got)
    return {"releases": out, "called_library": bool(guard.used)}


def _laplace_fit(z, centre, scale, a):
    """(KS p-value, scale-test p-value) of releases z against centre + Lap(scale)."""
    if scale <= 0:
        return 0.0, 0.0
    w = (np.asarray(z, dtype=float) - centre) / scale
    total = float(np.sum(np.abs(w)))
    two = 2 * min(stats.gamma.cdf(total, w.size), stats.gamma.sf(total, w.size))
    return float(stats.kstest(w, "laplace").pvalue), float(min(1.0, two))


def _t1d_judge(data, req, truth):
    key = "Task 1d"
    bad = early(key, data, "Hint: the clamped median plus Lap(2S/ε), S the smooth sensitivity "
                           "at β = ε/(2 ln(2/δ)).")
    if bad is not None:
        return bad
    if data.get("called_library") is True:
        return fail(key, "your function calls the kit's smooth median, smooth sensitivity or "
                         "β (dp.smooth_median, dp.smooth_sensitivity_median, dp.smooth_beta); "
                         "use your own functions of Tasks 1b and 1c.", "library")
    if "type" in data:
        return fail(key, f"smooth_median must return a number, found "
                         f"{str(data['type'])[:100]}.", "type")
    req = req if isinstance(req, dict) else {}
    cases, facts = req.get("cases", []), field(truth, "cases", [])
    got = data.get("releases")
    if not isinstance(got, list) or not cases or len(got) != len(cases) or \
            len(facts) != len(cases):
        return fail(key, "the check's data is malformed.", "malformed")
    a = ALPHA / (2 * len(cases))
    zs = []
    for rel in got:
        if not isinstance(rel, list) or len(rel) != req.get("calls") or \
                any(number(r) is None for r in rel):
            return fail(key, "the check's data is malformed.", "malformed")
        zs.append(np.array(rel, dtype=float))
    tests = [_laplace_fit(z, f["median"], f["scale"], a) for z, f in zip(zs, facts)]
    bad = [i for i, pv in enumerate(tests) if min(pv) < a]
    if not bad:
        return ok(key, f"your releases are the clamped median plus Lap(2S/ε) on {len(cases)} "
                       f"hidden datasets (" + "; ".join(
                           f"2S/ε = {g(f['scale'], 4)}: KS p = {g(ks, 3)}, scale p = {g(sc, 3)}"
                           for f, (ks, sc) in zip(facts, tests)) + ").")
    i = bad[0]
    c, fact, z, (ks, sc) = cases[i], facts[i], zs[i], tests[i]
    slips = [smooth_median_slips(c["values"], c["lower"], c["upper"], c["epsilon"], c["delta"])
             for c in cases]
    hint = next((h for h in slips[0]
                 if all(min(_laplace_fit(zz, *sl[h], a)) >= a for zz, sl in zip(zs, slips))),
                None)
    hint = f": {hint}." if hint else (
        ". Hint: β = ε/(2 ln(2/δ)), S = max_k e^(-kβ) A(k) on the clamped values, release "
        "the clamped median plus Lap(2S/ε).")
    return fail(key, f"on a hidden dataset of n = {len(c['values'])} values in [0, "
                     f"{g(c['upper'])}] at ε = {g(c['epsilon'])}, δ = {g(c['delta'])}, your "
                     f"{z.size} releases have median {g(float(np.median(z)), 4)} and mean "
                     f"absolute deviation {g(float(np.mean(np.abs(z - fact['median']))), 4)} "
                     f"from the clamped median {g(fact['median'], 4)}; the smooth median is that "
                     f"median plus Laplace noise of scale 2S/ε = {g(fact['scale'], 4)} (KS p = "
                     f"{g(ks, 3)}, scale test p = {g(sc, 3)}, each rejected below α = "
                     f"{g(a, 3)}){hint}", "release")


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
    """ln(1/delta) / (epsilon/2): the kit's threshold (Dwork & Roth, Sec. 7.3)."""
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


def _t2_request(rng):
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
    key = "Task 3a"
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


# ------------------------------------------------------------------ Task 3b: MWEM's two scales
_T3B_CALLS = 2000
_T3B_LIBRARY = ("dpteach:mwem", "dpteach.synthetic:mwem", "dpteach.synthetic:mwem_rounds",
                "dpteach.synthetic:mwem_selection_probabilities")


def mwem_selection(scores, epsilon, iterations, factor=1.0):
    """P(q) proportional to exp((epsilon / 2T) |q(A) - q(x)| / 2), times ``factor`` in the
    exponent (a slip's)."""
    w = factor * epsilon / (4.0 * iterations) * np.asarray(scores, dtype=float)
    w = np.exp(w - w.max())
    return w / w.sum()


def mwem_slips(scores, epsilon, iterations):
    """hint -> (selection probabilities, measurement noise scale) of a round with that slip."""
    p = mwem_selection(scores, epsilon, iterations)
    scale = 2.0 * iterations / epsilon
    k = len(scores)
    top = np.zeros(k)
    top[int(np.argmax(scores))] = 1.0
    return {
        "the query is chosen by the exponential mechanism, not uniformly":
            (np.full(k, 1.0 / k), scale),
        "the query is chosen by the exponential mechanism, not as the worst one (no noise)":
            (top, scale),
        "the selection's exponent has a factor 1/2 too few: P(q) ∝ exp((ε/2T)·score/2)":
            (mwem_selection(scores, epsilon, iterations, 2.0), scale),
        "the selection's exponent has two factors 1/2 too few: P(q) ∝ exp((ε/2T)·score/2)":
            (mwem_selection(scores, epsilon, iterations, 4.0), scale),
        "the selection's exponent has a factor 1/2 too many: P(q) ∝ exp((ε/2T)·score/2)":
            (mwem_selection(scores, epsilon, iterations, 0.5), scale),
        "each round has ε/T, not ε: the selection's exponent is (ε/2T)·score/2":
            (mwem_selection(scores, epsilon, iterations, float(iterations)), scale),
        "the measurement's noise is Lap(2T/ε) (half of ε/T), not Lap(T/ε)": (p, scale / 2),
        "the measurement's noise is Lap(2T/ε): each round has ε/T, half of it to measure":
            (p, 2.0 / epsilon),
        "the measurement's noise is Lap(2T/ε), not Lap(1/ε)": (p, 1.0 / epsilon),
        "the measurement's noise is Lap(2T/ε), not Lap(4T/ε)": (p, 2 * scale),
    }


def _t3b_request(rng):
    """A hidden histogram, synthetic histogram and workload, with (epsilon, T) chosen so
    that the selection is far from uniform and far from the worst query; redrawn until
    every slip's selection is off by 0.15 in some query's probability or its noise scale
    by a factor 1.6."""
    for _ in range(2000):
        size = int(rng.integers(8, 20))
        n = int(rng.choice([500, 1000, 2000, 5000]))
        x = rng.multinomial(n, rng.dirichlet(np.full(size, 0.7))).astype(float)
        synthetic = np.round(rng.dirichlet(np.full(size, 3.0)) * n, 3)
        k = int(rng.integers(5, 10))
        q = np.zeros((k, size))
        for row in q:
            lo = int(rng.integers(0, size - 1))
            row[lo:int(rng.integers(lo + 1, size + 1))] = 1.0
        if len({tuple(r) for r in q}) < k:
            continue
        scores = np.abs(q @ synthetic - q @ x)
        spread = float(scores.max() - scores.min())
        if spread <= 0:
            continue
        iterations = int(rng.integers(2, 11))
        eps = float(np.round(4 * iterations * rng.uniform(1.5, 3.0) / spread, 4))
        if not 0.01 <= eps <= 10:
            continue
        p = mwem_selection(scores, eps, iterations)
        scale = 2.0 * iterations / eps
        slips = mwem_slips(scores, eps, iterations)
        if all(np.max(np.abs(sp - p)) >= 0.15 or abs(math.log(ss / scale)) >= math.log(1.6)
               for sp, ss in slips.values()):
            return ({"histogram": x.tolist(), "synthetic": synthetic.tolist(),
                     "queries": q.astype(int).tolist(), "epsilon": eps,
                     "iterations": iterations, "calls": _T3B_CALLS,
                     "seed": int(rng.integers(2**62))},
                    {"p": p.tolist(), "answers": (q @ x).tolist(), "scale": scale,
                     "scores": scores.tolist()})
    raise RuntimeError("no hidden draw tells every slip apart")     # pragma: no cover


def _t3b_collect(answers, req):
    fn = answers.get("mwem_round")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    rng = np.random.default_rng(req["seed"])
    args = (np.array(req["histogram"]), np.array(req["synthetic"]), np.array(req["queries"]),
            req["epsilon"], req["iterations"], rng)
    out = []
    with forbid(*_T3B_LIBRARY, code=[fn]) as guard:
        for i in range(req["calls"]):
            value, problem = call(fn, *args)
            if problem is not None:
                return problem
            if i == 0 and value is None:
                return dict(UNSOLVED)
            pair = value if isinstance(value, (tuple, list)) and len(value) == 2 else None
            j = None if pair is None else number(pair[0])
            m = None if pair is None else number(pair[1])
            if j is None or m is None or j != int(j):
                return {"type": f"{type(value).__name__}: {short(value)}"}
            out.append([int(j), m])
    return {"rounds": out, "called_library": bool(guard.used)}


def _t3b_judge(data, req, truth):
    key = "Task 3b"
    bad = early(key, data, "Hint: P(q) ∝ exp((ε/2T)·|q(A) - q(x)|/2), then q(x) + Lap(2T/ε).")
    if bad is not None:
        return bad
    if data.get("called_library") is True:
        return fail(key, "your function calls the kit's MWEM (dp.mwem, "
                         "dp.mwem_selection_probabilities); the task is to write the round "
                         "yourself.", "library")
    if "type" in data:
        return fail(key, f"mwem_round must return (index, measurement): a whole number and a "
                         f"number, found {str(data['type'])[:100]}.", "type")
    req = req if isinstance(req, dict) else {}
    p = np.asarray(field(truth, "p", []), dtype=float)
    answers = np.asarray(field(truth, "answers", []), dtype=float)
    rounds = data.get("rounds")
    k = p.size
    if not isinstance(rounds, list) or len(rounds) != req.get("calls") or k == 0 or \
            answers.size != k or any(
                not isinstance(r, list) or len(r) != 2 or number(r[1]) is None or
                number(r[0]) is None or not 0 <= r[0] < k or r[0] != int(r[0]) for r in rounds):
        return fail(key, "the check's data is malformed (an index outside 0 ... "
                         f"{k - 1} or a measurement that is not a number).", "malformed")
    idx = np.array([int(r[0]) for r in rounds])
    z = np.array([float(r[1]) for r in rounds]) - answers[idx]
    counts = np.bincount(idx, minlength=k)
    tests = k + 2
    a = ALPHA / tests
    eps, T = req["epsilon"], req["iterations"]
    scale = 2.0 * T / eps

    def fits(probs, s):
        pv = [stats.binomtest(int(c), idx.size, float(q)).pvalue if 0 < q < 1 else
              float(c == idx.size * q) for c, q in zip(counts, probs)]
        return min(pv) >= a and min(_laplace_fit(z, 0.0, s, a)) >= a if s > 0 else False
    pv = [stats.binomtest(int(c), idx.size, float(q)).pvalue for c, q in zip(counts, p)]
    ks, sc = _laplace_fit(z, 0.0, scale, a)
    if min(pv) >= a and min(ks, sc) >= a:
        return ok(key, f"your {idx.size} rounds choose the queries as the exponential mechanism "
                       f"with ε/(2T) does (smallest binomial p = {g(min(pv), 3)}) and measure "
                       f"with Lap(2T/ε) = Lap({g(scale, 4)}) (KS p = {g(ks, 3)}, scale test p "
                       f"= {g(sc, 3)}).")
    hint = next((h for h, (sp, ss) in mwem_slips(field(truth, "scores", []), eps, T).items()
                 if fits(sp, ss)), None)
    shares = ", ".join(f"{g(100 * c / idx.size, 3)}%" for c in counts)
    want = ", ".join(f"{g(100 * q, 3)}%" for q in p)
    measured = (f"with ε = {g(eps)}, T = {T} on a hidden workload of {k} queries, your "
                f"{idx.size} rounds chose the queries {shares} of the time (the exponential "
                f"mechanism with ε/(2T) and sensitivity 1: {want}; smallest binomial p = "
                f"{g(min(pv), 3)}), and your measurements minus the true answers have mean "
                f"absolute value {g(float(np.mean(np.abs(z))), 4)} (Lap(2T/ε) has "
                f"{g(scale, 4)}; KS p = {g(ks, 3)}, scale test p = {g(sc, 3)}; each test "
                f"rejects below α = {g(a, 3)})")
    reason = "selection" if min(pv) < a else "measurement"
    return fail(key, measured + (f": {hint}." if hint else
                                 ". Hint: P(q) ∝ exp((ε/2T)·|q(A) - q(x)|/2), then "
                                 "m = q(x) + Lap(2T/ε)."), reason)


TASKS = [
    Task("Task 1a", 2, ("local_sensitivity",), _t1a_request,
         _t1_collect_for("local_sensitivity", "k"),
         _t1_judge_for("Task 1a", "local_sensitivity", "k"),
         title="the median's local sensitivity at distance k"),
    Task("Task 1b", 2, ("smooth_sensitivity",), _t1b_request,
         _t1_collect_for("smooth_sensitivity", "beta"),
         _t1_judge_for("Task 1b", "smooth_sensitivity", "beta"),
         title="the median's smooth sensitivity"),
    Task("Task 1c", 1, ("beta_for",), _t1c_request, _t1c_collect, _t1c_judge,
         title="the smoothing beta that Laplace noise admits"),
    Task("Task 1d", 2, ("smooth_median",), _t1d_request, _t1d_collect, _t1d_judge,
         title="the smooth-sensitivity median"),
    Task("Task 2", 4, ("my_ptr_median",), _t2_request, _t2_collect, _t2_judge,
         title="propose-test-release for the median", extra={"needs": _T2_NEEDS}),
    Task("Task 3a", 2, ("mw_update",), _t3_request, _t3_collect, _t3_judge,
         title="one multiplicative-weights update of MWEM"),
    Task("Task 3b", 2, ("mwem_round",), _t3b_request, _t3b_collect, _t3b_judge,
         title="one round of MWEM: its selection and its measurement"),
]
