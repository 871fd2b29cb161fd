"""Small shared pieces of the A4-A6 checks: calling student code safely on the
collect side, and reading untrusted data safely on the judge side."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..exercises import NOT_SOLVED, Feedback

#: what collect returns when the student's answer is missing or a stub returning None
UNSOLVED = {"unsolved": True}


def unsolved(obj) -> bool:
    return obj is None or obj is Ellipsis


def error_text(exc) -> str:
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def call(fn, *args, **kwargs):
    """Run a student's function: (value, None), or (None, data) where data says that it
    is unsolved, not a function, or raised (the exception is reported, not re-raised)."""
    if unsolved(fn):
        return None, dict(UNSOLVED)
    if not callable(fn):
        return None, {"error": f"expected a function, found {type(fn).__name__}"}
    try:
        out = fn(*args, **kwargs)
    except Exception as exc:                      # the student's bug, reported as data
        return None, {"error": error_text(exc)}
    if unsolved(out):
        return None, dict(UNSOLVED)
    return out, None


def number(x):
    """A finite real number as float, or None (booleans, strings, arrays of size != 1,
    NaN and infinities are not numbers here)."""
    if isinstance(x, (bool, np.bool_, str, bytes)):
        return None
    if isinstance(x, np.ndarray):
        if x.size != 1 or x.dtype.kind not in "iuf":
            return None
        x = x.reshape(()).item()
    if not isinstance(x, (numbers.Real, np.integer, np.floating)):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        return None
    return v if math.isfinite(v) else None


def real_or_inf(x):
    """Like :func:`number` but +inf is allowed (a lower bound on epsilon may be inf)."""
    if isinstance(x, (bool, np.bool_, str, bytes)):
        return None
    if isinstance(x, np.ndarray):
        if x.size != 1 or x.dtype.kind not in "iuf":
            return None
        x = x.reshape(()).item()
    if not isinstance(x, (numbers.Real, np.integer, np.floating)):
        return None
    v = float(x)
    return v if (math.isfinite(v) or v == math.inf) else None


def float_array(x, shape=None):
    """A finite float array (of ``shape`` when given), or None."""
    if isinstance(x, (str, bytes, dict)) or x is None:
        return None
    try:
        arr = np.asarray(x)
        if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
            return None
        arr = arr.astype(float)
    except (TypeError, ValueError, OverflowError):
        return None
    if shape is not None and arr.shape != tuple(shape):
        return None
    if not np.all(np.isfinite(arr)):
        return None
    return arr


def status(data):
    """'unsolved', 'error' or None for data that collect returned."""
    if not isinstance(data, dict):
        return None
    if data.get("unsolved") is True:
        return "unsolved"
    if "error" in data:
        return "error"
    return None


def not_solved(key, what="") -> Feedback:
    extra = f" ({what})" if what else ""
    return Feedback(False, f"{key}: {NOT_SOLVED}{extra}: fill in the function's body.",
                    solved=False, details={"reason": "unsolved"})


def fail(key, text, reason="wrong", **details) -> Feedback:
    return Feedback(False, f"{key}: {text}", details={"reason": reason, **details})


def ok(key, text, **details) -> Feedback:
    return Feedback(True, f"{key}: {text}", details={"reason": "passed", **details})


def early(key, data, hint=""):
    """The Feedback for unsolved / error / malformed data, or None to go on judging."""
    s = status(data)
    if s == "unsolved":
        return not_solved(key)
    if s == "error":
        return fail(key, f"your function raised {str(data.get('error'))[:300]}. {hint}".strip(),
                    "error")
    if not isinstance(data, dict):
        return fail(key, f"the check received {type(data).__name__} instead of its data; "
                         "run the check cell again.", "malformed")
    return None


def g(x, digits=4) -> str:
    """A number for a message."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return repr(x)[:40]
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if math.isnan(x):
        return "NaN"
    return f"{x:.{digits}g}"


_MISSING = object()


class Watch:
    """While active, replaces the package function ``name`` (in ``dpteach`` and in its
    home ``module``) by a wrapper that notes that it was called, then restores both.
    Used where a task forbids calling the library's answer (A4 Task 3, A5 Task 1); a
    student who imported the function under another name before is not noticed."""

    def __init__(self, module, name):
        self.module, self.name, self.called = module, name, False

    def __enter__(self):
        import dpteach
        self._saved = [(mod, mod.__dict__.get(self.name, _MISSING))
                       for mod in (dpteach, self.module)]
        original = getattr(self.module, self.name)

        def watched(*args, **kwargs):
            self.called = True
            return original(*args, **kwargs)
        for mod, _ in self._saved:
            setattr(mod, self.name, watched)
        return self

    def __exit__(self, *exc):
        for mod, value in self._saved:
            if value is _MISSING:
                mod.__dict__.pop(self.name, None)
            else:
                setattr(mod, self.name, value)
        return False
