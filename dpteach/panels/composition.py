"""Panels for notebook 07, composition: seed 000's two queries released together,
advanced against basic composition, and splitting a budget across queries."""

from __future__ import annotations

import numpy as np

from .. import accounting
from ..accounting import joint_privacy_loss
from ..plots import PALETTE, bars, density_line, label_axes, log_axes, new_figure, vline
from ._controls import checkbox, float_slider, int_slider, log_slider, readout
from ._panel import Panel
from ._registry import register

__all__ = ["composition_two_queries", "composition_advanced", "composition_budget_split"]


@register
def composition_two_queries(epsilon=1.0, delta1=1.0, delta2=2.0, naive=False):
    """Seed 000's two queries: each released with Lap((Δf1 + Δf2)/ε) keeps the PAIR ε-DP.
    The map shows the joint privacy loss over the two released values, in units of ε,
    for neighbours whose answers differ by the full sensitivities; calibrating each
    query to its own Δfi/ε instead doubles the worst case to 2ε."""
    controls = {"epsilon": log_slider("target ε for the pair", epsilon, -1, 0.5),
                "delta1": float_slider("Δf1", delta1, 0.5, 5.0, 0.5),
                "delta2": float_slider("Δf2", delta2, 0.5, 5.0, 0.5),
                "naive": checkbox("naive: each query with Lap(Δfi/ε)", naive)}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.6, 3.7), gridspec_kw={"width_ratios": [1.25, 1]})
    g = np.linspace(-12, 14, 131)
    R1, R2 = np.meshgrid(g, g)
    img = ax1.imshow(np.zeros_like(R1), origin="lower", extent=(g[0], g[-1], g[0], g[-1]),
                     cmap="PuOr_r", vmin=-2, vmax=2, aspect="auto", interpolation="nearest")
    fig.colorbar(img, ax=ax1, label=r"joint loss $/\ \varepsilon$")
    (m2,) = ax1.plot([0], [0], "x", color=PALETTE["black"], markersize=9, label="(f1, f2) on D2")
    (m1,) = ax1.plot([0], [0], "+", color=PALETTE["black"], markersize=11, label="(f1, f2) on D1")
    label_axes(ax1, "released r1", "released r2", r"$\ln p(r_1, r_2 \mid D_1)/p(r_1, r_2 \mid D_2)$")
    bc = bars(ax2, [0, 1, 2], [0, 0, 0], color=PALETTE["blue"])
    bc[0].set_color(PALETTE["grey"])
    bc[2].set_color(PALETTE["vermillion"])
    ax2.set_xticks([0, 1, 2], ["target ε", "query 1\nloss", "pair's\nworst loss"])
    label_axes(ax2, None, "privacy loss (nats)", "Worst-case loss")
    ax2.set_ylim(0, 6.6)
    fig.legend(loc="outside lower center", ncols=2, fontsize=8)

    def update(epsilon, delta1, delta2, naive):
        if naive:
            s1, s2 = delta1 / epsilon, delta2 / epsilon
        else:
            s1 = s2 = (delta1 + delta2) / epsilon
        loss = joint_privacy_loss(R1, R2, delta1, delta2, s1, s2)
        img.set_data(loss / epsilon)
        m1.set_data([delta1], [delta2])
        worst = delta1 / s1 + delta2 / s2
        for b, h in zip(bc, (epsilon, delta1 / s1, worst)):
            b.set_height(h)
        how = ("each with its own Lap(Δfi/ε)" if naive else
               f"both with Lap((Δf1+Δf2)/ε) = Lap({s1:.3g})")
        verdict = "ε-DP holds for the pair" if worst <= epsilon * (1 + 1e-12) else \
            f"the pair is only {worst / epsilon:.3g}ε-DP"
        return f"{how}: worst joint loss {worst:.3g} against ε = {epsilon:.3g} — {verdict}"

    return Panel(controls, fig, update, title="Two queries, one budget (seed 000)")


_K = np.unique(np.round(np.logspace(0, 5, 300)).astype(int))


