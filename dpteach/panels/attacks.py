"""Panels for notebook 02, attacks on released statistics: differencing through a
curator, the averaging attack on a naive noisy server, and the same attacker against a
budgeted curator."""

from __future__ import annotations

import numpy as np

from .. import mechanisms
from .._support.validate import valid_epsilon
from ..accounting import BudgetExceededError, PrivacyAccountant
from ..attacks.averaging import averaging_error
from ..attacks.differencing import difference_noise_pdf
from ..plots import (PALETTE, band, density_line, hline, label_axes, log_axes, new_figure,
                    note, set_band, vline)
from ._controls import checkbox, int_slider, log_slider
from ._panel import Panel
from ._registry import register

__all__ = ["attacks_differencing", "attacks_averaging", "attacks_curator_budget"]

_SEED = 2026
_SEED_MAX = 20      # the seed sliders run over 0..20, as in the other panels


def _stream(base, seed, size):
    """Unit-scale Laplace noise for one slider seed (seed 0 is the stream drawn from
    ``base``); the sliders only rescale and cut it, so a redraw costs microseconds."""
    return mechanisms.laplace_mechanism(0.0, 1.0, 1.0, rng=np.random.default_rng(base + seed),
                                        size=size)


@register
def attacks_differencing(epsilon=0.5, exact=False, seed=0):
    """Seed 004's sickle-cell differencing: count(trait) - count(trait, not named X).
    Exact answers give X's bit outright; a curator's answers at ε each give the bit plus
    Lap(1/ε) - Lap(1/ε). The two curves are the attacker's result in the world where X
    has the trait and in the world where X has not; the closer they are, the less the
    attacker learns. On the log scale their vertical gap is the privacy loss. Only the
    first query depends on X (the second leaves X out), so the gap stays within ε; the
    accountant still charges 2ε, because it cannot know that in advance. The ``seed``
    slider redraws the two Laplace draws of the attack on the real table (the marker)."""
    controls = {"epsilon": log_slider("ε per query", epsilon, -1.5, 1.0),
                "exact": checkbox("exact answers (no noise)", exact),
                "seed": int_slider("seed", seed, 0, _SEED_MAX)}
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.4))
    z = np.linspace(-8, 9, 401)
    line0 = density_line(ax, z, np.ones_like(z), color=PALETTE["blue"],
                         label="X has no trait (truth: 0)")
    line1 = density_line(ax, z, np.ones_like(z), color=PALETTE["vermillion"],
                         label="X has the trait (truth: 1)", linestyle="--")
    spike0 = vline(ax, 0.0, color=PALETTE["blue"], linestyle="-")
    spike1 = vline(ax, 1.0, color=PALETTE["vermillion"], linestyle="--")
    (seen,) = ax.plot([0], [0], "v", color=PALETTE["black"], markersize=9,
                      label="one attack on the real table")
    label_axes(ax, "count(trait) − count(trait, not X)", "density (log scale)",
               "What differencing tells the attacker")
    ax.set_xlim(z[0], z[-1])
    log_axes(ax, x=False)          # the gap between the curves is the privacy loss
    ax.set_ylim(1e-4, 5.0)
    ax.legend(loc="upper right", fontsize=8)
    txt = note(ax, "")

    def update(epsilon, exact, seed):
        b = 1.0 / epsilon
        draw = _stream(_SEED, seed, 2)       # the two queries' unit Laplace noise
        spike0.set_visible(exact)
        spike1.set_visible(exact)
        line0.set_visible(not exact)
        line1.set_visible(not exact)
        if exact:
            seen.set_data([0.0], [2e-4])
            txt.set_text("exact answers: 3 − 3 = 0\nX has no trait, for certain")
            return "Exact counts: the difference is X's bit itself."
        p0 = difference_noise_pdf(z, b)
        p1 = difference_noise_pdf(z - 1.0, b)
        line0.set_ydata(p0)
        line1.set_ydata(p1)
        value = b * (draw[0] - draw[1])          # X really has no trait in seed 004
        seen.set_data([np.clip(value, z[0], z[-1])], [2e-4])
        like = p1 / p0
        txt.set_text(f"b = 1/ε = {b:.3g}\nlikelihood ratio in [{like.min():.3g}, {like.max():.3g}]"
                     f"\n$e^{{\\varepsilon}}$ = {np.exp(epsilon):.3g} (charged: $e^{{2\\varepsilon}}$ = {np.exp(2 * epsilon):.3g})")
        return (f"The attack on the real table returned {value:.3g}. With ε = {epsilon:.3g} per "
                f"query the two worlds' likelihoods differ by at most e<sup>ε</sup> = "
                f"{np.exp(epsilon):.3g}× (only the first query sees X); the budget is "
                f"charged 2ε all the same.")

    return Panel(controls, fig, update,
                 title="Differencing through a curator (seed 004)")


