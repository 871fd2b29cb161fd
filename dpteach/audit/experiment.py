"""Running an audit: a mechanism run many times on two neighbouring inputs, an event
chosen on a first share of the runs, and the bound of :mod:`dpteach.audit.bounds` on
the rest.

:func:`audit` runs a mechanism ``mechanism(data, size, rng)`` ``n`` times on each input,
spends :data:`SELECT_FRACTION` of the runs choosing the event E (a threshold on the
output or a set of outputs) whose counts give the largest bound, then counts E on the
other runs, so that the choice does not bias the bound. It returns an
:class:`AuditResult` whose ``.event`` is an :class:`Event`. :func:`per_call_mechanism`
wraps a release that makes one output per call. Notebook 11.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._support.audit_outputs import as_values, decode, run_mechanism
from .._support.validate import (Delta, Epsilon, OrNone, Probability, Real, Rng, Using, checked,
                                 valid_positive_int)
from .bounds import epsilon_interval, epsilon_lower_bound, epsilon_point_estimate

__all__ = ["audit", "Event", "AuditResult", "per_call_mechanism"]

#: share of the n runs on each input used to choose the event (the rest are counted)
SELECT_FRACTION = 0.1


# ------------------------------------------------------------------ events
@dataclass(frozen=True)
class Event:
    """A set of outputs E: ``output >= t``, ``output <= t`` or ``output in {…}``.

    ``kind`` is ``"threshold"`` (with ``threshold`` and ``direction`` ">=" or "<=") or
    ``"set"`` (with ``outcomes``, a tuple of outputs; rows of a 2-D output are tuples).
    """

    kind: str
    threshold: float | None = None
    direction: str | None = None
    outcomes: tuple | None = None

    def contains(self, outputs) -> np.ndarray:
        """Boolean array: which of ``outputs`` (one per run, rows for vectors) lie in E."""
        out = np.asarray(outputs)
        if self.kind == "threshold":
            return out >= self.threshold if self.direction == ">=" else out <= self.threshold
        if out.ndim > 1:
            flat = out.reshape(out.shape[0], -1)
            hit = np.zeros(flat.shape[0], dtype=bool)
            for row in self.outcomes:
                hit |= np.all(flat == np.asarray(row, dtype=flat.dtype), axis=1)
            return hit
        return np.isin(out, np.asarray(self.outcomes, dtype=out.dtype if out.dtype.kind != "O" else object))

    def __str__(self):
        if self.kind == "threshold":
            return f"output {'≥' if self.direction == '>=' else '≤'} {self.threshold:.6g}"
        shown = [_fmt_outcome(o) for o in self.outcomes[:6]]
        more = f", … ({len(self.outcomes)} outputs)" if len(self.outcomes) > 6 else ""
        return "output in {" + ", ".join(shown) + more + "}"


def _fmt_outcome(o):
    if isinstance(o, tuple):
        return "(" + ", ".join(_fmt_outcome(v) for v in o) + ")"
    if isinstance(o, (float, np.floating)):
        return f"{o:.6g}"
    if isinstance(o, (bool, np.bool_)):
        return str(bool(o))
    return str(o)


@dataclass
class AuditResult:
    """What :func:`audit` found.

    ``epsilon_lb`` is the (1 - alpha) lower bound on epsilon from the counting runs;
    ``event`` the chosen set of outputs; ``numerator`` says which input ("x" or "y") makes
    the event more likely (the bound is ln(P[E | numerator] / P[E | other])); ``count_x``
    and ``count_y`` are how often the event happened in the ``n_count`` counting runs on
    x and on y; ``n_select`` runs per input were spent choosing the event.
    """

    epsilon_lb: float
    event: Event
    numerator: str
    count_x: int
    count_y: int
    n_select: int
    n_count: int
    alpha: float
    delta: float = 0.0
    claimed_epsilon: float | None = None
    seconds: float = float("nan")

    @property
    def counts(self) -> dict:
        return {"x": self.count_x, "y": self.count_y}

    def _ordered(self):
        return ((self.count_x, self.count_y) if self.numerator == "x"
                else (self.count_y, self.count_x))

    @property
    def point_estimate(self) -> float:
        """Plug-in ln-ratio of the counts (not a bound)."""
        a, b = self._ordered()
        return epsilon_point_estimate(a, b, self.n_count, delta=self.delta)

    @property
    def epsilon_upper(self) -> float:
        """Upper end of the two-sided band for this event's ln-ratio (see epsilon_interval)."""
        a, b = self._ordered()
        return epsilon_interval(a, b, self.n_count, alpha=self.alpha, delta=self.delta)[1]

    @property
    def refuted(self) -> bool | None:
        """True when the lower bound exceeds the claimed epsilon (None without a claim)."""
        if self.claimed_epsilon is None:
            return None
        return bool(self.epsilon_lb > self.claimed_epsilon)

    def summary(self) -> str:
        other = "y" if self.numerator == "x" else "x"
        a, b = self._ordered()
        lines = [
            f"event E: {self.event}  (chosen on {self.n_select:,} runs per input)",
            f"E happened {a:,} / {self.n_count:,} times on {self.numerator} and "
            f"{b:,} / {self.n_count:,} times on {other}",
            f"epsilon >= {self.epsilon_lb:.4g} with confidence {1 - self.alpha:.6g}"
            f" (point estimate {self.point_estimate:.4g})",
        ]
        if self.claimed_epsilon is not None:
            if self.refuted:
                lines.append(f"verdict: the claim epsilon = {self.claimed_epsilon:.4g} is REFUTED")
            else:
                lines.append(f"verdict: no violation of epsilon = {self.claimed_epsilon:.4g} found "
                             "(an audit cannot prove privacy)")
        return "\n".join(lines)

    def __str__(self):
        return self.summary()