@register
def composition_advanced(k=100, epsilon=0.1, delta_slack=1e-5):
    """Total ε after k (ε, 0)-DP mechanisms: basic composition kε against advanced
    composition ε√(2k ln(1/δ')) + kε(e^ε − 1) (Dwork, Rothblum & Vadhan 2010, DR14
    Theorem 3.20; it costs an extra δ'). The dashed line marks the crossover k."""
    controls = {"k": log_slider("k mechanisms", k, 0, 5, 0.05, readout_format=".0f"),
                "epsilon": log_slider("ε per mechanism", epsilon, -3, 0, 0.05),
                "delta_slack": log_slider("δ′ (slack)", delta_slack, -12, -2, 0.25)}
    fig, ax = new_figure(1, 1, figsize=(7.6, 3.7))
    basic = density_line(ax, _K, _K * 1.0, color=PALETTE["blue"], label="basic: kε")
    adv = density_line(ax, _K, _K * 1.0, color=PALETTE["orange"],
                       label=r"advanced: $\varepsilon\sqrt{2k \ln(1/\delta')} + k\varepsilon(e^{\varepsilon}-1)$")
    cross = vline(ax, 1.0, color=PALETTE["vermillion"], label="crossover k*")
    (pb,) = ax.plot([], [], "o", color=PALETTE["blue"], markersize=8)
    (pa,) = ax.plot([], [], "o", color=PALETTE["orange"], markersize=8)
    log_axes(ax)
    ax.set_xlim(1, 1e5)
    ax.set_ylim(1e-3, 1e5)
    label_axes(ax, "k (number of mechanisms)", "total ε", "Advanced against basic composition")
    fig.legend(loc="outside lower center", ncols=3, fontsize=8)

    def update(k, epsilon, delta_slack):
        k = max(1, int(round(k)))
        b = _K * epsilon
        a, _ = accounting.advanced_composition(epsilon, 0.0, _K, delta_slack)
        basic.set_ydata(b)
        adv.set_ydata(a)
        kstar = accounting.advanced_composition_crossover(epsilon, delta_slack)
        if kstar is None:
            cross.set_visible(False)
        else:
            cross.set_visible(True)
            cross.set_xdata([kstar, kstar])
        ea, _ = accounting.advanced_composition(epsilon, 0.0, k, delta_slack)
        pb.set_data([k], [k * epsilon])
        pa.set_data([k], [ea])
        where = ("advanced never wins (ε ≥ ln 2)" if kstar is None else
                 f"advanced wins from k* = {kstar:,}")
        best = "advanced" if ea < k * epsilon else "basic"
        return (f"k = {k:,}: basic ε = {k * epsilon:.4g}; advanced ε = {ea:.4g} with δ′ = "
                f"{readout(delta_slack, tiny=True)} — {best} is smaller; {where}")

    return Panel(controls, fig, update, title="Advanced against basic composition")


_MAXQ = 10


@register
def composition_budget_split(epsilon=1.0, k=4, weight=1.0):
    """Splitting a total ε across k counting queries with sequential composition: the
    shares sum to ε (split exactly, so a PrivacyAccountant accepts them all) and each
    query's typical error is its Laplace scale 1/εi. Give query 1 more weight and its
    error drops while the others' grow."""
    controls = {"epsilon": log_slider("total ε", epsilon, -1, 1),
                "k": int_slider("k queries", k, 1, _MAXQ),
                "weight": float_slider("weight of query 1", weight, 0.5, 8.0, 0.5)}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.6, 3.4))
    x = np.arange(1, _MAXQ + 1)
    b1 = bars(ax1, x, np.zeros(_MAXQ), color=PALETTE["blue"])
    label_axes(ax1, "query", "εi (its share)", "Shares of the budget")
    ax1.set_xticks(x)
    ax1.set_ylim(0, 10)
    log_axes(ax1, x=False, linthresh=0.1)
    b2 = bars(ax2, x, np.ones(_MAXQ), color=PALETTE["orange"])
    label_axes(ax2, "query", r"mean $|\mathrm{error}| = 1/\varepsilon_i$", "Error of each count")
    ax2.set_xticks(x)
    log_axes(ax2, x=False)
    ax2.set_ylim(0.05, 500)

    def update(epsilon, k, weight):
        shares = accounting.split_budget(epsilon, [weight] + [1.0] * (k - 1))
        acc = accounting.PrivacyAccountant(epsilon)
        for i, s in enumerate(shares):
            acc.spend(s, label=f"query {i + 1}")
        for i in range(_MAXQ):
            on = i < k
            b1[i].set_height(shares[i] if on else 0.0)
            b2[i].set_height(1.0 / shares[i] if on else 1e-9)
        spent = acc.spent[0]
        return (f"ε = {epsilon:.3g} over {k} queries: query 1 gets {shares[0]:.3g} (error "
                f"{1 / shares[0]:.3g}), " + (f"the others {shares[-1]:.3g} each (error "
                                               f"{1 / shares[-1]:.3g}); " if k > 1 else "")
                + f"accountant: {len(acc.history)} spends accepted, spent {spent:.6g}")

    return Panel(controls, fig, update, title="Splitting a privacy budget")
