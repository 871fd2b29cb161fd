"""Panels for notebook 01, anonymisation and its limits: a live generaliser of seed
004's 12-row hospital table, the skewness attack, and the Earth Mover's Distance of
the salary example."""

from __future__ import annotations

import math

import numpy as np
import matplotlib.colors
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .. import anonymity as an
from .. import datasets
from ..datasets import salary_groupings, skewed_table
from ..plots import PALETTE, label_axes, new_figure, note, set_band
from ._controls import checkbox, dropdown, float_slider, int_slider
from ._panel import Panel
from ._registry import register

_QI = ["Zip Code", "Age", "Nationality"]
_CLASS_COLOURS = [PALETTE[c] for c in ("sky", "orange", "green", "yellow", "purple", "blue",
                                        "vermillion", "grey")]
_SEED_AGES = ("bucket", [-math.inf, 30, 40, math.inf], ["< 30", "3*", "≥ 40"])
_AGE_OPTIONS = [("exact age", 1), ("5-year buckets", 5), ("10-year buckets", 10),
                ("20-year buckets", 20), ("seed: < 30 / 3* / ≥ 40", "seed"), ("one bucket", 100)]


def generalised_hospital_table(zip_digits=3, age_width=10, suppress_nationality=True):
    """Seed 004's 12-row table with ZIP codes cut to ``zip_digits`` digits, ages in
    buckets of ``age_width`` years (or "seed" for the seed's < 30 / 3* / ≥ 40) and the
    nationality suppressed or not. The computation behind the generaliser panel."""
    rules = {"Zip Code": ("mask", zip_digits),
             "Age": _SEED_AGES if age_width == "seed" else ("bucket", age_width),
             "Nationality": "suppress" if suppress_nationality else None}
    return an.generalize(datasets.hospital_conditions(), rules)


class _GlyphRaster:
    """Monospaced text as pixels. Each character is drawn once by matplotlib (Agg) into
    a cell of a fixed width; strings are then pasted from the cached cells with numpy,
    so a table of changing text costs one image per redraw instead of one text draw
    per line. Characters are added on first use."""

    _instances: dict = {}

    @classmethod
    def get(cls, dpi, size=9):
        key = (float(dpi), size)
        if key not in cls._instances:
            cls._instances[key] = cls(dpi, size)
        return cls._instances[key]

    def __init__(self, dpi, size=9, pitch=19):
        self.dpi, self.size, self.pitch = dpi, size, pitch
        self.advance = int(round(0.602 * size * dpi / 72))   # DejaVu Sans Mono: 0.602 em
        self.cells: dict[str, np.ndarray] = {}
        self._add("0123456789*-<≥>.ACEIJNRU abcdefghijklmnopqrstuvwxyz")

    def _add(self, chars):
        chars = [c for c in dict.fromkeys(chars) if c not in self.cells]
        if not chars:
            return
        w = 2 * self.advance                  # room for a glyph's overhang
        fig = Figure(figsize=(len(chars) * w / self.dpi, self.pitch / self.dpi), dpi=self.dpi)
        canvas = FigureCanvasAgg(fig)
        for i, c in enumerate(chars):
            fig.text(i * w / fig.bbox.width, 0.5, c, family="DejaVu Sans Mono",
                     fontsize=self.size, va="center", ha="left")
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        ink = 1.0 - rgba[:, :, 0].astype(float) / 255.0
        for i, c in enumerate(chars):
            self.cells[c] = ink[:self.pitch, i * w:(i + 1) * w]

    def paste(self, ink, text, x, y):
        """Add ``text`` to the ink layer ``ink`` with its left edge at pixel (x, y)."""
        self._add(text)
        for j, c in enumerate(text):
            cell = self.cells[c]
            x0 = x + j * self.advance
            h, w = cell.shape
            w = min(w, ink.shape[1] - x0)
            if w > 0:
                region = ink[y:y + h, x0:x0 + w]
                np.maximum(region, cell[:region.shape[0], :w], out=region)


