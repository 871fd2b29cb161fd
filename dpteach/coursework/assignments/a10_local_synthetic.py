"""A10 · Local sensitivity and synthetic data (graded tasks).

Every task runs the student's functions on inputs the check draws itself (notebooks 19
and 20). Neighbours substitute one record; values are clamped to [lower, upper]; n is
odd and the median is the m-th smallest value, m = (n + 1)/2; x_i = lower for i < 1 and
x_i = upper for i > n.

* Task 1a (2 points) ``local_sensitivity(values, lower, upper, k)``: the median's local
  sensitivity at distance k, A(k) = max over t = 0 ... k + 1 of x_{m+t} - x_{m+t-k-1}
  [NRS07, their closed form]. Six hidden (dataset, k) pairs on three datasets with values
  outside the range, k from 0 to past n; judged exactly (1e-9 of upper - lower) against
  dp.local_sensitivity_median. The hidden draw is redrawn until each known slip gives a
  wrong answer on at least one pair: the median one place too low or too high (the
  even-n index), no clamping, t only up to k or only from 1, a window one too short or
  too long, and no padding with lower and upper.
* Task 1b (2 points) ``smooth_sensitivity(values, lower, upper, beta)``: S = max over
  k >= 0 of e^(-k beta) A(k) [NRS07]. Three hidden (dataset, beta): one tight
  cluster with beta below ln 2 / n (the maximum is at k = n), one with outliers at the
  beta of (epsilon, delta), one at a larger beta; judged exactly against
  dp.smooth_sensitivity_median. No factor e^(-k beta), the maximum over k < n, k <= m or
  k = 0 only, and Task 1a's median and clamping slips fail on every draw.
* Task 1c (1 point) ``beta_for(epsilon, delta)``: beta = epsilon / (2 ln(2/delta)), the
  smoothing Laplace noise admits [NRS07]; five hidden (epsilon, delta), judged
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
  proposed_bound, rng)``: propose-test-release [DL09; Dwork & Roth 2014, Sec. 7.2]. The
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
  against dp.synthetic.multiplicative_weights_update. No renormalisation, normalising to 1, the
  wrong sign, no 1/2, and no 1/n fail on every draw.
* Task 3b (2 points) ``mwem_round(histogram, synthetic, queries, epsilon, iterations,
  rng)`` -> (index, measurement): the selection P(q) proportional to
  exp((epsilon/2T) |q(A) - q(x)| / 2) and the measurement q(x) + Lap(2T/epsilon). 2,000
  calls; each query's count against its exact binomial, the measurements' noise against
  Lap(2T/epsilon) (KS and the scale test). The draw is redrawn until each slip (the
  exponent times 2, 4, 1/2 or T, a uniform or the worst query, noise T/epsilon,
  1/epsilon, 2/epsilon or 4T/epsilon) is off by 0.15 in some query's probability or by a
  factor 1.6 in the noise scale.

Notebook: notebooks/solutions/A10_local_sensitivity_and_synthetic_data.ipynb. Task 2's
checks live in :mod:`._a10_ptr`, Task 3's in :mod:`._a10_mwem`.
"""

from __future__ import annotations

import math

import numpy as np

from ..exercises import ALPHA
from . import Task
from ._a10_mwem import (T3_FORBIDDEN, T3B_FORBIDDEN, t3_collect, t3_judge, t3_request,
                       t3b_collect, t3b_judge, t3b_request)
from ._a10_ptr import T2_FORBIDDEN, T2_NEEDS, t2_collect, t2_judge, t2_request
from ._student import (UNSOLVED, call, call_each_watched, entries, fail, field, forbid, g,
                       is_unsolved, laplace_fit, number, ok, opening, short)

#: notebook 19's answers, which Task 1's functions must not call (however reached)
_T1_LIBRARY = ("dpteach:local_sensitivity_median",
               "dpteach.beyond_global:local_sensitivity_median",
               "dpteach:smooth_sensitivity_median",
               "dpteach.beyond_global:smooth_sensitivity_median",
               "dpteach:smooth_median", "dpteach.beyond_global:smooth_median",
               "dpteach:distance_to_instability",
               "dpteach.beyond_global:distance_to_instability",
               "dpteach.beyond_global:_a_of_k",
               "dpteach.beyond_global:_median_log_smooth_sensitivity",
               "dpteach.beyond_global:median_sensitivity_window")

