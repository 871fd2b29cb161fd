"""A8 · Clipping and the sparse vector technique (graded tasks).

Every task runs the student's function on inputs the check draws itself:

* Task 1 (4 points) ``my_clipped_mean(values, lower, upper, epsilon, rng)``: one
  ε-DP release of the mean (notebook 14): clamp to [lower, upper], noisy sum with
  Lap(2D/ε), D = max(|lower|, |upper|), noisy count with Lap(2/ε) (ε/2 each), and
  clip(sum~ / max(count~, 1), lower, upper). Called 5,000 times on each of six hidden
  datasets (one with outliers far outside the range, one with lower < 0 < upper, and
  groups of n = 0, 1 and 2 people, where the noisy count is often below 1); the releases
  are compared with 100,000 releases of the exact construction (two-sample
  Kolmogorov-Smirnov, each at α/6, α = 1e-6). Full ε to both parts, no clamping, the
  sensitivity upper - lower, no floor at 1 on the noisy count and no final clip all fail;
  so does a call of dp.clipped_mean, dp.clipping.noisy_sum_and_count or dp.clamped_sum.
* Task 2 (2 points) ``best_clip_bound(values, epsilon, candidates)``: the candidate c
  whose range [0, c] minimises the predicted root-mean-squared error of the clipped
  mean, sqrt(bias² + noise_sd²) (first order, :func:`dpteach.clipped_mean_error`), on
  four hidden datasets whose best candidate lies strictly inside the list. A call of
  dp.clipping.clipped_mean_error fails.
* Task 3 (4 points) ``my_above_threshold(answers, threshold, epsilon, rng,
  sensitivity=1.0)``: AboveThreshold [DR14 Algorithm 1]; called 4,000 times on each of
  three hidden query vectors, the reported indices are compared with the exact
  probabilities of :func:`dpteach.above_threshold_probabilities` (χ², each at α/3).
  No query noise, fresh threshold noise per query, and not stopping all fail; so does a
  call of dp.above_threshold (or its vectorised draws).
* Task 4 (2 points) ``my_private_quantile(values, q, lower, upper, epsilon, rng)``: one
  release of Smith's (2011) private quantile (notebook 14): clip into [lower, upper], sort,
  score the interval between the i-th and (i+1)-th values by −|i − q n| (sensitivity 1),
  pick it with probability ∝ length × exp(ε·score/2), return a uniform point inside it.
  Called 3,000 times on each of three hidden datasets (a median, a high quantile with
  values above the range, a low quantile with ties); the releases are compared with the
  exact CDF (:func:`quantile_release_cdf`, one-sample KS, each at α/3). No length weight,
  exp(ε·score), no clipping, and an end of the interval in place of a uniform point all
  fail; so does a call of dp.private_quantile.

Notebook: notebooks/solutions/A8_clipping_and_sparse_vector.ipynb.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..exercises import ALPHA
from . import Task
from ._student import (UNSOLVED, call, chi2_too_good, entries, fail, field, forbid, g, is_unsolved,
                       ks_too_good, number, ok, opening, short, whole_counts)

#: the building blocks every task may use (the grading kernel keeps them, though
#: dp.mechanisms.clamped_sum, which Task 1 forbids, is made of them)
ALLOWED = ("dpteach.mechanisms:laplace_mechanism", "dpteach.mechanisms:laplace_scale")

# ------------------------------------------------------------------ Task 1
_T1_CALLS = 5000
_T1_REFERENCE = 100_000
_T1_LIBRARY = ("dpteach:clipped_mean", "dpteach.clipping:clipped_mean",
               "dpteach.clipping:noisy_sum_and_count",
               "dpteach.mechanisms:clamped_sum",
               "dpteach.clipping:clamped_sum")


def _t1_request(rng):
    """Three hidden datasets: plain [0, u]; outliers far above u; lower < 0 < upper."""
    cases = []
    # plain: values in range, n small enough that the noise matters
    u = float(np.round(rng.uniform(5, 20), 1))
    n = int(rng.integers(40, 90))
    x = np.round(rng.uniform(0.2, 0.8, n) * u, 2)
    cases.append({"values": x.tolist(), "lower": 0.0, "upper": u,
                  "epsilon": float(np.round(rng.uniform(0.5, 1.5), 2))})
    # outliers: a tenth of the values 50-100 times the upper bound
    u = float(np.round(rng.uniform(5, 20), 1))
    n = int(rng.integers(40, 90))
    x = rng.uniform(0.1, 0.6, n) * u
    k = max(4, n // 10)
    x[:k] = u * rng.uniform(50, 100, k)
    cases.append({"values": np.round(rng.permutation(x), 2).tolist(), "lower": 0.0, "upper": u,
                  "epsilon": float(np.round(rng.uniform(0.5, 1.5), 2))})
    # lower < 0 < upper, |lower| much smaller than upper (upper - lower = 1.5-2 D)
    u = float(np.round(rng.uniform(5, 20), 1))
    lo = -float(np.round(u * rng.uniform(0.5, 1.0), 1))
    n = int(rng.integers(40, 90))
    x = np.round(rng.uniform(lo * 0.8, u * 0.8, n), 2)
    cases.append({"values": x.tolist(), "lower": lo, "upper": u,
                  "epsilon": float(np.round(rng.uniform(0.5, 1.5), 2))})
    # the empty and tiny groups: the noisy count is below 1 half of the time or more, so a
    # missing floor at 1 or a missing final clip changes the releases' distribution
    for n in (0, 1, 2):
        u = float(np.round(rng.uniform(5, 20), 1))
        x = np.round(rng.uniform(0.2, 0.8, n) * u, 2)
        cases.append({"values": x.tolist(), "lower": 0.0, "upper": u,
                      "epsilon": float(np.round(rng.uniform(0.5, 1.0), 2))})
    order = rng.permutation(len(cases))
    cases = [cases[i] for i in order]
    return {"cases": cases, "calls": _T1_CALLS, "seed": int(rng.integers(2**62))}, \
        {"reference_seed": int(rng.integers(2**62))}


def _t1_collect(answers, req):
    fn = answers.get("my_clipped_mean")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    rng = np.random.default_rng(req["seed"])
    out = []
    with forbid(*_T1_LIBRARY, code=[fn]) as guard:
        for c in req["cases"]:
            vals = []
            for _ in range(req["calls"]):
                value, problem = call(fn, np.array(c["values"]), c["lower"], c["upper"],
                                      c["epsilon"], rng)
                if problem is not None:
                    return problem
                v = number(value)
                if v is None:
                    return {"type": f"{type(value).__name__}: {short(value)}"}
                vals.append(v)
            out.append(np.array(vals))
    return {"releases": out, "called_library": bool(guard.used)}


def reference_clipped_means(case, size, rng):
    """``size`` releases of the exact construction (the kit's clipped_mean)."""
    from ...clipping import clipped_mean
    return np.asarray(clipped_mean(np.array(case["values"]), case["lower"], case["upper"],
                                   case["epsilon"], rng=rng, size=size))


def _t1_judge(data, req, truth):
    key = "Task 1"
    bad = opening(key, data, "Hint: clamp, then Laplace noise on the sum and on the count, "
                             "epsilon/2 each.",
                  library="your function calls dp.clipped_mean, dp.clipping.noisy_sum_and_count or "
                          "dp.mechanisms.clamped_sum (notebook 14's answer); the task is to write the "
                          "clamping and the noise yourself with numpy.",
                  returns="my_clipped_mean must return one number (the noisy mean)")
    if bad is not None:
        return bad
    cases = field(req, "cases", [])
    got, bad = entries(key, data, "releases", len(cases))
    if bad is not None:
        return bad
    rng = np.random.default_rng(field_int(truth, "reference_seed"))
    rows = []
    for c, rel in zip(cases, got):
        try:
            arr = np.asarray(rel, dtype=float).ravel()
        except (TypeError, ValueError):
            return fail(key, "the check's data is malformed.", "malformed")
        if arr.size != req.get("calls") or not np.all(np.isfinite(arr)):
            return fail(key, "the check's data is malformed (wrong length or non-finite "
                             "releases).", "malformed")
        ref = reference_clipped_means(c, _T1_REFERENCE, rng)
        p = float(stats.ks_2samp(arr, ref).pvalue)
        x = np.array(c["values"])
        lo, hi = c["lower"], c["upper"]
        shown = (f"on a hidden dataset of n = {x.size} values (range [{g(lo)}, {g(hi)}], "
                 f"ε = {g(c['epsilon'])}"
                 + (f", {int(np.sum((x < lo) | (x > hi)))} of them outside the range" if
                    np.any((x < lo) | (x > hi)) else "") + ")")
        if p < ALPHA / len(cases):
            sd, sd_ref = float(arr.std()), float(ref.std())
            m, m_ref = float(arr.mean()), float(ref.mean())
            hints = []
            if abs(m - m_ref) > 6 * sd_ref / math.sqrt(arr.size) + 1e-12:
                hints.append("the releases are centred in the wrong place: clamp every value "
                             "into [lower, upper] before summing, and divide by the noisy count")
            if sd < 0.8 * sd_ref:
                hints.append("too little noise: each of the two parts gets ε/2, so the sum's "
                             "scale is 2D/ε and the count's 2/ε")
            elif sd > 1.15 * sd_ref:
                hints.append("too much noise: adding or removing one person moves the clamped "
                             "sum by at most D = max(|lower|, |upper|), not upper - lower")
            if x.size <= 2:
                hints.insert(0, f"with n = {x.size} the noisy count is below 1 in about half "
                                "the releases or more: divide by max(count~, 1), and clip the "
                                "ratio into [lower, upper]")
            hint = ("; ".join(hints) + ".") if hints else \
                ("Hint: check every step: clamp; Lap(2D/ε) on the sum; Lap(2/ε) on the "
                 "count (the exact n is private too); the ratio with the count floored at 1, "
                 "clipped into [lower, upper].")
            return fail(key, f"{shown} your {arr.size} releases have mean {g(m)} and standard "
                             f"deviation {g(sd)}; the exact construction has mean {g(m_ref)} "
                             f"and standard deviation {g(sd_ref)} (two-sample KS p = {g(p, 3)}, "
                             f"rejected at α = {g(ALPHA / len(cases), 3)}): {hint}", "dist",
                        sd=sd, sd_ref=sd_ref)
        rows.append(f"n = {x.size}, range [{g(lo)}, {g(hi)}]: sd {g(float(arr.std()))} "
                    f"(KS p = {g(p, 3)})")
    return ok(key, f"your releases match the exact construction on {len(cases)} hidden "
                   f"datasets: " + "; ".join(rows) + ".")


def field_int(d, key):
    v = d.get(key, 0) if isinstance(d, dict) else 0
    return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else 0


# ------------------------------------------------------------------ Task 2
_T2_LIBRARY = ("dpteach.clipping:clipped_mean_error",)


def predicted_rmse(values, c, epsilon):
    """sqrt(bias² + noise_sd²) of the clipped mean over [0, c] (first order)."""
    x = np.asarray(values, dtype=float)
    n = x.size
    m = float(np.clip(x, 0.0, c).mean())
    bias = m - float(x.mean())
    noise_sd = math.sqrt(8 * c * c + 8 * m * m) / (epsilon * n)
    return math.hypot(bias, noise_sd)


def _t2_request(rng):
    cases, truth = [], []
    while len(cases) < 4:
        n = int(rng.integers(50, 2000))
        scale = float(np.round(rng.uniform(10, 100), 1))
        x = np.round(scale * rng.lognormal(0.0, rng.uniform(0.5, 1.2), n), 2)
        eps = float(np.round(rng.uniform(0.2, 2.0), 2))
        cand = np.round(np.quantile(x, np.linspace(0.3, 1.0, int(rng.integers(30, 50)))), 2)
        cand = np.unique(np.concatenate([cand, [np.round(x.max() * 1.5, 2)]]))
        errs = np.array([predicted_rmse(x, c, eps) for c in cand])
        i = int(np.argmin(errs))
        rest = np.delete(errs, i)
        if i == 0 or i == len(cand) - 1 or rest.min() < errs[i] * (1 + 1e-3):
            continue
        cases.append({"values": x.tolist(), "epsilon": eps,
                      "candidates": rng.permutation(cand).tolist()})
        truth.append(float(cand[i]))
    return {"cases": cases}, {"best": truth}


def _t2_collect(answers, req):
    fn = answers.get("best_clip_bound")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    out = []
    with forbid(*_T2_LIBRARY, code=[fn]) as guard:
        for c in req["cases"]:
            value, problem = call(fn, np.array(c["values"]), c["epsilon"],
                                  list(c["candidates"]))
            if problem is not None:
                return problem
            v = number(value)
            out.append(v if v is not None else short(value))
    return {"bounds": out, "called_library": bool(guard.used)}


def _t2_judge(data, req, truth):
    key = "Task 2"
    bad = opening(key, data, "Hint: for each candidate c compute bias and noise of the mean "
                             "over [0, c].",
                  library="your function calls dp.clipping.clipped_mean_error (notebook 14's answer); "
                          "the task is to compute the bias and the noise yourself.")
    if bad is not None:
        return bad
    cases = req.get("cases", []) if isinstance(req, dict) else []
    best = truth.get("best", []) if isinstance(truth, dict) else []
    found = data.get("bounds")
    if not isinstance(found, list) or len(found) != len(cases) or len(best) != len(cases):
        return fail(key, "the check's data is malformed.", "malformed")
    for c, f, want in zip(cases, found, best):
        v = number(f)
        x = np.array(c["values"])
        shown = (f"on a hidden dataset of n = {x.size} values (ε = {g(c['epsilon'])}, "
                 f"{len(c['candidates'])} candidates)")
        if v is None or not any(math.isclose(v, k, rel_tol=1e-9) for k in c["candidates"]):
            return fail(key, f"{shown} best_clip_bound returned {short(f)}; expected one of the "
                             "candidates.", "type")
        if not math.isclose(v, want, rel_tol=1e-9):
            e_v, e_w = predicted_rmse(x, v, c["epsilon"]), predicted_rmse(x, want, c["epsilon"])
            hint = ("a larger bound: it adds noise (the sum's sensitivity is c) faster than it "
                    "removes bias" if v > want else
                    "a smaller bound: its clipping bias (mean of the clipped values minus the "
                    "true mean) outweighs the noise it saves")
            return fail(key, f"{shown} you chose c = {g(v)} (predicted RMSE {g(e_v)}); the best "
                             f"candidate is c = {g(want)} (RMSE {g(e_w)}). You chose {hint}. "
                             "Hint: RMSE² = bias² + (8c² + 8m²)/(ε n)², m = mean of the clipped "
                             "values.", "wrong")
    return ok(key, "the best bound on all hidden datasets: " +
              "; ".join(f"n = {len(c['values'])}, ε = {g(c['epsilon'])}: c = {g(b)}"
                        for c, b in zip(cases, best)) + ".")


# ------------------------------------------------------------------ Task 3
_T3_CALLS = 4000
_T3_LIBRARY = ("dpteach:above_threshold", "dpteach.sparse_vector:above_threshold",
               "dpteach.sparse_vector:above_threshold_draws")


def _t3_request(rng):
    """Three hidden query vectors: answers below, around and above the threshold."""
    cases = []
    for _ in range(3):
        k = int(rng.integers(5, 10))
        sens = float(rng.choice([1.0, 2.0, 5.0]))
        eps = float(np.round(rng.uniform(0.5, 2.0), 2))
        t = float(np.round(rng.uniform(20, 100), 1))
        b = 4 * sens / eps
        a = t + b * rng.uniform(-2.5, 0.5, k)
        cases.append({"answers": np.round(a, 2).tolist(), "threshold": t, "epsilon": eps,
                      "sensitivity": sens})
    return {"cases": cases, "calls": _T3_CALLS, "seed": int(rng.integers(2**62))}, {}


def _t3_collect(answers, req):
    fn = answers.get("my_above_threshold")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    rng = np.random.default_rng(req["seed"])
    out = []
    with forbid(*_T3_LIBRARY, code=[fn]) as guard:
        # a probe far above the threshold (1,000 query scales): AboveThreshold reports
        # index 0 (failing with probability below e^-200); None here is the stub's answer
        probe, problem = call(fn, np.array([1000.0 * 4 / 1.0, 0.0]), 0.0, 1.0, rng,
                              sensitivity=1.0)
        if problem is not None:
            return problem
        for c in req["cases"]:
            k = len(c["answers"])
            counts = [0] * (k + 1)
            for _ in range(req["calls"]):
                try:
                    value = fn(np.array(c["answers"]), c["threshold"], c["epsilon"], rng,
                               sensitivity=c["sensitivity"])
                except Exception as exc:             # the student's bug, as data
                    return {"error": f"{type(exc).__name__}: {exc}"[:300]}
                if value is None:
                    counts[k] += 1
                    continue
                v = number(value)
                if v is None or v != int(v) or not 0 <= v < k:
                    return {"type": short(value)}
                counts[int(v)] += 1
            out.append(counts)
    return {"counts": out, "called_library": bool(guard.used)}


def _t3_judge(data, req, truth):
    key = "Task 3"
    bad = opening(key, data, "Hint: one Lap(2Δ/ε) on the threshold, Lap(4Δ/ε) on each query, "
                             "stop at the first above.",
                  library="your function calls dp.above_threshold (notebook 15's answer); the "
                          "task is to write the noisy comparisons yourself.")
    if bad is not None:
        return bad
    if "type" in data:
        return fail(key, f"my_above_threshold must return an index 0..k-1 (counting from 0) or "
                         f"None, found {str(data['type'])[:80]}.", "type")
    cases = field(req, "cases", [])
    got, bad = entries(key, data, "counts", len(cases))
    if bad is not None:
        return bad
    from ...sparse_vector import above_threshold_probabilities
    rows, pooled, dof = [], 0.0, 0
    for c, cnt in zip(cases, got):
        k = len(c["answers"])
        # what collect sends is untrusted: counts of calls are whole, non-negative and
        # sum to the calls made, or they were not counted
        obs, why = whole_counts(cnt, k + 1, req.get("calls"))
        if obs is None:
            return fail(key, f"the check's data is malformed ({why}): these are counts of "
                             "calls, not what collect sends.", "malformed")
        obs = obs.astype(float)
        p = above_threshold_probabilities(c["answers"], c["threshold"], c["epsilon"],
                                          sensitivity=c["sensitivity"])
        exp = p * obs.sum()
        # merge cells with small expectation into one
        big = exp >= 5
        o = np.append(obs[big], obs[~big].sum())
        e = np.append(exp[big], exp[~big].sum())
        keep = e > 0
        if np.any((e == 0) & (o > 0)):
            pval = 0.0
        else:
            o, e = o[keep], e[keep]
            chi = float(np.sum((o - e) ** 2 / e))
            pval = float(stats.chi2.sf(chi, max(len(o) - 1, 1)))
            pooled, dof = pooled + chi, dof + len(o) - 1
        if pval < ALPHA / len(cases):
            first = obs / obs.sum()
            worst = int(np.argmax(np.abs(first - p)))
            name = "none" if worst == k else f"index {worst}"
            return fail(key, f"on hidden answers [{', '.join(g(v) for v in c['answers'])}] (threshold "
                             f"{g(c['threshold'])}, ε = {g(c['epsilon'])}, Δ = "
                             f"{g(c['sensitivity'])}), your function reported {name} in "
                             f"{g(first[worst] * 100, 3)}% of {int(obs.sum())} runs; "
                             f"AboveThreshold does so with probability {g(p[worst] * 100, 3)}% "
                             f"(χ² p = {g(pval, 3)}, rejected at α = {g(ALPHA / len(cases), 3)}). "
                             "Hint: draw the threshold noise Lap(2Δ/ε) once per run, add fresh "
                             "Lap(4Δ/ε) to every query, return the first index whose noisy "
                             "answer is ≥ the noisy threshold (None if there is none).", "dist")
        rows.append(f"k = {k}: χ² p = {g(pval, 3)}")
    # too good a fit is as suspect as a bad one: the three cases' χ² statistics pooled
    # (independent, so χ² with the summed degrees of freedom, 15 or more here) fall in
    # the lower tail below α only by a one-in-a-million chance for sampled counts
    low = chi2_too_good(pooled, dof, ALPHA)
    if low is not None:
        return fail(key, f"your counts fit AboveThreshold's expected counts better than "
                         f"random draws can (pooled χ² = {g(pooled, 3)} on {dof} degrees of "
                         f"freedom; P(χ² ≤ that) = {g(low, 3)} < α = {g(ALPHA, 3)}): they "
                         "look computed, not sampled. Return one index per call, drawn "
                         "with fresh noise.", "too_good")
    return ok(key, f"your reported indices follow AboveThreshold's exact distribution on "
                   f"{len(cases)} hidden query vectors ({'; '.join(rows)}).")


# ------------------------------------------------------------------ Task 4
_T4_CALLS = 3000
_T4_LIBRARY = ("dpteach.clipping:private_quantile",
               "dpteach.clipping:quantile_interval_probabilities")


def quantile_release_cdf(case, *, twin=None):
    """The exact CDF of one release of the private quantile (Smith 2011) on ``case``:
    interval i = [z_i, z_{i+1}] with probability P(i), then a uniform point inside it, so
    F(t) = sum_i P(i) clip((t - z_i) / (z_{i+1} - z_i), 0, 1). ``twin`` gives the CDF of a
    known slip instead, for the hint: "double" (exp(ε·u), not exp(ε·u/2)) or "unweighted"
    (no length factor)."""
    from ...clipping import quantile_interval_probabilities
    epsilon = case["epsilon"] * (2.0 if twin == "double" else 1.0)
    edges, probs = quantile_interval_probabilities(np.array(case["values"]), case["q"],
                                                   case["lower"], case["upper"], epsilon)
    lo, length = edges[:-1], np.diff(edges)
    keep = length > 0
    lo, length, probs = lo[keep], length[keep], probs[keep]
    if twin == "unweighted":
        probs = probs / length
        probs = probs / probs.sum()

    def cdf(t):
        t = np.asarray(t, dtype=float)[..., None]
        return np.sum(probs * np.clip((t - lo) / length, 0.0, 1.0), axis=-1)
    return cdf


def _t4_request(rng):
    """Three hidden datasets: a median, a high quantile with values above the public range,
    a low quantile with ties (intervals of length 0)."""
    cases = []
    for q, kind in ((0.5, "plain"), (float(rng.choice([0.8, 0.9])), "outside"),
                    (float(rng.choice([0.2, 0.25])), "ties")):
        n = int(rng.integers(15, 40))
        u = float(np.round(rng.uniform(50, 200), 0))
        x = rng.uniform(0.1, 0.7, n) * u
        if kind == "outside":
            k = max(2, n // 8)
            x[:k] = u * rng.uniform(2, 10, k)
        if kind == "ties":
            x = rng.choice(np.round(x[: max(4, n // 3)]), n)
        cases.append({"values": np.round(rng.permutation(x), 1).tolist(), "q": q,
                      "lower": 0.0, "upper": u,
                      "epsilon": float(np.round(rng.uniform(0.5, 2.0), 2))})
    cases = [cases[i] for i in rng.permutation(len(cases))]
    return {"cases": cases, "calls": _T4_CALLS, "seed": int(rng.integers(2**62))}, {}


def _t4_collect(answers, req):
    fn = answers.get("my_private_quantile")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    rng = np.random.default_rng(req["seed"])
    out = []
    with forbid(*_T4_LIBRARY, code=[fn]) as guard:
        for c in req["cases"]:
            vals = []
            for _ in range(req["calls"]):
                value, problem = call(fn, np.array(c["values"]), c["q"], c["lower"],
                                      c["upper"], c["epsilon"], rng)
                if problem is not None:
                    return problem
                v = number(value)
                if v is None:
                    return {"type": f"{type(value).__name__}: {short(value)}"}
                vals.append(v)
            out.append(vals)
    return {"releases": out, "called_library": bool(guard.used)}


def _t4_judge(data, req, truth):
    key = "Task 4"
    bad = opening(key, data, "Hint: score each interval between sorted values by −|i − q·n|, "
                             "weight by length × exp(ε·score/2), pick one, return a uniform point.",
                  library="your function calls dp.clipping.private_quantile or "
                          "dp.clipping.quantile_interval_probabilities (notebook 14's answer); "
                          "the task is to write the exponential mechanism yourself.",
                  returns="my_private_quantile must return one number")
    if bad is not None:
        return bad
    cases = field(req, "cases", [])
    got, bad = entries(key, data, "releases", len(cases))
    if bad is not None:
        return bad
    rows = []
    for c, rel in zip(cases, got):
        try:
            arr = np.asarray(rel, dtype=float).ravel()
        except (TypeError, ValueError):
            return fail(key, "the check's data is malformed.", "malformed")
        if arr.size != req.get("calls") or not np.all(np.isfinite(arr)):
            return fail(key, "the check's data is malformed (wrong length or non-finite "
                             "releases).", "malformed")
        x, lo, hi = np.array(c["values"]), c["lower"], c["upper"]
        shown = (f"on a hidden dataset of n = {x.size} values (q = {g(c['q'])}, range "
                 f"[{g(lo)}, {g(hi)}], ε = {g(c['epsilon'])}"
                 + (f", {int(np.sum(x > hi))} of them above the range" if np.any(x > hi) else "")
                 + (", with repeated values" if np.unique(x).size < x.size else "") + ")")
        if np.any((arr < lo) | (arr > hi)):
            return fail(key, f"{shown} a release {g(float(arr[(arr < lo) | (arr > hi)][0]))} lies "
                             "outside [lower, upper]: clip the values into the public range "
                             "and pick a point inside one of the intervals between them.",
                        "range")
        if np.unique(arr).size < 0.9 * arr.size:
            return fail(key, f"{shown} only {np.unique(arr).size} distinct values in "
                             f"{arr.size} releases: return a uniform point inside the chosen "
                             "interval, not one of its ends (a data value would be released "
                             "exactly).", "atoms")
        ks = stats.kstest(arr, quantile_release_cdf(c))
        p = float(ks.pvalue)
        # the release's CDF is continuous and fully known, so the lower tail of the KS
        # statistic is exact: releases spread like quantiles rather than draws are suspect
        low = ks_too_good(float(ks.statistic), arr.size, ALPHA / (2 * len(cases)))
        if low is not None:
            return fail(key, f"{shown} your {arr.size} releases fit the exact mechanism's "
                             f"distribution more evenly than random draws can (KS D = "
                             f"{g(float(ks.statistic), 3)}, P(D ≤ that) = {g(low, 3)} < α = "
                             f"{g(ALPHA / (2 * len(cases)), 3)}): they look placed, not sampled. "
                             "Draw each release with the rng.", "too_good")
        if p < ALPHA / len(cases):
            med, ref = float(np.median(arr)), quantile_release_cdf(c)
            grid = np.linspace(lo, hi, 2001)
            ref_med = float(grid[np.searchsorted(ref(grid), 0.5)])
            # the hint names the known slip whose exact distribution fits the releases best
            fits = {twin: float(stats.kstest(arr, quantile_release_cdf(c, twin=twin)).pvalue)
                    for twin in ("double", "unweighted")}
            hint = ("the releases are too concentrated: the score enters as exp(ε·u/2), "
                    "not exp(ε·u)" if fits["double"] > fits["unweighted"] else
                    "weight each interval by its length as well as by exp(ε·u/2), and clip the "
                    "values into [lower, upper] before sorting")
            return fail(key, f"{shown} your {arr.size} releases have median {g(med)}; the "
                             f"exact mechanism's median is {g(ref_med)} (one-sample KS against "
                             f"its exact distribution, p = {g(p, 3)}, rejected at α = "
                             f"{g(ALPHA / len(cases), 3)}). Hint: {hint}.", "dist")
        rows.append(f"q = {g(c['q'])}: KS p = {g(p, 3)}")
    return ok(key, f"your releases follow the exponential mechanism's exact distribution on "
                   f"{len(cases)} hidden datasets ({'; '.join(rows)}).")


TASKS = [
    Task(key="Task 1", points=4, names=("my_clipped_mean",),
         title="a clipped mean: clamp, noisy sum, noisy count", request=_t1_request,
         collect=_t1_collect, judge=_t1_judge, forbidden=_T1_LIBRARY),
    Task(key="Task 2", points=2, names=("best_clip_bound",),
         title="choose the clipping bound that minimises the error", request=_t2_request,
         collect=_t2_collect, judge=_t2_judge, forbidden=_T2_LIBRARY),
    Task(key="Task 3", points=4, names=("my_above_threshold",),
         title="AboveThreshold: one noisy threshold, noisy queries, stop at the first above",
         request=_t3_request, collect=_t3_collect, judge=_t3_judge, forbidden=_T3_LIBRARY),
    Task(key="Task 4", points=2, names=("my_private_quantile",),
         title="a private quantile with the exponential mechanism", request=_t4_request,
         collect=_t4_collect, judge=_t4_judge, forbidden=_T4_LIBRARY),
]
