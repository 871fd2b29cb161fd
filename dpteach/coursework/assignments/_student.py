"""Running student code inside ``collect``, and reading what came back in ``judge``.

Shared by every assignment module (A1-A10):

* :func:`call` runs a student's function and turns an exception into data
  (``{"error": "ZeroDivisionError: ..."}``), a missing answer or a ``None``/``...``
  result into ``{"unsolved": True}``; :func:`call_each` and :func:`collect_values` do so
  once per case (two data layouts, read by :func:`listed` and :func:`first_problem`),
  :func:`call_each_watched` under :class:`forbid`;
* :class:`forbid` stands in for package helpers that a task asks the student not to
  call (the task is to compute the quantity oneself) and records whether they were;
* :func:`not_solved`, :func:`fail`, :func:`ok` build the judge's :class:`Feedback`,
  whose message starts with the task's key; :func:`opening` is where a judge starts
  (unsolved / error / malformed data, a forbidden call, a value of the wrong kind),
  :func:`entries`, :func:`listed`, :func:`first_problem` and :func:`problem_feedback`
  turn the rest of what is malformed into feedback;
* :func:`number`, :func:`real_or_inf`, :func:`float_array` and :func:`field` read
  untrusted data without ever raising; :func:`whole_counts` reads counts a sampler
  made (whole, non-negative, summing to the calls made); :func:`chi2_too_good` and
  :func:`ks_too_good` say when a sample fits its distribution too well to have been
  drawn; :func:`g` and :func:`short` write values into messages.
"""

from __future__ import annotations

import importlib
import math
import numbers

import numpy as np

from .._feedback import NOT_SOLVED, Feedback
from .._feedback import number_text as g  # noqa: F401 - a number for a message
from .._feedback import unsolved as is_unsolved  # None or ... : a missing answer or a stub's result

#: what collect returns when the student's answer is missing or a stub returning None
UNSOLVED = {"unsolved": True}

_MISSING = object()


def missing_answer(answers, names) -> bool:
    """True when any of the task's answers is absent, None or ``...``."""
    return any(is_unsolved(answers.get(n)) for n in names)


def error_text(exc) -> str:
    """``"TypeName: message"``, at most 300 characters."""
    return f"{type(exc).__name__}: {exc}"[:300]


def call(fn, *args, **kwargs):
    """Run a student's function: (value, None), or (None, problem) where problem is
    ``UNSOLVED`` (no answer, or it returned None/``...``), or ``{"error": text}`` (not a
    function, or it raised: the exception is reported, not re-raised)."""
    if is_unsolved(fn):
        return None, dict(UNSOLVED)
    if not callable(fn):
        return None, {"error": f"expected a function, found {type(fn).__name__}"}
    try:
        out = fn(*args, **kwargs)
    except Exception as exc:                     # the student's bug, reported as data
        return None, {"error": error_text(exc)}
    if is_unsolved(out):
        return None, dict(UNSOLVED)
    return out, None


def call_each(fn, argsets, name, read=None):
    """Call ``fn(*args)`` for each tuple of ``argsets``, in order: ``{name: [...]}`` with,
    per call, ``read(value)`` (default :func:`number`) or, where that is None, the
    value's repr (80 characters), for the judge to name; or the first call's problem
    (see :func:`call`), the later calls not made."""
    read = number if read is None else read
    out = []
    for args in argsets:
        value, problem = call(fn, *args)
        if problem is not None:
            return problem
        v = read(value)
        out.append(v if v is not None else repr(value)[:80])
    return {name: out}


def call_each_watched(answers, name, argsets, key, forbidden, read=None):
    """:func:`call_each` of the answer ``name`` while :class:`forbid` watches the kit
    functions ``forbidden``: ``{key: [...], "called_library": True/False}``, or the first
    call's problem (``UNSOLVED`` when the answer is missing), as :func:`opening` reads."""
    fn = answers.get(name)
    if is_unsolved(fn):
        return dict(UNSOLVED)
    with forbid(*forbidden, code=[fn]) as guard:
        data = call_each(fn, argsets, key, read)
    if key in data:
        data["called_library"] = bool(guard.used)
    return data


