"""Auto-checks for the notebooks' exercises and for coursework.

Every check returns a :class:`Feedback` with ``.passed`` and a friendly ``.message``
that says what was expected, what was found and, when wrong, a hint. An answer left as
``None`` (or ``...``), or a function that still returns ``None``, is reported as
"not yet solved" rather than as an error, so an exercise notebook runs top to bottom
before anything is filled in.

The checks test privacy, not only accuracy:

* :func:`check_mechanism` decides on the distribution of a student's Laplace
  mechanism and on privacy: hidden probe inputs and (Δ, ε) points, an empirical audit
  (:mod:`dpteach.audit`), then scale, shape, tails, repeated values and one noise for
  every input; it is :func:`mechanism_judge` of :func:`mechanism_collect` of
  :func:`mechanism_request`, so a grader can run the student's code apart from the
  judging;
* :func:`check_exponential_probabilities` computes the exact worst-case privacy loss
  of a student's selection probabilities over neighbouring score vectors;
* :func:`check_k_anonymous` verifies a generalised table, that its sensitive column
  was left intact and that it was not bought by deleting rows;
* :func:`check_budget_respected` inspects a :class:`~dpteach.curator.Curator`'s
  accountant.

Statistical checks use alpha = 1e-6 with a fixed default seed, so a correct answer
fails with probability about one in a million at most per test, and the same answer
always gets the same feedback. Coursework notebooks: ``notebooks/solutions/``.
"""

from __future__ import annotations

import math

import numpy as np

# the verdict record and its wording, and the statistics of check_mechanism, are
# machinery kept in private modules; their public names are exported from here
from ._feedback import (ALPHA, DEFAULT_SEED, NOT_SOLVED, Feedback, failure, not_solved,
                        number_text as g, unsolved)
from ._anonymity_checks import (check_disclosure, check_k_anonymous, check_l_diversity,
                                check_t_closeness)
from ._mechanism_judge import (MAX_SECONDS, MECHANISM_PROBE, TARGET_SECONDS, WASTE_TOLERANCE,
                               mechanism_collect, mechanism_judge, mechanism_request)
from ._mechanism_stats import problem_feedback

__all__ = ["Feedback", "NOT_SOLVED", "ALPHA", "DEFAULT_SEED", "MECHANISM_PROBE",
           "check_number", "check_choice", "check_true", "check_mechanism",
           "mechanism_request", "mechanism_collect", "mechanism_judge",
           "check_exponential_probabilities", "check_sensitivity", "check_k_anonymous",
           "check_l_diversity", "check_t_closeness", "check_disclosure",
           "check_reconstruction", "check_budget_respected", "check_zoo_verdicts",
           "check_audit", "check_neighbours", "check_fraction_at_most"]


# ------------------------------------------------------------------ generic checks
def check_number(found, expected, *, name="answer", rel=1e-3, abs_tol=1e-9, hint=""):
    """Is ``found`` within ``rel`` (relative) or ``abs_tol`` of ``expected``?

    ``|found - expected| <= max(rel * max(|found|, |expected|), abs_tol)``
    (:func:`math.isclose`). ``expected`` must be a finite real number and ``rel``,
    ``abs_tol`` finite and >= 0 (instructor parameters: a bad one raises ValueError or
    TypeError naming it); a student's ``found`` that is not a number, NaN, infinite or
    beyond the float range fails with a message instead."""
    from .._support.validate import valid_real

    expected = valid_real(expected, "expected")
    rel = valid_real(rel, "rel", low=0.0)
    abs_tol = valid_real(abs_tol, "abs_tol", low=0.0)
    if unsolved(found):
        return not_solved(name)
    try:
        value = _as_float(found)
    except (TypeError, ValueError):
        return Feedback(False, f"{name}: expected a number, found {found!r}. {hint}".strip())
    if math.isclose(value, expected, rel_tol=rel, abs_tol=abs_tol):
        return Feedback(True, f"{name}: correct ({value:.6g}).")
    return Feedback(False, f"{name}: expected about {expected:.6g}, found {g(value, 6)}. "
                           f"{hint}".strip())


