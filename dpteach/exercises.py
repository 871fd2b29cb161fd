"""Auto-checks for the notebooks' exercises and for coursework.

Every check returns a :class:`Feedback` with ``.passed`` and a friendly ``.message``
that says what was expected, what was found and, when wrong, a hint. An answer left as
``None`` (or ``...``) is reported as "not yet solved" rather than as an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Feedback", "check_number", "check_choice", "check_true", "NOT_SOLVED"]

NOT_SOLVED = "not yet solved"


@dataclass
class Feedback:
    passed: bool
    message: str
    solved: bool = True

    def __bool__(self):
        return self.passed

    def __repr__(self):
        mark = "✅" if self.passed else ("⏳" if not self.solved else "❌")
        return f"{mark} {self.message}"

    def _repr_markdown_(self):
        return repr(self)


def _unsolved(found) -> bool:
    return found is None or found is Ellipsis


def _not_solved(name) -> Feedback:
    return Feedback(False, f"{name}: {NOT_SOLVED} (replace the None/... with your answer).",
                    solved=False)


def check_number(found, expected, *, name="answer", rel=1e-3, abs_tol=1e-9, hint=""):
    """Is ``found`` within ``rel`` (relative) or ``abs_tol`` of ``expected``?"""
    if _unsolved(found):
        return _not_solved(name)
    try:
        value = float(found)
    except (TypeError, ValueError):
        return Feedback(False, f"{name}: expected a number, found {found!r}. {hint}".strip())
    if math.isclose(value, float(expected), rel_tol=rel, abs_tol=abs_tol):
        return Feedback(True, f"{name}: correct ({value:.6g}).")
    return Feedback(False, f"{name}: expected about {float(expected):.6g}, found {value:.6g}. "
                           f"{hint}".strip())


def check_choice(found, expected, *, name="answer", hint=""):
    """Is ``found`` equal to ``expected`` (strings compared without case or spaces)?"""
    if _unsolved(found):
        return _not_solved(name)
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
    if _unsolved(condition):
        return _not_solved(name)
    if bool(condition):
        return Feedback(True, f"{name}: {ok or 'correct.'}")
    return Feedback(False, f"{name}: {fail or 'not yet right.'} {hint}".strip())
