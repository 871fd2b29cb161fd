"""The panel pattern: compute -> draw in place -> wire.

A panel owns a dict of ipywidgets controls, one matplotlib Figure (Agg, never pyplot)
and a widget to display. Setting ``panel.controls[name].value`` calls the panel's
update function synchronously: it changes the existing artists in place (set_data,
set_height, set_text), then the figure is rendered once to PNG and shown in an
``ipywidgets.Image``. Tests, benchmarks and a browser therefore all see the same redraw.

Displaying a panel sends the live widget and, beside it, a static PNG of the figure, so
a committed notebook shows the picture on GitHub and before Run All.
"""

from __future__ import annotations

import base64
import functools
import inspect
import math
import numbers
import struct
import time
import warnings
import zlib
from typing import Callable

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.patches import Rectangle
from matplotlib.spines import Spine
from matplotlib.transforms import Bbox, IdentityTransform

from .. import style as _style
from ..plots import apply_style

__all__ = ["Panel", "register", "REGISTRY", "float_slider", "log_slider", "int_slider",
           "dropdown", "checkbox"]

#: name -> builder, filled by the @register decorator of every panel module.
REGISTRY: dict[str, Callable[..., "Panel"]] = {}


def register(name: str):
    """Add a panel builder to :data:`REGISTRY` under ``name``.

    The builder is wrapped so that it checks its arguments like any public function: the
    control factories below refuse an initial value outside the control's range (or of
    the wrong kind: NaN, a string, a bool for a number) before any widget exists, and the
    wrapper reports it as a ValueError or TypeError naming the builder's parameter.
    """
    def deco(fn):
        if name in REGISTRY and getattr(REGISTRY[name], "__wrapped__", None) is not fn:
            raise ValueError(f"panel {name!r} registered twice")

        @functools.wraps(fn)
        def builder(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except _BadInitialValue as exc:
                raise _name_parameter(fn, args, kwargs, exc) from None

        builder.panel_name = name
        REGISTRY[name] = builder
        return builder
    return deco


class _BadInitialValue(Exception):
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

    def __init__(self, controls, figure, update, *, title="", name=""):
        self.controls = dict(controls)
        self.figure = figure
        self.name = name
        self._update = update
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="auto", max_width="100%"))
        self.status = widgets.HTML()
        self.timings: list[float] = []
        self._dynamic: list = []
        self._background = None
        self._backgrounds: dict = {}
        self._boxes: dict = {}
        self._legend_pixels: list = []
        self._laid_out = False
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        box = widgets.HBox(list(self.controls.values()),
                           layout=widgets.Layout(flex_flow="row wrap"))
        self.widget = widgets.VBox(header + [box, self.image, self.status])
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        _style._track(self)
        self.redraw()
        self._warm_up()
        self.timings.clear()

    def _warm_up(self):
        """Run the update once more so the artists it touches are known to be dynamic
        before the first slider move (each later discovery costs a full draw).

        An unchanged ``set_text`` does not mark a text stale, so every text in the axes
        is first blanked: the texts the update writes come back stale (dynamic), the
        others get their words back and stay in the cached background.
        """
        blank = "\u2063"
        texts = [(t, t.get_text()) for ax in self.figure.axes for t in ax.texts]
        for t, _ in texts:
            t.set_text(blank)
        limits = self._limits()
        text = self._update(**self.values())
        if text is not None:
            self.status.value = text
        for t, words in texts:
            if t.get_text() == blank:
                t.set_text(words)
                t.stale = False
        moved = [ax for ax, old, new in zip(self.figure.axes, limits, self._limits()) if old != new]
        self._png = self._render(moved=moved, old_limits=limits)
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
        self._png = self._render(moved=moved, old_limits=limits)
        self.image.value = self._png
        dt = time.perf_counter() - t0
        self.timings.append(dt)
        return dt

    def restyle(self):
        """Apply the current style (lecture mode or not), lay out again and redraw."""
        apply_style(self.figure)
        if any(ax.get_subplotspec() is not None for ax in self.figure.axes):
            # lay the grid out once more for the new font sizes (hand-placed axes stay put)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                ConstrainedLayoutEngine().execute(self.figure)
        self._png = self._render(full=True)
        self.image.value = self._png

    # -- rendering: blit the artists that changed onto a cached background -------
    def _limits(self):
        return [(ax.get_xlim(), ax.get_ylim()) for ax in self.figure.axes]

    def _render(self, *, moved=(), old_limits=(), full: bool = False) -> bytes:
        """Draw the figure and encode it as PNG.

        The first draw lays the figure out (constrained layout) and then freezes the
        layout. Afterwards only the artists the update changed (matplotlib marks them
        stale) are redrawn over a cached background of everything else (blitting),
        which keeps a slider move to a few milliseconds. Axes whose limits ``moved``
        are redrawn alone (their region is cleared first), and the background that
        results is kept for those limits: the static artists never change, so coming
        back to the same limits costs nothing. A changed axis or an artist not seen
        changing before forces one full draw.
        """
        fig = self.figure
        canvas = fig.canvas
        if not isinstance(canvas, FigureCanvasAgg):
            canvas = FigureCanvasAgg(fig)
        first = self._background is None
        changed = []
        for ax in fig.axes:
            # an axes switched off (set_axis_off) never draws its axis, which stays stale
            if ax.axison and (ax.xaxis.stale or ax.yaxis.stale) and ax not in moved:
                full = True
            changed.extend(a for a in ax.get_children()
                           if a.stale and a not in (ax.xaxis, ax.yaxis) and not isinstance(a, Spine))
        changed.extend(t for t in fig.texts if t.stale)
        new = [] if first else [a for a in changed if a not in self._dynamic]
        if new:
            full = True
            self._dynamic.extend(new)
        if full or first:
            for a in self._dynamic:
                a.set_animated(True)
            self._opaque_legends()
            canvas.draw()
            if not self._laid_out:
                fig.set_layout_engine("none")
                self._laid_out = True
            self._boxes = {}
            self._background = canvas.copy_from_bbox(fig.bbox)
            self._backgrounds = {self._limits_key(): self._background}
            self._keep_legends(canvas)
        elif moved:
            self._background = self._moved_background(canvas, moved, old_limits)
        else:
            canvas.restore_region(self._background)
        for a in sorted(self._dynamic, key=lambda a: a.get_zorder()):
            if a.get_visible():
                (a.axes.draw_artist if a.axes is not None else fig.draw_artist)(a)
        for pixels in self._legend_pixels:      # legends stay on top of what moved
            canvas.restore_region(pixels)
        return _png(canvas)

    def _limits_key(self):
        return tuple(self._limits())

    def _moved_background(self, canvas, moved, old_limits):
        """The background for the axes' new limits: from the cache, or by redrawing
        the moved axes alone (their static legends are pasted back from pixels)."""
        key = self._limits_key()
        cached = self._backgrounds.get(key)
        if cached is not None:
            canvas.restore_region(cached)
            for ax in moved:                    # as if drawn: nothing left to redraw
                ax.stale = ax.xaxis.stale = ax.yaxis.stale = False
            return cached
        canvas.restore_region(self._background)
        renderer = canvas.get_renderer()
        legends = [leg for ax in moved for leg in [ax.get_legend()]
                   if leg is not None and leg.get_visible() and leg not in self._dynamic]
        for leg in legends:
            leg.set_visible(False)
        try:
            for ax in moved:
                i = self.figure.axes.index(ax)
                # clear what the old limits drew (wider tick labels too), then redraw
                old = self._box(ax, old_limits[i], renderer)
                self._clear(Bbox.union([old, self._box(ax, key[i], renderer)]), renderer)
                ax.draw(renderer)
        finally:
            for leg in legends:
                leg.set_visible(True)
                leg.stale = False
        background = canvas.copy_from_bbox(self.figure.bbox)
        if len(self._backgrounds) >= _BACKGROUNDS_KEPT:
            self._backgrounds.pop(next(iter(self._backgrounds)))
        self._backgrounds[key] = background
        return background

    def _box(self, ax, limits, renderer):
        """The axes' tight box (ticks and labels included) as drawn with ``limits``,
        measured once per set of limits."""
        if (ax, limits) not in self._boxes:
            now = ax.get_xlim(), ax.get_ylim()
            ax.set_xlim(*limits[0], emit=False, auto=None)
            ax.set_ylim(*limits[1], emit=False, auto=None)
            try:
                self._boxes[ax, limits] = ax.get_tightbbox(renderer)
            finally:
                ax.set_xlim(*now[0], emit=False, auto=None)
                ax.set_ylim(*now[1], emit=False, auto=None)
        return self._boxes[ax, limits]

    def _opaque_legends(self):
        """Static legends are pasted back from pixels over whatever moves behind them,
        so they must hide it completely (a see-through frame would show stale data)."""
        for ax in self.figure.axes:
            leg = ax.get_legend()
            if leg is not None and leg not in self._dynamic:
                leg.get_frame().set_alpha(1.0)

    def _keep_legends(self, canvas):
        """Cache the pixels of every static legend in the axes, to paste back on top of
        the dynamic artists (laying a legend out again costs more than the rest)."""
        self._legend_pixels = [canvas.copy_from_bbox(leg.get_window_extent())
                               for ax in self.figure.axes
                               for leg in [ax.get_legend()]
                               if leg is not None and leg.get_visible() and leg not in self._dynamic]

    def _clear(self, box, renderer):
        """Paint the figure's background colour over a pixel box."""
        pad = 2
        patch = Rectangle((box.x0 - pad, box.y0 - pad), box.width + 2 * pad, box.height + 2 * pad,
                          transform=IdentityTransform(), facecolor=self.figure.get_facecolor(),
                          edgecolor="none")
        patch.set_figure(self.figure)
        patch.draw(renderer)

    def close(self):
        """Close the panel's widgets (front end and kernel side) and stop tracking it,
        so that lecture mode no longer restyles it and it can be garbage collected."""
        for control in self.controls.values():
            control.unobserve(self._on_change, names="value")
        for w in [*self.controls.values(), *self.widget.children, self.widget]:
            w.close()
        _style._untrack(self)

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