def _as_float(found) -> float:
    """A student's answer as a float: an integer beyond the float range (10**400)
    becomes ±inf, so that it fails the comparison instead of raising OverflowError."""
    try:
        return float(found)
    except OverflowError:
        if found > 0:
            return math.inf
        return -math.inf


def check_choice(found, expected, *, name="answer", hint=""):
    """Is ``found`` equal to ``expected`` (strings compared without case or spaces)?"""
    if unsolved(found):
        return not_solved(name)
    norm = (lambda s: str(s).strip().lower()) if isinstance(expected, str) else (lambda s: s)
    if isinstance(expected, (list, tuple, np.ndarray)):
        ok = list(np.asarray(found).ravel()) == list(np.asarray(expected).ravel())
    else:
        ok = norm(found) == norm(expected)
    if ok:
        return Feedback(True, f"{name}: correct ({found!r}).")
    return Feedback(False, f"{name}: expected {expected!r}, found {found!r}. {hint}".strip())


def check_true(condition, *, name="answer", ok="", fail="", hint=""):
    """A yes/no check whose messages the caller writes; ``condition=None`` is unsolved."""
    if unsolved(condition):
        return not_solved(name)
    if not isinstance(condition, (bool, np.bool_)):   # bool(nan) is True: never guess
        return failure(name, f"expected True or False, found {condition!r}.", "type")
    if bool(condition):
        return Feedback(True, f"{name}: {ok or 'correct.'}")
    return Feedback(False, f"{name}: {fail or 'not yet right.'} {hint}".strip())


def check_mechanism(student_fn, *, sensitivity, epsilon, value=10.0, n=None, alpha=ALPHA,
                    rng=DEFAULT_SEED, name="mechanism", seconds=TARGET_SECONDS,
                    max_seconds=MAX_SECONDS):
    """Grade a student's Laplace mechanism on its distribution and on privacy.

    ``student_fn(value, sensitivity, epsilon, rng)`` must return ONE release of
    ``value`` that is ε-DP when neighbouring values differ by at most ``sensitivity``,
    drawing its noise from the numpy Generator ``rng``. The check is
    ``mechanism_judge(mechanism_collect(student_fn, mechanism_request(rng, ...)))``:

    * :func:`mechanism_request` draws from ``rng`` the probes a student cannot
      special-case: three (Δ, ε) points (the caller's, plus random ones where every
      classic wrong scale is at least a factor 2 off) and twelve inputs per point (six
      values from 0 to ±1e10, negative, non-integer, each with a neighbour at distance Δ);
    * :func:`mechanism_collect` checks that identically seeded generators give the same
      release, times the function, and runs every probe input n times (n = 30,000 for
      a fast function, else what the tail test needs, about 14,000; calls in random
      order, so a function that counts its calls cannot tell the probes apart);
    * :func:`mechanism_judge` tests, at alpha Bonferroni-split over 274 tests
      (false failure of a correct mechanism <= alpha = 1e-6 overall): no noise; an
      empirical privacy audit of one neighbouring pair per point (:mod:`dpteach.audit`);
      scale >= Δ/ε
      (Gamma); repeated values (clipping, discrete noise, exact answers); one scale for
      every input (F test); mean 0; tail counts beyond 4, 6, 8 and 10 times the scale
      (Binomial; truncation or clipping at ±10 Δ/ε fails); Kolmogorov-Smirnov against
      Laplace. Noise Lap(b') with b' a little above Δ/ε (1.1 Δ/ε, say) passes and the
      message says by how much; noise whose scale is, with confidence 1 - alpha_i, more
      than :data:`WASTE_TOLERANCE` (1.5) times Δ/ε fails with reason "wasteful" and the
      factor in the message: 2Δ/ε or 10Δ/ε is private but a wrong Laplace mechanism, each
      answer that many times less accurate than ε allows (as in the graded A3 task).

    ``n`` raises the runs per input (it never goes below what the tail test needs);
    ``seconds`` is the target time of the calls, ``max_seconds`` the most the check
    waits before declaring a slow function too slow to check. About 1.5 s for a simple
    function on an idle machine (the number of runs depends on the measured speed, so
    a verdict reproduces exactly only while the function stays on the same side of
    the fast/slow line). ``rng`` (a seed by default) makes the verdict reproducible.
    ``details["reason"]`` names the verdict: "passed", "too_much_noise" (both pass),
    "no_noise", "privacy", "too_little_noise", "atoms", "scale_depends_on_input",
    "biased", "truncated", "distribution", "rng", "too_slow", "error", "type",
    "not_finite", "unsolved". Notebook A3 (notebooks/solutions/).
    """
    from .._support.validate import valid_epsilon, valid_real, valid_rng, valid_sensitivity

    sensitivity = valid_sensitivity(sensitivity, positive=True)
    epsilon = valid_epsilon(epsilon)
    value = valid_real(value, "value")
    rng = valid_rng(rng)
    request = mechanism_request(rng, sensitivity=sensitivity, epsilon=epsilon, value=value,
                                n=n, alpha=alpha, seconds=seconds, max_seconds=max_seconds)
    data = mechanism_collect(student_fn, request)
    return mechanism_judge(data, request, name=name, max_waste=WASTE_TOLERANCE)


