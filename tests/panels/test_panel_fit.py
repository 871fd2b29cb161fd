"""The panels of notebooks 12-18 fit what they draw and say what they show: axes that
hold their curves, legends that cover none, slider labels short enough to leave the
track wide, titles and labels that name what a mark means. Each builds the panel headless."""

import math

import matplotlib
import pytest

import dpteach as dp
from dpteach import rdp

matplotlib.use("Agg")


_MINE = ["postprocessing", "group_privacy_loss", "parallel_histogram", "loss_distribution",
         "tradeoff_curves", "tradeoff_attack", "clipping_tradeoff", "sparse_vector_queries",
         "sparse_answers", "local_protocols_variance"]


@pytest.mark.parametrize("name", _MINE)
def test_controls_leave_the_slider_wide(name):
    # 330 px per control; a label of at most 22 characters leaves well over 100 px of track
    panel = dp.panels.REGISTRY[name]()
    for key, control in panel.controls.items():
        assert len(control.description) <= 22, (name, key, control.description)
    panel.close()


def test_loss_distribution_axes_fit_the_curves():
    panel = dp.panels.loss_distribution()
    ax, ax2 = panel.figure.axes[:2]
    for mech in ("laplace", "randomized_response"):
        panel.controls["mechanism"].value = mech
        panel.controls["ratio"].value = 0.5
        assert ax2.get_xlim()[1] <= 1.25 and ax.get_xlim()[0] >= -1.25 and ax.get_xlim()[1] <= 1.25
    panel.controls["mechanism"].value = "gaussian"
    assert ax2.get_xlim()[1] <= panel.controls["ratio"].max
    panel.close()


def test_sparse_vector_axes_fit_the_queries():
    panel = dp.panels.sparse_vector_queries()
    ax1, ax2 = panel.figure.axes[:2]
    assert ax1.get_xlim()[1] < 40 and ax2.get_xlim()[1] < 42        # k = 40 queries and "none"
    assert ax1.get_ylim()[0] > -50
    panel.controls["k"].value = 60
    assert ax1.get_xlim()[1] > 59
    panel.close()


def test_tradeoff_attack_is_the_size_of_the_others():
    attack = dp.panels.tradeoff_attack()
    other = dp.panels.loss_distribution()
    assert tuple(attack.figure.get_size_inches()) == tuple(other.figure.get_size_inches())
    attack.close()
    other.close()


def test_clipping_legend_covers_no_curve():
    panel = dp.panels.clipping_tradeoff()
    fig = panel.figure
    fig.canvas.draw()
    ax2 = fig.axes[1]
    box = ax2.get_legend().get_window_extent()
    assert not box.overlaps(ax2.get_window_extent())
    panel.close()


def test_postprocessing_slider_says_what_it_sets():
    panel = dp.panels.postprocessing()
    seen = {}
    for f in ("round", "clamp", "threshold"):
        panel.controls["f"].value = f
        seen[f] = panel.controls["parameter"].description
    assert seen == {"round": "rounding step", "clamp": "clamp width c", "threshold": "threshold t"}
    panel.close()


def test_five_ways_panel_shows_ratios_and_both_lines():
    p = dp.panels.accounting_five_ways()
    ax1, ax2 = p.figure.axes[:2]
    assert ax2.get_xlim()[0] >= 0.5                         # the ratio axis starts near 1
    c = rdp.composition_epsilons(20.0, 1e-6, [100])
    ratios = {n: c[n][0] / c["exact"][0] for n in c}
    widths = [b.get_width() for b in ax2.patches if hasattr(b, "get_width")][:5]
    names = ["basic", "advanced", "zcdp", "rdp", "exact"]
    for n, w in zip(names, widths):
        assert w == pytest.approx(min(ratios[n], 200.0) - 1.0, rel=1e-9, abs=1e-12)
    lines = {ln.get_label(): ln for ln in ax1.get_lines()}
    rdp_line = next(v for k, v in lines.items() if k.startswith("RDP"))
    exact_line = next(v for k, v in lines.items() if k.startswith("exact"))
    assert rdp_line.get_linewidth() > 2 * exact_line.get_linewidth() / 1.0 - 0.1
    assert exact_line.get_zorder() > rdp_line.get_zorder()
    assert exact_line.get_linestyle() == ":"


def test_local_vs_central_axes_fit_and_labels_fit():
    p = dp.panels.local_vs_central()
    ax2 = p.figure.axes[1]
    lo, hi = ax2.get_ylim()
    assert lo >= -0.1 and hi <= 0.8                         # not down to -0.3
    assert 7 < ax2.get_xlim()[1] <= 8                       # 8 categories, not 32
    background = p._renderer._background
    p.controls["epsilon"].value = 2.0                       # blitted over the same background:
    assert p._renderer._background is background            # only a move of k draws in full
    p.controls["k"].value = 20
    assert 19 < ax2.get_xlim()[1] <= 20                     # the x range follows k
    assert p._renderer._background is not background
    p.controls["epsilon"].value = 1.0
    labels = [o[0] if isinstance(o, tuple) else o for o in p.controls["mechanism"].options]
    assert all(len(str(s)) <= 28 for s in labels), labels
    # the central baseline is Lap(2/ε): its formula line is 2√2/(εn)
    ax1 = p.figure.axes[0]
    central = next(ln for ln in ax1.get_lines() if str(ln.get_label()).startswith("central, Lap"))
    x, yv = central.get_data()
    assert yv[0] == pytest.approx(2 * math.sqrt(2) / x[0], rel=1e-9)


def test_dp_sgd_panel_says_what_the_region_and_the_crosses_are():
    p = dp.panels.dp_sgd_attack()
    ax2 = p.figure.axes[1]
    title = ax2.get_title()
    assert "forbidden" in title and "thresholds inside it beyond doubt" in title
    labels = [t.get_text() for t in ax2.get_legend().get_texts()]
    assert not any("CP 1e-6" in t for t in labels)
    assert any("Clopper-Pearson" in t for t in labels)
