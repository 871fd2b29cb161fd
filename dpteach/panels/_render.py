"""Speed machinery for panels: blitting, a background cache and a PNG encoder.

Nothing here is about privacy. :class:`Renderer` turns a panel's figure into PNG bytes
fast enough for a slider (a few milliseconds): it learns, from the panel's first
picture, which artists the update changes; after that it redraws only those over a
cached picture of everything else, and encodes the result with a minimal PNG writer.
``dpteach.panels._panel.Panel`` owns one Renderer and hands it its update to run.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.patches import Rectangle
from matplotlib.spines import Spine
from matplotlib.transforms import Bbox, IdentityTransform

__all__ = ["Renderer"]


class Renderer:
    """Render one figure to PNG, blitting what changed onto a cached background."""

    def __init__(self, figure):
        self.figure = figure
        self._dynamic: list = []          # artists an update has been seen to change
        self._background = None           # the pixels of everything static
        self._backgrounds: dict = {}      # axis limits -> background, for axes that move
        self._boxes: dict = {}
        self._legend_pixels: list = []
        self._laid_out = False

    def limits(self):
        return [(ax.get_xlim(), ax.get_ylim()) for ax in self.figure.axes]

    def first_picture(self, update) -> bytes:
        """Run ``update`` (a callable that changes the figure's artists in place), learn
        which artists it changes, and draw the figure once.

        The update runs twice and the figure is drawn once (a full draw costs a few
        tenths of a second the first time: fonts, layout). The first run sets every
        artist up; their stale marks are then cleared as a draw would clear them
        (visible artists only: what a draw skips stays stale). The second run marks
        exactly the artists the update changes; they are taken as the dynamic ones,
        so the first slider move already blits. An unchanged ``set_text`` does not
        mark a text stale, so every text in the axes is blanked before the second run:
        the texts the update writes come back stale (dynamic), the others get their
        words back and stay in the cached background.
        """
        update()
        _settle(self.figure)
        blank = "\u2063"
        texts = [(t, t.get_text()) for ax in self.figure.axes for t in ax.texts]
        for t, _ in texts:
            t.set_text(blank)
        update()
        for t, words in texts:
            if t.get_text() == blank:
                t.set_text(words)
                t.stale = False
        return self.render(learn=True)

    def picture_after(self, update, *, full_on_move: bool = False) -> bytes:
        """Run ``update`` and draw what it changed. Axes whose limits the update moved
        are redrawn alone, or the whole figure is when ``full_on_move`` (a panel whose
        axes follow the data: the cached backgrounds of several moving axes can
        disagree with a full draw)."""
        limits = self.limits()
        update()
        moved = [ax for ax, old, new in zip(self.figure.axes, limits, self.limits()) if old != new]
        return self.render(moved=moved, old_limits=limits, full=full_on_move and bool(moved))

    def render(self, *, moved=(), old_limits=(), full: bool = False, learn: bool = False) -> bytes:
        """Draw the figure and encode it as PNG.

        The first draw lays the figure out (constrained layout) and then freezes the
        layout. Afterwards only the artists the update changed (matplotlib marks them
        stale) are redrawn over a cached background of everything else (blitting),
        which keeps a slider move to a few milliseconds. Axes whose limits ``moved``
        are redrawn alone (their region is cleared first), and the background that
        results is kept for those limits: the static artists never change, so coming
        back to the same limits costs nothing. A changed axis or an artist not seen
        changing before forces one full draw. ``learn``: the caller cleared the stale
        marks before an update, so even the first draw takes the stale artists as the
        dynamic ones (a panel's first picture is drawn once, not twice).
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
        new = [] if first and not learn else [a for a in changed if a not in self._dynamic]
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
        return tuple(self.limits())

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


_BACKGROUNDS_KEPT = 8      # backgrounds cached per panel, one per set of axis limits


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
