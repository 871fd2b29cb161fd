"""Running student code inside ``collect``, and reading what came back in ``judge``.

Used by the tasks of A1-A3 (``a1_anonymity``, ``a2_attacks``, ``a3_laplace``):

* :func:`call` runs a student's function and turns an exception into data
  (``{"error": "ZeroDivisionError: ..."}``), a ``None``/``...`` result into
  ``{"unsolved": True}``;
* :class:`forbid` stands in for package helpers that a task asks the student not to
  call (the task is to compute the quantity oneself) and records whether they were;
* :func:`unsolved`, :func:`fail`, :func:`ok` build the judge's :class:`Feedback`, whose
  message starts with the task's key;
* :func:`number` and :func:`field` read untrusted data without ever raising.
"""

from __future__ import annotations

import importlib
import math
import numbers

import numpy as np

from ..exercises import NOT_SOLVED, Feedback

UNSOLVED = {"unsolved": True}


def is_unsolved(x) -> bool:
    return x is None or x is Ellipsis


def missing_answer(answers, names) -> bool:
    """True when any of the task's answers is absent, None or ``...``."""
    return any(is_unsolved(answers.get(n)) for n in names)


def error_text(exc) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def call(fn, *args, **kwargs):
    """(result, problem): problem is None, ``UNSOLVED`` or ``{"error": text}``."""
    if not callable(fn):
        return None, {"error": f"expected a function, found {type(fn).__name__}"}
    try:
        out = fn(*args, **kwargs)
    except Exception as exc:                     # the student's bug, reported as data
        return None, {"error": error_text(exc)}
    if is_unsolved(out):
        return None, dict(UNSOLVED)
    return out, None


class forbid:
    """Context manager: while active, ``module.name`` for each ``"module:name"`` is a
    wrapper that records the call and then does the real work. ``.used`` lists the
    helpers called. Catches the calls a student makes through the module
    (``an.l_diversity(...)``, ``dp.attacks.reconstruct_lp(...)``) and, with ``code``
    (the student's functions), names their global namespaces bind to the helper
    (``from dpteach.anonymity import l_diversity``)."""

    def __init__(self, *targets, code=()):
        self.targets = targets
        self.code = list(code)
        self.namespaces = [f.__globals__ for f in code
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


_MISSING = object()


# ------------------------------------------------------------------ feedback
def unsolved(key, what="") -> Feedback:
    more = f" ({what})" if what else " (your function still returns None: fill in its body)"
    return Feedback(False, f"{key}: {NOT_SOLVED}{more}.", solved=False,
                    details={"reason": "unsolved"})


def fail(key, text, reason="wrong", **details) -> Feedback:
    return Feedback(False, f"{key}: {text}", details={"reason": reason, **details})


def ok(key, text, **details) -> Feedback:
    return Feedback(True, f"{key}: {text}", details={"reason": "passed", **details})


def g(x, digits=4) -> str:
    """A number for a message (4 significant digits)."""
    try:
        if isinstance(x, (bool, np.bool_)):
            return str(bool(x))
        if isinstance(x, numbers.Integral):
            return str(int(x))
        x = float(x)
    except (TypeError, ValueError):
        return repr(x)[:60]
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:.{digits}g}"


def short(x, limit=60) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def number(x):
    """``x`` as a finite float, or None (booleans, strings, arrays of size != 1, NaN)."""
    if isinstance(x, (bool, np.bool_, str, bytes)) or x is None:
        return None
    try:
        arr = np.asarray(x)
        if arr.size != 1 or arr.dtype.kind not in "iuf":
            return None
        v = float(arr.reshape(()))
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def field(data, key, default=None):
    return data.get(key, default) if isinstance(data, dict) else default


def results(data, expected_len):
    """The list ``data["results"]`` if it is a list of that length, else None."""
    res = field(data, "results")
    if not isinstance(res, list) or len(res) != expected_len:
        return None
    return res


def first_problem(data, expected_len):
    """(kind, item) for the first unsolved / error / malformed entry of the results, or
    (None, None). kind: "unsolved", "error" or "malformed"."""
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
        return unsolved(key)
    if kind == "error":
        return fail(key, f"calling {signature} raised {str(field(item, 'error', ''))[:300]}. "
                         "Fix the bug and run the check again.", "error")
    return fail(key, "the check received malformed data (not what collect sends).", "malformed")
