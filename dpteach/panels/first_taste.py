"""Panel for notebook 00: a first taste of differential privacy, one count released
with the Laplace mechanism at Dwork's suggested epsilons and a few others."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from .. import bounds, mechanisms
from ..plots import PALETTE, label_axes, new_figure, vline
from ._controls import dropdown, int_slider
from ._panel import Panel
from ._registry import register

__all__ = ["FIRST_TASTE_EPSILONS", "first_taste_count"]

#: the epsilons of notebook 00: Dwork's 0.01, 0.1, ln 2, ln 3 (seed 004) and 1, 10
FIRST_TASTE_EPSILONS = [("0.01", 0.01), ("0.1", 0.1), ("ln 2 ≈ 0.693", float(np.log(2))),
                        ("ln 3 ≈ 1.099", float(np.log(3))), ("1", 1.0), ("10", 10.0)]

TRUE_COUNT = 42
_RELEASES = 25


@register
def first_taste_count(epsilon=float(np.log(3)), seed=0):
    """One count (42 people) released 25 times with Laplace noise Lap(1/ε): how close do
    the releases stay to the truth at each ε? The shaded band holds 95% of releases."""
    controls = {"epsilon": dropdown("privacy ε", FIRST_TASTE_EPSILONS, epsilon),
                "seed": int_slider("another run (seed)", seed, 0, 20)}
    fig, ax = new_figure(1, 1, figsize=(7.6, 3.1))
    span = Rectangle((0, -1), 0, 2, color=PALETTE["sky"], alpha=0.35, linewidth=0,
                     label="95% of releases fall here")
    ax.add_patch(span)
    vline(ax, TRUE_COUNT, color=PALETTE["black"], linestyle="-", label=f"true count {TRUE_COUNT}")
    (dots,) = ax.plot([], [], "o", color=PALETTE["vermillion"], markersize=7, alpha=0.8,
                      label=f"{_RELEASES} noisy releases")
    (out_l,) = ax.plot([], [], "<", color=PALETTE["vermillion"], markersize=9)
    (out_r,) = ax.plot([], [], ">", color=PALETTE["vermillion"], markersize=9)
    lo, hi = -60, 145
    ax.set_xlim(lo, hi)
    ax.set_ylim(-1, 1)
    ax.set_yticks([])
    label_axes(ax, "released count (arrows: off the chart)", None,
               "The same count, released with Laplace noise")
    fig.legend(loc="outside lower center", ncols=3, fontsize=8)
    y = np.linspace(-0.8, 0.8, _RELEASES)

    def update(epsilon, seed):
        r = mechanisms.laplace_mechanism(TRUE_COUNT, 1.0, epsilon, rng=np.random.default_rng(seed),
                                         size=_RELEASES)
        inside = (r >= lo) & (r <= hi)
        dots.set_data(r[inside], y[inside])
        out_l.set_data(np.full((r < lo).sum(), lo + 2), y[r < lo])
        out_r.set_data(np.full((r > hi).sum(), hi - 2), y[r > hi])
        b = mechanisms.laplace_scale(1.0, epsilon)
        t95 = bounds.laplace_accuracy(b, 0.05)
        span.set_x(TRUE_COUNT - t95)
        span.set_width(2 * t95)
        return (f"ε = {epsilon:.4g}: noise scale b = 1/ε = {b:.4g}; 95% of releases are within "
                f"±{t95:.3g} of {TRUE_COUNT}; this run's releases range "
                f"{r.min():.1f} to {r.max():.1f}")

    return Panel(controls, fig, update, title="A first taste: one count, six ε")
