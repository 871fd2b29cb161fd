"""Panel for notebook 20: MWEM builds a synthetic table round by round.

Every number comes from :mod:`dpteach.synthetic`; the panel only draws.
"""

from __future__ import annotations

import numpy as np

from .. import synthetic
from ..plots import PALETTE, label_axes, new_figure, note
from ._base import Panel, float_slider, int_slider, register

_T_MAX = 30


@register("mwem_synthetic")
def mwem_synthetic(epsilon=1.0, rounds=15, passes=5, seed=0):
    """MWEM on the 8 x 4 example table with its 180-query workload.

    Top: the 32 cells of the true table (grey) and of MWEM's synthetic table after the
    chosen number of rounds (blue), condition by condition. Bottom: the largest workload
    error after each round, against the uniform table and the independent-marginals
    baseline at the same epsilon (both dashed). "update passes" > 1 repeats the
    multiplicative-weights update over every measurement so far (free post-processing).
    """
    controls = {"epsilon": float_slider("privacy ε", epsilon, 0.1, 5.0, 0.1, readout_format=".1f"),
                "rounds": int_slider("rounds T", rounds, 1, _T_MAX),
                "passes": int_slider("update passes", passes, 1, 10),
                "seed": int_slider("seed", seed, 0, 20)}
    table = synthetic.example_table()          # the arguments are checked: now the work
    queries = synthetic.table_workload(*table.shape)
    n = table.sum()
    fig, (ax1, ax2) = new_figure(2, 1, figsize=(9.0, 5.8))
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
    (err_line,) = ax2.plot([], [], "o-", color=PALETTE["blue"], markersize=3, label="MWEM after each round")
    uni = ax2.axhline(0.0, color=PALETTE["black"], linestyle="--", label="uniform table")
    ind = ax2.axhline(0.0, color=PALETTE["orange"], linestyle="--", label="independent marginals")
    ax2.set_xlim(0, _T_MAX)
    ax2.set_ylim(0, 1.1 * synthetic.workload_error(table, np.full(table.shape, n / table.size), queries))
    label_axes(ax2, "round", "largest workload error (people)", "Error on the 180 queries")
    ax2.legend(loc="upper right", fontsize=8)
    txt = note(ax2, "", loc="lower left")

    def update(epsilon, rounds, passes, seed):
        history, _ = synthetic.mwem_rounds(table, queries, epsilon, rounds, passes=passes,
                                           rng=np.random.default_rng(seed))
        errors = [synthetic.workload_error(table, h, queries) for h in history]
        synth.set_data(history[-1].T.ravel())
        err_line.set_data(np.arange(rounds + 1), errors)
        base_uniform = errors[0]
        base_ind = synthetic.workload_error(
            table, synthetic.independent_marginals(table, epsilon, rng=np.random.default_rng(seed)), queries)
        uni.set_ydata([base_uniform, base_uniform])
        ind.set_ydata([base_ind, base_ind])
        txt.set_text(f"after {rounds} rounds: {errors[-1]:.0f}\nuniform {base_uniform:.0f}, "
                     f"independent {base_ind:.0f}")
        return (f"ε = {epsilon:.1f} over T = {rounds} rounds (ε/T = {epsilon / rounds:.3f} each): the "
                f"largest error on the 180 queries is {errors[-1]:.0f} people, against {base_uniform:.0f} "
                f"for the uniform table and {base_ind:.0f} for independent marginals.")

    return Panel(controls, fig, update, title="MWEM: a synthetic table from a workload",
                 name="mwem_synthetic")