# ------------------------------------------------------------------ the exponential mechanism
def check_exponential_probabilities(student_fn, *, scores, sensitivity, epsilon,
                                    name="exponential probabilities", n_pairs=200,
                                    rng=DEFAULT_SEED):
    """Grade ``student_fn(scores, sensitivity, epsilon) -> probabilities``.

    Privacy, exactly (no sampling): on neighbouring score vectors u and u' with
    |u(r) - u'(r)| <= Δ for every candidate [DR14 3.4], every probability may change by
    a factor at most e^ε. The check evaluates the student's function on ``scores`` and
    on many neighbours -- the worst cases (one candidate +Δ and all others -Δ, and the
    reverse) and ``n_pairs`` random moves in {-Δ, 0, +Δ} -- and fails if the largest
    |ln P(r) - ln P'(r)| exceeds ε. Leaving out the 1/2 of exp(εu/(2Δ)) reaches almost
    2ε there and fails. Accuracy: the probabilities must equal
    :func:`dpteach.mechanisms.exponential_probabilities` (to 1e-9) and sum to 1.
    Notebook A5.
    """
    from .._support.validate import valid_epsilon, valid_positive_int, valid_rng, valid_scores, \
        valid_sensitivity
    from ..mechanisms import exponential_probabilities

    u = valid_scores(scores)
    d = valid_sensitivity(sensitivity, positive=True)
    epsilon = valid_epsilon(epsilon)
    n_pairs = valid_positive_int(n_pairs, "n_pairs")
    if unsolved(student_fn):
        return not_solved(name)
    if not callable(student_fn):
        return failure(name, "expected a function probabilities(scores, sensitivity, epsilon), "
                             f"found {type(student_fn).__name__}.", "type")
    rng = valid_rng(rng)

    def probs(v):
        try:
            p = student_fn(v.copy(), d, epsilon)
        except Exception as exc:
            return None, ("error", f"calling it raised {type(exc).__name__}: {exc}")
        if unsolved(p):
            return None, ("unsolved", None)
        p = np.asarray(p, dtype=float) if not isinstance(p, (str, bytes)) else np.asarray([])
        if p.shape != v.shape:
            return None, ("type", f"it returned shape {p.shape}; expected one probability per "
                                  f"candidate, shape {v.shape}")
        if not np.all(np.isfinite(p)) or (p < 0).any():
            return None, ("type", "it returned negative or non-finite probabilities")
        if not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
            return None, ("normalise", f"the probabilities sum to {g(p.sum(), 6)}, not 1. "
                                       "Hint: divide by the sum (or use scipy.special.softmax)")
        return p, None

    p, problem = probs(u)
    if problem is not None:
        return problem_feedback(name, problem) if problem[0] != "normalise" \
            else failure(name, problem[1] + ".", "normalise")
    expected = exponential_probabilities(u, d, epsilon)
    k = u.size
    moves = [np.where(np.arange(k) == r, 1.0, -1.0) * s for r in range(min(k, 50)) for s in (1, -1)]
    moves += list(rng.integers(-1, 2, size=(n_pairs, k)).astype(float))
    worst, worst_move = 0.0, None
    for m in moves:
        q, problem = probs(u + d * m)
        if problem is not None:
            return problem_feedback(name, problem) if problem[0] != "normalise" \
                else failure(name, problem[1] + ".", "normalise")
        with np.errstate(divide="ignore", invalid="ignore"):
            both = (p > 0) & (q > 0)
            one = (p > 0) != (q > 0)
            loss = math.inf if one.any() else float(np.max(np.abs(np.log(p[both]) - np.log(q[both]))))
        if loss > worst:
            worst, worst_move = loss, m
    details = {"privacy_loss": worst, "expected": expected, "found": p}
    if worst > epsilon * (1 + 1e-9) + 1e-12:
        without_half = exponential_probabilities(u, d, 2 * epsilon)
        hint = (" It looks like exp(εu/Δ): the 1/2 is missing. The 1/2 pays for the "
                "normaliser moving too: when one score rises and the others fall, both the "
                "numerator and the denominator move by e^(ε/2)."
                if np.allclose(p, without_half, atol=1e-9) else
                " Hint: P(r) ∝ exp(ε u(r) / (2Δ)).")
        return failure(name, f"not ε-DP: when each score moves by at most Δ = {g(d)}, a "
                             f"probability changes by a factor e^{g(worst, 4)}, more than e^ε = "
                             f"e^{g(epsilon)} (move {worst_move.astype(int).tolist()[:8]}"
                             f"{'…' if k > 8 else ''} × Δ).{hint}", "privacy", **details)
    if not np.allclose(p, expected, rtol=1e-7, atol=1e-9):
        i = int(np.argmax(np.abs(p - expected)))
        return failure(name, f"private (worst-case loss {g(worst, 4)} ≤ ε = {g(epsilon)}) "
                             f"but not the exponential mechanism: candidate {i} should have "
                             f"probability {g(expected[i], 6)}, found {g(p[i], 6)}. Hint: P(r) ∝ "
                             "exp(ε u(r) / (2Δ)); too little ε used means needless noise.",
                       "accuracy", **details)
    return Feedback(True, f"{name}: correct. The probabilities match exp(εu/(2Δ)) normalised, and "
                          f"the worst privacy loss over {len(moves)} neighbouring score vectors is "
                          f"{g(worst, 4)} ≤ ε = {g(epsilon)}.", details={"reason": "passed",
                                                                          **details})


