"""Panel for notebook 14: the clipping bound's bias-variance trade-off for a private mean."""

from __future__ import annotations

import numpy as np

from .. import clipping, mechanisms
from ..plots import PALETTE, density_line, label_axes, log_axes, new_figure, note, vline
from ._controls import int_slider, log_slider
from ._panel import Panel
from ._registry import register

_GRID = np.geomspace(5.0, 2000.0, 81)       # candidate upper bounds U (thousand euros)
_RUNS = 600                                  # simulated releases per bound and seed


def error_curves(values, grid, epsilon, unit_noise):
    """Bias, noise sd and RMSE of :func:`dpteach.clipping.clipped_mean` (lower = 0) for
    every upper bound U in ``grid``, from common random numbers: ``unit_noise`` is an array
    (2, runs) of Lap(1) draws reused for every U and epsilon, turned into releases by
    :func:`dpteach.clipping.clipped_mean_releases`. Returns (bias, noise_sd, rmse,
    releases) with releases of shape (len(grid), runs)."""
    releases = clipping.clipped_mean_releases(values, 0.0, grid, epsilon, unit_noise)
    err = releases - float(np.mean(values))
    bias = err.mean(axis=1)
    mean_square = np.einsum("ij,ij->i", err, err) / err.shape[1]
    noise_sd = np.sqrt(np.maximum(mean_square - bias ** 2, 0.0))
    return bias, noise_sd, np.sqrt(mean_square), releases


@register
def clipping_tradeoff(upper=100.0, epsilon=0.5, seed=0):
    """Choose the clipping bound U of a private mean: |bias|, noise and RMSE against U.

    The data: 500 incomes from :func:`dpteach.clipping.example_incomes` (thousand euros,
    lower bound 0). For each U on a grid the panel simulates 600 releases of
    :func:`dpteach.clipping.clipped_mean` (the seed fixes the noise), and marks the U with
    the smallest root mean squared error. Left: the data, U and one release.
    """
    values = clipping.example_incomes()
    n, truth = values.size, float(values.mean())
    controls = {"upper": log_slider("clipping bound U (k€)", upper, np.log10(_GRID[0]),
                                    np.log10(_GRID[-1]), 0.02, readout_format=".4g"),
                "epsilon": log_slider("privacy ε", epsilon, -2, 1),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(10.0, 3.7))
    pools = {}

    # left: the data on a log axis, the bound U and one release
    edges = np.geomspace(1.0, _GRID[-1], 50)
    ax1.hist(values, bins=edges, color=PALETTE["grey"], alpha=0.7, label=f"{n} incomes")
    log_axes(ax1, y=False)
    ax1.set_xlim(edges[0], edges[-1])
    ax1.axvline(truth, color=PALETTE["black"], linestyle=":", linewidth=1.2,
                label=f"true mean {truth:.1f}")
    u_line = vline(ax1, upper, color=PALETTE["vermillion"], linestyle="--", label="bound U")
    rel_line = ax1.axvline(truth, color=PALETTE["blue"], linewidth=2.0, label="one release")
    label_axes(ax1, "income (k€, log scale)", "people", "The data and the clipping bound")
    ax1.legend(loc="upper right", fontsize=8)

    # right: error curves against U
    zeros = np.zeros_like(_GRID)
    l_bias = density_line(ax2, _GRID, zeros, color=PALETTE["orange"], label="|clipping bias|")
    l_noise = density_line(ax2, _GRID, zeros, color=PALETTE["sky"], label="noise (sd)")
    l_rmse = density_line(ax2, _GRID, zeros, color=PALETTE["blue"], label="total error (RMSE)")
    l_pred = density_line(ax2, _GRID, zeros, color=PALETTE["grey"], linestyle=":",
                          label="RMSE predicted (1st order)")
    (best_dot,) = ax2.plot([upper], [1.0], marker="*", markersize=14, color=PALETTE["green"],
                           linestyle="none", label="best U")
    (now_dot,) = ax2.plot([upper], [1.0], marker="o", color=PALETTE["vermillion"],
                          linestyle="none")
    u_line2 = vline(ax2, upper, color=PALETTE["vermillion"])
    log_axes(ax2)
    ax2.set_xlim(_GRID[0], _GRID[-1])
    ax2.set_ylim(0.02, 3000)
    label_axes(ax2, "clipping bound U (k€, log scale)", "error (k€, log scale)",
               "Bias against noise")
    # the legend sits under the axes: inside, it covered the noise and RMSE curves
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8, ncol=3)
    txt = note(ax2, "", loc="upper left")

    def update(upper, epsilon, seed):
        if seed not in pools:
            pools[seed] = mechanisms.laplace_mechanism(                   # Lap(1) noise
                0.0, 1.0, 1.0, rng=np.random.default_rng(seed), size=(2, _RUNS))
        bias, sd, rmse, releases = error_curves(values, _GRID, epsilon, pools[seed])
        predicted = clipping.clipped_mean_error(values, 0.0, _GRID, epsilon)   # first order
        m = predicted.clamped_mean
        l_bias.set_ydata(np.maximum(np.abs(predicted.bias), 1e-9))      # exact, from the data
        l_noise.set_ydata(sd)
        l_rmse.set_ydata(rmse)
        l_pred.set_ydata(predicted.rmse)
        i_best = int(np.argmin(rmse))
        best_dot.set_data([_GRID[i_best]], [rmse[i_best]])
        i = int(np.argmin(np.abs(np.log(_GRID / upper))))
        now_dot.set_data([_GRID[i]], [rmse[i]])
        u_line.set_xdata([upper, upper])
        u_line2.set_xdata([upper, upper])
        one = float(releases[i, 0])
        rel_line.set_xdata([max(one, edges[0])] * 2)
        txt.set_text(f"U = {_GRID[i]:.3g}: clipping bias {m[i] - truth:+.2f}, noise {sd[i]:.2f}, "
                     f"RMSE {rmse[i]:.2f}\nbest U = {_GRID[i_best]:.3g} (RMSE {rmse[i_best]:.2f})")
        return (f"ε = {epsilon:.3g}, U = {_GRID[i]:.4g} k€: clipped mean {m[i]:.2f} vs true mean "
                f"{truth:.2f}; over {_RUNS} releases the average error is {bias[i]:+.2f} (clipping "
                f"plus the floor and clip of the ratio), the noise sd "
                f"{sd[i]:.2f}, the RMSE {rmse[i]:.2f}. Smallest RMSE at U = {_GRID[i_best]:.4g} "
                f"({rmse[i_best]:.2f}). This seed's release: {one:.2f} k€.")

    return Panel(controls, fig, update, title="Clipping a mean: too low is biased, too high is noisy")