# ------------------------------------------------------------------ the check's windows
def window_maxima(values, lower, upper, k_max, *, shift=0, clamp=True, t_first=0, t_last=1,
                  pad=True, width=0):
    """A(0), ..., A(k_max) by the windows of NRS07's closed form, or a known slip of it:
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
              "the maximum stops too early: k runs up to n (from k = n on A(k) is "
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
        return call_each_watched(answers, name, [(np.array(c["values"]), c["lower"],
                                                  c["upper"], c[param]) for c in req["cases"]],
                                 "values", _T1_LIBRARY)
    return collect


def _t1_judge_for(key, name, param):
    def judge(data, req, truth):
        bad = opening(key, data, "Hint: sort the clamped values and take the largest gap "
                                 "x_{m+t} - x_{m+t-k-1}.",
                      library="your function calls the kit's local or smooth sensitivity "
                              "(dp.local_sensitivity_median, dp.smooth_sensitivity_median or "
                              "dp.distance_to_instability); the task is to compute it yourself.")
        if bad is not None:
            return bad
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
    return call_each_watched(answers, "beta_for",
                             [(c["epsilon"], c["delta"]) for c in req["cases"]], "values",
                             _T1C_LIBRARY)


def _t1c_judge(data, req, truth):
    key = "Task 1c"
    bad = opening(key, data, "Hint: β = ε/(2 ln(2/δ)).",
                  library="your function calls dp.smooth_beta; the task is to write the "
                          "formula yourself.")
    if bad is not None:
        return bad
    expected, cases = field(truth, "values", []), field(req, "cases", [])
    found, bad = entries(key, data, "values", len(expected), len(cases))
    if bad is not None:
        return bad
    for c, f, want in zip(cases, found, expected):
        shown = f"beta_for({g(c['epsilon'])}, {g(c['delta'])})"
        v = number(f)
        if v is None:
            return fail(key, f"{shown} returned {short(f)}; expected a number.", "type")
        if abs(v - want) > 1e-9 * want:
            hint = next((h for h, slip in _T1C_SLIPS.items()
                         if abs(v - slip(c["epsilon"], c["delta"])) <= 1e-9 * abs(v)),
                        "β = ε/(2 ln(2/δ)) (NRS07)")
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


def _t1d_judge(data, req, truth):
    key = "Task 1d"
    bad = opening(key, data, "Hint: the clamped median plus Lap(2S/ε), S the smooth sensitivity "
                             "at β = ε/(2 ln(2/δ)).",
                  library="your function calls the kit's smooth median, smooth sensitivity or "
                          "β (dp.smooth_median, dp.smooth_sensitivity_median, dp.smooth_beta); "
                          "use your own functions of Tasks 1b and 1c.",
                  returns="smooth_median must return a number")
    if bad is not None:
        return bad
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
    tests = [laplace_fit(z, f["median"], f["scale"], a) for z, f in zip(zs, facts)]
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
                 if all(min(laplace_fit(zz, *sl[h], a)) >= a for zz, sl in zip(zs, slips))),
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


TASKS = [
    Task(key="Task 1a", points=2, names=("local_sensitivity",),
         title="the median's local sensitivity at distance k", request=_t1a_request,
         collect=_t1_collect_for("local_sensitivity", "k"),
         judge=_t1_judge_for("Task 1a", "local_sensitivity", "k"), forbidden=_T1_LIBRARY),
    Task(key="Task 1b", points=2, names=("smooth_sensitivity",),
         title="the median's smooth sensitivity", request=_t1b_request,
         collect=_t1_collect_for("smooth_sensitivity", "beta"),
         judge=_t1_judge_for("Task 1b", "smooth_sensitivity", "beta"), forbidden=_T1_LIBRARY),
    Task(key="Task 1c", points=1, names=("beta_for",),
         title="the smoothing beta that Laplace noise admits", request=_t1c_request,
         collect=_t1c_collect, judge=_t1c_judge, forbidden=_T1C_LIBRARY),
    Task(key="Task 1d", points=2, names=("smooth_median",),
         title="the smooth-sensitivity median", request=_t1d_request, collect=_t1d_collect,
         judge=_t1d_judge, forbidden=_T1D_LIBRARY + _T1_LIBRARY + _T1C_LIBRARY),
    Task(key="Task 2", points=4, names=("my_ptr_median",),
         title="propose-test-release for the median", request=t2_request, collect=t2_collect,
         judge=t2_judge, forbidden=T2_FORBIDDEN, needs=T2_NEEDS),
    Task(key="Task 3a", points=2, names=("mw_update",),
         title="one multiplicative-weights update of MWEM", request=t3_request,
         collect=t3_collect, judge=t3_judge, forbidden=T3_FORBIDDEN),
    Task(key="Task 3b", points=2, names=("mwem_round",),
         title="one round of MWEM: its selection and its measurement", request=t3b_request,
         collect=t3b_collect, judge=t3b_judge, forbidden=T3B_FORBIDDEN),
]