# ------------------------------------------------------------------ sensitivity
def check_sensitivity(found, query, universe, size, *, neighbours="add_remove", norm=1,
                      name="sensitivity", **kwargs):
    """Compare a claimed global sensitivity with brute force over a small universe
    (:func:`dpteach.sensitivity.global_sensitivity`); on a mismatch, show a pair of
    neighbouring datasets that attains the true value. Notebook A3."""
    from ..sensitivity import global_sensitivity

    if unsolved(found):
        return not_solved(name)
    res = global_sensitivity(query, universe, size, neighbours=neighbours, norm=norm,
                             details=True, **kwargs)
    try:
        value = _as_float(found)
    except (TypeError, ValueError):
        return failure(name, f"expected a number, found {found!r}.", "type")
    details = {"expected": res.value, "x": res.x, "y": res.y}
    if math.isclose(value, res.value, rel_tol=1e-6, abs_tol=1e-9):
        how_many = "up to" if neighbours == "add_remove" else "exactly"
        return Feedback(True, f"{name}: correct ({g(value)}); brute force over every dataset "
                              f"of {how_many} {size} records agrees.",
                        details={"reason": "passed", **details})
    side = "too small: noise calibrated to it would not hide one person" if value < res.value \
        else "too large: correct, but noise calibrated to it is needlessly big"
    return failure(name, f"expected {g(res.value)}, found {g(value)} ({side}). The neighbours "
                         f"{_short(res.x)} and {_short(res.y)} ({neighbours.replace('_', '/')}) "
                         f"change the answer by {g(res.value)}.", "wrong", **details)


