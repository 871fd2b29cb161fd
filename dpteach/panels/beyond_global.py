"""Panels for notebook 19: local sensitivity, propose-test-release, smooth sensitivity.

Every number comes from :mod:`dpteach.beyond_global`; the panels only draw.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.patches import Rectangle

from .. import beyond_global as bg
from ..plots import PALETTE, label_axes, log_axes, new_figure, note, vline
from ._controls import float_slider, int_slider, log_slider
from ._panel import Panel
from ._registry import register

LOWER, UPPER = 0.0, 100.0   # ages, say: every value is clamped to [0, 100]


def example_dataset(n, spread, seed):
    """n values (odd n) around 40 with the given spread, rounded to whole years and clamped
    to [0, 100]: the panels' data. A small spread makes the median stable."""
    g = np.random.default_rng(seed)
    return np.clip(np.round(40.0 + spread * g.standard_normal(n)), LOWER, UPPER)


#: the largest n the median panel offers; its k slider and k axis both run to it, so the
#: k = n end (where A(k) reaches upper - lower) can be selected for every n
N_MAX = 61


def _nowrap(text):
    """An HTML span the status line does not break inside (a formula stays whole)."""
    return f'<span style="white-space:nowrap">{text}</span>'


@register
def median_local_sensitivity(n=21, spread=10.0, k=2, beta=0.2, seed=0):
    """The median's local sensitivity at distance k, A(k), for a slider-chosen dataset.

    Top: the sorted values; the median in colour and, shaded, the window of k + 2 values
    around it whose widest gap x_{m+t} - x_{m+t-k-1} is A(k). Bottom: A(k) against k
    (steps), the discounted e^(-k beta) A(k) whose maximum is the smooth sensitivity, and
    the global sensitivity upper - lower. The k slider reaches k = n for every n offered.
    """
    controls = {"n": int_slider("records n (odd)", n, 5, N_MAX, step=2),
                "spread": float_slider("spread (years)", spread, 0.0, 40.0, 1.0, readout_format=".0f"),
                "k": int_slider("distance k", k, 0, N_MAX),
                "beta": float_slider("smoothing β", beta, 0.02, 1.0, 0.02),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, (ax1, ax2) = new_figure(2, 1, figsize=(9.0, 6.0), height_ratios=[1.0, 1.6])
    fig.get_layout_engine().set(h_pad=0.12, hspace=0.06)
    (points,) = ax1.plot([], [], "o", color=PALETTE["grey"], markersize=5, label="sorted values")
    (median,) = ax1.plot([], [], "o", color=PALETTE["orange"], markersize=9, label="median")
    # a Rectangle in (data x, axes y): axvspan returns a Polygon before matplotlib 3.9
    window = Rectangle((0.0, 0.0), 1.0, 1.0, transform=ax1.get_xaxis_transform(),
                       color=PALETTE["sky"], alpha=0.35, label="values A(k) looks at")
    ax1.add_patch(window)
    ax1.set_xlim(-2, 102)
    ax1.set_ylim(-1.0, 1.0)          # the values on y = 0; legend below, numbers above them
    ax1.set_yticks([])
    label_axes(ax1, "value (clamped to [0, 100])", None, "The data, sorted")
    ax1.legend(loc="lower right", ncol=3)
    txt = note(ax1, "", loc="upper left")
    ks = np.arange(0, N_MAX + 1)
    (a_line,) = ax2.step([], [], where="post", color=PALETTE["blue"], label=r"$A(k)$")
    (disc,) = ax2.plot([], [], color=PALETTE["vermillion"], label=r"$\exp(-k\beta)\,A(k)$")
    ax2.axhline(UPPER - LOWER, color=PALETTE["black"], linestyle=":", label="global sensitivity 100")
    k_line = vline(ax2, k, color=PALETTE["grey"])
    ax2.set_xlim(0, N_MAX)
    ax2.set_ylim(0, 110)
    label_axes(ax2, "distance k (records changed)", "sensitivity (years)",
               "Local sensitivity at distance k, and its smooth bound")
    ax2.legend(loc="center right")

    def update(n, spread, k, beta, seed):
        n = n if n % 2 else n + 1  # the slider steps by 2 from 5; an even n typed in rounds up
        x = np.sort(example_dataset(n, spread, seed))
        m = (n + 1) // 2
        a = bg.local_sensitivity_median(x, LOWER, UPPER, distance=ks)
        points.set_data(x, np.zeros(n))
        median.set_data([x[m - 1]], [0.0])
        bottom, top = bg.median_sensitivity_window(x, LOWER, UPPER, k)
        window.set_x(bottom)
        window.set_width(top - bottom)
        a_line.set_data(ks, a)
        disc.set_data(ks, np.exp(-ks * beta) * a)
        k_line.set_xdata([k, k])
        smooth = bg.smooth_sensitivity_median(x, LOWER, UPPER, beta)
        txt.set_text(f"A(0) = {a[0]:.0f}, A({k}) = {a[k]:.0f}; A(k) = 100 from k = n = {n}\n"
                     f"smooth sensitivity (β = {beta:.2f}) = {smooth:.2f}")
        return (f"n = {n}, median {x[m - 1]:.0f}: local sensitivity {_nowrap(f'A(0) = {a[0]:.0f}')}; "
                f"within {k} changed records it can grow to {_nowrap(f'A({k}) = {a[k]:.0f}')}. "
                f"With β = {beta:.2f} the smooth sensitivity "
                f"{_nowrap(f'max<sub>k</sub> e<sup>−kβ</sup>A(k) = {smooth:.2f}')} (global: 100).")

    return Panel(controls, fig, update, title="The median's local sensitivity at distance k")


#: the distances the PTR panel draws; both of its axes in d cover all of them
D_MAX = 60.0


@register
def ptr_answer_rate(spread=5.0, bound=2.0, epsilon=1.0, delta=1e-6, seed=0):
    """Propose-test-release: how often it answers, against how stable the data are.

    Top: the answer probability of PTR against the distance to instability d (curve), with
    this dataset's d (marker); the threshold ln(1/δ)/(ε/2) dashed. Bottom: the distance d
    for every proposed bound b on this dataset (steps, an infinite d drawn at 60), the
    chosen b marked.
    """
    n = 101
    controls = {"spread": float_slider("spread (years)", spread, 0.0, 40.0, 1.0, readout_format=".0f"),
                "bound": float_slider("proposed bound b", bound, 0.5, 20.0, 0.5, readout_format=".1f"),
                "epsilon": float_slider("privacy ε", epsilon, 0.1, 3.0, 0.1, readout_format=".1f"),
                "delta": log_slider("δ", delta, -9, -2, step=1.0, readout_format=".0e"),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, (ax1, ax2) = new_figure(2, 1, figsize=(9.0, 6.0))
    fig.get_layout_engine().set(h_pad=0.15, hspace=0.08)
    ds = np.linspace(0, D_MAX, 241)
    (curve,) = ax1.plot([], [], color=PALETTE["blue"], label=r"$\Pr[\mathrm{answer}]$ given $d$")
    (mark,) = ax1.plot([], [], "o", color=PALETTE["orange"], markersize=9, label="this dataset",
                       clip_on=False, zorder=5)
    thr = vline(ax1, 0.0, color=PALETTE["black"], label=r"threshold $\ln(1/\delta)/(\varepsilon/2)$")
    ax1.set_xlim(0, D_MAX)
    ax1.set_ylim(-0.05, 1.05)
    label_axes(ax1, "distance to instability d (records)", r"$\Pr[\mathrm{PTR\ answers}]$",
               "PTR answers only when the data are far from unstable")
    ax1.legend(loc="center right")
    txt = note(ax1, "", loc="upper left")
    bounds = np.linspace(0.5, 20.0, 40)
    (dline,) = ax2.step([], [], where="post", color=PALETTE["green"], clip_on=False)
    bmark = vline(ax2, bound, color=PALETTE["orange"])
    ax2.set_xlim(0.5, 20)
    ax2.set_ylim(0, D_MAX + 2)
    label_axes(ax2, "proposed bound b (years)", "d (records)", "This dataset's distance to instability")

    def update(spread, bound, epsilon, delta, seed):
        x = example_dataset(n, spread, seed)
        threshold = bg.ptr_threshold(epsilon, delta)
        curve.set_data(ds, bg.ptr_pass_probability(ds, epsilon, delta))
        thr.set_xdata([threshold, threshold])
        d = bg.distance_to_instability(x, LOWER, UPPER, bound)
        p = bg.ptr_answer_probability(x, LOWER, UPPER, epsilon, delta, proposed_bound=bound)
        mark.set_data([min(d, D_MAX)], [p])
        dist = [min(bg.distance_to_instability(x, LOWER, UPPER, b), D_MAX) for b in bounds]
        dline.set_data(bounds, dist)
        bmark.set_xdata([bound, bound])
        dtext = "∞" if math.isinf(d) else f"{d:.0f}"
        txt.set_text(f"d = {dtext}, Pr[answer] = {p:.3g}")
        return (f"With spread {spread:.0f} and b = {bound:.1f}, the median is {dtext} changed records "
                f"from a dataset whose local sensitivity exceeds b; PTR answers with probability "
                f"{p:.3g} ({_nowrap(f'threshold {threshold:.1f}')}). Otherwise it says ⊥ (no answer).")

    return Panel(controls, fig, update, title="Propose-test-release for the median")


#: the odd n of the smooth-against-global panel, log-spaced from 11 to 1,001 (dense enough that
#: the crossing point moves with epsilon and delta)
N_GRID = np.unique(np.round(np.logspace(1, 3, 41) / 2).astype(int) * 2 + 1)


@register
def smooth_vs_global_error(epsilon=1.0, delta=1e-6, spread=10.0, seed=0):
    """Expected absolute error of the median: smooth-sensitivity noise against Laplace noise
    scaled to the global sensitivity, for n from 11 to 1,001 (log axes).

    Mean |Lap(b)| is b: global b = 100/ε; smooth b = 2S/ε with S the β-smooth sensitivity,
    β = ε/(2 ln(2/δ)), of a dataset of n values drawn with the seed.
    """
    controls = {"epsilon": float_slider("privacy ε", epsilon, 0.1, 3.0, 0.1, readout_format=".1f"),
                "delta": log_slider("δ", delta, -9, -2, step=1.0, readout_format=".0e"),
                "spread": float_slider("spread (years)", spread, 1.0, 40.0, 1.0, readout_format=".0f"),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, ax = new_figure(1, 1, figsize=(9.0, 4.6))
    (glob,) = ax.plot([], [], color=PALETTE["black"], linestyle="--",
                      label=r"global sensitivity: $100/\varepsilon$")
    (smooth,) = ax.plot([], [], "o-", color=PALETTE["blue"], label=r"smooth sensitivity: $2S/\varepsilon$")
    log_axes(ax)
    ax.set_xlim(8, 1300)
    ax.set_ylim(1e-2, 2e3)
    label_axes(ax, "records n", "mean |error| of the median (years)",
               "Smooth sensitivity pays off as n grows")
    ax.legend(loc="lower left", fontsize=9)
    txt = note(ax, "", loc="upper right")
    data = {}

    def update(epsilon, delta, spread, seed):
        key = (spread, seed)
        if key not in data:
            data[key] = [np.sort(example_dataset(int(n), spread, seed)) for n in N_GRID]
        beta = bg.smooth_beta(epsilon, delta)
        s = np.array([bg.smooth_sensitivity_median(x, LOWER, UPPER, beta) for x in data[key]])
        err = 2.0 * s / epsilon
        glob.set_data([8, 1300], [100.0 / epsilon] * 2)
        smooth.set_data(N_GRID, np.maximum(err, 1e-2))
        cross = N_GRID[np.argmax(err < 100.0 / epsilon)] if np.any(err < 100.0 / epsilon) else None
        txt.set_text(f"β = {beta:.3f}\nat n = {N_GRID[-1]}: {err[-1]:.2f} vs {100 / epsilon:.0f}")
        where = f"from n = {cross} on" if cross is not None else "at no n shown"
        return (f"ε = {epsilon:.1f}, δ = {delta:.0e}: smooth-sensitivity noise beats global-sensitivity "
                f"noise {where}; at n = {N_GRID[-1]} its mean error is {err[-1]:.2f} years against "
                f"{100 / epsilon:.0f}.")

    return Panel(controls, fig, update, title="Smooth against global sensitivity")
