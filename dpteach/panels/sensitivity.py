"""Panel for notebook 05: local against global sensitivity of the mean and the median of
n values in [0, 100], under substitution (n fixed)."""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import sensitivity as sens
from .._support.validate import valid_positive_int, valid_real
from ..plots import PALETTE, bars, label_axes, log_axes, new_figure
from ._controls import float_slider, int_slider
from ._panel import Panel
from ._registry import register

__all__ = ["two_cluster_dataset", "sensitivity_local_global"]

_UNIVERSE = np.arange(101)


def two_cluster_dataset(n, spread, split):
    """n whole numbers in [0, 100]: two clusters centred at 50 -+ split/2, the lower one
    with n // 2 values and the upper one with the rest, each spread like normal
    quantiles with standard deviation ``spread``; rounded and clipped. Deterministic
    (no randomness), so a slider position always shows the same data. Notebook 05.
    """
    n = valid_positive_int(n, "n")
    spread = valid_real(spread, "spread", low=0.0)
    split = valid_real(split, "split", low=0.0, high=100.0)
    lo_n, hi_n = n // 2, n - n // 2

    def cluster(m, centre):
        if m == 0:
            return np.zeros(0)
        z = special.ndtri((np.arange(m) + 0.5) / m)      # normal quantiles (= norm.ppf)
        return centre + spread * z

    x = np.concatenate([cluster(lo_n, 50 - split / 2), cluster(hi_n, 50 + split / 2)])
    return np.clip(np.round(x), 0, 100).astype(int)


def _mean_rows(X):
    return X.mean(axis=1)


def _median_rows(X):
    return np.median(X, axis=1)


@register
def sensitivity_local_global(n=11, spread=8.0, split=0.0):
    """Local sensitivity (how far one substituted record can move the answer on THIS
    dataset) against global sensitivity (the worst case over all datasets), for the mean
    and the median of n values in [0, 100]."""
    controls = {"n": int_slider("n (odd)", n, 3, 25, 2),
                "spread": float_slider("spread within clusters", spread, 0.0, 30.0, 1.0,
                                       readout_format=".0f"),
                "split": float_slider("distance between clusters", split, 0.0, 100.0, 5.0,
                                      readout_format=".0f")}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.6, 3.5), gridspec_kw={"width_ratios": [1.5, 1]})
    (dots,) = ax1.plot([], [], "o", color=PALETTE["blue"], markersize=7, alpha=0.7, label="records")
    (med,) = ax1.plot([], [], "v", color=PALETTE["vermillion"], markersize=12, label="median")
    (mean,) = ax1.plot([], [], "^", color=PALETTE["green"], markersize=12, label="mean")
    label_axes(ax1, "value (in [0, 100])", None, "The dataset")
    ax1.set_xlim(-3, 103)
    ax1.set_ylim(-1, 1)
    ax1.set_yticks([])
    labels = ["mean\nlocal", "mean\nglobal", "median\nlocal", "median\nglobal"]
    bc = bars(ax2, np.arange(4), np.zeros(4), color=PALETTE["sky"])
    for i in (1, 3):
        bc[i].set_color(PALETTE["grey"])
    ax2.set_xticks(np.arange(4), labels)
    log_axes(ax2, x=False, linthresh=1.0)
    ax2.set_ylim(0, 150)
    label_axes(ax2, None, "largest change", "Sensitivity (substitution)")
    fig.legend(loc="outside lower center", ncols=3, fontsize=8)

    def update(n, spread, split):
        x = two_cluster_dataset(n, spread, split)
        jitter = ((np.arange(n) * 7) % 11 - 5) / 12.0
        dots.set_data(x, jitter)
        m, md = float(np.mean(x)), float(np.median(x))
        med.set_data([md], [0.85])
        mean.set_data([m], [-0.85])
        loc_mean = sens.local_sensitivity(_mean_rows, x, _UNIVERSE, neighbours="substitute",
                                          batched=True)
        loc_med = sens.local_sensitivity(_median_rows, x, _UNIVERSE, neighbours="substitute",
                                         batched=True)
        # global values for odd n under substitution: 100/n for the mean, 100 for the
        # median (brute-forced for small n in notebook 05)
        glob_mean, glob_med = 100.0 / n, 100.0
        for b, h in zip(bc, (loc_mean, glob_mean, loc_med, glob_med)):
            b.set_height(h)
        return (f"n = {n}: mean {m:.2f} (local sensitivity {loc_mean:.3g}, global 100/n = "
                f"{glob_mean:.3g}); median {md:g} (local {loc_med:g}, global {glob_med:g})")

    return Panel(controls, fig, update, title="Local against global sensitivity")