_K_MAX = 1000
_AVERAGING_HALF_RANGE = 30.0    # fixed y-range: truth ± 30 (the default b = 5 fits well)
_CURATOR_HALF_RANGE = 60.0      # fixed y-range: truth ± 60 (b = 1/ε up to about 20 fits)


@register
def attacks_averaging(k=50, scale=5.0, seed=0):
    """The averaging attack on a naive server that adds fresh Lap(b) noise to every
    answer of the same count (true answer 3). The attacker's running mean after k
    answers, with its ±2 standard-deviation band √2·b/√k: the band shrinks as 1/√k and
    the truth emerges, whatever b is. The y-axis stays put, so a larger b visibly
    widens everything; it only delays the moment the band closes in on the truth. The
    ``seed`` slider redraws the server's stream of noise (one stream per seed, scaled by b)."""
    controls = {"k": int_slider("answers k", k, 1, _K_MAX),
                "scale": log_slider("noise scale b", scale, -0.5, 1.5),
                "seed": int_slider("seed", seed, 0, _SEED_MAX)}
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.4))
    ks = np.arange(1, _K_MAX + 1)
    noise = _stream(_SEED, 0, _K_MAX)
    run_mean = np.cumsum(noise) / ks
    truth = 3.0
    sd1 = averaging_error(1.0, ks)
    bnd = band(ax, ks, truth - 2 * sd1, truth + 2 * sd1, color=PALETTE["sky"], alpha=0.3,
               label=r"truth $\pm\, 2\sqrt{2}\,b/\sqrt{k}$")
    (path,) = ax.plot(ks, truth + run_mean, color=PALETTE["blue"], linewidth=1.5,
                      label="attacker's running mean")
    (dots,) = ax.plot(ks[:40], truth + noise[:40], ".", color=PALETTE["grey"], markersize=4,
                      label="single answers")
    hline(ax, truth, color=PALETTE["black"], linestyle=":", label="true count 3")
    kline = vline(ax, k, color=PALETTE["vermillion"])
    log_axes(ax, y=False)
    ax.set_xlim(1, _K_MAX)
    ax.set_ylim(truth - _AVERAGING_HALF_RANGE, truth + _AVERAGING_HALF_RANGE)
    label_axes(ax, "number of answers averaged, k", "estimate of the count",
               "Averaging fresh noise away")
    ax.legend(loc="upper right", fontsize=8)
    txt = note(ax, "", loc="lower left")

    def update(k, scale, seed):
        b = scale
        noise = _stream(_SEED, seed, _K_MAX)
        run_mean = np.cumsum(noise) / ks
        path.set_ydata(truth + b * run_mean)
        dots.set_ydata(truth + b * noise[:40])
        set_band(bnd, ks, truth - 2 * b * sd1, truth + 2 * b * sd1)
        kline.set_xdata([k, k])
        est = truth + b * run_mean[k - 1]
        err = averaging_error(b, k)
        txt.set_text(f"k = {k}: estimate {est:.3g}\nerror sd √2·b/√k = {err:.3g}")
        return (f"After {k} answers the estimate is {est:.3g} (truth 3); its standard "
                f"deviation is √2·{b:.3g}/√{k} = {err:.3g}. To halve it, ask 4× as often.")

    return Panel(controls, fig, update,
                 title="The averaging attack on a naive server")


