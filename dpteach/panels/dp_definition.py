"""Panels for notebook 04, the definition of differential privacy: randomized response,
delta's "blip", and what epsilon says about an attacker's prior and posterior beliefs.
The computations they draw live in :mod:`dpteach.definition`.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .. import mechanisms
from ..definition import (blip_distributions, max_probability_ratio, posterior_bounds,
                          randomized_response_standard_error, smallest_delta)
from ..plots import PALETTE, bars, density_line, hline, label_axes, log_axes, new_figure, set_band, vline
from ._controls import float_slider, log_slider
from ._panel import Panel
from ._registry import register

__all__ = ["dp_randomized_response", "dp_delta_blip", "dp_prior_posterior"]


# ------------------------------------------------------------------------ panels
@register
def dp_randomized_response(epsilon=float(np.log(3)), pi=0.3, n=1000.0):
    """Randomized response: epsilon against the chance of telling the truth, and the
    error of the unbiased estimate of the true fraction against the number of people.
    The error is Warner's (:func:`dpteach.definition.randomized_response_standard_error`): each simulated survey draws
    its n respondents afresh from a population whose fraction is pi (notebook 04 sets it
    beside the error for one fixed table)."""
    controls = {"epsilon": log_slider("privacy ε", epsilon, -1.3, 0.7, 0.02),
                "pi": float_slider("true fraction π", pi, 0.0, 1.0, 0.05),
                "n": log_slider("respondents n", n, 1, 5, 0.1, readout_format=".0f")}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.6, 3.5))
    eg = np.linspace(0, 5.2, 300)
    density_line(ax1, eg, special.expit(eg), color=PALETTE["blue"], label=r"$p = e^{\varepsilon}/(1+e^{\varepsilon})$")
    ax1.plot([np.log(3)], [0.75], "s", color=PALETTE["green"], markersize=8,
             label=r"seed 004 coin flips: $\varepsilon = \ln 3$, $p = 3/4$")
    (dot,) = ax1.plot([], [], "o", color=PALETTE["vermillion"], markersize=9, label="you")
    hline(ax1, 0.5)
    label_axes(ax1, "ε", r"$\Pr[\mathrm{report\ the\ truth}]$", "Truth-telling probability")
    ax1.set_xlim(0, 5.2)
    ax1.set_ylim(0.45, 1.01)

    ns = np.unique(np.round(np.logspace(1, 5, 25)).astype(int))
    (theory,) = ax2.plot(ns, np.ones(ns.size), color=PALETTE["blue"], label="Warner's standard error (formula)")
    (emp,) = ax2.plot(ns, np.ones(ns.size), "o", color=PALETTE["orange"], markersize=4,
                      label="RMSE of 400 simulated surveys")
    (here,) = ax2.plot([], [], "D", color=PALETTE["vermillion"], markersize=8, label="your n")
    log_axes(ax2)
    label_axes(ax2, "respondents n", "error of the estimate of π", "Estimator error against n")
    ax2.set_xlim(8, 1.3e5)
    ax2.set_ylim(1e-3, 30)
    fig.legend(loc="outside lower center", ncols=3, fontsize=8)
    reps = 400

    def update(epsilon, pi, n):
        n = int(round(n))
        p = mechanisms.randomized_response_keep_probability(epsilon)
        dot.set_data([epsilon], [p])
        se = randomized_response_standard_error(pi, ns, epsilon)
        theory.set_ydata(se)
        q = p * pi + (1 - p) * (1 - pi)
        # the number of reported ones in a survey of n people is Binomial(n, q); a fixed
        # seed makes the same slider position always show the same simulation
        counts = np.random.default_rng(2024).binomial(ns[:, None], q, size=(ns.size, reps))
        est = (counts / ns[:, None] - (1 - p)) / (2 * p - 1)
        emp.set_ydata(np.sqrt(((est - pi) ** 2).mean(axis=1)))
        se_n = randomized_response_standard_error(pi, n, epsilon)
        here.set_data([n], [se_n])
        return (f"ε = {epsilon:.3g}: truth kept with p = {p:.3f}; with n = {n:,} and π = {pi:.2f} "
                f"the estimate's standard error is {se_n:.3g} (Warner's: respondents drawn "
                f"from a population whose fraction is π)")

    return Panel(controls, fig, update, title="Randomized response: privacy against accuracy")


@register
def dp_delta_blip(epsilon=1.0, delta=0.05):
    """Seed 003's "blip": a mechanism that with probability δ publishes Alice's record.
    Its two output distributions agree within e^ε except for an event that only happens
    with Alice in the data: the additive δ covers it, a ratio never can."""
    from scipy import stats
    controls = {"epsilon": log_slider("ε of the noisy count", epsilon, -0.7, 0.7),
                "delta": float_slider("δ: chance of publishing the record", delta, 0.0, 0.3, 0.01,
                                      readout_format=".2f")}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.6, 3.5), gridspec_kw={"width_ratios": [2.2, 1]})
    r = np.linspace(-8, 9, 341)
    lx = density_line(ax1, r, r * 0, color=PALETTE["blue"], label="M(x): Alice out (count 0)")
    ly = density_line(ax1, r, r * 0, color=PALETTE["orange"], linestyle="--",
                      label="M(y): Alice in (count 1)")
    lbound = density_line(ax1, r, r * 0, color=PALETTE["grey"], linestyle=":",
                          label=r"$e^{\varepsilon} \cdot$ density of $M(x)$")
    label_axes(ax1, "released count", "density", r"The noisy-count part (weight $1 - \delta$)")
    ax1.set_xlim(r[0], r[-1])
    ax1.set_ylim(0, 1.3)
    bc = bars(ax2, [0, 1], [0, 0], color=PALETTE["blue"])
    bc[1].set_color(PALETTE["orange"])
    (lim,) = ax2.plot([-0.45, 1.45], [0, 0], color=PALETTE["vermillion"], linewidth=2,
                      label=r"$e^{\varepsilon}\,\Pr[M(x) \in S] + \delta$")
    (ratio_line,) = ax2.plot([-0.45, 1.45], [0, 0], color=PALETTE["purple"], linewidth=2,
                             linestyle="--", label=r"seed 002: $(e^{\varepsilon} + \delta)\,\Pr[M(x) \in S]$")
    ax2.set_xticks([0, 1], ["M(x)", "M(y)"])
    label_axes(ax2, None, r"$\Pr[S]$", "S = {record published}")
    ax2.set_ylim(-0.01, 0.35)
    fig.legend(loc="outside lower center", ncols=3, fontsize=8)

    def update(epsilon, delta):
        b = 1.0 / epsilon
        fx = (1 - delta) * stats.laplace.pdf(r, 0.0, b)
        fy = (1 - delta) * stats.laplace.pdf(r, 1.0, b)
        lx.set_ydata(fx)
        ly.set_ydata(fy)
        lbound.set_ydata(np.exp(epsilon) * fx)
        bc[0].set_height(0.0)
        bc[1].set_height(delta)
        lim.set_ydata([delta, delta])
        _, px, py = blip_distributions(epsilon, delta) if delta > 0 else (None, None, None)
        if delta > 0:
            d_needed = smallest_delta(px, py, epsilon)
            ratio = max_probability_ratio(px, py)
        else:
            d_needed, ratio = 0.0, float(np.exp(epsilon))
        ratio_txt = "∞" if not np.isfinite(ratio) else f"{ratio:.3g}"
        return (f"Additive form holds with δ = {d_needed:.3g} (the blip's probability). "
                f"The ratio form Pr[M(y)∈S]/Pr[M(x)∈S] ≤ e<sup>ε</sup> + δ fails for any δ when the blip is "
                f"possible: the ratio is {ratio_txt}.")

    return Panel(controls, fig, update, title="δ: the probability of a blip")


@register
def dp_prior_posterior(prior=0.3, epsilon=1.0):
    """What an ε-DP release can teach an attacker about one person: the posterior belief
    lies within a factor e^(±ε) of the prior odds, whatever the attacker knew."""
    controls = {"prior": float_slider("attacker's prior belief", prior, 0.01, 0.99, 0.01),
                "epsilon": log_slider("privacy ε", epsilon, -2, 0.7)}
    fig, ax = new_figure(1, 1, figsize=(7.0, 3.6))
    pg = np.linspace(0.0, 1.0, 301)
    density_line(ax, pg, pg, color=PALETTE["grey"], linestyle=":", label=r"no change ($\varepsilon = 0$)")
    hi_line = density_line(ax, pg, pg, color=PALETTE["vermillion"], label="highest posterior")
    lo_line = density_line(ax, pg, pg, color=PALETTE["blue"], label="lowest posterior")
    shade = ax.fill_between(pg, pg, pg, color=PALETTE["sky"], alpha=0.25, linewidth=0)
    seg = vline(ax, prior, color=PALETTE["black"], linestyle="-")
    (ends,) = ax.plot([], [], "o", color=PALETTE["black"], markersize=6)
    label_axes(ax, "prior belief that Alice has the trait", "posterior belief",
               "What one ε-DP release can teach about Alice")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    fig.legend(loc="outside right upper", fontsize=8)

    def update(prior, epsilon):
        lo, hi = posterior_bounds(pg, epsilon)
        hi_line.set_ydata(hi)
        lo_line.set_ydata(lo)
        set_band(shade, pg, lo, hi)
        a, b = posterior_bounds(prior, epsilon)
        seg.set_xdata([prior, prior])
        ends.set_data([prior, prior], [a, b])
        return (f"ε = {epsilon:.3g}: from a prior of {prior:.2f} the attacker ends between "
                f"{a:.3f} and {b:.3f}, whatever the output (odds change by at most "
                f"e<sup>ε</sup> = {np.exp(epsilon):.3g}×)")

    return Panel(controls, fig, update, title="Prior against posterior")
