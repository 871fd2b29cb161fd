"""How a panel looks in lecture mode, beyond what the figure's style reaches.

``dp.style.lecture_mode()`` restyles every live panel. The figure follows the current style
through ``dpteach.plots.apply_style``; this module holds the rest: the CSS class and the
stylesheet that make a panel's control labels, readouts and status line
projector-sized, and a layout pass for the bigger fonts that narrows any axes title
pushed past the figure's edge.
"""

from __future__ import annotations

import warnings

from matplotlib.layout_engine import ConstrainedLayoutEngine

from ..plots import apply_style

__all__ = ["LECTURE_CLASS", "LECTURE_CSS", "restyle_figure"]

#: the class a panel's box carries in lecture mode, and the stylesheet (one per panel, so
#: that it travels with the panel into JupyterLab, Voila and a static page) that makes its
#: controls' labels, readouts and status line projector-sized under it
LECTURE_CLASS = "dpteach-lecture"
LECTURE_CSS = (f"<style>.{LECTURE_CLASS} .widget-label, .{LECTURE_CLASS} .widget-readout, "
               f".{LECTURE_CLASS} .widget-html-content, .{LECTURE_CLASS} select, "
               f".{LECTURE_CLASS} .widget-toggle-button {{font-size: 20px; line-height: 1.3}} "
               f".{LECTURE_CLASS} .widget-label {{min-width: max-content}}</style>")


def restyle_figure(figure):
    """Give ``figure`` the current style and lay it out again for the new font sizes
    (axes placed by hand stay where they are); a title too wide for a bigger font is
    narrowed until it fits, and gets its size back when the style changes again."""
    _fit_titles(figure, undo=True)
    apply_style(figure)
    for _ in range(2):
        if any(ax.get_subplotspec() is not None for ax in figure.axes):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                ConstrainedLayoutEngine().execute(figure)
        if not _fit_titles(figure):
            break


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
