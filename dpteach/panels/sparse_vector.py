"""Panels for notebook 15: AboveThreshold on a stream of queries; Sparse with c answers."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from .. import mechanisms, sparse_vector
from ..plots import PALETTE, hline, label_axes, log_axes, new_figure, note
from ._controls import dropdown, float_slider, int_slider, log_slider
from ._panel import Panel
from ._registry import register

_K_MAX = 60
_RUNS = 4000          # runs per seed for the distribution of the reported query


def reported_counts(answers, threshold, epsilon, rho, nu):
    """Reported index (k = none) of every run, with unit Laplace noise rho (runs, 1) and
    nu (runs, k) scaled to AboveThreshold's 2/epsilon and 4/epsilon (sensitivity 1)."""
    above = answers[None, :] + (4.0 / epsilon) * nu >= threshold + (2.0 / epsilon) * rho
    return np.where(above.any(axis=1), above.argmax(axis=1), answers.size)


@register
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

    return Panel(controls, fig, update, title="The sparse vector technique: report the first query above", full_draw_on_move=True)


_SPARSE_K = 60                 # the stream: sv.example_answers(60)
_C_MAX = 10
_ERROR_RUNS = 200              # runs per c for the error curve (the seed fixes them)
_ALGORITHMS = [("Sparse (indices only)", "sparse"), ("NumericSparse (+ values)", "numeric")]


def _error_axes(ax2, cs):
    """The bottom of :func:`sparse_answers`: the error against c (bound, measured, noise
    scale, the stream's largest error, and a ring at the chosen c), lines still empty."""
    (bound_line,) = ax2.plot(cs, cs * 1.0, "-", color=PALETTE["black"],
                             label=r"bound $8c(\ln k + \ln(2c/\beta))/\varepsilon$, $\beta = 0.05$")
    (meas_line,) = ax2.plot(cs, cs * 1.0, "o-", color=PALETTE["blue"],
                            label=r"measured: 95% of runs have error $\leq$")
    (noise_line,) = ax2.plot(cs, cs * 1.0, "--", color=PALETTE["orange"],
                             label=r"noise scale of each answer (Sparse: $4c/\varepsilon$)")
    (cap_line,) = ax2.plot([0.5, _C_MAX + 0.5], [1.0, 1.0], ":", color=PALETTE["grey"], linewidth=1.5,
                           label=r"largest error possible on this stream, $\max_i |a_i - T|$")
    (here,) = ax2.plot([], [], "o", color=PALETTE["vermillion"], markersize=11, fillstyle="none",
                       markeredgewidth=2)
    log_axes(ax2, x=False)
    ax2.set_xlim(0.5, _C_MAX + 0.5)
    ax2.set_ylim(0.5, 3e4)
    ax2.set_xticks(cs)
    label_axes(ax2, "answers $c$ (one budget ε for all)", r"error $\alpha$ (people)",
               r"Accuracy falls as $c$ grows at fixed $\varepsilon$ (an error of 0 is drawn at 0.5)")
    ax2.legend(loc="upper left", fontsize=8, ncol=2)
    return bound_line, meas_line, noise_line, cap_line, here


