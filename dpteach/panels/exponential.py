"""Panels for notebook 09, the exponential mechanism (the computations they draw live in
:mod:`dpteach.exponential`).

- ``exponential_selection``: selection probabilities of each candidate against epsilon
  (seed 004's nationality and eye-colour questions).
- ``exponential_half_ratio``: the worst-case probability ratio with the 1/2 of
  exp(eps u / (2 Delta)) and without it (seed 000's form): at most e^eps against e^(2 eps).
- ``exponential_utility``: the utility theorem checked by drawing many outputs: the
  empirical Pr[u(r*) <= OPT - (2 Delta/eps)(ln(|R|/|R_OPT|) + t)] against e^-t.
- ``exponential_apples``: seed 004's apple pricing; a perturbed price falls off the revenue
  cliff, the exponential mechanism over prices does not.
"""

from __future__ import annotations

import numpy as np

from .. import bounds, datasets, mechanisms
from ..exponential import (EYE_COLOUR, NATIONALITY, apple_outputs, log_ratio,
                           posted_price_revenue, price_grid, tied_scores, utility_tail)
from ..plots import (PALETTE, bars, density_line, hline, label_axes, log_axes, new_figure,
                    note, vline)
from ._controls import dropdown, float_slider, int_slider, log_slider
from ._panel import Panel
from ._registry import register

__all__ = ["exponential_selection", "exponential_half_ratio", "exponential_utility",
           "exponential_apples"]

#: the selection panel's two questions (seed 004)
_EXAMPLES = {"nationality": NATIONALITY, "eye colour": EYE_COLOUR}


# -------------------------------------------------------------------------------- panels
@register
def exponential_selection(epsilon=1.0, example="nationality"):
    """Selection probabilities of each candidate, and how they move with epsilon."""
    controls = {"epsilon": log_slider("ε", epsilon, -2, 1),
                "example": dropdown("question", list(_EXAMPLES), example)}
    fig, (ax, ax2) = new_figure(1, 2, figsize=(9.4, 3.5))
    slots = np.arange(5)
    bar = bars(ax, slots, np.zeros(5))
    ax.set_xlim(-0.6, 4.6)
    ax.set_ylim(0, 1)
    # the candidates' names are texts under the bars, not tick labels: changing tick
    # labels forces a full redraw, changing texts only redraws them
    ax.set_xticks(slots)
    ax.tick_params(axis="x", labelbottom=False)
    names_below = [ax.text(i, -0.03, "", transform=ax.get_xaxis_transform(), ha="center",
                           va="top", fontsize="small") for i in slots]
    label_axes(ax, None, r"$\Pr[\mathrm{output}]$", "selection probabilities")
    txt = note(ax, "", loc="upper left")
    grid = np.geomspace(0.01, 10, 50)
    colours = [PALETTE[c] for c in ("blue", "orange", "green", "vermillion", "purple")]
    curves = [density_line(ax2, grid, np.zeros_like(grid), color=c) for c in colours]
    marker = vline(ax2, epsilon, color=PALETTE["black"], linestyle="-")
    log_axes(ax2, y=False, plain=True)
    ax2.set_xlim(grid[0], grid[-1])
    ax2.set_ylim(0, 1)
    label_axes(ax2, "ε", r"$\Pr[\mathrm{output}]$", "against ε (Δu = 1)")
    # everything that depends only on the question is computed once, here
    for b, c in zip(bar, colours):       # each bar has its curve's colour: no legend needed
        b.set_color(c)
    tables = {}
    for key, counts in _EXAMPLES.items():
        u = np.array(list(counts.values()), float)
        tables[key] = np.array([mechanisms.exponential_probabilities(u, 1.0, e) for e in grid])

    def update(epsilon, example):
        counts = _EXAMPLES[example]
        names, u = list(counts), np.array(list(counts.values()), float)
        p = mechanisms.exponential_probabilities(u, 1.0, epsilon)
        for i, b in enumerate(bar):
            b.set_height(p[i] if i < p.size else 0.0)
        # set on every move (cheap), so the panel knows from its warm-up that these change
        for i, label in enumerate(names_below):
            label.set_text(f"{names[i]}\n({u[i]:.0f})" if i < len(names) else "")
        for i, c in enumerate(curves):
            c.set_ydata(tables[example][:, i] if i < len(names) else np.full_like(grid, np.nan))
        marker.set_xdata([epsilon, epsilon])
        top = names[int(np.argmax(u))]
        txt.set_text(f"ε = {epsilon:.3g}\nPr[{top}] = {p.max():.3f}\nuniform = {1 / p.size:.3f}")
        return f"ε = {epsilon:.3g}: " + ", ".join(f"{n} {q:.3f}" for n, q in zip(names, p))

    return Panel(controls, fig, update, title="Exponential mechanism: who gets selected")


