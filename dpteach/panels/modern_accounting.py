"""Panels for notebook 16, modern accounting: five accountants for k Gaussian releases, and
privacy amplification by Poisson subsampling."""

from __future__ import annotations

import numpy as np

from .. import rdp
from ..plots import PALETTE, density_line, label_axes, log_axes, new_figure, note, vline
from ._controls import log_slider
from ._panel import Panel
from ._registry import register

__all__ = ["accounting_five_ways", "accounting_subsampling"]

_K = np.unique(np.round(np.logspace(0, 3, 120)))            # k = 1 ... 1000
_NAMES = ["basic", "advanced", "zcdp", "rdp", "exact"]
_LABELS = {"basic": r"basic: $k\varepsilon_0$ ($\delta/k$ each)",
           "advanced": "advanced (DRV 2010)",
           "zcdp": r"zCDP, classic: $\rho + 2\sqrt{\rho\,\ln(1/\delta)}$",
           "rdp": "RDP, improved conversion (wide line)",
           "exact": r"exact: one Gaussian, $\sigma/\sqrt{k}$ (dotted)"}
_COLORS = {"basic": PALETTE["blue"], "advanced": PALETTE["orange"], "zcdp": PALETTE["purple"],
           "rdp": PALETTE["green"], "exact": PALETTE["black"]}
_YLIM = (1e-2, 1e4)
_RATIO_LIM = (0.9, 200.0)        # the right axis: ε / exact


@register
def accounting_five_ways(sigma=20.0, delta=1e-6, k=100):
    """ε after k releases of a Gaussian with noise multiplier σ (σ/Δ), at total δ, by five
    accountants (:func:`dpteach.rdp.composition_epsilons`): basic and advanced composition
    of the exact per-release ε₀, zCDP with the classic conversion, RDP on dp-accounting's
    order grid with the improved conversion, and the exact answer (k Gaussians of σ are one
    Gaussian of σ/√k, Balle & Wang 2018). Left: ε against k; right: the five at this k."""
    controls = {"sigma": log_slider("noise σ (per unit Δ)", sigma, -0.3, 1.7, 0.02),
                "delta": log_slider("total δ", delta, -12, -2, 0.25),
                "k": log_slider("releases k", k, 0, 3, 0.02, readout_format=".0f")}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.8, 3.9), gridspec_kw={"width_ratios": [1.35, 1]})
    lines = {n: density_line(ax1, _K, np.ones_like(_K), color=_COLORS[n], label=_LABELS[n],
                             linestyle="--" if n in ("basic", "advanced") else "-")
             for n in _NAMES}
    # RDP sits a few percent above the exact line: draw it wide and underneath, exact dotted
    # on top, so both stay visible
    lines["rdp"].set_linewidth(4.5)
    lines["rdp"].set_alpha(0.6)
    lines["rdp"].set_zorder(2)
    lines["exact"].set_linestyle(":")
    lines["exact"].set_linewidth(2.0)
    lines["exact"].set_zorder(4)
    k_line = vline(ax1, k)
    log_axes(ax1)
    ax1.set_xlim(1, 1000)
    ax1.set_ylim(*_YLIM)
    label_axes(ax1, "releases $k$", r"total $\varepsilon$ (nats)", r"$\varepsilon$ after $k$ Gaussian releases")
    ax1.legend(loc="upper left", fontsize=7.5)
    y = np.arange(len(_NAMES))[::-1]
    # right: each accountant's ε as a multiple of the exact ε (bar from 1 to the ratio, log axis)
    bars = ax2.barh(y, np.zeros(len(_NAMES)), color=[_COLORS[n] for n in _NAMES], height=0.6,
                    left=1.0)
    log_axes(ax2, y=False)
    ax2.set_xlim(*_RATIO_LIM)
    ax2.axvline(1.0, color=PALETTE["black"], linewidth=1.0)
    ax2.set_ylim(-0.6, len(_NAMES) - 0.4)
    ax2.set_yticks(y, ["basic", "advanced", "zCDP", "RDP", "exact"])
    label_axes(ax2, r"$\varepsilon$ / exact $\varepsilon$ (log scale)", None,
               r"At this $k$: $\varepsilon$ (and $\varepsilon$ / exact)")
    texts = [ax2.text(1.08, yi, "", va="center", ha="left", fontsize=8.5,
                      color=PALETTE["black"]) for yi in y]

    def update(sigma, delta, k):
        kk = int(round(k))
        curves = rdp.composition_epsilons(sigma, delta, np.r_[_K, kk])
        for n in _NAMES:
            lines[n].set_ydata(np.clip(curves[n][:-1], _YLIM[0] / 10, _YLIM[1] * 10))
        k_line.set_xdata([kk, kk])
        now = {n: curves[n][-1] for n in _NAMES}
        exact = now["exact"]
        for bar, text, n in zip(bars, texts, _NAMES):
            ratio = now[n] / exact if exact > 0 else np.inf
            bar.set_width(min(ratio, _RATIO_LIM[1]) - 1.0 if np.isfinite(ratio) else 0.0)
            text.set_text(f"ε = {now[n]:.3g}" + ("" if n == "exact" else f"  (×{ratio:.2f})"))
        return (f"σ = {sigma:.3g}, δ = {delta:.2g}, k = {kk}: exact ε = {exact:.4g}; RDP "
                f"{now['rdp']:.4g}, zCDP {now['zcdp']:.4g}, basic {now['basic']:.4g}, "
                f"advanced {now['advanced']:.4g}")

    return Panel(controls, fig, update, title="Five accountants for the same k Gaussian releases")