def _short(records):
    if records is None:
        return "()"
    vals = [r.tolist() if hasattr(r, "tolist") else r for r in records]
    text = "(" + ", ".join(str(v) for v in vals[:8]) + (", …" if len(vals) > 8 else "") + ")"
    return text


# ------------------------------------------------------------------ anonymity
# check_k_anonymous, check_l_diversity, check_t_closeness and check_disclosure are in
# dpteach/coursework/_anonymity_checks.py (imported at the top of this module)


# ------------------------------------------------------------------ attacks
def check_reconstruction(bits, truth, min_fraction, *, name="reconstruction"):
    """Did an attack recover at least ``min_fraction`` of the secret bits? Notebook A2."""
    from .._support.validate import valid_bits, valid_probability

    min_fraction = valid_probability(min_fraction, "min_fraction")
    if unsolved(bits):
        return not_solved(name)
    truth = valid_bits(truth, "truth")
    try:
        guess = valid_bits(bits, "bits")
    except (TypeError, ValueError) as exc:
        return failure(name, f"expected a 0/1 array, found something else ({exc}).", "type")
    if guess.shape != truth.shape:
        return failure(name, f"expected {truth.size} bits, found shape {guess.shape}.", "shape")
    frac = float(np.mean(guess == truth))
    wrong = int(np.sum(guess != truth))
    if frac >= min_fraction:
        return Feedback(True, f"{name}: {frac:.1%} of the {truth.size} bits recovered "
                              f"({wrong} wrong; at least {min_fraction:.0%} needed).",
                        details={"reason": "passed", "fraction": frac})
    return failure(name, f"{frac:.1%} of the bits recovered ({wrong} wrong), at least "
                         f"{min_fraction:.0%} needed. Guessing gets about 50%. Hint: more queries, "
                         "or a decoder that rounds the least-squares/LP solution at 1/2.",
                   "too_few", fraction=frac)


def check_budget_respected(curator, *, max_epsilon, name="budget"):
    """Is ``curator`` a :class:`~dpteach.curator.Curator` whose total budget is at most
    ``max_epsilon``, which has not overspent, and which refuses a query beyond what
    remains? (The defence in notebook A4.)"""
    from .._support.validate import valid_epsilon
    from ..curator import Curator

    max_epsilon = valid_epsilon(max_epsilon, "max_epsilon")
    if unsolved(curator):
        return not_solved(name)
    if not isinstance(curator, Curator):
        return failure(name, f"expected a dp.Curator, found {type(curator).__name__}. Hint: "
                             "dp.Curator(table, epsilon=...) enforces a budget for you.", "type")
    acc = curator.accountant
    total, spent, remaining = acc.budget[0], acc.spent[0], acc.remaining[0]
    if total > max_epsilon * (1 + 1e-12):
        return failure(name, f"the curator's total budget is ε = {g(total)}, more than the "
                             f"{g(max_epsilon)} allowed. Repeating a query k times at ε each "
                             f"costs kε; a large budget lets averaging cancel the noise.",
                       "over_budget", budget=total)
    if spent > total * (1 + 1e-12):
        return failure(name, f"spent ε = {g(spent)} of a budget of {g(total)}.", "overspent")
    if acc.can_spend(remaining + max(total, 1.0) * 1e-9):
        return failure(name, "the curator would answer beyond its budget.", "not_enforced")
    return Feedback(True, f"{name}: respected: total ε = {g(total)} ≤ {g(max_epsilon)}, "
                          f"{g(spent)} spent in {len(acc.history)} answers, and anything beyond "
                          f"the remaining {g(remaining)} is refused.",
                    details={"reason": "passed", "budget": total, "spent": spent})