@register
def exponential_half_ratio(epsilon=1.0, n_candidates=4, gap=2.0):
    """Worst-case privacy loss with and without the 1/2, as the other scores move away."""
    controls = {"epsilon": log_slider("ε", epsilon, -1, 0.7),
                "n_candidates": int_slider("|R|", n_candidates, 2, 50),
                "gap": float_slider("others' lead (in Δu)", gap, -10, 10, 0.5)}
    fig, ax = new_figure(1, 1, figsize=(7.4, 3.6))
    gaps = np.linspace(-10, 10, 25)
    l_half = density_line(ax, gaps, np.zeros_like(gaps), color=PALETTE["blue"],
                          label=r"$\exp(\varepsilon u/(2\Delta u))$ (with the $1/2$)")
    l_full = density_line(ax, gaps, np.zeros_like(gaps), color=PALETTE["vermillion"],
                          linestyle="--", label=r"$\exp(\varepsilon u/\Delta u)$ (seed 000, no $1/2$)")
    hline(ax, 1.0)
    hline(ax, 2.0, color=PALETTE["vermillion"])
    (d_half,) = ax.plot([gap], [1.0], "o", color=PALETTE["blue"])
    (d_full,) = ax.plot([gap], [2.0], "o", color=PALETTE["vermillion"])
    ax.set_ylim(0, 2.2)
    label_axes(ax, "how far the other candidates' scores lie above r's (units of Δu)",
               r"worst $\ln(\mathrm{ratio})\,/\,\varepsilon$", r"worst-case $\Pr[M(D)=r]\,/\,\Pr[M(D')=r]$")
    fig.legend(loc="outside lower center", ncols=2, fontsize="small")
    txt = note(ax, "", loc="lower right")

    def update(epsilon, n_candidates, gap):
        # r is candidate 0 (score 0); the other n - 1 score `gap`. Seed 000's form at eps is
        # dpteach's at 2 eps, so its worst ratio / eps is read at 2 eps.
        half = np.array([_target_loss(g, n_candidates, epsilon, True) for g in gaps]) / epsilon
        full = np.array([_target_loss(g, n_candidates, epsilon, False) for g in gaps]) / epsilon
        l_half.set_ydata(half)
        l_full.set_ydata(full)
        h = _target_loss(gap, n_candidates, epsilon, True)
        f = _target_loss(gap, n_candidates, epsilon, False)
        d_half.set_data([gap], [h / epsilon])
        d_full.set_data([gap], [f / epsilon])
        txt.set_text(f"with ½: ln ratio = {h:.3f} ≤ ε = {epsilon:.3g}\n"
                     f"no ½: ln ratio = {f:.3f} = {f / epsilon:.2f}ε")
        return (f"ln Pr[M(D)=r]/Pr[M(D')=r] for r against its worst neighbour D': {h:.4f} "
                f"with the ½, {f:.4f} without (ε = {epsilon:.3g}, 2ε = {2 * epsilon:.3g})")

    return Panel(controls, fig, update, title="Why the ½: the worst-case probability ratio")


def _target_loss(gap, n, epsilon, half):
    # ln Pr_D(r) - ln Pr_D'(r) for r = candidate 0 when r's score drops by 1 and every
    # other score rises by 1 (the worst neighbour for r; see worst_case_log_ratio).
    u = tied_scores(n, -gap)
    step = np.ones(n)
    step[0] = -1.0
    return float(log_ratio(u, u + step, 1.0, epsilon, half=half)[0])


_PROFILES = {"worst case: the others tied at the threshold for t": "worst",
             "evenly spread: OPT, OPT − 1, OPT − 2, ...": "linear",
             "counts of a random room of 400 (Zipf)": "zipf"}


def _profile_scores(profile, n, epsilon, t):
    if profile == "worst":
        # every other candidate sits exactly at the theorem's threshold for this t, which
        # is the case that comes closest to the bound e^-t
        return tied_scores(n, 50.0 - bounds.exponential_utility_threshold(50.0, 1.0, epsilon, n, t),
                           opt=50.0)
    if profile == "linear":
        return 50.0 - np.arange(n, dtype=float)
    rng = np.random.default_rng(2014)      # a fixed room of 400 people, |R| categories
    weights = 1.0 / np.arange(1, n + 1)
    room = rng.choice(n, size=400, p=weights / weights.sum()).astype(np.intp)   # int64 by default
    return np.bincount(room, minlength=n).astype(float)