_ORDERS = np.arange(2, 257)
_STEPS = np.unique(np.round(np.logspace(0, 4, 100)))          # 1 ... 10,000 steps


@register
def accounting_subsampling(q=0.01, sigma=1.0, steps=1000, delta=1e-5):
    """Privacy amplification by Poisson subsampling (Mironov, Talwar & Zhang 2019).

    Left: the RDP curve of one step at integer orders 2-256, with and without subsampling
    (rate q), and q·α/(2σ²), the "linear in q" guess it beats. Right: ε at δ after T
    steps, from the composed RDP curves (improved conversion), against T."""
    controls = {"q": log_slider("sampling rate q", q, -3, 0, 0.05),
                "sigma": log_slider("noise multiplier σ", sigma, -0.3, 1, 0.02),
                "steps": log_slider("steps T", steps, 0, 4, 0.05, readout_format=".0f"),
                "delta": log_slider("δ", delta, -10, -3, 0.25)}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.8, 3.8))
    full = density_line(ax1, _ORDERS, _ORDERS * 1.0, color=PALETTE["blue"], label=r"no sampling: $\alpha/(2\sigma^2)$")
    linear = density_line(ax1, _ORDERS, _ORDERS * 1.0, color=PALETTE["grey"], linestyle="--",
                          label=r"linear guess: $q\alpha/(2\sigma^2)$")
    sub = density_line(ax1, _ORDERS, _ORDERS * 1.0, color=PALETTE["vermillion"],
                       label="Poisson-subsampled (exact)")
    log_axes(ax1)
    ax1.set_xlim(2, 256)
    ax1.set_ylim(1e-8, 1e4)
    label_axes(ax1, r"order $\alpha$", "RDP of one step (nats)", "One step's RDP curve")
    ax1.legend(loc="lower right", fontsize=7.5)
    eps_full = density_line(ax2, _STEPS, _STEPS * 1.0, color=PALETTE["blue"], label="no sampling")
    eps_sub = density_line(ax2, _STEPS, _STEPS * 1.0, color=PALETTE["vermillion"], label="subsampled")
    t_line = vline(ax2, steps)
    log_axes(ax2)
    ax2.set_xlim(1, 1e4)
    ax2.set_ylim(1e-3, 1e4)
    label_axes(ax2, "steps $T$", r"$\varepsilon$ at $\delta$ (nats)", r"$\varepsilon$ after $T$ steps (RDP)")
    ax2.legend(loc="upper left", fontsize=7.5)
    txt = note(ax2, "", loc="lower right")
    a = _ORDERS.astype(float)
    log_a = np.log(a)
    log1m = np.log1p(-1 / a)

    def to_eps(curves, delta):
        # improved conversion, vectorised over rows (rdp.rdp_to_dp on each row)
        e = curves + log1m - (np.log(delta) + log_a) / (a - 1)
        e = np.where(delta * delta + np.expm1(-curves) > 0, 0.0, e)
        return np.maximum(e.min(axis=1), 0.0)

    def update(q, sigma, steps, delta):
        T = int(round(steps))
        one_full = a / (2 * sigma * sigma)
        one_sub = rdp.subsampled_gaussian_rdp(q, sigma, _ORDERS)
        full.set_ydata(one_full)
        linear.set_ydata(q * one_full)
        sub.set_ydata(np.maximum(one_sub, 1e-12))
        ts = np.r_[_STEPS, T][:, None]
        ef, es = to_eps(ts * one_full, delta), to_eps(ts * one_sub, delta)
        eps_full.set_ydata(np.maximum(ef[:-1], 1e-6))
        eps_sub.set_ydata(np.maximum(es[:-1], 1e-6))
        t_line.set_xdata([T, T])
        txt.set_text(f"T = {T}: ε = {es[-1]:.3g} subsampled\n        ε = {ef[-1]:.3g} without")
        return (f"q = {q:.3g}, σ = {sigma:.3g}, T = {T}, δ = {delta:.2g}: ε = {es[-1]:.4g} with "
                f"Poisson subsampling, {ef[-1]:.4g} without (RDP at orders 2-256)")

    return Panel(controls, fig, update, title="Privacy amplification by subsampling")
