"""Every panel in the registry, headless: it builds without arguments, each control
changes the picture across its range, redraws are fast, and lecture mode restyles it."""

import csv
import io
import pathlib
import re
import statistics
import time

import ipywidgets as widgets
import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image as PILImage

import dpteach as dp
from dpteach import panels
from dpteach.panels._lecture import LECTURE_CLASS

NAMES = sorted(panels.REGISTRY)
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "test-artifacts"


#: points of a slider's sweep: both ends, the middle and the quarters (each move is drawn
#: twice, blitted and in full, so each point costs a full drawing)
SWEEP = 5


def control_values(control):
    """A sweep of values across the control's whole range."""
    if isinstance(control, widgets.FloatLogSlider):
        exps = np.linspace(control.min, control.max, SWEEP)
        return [float(control.base ** e) for e in exps]
    if isinstance(control, (widgets.IntSlider, widgets.BoundedIntText)):
        return sorted({int(round(v)) for v in np.linspace(control.min, control.max, SWEEP)})
    if isinstance(control, (widgets.FloatSlider, widgets.BoundedFloatText)):
        return [float(v) for v in np.linspace(control.min, control.max, SWEEP)]
    if isinstance(control, (widgets.Dropdown, widgets.ToggleButtons, widgets.RadioButtons, widgets.SelectionSlider)):
        return [value for _, value in control._options_full] if hasattr(control, "_options_full") \
            else list(dict(control.options).values())
    if isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        return [not control.value, control.value]
    raise AssertionError(f"unknown control type {type(control).__name__}")


def test_registry_is_large_and_named():
    assert len(NAMES) >= 4
    for name, builder in panels.REGISTRY.items():
        assert getattr(panels, name) is builder
        assert builder.__doc__, f"panel {name} needs a docstring"


def log_axis_problems(figure):
    """Each log axis (plots.log_axes) is labelled by two powers of ten or more inside its
    limits, in plain text (mathtext labels cost a parse each the first time), and has no
    minor ticks (each an artist: half a second of a first drawing)."""
    problems = []
    for i, ax in enumerate(figure.axes):
        for which, axis, lim in (("x", ax.xaxis, ax.get_xlim()), ("y", ax.yaxis, ax.get_ylim())):
            if axis.get_scale() not in ("log", "symlog"):
                continue
            lo, hi = sorted(lim)
            inside = [t for t in axis.get_majorticklocs() if lo <= t <= hi]
            if len(inside) < 2:
                problems.append(f"axes {i} {which}: {len(inside)} labelled tick(s) in "
                                f"[{lo:g}, {hi:g}]")
            if len(axis.get_minorticklocs()):
                problems.append(f"axes {i} {which}: {len(axis.get_minorticklocs())} minor ticks")
            labels = [axis.get_major_formatter()(t, k) for k, t in enumerate(inside)]
            if any("$" in label for label in labels):
                problems.append(f"axes {i} {which}: mathtext labels {labels}")
    return problems


def test_log_axis_problems_sees_minor_ticks_and_a_bare_axis():
    from dpteach.plots import log_axes, new_figure
    fig, ax = new_figure()
    log_axes(ax)
    ax.set_xlim(1e-3, 1e3)
    ax.set_ylim(2, 8)                          # no power of ten inside
    assert log_axis_problems(fig) == ["axes 0 y: 0 labelled tick(s) in [2, 8]"]
    ax.set_yscale("log")                       # matplotlib's default: minor ticks back
    ax.set_ylim(1e-2, 1e2)                     # and labels through mathtext
    problems = log_axis_problems(fig)
    assert [p.split(":")[0] for p in problems] == ["axes 0 y", "axes 0 y"]
    assert "minor ticks" in problems[0] and "mathtext" in problems[1]
    assert [ax.xaxis.get_major_formatter()(t) for t in (1e-3, 1.0, 1e3)] == ["10⁻³", "10⁰", "10³"]


#: a formula written as plain text: roots, powers, products, bounds, functions applied
#: to arguments (exp(, ln(, Lap(, Pr[), or a Greek letter in arithmetic or a comparison.
#: "ε = 1" (a value) and a marker named in brackets, "(×)", are not formulas.
_FORMULA = re.compile(r"[√^·²³±≤≥½Φ∑∫]|\w\s*×\s*\w|\b(exp|ln|log|Lap|Pr)\s*[\[(]|\bln \w"
                      r"|[εδσμαβπΔρλ][′']?\s*[/*+−<>]|[/*+−<>]\s*[εδσμαβπΔρλ]")
_MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$", re.S)


def plain_formula_texts(figure):
    """The titles, axis labels (colour bars' too) and legend entries of a figure that hold
    a formula outside mathtext's $...$; notes and the status line (readouts of numbers)
    are not checked."""
    texts = [figure._suptitle] if figure._suptitle is not None else []
    for ax in figure.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
    for legend in figure.legends:
        texts += legend.get_texts()
    return [t.get_text() for t in texts if _FORMULA.search(_MATH.sub("", t.get_text()))]


