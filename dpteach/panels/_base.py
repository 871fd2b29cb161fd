"""The panel pattern: compute -> draw in place -> wire.

A panel owns a dict of ipywidgets controls, one matplotlib Figure (Agg, never pyplot)
and a widget to display. Setting ``panel.controls[name].value`` calls the panel's
update function synchronously: it changes the existing artists in place (set_data,
set_height, set_text), then the figure is rendered once to PNG and shown in an
``ipywidgets.Image``. Tests, benchmarks and a browser therefore all see the same redraw.
(How the PNG is made fast -- blitting, a background cache, a small PNG writer -- is
machinery, kept in ``_render.py``.)

Displaying a panel sends the live widget and, beside it, a static PNG of the figure, so
a committed notebook shows the picture on GitHub and before Run All.
"""

from __future__ import annotations

import base64
import functools
import importlib
import inspect
import math
import numbers
import time
import warnings
from typing import Callable

import ipywidgets as widgets
import traitlets
import numpy as np
from matplotlib.layout_engine import ConstrainedLayoutEngine

from .. import style as _style
from ..plots import apply_style
from ._render import Renderer

__all__ = ["Panel", "register", "REGISTRY", "float_slider", "log_slider", "int_slider",
           "dropdown", "checkbox"]

class _Registry(dict):
    """name -> builder, every panel listed once.

    The panels package declares which module defines which builder; until a builder is
    looked up (``REGISTRY[name]``, ``.get``, ``.values()``, ``.items()``), its entry is a
    stand-in and its module is not imported. Looking it up imports the module, whose
    ``@register`` puts the real builder in place, and returns that builder.
    """

    def __init__(self):
        super().__init__()
        self._package = None
        self._modules: tuple = ()
        self._all_loaded = False

    def declare(self, package, modules):
        self._package, self._modules = package, tuple(modules)
        for module, names in modules.items():
            for name in names:
                if not isinstance(dict.get(self, name), _Builder):
                    dict.__setitem__(self, name, _LazyBuilder(name, f"{package}.{module}"))

    def __getitem__(self, name):
        value = dict.__getitem__(self, name)      # __missing__ for unknown names
        if isinstance(value, _LazyBuilder):
            importlib.import_module(value.module)
            value = dict.__getitem__(self, name)
            if isinstance(value, _LazyBuilder):
                raise KeyError(f"{value.module} does not register the panel {name!r}")
        return value

    def __missing__(self, name):
        if self._package and not self._all_loaded:
            self._load_all()                  # a panel module not declared (yet)
            if dict.__contains__(self, name):
                return self[name]
        raise KeyError(name)

    def _load_all(self):
        import pkgutil
        package = importlib.import_module(self._package)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{self._package}.{info.name}")
        self._all_loaded = True

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def values(self):
        return [self[name] for name in self]

    def items(self):
        return [(name, self[name]) for name in self]


class _Builder:
    """Marker base of the stand-ins below."""


class _LazyBuilder(_Builder):
    """Stands in for a panel builder whose module is not imported yet; calling it
    imports the module and builds the panel."""

    def __init__(self, name, module):
        self.panel_name = self.__name__ = self.__qualname__ = name
        self.module = self.__module__ = module
        self.__doc__ = f"Build the {name!r} panel (defined in {module}, imported on first use)."

    def __call__(self, *args, **kwargs):
        return REGISTRY[self.panel_name](*args, **kwargs)

    def __repr__(self):
        return f"<panel builder {self.panel_name!r}: {self.module} not imported yet>"


#: name -> builder, filled by the @register decorator of every panel module.
REGISTRY: dict[str, Callable[..., "Panel"]] = _Registry()


def register(name: str):
    """Add a panel builder to :data:`REGISTRY` under ``name``.

    The builder is wrapped so that it checks its arguments like any public function: the
    control factories below refuse an initial value outside the control's range (or of
    the wrong kind: NaN, a string, a bool for a number) before any widget exists, and the
    wrapper reports it as a ValueError or TypeError naming the builder's parameter.
    """
    def deco(fn):
        current = dict.get(REGISTRY, name)
        if (current is not None and not isinstance(current, _Builder)
                and getattr(current, "__wrapped__", None) is not fn):
            raise ValueError(f"panel {name!r} registered twice")

        @functools.wraps(fn)
        def builder(*args, **kwargs):
            try:
                with _style.drawing_in_normal_style() as chosen:
                    panel = fn(*args, **kwargs)
            except _BadInitialValue as exc:
                raise _name_parameter(fn, args, kwargs, exc) from None
            if chosen["lecture"] and isinstance(panel, Panel):
                panel.restyle()               # built in lecture mode: scaled like a live panel
            return panel

        builder.panel_name = name
        dict.__setitem__(REGISTRY, name, builder)
        return builder
    return deco


