"""A6 · Auditing privacy claims (graded tasks).

The student never sees a mechanism's label. The check runs mechanisms from a hidden
pool -- correct ones and classic broken variants, with randomised parameters -- on two
neighbouring inputs and hands the student only the **output samples** (a callable could
be introspected; samples cannot say what made them). The truth the judge keeps: whether
the claim holds, and an upper bound U on the mechanism's true privacy loss on those two
inputs (exact where known: Lap(b) on a shift Δ has loss Δ/b; ∞ where an output is
possible on one input and impossible on the other).

* Task 1 (2 points) ``epsilon_lower_bound_from_samples(samples_x, samples_y, alpha)``: a
  (1 - alpha) lower bound on ε from real-valued outputs of three hidden mechanisms (a
  correct Laplace mechanism, the "scale ε instead of Δ/ε" slip, and one more broken
  one). Judged for **validity** -- never above what the samples support (the best
  event's Clopper-Pearson bound with the event chosen and counted on all the samples,
  :func:`data_envelope`, with a small slack), and never above U (a valid bound exceeds U
  with probability at most alpha; the check passes alpha = 1e-7 per case, so a valid
  method fails at most once in a million) -- and for **power**: where
  :func:`dpteach.audit.audit` on the same samples (the reference, computed by the check)
  proves ε above 1.1 times the hidden claim, the student's bound must refute the claim.
* Task 2 (3 points) ``audit_verdict(samples_x, samples_y, claimed_epsilon, alpha) ->
  (epsilon_lb, refuted)`` on a hidden mix of six or seven mechanisms with numbers,
  categories and vectors as outputs: valid bounds, ``refuted`` exactly when the bound
  exceeds the claim, no correct mechanism refuted, every broken one refuted that the
  reference refutes (by the 1.1 margin) on the same samples.
* Task 3a (1 point) ``worst_neighbour(values, lower, upper)``: a dataset that differs from
  ``values`` by one record (added or removed) and moves the sum of values clipped to
  [lower, upper] by the full sensitivity max(|lower|, |upper|), at hidden bounds (some
  with a negative lower bound larger in size than the upper one).
* Task 3b (2 points) ``clipped_sum_release(values, lower, upper, epsilon, rng)``: run by
  the check 10,000 times on a hidden dataset (values outside the bounds included) and on
  its worst neighbour; judged by its distribution: the noise around the clipped sum must
  be Lap(max(|lower|, |upper|)/ε) (Kolmogorov-Smirnov on each dataset at alpha/4), and
  an audit of the two runs at the worst neighbours (at alpha/2) must not refute ε; a
  correct mechanism fails with probability at most alpha = 1e-6.
* Task 4 (2 points) ``understated_release(values, lower, upper, epsilon, rng)``: the
  classic bug Lap(1/ε); judged by its distribution (Lap(1/ε) around the clipped sum) and
  by the check's audit at the worst neighbours, which must refute ε.

Notebook: notebooks/solutions/A6_auditing.ipynb (taught in notebook 11).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from ..exercises import ALPHA
from . import Task
from ._a6_pool import BROKEN, CORRECT, draw_mechanism
from ._student import (UNSOLVED, call, call_each, opening, fail, float_array, g, is_unsolved,
                       ks_too_good, number, ok, real_or_inf)


#: what the notebook tells every task to use (the grading kernel keeps them, though the
#: judges compute truths with them too)
ALLOWED = ("dpteach.audit:audit", "dpteach.audit:epsilon_lower_bound",
           "dpteach.audit.zoo:_build_zoo")


#: runs per input of the hidden mechanisms (Tasks 1-2) and of the student's (Tasks 3b-4)
N_SAMPLES = 20_000
N_RELEASES = 10_000
#: the confidence the check asks of every bound in Tasks 1-2 (per case; at most seven cases)
CASE_ALPHA = 1e-7
#: a broken mechanism must be refuted when the reference bound on its samples exceeds this
#: many times the claim (a margin for valid methods other than dp.audit's; on the pool's
#: broken mechanisms the reference reaches at least 1.29 times the claim at N_SAMPLES)
REFUTABLE = 1.1
#: a bound is "more than the samples support" above 1.02 x data_envelope + 0.05 (on 60
#: draws of every pool mechanism, dp.audit's bound stayed below 1.02 x envelope + 0.0001)
ENVELOPE_SLACK = (1.02, 0.05)


def _replay(data, size, rng):
    return np.asarray(data)[:size]


def reference_bound(samples_x, samples_y, alpha):
    """:func:`dpteach.audit.audit` on recorded samples (both orders of x and y are tried
    by the audit itself): the reference lower bound of Tasks 1-2."""
    from ...audit import audit
    x, y = np.asarray(samples_x), np.asarray(samples_y)
    return float(audit(_replay, x, y, n=min(len(x), len(y)), alpha=alpha).epsilon_lb)


def _codes(x, y):
    """x and y as 1-D arrays of comparable values (rows of 2-D outputs become codes)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim == 1:
        return x, y
    both = np.concatenate([x.reshape(len(x), -1), y.reshape(len(y), -1)])
    _, inv = np.unique(both, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    return inv[:len(x)], inv[len(x):]


def data_envelope(samples_x, samples_y, alpha):
    """The most the samples can support: the largest Clopper-Pearson lower bound
    (:func:`dpteach.audit.epsilon_lower_bound` at ``alpha``) over every event of the
    audit's families -- ``output >= t`` and ``output <= t`` at every observed t, and,
    for at most 1000 distinct outputs, the sets of the outcomes with the largest ratio
    of counts -- in both directions, with the event chosen AND counted on all the
    samples. Choosing on the same samples only flatters the bound, so an honest (1 -
    alpha) bound from these samples, which must spend some of them on the choice or pay
    for it in alpha, stays below this number (up to sampling luck in the split)."""
    from ...audit import epsilon_lower_bound
    x, y = _codes(samples_x, samples_y)
    n = min(len(x), len(y))
    x, y = x[:n], y[:n]
    best = 0.0
    families = []
    if x.dtype.kind in "iuf":
        t = np.unique(np.concatenate([x, y]))
        sx, sy = np.sort(x), np.sort(y)
        ge_x, ge_y = n - np.searchsorted(sx, t, "left"), n - np.searchsorted(sy, t, "left")
        le_x, le_y = np.searchsorted(sx, t, "right"), np.searchsorted(sy, t, "right")
        families += [(ge_x, ge_y), (ge_y, ge_x), (le_x, le_y), (le_y, le_x)]
    values, inv = np.unique(np.concatenate([x, y]), return_inverse=True)
    if values.size <= 1000:
        cx = np.bincount(inv[:n], minlength=values.size)
        cy = np.bincount(inv[n:], minlength=values.size)
        for a, b in ((cx, cy), (cy, cx)):
            order = np.argsort(-(a + 0.5) / (b + 0.5), kind="stable")
            families.append((np.cumsum(a[order]), np.cumsum(b[order])))
    for a, b in families:
        a, b = np.asarray(a, float), np.asarray(b, float)
        if a.size > _ENVELOPE_EXACT:       # exact bounds for the most promising events only
            with np.errstate(divide="ignore", invalid="ignore"):
                proxy = np.where(a > 0, np.log(np.maximum(a, 1) / (b + 1))
                                 - 5.5 * np.sqrt(1 / np.maximum(a, 1) + 1 / (b + 1)), -np.inf)
            keep = np.argpartition(-proxy, _ENVELOPE_EXACT)[:_ENVELOPE_EXACT]
            a, b = a[keep], b[keep]
        best = max(best, float(np.max(epsilon_lower_bound(a, b, n, alpha=alpha))))
    return best


#: events per family whose Clopper-Pearson bound data_envelope computes exactly (chosen by
#: a normal approximation of the same bound)
_ENVELOPE_EXACT = 400


# ------------------------------------------------------------------ the hidden pool
# the mechanisms: dpteach/coursework/assignments/_a6_pool.py


def _cases(kinds, rng, n=N_SAMPLES):
    request, truth = [], []
    for kind in kinds:
        x, y, claim, upper, private, text = draw_mechanism(kind, rng, n)
        if rng.random() < 0.5:                               # which input is "x" is random
            x, y = y, x
        request.append({"samples_x": x, "samples_y": y, "claimed_epsilon": claim,
                        "alpha": CASE_ALPHA})
        truth.append({"kind": kind, "private": bool(private), "upper": float(upper),
                      "description": text,
                      "reference": reference_bound(x, y, CASE_ALPHA),
                      "envelope": data_envelope(x, y, CASE_ALPHA)})
    return {"cases": request}, {"cases": truth}


def _check_bound(key, i, lb, case, tr, n_cases):
    """Feedback for a bound above the truth or a broken mechanism left unrefuted."""
    claim, upper, ref = float(case["claimed_epsilon"]), tr["upper"], tr["reference"]
    envelope = tr["envelope"]
    if lb > ENVELOPE_SLACK[0] * envelope + ENVELOPE_SLACK[1]:
        return fail(key, f"mechanism {i + 1} of {n_cases}: your bound ε ≥ {g(lb)} is more than "
                         f"its samples can support: even the best event chosen AND counted on "
                         f"all of them gives a Clopper–Pearson bound of only {g(envelope)} at "
                         f"α = {g(case['alpha'])} ({tr['description']}). Finitely many samples "
                         "never prove ε = ∞, and a ratio of counts is an estimate, not a bound. "
                         "Hint: choose the event on part of the samples, count it on the rest, "
                         "and use Clopper–Pearson limits (dp.audit.audit on the samples does "
                         "all of this).", "unsupported", case=i)
    if lb > upper * (1 + 1e-9) + 1e-9:
        return fail(key, f"mechanism {i + 1} of {n_cases}: your bound ε ≥ {g(lb)} is above its "
                         f"true privacy loss on these neighbours, {g(upper)} ({tr['description']}"
                         f"): not a valid lower bound. Hint: a point estimate (or an event "
                         "chosen and counted on the same samples) overshoots; choose the event "
                         "on part of the samples, count it on the rest, and use Clopper–Pearson "
                         "limits (dp.audit.audit on the samples does all of this).", "invalid",
                    case=i)
    if ref > REFUTABLE * claim and not lb > claim:
        return fail(key, f"mechanism {i + 1} of {n_cases} ({tr['description']}) is broken and "
                         f"its samples show it: dp.audit.audit on the same samples proves ε ≥ "
                         f"{g(ref)} > {g(claim)} with confidence 1 − {g(case['alpha'])}, but "
                         f"your bound is {g(lb)}. Hint: try events of the form output ≥ t and "
                         "output ≤ t (and sets of outputs for categories), in both directions.",
                    "missed", case=i)
    return None


# ------------------------------------------------------------------ Task 1
def _t1_request(rng):
    kinds = [str(rng.choice(["laplace_count", "laplace_sum"])), "scale_is_epsilon",
             str(rng.choice(["half_noise", "sensitivity_missing", "truncated_noise"]))]
    kinds = [kinds[i] for i in rng.permutation(3)]
    return _cases(kinds, rng)


def _t1_collect(answers, req):
    return call_each(answers.get("epsilon_lower_bound_from_samples"),
                     ((np.asarray(c["samples_x"]).copy(), np.asarray(c["samples_y"]).copy(),
                       c["alpha"]) for c in req["cases"]), "bounds", read=real_or_inf)


def _t1_judge(data, req, truth):
    key = "Task 1"
    bad = opening(key, data, "Hint: the signature is epsilon_lower_bound_from_samples(samples_x, "
                           "samples_y, alpha).")
    if bad is not None:
        return bad
    found, cases, tr = data.get("bounds"), req.get("cases", []), truth.get("cases", [])
    if not isinstance(found, list) or len(found) != len(cases) or len(tr) != len(cases):
        return fail(key, "the check's data is malformed.", "malformed")
    shown = []
    for i, (f, c, t) in enumerate(zip(found, cases, tr)):
        lb = real_or_inf(f)
        if lb is None or lb < 0:
            return fail(key, f"for mechanism {i + 1} you returned {f!r}; expected a lower bound "
                             "on ε, a number ≥ 0.", "type")
        bad = _check_bound(key, i, lb, c, t, len(cases))
        if bad is not None:
            return bad
        shown.append(f"{t['description']}: claimed {g(c['claimed_epsilon'])}, your bound "
                     f"{g(lb, 3)}" + (" (refuted)" if lb > c["claimed_epsilon"] else ""))
    return ok(key, "valid and strong enough on the check's hidden mechanisms: " +
                   "; ".join(shown) + ".")


# ------------------------------------------------------------------ Task 2
def _t2_request(rng):
    n_correct = int(rng.integers(3, 5))
    kinds = list(rng.choice(CORRECT, n_correct, replace=False)) + \
        list(rng.choice(BROKEN, 7 - n_correct, replace=False))
    kinds = [str(kinds[i]) for i in rng.permutation(len(kinds))]
    return _cases(kinds, rng)


def _t2_collect(answers, req):
    fn = answers.get("audit_verdict")
    out = []
    for c in req["cases"]:
        value, problem = call(fn, np.asarray(c["samples_x"]).copy(),
                              np.asarray(c["samples_y"]).copy(), c["claimed_epsilon"], c["alpha"])
        if problem is not None:
            return problem
        try:
            lb, refuted = value
        except (TypeError, ValueError):
            out.append(repr(value)[:80])
            continue
        lb_v = real_or_inf(lb)
        out.append([lb_v if lb_v is not None else repr(lb)[:40],
                    bool(refuted) if isinstance(refuted, (bool, np.bool_)) else repr(refuted)[:40]])
    return {"verdicts": out}


def _t2_judge(data, req, truth):
    key = "Task 2"
    bad = opening(key, data, "Hint: audit_verdict(samples_x, samples_y, claimed_epsilon, alpha) "
                           "returns (epsilon_lb, refuted).")
    if bad is not None:
        return bad
    found, cases, tr = data.get("verdicts"), req.get("cases", []), truth.get("cases", [])
    if not isinstance(found, list) or len(found) != len(cases) or len(tr) != len(cases):
        return fail(key, "the check's data is malformed.", "malformed")
    shown = []
    for i, (f, c, t) in enumerate(zip(found, cases, tr)):
        if not isinstance(f, list) or len(f) != 2:
            return fail(key, f"for mechanism {i + 1} you returned {f!r}; expected a pair "
                             "(epsilon_lb, refuted).", "type")
        lb, refuted = real_or_inf(f[0]), f[1]
        if lb is None or lb < 0 or not isinstance(refuted, bool):
            return fail(key, f"for mechanism {i + 1} you returned {f!r}; expected a bound ≥ 0 "
                             "and True/False.", "type")
        claim = float(c["claimed_epsilon"])
        if refuted != (lb > claim):
            return fail(key, f"mechanism {i + 1}: your bound {g(lb)} and the claim {g(claim)} "
                             f"give refuted = {lb > claim}, but you returned {refuted}. A claim "
                             "is refuted exactly when the lower bound exceeds it.", "inconsistent")
        bad = _check_bound(key, i, lb, c, t, len(cases))
        if bad is not None:
            return bad
        shown.append(f"{t['description']} ({'broken' if not t['private'] else 'correct'}): "
                     f"{'REFUTED' if refuted else 'no violation found'}")
    return ok(key, "every verdict holds on the check's hidden mechanisms: " + "; ".join(shown) +
                   ". An unrefuted claim is not proven: only the proof shows the correct ones "
                   "are private.")


# ------------------------------------------------------------------ Task 3a
def _clip_sum(values, lo, hi):
    return float(np.sum(np.clip(np.asarray(values, float), lo, hi)))


def _bounds_case(rng, shape):
    if shape == "positive":
        lo, hi = 0.0, float(rng.integers(4, 21))
    elif shape == "negative_larger":
        hi = float(rng.integers(2, 8))
        lo = -float(rng.integers(int(hi) + 2, 21))
    else:
        lo = -float(rng.integers(1, 5))
        hi = float(rng.integers(int(-lo) + 2, 21))
    k = int(rng.integers(5, 30))
    values = np.round(rng.uniform(lo - 5, hi + 5, k), 1).tolist()
    return {"values": values, "lower": lo, "upper": hi}


def _t3a_request(rng):
    """Three cases, one per shape. The first value never clips to the bound farther from
    0, so the slip "remove the first person" (worst-case only when that person sits at
    the far bound) is told apart on every draw."""
    shapes = ["positive", "negative_larger", "mixed"]
    cases = [_bounds_case(rng, s) for s in shapes]
    for c in cases:
        lo, hi = c["lower"], c["upper"]
        far = lo if abs(lo) > abs(hi) else hi
        if (far > 0 and c["values"][0] >= far) or (far < 0 and c["values"][0] <= far):
            c["values"][0] = float(np.round((lo + hi) / 2, 1))
    return {"cases": cases}, None


def _t3a_collect(answers, req):
    fn = answers.get("worst_neighbour")
    out = []
    for c in req["cases"]:
        value, problem = call(fn, list(c["values"]), c["lower"], c["upper"])
        if problem is not None:
            return problem
        arr = float_array(value)
        out.append(arr.ravel() if arr is not None and arr.ndim <= 1 else repr(value)[:80])
    return {"neighbours": out}


def _t3a_judge(data, req, truth):
    key = "Task 3a"
    bad = opening(key, data, "Hint: worst_neighbour(values, lower, upper) returns a list.")
    if bad is not None:
        return bad
    found, cases = data.get("neighbours"), req.get("cases", [])
    if not isinstance(found, list) or len(found) != len(cases):
        return fail(key, "the check's data is malformed.", "malformed")
    for f, c in zip(found, cases):
        lo, hi = float(c["lower"]), float(c["upper"])
        x = [float(v) for v in c["values"]]
        where = f"for {len(x)} values clipped to [{g(lo)}, {g(hi)}]"
        y = float_array(f)
        if y is None or y.ndim != 1:
            return fail(key, f"{where} you returned {f!r}; expected a list of values.", "type")
        cx, cy = Counter(x), Counter(y.tolist())
        extra = (cx - cy) + (cy - cx)
        if sum(extra.values()) != 1:
            return fail(key, f"{where} your dataset is not a neighbour: it differs in "
                             f"{sum(extra.values())} records; add or remove exactly one "
                             "person.", "not_neighbour")
        sens = max(abs(lo), abs(hi))
        move = abs(_clip_sum(y, lo, hi) - _clip_sum(x, lo, hi))
        if move < sens * (1 - 1e-9):
            return fail(key, f"{where} your neighbour moves the clipped sum by {g(move)}; one "
                             f"person can move it by up to max(|lower|, |upper|) = {g(sens)}. "
                             "Hint: add a person whose value clips to the bound farther from "
                             "0.", "not_worst", move=move)
    return ok(key, f"on {len(cases)} hidden datasets and bounds your neighbour moves the clipped "
                   "sum by the full sensitivity max(|lower|, |upper|).")


# ------------------------------------------------------------------ Tasks 3b and 4
def _straddling_case(rng):
    """Bounds on both sides of 0 whose nearer one is at least half as far as the other:
    the slip Δ = upper − lower then has a scale at least 1.5 times max(|lower|, |upper|),
    which the KS test at n = 10,000 tells apart on every draw (the Laplace CDFs of scales
    b and 1.5b differ by 0.074 somewhere; the test's critical distance at alpha/4 is
    0.028, and the empirical CDF strays 0.046 from its own with probability at most
    2·exp(-2n·0.046²) < 1e-18, Dvoretzky-Kiefer-Wolfowitz)."""
    far = float(rng.integers(4, 21))
    near = float(rng.integers(math.ceil(far / 2), int(far) + 1))
    lo, hi = (-far, near) if rng.random() < 0.5 else (-near, far)
    k = int(rng.integers(5, 30))
    values = np.round(rng.uniform(lo - 5, hi + 5, k), 1).tolist()
    return {"values": values, "lower": lo, "upper": hi}


def _release_request(rng, understated):
    if understated:
        shape = str(rng.choice(["positive", "negative_larger", "mixed"]))
        c = _bounds_case(rng, shape)
    else:           # Task 3b: every draw tells Δ = upper − lower apart from max(|l|, |u|)
        c = _straddling_case(rng)
    lo, hi = c["lower"], c["upper"]
    if max(abs(lo), abs(hi)) < 4:
        hi = 4.0 if hi >= 0 else hi
    far = lo if abs(lo) > abs(hi) else hi
    c["upper"] = hi
    c["epsilon"] = float(np.round(rng.uniform(0.5, 2.0), 2))
    # the added person clips to the bound from 3 + 2·Δ/ε beyond it: forgetting to clip
    # then shifts the neighbour's releases by at least 2 noise scales (a KS distance of
    # 0.43), told apart on every draw
    beyond = 3.0 + 2.0 * max(abs(lo), abs(hi)) / c["epsilon"]
    c["neighbour"] = c["values"] + [far + float(np.sign(far)) * beyond]
    c["seed"] = int(rng.integers(2**62))
    c["n"] = N_RELEASES
    c["understated"] = understated
    return c, None


def _release_collect(fn, req):
    if is_unsolved(fn):
        return dict(UNSOLVED)
    rng = np.random.default_rng(req["seed"])
    out = np.empty((2, int(req["n"])))
    for row, values in enumerate((req["values"], req["neighbour"])):
        for j in range(out.shape[1]):
            value, problem = call(fn, list(values), req["lower"], req["upper"], req["epsilon"], rng)
            if problem is not None:
                return problem
            v = number(value)
            if v is None:
                return {"type": f"it returned {repr(value)[:80]}; one release must be one "
                                "finite real number"}
            out[row, j] = v
    return {"outputs": out}


def _release_judge(key, data, req, understated):
    from scipy import stats

    from ...audit import audit
    bad = opening(key, data, "Hint: the signature is (values, lower, upper, epsilon, rng).")
    if bad is not None:
        return bad
    if "type" in data:
        return fail(key, str(data["type"])[:200] + ".", "type")
    n = int(req["n"])
    out = float_array(data.get("outputs"), (2, n))
    if out is None:
        return fail(key, "the check's data is malformed.", "malformed")
    lo, hi, eps = float(req["lower"]), float(req["upper"]), float(req["epsilon"])
    sens = max(abs(lo), abs(hi))
    b = (1.0 if understated else sens) / eps
    sums = [_clip_sum(req["values"], lo, hi), _clip_sum(req["neighbour"], lo, hi)]
    where = (f"(values clipped to [{g(lo)}, {g(hi)}], ε = {g(eps)}; on a hidden dataset and on "
             f"its neighbour with one more person at the bound)")
    noise = out - np.asarray(sums)[:, None]
    if np.all(out[0] == out[0, 0]):
        return fail(key, f"no noise: {n:,} releases all returned {g(out[0, 0], 8)} {where}.",
                    "no_noise")
    want = "Lap(1/ε), the bug" if understated else "Lap(max(|lower|, |upper|)/ε)"
    for row in range(2):
        ks = stats.kstest(noise[row], "laplace", args=(0.0, b))
        p = ks.pvalue
        # too even a spread is as suspect as the wrong one: Lap(b) is fully specified
        # here, so the lower tail of the KS statistic is exact (alpha/8 for each row)
        low = ks_too_good(float(ks.statistic), n, ALPHA / 8)
        if low is not None:
            return fail(key, f"the releases fit {want} {where} more evenly than random draws "
                             f"can (Kolmogorov–Smirnov D = {g(float(ks.statistic), 3)}, "
                             f"P(D ≤ that) = {low:.2g} < {ALPHA / 8:g}): they look placed, "
                             "not sampled. Draw fresh noise with the rng.", "too_good", p=low)
        if p < ALPHA / 4:                  # two KS tests at alpha/4 and an audit at alpha/2
            b_hat = float(np.mean(np.abs(noise[row])))
            centre = float(np.median(noise[row]))
            looks = (f" The releases are centred {g(centre, 3)} away from the clipped sum: "
                     "clip every value to [lower, upper] before summing." if
                     abs(centre) > 5 * b / math.sqrt(n) + 0.05 * b else
                     f" The noise's mean |error| is {g(b_hat, 3)}, Lap(b) has b = {g(b)}.")
            return fail(key, f"the releases are not the clipped sum plus {want} {where}: "
                             f"Kolmogorov–Smirnov p = {p:.2g} < {ALPHA / 4:g}.{looks}",
                        "distribution", p=p)
    res = audit(_replay, out[0], out[1], n=n, alpha=ALPHA / 2, claimed_epsilon=eps)
    lb = float(res.epsilon_lb)
    if understated and not res.refuted:           # pragma: no cover (Lap(1/eps) at sens >= 4)
        return fail(key, f"the check's audit did not refute ε = {g(eps)} (bound {g(lb)}).",
                    "not_refuted")
    if not understated and res.refuted:
        return fail(key, f"the check's audit at the worst neighbours refutes ε = {g(eps)}: ε ≥ "
                         f"{g(lb)} with confidence 1 − {ALPHA / 2:g}.", "refuted")
    if understated:
        return ok(key, f"the releases are the clipped sum plus Lap(1/ε) {where}, and the check's "
                       f"audit at those worst-case neighbours proves ε ≥ {g(lb, 3)} > {g(eps)} "
                       f"(the true loss there is {g(sens)}·ε = {g(sens * eps)}): refuted.", lb=lb)
    return ok(key, f"the releases are the clipped sum plus Lap({g(sens)}/ε) {where}, and the "
                   f"check's audit at the worst neighbours finds ε ≥ {g(lb, 3)}, no violation "
                   f"of ε = {g(eps)} (not a proof: the proof is sensitivity {g(sens)}).", lb=lb)


def _t3b_request(rng):
    return _release_request(rng, False)


def _t3b_collect(answers, req):
    return _release_collect(answers.get("clipped_sum_release"), req)


def _t3b_judge(data, req, truth):
    return _release_judge("Task 3b", data, req, False)


def _t4_request(rng):
    return _release_request(rng, True)


def _t4_collect(answers, req):
    return _release_collect(answers.get("understated_release"), req)


def _t4_judge(data, req, truth):
    return _release_judge("Task 4", data, req, True)


TASKS = [
    Task(key="Task 1", points=2, names=("epsilon_lower_bound_from_samples",),
         title="a lower bound on epsilon from samples", request=_t1_request,
         collect=_t1_collect, judge=_t1_judge),
    Task(key="Task 2", points=3, names=("audit_verdict",),
         title="verdicts for hidden mechanisms", request=_t2_request, collect=_t2_collect,
         judge=_t2_judge),
    Task(key="Task 3a", points=1, names=("worst_neighbour",), title="the worst-case neighbour",
         request=_t3a_request, collect=_t3a_collect, judge=_t3a_judge),
    Task(key="Task 3b", points=2, names=("clipped_sum_release",),
         title="your clipped-sum mechanism", request=_t3b_request, collect=_t3b_collect,
         judge=_t3b_judge),
    Task(key="Task 4", points=2, names=("understated_release",),
         title="the understated sensitivity, caught", request=_t4_request, collect=_t4_collect,
         judge=_t4_judge),
]