def collect_values(answers, name, argsets, *, forbidden=(), box=None):
    """Call the answer ``name`` on each tuple of ``argsets`` (all of them, as the judge of
    :func:`first_problem` expects): ``{"results": [...]}`` with, per call, its problem
    (see :func:`call`) or ``{"value": box(result)}`` (default :func:`boxed_number`); with
    ``forbidden`` (targets of :class:`forbid`) also ``"used"``, the helpers it called.
    ``UNSOLVED`` when the answer is missing."""
    if missing_answer(answers, [name]):
        return dict(UNSOLVED)
    box = boxed_number if box is None else box
    fn, out = answers[name], []
    with forbid(*forbidden, code=[fn]) as guard:
        for args in argsets:
            res, problem = call(fn, *args)
            out.append(problem if problem is not None else {"value": box(res)})
    return {"results": out, "used": guard.used} if forbidden else {"results": out}


class forbid:
    """Context manager: while active, ``module.name`` for each ``"module:name"`` target
    is a wrapper that records the call and then does the real work; on exit every
    binding it replaced is restored (or removed, if it was not there before).
    ``.used`` lists the helpers called, as ``"dp.module.name"``.

    Catches the calls a student makes through the module (``an.l_diversity(...)``,
    ``dp.attacks.reconstruct_lp(...)``, ``dp.advanced_composition(...)`` with the target
    ``"dpteach:advanced_composition"``), calls the library makes to it internally, and,
    with ``code`` (the student's functions), names their global namespaces bind to the
    helper (``from dpteach.anonymity import l_diversity``) and an answer that is the
    helper itself (``exp_probabilities = dp.exponential_probabilities``)."""

    def __init__(self, *targets, code=()):
        self.targets = targets
        self.code = list(code)
        self.namespaces = [f.__globals__ for f in self.code
                           if isinstance(getattr(f, "__globals__", None), dict)]
        self.used = []
        self._undo = []                  # (dict, key, old value or _MISSING), in order

    def _set(self, mapping, key, value):
        self._undo.append((mapping, key, mapping.get(key, _MISSING)))
        mapping[key] = value

    def __enter__(self):
        wrappers = {}                    # id(real helper) -> its wrapper
        for target in self.targets:
            mod_name, name = target.split(":")
            try:
                module = importlib.import_module(mod_name)
                real = getattr(module, name)
            except (ImportError, AttributeError):
                continue
            real = getattr(real, "_forbidden_real", real)    # already wrapped above
            label = f"{real.__module__.replace('dpteach', 'dp')}.{name}"
            if id(real) not in wrappers:
                def wrapper(*a, _real=real, _label=label, **k):
                    if _label not in self.used:
                        self.used.append(_label)
                    return _real(*a, **k)
                wrapper._forbidden_real = real
                wrappers[id(real)] = wrapper
                if any(f is real for f in self.code) and label not in self.used:
                    self.used.append(label)                  # the answer IS the helper
            wrapper = wrappers[id(real)]
            self._set(vars(module), name, wrapper)
            for ns in self.namespaces:
                for key, value in list(ns.items()):
                    if value is real:
                        self._set(ns, key, wrapper)
        return self

    def __exit__(self, *exc):
        for mapping, key, old in reversed(self._undo):
            if old is _MISSING:
                mapping.pop(key, None)
            else:
                mapping[key] = old
        self._undo = []
        return False


# ------------------------------------------------------------------ feedback
def not_solved(key, what="fill in the function's body") -> Feedback:
    """``"Task k: not yet solved (what)."``; ``solved`` is False (⏳, not ❌)."""
    return Feedback(False, f"{key}: {NOT_SOLVED} ({what}).", solved=False,
                    details={"reason": "unsolved"})


def fail(key, text, reason="wrong", **details) -> Feedback:
    return Feedback(False, f"{key}: {text}", details={"reason": reason, **details})


def ok(key, text, **details) -> Feedback:
    return Feedback(True, f"{key}: {text}", details={"reason": "passed", **details})


