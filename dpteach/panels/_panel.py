"""The panel pattern: compute -> draw in place -> wire.

A panel owns a dict of ipywidgets controls, one matplotlib Figure (Agg, never pyplot)
and a widget to display. Setting ``panel.controls[name].value`` calls the panel's
update function synchronously: it changes the existing artists in place (set_data,
set_height, set_text), then the figure is rendered once to PNG and shown in an
``ipywidgets.Image``. Tests, benchmarks and a browser therefore all see the same redraw.
(How the PNG is made fast -- blitting, a background cache, a small PNG writer -- is
machinery, kept in ``_render.py``; the lecture-mode look is in ``_lecture.py``.)

Displaying a panel sends the live widget and, beside it, a static PNG of the figure, so
a committed notebook shows the picture on GitHub and before Run All.
"""

from __future__ import annotations

import base64
import time

import ipywidgets as widgets

from .. import style as _style
from ._lecture import LECTURE_CLASS, LECTURE_CSS, restyle_figure
from ._render import Renderer

__all__ = ["Panel"]


class Panel:
    """A slider panel: ``.controls``, ``.figure``, ``.widget``.

    Parameters
    ----------
    controls : dict name -> ipywidgets value widget
    figure : matplotlib Figure the update function draws on
    update : callable(**values) -> str or None; changes artists in place and may return
        a short HTML status line (numbers the picture shows) for under the figure.
    title : str, a short heading shown above the controls.
    full_draw_on_move : bool, draw the whole figure when an update moves axis limits
        (for panels whose axes follow the data; correct but slower).

    ``.name`` is the name the panel is registered under: the ``@register`` wrapper
    sets it when the builder returns, so a builder never writes it.
    """

    def __init__(self, controls, figure, update, *, title="", full_draw_on_move=False):
        self.controls = dict(controls)
        self.figure = figure
        self.name = ""
        self._update = update
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
        self._show(self._renderer.first_picture(self._apply))

    # -- wiring ---------------------------------------------------------------
    def values(self) -> dict:
        return {k: c.value for k, c in self.controls.items()}

    def _apply(self):
        """Run the update with the controls' values; its text becomes the status line."""
        text = self._update(**self.values())
        if text is not None:
            self.status.value = text

    def _show(self, png):
        self._png = png
        self.image.value = png

    def _on_change(self, _change=None):
        self.redraw()

    def redraw(self):
        """Recompute, update the artists in place, render the PNG. Returns seconds taken."""
        t0 = time.perf_counter()
        self._show(self._renderer.picture_after(self._apply, full_on_move=self._full_on_move))
        dt = time.perf_counter() - t0
        self.timings.append(dt)
        return dt

    def restyle(self):
        """Apply the current style (lecture mode or not), lay out again and redraw; the
        controls' labels and the status line follow (a CSS class the panel's stylesheet
        knows), and a title too wide for the bigger font is narrowed to fit."""
        restyle_figure(self.figure)
        lecture = bool(_style.current_style()["lecture"])
        (self.widget.add_class if lecture else self.widget.remove_class)(LECTURE_CLASS)
        self.status.style.font_size = f"{_style.current_style()['font'] + 3:g}px" if lecture else None
        self._show(self._renderer.render(full=True))

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