def check_zoo_verdicts(found, *, names=None, name="zoo verdicts"):
    """``found``: dict zoo entry name -> True (its privacy claim holds) / False (broken).
    Compared with :data:`dpteach.audit.ZOO`'s ground truth for ``names`` (default: the
    keys of ``found``, which must then cover at least one entry). Notebook A6."""
    from ..audit import ZOO

    if unsolved(found):
        return not_solved(name)
    if not isinstance(found, dict):
        return failure(name, f"expected a dict name -> True/False, found {type(found).__name__}.",
                       "type")
    names = list(found) if names is None else list(names)
    unknown = [k for k in names if k not in ZOO]
    if unknown or not names:
        return failure(name, f"unknown zoo entry {unknown[0]!r}; the zoo has {sorted(ZOO)}."
                       if unknown else "no verdicts given.", "type")
    missing = [k for k in names if unsolved(found.get(k))]
    if missing:
        return Feedback(False, f"{name}: {NOT_SOLVED} for {', '.join(missing)}.", solved=False,
                        details={"reason": "unsolved"})
    wrong = [k for k in names if bool(found[k]) != ZOO[k].private]
    if not wrong:
        return Feedback(True, f"{name}: all {len(names)} verdicts correct.",
                        details={"reason": "passed"})
    lines = "; ".join(f"{k} is {'private' if ZOO[k].private else 'NOT private'}" for k in wrong)
    return failure(name, f"{len(wrong)} of {len(names)} verdicts wrong: {lines}. Hint: a lower "
                         "bound above the claim refutes it; a bound below the claim proves "
                         "nothing, so read the mechanism's code too.", "wrong", wrong=wrong)


#: the most trials check_fraction_at_most accepts: 2**53, beyond which float64 no
#: longer counts every trial exactly
_MAX_TRIALS = 2 ** 53


def check_fraction_at_most(found, bound, n, *, name="fraction", alpha=ALPHA):
    """Is an observed fraction of ``n`` independent trials consistent with a true
    probability at most ``bound``? One-sided exact binomial test at ``alpha``
    (scipy.stats.binomtest): fails when count = round(found n) is too many to have come
    from probability ``bound``. Used to verify a tail bound empirically (notebook A5)."""
    from scipy import stats

    from .._support.validate import valid_positive_int, valid_probability

    bound = valid_probability(bound, "bound")
    n = valid_positive_int(n, "n", maximum=_MAX_TRIALS)
    alpha = valid_probability(alpha, "alpha", low_open=True, high_open=True)
    if unsolved(found):
        return not_solved(name)
    try:
        frac = _as_float(found)
    except (TypeError, ValueError):
        return failure(name, f"expected a fraction, found {found!r}.", "type")
    if not 0.0 <= frac <= 1.0:
        return failure(name, f"expected a fraction in [0, 1], found {g(frac)}.", "type")
    count = int(round(frac * n))
    p = stats.binomtest(count, n, bound, alternative="greater").pvalue
    if p >= alpha:
        return Feedback(True, f"{name}: {frac:.4g} of {n:,} trials, consistent with the bound "
                              f"{bound:.4g} (p = {p:.3g}).", details={"reason": "passed", "p": p})
    return failure(name, f"{frac:.4g} of {n:,} trials is far above the bound {bound:.4g} "
                         f"(p = {p:.2g} < {alpha:g}): either the bound or the experiment is "
                         "wrong. Hint: check the natural log and the 2Δ/ε factor.", "above", p=p)


