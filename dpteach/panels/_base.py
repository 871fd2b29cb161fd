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
import time
from typing import Callable

import ipywidgets as widgets

from .. import style as _style
from ..plots import apply_style, figure_png

__all__ = ["Panel", "register", "REGISTRY", "float_slider", "log_slider", "int_slider",
           "dropdown", "checkbox"]

#: name -> builder, filled by the @register decorator of every panel module.
REGISTRY: dict[str, Callable[..., "Panel"]] = {}


def register(name: str):
    """Add a panel builder to :data:`REGISTRY` under ``name``."""
    def deco(fn):
        if name in REGISTRY and REGISTRY[name] is not fn:
            raise ValueError(f"panel {name!r} registered twice")
        REGISTRY[name] = fn
        fn.panel_name = name
        return fn
    return deco


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
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        box = widgets.HBox(list(self.controls.values()),
                           layout=widgets.Layout(flex_flow="row wrap"))
        self.widget = widgets.VBox(header + [box, self.image, self.status])
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        _style._track(self)
        self.redraw()

    # -- wiring ---------------------------------------------------------------
    def values(self) -> dict:
        return {k: c.value for k, c in self.controls.items()}

    def _on_change(self, _change=None):
        self.redraw()

    def redraw(self):
        """Recompute, update the artists in place, render the PNG. Returns seconds taken."""
        t0 = time.perf_counter()
        text = self._update(**self.values())
        if text is not None:
            self.status.value = text
        self._png = figure_png(self.figure)
        self.image.value = self._png
        dt = time.perf_counter() - t0
        self.timings.append(dt)
        return dt

    def restyle(self):
        """Apply the current style (lecture mode or not) and redraw."""
        apply_style(self.figure)
        self.redraw()

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


# -- control factories: consistent look, sensible widths -----------------------------
_STYLE = {"description_width": "initial"}
_LAYOUT = {"width": "330px"}


def float_slider(description, value, lo, hi, step, *, readout_format=".2f"):
    return widgets.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                               readout_format=readout_format, continuous_update=True,
                               style=_STYLE, layout=widgets.Layout(**_LAYOUT))


def log_slider(description, value, lo_exp, hi_exp, step=0.05, *, readout_format=".3g"):
    return widgets.FloatLogSlider(value=value, base=10, min=lo_exp, max=hi_exp, step=step,
                                  description=description, readout_format=readout_format,
                                  continuous_update=True, style=_STYLE,
                                  layout=widgets.Layout(**_LAYOUT))


def int_slider(description, value, lo, hi, step=1):
    return widgets.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                             continuous_update=True, style=_STYLE, layout=widgets.Layout(**_LAYOUT))


def dropdown(description, options, value=None):
    return widgets.Dropdown(options=options, value=value if value is not None else
                            (options[0][1] if isinstance(options[0], tuple) else options[0]),
                            description=description, style=_STYLE,
                            layout=widgets.Layout(width="330px"))


def checkbox(description, value=False):
    return widgets.Checkbox(value=value, description=description, style=_STYLE,
                            layout=widgets.Layout(width="330px"))