@register
def sparse_answers(epsilon=1.0, c=2, threshold=60.0, algorithm="sparse", seed=0):
    """Sparse and NumericSparse (Dwork & Roth 2014, Algorithms 2 and 3) on 60 queries.

    Top: the true answers (bars), the threshold T (dashed), one run's noisy thresholds
    (a step: fresh noise after each answer) and noisy answers up to the stop; the answered
    queries in colour, and with NumericSparse the value released for each. Bottom: the
    error alpha of a run (95% of 200 runs per c, the seed fixes them) against c at the
    chosen epsilon, with Dwork & Roth's bound 8c(ln k + ln(2c/beta))/eps at beta = 0.05.
    """
    answers = sparse_vector.example_answers(_SPARSE_K)
    controls = {"epsilon": log_slider("privacy ε", epsilon, -1, 1),
                "c": int_slider("answers c", c, 1, _C_MAX),
                "threshold": float_slider("threshold T", threshold, 30.0, 90.0, 1.0,
                                          readout_format=".0f"),
                "algorithm": dropdown("algorithm", _ALGORITHMS, algorithm),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, (ax1, ax2) = new_figure(2, 1, figsize=(9.0, 6.0), height_ratios=[1.5, 1.0])
    x = np.arange(_SPARSE_K)
    edges = np.arange(_SPARSE_K + 1) - 0.5
    ax1.stairs(answers, edges, fill=True, color=PALETTE["grey"], label="true answer $a_i$")
    t_line = hline(ax1, threshold, color=PALETTE["black"], label="threshold $T$")
    (noisy_t,) = ax1.plot([], [], color=PALETTE["vermillion"], linewidth=1.6,
                          drawstyle="steps-mid", label=r"noisy threshold $\hat T$ in force")
    (dots,) = ax1.plot([], [], "o", color=PALETTE["blue"], markersize=3.5,
                       label="noisy answer (until the stop)")
    (hits,) = ax1.plot([], [], "o", color=PALETTE["orange"], markersize=9, fillstyle="none",
                       markeredgewidth=2.2, label="answered")
    (values,) = ax1.plot([], [], "D", color=PALETTE["purple"], markersize=6,
                         label="value released (NumericSparse)")
    (stop,) = ax1.plot([], [], ":", color=PALETTE["black"], linewidth=1.2)
    ax1.set_xlim(-0.8, _SPARSE_K - 0.2)
    ax1.set_ylim(-60, 200)
    label_axes(ax1, "query $i$", "answer (people)", "One run: which queries are answered")
    ax1.legend(loc="upper left", fontsize=8, ncol=3)
    txt1 = note(ax1, "", loc="lower right")
    cs = np.arange(1, _C_MAX + 1)
    bound_line, meas_line, noise_line, cap_line, here = _error_axes(ax2, cs)
    curves = {}

    def error_curve(epsilon, threshold, numeric, seed):
        key = (epsilon, threshold, numeric, seed)
        if key not in curves:
            q95 = np.empty(_C_MAX)
            for j, cc in enumerate(cs):
                runs = sparse_vector.sparse_draws(answers, threshold, epsilon * (8 / 9 if numeric else 1),
                                                  cc, size=_ERROR_RUNS,
                                                  rng=np.random.default_rng([seed, cc]))
                err = sparse_vector.sparse_run_error(answers, threshold, runs.answered, cc)
                q95[j] = np.quantile(err, 0.95)
            if len(curves) > 64:
                curves.clear()
            curves[key] = q95
        return curves[key]

    def update(epsilon, c, threshold, algorithm, seed):
        numeric = algorithm == "numeric"
        run = sparse_vector.sparse_draws(answers, threshold, epsilon, c, size=1, numeric=numeric,
                                         rng=np.random.default_rng([seed, 15]))
        answered = run.answered[0]
        seen = run.examined[0]
        t_line.set_ydata([threshold, threshold])
        noisy_t.set_data(x[seen], run.noisy_thresholds[0][seen])
        dots.set_data(x[seen], run.noisy_answers[0][seen])
        hits.set_data(x[answered], answers[answered])
        values.set_data(x[answered] if numeric else [], run.values[0][answered] if numeric else [])
        last = int(x[seen][-1])
        stop.set_data([last + 0.5] * 2 if last < _SPARSE_K - 1 else [], [-60, 200] if last < _SPARSE_K - 1 else [])
        b_t, b_q, b_v = sparse_vector.sparse_scales(epsilon, c, numeric=numeric)
        off = int(np.sum((run.noisy_answers[0][seen] < -60) | (run.noisy_answers[0][seen] > 200)))
        scales = f"noise: threshold Lap({b_t:.3g}), each answer Lap({b_q:.3g})"
        if numeric:
            scales += f",\neach released value Lap({b_v:.3g})"
        txt1.set_text(scales + (f"\n{off} noisy answer(s) off the scale" if off else ""))
        q95 = error_curve(epsilon, threshold, numeric, seed)
        bound = np.array([sparse_vector.sparse_accuracy_bound(_SPARSE_K, epsilon * (8 / 9 if numeric else 1),
                                                              0.05, cc) for cc in cs])
        bound_line.set_ydata(bound)
        noise_line.set_ydata([sparse_vector.sparse_scales(epsilon, cc, numeric=numeric)[1] for cc in cs])
        cap_line.set_ydata([np.abs(answers - threshold).max()] * 2)
        meas_line.set_ydata(np.maximum(q95, 0.5))
        here.set_data([c], [max(q95[c - 1], 0.5)])
        found = ", ".join(f"{i} ({answers[i]:.0f})" for i in np.flatnonzero(answered)) or "none"
        above = int(np.sum(answers >= threshold))
        return (f"ε = {epsilon:.3g}, c = {c}, T = {threshold:.0f}: {above} of the {_SPARSE_K} true "
                f"answers are ≥ T. This run answers queries {found}. Over {_ERROR_RUNS} runs, 95% "
                f"have error α ≤ {q95[c - 1]:.0f} people (c = 1: {q95[0]:.0f}); the bound is "
                f"{bound[c - 1]:.0f}.")

    return Panel(controls, fig, update, title="Sparse: c answers above the threshold, one budget")