_BACKGROUNDS_KEPT = 8      # backgrounds cached per panel, one per set of axis limits


def _png(canvas) -> bytes:
    """The canvas as a PNG (RGBA, 8 bits, no row filter, zlib level 1).

    Pillow's encoder tries a filter per row and takes 11-14 ms for a 576 x 272 panel;
    written directly, the same picture takes 3 ms and is about as small (a plot is
    mostly flat colour, which zlib packs well without filtering).
    """
    pixels = np.asarray(canvas.buffer_rgba())
    height, width, _ = pixels.shape
    rows = np.empty((height, 4 * width + 1), np.uint8)
    rows[:, 0] = 0                                    # filter type 0 (none) on every row
    rows[:, 1:] = pixels.reshape(height, -1)

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)   # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)) + chunk(b"IEND", b""))


# -- control factories: consistent look, sensible widths -----------------------------
_STYLE = {"description_width": "initial"}
_LAYOUT = {"width": "330px"}


def float_slider(description, value, lo, hi, step, *, readout_format=".2f"):
    _number(value, description, lo, hi)
    return widgets.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                               readout_format=readout_format, continuous_update=True,
                               style=_STYLE, layout=widgets.Layout(**_LAYOUT))


def log_slider(description, value, lo_exp, hi_exp, step=0.05, *, readout_format=".3g"):
    _number(value, description, 10.0 ** lo_exp, 10.0 ** hi_exp)
    return widgets.FloatLogSlider(value=value, base=10, min=lo_exp, max=hi_exp, step=step,
                                  description=description, readout_format=readout_format,
                                  continuous_update=True, style=_STYLE,
                                  layout=widgets.Layout(**_LAYOUT))


def int_slider(description, value, lo, hi, step=1):
    _number(value, description, lo, hi, integer=True)
    return widgets.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                             continuous_update=True, style=_STYLE, layout=widgets.Layout(**_LAYOUT))


def dropdown(description, options, value=None):
    if value is not None:
        allowed = [o[1] if isinstance(o, tuple) else o for o in options]
        if not any(_same(value, a) for a in allowed):
            raise _BadInitialValue(value, description, f"one of {allowed!r}")
    return widgets.Dropdown(options=options, value=value if value is not None else
                            (options[0][1] if isinstance(options[0], tuple) else options[0]),
                            description=description, style=_STYLE,
                            layout=widgets.Layout(width="330px"))


def checkbox(description, value=False):
    if not isinstance(value, (bool, np.bool_)):
        raise _BadInitialValue(value, description, "True or False", TypeError)
    return widgets.Checkbox(value=value, description=description, style=_STYLE,
                            layout=widgets.Layout(width="330px"))