def _privacy_bars(bars_ax):
    """The generaliser's three bars (k, distinct ℓ, t), empty, and their value labels."""
    hbars = bars_ax.barh([2, 1, 0], [0, 0, 0], color=[PALETTE["blue"], PALETTE["green"],
                                                       PALETTE["orange"]], height=0.6)
    bars_ax.set_yticks([2, 1, 0], ["k", "ℓ (distinct)", "t (EMD)"])
    bars_ax.set_xlim(0, 1.45)
    bars_ax.set_xticks([0, 0.5, 1.0], ["0", "½", "max"])
    label_axes(bars_ax, "share of the largest possible value", None, "Privacy numbers")
    return hbars, [bars_ax.text(0, y, "", va="center", fontsize=10) for y in (2, 1, 0)]


@register
def anonymity_generalizer(zip_digits=3, age_width=10, suppress_nationality=True):
    """Generalise seed 004's 12-row hospital table live and watch k, l and t.

    Rows are shaded by equivalence class (class number, from 0 as the printed reports
    number them, and size beside them); the bars show k (smallest class, of 12),
    distinct l (fewest conditions in a class, of 3) and t (largest Earth Mover's
    Distance of a class's conditions from the whole table, equal ground distance).
    The seed's 4-anonymous table is ZIP 3 digits + seed ages + nationality suppressed.
    The live columns are drawn from cached 9-pt glyphs, so lecture mode enlarges the
    headings and bars but not the table's cells.
    """
    controls = {"zip_digits": int_slider("ZIP digits kept", zip_digits, 0, 5),
                "age_width": dropdown("ages", _AGE_OPTIONS, age_width),
                "suppress_nationality": checkbox("suppress nationality", suppress_nationality)}
    fig = new_figure(1, 1, figsize=(9.6, 4.2))[0]
    fig.clear()
    fig.set_layout_engine("none")   # fixed placement: the table is laid out in pixels
    width_px, height_px = (int(round(v)) for v in fig.bbox.size)
    table_w = int(width_px * 0.66)
    ax = fig.add_axes((0.0, 0.0, table_w / width_px, 1.0))
    bars_ax = fig.add_axes((0.76, 0.2, 0.22, 0.68))
    # hide the table's axes without set_axis_off(): an axis that is never drawn stays
    # "stale", which would force a full redraw on every move
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_xlim(0, table_w)                   # data units = pixels, y downwards
    ax.set_ylim(height_px, 0)

    # Drawing text is the slow part of a redraw (about a millisecond per line), so the
    # live columns are one image pasted from cached glyphs (see _GlyphRaster); the
    # header, row numbers and conditions are ordinary texts drawn once.
    raster = _GlyphRaster.get(fig.dpi)
    pitch, top = 19, 28                       # row height and first row's top (pixels)
    cols = {"Zip Code": 34, "Age": 104, "Nationality": 164, "class": 264, "size": 310}
    img_x0, img_w = 30, 316                   # the live block: ZIP .. size
    mono = {"family": "DejaVu Sans Mono", "fontsize": 9, "va": "center"}
    headers = dict(cols, **{"#": 6, "Condition": 352})
    for name, x in headers.items():
        fig.text(x, top - pitch / 2, name, transform=ax.transData, fontweight="bold", **mono)
    conditions = datasets.hospital_conditions()["Condition"].tolist()
    for i in range(12):
        fig.text(6, top + (i + 0.5) * pitch, str(i + 1), transform=ax.transData, **mono)
        fig.text(352, top + (i + 0.5) * pitch, conditions[i], transform=ax.transData, **mono)
    image = ax.imshow(np.ones((12 * pitch, img_w, 3)), extent=(img_x0, img_x0 + img_w,
                      top + 12 * pitch, top), interpolation="nearest", aspect="auto")
    caption = ax.text(6, top + 12 * pitch + 14, "", fontsize=9, va="center",
                      color=PALETTE["vermillion"])
    colours = np.array([matplotlib.colors.to_rgb(c) for c in _CLASS_COLOURS])
    colours = 1 - 0.5 * (1 - colours)         # pale versions, so black text stays readable

    hbars, values = _privacy_bars(bars_ax)

    cache = {}

    def measure(zip_digits, age_width, suppress_nationality):
        key = (zip_digits, age_width, suppress_nationality)
        if key not in cache:
            table = generalised_hospital_table(zip_digits, age_width, suppress_nationality)
            report = an.class_report(table, _QI, "Condition")
            ids = an.equivalence_class_ids(table, _QI).to_numpy()
            rows = table[["Zip Code", "Age", "Nationality"]].astype(str).to_numpy()
            cache[key] = (report, ids, rows)
        return cache[key]

    def update(zip_digits, age_width, suppress_nationality):
        report, ids, rows = measure(zip_digits, age_width, suppress_nationality)
        sizes = report["size"].to_numpy()
        k = int(sizes.min())
        l_distinct = int(report["l_distinct"].min())
        l_entropy = float(report["l_entropy"].min())
        t = float(report["emd"].max())
        ink = np.zeros((12 * pitch, img_w))
        for i in range(12):
            cells = {"Zip Code": rows[i, 0], "Age": rows[i, 1], "Nationality": rows[i, 2],
                     "class": str(ids[i]), "size": str(sizes[ids[i]])}   # from 0, as reports print
            for name, text in cells.items():
                raster.paste(ink, text, cols[name] - img_x0, i * pitch)
        shade = np.repeat(colours[ids % len(colours)], pitch, axis=0)[:, None, :]
        shade = np.broadcast_to(shade, (12 * pitch, img_w, 3)).copy()
        shade[::pitch] = 1.0                  # a white line between rows
        image.set_data(shade * (1 - ink[:, :, None]))
        homog = report[(report["l_distinct"] == 1) & (report["size"] > 1)]
        caption.set_text("homogeneous classes (size > 1): " + (", ".join(
            f"{s} × {next(iter(v))}" for s, v in zip(homog["size"], homog["values"])) or "none"))
        for bar, txt, frac, label in zip(hbars, values, [k / 12, l_distinct / 3, t],
                                         [f"{k} of 12", f"{l_distinct} of 3", f"{t:.3f}"]):
            bar.set_width(frac)
            txt.set_x(frac + 0.03)
            txt.set_text(label)
        return (f"{sizes.size} classes · k = {k} · distinct ℓ = {l_distinct} · entropy ℓ = "
                f"{l_entropy:.2f} · t = {t:.3f} (equal ground distance)")

    return Panel(controls, fig, update, title="Generalise the hospital table: k, ℓ and t")