def check_audit(result, *, expect_refuted, name="audit"):
    """Grade an :class:`~dpteach.audit.AuditResult` that a student produced with
    ``dp.audit.audit(..., claimed_epsilon=...)``: it must refute the claim when the
    mechanism is broken (``expect_refuted=True``: the student chose neighbours and a
    number of runs that expose the bug) and must not when it is correct (a refuted
    correct mechanism means a wrong mechanism, or an alpha so large that false alarms
    are likely). Notebook A6."""
    from ..audit import AuditResult

    if not isinstance(expect_refuted, (bool, np.bool_)):
        raise TypeError(f"expect_refuted must be True or False, got {expect_refuted!r}")
    if unsolved(result):
        return not_solved(name)
    if not isinstance(result, AuditResult):
        return failure(name, f"expected the result of dp.audit.audit(...), found "
                             f"{type(result).__name__}.", "type")
    if result.claimed_epsilon is None:
        return failure(name, "pass claimed_epsilon=... to dp.audit.audit so that the result can "
                             "refute (or fail to refute) the claim.", "no_claim")
    lb, claim = result.epsilon_lb, result.claimed_epsilon
    details = {"epsilon_lb": lb, "claimed": claim, "refuted": bool(result.refuted)}
    if bool(result.refuted) == bool(expect_refuted):
        if expect_refuted:
            return Feedback(True, f"{name}: refuted: ε ≥ {g(lb, 3)} with confidence "
                                  f"1 − {g(result.alpha)}, above the claimed {g(claim)} "
                                  f"(event '{result.event}').", details={"reason": "passed",
                                                                        **details})
        return Feedback(True, f"{name}: no violation found (lower bound {g(lb, 3)} ≤ claimed "
                              f"{g(claim)}), as expected for a correct mechanism. That is "
                              "not a proof of privacy.", details={"reason": "passed", **details})
    if expect_refuted:
        return failure(name, f"the lower bound {g(lb, 3)} does not exceed the claimed "
                             f"{g(claim)}, so the bug went unnoticed. Hint: choose neighbours "
                             "where the bug shows most (a record at the edge of the allowed "
                             "range) and use more runs.", "not_refuted", **details)
    return failure(name, f"a correct mechanism was refuted (ε ≥ {g(lb, 3)} > {g(claim)}): "
                         f"check the mechanism, and use a small alpha (found {g(result.alpha)}) "
                         "so that false alarms are rare.", "false_alarm", **details)


def check_neighbours(x, y, *, neighbours="add_remove", name="neighbours"):
    """Are the record lists ``x`` and ``y`` neighbouring datasets? ``add_remove``: one
    is the other with exactly one record more (as multisets: order does not matter);
    ``substitute``: same size, exactly one record changed. Notebook A6."""
    from collections import Counter

    if neighbours not in ("add_remove", "substitute"):
        raise ValueError(f"neighbours must be 'add_remove' or 'substitute', got {neighbours!r}")
    if unsolved(x) or unsolved(y):
        return not_solved(name)
    try:
        cx = Counter(np.asarray(x).ravel().tolist())
        cy = Counter(np.asarray(y).ravel().tolist())
    except TypeError:
        return failure(name, "expected two lists of records.", "type")
    extra_x, extra_y = cx - cy, cy - cx
    nx, ny = sum(extra_x.values()), sum(extra_y.values())
    ok = (nx + ny == 1) if neighbours == "add_remove" else (nx == 1 and ny == 1)
    if ok:
        return Feedback(True, f"{name}: neighbours ({neighbours.replace('_', '/')}): they differ "
                              f"in one record ({dict(extra_x + extra_y)}).",
                        details={"reason": "passed"})
    rule = ("one dataset must be the other plus exactly one record" if neighbours == "add_remove"
            else "same size, exactly one record replaced")
    return failure(name, f"not neighbours: {nx} record(s) only in x, {ny} only in y; {rule}.",
                   "wrong")