class _BadInitialValue(Exception):
    """A control factory was given an initial value its control cannot hold."""

    def __init__(self, value, description, allowed, kind=ValueError):
        super().__init__(f"{description!r} control must be {allowed}, got {value!r}")
        self.value, self.description, self.allowed, self.kind = value, description, allowed, kind


#: the class a panel's box carries in lecture mode, and the stylesheet (one per panel, so
#: that it travels with the panel into JupyterLab, Voila and a static page) that makes its
#: controls' labels, readouts and status line projector-sized under it
LECTURE_CLASS = "dpteach-lecture"
LECTURE_CSS = (f"<style>.{LECTURE_CLASS} .widget-label, .{LECTURE_CLASS} .widget-readout, "
               f".{LECTURE_CLASS} .widget-html-content, .{LECTURE_CLASS} select, "
               f".{LECTURE_CLASS} .widget-toggle-button {{font-size: 20px; line-height: 1.3}} "
               f".{LECTURE_CLASS} .widget-label {{min-width: max-content}}</style>")


def _fit_titles(figure, undo=False) -> bool:
    """Narrow each axes title that runs past the figure's edge (a bigger font in a
    narrow panel) until it fits, remembering by how much; ``undo`` gives the titles
    their sizes back first. True when a title was narrowed."""
    narrowed = False
    renderer = None if undo else figure.canvas.get_renderer()
    for ax in figure.axes:
        title = ax.title
        factor = getattr(title, "_dpteach_fit", 1.0)
        if undo:
            if factor != 1.0:
                title.set_fontsize(title.get_fontsize() / factor)
                title._dpteach_fit = 1.0
            continue
        if not title.get_text():
            continue
        box = title.get_window_extent(renderer)
        centre, half = (box.x0 + box.x1) / 2, box.width / 2
        room = min(figure.bbox.width - 2 - centre, centre - 2)
        if half > 0 and room < half:
            shrink = max(room / half, 0.5)
            title.set_fontsize(title.get_fontsize() * shrink)
            title._dpteach_fit = factor * shrink
            narrowed = True
    return narrowed


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return type(a) is type(b) and bool(a == b)
    except Exception:   # noqa: BLE001 - arrays and odd objects are simply not the same
        return False


def _name_parameter(fn, args, kwargs, exc):
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
        raise _BadInitialValue(value, description, allowed, TypeError)
    x = float(value)
    tol = 1e-9 * max(abs(lo), abs(hi), 1.0)
    if not (lo - tol <= x <= hi + tol) or (integer and x != round(x)):
        raise _BadInitialValue(value, description, allowed)
    return value


