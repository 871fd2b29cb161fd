"""Panel for notebook 15: AboveThreshold on a stream of queries."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from .. import mechanisms, sparse_vector
from ..plots import PALETTE, hline, label_axes, new_figure, note
from ._base import Panel, float_slider, int_slider, log_slider, register

_K_MAX = 60
_RUNS = 4000          # runs per seed for the distribution of the reported query


def reported_counts(answers, threshold, epsilon, rho, nu):
    """Reported index (k = none) of every run, with unit Laplace noise rho (runs, 1) and
    nu (runs, k) scaled to AboveThreshold's 2/epsilon and 4/epsilon (sensitivity 1)."""
    above = answers[None, :] + (4.0 / epsilon) * nu >= threshold + (2.0 / epsilon) * rho
    return np.where(above.any(axis=1), above.argmax(axis=1), answers.size)


@register("sparse_vector_queries")
def sparse_vector_queries(threshold=70.0, epsilon=0.5, k=40, seed=0):
    """AboveThreshold on k counting queries: which one is reported, and how often each is.

    Top: the true answers (bars), the threshold T (dashed), this seed's noisy threshold
    (solid) and noisy answers (dots) up to the stop; the reported query in colour. Bottom:
    how often each query is reported over 4,000 runs (the seed fixes their noise), with
    "none" at the right.
    """
    answers_all = sparse_vector.example_answers(_K_MAX)
    controls = {"threshold": float_slider("threshold T", threshold, 0.0, 100.0, 1.0,
                                          readout_format=".0f"),
                "epsilon": log_slider("privacy ε", epsilon, -1, 1),
                "k": int_slider("queries k", k, 5, _K_MAX),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, (ax1, ax2) = new_figure(2, 1, figsize=(9.0, 5.6), height_ratios=[1.4, 1.0])
    pools = {}
    x = np.arange(_K_MAX)
    # one step patch per bar chart (one artist to redraw, not sixty bars)
    edges = np.arange(_K_MAX + 1) - 0.5
    bars = ax1.stairs(answers_all, edges, fill=True, color=PALETTE["grey"], label="true answer")
    chosen = Rectangle((-0.5, 0.0), 1.0, 0.0, color=PALETTE["orange"], label="reported")
    ax1.add_patch(chosen)
    t_line = hline(ax1, threshold, color=PALETTE["black"], label="threshold T")
    (noisy_t,) = ax1.plot([-0.5, _K_MAX - 0.5], [threshold] * 2, color=PALETTE["vermillion"],
                          linewidth=1.6, label="noisy threshold T̂")
    (dots,) = ax1.plot([], [], "o", color=PALETTE["blue"], markersize=4,
                       label="noisy answer (until the stop)")
    ax1.set_xlim(-0.8, _K_MAX - 0.2)
    ax1.set_ylim(-60, 160)
    label_axes(ax1, None, "answer (people)", "One run of AboveThreshold")
    ax1.legend(loc="upper left", fontsize=8, ncol=4)
    txt = note(ax1, "", loc="lower right")
    freq_bars = ax2.stairs(np.zeros(_K_MAX), edges, fill=True, color=PALETTE["sky"])
    none_bar = Rectangle((_K_MAX - 0.4, 0.0), 0.8, 0.0, color=PALETTE["purple"])
    ax2.add_patch(none_bar)
    ax2.set_xlim(-0.8, k + 0.8)
    ax2.set_ylim(0, 1.0)
    label_axes(ax2, "query index i (the last bar: none reported)", "share of runs",
               f"Which query is reported, over {_RUNS} runs")
    txt2 = note(ax2, "", loc="upper left")

    def update(threshold, epsilon, k, seed):
        if seed not in pools:
            g = np.random.default_rng(seed)
            unit = mechanisms.laplace_mechanism       # Lap(1) streams, rescaled on redraw
            pools[seed] = (unit(0.0, 1.0, 1.0, rng=g, size=(_RUNS, 1)),
                           unit(0.0, 1.0, 1.0, rng=g, size=(_RUNS, _K_MAX)))
        rho, nu = pools[seed]
        a = answers_all[:k]
        # this seed's run is run 0 of the pool
        noisy_threshold = threshold + (2.0 / epsilon) * rho[0, 0]
        noisy = a + (4.0 / epsilon) * nu[0, :k]
        hit = np.flatnonzero(noisy >= noisy_threshold)
        index = int(hit[0]) if hit.size else k
        bars.set_data(np.where(x < k, answers_all, 0.0))
        chosen.set_x(index - 0.5)
        chosen.set_height(a[index] if index < k else 0.0)
        t_line.set_ydata([threshold, threshold])
        noisy_t.set_data([-0.5, k - 0.5], [noisy_threshold] * 2)
        seen = min(index + 1, k)
        dots.set_data(np.arange(seen), noisy[:seen])
        err = sparse_vector.run_error(a, threshold, index)
        what = f"reported query {index} (answer {a[index]:.0f})" if index < k else "no query reported"
        txt.set_text(f"{what}\nerror α of this run = {err:.1f}")
        reported = reported_counts(a, threshold, epsilon, rho, nu[:, :k])
        share = np.bincount(reported, minlength=k + 1) / _RUNS
        freq_bars.set_data(np.concatenate([share[:k], np.zeros(_K_MAX - k)]))
        none_bar.set_height(share[k])
        none_bar.set_x(k - 0.4)
        # the axes hold the k queries asked (and "none"), and the answers, thresholds and
        # noisy answers drawn, in steps of 20 people so that most moves keep the limits
        if ax1.get_xlim() != (-0.8, k - 0.2):          # only when k moved: ticks cost a redraw
            ax1.set_xlim(-0.8, k - 0.2)
            ax2.set_xlim(-0.8, k + 0.8)
            ticks = list(range(0, k - 4, 10 if k > 20 else 5))
            ax2.set_xticks(ticks + [k], [str(t) for t in ticks] + ["none"])
        shown = np.concatenate([a, noisy[:seen], [threshold, noisy_threshold, 0.0]])
        ylim = (20 * np.floor(shown.min() / 20 - 0.25), 20 * np.ceil(shown.max() / 20 + 0.6))
        if ax1.get_ylim() != ylim:
            ax1.set_ylim(*ylim)
        first_true = np.flatnonzero(a >= threshold)
        errors = np.array([sparse_vector.run_error(a, threshold, i) for i in range(k + 1)])[reported]
        beta = 0.05
        bound = sparse_vector.accuracy_bound(k, epsilon, beta)
        truth = (f"first true answer ≥ T: query {first_true[0]}" if first_true.size
                 else "no true answer ≥ T")
        txt2.set_text(f"{truth}\n95% of runs: error ≤ {np.quantile(errors, 0.95):.1f} "
                      f"(bound {bound:.0f})")
        return (f"T = {threshold:.0f}, ε = {epsilon:.3g}, k = {k}: this run {what}, error α = "
                f"{err:.1f} people. Over {_RUNS} runs the error is at most "
                f"{np.quantile(errors, 0.95):.1f} in 95% of them; Dwork & Roth's bound "
                f"8(ln k + ln(2/β))/ε at β = 0.05 is {bound:.1f}.")

    return Panel(controls, fig, update, title="The sparse vector technique: report the first query above",
                 name="sparse_vector_queries", full_draw_on_move=True)
