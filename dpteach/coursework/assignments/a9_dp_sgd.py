"""A9 · Accounting and DP-SGD (graded tasks).

Both tasks run the student's functions on inputs the check draws itself:

* Task 1a (2 points) and 1b (2 points)
  ``calibrate_sigma(target_epsilon, delta, steps, q, accountant)``: the
  smallest noise multiplier σ whose ``steps`` Gaussian steps (each on a Poisson subsample
  of rate q) cost at most ``target_epsilon`` at ``delta`` by the named accountant:
  "rdp" (:class:`dpteach.RDPAccountant`, any q), "zcdp" (ρ = steps/(2σ²),
  :func:`dpteach.zcdp_to_dp`; q = 1) or "exact" (:func:`dpteach.gaussian_epsilon` with
  k = steps; q = 1) (notebooks 16 and 18). Judged at hidden targets against the check's
  own bisection: within 0.1% of the smallest σ. 1a: five full-batch cases (each
  accountant); 1b: three rdp cases with 0.005 ≤ q ≤ 0.3 and 200-3000 steps.
* Task 2 (3 points) ``clip_and_noise(per_example_grads, clip, noise_multiplier, rng)``:
  Σᵢ gᵢ·min(1, C/‖gᵢ‖) + N(0, σ²C²I) (Abadi et al. 2016, Algorithm 1; notebook 18).
  Judged on held-out gradient batches: with σ = 0 on one-row batches the output must be
  the clipped row exactly (norm ≤ C, direction kept, rows within C and the zero row
  untouched), on larger batches the sum of the clipped rows; with σ > 0 (C ≠ 1 hidden)
  the noise (output minus the clipped sum, which only the check knows) must be
  N(0, σ²C²): a Kolmogorov-Smirnov test and a χ² test of the per-coordinate means over
  1,000 calls (fresh noise every call), each at α/2 with α = 1e-6. Noise not scaled by C,
  noise on every example, and clipping the sum instead of each example all fail; so does
  a call of the kit's dp.sgd.noisy_gradient_sum or dp.sgd.clip_gradients (noticed while the check
  runs), and in Task 1 a call of the check's own search.
* Task 3 (2 points) ``subsampled_rdp(q, sigma, alpha)``: the RDP at integer order α ≥ 2
  of one Poisson-subsampled Gaussian step (rate q, noise multiplier σ; add/remove
  neighbours), by the binomial formula of Mironov, Talwar & Zhang 2019:
  r(α) = ln(Σ_{i=0}^{α} C(α, i)(1 - q)^(α-i) q^i e^{(i² - i)/(2σ²)}) / (α - 1) (notebook
  16). Judged at four hidden (q, σ, α), one of each kind (α = 2; α in 3-6 with q ≥ 0.2;
  α in 7-24 with small q; α in 7-24 with q ≥ 0.1), within 1e-6 relative of the kit's value.
  The linear guess qα/(2σ²), the q² approximation, no sampling, a missing 1/(α - 1) (or
  1/α instead), the exponent i²/(2σ²), swapped powers of q and 1 - q and a dropped first
  or last term all fail on every draw; so does a call of dp.subsampled_gaussian_rdp or
  of the RDP accountant (which computes it).

Notebook: notebooks/solutions/A9_accounting_and_dp_sgd.ipynb.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

from ..exercises import ALPHA
from . import Task
from ._student import (UNSOLVED, call, call_each, call_each_watched, entries, fail, field,
                       float_array, forbid, g, is_unsolved, ks_too_good, number, ok, opening)

ACCOUNTANTS = ("rdp", "zcdp", "exact")


# ------------------------------------------------------------------ the check's accountant
def accountant_epsilon(sigma, delta, steps, q, accountant):
    """ε at δ after ``steps`` Gaussian steps of noise multiplier σ (Poisson rate q)."""
    from ... import rdp
    if accountant == "rdp":
        return rdp.RDPAccountant().compose_gaussian(sigma, q=q, steps=steps).epsilon(delta)
    if accountant == "zcdp":
        return rdp.zcdp_to_dp(steps / (2.0 * sigma * sigma), delta)
    if accountant == "exact":
        return rdp.gaussian_epsilon(sigma, delta, k=steps)
    raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")


#: how often the check's own answer was computed (a student's function calling it shows)
_ANSWER_CALLS = [0]


def smallest_sigma(target, delta, steps, q, accountant, rtol=1e-7):
    """The check's answer: the σ where ε falls to ``target`` (ε falls as σ grows), found
    by scipy's brentq on log σ to relative ``rtol`` and returned on the safe side (its ε
    is at most ``target``). A bracket [σ, 2σ] is found first by doubling or halving."""
    _ANSWER_CALLS[0] += 1

    def eps(s):
        return accountant_epsilon(s, delta, steps, q, accountant)

    lo, hi = 0.5, 1.0
    while eps(hi) > target:
        lo, hi = hi, 2.0 * hi
    while eps(lo) <= target:
        lo, hi = lo / 2.0, lo
    root = optimize.brentq(lambda u: eps(math.exp(u)) - target, math.log(lo), math.log(hi),
                           xtol=rtol / 4, rtol=4 * np.finfo(float).eps)
    # brentq's root is within rtol/4 of the crossing, on either side: step up onto the
    # side where ε is at most the target
    for k in range(1, 5):
        sigma = min(math.exp(root) * (1 + k * rtol / 4), hi)
        if eps(sigma) <= target:
            return sigma
    return hi


# ------------------------------------------------------------------ Task 1
def _t1_request_for(kinds):
    """Hidden cases: (accountant, q) for each kind; "sub" is rdp at a random q < 1."""
    def request(rng):
        cases = []
        for kind in kinds:
            if kind == "sub":
                acc, q = "rdp", float(np.round(10 ** rng.uniform(np.log10(0.005), np.log10(0.3)), 4))
            else:
                acc, q = kind, 1.0
            many = q < 1
            cases.append({"target_epsilon": float(np.round(rng.uniform(0.5, 6.0), 3)),
                          "delta": float(10 ** np.round(rng.uniform(-7, -4), 2)),
                          "steps": int(rng.integers(200, 3000) if many else rng.integers(1, 60)),
                          "q": q, "accountant": acc})
        order = rng.permutation(len(cases))
        cases = [cases[i] for i in order]
        truth = [smallest_sigma(c["target_epsilon"], c["delta"], c["steps"], c["q"],
                                c["accountant"]) for c in cases]
        return {"cases": cases}, {"sigmas": truth}
    return request


_t1a_request = _t1_request_for(("rdp", "zcdp", "exact", "zcdp", "exact"))
_t1b_request = _t1_request_for(("sub", "sub", "sub"))


def _t1_collect(answers, req):
    fn = answers.get("calibrate_sigma")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    before = _ANSWER_CALLS[0]
    data = call_each(fn, ((c["target_epsilon"], c["delta"], c["steps"], c["q"], c["accountant"])
                          for c in req["cases"]), "sigmas")
    if "sigmas" in data:
        data["called_check"] = _ANSWER_CALLS[0] != before
    return data


def _t1_judge_as(key):
    return lambda data, req, truth: _t1_judge(data, req, truth, key)


def _t1_judge(data, req, truth, key="Task 1a"):
    bad = opening(key, data, "Hint: bisect on sigma: epsilon falls as sigma grows.")
    if bad is not None:
        return bad
    if data.get("called_check") is True:
        return fail(key, "your function calls the check's own search (smallest_sigma); the task "
                         "is to write the search yourself with the kit's accountants.", "library")
    expected, cases = field(truth, "sigmas", []), field(req, "cases", [])
    found, bad = entries(key, data, "sigmas", len(expected), len(cases))
    if bad is not None:
        return bad
    for c, f, want in zip(cases, found, expected):
        shown = (f"calibrate_sigma({c['target_epsilon']:g}, {c['delta']:.3g}, {c['steps']}, "
                 f"{c['q']:g}, {c['accountant']!r})")
        v = number(f)
        if v is None or v <= 0:
            return fail(key, f"{shown} returned {f!r}; expected a positive number (σ).", "type")
        if abs(v / want - 1) > 1e-3:
            try:
                with np.errstate(all="ignore"):
                    eps_v = accountant_epsilon(v, c["delta"], c["steps"], c["q"],
                                               c["accountant"])
                spent = f" (it costs ε = {g(eps_v)} by this accountant)"
            except Exception:                       # noqa: BLE001 - the message only
                spent = ""
            hint = ("it is too small: the target ε is exceeded" if v < want else
                    "it is larger than needed: a smaller σ also meets the target")
            extra = ""
            if c["accountant"] == "rdp" and c["q"] < 1:
                extra = (" Did you account for the Poisson subsampling (q) in every step? "
                         "dp.RDPAccountant().compose_gaussian(sigma, q=q, steps=steps)")
            return fail(key, f"{shown} returned σ = {g(v, 6)}{spent}; the smallest σ meeting "
                             f"ε ≤ {c['target_epsilon']:g} is {g(want, 6)}: {hint}.{extra}",
                        "wrong")
    rows = "; ".join(f"{c['accountant']} (q = {c['q']:g}, {c['steps']} steps, ε = "
                     f"{c['target_epsilon']:g}): σ = {g(s, 4)}" for c, s in zip(cases, expected))
    return ok(key, f"correct at {len(expected)} hidden targets: {rows}.")


# ------------------------------------------------------------------ Task 2
_CLIPS = (0.3, 0.5, 2.0, 4.0)        # never 1: forgetting the factor C must show
_NOISE_CALLS = 1000
#: notebook 18's answer, which the student's function must not call (however reached)
_LIBRARY = ("dpteach.sgd:noisy_gradient_sum",
            "dpteach.sgd:clip_gradients")


def _t2_request(rng):
    d = int(rng.integers(12, 30))
    clip = float(rng.choice(_CLIPS))
    # noise on every example has spread √n·σC, forgotten C has σ: keep √n·C far from 1 so
    # that the two slips are told apart (their spreads differ by a factor 1.35 or more)
    rows = [n for n in range(6, 24) if not 1 / 1.35 < clip * math.sqrt(n) < 1.35]
    return {"seed": int(rng.integers(2**62)), "d": d, "clip": clip,
            "sigma": float(np.round(rng.uniform(0.5, 2.0), 3)),
            "noise_rows": int(rng.choice(rows)), "noise_seed": int(rng.integers(2**62))}, {}


def _t2_batches(req):
    """The held-out gradients: one-row batches (norms from 0 to 5 C, one exactly zero),
    multi-row batches, and the batch the noise is measured on."""
    r = np.random.default_rng(req["seed"])
    d, c = req["d"], req["clip"]
    singles = r.normal(size=(40, d))
    singles /= np.linalg.norm(singles, axis=1, keepdims=True)
    singles *= (c * r.uniform(0.0, 5.0, 40))[:, None]
    singles[0] = 0.0
    singles[1] *= c * 0.999 / np.linalg.norm(singles[1])      # just inside the bound
    sums = [r.normal(size=(int(r.integers(5, 30)), d)) * r.uniform(0.1, 3.0) * c
            for _ in range(10)]
    noise = r.normal(size=(req["noise_rows"], d)) * 2 * c
    return singles, sums, noise


def _clipped(g, c):
    norms = np.linalg.norm(g, axis=1)
    return g * np.minimum(1.0, c / np.maximum(norms, 1e-300))[:, None]


def _t2_collect(answers, req):
    fn = answers.get("clip_and_noise")
    if is_unsolved(fn):
        return dict(UNSOLVED)
    singles, sums, noise_batch = _t2_batches(req)
    c, s = req["clip"], req["sigma"]

    def run(batch, sigma, rng):
        value, problem = call(fn, batch.copy(), c, sigma, rng)
        if problem is not None:
            return None, problem
        arr = float_array(value)
        if arr is None or arr.shape != (req["d"],):
            return None, {"shape": repr(getattr(value, "shape", type(value).__name__))[:80]}
        return arr, None

    with forbid(*_LIBRARY, code=[fn]) as guard:
        data = _t2_run(run, singles, sums, noise_batch, s, req)
    if isinstance(data, dict) and "singles" in data:
        data["called_library"] = bool(guard.used)
    return data


def _t2_run(run, singles, sums, noise_batch, s, req):
    quiet = np.random.default_rng(0)
    out_single, out_sum, out_noise = [], [], []
    for row in singles:
        arr, problem = run(row[None, :], 0.0, quiet)
        if problem is not None:
            return problem
        out_single.append(arr)
    for batch in sums:
        arr, problem = run(batch, 0.0, quiet)
        if problem is not None:
            return problem
        out_sum.append(arr)
    rng = np.random.default_rng(req["noise_seed"])
    for _ in range(_NOISE_CALLS):
        arr, problem = run(noise_batch, s, rng)
        if problem is not None:
            return problem
        out_noise.append(arr)
    return {"singles": np.array(out_single), "sums": np.array(out_sum),
            "noisy": np.array(out_noise)}


def _t2_judge(data, req, truth):
    key = "Task 2"
    bad = opening(key, data, "Hint: clip each row to norm C, sum, add N(0, (sigma C)^2) per "
                             "coordinate.",
                  library="your function calls dp.sgd.noisy_gradient_sum or dp.sgd.clip_gradients (the "
                          "notebook's answer); the task is to write the clipping and the noise "
                          "yourself with numpy.")
    if bad is not None:
        return bad
    if "shape" in data:
        return fail(key, f"clip_and_noise must return one vector of length d = {req['d']} (the "
                         f"noisy sum over the batch), found {data['shape']}.", "shape")
    singles, sums, noise_batch = _t2_batches(req)
    c, s, d = req["clip"], req["sigma"], req["d"]
    got1 = float_array(data.get("singles"), (len(singles), d))
    got2 = float_array(data.get("sums"), (len(sums), d))
    got3 = float_array(data.get("noisy"), (_NOISE_CALLS, d))
    if got1 is None or got2 is None or got3 is None:
        return fail(key, "the check's data is malformed (wrong shapes or non-finite values: "
                         "did a zero gradient give NaN?).", "malformed")
    want1 = _clipped(singles, c)
    norms = np.linalg.norm(got1, axis=1)
    in_norms = np.linalg.norm(singles, axis=1)
    if (norms > c * (1 + 1e-9)).any():
        i = int(np.argmax(norms))
        return fail(key, f"with σ = 0 and a batch of one gradient of norm {g(in_norms[i])}, your "
                         f"output has norm {g(norms[i])} > C = {g(c)}. Hint: scale each row by "
                         "min(1, C / ||g||).", "norm")
    if not np.allclose(got1, want1, rtol=1e-9, atol=1e-12 * c):
        diff = np.abs(got1 - want1).max(axis=1)
        i = int(np.argmax(diff))
        what = ("a gradient within the bound must be left as it is" if in_norms[i] <= c else
                "a long gradient must keep its direction and get norm exactly C")
        return fail(key, f"with σ = 0, a batch of one gradient of norm {g(in_norms[i])} "
                         f"(C = {g(c)}) came back as {np.round(got1[i][:3], 4).tolist()}…, "
                         f"expected {np.round(want1[i][:3], 4).tolist()}…: {what}.", "clip")
    want2 = np.array([_clipped(b, c).sum(axis=0) for b in sums])
    if not np.allclose(got2, want2, rtol=1e-9, atol=1e-12 * c):
        i = int(np.argmax(np.abs(got2 - want2).max(axis=1)))
        summed = sums[i].sum(axis=0)
        clipped_sum = summed * min(1.0, c / np.linalg.norm(summed))
        hint = (" That is the clipped sum: clip every example's gradient first, then add them "
                "up (the sum's sensitivity is C only then)."
                if np.allclose(got2[i], clipped_sum, rtol=1e-6) else
                " Hint: the sum over the batch of the clipped rows.")
        return fail(key, f"with σ = 0 on a batch of {len(sums[i])} gradients your output differs "
                         f"from the sum of the clipped gradients (by {g(np.abs(got2[i] - want2[i]).max())} "
                         f"in some coordinate).{hint}", "sum")
    z = got3 - _clipped(noise_batch, c).sum(axis=0)
    sd = s * c
    ks_test = stats.kstest(z.ravel(), "norm", args=(0.0, sd))
    ks = ks_test.pvalue
    means = z.mean(axis=0)
    chi2 = float(np.sum(means ** 2) * _NOISE_CALLS / sd ** 2)
    chi_p = float(stats.chi2.sf(chi2, d))
    measured = float(z.std())
    # a fit too good is as suspect as a bad one: N(0, σ²C²) is fully specified, so the
    # lower tails of the KS statistic and of the means' χ²(d) are exact (alpha/4 each)
    too_even = ks_too_good(float(ks_test.statistic), z.size, ALPHA / 4)
    too_centred = float(stats.chi2.cdf(chi2, d)) if d >= 1 else 1.0
    if too_even is not None or too_centred < ALPHA / 4:
        what = (f"Kolmogorov-Smirnov D = {g(float(ks_test.statistic), 3)}, P(D ≤ that) = "
                f"{g(too_even, 3)}" if too_even is not None else
                f"the means over calls are closer to 0 than random noise allows: χ² = "
                f"{g(chi2, 3)} on {d} degrees of freedom, P(χ² ≤ that) = {g(too_centred, 3)}")
        return fail(key, f"over {_NOISE_CALLS} calls the noise fits N(0, σ²C²) better than "
                         f"random draws can ({what} < α = {g(ALPHA / 4)}): it looks placed, "
                         "not sampled (antithetic or quantile noise is not Gaussian noise). "
                         "Draw fresh noise every call: rng.normal(0, sigma * C, size=d).",
                    "too_good")
    if ks < ALPHA / 2 or chi_p < ALPHA / 2:
        hints = []
        if math.isclose(measured, s, rel_tol=0.1):
            hints.append(f"its spread is about σ = {g(s)}, not σ·C: the noise must be scaled by C")
        elif math.isclose(measured, sd * math.sqrt(len(noise_batch)), rel_tol=0.1):
            hints.append("its spread is √n·σC: noise was added to every example; add it once, "
                         "to the sum")
        elif chi_p < ALPHA / 2:
            hints.append("the noise does not average out over calls: draw fresh noise every call "
                         "(from the rng you are given)")
        hint = ("; ".join(hints) + ".") if hints else "Hint: rng.normal(0, sigma * C, size=d)."
        return fail(key, f"over {_NOISE_CALLS} calls with σ = {g(s)}, C = {g(c)} on a batch of "
                         f"{len(noise_batch)} gradients, the noise (your output minus the clipped "
                         f"sum) has standard deviation {g(measured)}, expected σ·C = {g(sd)} "
                         f"(Kolmogorov-Smirnov p = {g(ks, 3)}, mean test p = {g(chi_p, 3)}; "
                         f"rejected at α = {g(ALPHA)}): {hint}", "noise", sd=measured)
    return ok(key, f"clipping exact on {len(singles)} single gradients and {len(sums)} batches; "
                   f"the noise over {_NOISE_CALLS} calls has sd {g(measured)} (σ·C = {g(sd)}), "
                   f"consistent with N(0, σ²C²) (KS p = {g(ks, 3)}).", sd=measured)


# ------------------------------------------------------------------ Task 3
_T3_LIBRARY = ("dpteach:subsampled_gaussian_rdp", "dpteach.rdp:subsampled_gaussian_rdp",
               "dpteach:RDPAccountant", "dpteach.rdp:RDPAccountant")

#: what Task 1's honest solutions call (the notebook names them): the accountants, which the
#: check's own search uses too
_T1_NEEDS = _T3_LIBRARY + ("dpteach:gaussian_epsilon", "dpteach.rdp:gaussian_epsilon",
                           "dpteach:zcdp_to_dp", "dpteach.rdp:zcdp_to_dp")


def _t3_request(rng):
    """Four hidden cases, one of each kind, in a random order; the truth from the kit."""
    from ... import rdp

    def u(lo, hi, log=False):
        x = 10 ** rng.uniform(np.log10(lo), np.log10(hi)) if log else rng.uniform(lo, hi)
        return float(np.round(x, 4))

    cases = [{"q": u(0.05, 0.5), "sigma": u(0.8, 3.0), "alpha": 2},
             {"q": u(0.2, 0.6), "sigma": u(0.8, 2.0), "alpha": int(rng.integers(3, 7))},
             {"q": u(0.01, 0.1, log=True), "sigma": u(1.0, 3.0), "alpha": int(rng.integers(7, 25))},
             {"q": u(0.1, 0.4), "sigma": u(1.5, 3.0), "alpha": int(rng.integers(7, 25))}]
    cases = [cases[i] for i in rng.permutation(len(cases))]
    truth = [float(rdp.subsampled_gaussian_rdp(c["q"], c["sigma"], c["alpha"])) for c in cases]
    return {"cases": cases}, {"rdp": truth}


def _t3_collect(answers, req):
    return call_each_watched(answers, "subsampled_rdp",
                             [(c["q"], c["sigma"], c["alpha"]) for c in req["cases"]], "rdp",
                             _T3_LIBRARY)


def _t3_judge(data, req, truth):
    key = "Task 3"
    bad = opening(key, data, "Hint: sum the binomial terms, take the log, divide by α - 1.",
                  library="your function calls dp.subsampled_gaussian_rdp or the RDP accountant "
                          "(which computes it); the task is to write the formula yourself.")
    if bad is not None:
        return bad
    expected, cases = field(truth, "rdp", []), field(req, "cases", [])
    found, bad = entries(key, data, "rdp", len(expected), len(cases))
    if bad is not None:
        return bad
    for c, f, want in zip(cases, found, expected):
        shown = f"subsampled_rdp({c['q']:g}, {c['sigma']:g}, {c['alpha']})"
        v = number(f)
        if v is None or not math.isfinite(v):
            return fail(key, f"{shown} returned {f!r}; expected a finite number (nats).", "type")
        if abs(v - want) > 1e-6 * abs(want):
            q, s, a = c["q"], c["sigma"], c["alpha"]
            hints = []
            if math.isclose(v, q * a / (2 * s * s), rel_tol=1e-6):
                hints.append("that is q·α/(2σ²), linear in q: subsampling does better")
            elif math.isclose(v, a / (2 * s * s), rel_tol=1e-6):
                hints.append("that is α/(2σ²), the Gaussian without subsampling")
            elif math.isclose(v, want * (a - 1), rel_tol=1e-6):
                hints.append("that is ln A_α: divide by α - 1")
            elif math.isclose(v, want * (a - 1) / a, rel_tol=1e-6):
                hints.append("divide by α - 1, not α")
            else:
                hints.append("check the exponent (i² - i)/(2σ²), the powers (1 - q)^(α - i) q^i "
                             "and the range i = 0 ... α")
            return fail(key, f"{shown} returned {g(v, 8)}; the RDP of that step is {g(want, 8)}: "
                             f"{hints[0]}.", "wrong")
    rows = "; ".join(f"q = {c['q']:g}, σ = {c['sigma']:g}, α = {c['alpha']}: {g(r, 6)}"
                     for c, r in zip(cases, expected))
    return ok(key, f"correct at 4 hidden steps ({rows}).")


TASKS = [
    Task(key="Task 1a", points=2, names=("calibrate_sigma",),
         title="calibrate σ for a target (ε, δ): full-batch accountants", request=_t1a_request,
         collect=_t1_collect, judge=_t1_judge_as("Task 1a"), needs=_T1_NEEDS),
    Task(key="Task 1b", points=2, names=("calibrate_sigma",),
         title="calibrate σ for a target (ε, δ): Poisson-subsampled steps",
         request=_t1b_request, collect=_t1_collect, judge=_t1_judge_as("Task 1b"),
         needs=_T1_NEEDS),
    Task(key="Task 2", points=3, names=("clip_and_noise",),
         title="clip each gradient, then add noise to the sum", request=_t2_request,
         collect=_t2_collect, judge=_t2_judge, forbidden=_LIBRARY),
    Task(key="Task 3", points=2, names=("subsampled_rdp",),
         title="the RDP of one Poisson-subsampled Gaussian step", request=_t3_request,
         collect=_t3_collect, judge=_t3_judge, forbidden=_T3_LIBRARY),
]