class Panel:
    """A slider panel: ``.controls``, ``.figure``, ``.widget``.

    Parameters
    ----------
    controls : dict name -> ipywidgets value widget
    figure : matplotlib Figure the update function draws on
    update : callable(**values) -> str or None; changes artists in place and may return
        a short HTML status line (numbers the picture shows) for under the figure.
    title : str, a short heading shown above the controls.
    """

    def __init__(self, controls, figure, update, *, title="", name="", full_draw_on_move=False):
        self.controls = dict(controls)
        self.figure = figure
        self.name = name
        self._update = update
        # panels whose axes follow the data draw in full when a limit moves (the cached
        # backgrounds of several moving axes can disagree with a full draw)
        self._full_on_move = bool(full_draw_on_move)
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="auto", max_width="100%"))
        self.status = widgets.HTML()
        self.timings: list[float] = []
        self._renderer = Renderer(figure)
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        box = widgets.HBox(list(self.controls.values()),
                           layout=widgets.Layout(flex_flow="row wrap"))
        self.widget = widgets.VBox(header + [box, self.image, self.status,
                                             widgets.HTML(LECTURE_CSS)])
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        _style.track(self)
        self._first_draw()

    def _first_draw(self):
        """Compute, learn which artists the update changes, and draw the figure once.

        The update runs twice and the figure is drawn once (a full draw costs a few
        tenths of a second the first time: fonts, layout). The first run sets every
        artist up; their stale marks are then cleared as a draw would clear them
        (visible artists only: what a draw skips stays stale). The second run marks
        exactly the artists the update changes; the renderer treats them as dynamic,
        so the first slider move already blits. An unchanged ``set_text`` does not
        mark a text stale, so every text in the axes is blanked before the second run:
        the texts the update writes come back stale (dynamic), the others get their
        words back and stay in the cached background.
        """
        text = self._update(**self.values())
        if text is not None:
            self.status.value = text
        _settle(self.figure)
        blank = "\u2063"
        texts = [(t, t.get_text()) for ax in self.figure.axes for t in ax.texts]
        for t, _ in texts:
            t.set_text(blank)
        text = self._update(**self.values())
        if text is not None:
            self.status.value = text
        for t, words in texts:
            if t.get_text() == blank:
                t.set_text(words)
                t.stale = False
        self._png = self._renderer.render(learn=True)
        self.image.value = self._png

    # -- wiring ---------------------------------------------------------------
    def values(self) -> dict:
        return {k: c.value for k, c in self.controls.items()}

    def _on_change(self, _change=None):
        self.redraw()

    def redraw(self):
        """Recompute, update the artists in place, render the PNG. Returns seconds taken."""
        t0 = time.perf_counter()
        limits = self._limits()
        text = self._update(**self.values())
        if text is not None:
            self.status.value = text
        moved = [ax for ax, old, new in zip(self.figure.axes, limits, self._limits()) if old != new]
        self._png = self._render(moved=moved, old_limits=limits, full=self._full_on_move and bool(moved))
        self.image.value = self._png
        dt = time.perf_counter() - t0
        self.timings.append(dt)
        return dt

    def restyle(self):
        """Apply the current style (lecture mode or not), lay out again and redraw; the
        controls' labels and the status line follow (a CSS class the panel's stylesheet
        knows), and a title too wide for the bigger font is narrowed to fit."""
        _fit_titles(self.figure, undo=True)
        apply_style(self.figure)
        lecture = bool(_style.current_style()["lecture"])
        (self.widget.add_class if lecture else self.widget.remove_class)(LECTURE_CLASS)
        self.status.style.font_size = f"{_style.current_style()['font'] + 3:g}px" if lecture else None
        for _ in range(2):
            if any(ax.get_subplotspec() is not None for ax in self.figure.axes):
                # lay the grid out once more for the new font sizes (hand-placed axes stay)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    ConstrainedLayoutEngine().execute(self.figure)
            if not _fit_titles(self.figure):
                break
        self._png = self._render(full=True)
        self.image.value = self._png

    # -- rendering (the speed machinery lives in _render.py) ------------------
    def _limits(self):
        return self._renderer.limits()

    def _render(self, *, moved=(), old_limits=(), full: bool = False) -> bytes:
        """Draw the figure and encode it as PNG (only what changed is redrawn)."""
        return self._renderer.render(moved=moved, old_limits=old_limits, full=full)

    @property
    def _backgrounds(self):
        return self._renderer._backgrounds

    def close(self):
        """Close the panel's widgets (front end and kernel side) and stop tracking it,
        so that lecture mode no longer restyles it and it can be garbage collected."""
        for control in self.controls.values():
            control.unobserve(self._on_change, names="value")
        for w in [*self.controls.values(), *self.widget.children, self.widget]:
            w.close()
        _style.untrack(self)

    # -- display --------------------------------------------------------------
    def png(self) -> bytes:
        return self._png

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, tuple):
            data, meta = bundle
        else:
            data, meta = bundle, {}
        data = dict(data)
        data["image/png"] = base64.b64encode(self._png).decode("ascii")
        data["text/plain"] = f"<dpteach panel {self.name!r}: run the notebook to use the sliders>"
        return data, meta

    def __repr__(self):
        return f"<Panel {self.name!r} controls={list(self.controls)}>"


def _settle(figure):
    """Clear the stale marks a draw would clear, where the renderer looks for changes:
    the figure's texts, each axes, its axis objects and its direct children (visible
    ones only: a draw skips the others, an empty text included, so they stay stale).
    A change below them (a tick label, a legend's text) still marks them stale."""
    for artist in [*figure.texts, *figure.axes,
                   *(child for ax in figure.axes for child in ax.get_children())]:
        if artist.get_visible() and not (hasattr(artist, "get_text") and artist.get_text() == ""):
            artist.stale = False
    figure.stale = False


# -- control factories: consistent look, sensible widths -----------------------------
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
            raise _BadInitialValue(value, description, f"one of {allowed!r}")
    return widgets.Dropdown(options=options, value=value if value is not None else
                            (options[0][1] if isinstance(options[0], tuple) else options[0]),
                            description=description, style=_STYLE,
                            layout=_layout(description))


def checkbox(description, value=False):
    if not isinstance(value, (bool, np.bool_)):
        raise _BadInitialValue(value, description, "True or False", TypeError)
    return widgets.Checkbox(value=value, description=description, style=_STYLE,
                            layout=widgets.Layout(width="330px"))
