"""The controls a panel offers: slider, dropdown and checkbox factories.

Every factory gives its control the same look (the label at full width, a track of at
least 130 px beside it) and refuses an initial value the control cannot hold (out of
range, NaN, a string or a bool for a number) with :class:`BadInitialValue`, before any
widget exists; the ``@register`` wrapper restates that complaint with the builder's
parameter (:func:`name_parameter`). Log sliders land on values a student would type
(:func:`snap`), and :func:`readout` writes a value the way a log slider shows it.
"""

from __future__ import annotations

import inspect
import math
import numbers

import ipywidgets as widgets
import numpy as np
import traitlets

__all__ = ["float_slider", "log_slider", "int_slider", "dropdown", "checkbox", "snap",
           "readout", "BadInitialValue", "name_parameter"]


class BadInitialValue(Exception):
    """A control factory was given an initial value its control cannot hold."""

    def __init__(self, value, description, allowed, kind=ValueError):
        super().__init__(f"{description!r} control must be {allowed}, got {value!r}")
        self.value, self.description, self.allowed, self.kind = value, description, allowed, kind


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return type(a) is type(b) and bool(a == b)
    except Exception:   # noqa: BLE001 - arrays and odd objects are simply not the same
        return False


def name_parameter(fn, args, kwargs, exc):
    """The factory's complaint, restated in terms of the builder's parameter."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        names = [p for p, v in bound.arguments.items() if _same(v, exc.value)]
    except TypeError:
        names = []
    who = names[0] if names else f"the {exc.description!r} control"
    return exc.kind(f"{who} must be {exc.allowed}, got {exc.value!r}")


def _number(value, description, lo, hi, *, integer=False):
    """Check a slider's initial value: a real number (not bool, not NaN) in [lo, hi]."""
    kind = "a whole number" if integer else "a number"
    allowed = f"{kind} in [{lo:g}, {hi:g}]"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise BadInitialValue(value, description, allowed, TypeError)
    x = float(value)
    tol = 1e-9 * max(abs(lo), abs(hi), 1.0)
    if not (lo - tol <= x <= hi + tol) or (integer and x != round(x)):
        raise BadInitialValue(value, description, allowed)
    return value


# -- the factories: one look, widths that fit the label ---------------------------------
_STYLE = {"description_width": "initial"}


def _layout(description) -> widgets.Layout:
    """330 px, or wider for a long description: the label takes its full width
    (``description_width: initial``) and the slider track or select box keeps at least
    130 px beside it (about 8.5 px per character of a 13 px label, and room for the
    readout)."""
    return widgets.Layout(width=f"{max(330, round(8.5 * len(description)) + 230)}px")


def float_slider(description, value, lo, hi, step, *, readout_format=".2f"):
    _number(value, description, lo, hi)
    return widgets.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                               readout_format=readout_format, continuous_update=True,
                               style=_STYLE, layout=_layout(description))


class _SnappedLogSlider(widgets.FloatLogSlider):
    """A log slider whose moves land on values a student would type.

    The handle moves in equal steps of the exponent, so ``10 ** (-0.3)`` = 0.501 or
    ``10 ** 1.999`` = 99.77 would be read out. A value set from the browser is rounded to
    two significant figures (0.5, 100, 1.8e-6), or to a whole number for a slider of
    counts, with more figures (or one count more) where that would put the handle back
    where it was, so the arrow keys always move it; a value set from Python (a builder's
    default such as ln 3, a test) is kept as it is.
    """

    _from_browser = False

    def __init__(self, *, whole=False, **kwargs):
        self._whole = whole
        super().__init__(**kwargs)

    def set_state(self, sync_data):
        self._from_browser = True
        self._before = self.value   # the validator runs once the new value is set
        try:
            super().set_state(sync_data)
        finally:
            self._from_browser = False

    @traitlets.validate("value")
    def _validate_value(self, proposal):
        lo, hi = self.base ** self.min, self.base ** self.max
        value = min(max(proposal["value"], lo), hi)
        if self._from_browser:
            value = min(max(_snap_move(self._before, value, whole=self._whole), lo), hi)
        return value


def _snap_move(old: float, new: float, *, whole: bool) -> float:
    """``new`` snapped as :func:`snap` does, with as many more figures as it takes not to
    fall back on ``old``: a step of 10**0.02 from 100 gives 105, not 100 again (the
    handle would never leave 100 under the arrow keys). A count moves by one at least."""
    if new == old or not math.isfinite(old):
        return snap(new, whole=whole)
    for figures in range(2, 17):
        value = snap(new, whole=whole, figures=figures)
        if (value - old) * (new - old) > 0:
            return value
    return old + math.copysign(1.0, new - old) if whole else new


def snap(value: float, *, whole: bool = False, figures: int = 2) -> float:
    """``value`` rounded to two (or ``figures``) significant figures (to a whole number
    if ``whole``)."""
    if not math.isfinite(value) or value == 0:
        return value
    digits = figures - 1 - math.floor(math.log10(abs(value)))
    value = round(value, digits)
    return float(max(1, round(value))) if whole else float(value)


def readout(value: float, *, tiny: bool | None = None) -> str:
    """A value written as a log slider's readout writes it (for status lines that
    should agree with the slider): 0.50, 100, 25000 or, for a slider of tiny values,
    1.0e-6 and 2.5e-7."""
    if tiny is None:
        tiny = value != 0 and abs(value) < 1e-3
    if tiny:
        mantissa, exponent = f"{value:.1e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    return f"{value:.{max(0, 1 - math.floor(math.log10(abs(value))))}f}"


def log_slider(description, value, lo_exp, hi_exp, step=0.05, *, readout_format=None):
    """A slider over [10**lo_exp, 10**hi_exp] moving in equal ratios (``step`` in the
    exponent). Moves from the browser are rounded to two significant figures (whole
    numbers when ``readout_format=".0f"``); the readout shows a slider of tiny values
    as 1.0e-6, others in plain decimals (0.56, 100, 25000), never 0.00000100 or 2.50e+4
    (:func:`readout` writes a value the same way for a status line)."""
    _number(value, description, 10.0 ** lo_exp, 10.0 ** hi_exp)
    whole = readout_format == ".0f"
    if readout_format != ".0f":
        # d3-format: "e" for a slider of tiny values, "r" plain decimals, 2 significant
        readout_format = ".1e" if lo_exp <= -4 else ".2r"
    return _SnappedLogSlider(value=value, base=10, min=lo_exp, max=hi_exp, step=step,
                             description=description, readout_format=readout_format,
                             continuous_update=True, style=_STYLE, whole=whole,
                             layout=_layout(description))


def int_slider(description, value, lo, hi, step=1):
    _number(value, description, lo, hi, integer=True)
    return widgets.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                             continuous_update=True, style=_STYLE, layout=_layout(description))


def dropdown(description, options, value=None):
    if value is not None:
        allowed = [o[1] if isinstance(o, tuple) else o for o in options]
        if not any(_same(value, a) for a in allowed):
            raise BadInitialValue(value, description, f"one of {allowed!r}")
    return widgets.Dropdown(options=options, value=value if value is not None else
                            (options[0][1] if isinstance(options[0], tuple) else options[0]),
                            description=description, style=_STYLE,
                            layout=_layout(description))


def checkbox(description, value=False):
    if not isinstance(value, (bool, np.bool_)):
        raise BadInitialValue(value, description, "True or False", TypeError)
    return widgets.Checkbox(value=value, description=description, style=_STYLE,
                            layout=widgets.Layout(width="330px"))
