"""Plot style: one colour-blind-safe palette and a lecture mode for projectors.

Nothing here runs on import: the notebook asks for a style by calling
``dp.style.lecture_mode()`` (big fonts, thick lines) or ``dp.style.lecture_mode(False)``.
Panels read the current style when they draw, and live panels are restyled at once.
"""

from __future__ import annotations

import contextlib
import weakref

__all__ = ["PALETTE", "lecture_mode", "current_style"]

#: Okabe & Ito (2008) colour-blind-safe palette, in the order the kit uses it.
PALETTE = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
    "grey": "#999999",
}

_NORMAL = {"font": 10.0, "title": 11.0, "line": 1.8, "lecture": False}
_LECTURE = {"font": 17.0, "title": 19.0, "line": 3.5, "lecture": True}
_state = {"style": dict(_NORMAL)}
_live_panels: "weakref.WeakSet" = weakref.WeakSet()


def current_style() -> dict:
    """The active style: font size (pt), title size (pt), line width (pt), lecture flag."""
    return dict(_state["style"])


def lecture_mode(on: bool = True) -> dict:
    """Switch projector style on (fonts of at least 16 pt, thick lines) or off.

    Every panel already on screen is restyled and redrawn; panels built later start
    in the chosen style. Returns the new style. Changes no global matplotlib setting.
    """
    if not isinstance(on, bool):
        raise TypeError(f"on must be True or False, got {on!r}")
    _state["style"] = dict(_LECTURE if on else _NORMAL)
    for panel in list(_live_panels):
        panel.restyle()
    return current_style()


@contextlib.contextmanager
def drawing_in_normal_style():
    """Draw in the normal style for a while, whatever the chosen one: a panel is built
    in it and then restyled as a live panel would be, so that every text (legends and
    notes with sizes of their own included) and the layout scale alike."""
    chosen = _state["style"]
    _state["style"] = dict(_NORMAL)
    try:
        yield chosen
    finally:
        _state["style"] = chosen


def track(panel) -> None:
    """Restyle this panel when lecture mode changes (until :func:`untrack`)."""
    _live_panels.add(panel)


def untrack(panel) -> None:
    """Stop restyling this panel (it was closed)."""
    _live_panels.discard(panel)