@register
def exponential_utility(epsilon=1.0, t=2.0, n_candidates=100, profile="worst"):
    """Empirical tail of the utility loss against the theorem's e^-t."""
    controls = {"epsilon": log_slider("ε", epsilon, -1, 1),
                "t": float_slider("t", t, 0, 8, 0.1),
                "n_candidates": int_slider("|R|", n_candidates, 2, 1000),
                "profile": dropdown("scores", list(_PROFILES.items()), profile)}
    fig, ax = new_figure(1, 1, figsize=(7.4, 3.6))
    ts = np.linspace(0, 8, 81)
    density_line(ax, ts, np.exp(-ts), color=PALETTE["black"], linestyle="--",
                 label=r"bound $e^{-t}$")
    (emp,) = ax.step(ts, np.full_like(ts, np.nan), where="post", color=PALETTE["blue"],
                     label=r"empirical $\Pr[u(r^*) \leq \mathrm{threshold}(t)]$")
    (dot,) = ax.plot([t], [np.exp(-t)], "o", color=PALETTE["vermillion"], zorder=5)
    mark = vline(ax, t)
    log_axes(ax, x=False, plain=True)
    ax.set_ylim(1e-5, 1.5)
    ax.set_xlim(0, 8)
    label_axes(ax, "t", "probability", r"utility theorem: empirical tail against $e^{-t}$")
    fig.legend(loc="outside lower center", ncols=2, fontsize="small")
    txt = note(ax, "", loc="upper right")
    n_draws = 20_000

    def update(epsilon, t, n_candidates, profile):
        u = _profile_scores(profile, n_candidates, epsilon, t)
        grid = np.append(ts, t)
        # the same seed on every move: the picture depends on the sliders alone
        empirical, thresholds = utility_tail(u, 1.0, epsilon, grid, n_draws=n_draws,
                                             rng=np.random.default_rng(20))
        shown = np.where(empirical[:-1] > 0, empirical[:-1], np.nan)   # log axis: hide zeros
        emp.set_ydata(shown)
        pt = empirical[-1]
        dot.set_data([t], [max(pt, 1e-5)])
        mark.set_xdata([t, t])
        txt.set_text(f"OPT = {u.max():.0f}, |R_OPT| = {int((u == u.max()).sum())}\n"
                     f"threshold = {thresholds[-1]:.3g}\n"
                     f"empirical {pt:.4f} ≤ $e^{{-t}}$ = {np.exp(-t):.4f}\n({n_draws} draws)")
        return (f"t = {t:.2f}: empirical Pr[u(r*) ≤ {thresholds[-1]:.3g}] = {pt:.4f}, "
                f"bound e<sup>−t</sup> = {np.exp(-t):.4f}")

    return Panel(controls, fig, update, title="The exponential mechanism's utility theorem")


@register
def exponential_apples(epsilon=1.0, copies=1):
    """Which price does each private seller post? Revenue cliff against scored prices.

    Left: revenue per copy of the four buyers (the market's shape does not change with its
    size). Right: the cumulative distribution of the posted price for both sellers, so
    the axes stay fixed while ε and the market size move the curves.
    """
    controls = {"epsilon": log_slider("ε", epsilon, -1, 1.3),
                "copies": int_slider("market size (copies of the 4 buyers)", copies, 1, 200)}
    fig, (ax, ax2) = new_figure(1, 2, figsize=(9.4, 3.5))
    prices = price_grid()
    per_copy = posted_price_revenue(datasets.apple_buyers()["Valuation ($)"], prices)
    density_line(ax, prices, per_copy, color=PALETTE["black"], label="revenue R(p)")
    vline(ax, 4.01, color=PALETTE["vermillion"])
    ax.set_xlim(0, 5)
    ax.set_ylim(0, 7.0)          # headroom: the note (three lines) sits above the peaks at 4
    label_axes(ax, "posted price p ($)", "revenue per 4 buyers ($)", "the market: a cliff at $4.01")
    txt = note(ax, "", loc="upper left")
    zero = np.zeros_like(prices)
    l_exp = density_line(ax2, prices, zero, color=PALETTE["blue"], label="exponential mechanism")
    l_per = density_line(ax2, prices, zero, color=PALETTE["orange"], linestyle="--",
                         label=r"best price + $\mathrm{Lap}(5/\varepsilon)$")
    vline(ax2, 4.01, color=PALETTE["vermillion"])
    ax2.set_xlim(0, 5)
    ax2.set_ylim(0, 1.02)
    label_axes(ax2, "posted price p ($)", r"$\Pr[\mathrm{posted\ price} \leq p]$", "what each seller posts")
    fig.legend(loc="outside lower center", ncols=3, fontsize="small")

    def update(epsilon, copies):
        out = apple_outputs(epsilon, copies=copies, prices=prices)
        l_exp.set_ydata(np.cumsum(out["exponential"]))
        # a perturbed price below the grid sells nothing but is still <= p
        below = float(mechanisms.output_distribution(
            4.01, mechanisms.laplace_scale(5.0, epsilon)).cdf(prices[0] - 0.005))
        l_per.set_ydata(below + np.cumsum(out["perturbed"]))
        txt.set_text(f"{4 * copies} buyers, OPT ${out['opt']:.2f}\n"
                     f"E[revenue]: exp. ${out['expected_exponential']:.2f},\n"
                     f"perturbed ${out['expected_perturbed']:.2f}")
        return (f"OPT ${out['opt']:.2f}; expected revenue: exponential mechanism "
                f"${out['expected_exponential']:.2f}, perturbed price "
                f"${out['expected_perturbed']:.2f}")

    return Panel(controls, fig, update, title="Apples for sale: perturbing the price against "
                 "scoring the prices")