@register
def anonymity_skewness(class_share=0.5, class_size=50):
    """The skewness attack (Li, Li & Venkatasubramanian 2007): 1% of a 10,000-row table
    tests positive. One equivalence class holds both results, so it is 2-diverse for
    any share of positives; but the share is what an attacker learns about everyone in
    the class. t-closeness (the EMD to the whole table) measures the jump; l does not.
    """
    controls = {"class_share": float_slider("positive share in the class", class_share,
                                            0.0, 1.0, 0.02),
                "class_size": int_slider("class size", class_size, 10, 200, 10)}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.2, 3.5))
    x = np.arange(2)
    whole = ax1.bar(x - 0.2, [0, 0], width=0.4, color=PALETTE["grey"], label="whole table")
    class_index = ax1.bar(x + 0.2, [0, 0], width=0.4, color=PALETTE["vermillion"], label="the class")
    ax1.set_xticks(x, ["positive", "negative"])
    ax1.set_ylim(0, 1.08)
    # a figure legend outside the axes stays in the cached background (axes legends
    # are redrawn on every move)
    fig.legend(loc="outside upper center", ncols=2, fontsize=8, frameon=False)
    label_axes(ax1, "test result", "share of rows", "Distribution: class vs table")
    belief = ax2.bar([0, 1], [0, 0], color=[PALETTE["grey"], PALETTE["vermillion"]], width=0.6)
    ax2.set_xticks([0, 1], ["before\n(table)", "after\n(class)"])
    ax2.set_ylim(0, 1.08)
    label_axes(ax2, None, "P(positive)", "What an attacker believes")
    txt = note(ax2, "", loc="upper left")

    def update(class_share, class_size):
        table, x_pos = skewed_table(class_size, class_share)
        report = an.class_report(table, "class", "test")
        row = report.iloc[0]
        overall = 100 / len(table)
        share = x_pos / class_size
        for bar, h in zip(whole, [overall, 1 - overall]):
            bar.set_height(h)
        for bar, h in zip(class_index, [share, 1 - share]):
            bar.set_height(h)
        belief[0].set_height(overall)
        belief[1].set_height(share)
        txt.set_text(f"class ℓ = {row['l_distinct']}\nclass EMD = {row['emd']:.3f}\n"
                     f"lift = {share / overall:.0f}×")
        return (f"{x_pos} of {class_size} positive in the class ({share:.0%}) against 1% overall: "
                f"distinct ℓ = {row['l_distinct']}, EMD to the table = {row['emd']:.3f}")

    return Panel(controls, fig, update, title="Skewness: ℓ-diverse but still revealing")