def test_formulas_in_labels_are_found_outside_mathtext_only():
    fig = Figure()
    ax = fig.subplots()
    ax.set_xlabel("noise σ / √n")
    ax.set_ylabel(r"noise $\sigma/\sqrt{n}$")
    ax.set_title("Disjoint bins, Lap(1/ε) each")
    ax.plot([0], [0], label="true δ / target δ")
    ax.plot([0], [0], label=r"classic formula past $\varepsilon = 1$")
    ax.plot([0], [0], label="no change (ε = 0)")
    ax.legend()
    assert plain_formula_texts(fig) == ["Disjoint bins, Lap(1/ε) each", "noise σ / √n",
                                        "true δ / target δ"]


def pixels(png):
    return np.asarray(PILImage.open(io.BytesIO(png)).convert("RGBA"))


@pytest.mark.parametrize("name", NAMES)
def test_panel_contract_and_every_control_changes_the_picture(name):
    panel = panels.REGISTRY[name]()
    twin = panels.REGISTRY[name]()      # moved the same way, but drawn from scratch
    assert isinstance(panel.figure, Figure)
    assert isinstance(panel.widget, widgets.Widget)
    assert panel.controls and all(isinstance(c, widgets.ValueWidget) for c in panel.controls.values())
    assert panel.name == name and name in repr(panel)        # named by the registry
    data, _ = panel._repr_mimebundle_()
    assert "image/png" in data and "application/vnd.jupyter.widget-view+json" in data
    assert log_axis_problems(panel.figure) == [], name
    assert plain_formula_texts(panel.figure) == [], f"{name}: formulas outside mathtext"
    times = []
    for cname, control in panel.controls.items():
        start = control.value
        pictures = {panel.png()}
        for value in control_values(control) + [start]:
            t0 = time.perf_counter()
            control.value = value
            times.append(time.perf_counter() - t0)
            pictures.add(panel.png())
            # blitting (cached backgrounds, axes redrawn alone) must give the very
            # picture a full draw gives: no stale tick labels, no lost artists
            twin._update(**panel.values())          # same updates, same random draws
            full = twin._renderer.render(full=True)
            if full != panel.png():                   # equal bytes: equal pixels, no decoding
                np.testing.assert_array_equal(pixels(panel.png()), pixels(full),
                                              err_msg=f"{name}: {cname}={value!r}")
        assert len(pictures) >= 2, f"{name}: moving {cname!r} never changed the picture"
    twin.close()
    panel.close()
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / "panel_timings.csv", "a", newline="") as fh:
        csv.writer(fh).writerow([name, len(times), f"{statistics.median(times):.4f}", f"{max(times):.4f}"])
    # the redraw budget (50 ms median) is measured by benchmarks/bench_panels.py, not here:
    # a test must not depend on how busy the machine is


def test_png_holds_the_canvas_pixels():
    panel = panels.laplace_density()
    png = panel.png()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    canvas = np.asarray(panel.figure.canvas.buffer_rgba())
    np.testing.assert_array_equal(pixels(png), canvas)
    image = PILImage.open(io.BytesIO(png))
    assert image.size == panel.figure.canvas.get_width_height() and image.mode == "RGBA"


def test_returning_to_earlier_axis_limits_reuses_the_background():
    panel = panels.audit_convergence()
    control = panel.controls["mechanism"]
    first, second = [value for _, value in control._options_full][:2]
    control.value = second
    control.value = first
    cached = dict(panel._renderer._backgrounds)
    before = panel.png()
    control.value = second
    control.value = first
    assert panel.png() == before
    assert panel._renderer._backgrounds.keys() == cached.keys()


def test_audit_panel_y_range_holds_every_mechanisms_lower_bound():
    panel = panels.audit_convergence()
    ax = panel.figure.axes[0]
    top = ax.get_ylim()[1]
    lower_bound = ax.get_lines()[0]
    alpha = panel.controls["alpha"]
    alpha.value = 10 ** alpha.max                    # the largest α: the highest bound
    for _, name in panel.controls["mechanism"]._options_full:
        panel.controls["mechanism"].value = name
        assert np.max(lower_bound.get_ydata()) < top, name
        assert ax.get_ylim()[1] == top                # switching mechanism moves no axis
    panel.close()


def test_closed_panel_is_no_longer_restyled():
    panel = panels.laplace_density()
    assert panel in dp.style._live_panels
    panel.close()
    assert panel not in dp.style._live_panels
    assert panel.widget.comm is None and panel.controls["epsilon"].comm is None


def test_controls_redraw_synchronously():
    panel = panels.laplace_density()
    before = panel.png()
    panel.controls["epsilon"].value = 5.0
    assert panel.png() != before
    assert "b = Δf/ε = 0.2" in panel.status.value


