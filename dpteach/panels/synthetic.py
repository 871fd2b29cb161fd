"""Panel for notebook 20: MWEM builds a synthetic table round by round.

Every number comes from :mod:`dpteach.synthetic`; the panel only draws.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from .. import synthetic
from ..plots import PALETTE, label_axes, log_axes, new_figure, note
from ._controls import dropdown, float_slider, int_slider
from ._panel import Panel
from ._registry import register

_T_MAX = 30


@register
def mwem_synthetic(epsilon=1.0, rounds=15, passes=5, seed=0, release="last"):
    """MWEM on the 8 x 4 example table with its 180-query workload.

    Top: the 32 cells of the true table (grey) and of MWEM's synthetic table (blue),
    condition by condition. Bottom: the largest workload error of the table after each
    round (A_1 ... A_T), against three baselines at the same epsilon (dashed): the uniform
    table, the noisy histogram and independent marginals. "release" picks what MWEM
    outputs: the last round's table or the average of the rounds' tables (HLM12's
    Algorithm 1); the star marks the released table's error. "update passes" > 1 repeats
    the multiplicative-weights update over every measurement so far (free post-processing).
    """
    controls = {"epsilon": float_slider("privacy ε", epsilon, 0.1, 5.0, 0.1, readout_format=".1f"),
                "rounds": int_slider("rounds T", rounds, 1, _T_MAX),
                "passes": int_slider("update passes", passes, 1, 10),
                "seed": int_slider("seed", seed, 0, 20),
                "release": dropdown("release", ["last", "average"], release)}
    table = synthetic.example_table()          # the arguments are checked: now the work
    queries = synthetic.table_workload(*table.shape)
    n = table.sum()
    fig, (ax1, ax2) = new_figure(2, 1, figsize=(9.0, 6.2))
    edges = np.arange(table.size + 1) - 0.5
    ax1.stairs(table.T.ravel(), edges, fill=True, color=PALETTE["grey"], alpha=0.6, label="true table")
    synth = ax1.stairs(np.zeros(table.size), edges, color=PALETTE["blue"], linewidth=2.0,
                       label="synthetic (MWEM)")
    for c in range(1, table.shape[1]):
        ax1.axvline(c * table.shape[0] - 0.5, color=PALETTE["black"], linewidth=0.6)
    ax1.set_xticks([table.shape[0] * (c + 0.5) - 0.5 for c in range(table.shape[1])],
                   [f"condition {c}: age groups 0–7" for c in range(table.shape[1])], fontsize=8)
    ax1.set_xlim(-0.6, table.size - 0.4)
    ax1.set_ylim(0, 1.25 * table.max())
    label_axes(ax1, None, "people", "The true table and its synthetic copy")
    ax1.legend(loc="upper right", fontsize=8)
    (err_line,) = ax2.plot([], [], "o-", color=PALETTE["blue"], markersize=3, label="MWEM, table after round i")
    (star,) = ax2.plot([], [], "*", color=PALETTE["blue"], markersize=13, label="MWEM, released table")
    uni = ax2.axhline(1.0, color=PALETTE["black"], linestyle="--", label="uniform table")
    ind = ax2.axhline(1.0, color=PALETTE["orange"], linestyle="--", label="independent marginals")
    hist = ax2.axhline(1.0, color=PALETTE["green"], linestyle="--", label="noisy histogram")
    top = synthetic.workload_error(table, np.full(table.shape, n / table.size), queries)
    ax2.set_ylim(0.3, 30.0 * top)               # room below the lines for the summary, above for the legend
    log_axes(ax2, x=False, plain=True)
    ax2.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax2.grid(False, axis="x")                   # the round axis moves with T: no grid lines
                                                # through the legend (it stays where it is)
    label_axes(ax2, "round i", "largest workload error (people)", "Error on the 180 queries")
    legend = ax2.legend(loc="upper right", fontsize=8, ncol=2)
    # no frame line: the legend's pixels are pasted back over the moving axes, and a
    # frame's antialiased edge would reach past them
    legend.get_frame().set_linewidth(0.0)
    # the summary sits in the lower left, below every line: the baselines stay above 3
    # people for every epsilon of the slider, and MWEM's curve far above them
    txt = note(ax2, "", loc="lower left")

    def update(epsilon, rounds, passes, seed, release):
        history, _ = synthetic.mwem_rounds(table, queries, epsilon, rounds, passes=passes,
                                           rng=np.random.default_rng(seed))
        errors = [synthetic.workload_error(table, h, queries) for h in history]
        out = history[-1] if release == "last" else np.mean(history[1:], axis=0)
        err_out = synthetic.workload_error(table, out, queries)
        synth.set_data(out.T.ravel())
        err_line.set_data(np.arange(rounds + 1), errors)
        star.set_data([rounds], [err_out])
        if ax2.get_xlim() != (-0.5, rounds + 0.5):     # the round axis fits T (redrawn only then)
            ax2.set_xlim(-0.5, rounds + 0.5)
        base_uniform = errors[0]
        base_ind = synthetic.workload_error(
            table, synthetic.independent_marginals(table, epsilon, rng=np.random.default_rng(seed)), queries)
        base_hist = synthetic.workload_error(
            table, synthetic.noisy_histogram(table, epsilon, rng=np.random.default_rng(seed)), queries)
        for line, value in ((uni, base_uniform), (ind, base_ind), (hist, base_hist)):
            line.set_ydata([value, value])
        txt.set_text(f"MWEM ({release}): {err_out:.0f}\nnoisy histogram {base_hist:.0f}\n"
                     f"independent {base_ind:.0f}, uniform {base_uniform:.0f}")
        return (f"ε = {epsilon:.1f} over T = {rounds} rounds (ε/T = {epsilon / rounds:.3f} each): the "
                f"released table ({release}) is off by up to {err_out:.0f} people on the 180 queries, "
                f"against {base_hist:.0f} for the noisy histogram, {base_ind:.0f} for independent "
                f"marginals and {base_uniform:.0f} for the uniform table.")

    return Panel(controls, fig, update, title="MWEM: a synthetic table from a workload")
