"""Notebook 11 panel: watch an audit's lower bound on epsilon converge as runs accumulate."""

from __future__ import annotations

import numpy as np

from .. import audit as _audit
from ..audit import zoo as _zoo
from ..attacks.floating_point import rule_out_fractions
from ..plots import PALETTE, band, density_line, hline, label_axes, new_figure, note, set_band
from ._controls import dropdown, float_slider, log_slider, snap
from ._panel import Panel
from ._registry import register

#: zoo entries offered by the panel (a mix of correct and broken ones)
PANEL_MECHANISMS = ("laplace", "laplace_scale_is_epsilon", "noisy_max_releases_value",
                    "randomized_response", "randomized_response_wrong_keep", "exponential",
                    "exponential_without_half", "sparse_vector_no_query_noise",
                    "discrete_laplace")
_N_SELECT = 5_000
_N_MAX = 50_000
_N_STEP = 0.05          # the runs slider's step in log10(n)
#: the run counts the slider can land on (its moves are rounded to two significant
#: figures), so the panel shows exactly the n its readout shows
_GRID = np.unique([int(snap(10 ** (np.log10(50) + _N_STEP * k), whole=True))
                   for k in range(int(np.log10(_N_MAX / 50) / _N_STEP + 1e-9) + 1)] + [_N_MAX])


def precompute_audit_counts():
    """:func:`dpteach.audit.audit_convergence_counts` for this panel's mechanisms and grid."""
    return _zoo.audit_convergence_counts(PANEL_MECHANISMS, _GRID, n_select=_N_SELECT,
                                           rng=np.random.default_rng(11))


_ALPHA_MAX = 0.5


@register
def audit_convergence(mechanism="laplace_scale_is_epsilon", n=10_000, claimed_epsilon=1.0,
                      alpha=0.05):
    """Lower bound on epsilon (and its two-sided band) against the number of runs n."""
    options = [(f"{name} ({'correct' if _zoo.ZOO[name].private else 'broken'})", name)
               for name in PANEL_MECHANISMS]
    controls = {
        "mechanism": dropdown("mechanism", options, mechanism),
        "n": log_slider("runs n", n, np.log10(_GRID[0]), np.log10(_N_MAX), _N_STEP,
                        readout_format=".3g"),
        "claimed_epsilon": float_slider("claimed ε", claimed_epsilon, 0.1, 5.0, 0.05),
        "alpha": log_slider("α", alpha, -6, np.log10(_ALPHA_MAX), 0.1),
    }
    table = precompute_audit_counts()          # the arguments are checked: now the work
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.8))
    g = _GRID.astype(float)
    lg = np.log10(g)          # a linear axis in log10(n) with fixed ticks draws faster than a log axis
    zeros = np.zeros_like(g)
    shade = band(ax, lg, zeros, zeros, color=PALETTE["sky"], alpha=0.3,
                 label="two-sided band")
    lb_line = density_line(ax, lg, zeros, color=PALETTE["blue"], label="lower bound ε_lb")
    est_line = density_line(ax, lg, zeros, color=PALETTE["grey"], linestyle=":",
                            label="point estimate")
    claim_line = hline(ax, claimed_epsilon, color=PALETTE["vermillion"], label="claimed ε")
    now_line = ax.axvline(np.log10(n), color=PALETTE["black"], linewidth=0.8, alpha=0.6)
    (dot,) = ax.plot([np.log10(n)], [0.0], "o", color=PALETTE["blue"])
    ax.set_xlim(lg[0], lg[-1])
    ticks = np.arange(2, int(np.floor(lg[-1])) + 1)
    ax.set_xticks(ticks, [f"$10^{t}$" for t in ticks])
    label_axes(ax, "runs per input n (log scale)", "ε (nats)", "Auditing a mechanism")
    # a figure legend outside the axes is part of the cached background: no cost per move
    fig.legend(handles=[lb_line, shade, est_line, claim_line], loc="outside lower center",
               ncol=4, fontsize=8, frameon=False)
    txt = note(ax, "", loc="upper left")
    # one fixed y-range for every mechanism, tall enough for the highest lower bound
    # (reached at the largest α) and for the claimed-ε slider (up to 5): switching
    # mechanism then moves no axis, and the mechanisms can be compared at a glance
    top = 1.1 * max(5.0, max(float(np.max(_audit.epsilon_interval(
        row["count_num"], row["count_den"], _GRID, alpha=_ALPHA_MAX)[0])) for row in table.values()))
    ax.set_ylim(0.0, top)

    def update(mechanism, n, claimed_epsilon, alpha):
        row = table[mechanism]
        entry = _zoo.ZOO[mechanism]
        lo, hi = _audit.epsilon_interval(row["count_num"], row["count_den"], _GRID, alpha=alpha)
        est = _audit.epsilon_point_estimate(row["count_num"], row["count_den"], _GRID)
        hi_c = np.minimum(hi, 10 * top)
        set_band(shade, lg, lo, hi_c)
        lb_line.set_ydata(lo)
        est_line.set_ydata(np.minimum(est, 10 * top))
        claim_line.set_ydata([claimed_epsilon, claimed_epsilon])
        i = int(np.argmin(np.abs(np.log(g) - np.log(n))))
        now_line.set_xdata([lg[i], lg[i]])
        dot.set_data([lg[i]], [lo[i]])
        refuted = lo[i] > claimed_epsilon
        verdict = "REFUTED" if refuted else "no violation found"
        txt.set_text(f"n = {int(g[i]):,}: ε ≥ {lo[i]:.3g}, {verdict}")
        truth = ("unbounded" if entry.actual_epsilon == np.inf else
                 f"{entry.actual_epsilon:.3g}" if entry.actual_epsilon is not None else "unknown")
        return (f"n = {int(g[i]):,} runs per input: ε ≥ <b>{lo[i]:.3f}</b> with confidence "
                f"{1 - alpha:.6g}; two-sided band [{lo[i]:.3f}, {hi[i]:.3f}]. Claimed ε = "
                f"{claimed_epsilon:.3g}: <b>{verdict}</b>. (Author's claim "
                f"{entry.claimed_epsilon:.3g}; true privacy loss on these neighbours: {truth}.) "
                f"Event E: {row['event']}, more likely on {row['numerator']}.")

    return Panel(controls, fig, update, title="Auditing ε: a lower bound from counts")


