"""Panel for notebook 10: one task, three mechanisms.

``choosing_count_error`` releases one count in {0, ..., 100} with the Laplace mechanism,
the analytic Gaussian mechanism and the exponential mechanism (score -|r - count|), and
plots each one's expected absolute error against epsilon (computed exactly by
:func:`dpteach.comparison.count_release_errors`) beside their output distributions
(cumulative, so that the axes stay fixed while the sliders move).
"""

from __future__ import annotations

import numpy as np

from .. import mechanisms
from .._support.validate import valid_values
from .._support.densities import laplace_cdf, normal_cdf
from .._support.gaussian import unit_sigma
from ..comparison import count_release_error_curves, count_release_errors
from ..plots import PALETTE, density_line, label_axes, log_axes, new_figure, note, vline
from ._controls import int_slider, log_slider, readout
from ._panel import Panel
from ._registry import register

__all__ = ["error_curves", "choosing_count_error"]

N_MAX = 100
EPS_GRID = np.geomspace(0.02, 10, 40)
_NAMES = ("Laplace", "Gaussian", "Exponential")
_COLOURS = {"Laplace": PALETTE["orange"], "Gaussian": PALETTE["blue"],
            "Exponential": PALETTE["green"]}


def error_curves(epsilons, *, delta, count):
    """Expected absolute errors of the three mechanisms over ``epsilons`` (dict of arrays)."""
    epsilons = valid_values(epsilons, "epsilons")
    if epsilons.ndim != 1 or (epsilons <= 0).any():
        raise ValueError("epsilons must be a 1-D list of epsilons > 0")
    return count_release_error_curves(epsilons, delta=delta, count=count, n_max=N_MAX)


@register
def choosing_count_error(epsilon=0.5, delta=1e-5, count=50):
    """Expected error of Laplace, Gaussian and exponential releases of one count."""
    controls = {"epsilon": log_slider("ε", epsilon, -1.7, 1),
                "delta": log_slider("δ (Gaussian)", delta, -10, -2, 0.25, readout_format=".0e"),
                "count": int_slider("true count (range 0–100)", count, 0, N_MAX)}
    fig, (ax, ax2) = new_figure(1, 2, figsize=(9.4, 3.5))
    nan = np.full_like(EPS_GRID, np.nan)
    curves = {n: density_line(ax, EPS_GRID, nan, color=_COLOURS[n], label=n) for n in _NAMES}
    curves["Exponential"].set_linestyle("--")
    dots = {n: ax.plot([epsilon], [1.0], "o", color=_COLOURS[n], zorder=5)[0] for n in _NAMES}
    mark = vline(ax, epsilon, color=PALETTE["black"], linestyle="-")
    log_axes(ax, plain=True)
    ax.set_xlim(EPS_GRID[0], EPS_GRID[-1])
    ax.set_ylim(0.01, 300)
    label_axes(ax, "ε", "expected |error| (counts)", "error of one released count")
    txt = note(ax, "", loc="upper right")
    r = np.arange(N_MAX + 1)
    x = np.linspace(-20, N_MAX + 20, 281)
    zero = np.zeros_like(x)
    d_lap = density_line(ax2, x, zero, color=_COLOURS["Laplace"])
    d_gau = density_line(ax2, x, zero, color=_COLOURS["Gaussian"])
    (d_exp,) = ax2.step(r, np.zeros_like(r, float), where="post", color=_COLOURS["Exponential"],
                        linestyle="--")
    c_mark = vline(ax2, count)
    ax2.axvspan(-20, -0.5, color=PALETTE["grey"], alpha=0.15, lw=0)
    ax2.axvspan(N_MAX + 0.5, N_MAX + 20, color=PALETTE["grey"], alpha=0.15, lw=0)
    ax2.set_xlim(x[0], x[-1])
    ax2.set_ylim(0, 1.02)
    label_axes(ax2, "released value (grey: outside 0–100)", r"$\Pr[\mathrm{release} \leq x]$",
               "output distributions at this ε")
    fig.legend(loc="outside lower center", ncols=3, fontsize="small")
    cache = {}

    def update(epsilon, delta, count):
        key = (delta, count)
        if key not in cache:                     # the curves depend on delta and the count only
            cache.clear()
            cache[key] = error_curves(EPS_GRID, delta=delta, count=count)
        for n in _NAMES:
            curves[n].set_ydata(cache[key][n])
        now = count_release_errors(epsilon, delta=delta, count=count, n_max=N_MAX)
        for n in _NAMES:
            dots[n].set_data([epsilon], [now[n]])
        mark.set_xdata([epsilon, epsilon])
        b = mechanisms.laplace_scale(1.0, epsilon)
        sigma = unit_sigma(float(epsilon), float(delta))   # gaussian_sigma(1, .., analytic=True)
        # = mechanisms.output_distribution(count, b).cdf(x) (and the Gaussian's): the same
        # floats in closed form, without scipy.stats
        d_lap.set_ydata(laplace_cdf(x, count, b))
        d_gau.set_ydata(normal_cdf(x, count, sigma))
        p = mechanisms.exponential_probabilities(-np.abs(r - count), 1.0, epsilon)
        d_exp.set_ydata(np.cumsum(p))
        c_mark.set_xdata([count, count])
        best = min(now, key=now.get)
        txt.set_text("\n".join(f"{n}: {now[n]:.3g}" for n in _NAMES) + f"\nbest: {best}")
        return (f"ε = {epsilon:.3g}, δ = {readout(delta, tiny=True)}: expected |error| "
                + ", ".join(f"{n} {now[n]:.3g}" for n in _NAMES) + f"; smallest: {best}")

    return Panel(controls, fig, update, title="Choosing a mechanism: one count, three ways")