# ------------------------------------------------------------------ running mechanisms
# running the mechanism and encoding its outputs: dpteach/_support/audit_outputs.py
_MAX_CATEGORIES = 1000
_MAX_THRESHOLDS = 600


def _threshold_events(sx, sy, n_sel):
    """Candidate threshold events on the selection runs.

    Returns (thresholds, [(direction, numerator, count_num, count_den), ...]) where the
    counts are how often ``output >= t`` (or ``<= t``) happened on the numerator input
    and on the other one, for every threshold t.
    """
    pooled = np.concatenate([sx, sy])
    uniq = np.unique(pooled)
    if uniq.size > _MAX_THRESHOLDS:
        tail = np.geomspace(1.0 / pooled.size, 0.5, _MAX_THRESHOLDS // 3)
        levels = np.unique(np.concatenate([tail, np.linspace(0, 1, _MAX_THRESHOLDS // 3), 1 - tail]))
        uniq = np.unique(np.quantile(pooled, np.clip(levels, 0, 1), method="inverted_cdf"))
    sx, sy = np.sort(sx), np.sort(sy)
    ge_x = n_sel - np.searchsorted(sx, uniq, "left")
    ge_y = n_sel - np.searchsorted(sy, uniq, "left")
    le_x = np.searchsorted(sx, uniq, "right")
    le_y = np.searchsorted(sy, uniq, "right")
    families = [(d, "x", cx, cy) for d, cx, cy in ((">=", ge_x, ge_y), ("<=", le_x, le_y))]
    families += [(d, "y", cy, cx) for d, cx, cy in ((">=", ge_x, ge_y), ("<=", le_x, le_y))]
    return uniq, families


def _set_events(vx, vy, n_sel):
    """Candidate set-of-outcomes events on the selection runs.

    Outcomes are ranked by their likelihood ratio (Neyman-Pearson: the best set of a given
    size collects the outcomes with the largest ratio) on the first half of the selection
    runs; every prefix of the ranking is a candidate, scored on the second half (ranking
    and scoring on the same runs would favour sets of lucky outcomes). Returns (values,
    [(numerator, order, count_num, count_den, n_score), ...]).
    """
    values, inverse = np.unique(np.concatenate([vx, vy]), return_inverse=True)
    k = values.size
    half = n_sel // 2
    ix, iy = inverse[:n_sel], inverse[n_sel:]
    rank_x = np.bincount(ix[:half], minlength=k)
    rank_y = np.bincount(iy[:half], minlength=k)
    score_x = np.bincount(ix[half:], minlength=k)
    score_y = np.bincount(iy[half:], minlength=k)
    families = []
    for numerator, ra, rb, sa, sb in (("x", rank_x, rank_y, score_x, score_y),
                                      ("y", rank_y, rank_x, score_y, score_x)):
        order = np.argsort(-(ra + 0.5) / (rb + 0.5), kind="stable")
        families.append((numerator, order, np.cumsum(sa[order]), np.cumsum(sb[order]),
                         n_sel - half))
    return values, families


def _best(score_alpha, families, n_sel, delta):
    """(score, family index, position) of the candidate with the largest selection score."""
    best = (-1.0, None, None)
    for f, fam in enumerate(families):
        a, b = fam[2], fam[3]
        n_score = fam[4] if len(fam) > 4 else n_sel
        lbs = epsilon_lower_bound(a, b, n_score, alpha=score_alpha, delta=delta)
        i = int(np.argmax(lbs + 1e-12 * (a - b) / n_score))   # ties: the more frequent event
        if lbs[i] > best[0]:
            best = (float(lbs[i]), f, i)
    return best


def _valid_mechanism(mechanism, name):
    """A callable ``mechanism(data, size, rng)`` (called only by :func:`audit`'s runs)."""
    if not callable(mechanism):
        raise TypeError(f"{name} must be callable as {name}(data, size, rng), got "
                        f"{type(mechanism).__name__}")
    return mechanism


def _valid_runs(n, name):
    """A number of runs per input: a whole number in [20, 10^9]."""
    n = valid_positive_int(n, name, maximum=10 ** 9)
    if n < 20:
        raise ValueError(f"{name} must be >= 20 runs per input, got {n}")
    return n


def _valid_release(release, name):
    """A callable release (one output per call)."""
    if not callable(release):
        raise TypeError(f"{name} must be callable, got {type(release).__name__}")
    return release


@checked(mechanism=Using(_valid_mechanism), n=Using(_valid_runs),
         alpha=Probability(low_open=True, high_open=True), delta=Delta(),
         select_fraction=Real(low=0.0, high=1.0, low_open=True, high_open=True),
         claimed_epsilon=OrNone(Epsilon()), rng=Rng())
def audit(mechanism, x, y, *, n, alpha=0.05, delta=0.0, rng=None, claimed_epsilon=None,
          select_fraction=SELECT_FRACTION):
    """Audit a mechanism on the neighbouring inputs x and y: a lower bound on its epsilon.

    ``mechanism(data, size, rng)`` must return ``size`` independent outputs (an array
    whose first axis has length ``size``): numbers, categories (ints, strings, booleans)
    or rows of a 2-D array (each row one output, e.g. a vector of sparse-vector answers).
    The mechanism runs ``n`` times on x and ``n`` times on y, then:

    1. **Choose** (first ``n_select = round(select_fraction * n)`` runs of each input,
       10% by default): try every event of the form ``output >= t`` and ``output <= t``
       (numbers; t over the observed values, or up to 600 quantiles) and, when there are
       at most 1000 distinct outputs, sets of outcomes ranked by likelihood ratio (ranked on
       one half of these runs, scored on the other); try both
       orders (x over y and y over x); keep the event with the largest lower bound.
    2. **Count** (the remaining ``n_count = n - n_select`` runs, which the choice never
       saw): count the chosen event on x and on y and report
       :func:`epsilon_lower_bound` of those counts.

    Because the event is fixed before the counting runs are looked at, the final bound is
    a valid (1 - alpha) lower bound whatever the choice step did. A result above the
    claimed epsilon refutes the claim; a result below it proves nothing.

    Choose x and y as a worst case: neighbours on which the suspected bug shows most.

    A function that returns ONE release per call, such as a student's
    ``release(value, sensitivity, epsilon, rng)``, is audited through
    :func:`per_call_mechanism`: ``audit(per_call_mechanism(release, 1.0, 0.5), 10, 11,
    n=20_000)``. That loops in Python; a function that takes numpy arrays can instead be
    wrapped as ``lambda data, size, rng: release(np.full(size, data), ...)``.

    Parameters
    ----------
    mechanism : callable(data, size, rng) -> array of ``size`` outputs
    x, y : the two neighbouring inputs, passed to the mechanism unchanged
    n : runs per input (>= 20)
    alpha : the bound holds with probability >= 1 - alpha, in (0, 1)
    delta : audit (epsilon, delta)-DP instead, delta in [0, 1)
    claimed_epsilon : optional; the result then says whether the claim is refuted
    select_fraction : share of the runs used to choose the event, in (0, 1)

    Returns
    -------
    AuditResult with ``.epsilon_lb``, ``.event``, ``.count_x``, ``.count_y``, ``.summary()``.
    """
    n_sel = min(max(int(round(select_fraction * n)), 10), n - 10)
    t0 = time.perf_counter()
    out_x = run_mechanism(mechanism, x, n, rng, "x")
    out_y = run_mechanism(mechanism, y, n, rng, "y")
    if out_x.shape[1:] != out_y.shape[1:]:
        raise ValueError(f"outputs on x and y differ in shape: {out_x.shape[1:]} vs {out_y.shape[1:]}")
    if out_x.ndim > 1:       # encode x and y together, so equal rows get equal codes
        both, how = as_values(np.concatenate([out_x, out_y]))
        vx, vy = both[:n], both[n:]
    else:
        (vx, how), (vy, _) = as_values(out_x), as_values(out_y)
    numeric = how is None and vx.dtype.kind in "iuf"
    # Step 1: choose the event on the selection runs.
    event, numerator, count = _choose_event(vx[:n_sel], vy[:n_sel], n_sel, how, numeric,
                                            alpha, delta)
    # Step 2: count the chosen event on the counting runs, which step 1 never saw.
    count_x, count_y = count(vx[n_sel:]), count(vy[n_sel:])
    n_count = n - n_sel
    a, b = (count_x, count_y) if numerator == "x" else (count_y, count_x)
    lb = epsilon_lower_bound(a, b, n_count, alpha=alpha, delta=delta)
    return AuditResult(epsilon_lb=float(lb), event=event, numerator=numerator,
                       count_x=count_x, count_y=count_y, n_select=n_sel, n_count=n_count,
                       alpha=alpha, delta=delta, claimed_epsilon=claimed_epsilon,
                       seconds=time.perf_counter() - t0)


def _choose_event(sel_x, sel_y, n_sel, how, numeric, alpha, delta):
    """Step 1 of :func:`audit`: the event chosen on the selection runs, which output
    ("x" or "y") is its numerator, and a function counting it in an array of outputs."""
    # Each candidate is scored by a Bonferroni-corrected lower bound (alpha / number of
    # candidates): a score that is valid for all candidates at once does not reward
    # events whose ratio looks large only because they were seen a handful of times
    # (the winner's curse).
    thr_fams, set_fams = [], []
    if numeric:
        thresholds, thr_fams = _threshold_events(sel_x, sel_y, n_sel)
    distinct = np.unique(np.concatenate([sel_x, sel_y]))
    # sets of outcomes: for categories, and for numbers that repeat (integers, coarse
    # values); continuous outputs are all distinct, so their sets would be noise
    if not numeric or distinct.size <= min(_MAX_CATEGORIES, n_sel // 2):
        values, set_fams = _set_events(sel_x, sel_y, n_sel)
    n_candidates = sum(len(f[2]) for f in thr_fams) + sum(len(f[2]) for f in set_fams)
    score_alpha = alpha / max(n_candidates, 1)
    best_thr = _best(score_alpha, thr_fams, n_sel, delta) if thr_fams else (-1.0, None, None)
    best_set = _best(score_alpha, set_fams, n_sel, delta) if set_fams else (-1.0, None, None)
    if max(best_thr[0], best_set[0]) <= 0:
        # no event is convincing on so few runs: rank by a lenient score instead
        # (alpha = 0.5, close to the point estimate but still wary of tiny counts)
        best_thr = _best(0.5, thr_fams, n_sel, delta) if thr_fams else (-1.0, None, None)
        best_set = _best(0.5, set_fams, n_sel, delta) if set_fams else (-1.0, None, None)
    if best_thr[0] >= best_set[0]:
        direction, numerator = thr_fams[best_thr[1]][:2]
        event = Event("threshold", threshold=float(thresholds[best_thr[2]]), direction=direction)

        def count(values_):
            return int(np.count_nonzero(event.contains(values_)))
    else:
        numerator, order = set_fams[best_set[1]][:2]
        chosen = values[order[: best_set[2] + 1]]
        event = Event("set", outcomes=tuple(decode(v, how) for v in chosen))

        def count(values_):
            return int(np.count_nonzero(np.isin(values_, chosen)))
    return event, numerator, count


@checked(release=Using(_valid_release))
def per_call_mechanism(release: Callable, *args, **kwargs):
    """Turn a one-release-per-call function into ``mechanism(data, size, rng)`` for audit.

    ``release(data, *args, **kwargs, rng=rng)`` is called ``size`` times (``rng`` is passed
    by keyword if ``release`` has a parameter named ``rng``, otherwise as the last
    positional argument), and the releases are stacked into an array. Example, for a
    coursework function ``student_fn(value, sensitivity, epsilon, rng)``::

        mech = per_call_mechanism(student_fn, 1.0, 0.5)      # sensitivity 1, epsilon 0.5
        audit(mech, 10, 11, n=20_000, claimed_epsilon=0.5)

    A Python loop costs about a microsecond plus the function's own time per release, so
    keep n near 10^4-10^5; a vectorised mechanism audits 10^6 runs in well under a second.
    """
    try:
        params = inspect.signature(release).parameters
        by_keyword = "rng" in params and params["rng"].kind != inspect.Parameter.POSITIONAL_ONLY
    except (TypeError, ValueError):
        by_keyword = True

    def mechanism(data, size, rng):
        if by_keyword:
            outs = [release(data, *args, rng=rng, **kwargs) for _ in range(size)]
        else:
            outs = [release(data, *args, rng, **kwargs) for _ in range(size)]
        return np.asarray(outs)

    mechanism.__name__ = f"per_call({getattr(release, '__name__', 'release')})"
    return mechanism