@register
def attacks_curator_budget(epsilon=0.05, k=60, budget=1.0, seed=0):
    """The same averaging attacker against a curator with a total budget (ε = 1 by
    default). Each answer costs the ε per query and the accountant refuses once the next
    answer would pass the budget, so at most budget/ε answers of noise scale 1/ε are
    released: their mean has standard deviation √2/√(ε·budget) ≥ √2/budget. Splitting
    the budget never beats one answer that spends all of it (composition). The y-axis is
    fixed; answers beyond it are marked at its edge. The ``seed`` slider redraws the
    curator's noise (one unit-scale stream per seed, scaled by 1/ε)."""
    budget = valid_epsilon(budget, "budget")      # not a slider: checked here
    controls = {"epsilon": log_slider("ε per query", epsilon, -2.5, 0.0),
                "k": int_slider("questions asked k", k, 1, 200),
                "seed": int_slider("seed", seed, 0, _SEED_MAX)}
    fig, (ax, axb) = new_figure(1, 2, figsize=(9.2, 3.4),
                                gridspec_kw={"width_ratios": [2.6, 1]})
    ks = np.arange(1, 201)
    truth = 3.0
    (answered,) = ax.plot([], [], ".", color=PALETTE["blue"], markersize=5, label="answers")
    (above,) = ax.plot([], [], linestyle="none", marker=6, color=PALETTE["sky"], markersize=6,
                       label="answers off the chart")
    (below,) = ax.plot([], [], linestyle="none", marker=7, color=PALETTE["sky"], markersize=6)
    (path,) = ax.plot([], [], color=PALETTE["blue"], linewidth=1.8, label="running mean")
    (refused,) = ax.plot([], [], "x", color=PALETTE["vermillion"], markersize=5,
                         label="refused (budget spent)")
    hline(ax, truth, color=PALETTE["black"], linestyle=":", label="true count 3")
    ax.set_xlim(0, 201)
    lim = _CURATOR_HALF_RANGE
    ax.set_ylim(truth - lim, truth + lim)
    label_axes(ax, "question number", "answer", "Averaging against a budgeted curator")
    ax.legend(loc="upper right", fontsize=8, ncols=2)
    bar_spent = axb.bar([0], [0.0], color=PALETTE["orange"], width=0.6)[0]
    hline(axb, budget, color=PALETTE["black"], linestyle="--", label="budget")
    axb.set_xticks([0], ["ε spent"])
    axb.set_xlim(-0.6, 0.6)
    axb.set_ylim(0, 1.15 * budget)
    label_axes(axb, None, "privacy loss (nats)", "Budget")
    txt = note(axb, "", loc="upper left")

    def update(epsilon, k, seed):
        noise = _stream(_SEED + 1, seed, 200)
        acc = PrivacyAccountant(budget)
        n_ok = 0
        for _ in range(k):
            try:
                acc.spend(epsilon)
            except BudgetExceededError:
                break
            n_ok += 1
        b = 1.0 / epsilon
        vals = truth + b * noise[:n_ok]
        # answers off the chart: a caret at the edge they went past
        up, down = vals > truth + lim, vals < truth - lim
        inside = ~(up | down)
        answered.set_data(ks[:n_ok][inside], vals[inside])
        above.set_data(ks[:n_ok][up], np.full(up.sum(), truth + 0.96 * lim))
        below.set_data(ks[:n_ok][down], np.full(down.sum(), truth - 0.96 * lim))
        path.set_data(ks[:n_ok], np.cumsum(vals) / ks[:n_ok])
        n_ref = k - n_ok
        refused.set_data(ks[n_ok:k], np.full(n_ref, truth - 0.85 * lim))   # near the floor
        bar_spent.set_height(acc.spent[0])
        txt.set_text(f"{n_ok} answered\n{n_ref} refused")
        est = vals.mean() if n_ok else float("nan")
        err = averaging_error(b, max(n_ok, 1))
        off = f" ({int((~inside).sum())} beyond ±{lim:g} of the truth)" if (~inside).any() else ""
        return (f"{n_ok} answers at ε = {epsilon:.3g} spend {acc.spent[0]:.3g} of {budget:g}"
                f"{off}; {n_ref} refused. Best estimate {est:.3g}, standard deviation "
                f"√2·b/√{n_ok} = {err:.3g} — no better than one answer at ε = {budget:g} "
                f"(√2 = {np.sqrt(2):.3g}).")

    return Panel(controls, fig, update,
                 title="The averaging attack meets the budget")