def opening(key, data, hint="", *, library=None, returns=None):
    """Where a judge of data collected as one dict starts: the Feedback that ends the
    judging before any value is read, or None to go on. In order: not a dict (the
    "malformed" failure), unsolved, raised (the "error" failure, ``hint`` after the
    error); with ``library``, that text as the "library" failure when collect saw a
    forbidden kit function called (``data["called_library"]``); with ``returns`` (what
    the function must return), ``"<returns>, found <what came>."`` as the "type" failure
    when collect found a value of another kind (``data["type"]``)."""
    if not isinstance(data, dict):
        return fail(key, f"the check received {type(data).__name__} instead of its data; "
                         "run the check cell again.", "malformed")
    if data.get("unsolved") is True:
        return not_solved(key)
    if "error" in data:
        return fail(key, f"your function raised {str(data.get('error'))[:300]}. {hint}".strip(),
                    "error")
    if library is not None and data.get("called_library") is True:
        return fail(key, library, "library")
    if returns is not None and "type" in data:
        return fail(key, f"{returns}, found {str(data['type'])[:100]}.", "type")
    return None


def entries(key, data, name, count, *also):
    """(``data[name]``, None) when it is a list of ``count`` entries (and every count of
    ``also``, the request's and the truth's, is ``count`` too), else (None, the
    "malformed" Feedback)."""
    found = field(data, name)
    if not isinstance(found, list) or len(found) != count or any(n != count for n in also):
        return None, fail(key, "the check's data is malformed.", "malformed")
    return found, None


def listed(key, data, name, expected_len, hint=""):
    """For data collect returned as ``{name: [one entry per call]}`` (see
    :func:`call_each`): (the list, None), or (None, the Feedback for unsolved / error /
    malformed data)."""
    bad = opening(key, data, hint)
    if bad is not None:
        return None, bad
    return entries(key, data, name, expected_len)


def results(data, expected_len):
    """The list ``data["results"]`` if it is a list of that length, else None."""
    res = field(data, "results")
    if not isinstance(res, list) or len(res) != expected_len:
        return None
    return res


def first_problem(data, expected_len):
    """For data collect returned as ``{"results": [one dict per call]}``: (kind, item)
    for the first unsolved / error / malformed entry, or (None, None). kind:
    "unsolved", "error" or "malformed"."""
    if not isinstance(data, dict):
        return "malformed", None
    if data.get("unsolved"):
        return "unsolved", None
    if "error" in data:
        return "error", data
    res = results(data, expected_len)
    if res is None:
        return "malformed", None
    for item in res:
        if not isinstance(item, dict):
            return "malformed", None
        if item.get("unsolved"):
            return "unsolved", item
    for item in res:
        if "error" in item:
            return "error", item
    return None, None


def problem_feedback(key, kind, item, signature) -> Feedback:
    """The Feedback for :func:`first_problem`'s finding."""
    if kind == "unsolved":
        return not_solved(key)
    if kind == "error":
        return fail(key, f"calling {signature} raised {str(field(item, 'error', ''))[:300]}. "
                         "Fix the bug and run the check again.", "error")
    return fail(key, "the check received malformed data (not what collect sends).", "malformed")


# ------------------------------------------------------------------ reading untrusted data
def _real(x):
    """``x`` as a float if it is one real number (a Python or NumPy real, not a bool; or
    an array or list holding exactly one), else None. NaN and ±inf pass through."""
    if x is None or isinstance(x, (bool, np.bool_, str, bytes)):
        return None
    if isinstance(x, numbers.Real):
        try:
            return float(x)
        except (TypeError, ValueError, OverflowError):
            return None
    try:
        arr = np.asarray(x)
        if arr.size != 1 or arr.dtype.kind not in "iuf":
            return None
        return float(arr.reshape(()))
    except (TypeError, ValueError, OverflowError):
        return None


def number(x):
    """``x`` as a finite float, or None (booleans, strings, arrays of size != 1, NaN and
    infinities are not numbers here)."""
    v = _real(x)
    return v if v is not None and math.isfinite(v) else None