_FP_EPSILONS = np.geomspace(0.01, 10, 10)
_FP_VALUES = (0.0, 20.0, 1000.0)


def precompute_fp_fractions():
    """:func:`dpteach.attacks.floating_point.rule_out_fractions` on this panel's grid."""
    return rule_out_fractions(_FP_VALUES, _FP_EPSILONS, n_outputs=150, rng=np.random.default_rng(12))


@register
def fp_attack_fraction(epsilon=0.1, true_value=0.0, sampler="naive"):
    """How often one floating-point Laplace release rules out the neighbouring input."""
    controls = {
        "epsilon": log_slider("ε", epsilon, -2, 1, 0.25),
        "true_value": dropdown("true count", [(f"{v:g}", v) for v in _FP_VALUES], true_value),
        "sampler": dropdown("sampler", [("textbook inverse CDF", "naive"),
                                        ("numpy Generator.laplace", "numpy")], sampler),
    }
    table = precompute_fp_fractions()          # the arguments are checked: now the work
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.6))
    le = np.log10(_FP_EPSILONS)
    colors = [PALETTE["blue"], PALETTE["orange"], PALETTE["green"]]
    lines = [density_line(ax, le, np.zeros_like(le), color=c, label=f"true count {v:g}")
             for v, c in zip(_FP_VALUES, colors)]
    (dot,) = ax.plot([np.log10(epsilon)], [0.0], "o", color=PALETTE["black"], markersize=8)
    ax.set_xlim(le[0] - 0.05, le[-1] + 0.05)
    ax.set_ylim(0, 1.25)             # room above the curves for the note
    ax.set_xticks([-2, -1, 0, 1], ["0.01", "0.1", "1", "10"])
    label_axes(ax, r"$\varepsilon$ of the count (scale $b = 1/\varepsilon$, log scale)",
               "share of releases ruling out input + 1", "Floating-point attack")
    fig.legend(handles=lines, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    txt = note(ax, "", loc="upper right")

    def update(epsilon, true_value, sampler):
        frac, truth = table[sampler]
        for line, row in zip(lines, frac):
            line.set_ydata(row)
        i = _FP_VALUES.index(true_value)
        j = int(np.argmin(np.abs(le - np.log10(epsilon))))
        dot.set_data([le[j]], [frac[i, j]])
        txt.set_text(f"ε = {_FP_EPSILONS[j]:.3g}: {frac[i, j]:.0%} ruled out")
        return (f"At ε = {_FP_EPSILONS[j]:.3g} with true count {true_value:g}, "
                f"<b>{frac[i, j]:.0%}</b> of single releases from the {sampler} sampler are "
                "impossible from the neighbouring count: they reveal the input exactly. The "
                f"true count was ruled out for {truth[i, j]:.0%} of them.")

    return Panel(controls, fig, update, title="Floating-point Laplace leaks the input")
