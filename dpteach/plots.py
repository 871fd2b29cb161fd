"""Drawing primitives. Each takes an Axes, draws, and returns the artists it made, so
that panels can update them in place (set_data, set_height) instead of redrawing.

No function here changes global matplotlib state; figures are made with
``matplotlib.figure.Figure`` directly, so notebooks never show a stray extra copy.
"""

from __future__ import annotations

import io
import math

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .style import PALETTE, current_style

__all__ = ["PALETTE", "new_figure", "apply_style", "label_axes", "log_axes", "density_line",
           "band", "bars", "vline", "hline", "note", "figure_png", "set_band"]

COLORS = list(PALETTE.values())


def new_figure(nrows=1, ncols=1, *, figsize=None, dpi=80, **subplot_kw):
    """A Figure with an Agg canvas and a grid of Axes; returns (fig, axes).

    ``axes`` is a single Axes for a 1x1 grid, else a flat array.
    """
    if figsize is None:
        figsize = (4.2 * ncols + 0.6, 3.4 * nrows)
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
    flat = axes.ravel()
    for ax in flat:
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=current_style()["font"] * 0.9)
    fig._dpteach_style = current_style()
    return fig, (flat[0] if flat.size == 1 else flat)


def apply_style(fig, style=None):
    """Rescale fonts and line widths of every artist of ``fig`` to the current style.

    Sizes are scaled by the ratio of the new style to the one the figure was drawn in,
    so reference lines stay thinner than data lines in both styles.
    """
    style = style or current_style()
    old = getattr(fig, "_dpteach_style", None) or style
    fig._dpteach_style = dict(style)
    fs, ls = style["font"] / old["font"], style["line"] / old["line"]
    if fs == 1 and ls == 1:
        return fig
    for text in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "set_fontsize")):
        text.set_fontsize(text.get_fontsize() * fs)
    for ax in fig.axes:
        ax.tick_params(labelsize=style["font"] * 0.9)
        for line in ax.get_lines():
            line.set_linewidth(line.get_linewidth() * ls)
    return fig


def label_axes(ax, xlabel=None, ylabel=None, title=None):
    """Axis labels (with units and symbols) and a title, in the current style."""
    style = current_style()
    if xlabel is not None:
        ax.set_xlabel(xlabel, fontsize=style["font"])
    if ylabel is not None:
        ax.set_ylabel(ylabel, fontsize=style["font"])
    if title is not None:
        ax.set_title(title, fontsize=style["title"])
    return ax


def _plain(value, _pos=None):
    return f"{value:g}"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power_of_ten(value, _pos=None):
    """10 to an integer power with Unicode superscripts (10⁻³): plain text, which draws
    without matplotlib's mathtext parser (its 10^k labels cost about 10 ms each the first
    time, a tenth of a second or more of a log panel's first drawing)."""
    if value != 0 and math.isfinite(value):
        k = round(math.log10(abs(value)))
        if math.isclose(abs(value), 10.0 ** k, rel_tol=1e-9):
            return ("−" if value < 0 else "") + "10" + str(k).translate(_SUPERSCRIPT)
    return _plain(value)


def log_axes(ax, *, x=True, y=True, plain=False, linthresh=None):
    """Log scale on the x and/or y axis, ticks at the powers of ten only.

    Every panel's log axis spans two decades or more, so the decades alone label it;
    the eight minor ticks per decade matplotlib adds by default are each an artist of
    their own and cost about half a second of a panel's first drawing (and time on every
    redraw that moves the axis). The decades read 10⁻², 10⁻¹, 10⁰, ... in plain text;
    ``plain=True`` writes them as plain numbers instead (0.01, 0.1, 1). ``linthresh``: a
    symmetric log scale instead, linear between -linthresh and linthresh (for values that
    reach 0).
    """
    from matplotlib.ticker import FuncFormatter, NullLocator

    for on, axis, setter in ((x, ax.xaxis, ax.set_xscale), (y, ax.yaxis, ax.set_yscale)):
        if on:
            if linthresh is None:
                setter("log")
            else:
                setter("symlog", linthresh=linthresh)
            axis.set_minor_locator(NullLocator())
            axis.set_major_formatter(FuncFormatter(_plain if plain else _power_of_ten))


def density_line(ax, x, y, *, color=None, label=None, linestyle="-"):
    """One curve (a density, a loss, a bound); returns the Line2D."""
    (line,) = ax.plot(x, y, color=color or COLORS[0], label=label, linestyle=linestyle,
                      linewidth=current_style()["line"])
    return line


def band(ax, x, low, high, *, color=None, alpha=0.2, label=None):
    """A shaded band between two curves; returns the PolyCollection (see set_band)."""
    return ax.fill_between(x, low, high, color=color or COLORS[0], alpha=alpha, label=label,
                           linewidth=0)


def set_band(collection, x, low, high):
    """Move a band made by :func:`band` to new curves, in place."""
    x = np.asarray(x, float)
    low = np.broadcast_to(np.asarray(low, float), x.shape)
    high = np.broadcast_to(np.asarray(high, float), x.shape)
    verts = np.concatenate([np.column_stack([x, low]), np.column_stack([x[::-1], high[::-1]]),
                            [[x[0], low[0]]]])
    collection.set_verts([verts])
    return collection


def bars(ax, x, heights, *, color=None, width=0.8, label=None):
    """A bar chart; returns the BarContainer (update with ``bar.set_height``)."""
    return ax.bar(x, heights, color=color or COLORS[0], width=width, label=label)


def vline(ax, x, *, color=None, linestyle="--", label=None):
    return ax.axvline(x, color=color or PALETTE["grey"], linestyle=linestyle, label=label,
                      linewidth=current_style()["line"] * 0.7)


def hline(ax, y, *, color=None, linestyle="--", label=None):
    return ax.axhline(y, color=color or PALETTE["grey"], linestyle=linestyle, label=label,
                      linewidth=current_style()["line"] * 0.7)


def note(ax, text, *, loc="upper left"):
    """A text box in a corner of the Axes; returns the Text (update with set_text)."""
    xs = {"upper left": (0.02, 0.97, "left", "top"), "upper right": (0.98, 0.97, "right", "top"),
          "lower left": (0.02, 0.03, "left", "bottom"), "lower right": (0.98, 0.03, "right", "bottom")}
    x, y, ha, va = xs[loc]
    return ax.text(x, y, text, transform=ax.transAxes, ha=ha, va=va,
                   fontsize=current_style()["font"] * 0.95,
                   bbox=dict(boxstyle="round", facecolor="white", alpha=0.85, edgecolor="#cccccc"))


def figure_png(fig) -> bytes:
    """Render ``fig`` with Agg and return PNG bytes (fast, light compression)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", pil_kwargs={"compress_level": 1})
    return buf.getvalue()