@register
def anonymity_emd_salary(grouping="seed's 3-diverse table", class_index=0):
    """The ordered Earth Mover's Distance of the salary example: a class's cumulative
    salary distribution against the whole table's. The shaded gap, divided by m - 1 = 8,
    is the EMD (0.375 for {3K, 4K, 5K}); the left plot shows the shares themselves."""
    groupings = salary_groupings()
    controls = {"grouping": dropdown("table", list(groupings), grouping),
                # numbered from 0, as class_report and equivalence_classes print them
                "class_index": dropdown("class", [("class 0", 0), ("class 1", 1), ("class 2", 2)],
                                        class_index)}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.4, 3.5))
    salaries = np.arange(3, 12)
    m = salaries.size
    whole = np.full(m, 1 / m)
    ax1.bar(salaries - 0.2, whole, width=0.4, color=PALETTE["grey"], label="whole table")
    cls_bars = ax1.bar(salaries + 0.2, np.zeros(m), width=0.4, color=PALETTE["blue"], label="class")
    ax1.set_ylim(0, 0.45)
    ax1.set_xticks(salaries, [f"{s}K" for s in salaries])
    label_axes(ax1, "salary", "share", "Salary distribution")
    xs = np.repeat(np.arange(m + 1), 2)[1:-1]        # step outline: each rank for one unit
    Q = np.cumsum(whole)
    gap = ax2.fill_between(xs, 0, 0, color=PALETTE["orange"], alpha=0.35, linewidth=0,
                           label=r"$|P - Q|$ (area = EMD $\times$ 8)")
    ax2.plot(xs, np.repeat(Q, 2), color=PALETTE["grey"], label="Q: whole table")
    (pline,) = ax2.plot(xs, np.zeros(xs.size), color=PALETTE["blue"], label="P: class")
    ax2.set_xticks(np.arange(m) + 0.5, [f"{s}K" for s in salaries])
    ax2.set_xlim(0, m)
    ax2.set_ylim(0, 1.05)
    fig.legend(loc="outside upper center", ncols=5, fontsize=8, frameon=False)
    label_axes(ax2, "salary", "cumulative share", "Cumulative: ordered EMD")
    txt = note(ax2, "", loc="upper left")

    reports = {name: an.class_report(table, ["ZIP Code", "Age"], "Salary", ordered=True)
               for name, table in groupings.items()}
    t_of = {name: an.t_closeness(table, ["ZIP Code", "Age"], "Salary", ordered=True)
            for name, table in groupings.items()}

    def update(grouping, class_index):
        report = reports[grouping]
        counts = report["values"].iloc[class_index]
        p = np.array([counts.get(int(s), 0) for s in salaries], float)
        p /= p.sum()
        for bar, h in zip(cls_bars, p):
            bar.set_height(h)
        P = np.repeat(np.cumsum(p), 2)
        pline.set_ydata(P)
        set_band(gap, xs, np.minimum(P, np.repeat(Q, 2)), np.maximum(P, np.repeat(Q, 2)))
        ordered = report["emd"].iloc[class_index]
        equal = an.emd(p, whole)
        t = t_of[grouping]
        members = ", ".join(f"{s}K" for s in salaries[p > 0])
        txt.set_text(f"{{{members}}}\nordered EMD = {ordered:.3f}\nequal-distance EMD = {equal:.3f}")
        return (f"class {{{members}}}: ordered EMD = {ordered:.4g}, equal-distance EMD = "
                f"{equal:.4g}; the table's t (ordered) = {t:.4g}")

    return Panel(controls, fig, update, title="t-closeness with the Earth Mover's Distance")
