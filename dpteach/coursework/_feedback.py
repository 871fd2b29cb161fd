"""The verdict a check returns (:class:`Feedback`) and the helpers that word it, shared by
every check of the coursework (:mod:`dpteach.coursework.exercises`, its private helper
modules and :mod:`dpteach.coursework.assignments`): :func:`unsolved`, :func:`not_solved`,
:func:`failure` and :func:`number_text`.

Private: students and graders use ``dp.exercises.Feedback``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

NOT_SOLVED = "not yet solved"
#: significance level of every statistical check (false alarms: one in a million)
ALPHA = 1e-6
#: the fixed seed the statistical checks use unless told otherwise (reproducible feedback)
DEFAULT_SEED = 20240611


@dataclass
class Feedback:
    """The verdict of a check: ``passed``, a ``message`` for the student, ``solved``
    (False while the answer is still None), and ``details`` (numbers behind the verdict,
    for tests and graders). Prints as ✅ (passed), ❌ (wrong) or ⏳ (not yet solved)."""

    passed: bool
    message: str
    solved: bool = True
    details: dict = field(default_factory=dict, repr=False, compare=False)

    def __bool__(self):
        return self.passed

    def __repr__(self):
        mark = "✅" if self.passed else ("⏳" if not self.solved else "❌")
        return f"{mark} {self.message}"

    def _repr_markdown_(self):
        return repr(self)


def unsolved(found) -> bool:
    """An answer still left as None or ``...`` (or a stub's result)."""
    return found is None or found is Ellipsis


def not_solved(name) -> Feedback:
    """The verdict on an answer not yet given."""
    return Feedback(False, f"{name}: {NOT_SOLVED} (replace the None/... with your answer).",
                    solved=False, details={"reason": "unsolved"})


def failure(name, text, reason, **details) -> Feedback:
    """A failed verdict: ``text`` for the student, ``reason`` and ``details`` for graders."""
    return Feedback(False, f"{name}: {text}", details={"reason": reason, **details})


def number_text(x, digits=4) -> str:
    """A number for a message: integers in full, others to ``digits`` significant
    digits, ∞, -∞, nan; anything else as a short repr."""
    try:
        if isinstance(x, (bool, np.bool_)):
            return str(bool(x))
        if isinstance(x, numbers.Integral):
            return str(int(x))
        x = float(x)
    except (TypeError, ValueError, OverflowError):
        return repr(x)[:60]
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:.{digits}g}"