def test_lecture_mode_restyles_live_panels_and_back():
    panel = panels.laplace_privacy_loss()
    ax = panel.figure.axes[0]
    normal = ax.xaxis.label.get_fontsize()
    before = panel.png()
    try:
        style = dp.style.lecture_mode()
        assert style["font"] >= 16
        assert ax.xaxis.label.get_fontsize() >= 16
        assert max(line.get_linewidth() for line in ax.get_lines()) >= 3
        assert panel.png() != before
        fresh = panels.laplace_density()
        assert fresh.figure.axes[0].xaxis.label.get_fontsize() >= 16
    finally:
        dp.style.lecture_mode(False)
    assert ax.xaxis.label.get_fontsize() == pytest.approx(normal)


def _text_sizes(panel):
    return sorted(round(t.get_fontsize(), 6) for t in panel.figure.findobj(
        lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text") and a.get_text()))


def test_a_panel_built_in_lecture_mode_is_sized_like_a_live_one():
    """Legends and notes with font sizes of their own scale too, the layout is redone
    for the bigger texts (no title cut off), and the controls' labels and the status
    line are projector-sized (the panel's stylesheet under its lecture class)."""
    live = panels.laplace_privacy_loss()
    try:
        dp.style.lecture_mode()
        fresh = panels.laplace_privacy_loss()
        assert _text_sizes(fresh) == _text_sizes(live)
        legend = fresh.figure.axes[0].get_legend()
        assert legend is None or min(t.get_fontsize() for t in legend.get_texts()) >= 13
        fresh.figure.canvas.draw()
        width = fresh.figure.bbox.width
        for ax in fresh.figure.axes:
            box = ax.title.get_window_extent() if ax.get_title() else None
            assert box is None or (box.x0 >= 0 and box.x1 <= width), ax.get_title()
        assert LECTURE_CLASS in fresh.widget._dom_classes
        assert fresh.status.style.font_size and fresh.status.style.font_size.endswith("px")
        assert any(LECTURE_CLASS in getattr(w, "value", "")
                   for w in fresh.widget.children)
    finally:
        dp.style.lecture_mode(False)
    assert LECTURE_CLASS not in fresh.widget._dom_classes
    assert fresh.status.style.font_size is None
    assert _text_sizes(fresh) == _text_sizes(panels.laplace_privacy_loss())


def test_lecture_mode_refuses_non_boolean():
    with pytest.raises(TypeError, match="on"):
        dp.style.lecture_mode("yes")


def _readout_text(control, value):
    """What the browser's readout shows (d3-format) for the formats log sliders use."""
    from dpteach.panels._controls import readout
    fmt = control.readout_format
    if fmt == ".0f":
        return f"{value:.0f}"
    if fmt == ".1e":
        return readout(value, tiny=True)
    assert fmt == ".2r", f"{control.description!r}: readout format {fmt!r}"
    return readout(value, tiny=False)


@pytest.mark.parametrize("name", NAMES)
def test_log_slider_moves_land_on_readable_values(name):
    """Every position of every log slider, set as the browser sets it, gives a value of
    at most two significant figures (whole for counts; three where two would put the
    handle back where it was, as notebook 14's 100 -> 105) whose readout is short: no
    0.501, 99.76 or 0.00000100 after arrow-key moves."""
    from dpteach.panels._controls import snap
    panel = panels.REGISTRY[name]()
    for control in panel.controls.values():          # the values only: no redraws
        control.unobserve(panel._on_change, names="value")
    try:
        for key, control in panel.controls.items():
            if not isinstance(control, widgets.FloatLogSlider):
                continue
            whole = control.readout_format == ".0f"
            steps = int(round((control.max - control.min) / control.step))
            for k in range(steps + 1):
                control.set_state({"value": control.base ** (control.min + k * control.step)})
                value = control.value
                assert value in (snap(value, whole=whole), snap(value, whole=whole, figures=3),
                                 control.base ** control.min, control.base ** control.max), (key, value)
                text = _readout_text(control, value)
                assert len(text) <= 8, f"{name}.{key}: readout {text!r} for {value!r}"
    finally:
        for control in panel.controls.values():
            control.observe(panel._on_change, names="value")
        panel.close()


def test_the_dp_sgd_legends_never_cover_the_attack_curve():
    """Notebook 18: whatever the run, no legend box lies over a point of the attack's
    (alpha, beta) curve or of the trade-off bound."""
    panel = panels.dp_sgd_attack()
    fig = panel.figure
    try:
        for _, sigma in panel.controls["noise_multiplier"].options:
            panel.controls["noise_multiplier"].value = sigma
            fig.canvas.draw()
            renderer = fig.canvas.get_renderer()
            boxes = [ax.get_legend().get_window_extent(renderer) for ax in fig.axes
                     if ax.get_legend() is not None]
            curves = [line for line in fig.axes[1].get_lines() if len(line.get_xdata()) > 2]
            assert curves and boxes
            for line in curves:
                xy = line.get_transform().transform(line.get_xydata())
                for box in boxes:
                    inside = ((xy[:, 0] > box.x0) & (xy[:, 0] < box.x1)
                              & (xy[:, 1] > box.y0) & (xy[:, 1] < box.y1))
                    assert not inside.any(), (sigma, line.get_label())
    finally:
        panel.close()