def real_or_inf(x):
    """Like :func:`number` but +inf is allowed (a lower bound on epsilon may be inf)."""
    v = _real(x)
    return v if v is not None and (math.isfinite(v) or v == math.inf) else None


def boxed_number(x):
    """:func:`number`'s float, or ``{"type", "repr"}`` naming what came instead."""
    v = number(x)
    return v if v is not None else {"type": type(x).__name__, "repr": short(x)}


def float_array(x, shape=None):
    """A finite float array (of ``shape`` when given), or None."""
    if isinstance(x, (str, bytes, dict)) or x is None:
        return None
    try:
        arr = np.asarray(x)
        if arr.dtype.kind not in "iuf":
            return None
        arr = arr.astype(float)
    except (TypeError, ValueError, OverflowError):
        return None
    if shape is not None and arr.shape != tuple(shape):
        return None
    if not np.all(np.isfinite(arr)):
        return None
    return arr


def whole_counts(x, length, total=None):
    """``x`` as counts a sampler could have produced: (an int64 array of ``length`` whole,
    non-negative numbers, summing to ``total`` when given, None), or (None, what is wrong
    with it). Whole floats (3.0) count as whole; booleans, strings, fractions (a dyadic
    0.5 as much as 1/3), NaN, negative numbers and numbers past 2^53 do not."""
    if not isinstance(x, (list, tuple, np.ndarray)) or len(x) != length:
        return None, f"not a list of {length} counts"
    out = np.empty(length, dtype=np.int64)
    for i, v in enumerate(np.asarray(x, dtype=object).ravel() if isinstance(x, np.ndarray)
                          else x):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            return None, f"count {i} is {short(v)}, not a whole number"
        f = float(v)
        if not math.isfinite(f) or f != math.floor(f) or abs(f) > 2.0 ** 53:
            return None, f"count {i} is {short(v)}, not a whole number"
        if f < 0:
            return None, f"count {i} is {short(v)}, below 0"
        out[i] = int(f)
    if total is not None and int(out.sum()) != int(total):
        return None, f"the counts sum to {int(out.sum()):,}, not to the {int(total):,} calls made"
    return out, None


def chi2_too_good(stat, dof, alpha, min_dof=10):
    """The lower-tail p-value P(chi2(dof) <= stat) when it is below ``alpha`` (a sample
    that fits its expected counts better than sampling does), else None. Only with at
    least ``min_dof`` degrees of freedom (and cells of expectation >= 5, the caller's
    part): there the region below the threshold holds many lattice points of the counts,
    so the continuous lower tail describes whole-number counts; with few cells an honest
    sample can land on the expected counts by chance and the test would say nothing
    true."""
    from scipy import stats

    if dof < min_dof or not math.isfinite(stat):
        return None
    p = float(stats.chi2.cdf(stat, dof))
    return p if p < alpha else None


def ks_too_good(statistic, n, alpha):
    """The lower-tail p-value P(D_n <= statistic) of a one-sample Kolmogorov-Smirnov
    statistic against a continuous, fully specified distribution when it is below
    ``alpha`` (releases spread as evenly as quantiles, not drawn), else None. Not valid
    when a parameter was estimated from the same sample (that makes D smaller)."""
    from scipy import stats

    if n < 1 or not math.isfinite(statistic):
        return None
    p = float(stats.kstwo.cdf(statistic, n))
    return p if p < alpha else None


def field(data, key, default=None):
    return data.get(key, default) if isinstance(data, dict) else default


# ------------------------------------------------------------------ writing messages
def short(x, limit=60) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def laplace_fit(z, centre, scale, a):
    """(KS p-value, scale-test p-value) of releases z against centre + Lap(scale)."""
    from scipy import stats
    if scale <= 0:
        return 0.0, 0.0
    w = (np.asarray(z, dtype=float) - centre) / scale
    total = float(np.sum(np.abs(w)))
    two = 2 * min(stats.gamma.cdf(total, w.size), stats.gamma.sf(total, w.size))
    return float(stats.kstest(w, "laplace").pvalue), float(min(1.0, two))
