"""Panels for notebook 08, the Gaussian mechanism.

- ``gaussian_sigma``: sigma against epsilon, classic formula against the analytic one, and
  the delta each really delivers (the classic formula is only valid for epsilon < 1).
- ``gaussian_vs_laplace_queries``: k counting queries released together; Laplace noise grows
  with the L1 sensitivity k, Gaussian noise with the L2 sensitivity sqrt(k).
- ``gaussian_privacy_loss``: the privacy loss of a Gaussian output is unbounded; the
  chance that it exceeds epsilon is where delta goes.
"""

from __future__ import annotations

import numpy as np

from .. import mechanisms
from .._support.gaussian import analytic_sigma
from ..comparison import queries_noise
from ..mechanisms import sigma_curves
from ..plots import (PALETTE, band, density_line, hline, label_axes, log_axes, new_figure,
                    note, set_band, vline)
from ._controls import checkbox, float_slider, int_slider, log_slider, readout
from ._panel import Panel
from ._registry import register

__all__ = ["gaussian_sigma_vs_epsilon",
           "gaussian_vs_laplace_queries", "gaussian_privacy_loss"]

EPS_GRID = np.geomspace(0.05, 20, 40)


# -------------------------------------------------------------------------------- panels
@register
def gaussian_sigma_vs_epsilon(epsilon=0.5, delta=1e-5, l2_sensitivity=1.0):
    """sigma against epsilon for the classic and analytic Gaussian mechanism."""
    controls = {"epsilon": log_slider("ε (marker)", epsilon, -1.3, 1.3),
                "delta": log_slider("δ", delta, -10, -2, 0.25, readout_format=".0e"),
                "l2_sensitivity": float_slider("Δ₂f", l2_sensitivity, 0.1, 5, 0.1)}
    fig, (ax, ax2) = new_figure(1, 2, figsize=(9.4, 3.5))
    e = EPS_GRID
    valid = e < 1
    nan = np.full_like(e, np.nan)
    l_classic = density_line(ax, e, nan, color=PALETTE["vermillion"], label=r"classic ($\varepsilon < 1$)")
    l_extra = density_line(ax, e, nan, color=PALETTE["vermillion"], linestyle=":",
                           label=r"classic formula past $\varepsilon = 1$")
    l_analytic = density_line(ax, e, nan, color=PALETTE["blue"], label="analytic")
    (dot,) = ax.plot([epsilon], [1.0], "o", color=PALETTE["black"], zorder=5)
    ax.axvspan(1, e[-1], color=PALETTE["grey"], alpha=0.12, lw=0)
    log_axes(ax, plain=True)
    ax.set_xlim(e[0], e[-1])
    ax.set_ylim(0.01, 1000)          # fixed limits keep the tick labels (and their cost) fixed
    label_axes(ax, "ε", "noise σ (query units)", "Gaussian σ against ε")
    txt = note(ax, "", loc="upper right")
    d_classic = density_line(ax2, e, nan, color=PALETTE["vermillion"])
    density_line(ax2, e, np.ones_like(e), color=PALETTE["blue"])
    hline(ax2, 1.0)
    vline(ax2, 1.0)
    m_line = vline(ax2, epsilon, color=PALETTE["black"], linestyle="-")
    log_axes(ax2, plain=True)
    ax2.set_xlim(e[0], e[-1])
    ax2.set_ylim(1e-4, 1e3)
    label_axes(ax2, "ε", r"true $\delta$ / target $\delta$", "δ each σ really gives")
    # one figure-level legend: drawn once into the cached background, not on every move
    fig.legend(loc="outside lower center", ncols=3, fontsize="small")

    unit = {}                # delta -> the curves at sensitivity 1 (one bisection, all 40 ε)

    def update(epsilon, delta, l2_sensitivity):
        # every sigma is proportional to the sensitivity and the true delta of the classic
        # sigma does not depend on it, so only a move of delta computes the curves again
        if delta not in unit:
            unit.clear()
            unit[delta] = sigma_curves(e, 1.0, delta)
        classic, analytic, true_delta = unit[delta]
        classic, analytic = l2_sensitivity * classic, l2_sensitivity * analytic
        l_classic.set_ydata(np.where(valid, classic, np.nan))
        l_extra.set_ydata(np.where(e >= 0.9, classic, np.nan))
        l_analytic.set_ydata(analytic)
        ratio = np.clip(true_delta / delta, 1e-4, 1e3)
        d_classic.set_ydata(ratio)
        s_an = l2_sensitivity * analytic_sigma(epsilon, delta)   # as gaussian_sigma(analytic=True)
        dot.set_data([epsilon], [s_an])
        m_line.set_xdata([epsilon, epsilon])
        if epsilon < 1:
            s_cl = mechanisms.gaussian_sigma(l2_sensitivity, epsilon, delta)
            line = f"classic σ = {s_cl:.3g}\nanalytic σ = {s_an:.3g}"
        else:
            line = f"classic: needs ε < 1\nanalytic σ = {s_an:.3g}"
        txt.set_text(f"ε = {epsilon:.3g}, δ = {readout(delta, tiny=True)}\n{line}")
        bad = e[(true_delta > delta)]
        breaks = (f"the classic formula breaks δ from ε ≈ {bad.min():.3g}" if bad.size
                  else "the classic formula keeps δ on this range")
        return f"ε = {epsilon:.3g}: {line.replace(chr(10), '; ')}; {breaks}"

    return Panel(controls, fig, update, title="Gaussian mechanism: classic and analytic σ")


@register
def gaussian_vs_laplace_queries(k=50, epsilon=0.5, delta=1e-5, analytic=True):
    """Noise per query against the number k of counting queries released together."""
    controls = {"k": int_slider("k queries", k, 1, 400),
                "epsilon": log_slider("ε", epsilon, -1.3, 0.7),
                "delta": log_slider("δ", delta, -10, -2, 0.25, readout_format=".0e"),
                "analytic": checkbox("analytic σ", analytic)}
    fig, ax = new_figure(1, 1, figsize=(7.4, 3.6))
    ks = np.unique(np.geomspace(1, 400, 120).round())
    nan = np.full_like(ks, np.nan)
    l_lap = density_line(ax, ks, nan, color=PALETTE["orange"], label=r"Laplace: $\sqrt{2}\,k/\varepsilon$ ($\ell_1 = k$)")
    l_gau = density_line(ax, ks, nan, color=PALETTE["blue"], label=r"Gaussian: $\sigma(\sqrt{k})$ ($\ell_2 = \sqrt{k}$)")
    (p_lap,) = ax.plot([k], [1.0], "o", color=PALETTE["orange"], zorder=5)
    (p_gau,) = ax.plot([k], [1.0], "s", color=PALETTE["blue"], zorder=5)
    cross = vline(ax, 1.0, label="crossover")
    log_axes(ax, plain=True)
    ax.set_xlim(ks[0], ks[-1])
    ax.set_ylim(0.1, 2e4)
    label_axes(ax, "k counting queries released together", "noise std per query (counts)",
               "Laplace against Gaussian on k counting queries")
    fig.legend(loc="outside lower center", ncols=3, fontsize="small")
    txt = note(ax, "")

    def update(k, epsilon, delta, analytic):
        ok = analytic or epsilon < 1
        lap, _ = queries_noise(ks, epsilon, delta, analytic=True)
        l_lap.set_ydata(lap)
        lk = float(queries_noise(k, epsilon, delta, analytic=True)[0])
        p_lap.set_data([k], [lk])
        if ok:
            _, gau = queries_noise(ks, epsilon, delta, analytic=analytic)
            gk = float(queries_noise(k, epsilon, delta, analytic=analytic)[1])
            l_gau.set_ydata(gau)
            p_gau.set_data([k], [gk])
            wins = ks[gau < lap]
            kstar = wins.min() if wins.size else np.nan
            cross.set_xdata([kstar, kstar])
            best = "Gaussian" if gk < lk else "Laplace"
            text = (f"k = {k}: ℓ1 = {k}, ℓ2 = {np.sqrt(k):.3g}\nLaplace std {lk:.3g}, "
                    f"Gaussian std {gk:.3g}\n{best} wins; Gaussian wins from k = {kstar:.0f}")
        else:
            l_gau.set_ydata(np.full_like(ks, np.nan))
            p_gau.set_data([np.nan], [np.nan])
            cross.set_xdata([np.nan, np.nan])
            text = (f"k = {k}: Laplace std {lk:.3g}\nclassic Gaussian needs ε < 1:\n"
                    "tick 'analytic σ'")
        txt.set_text(text)
        return text.replace("\n", "; ")

    return Panel(controls, fig, update, title="Laplace against Gaussian on k counting queries")


@register
def gaussian_privacy_loss(epsilon=0.5, delta=1e-3, l2_sensitivity=1.0):
    """Densities of f(D)+N(0, σ²) and f(D')+N(0, σ²) and the privacy loss of each output.

    Outputs are drawn in units of σ and the loss in units of ε, so the axes (and their
    tick labels) stay fixed while the sliders move the curves.
    """
    from scipy import stats
    controls = {"epsilon": log_slider("ε", epsilon, -1.3, 0.7),
                "delta": log_slider("δ", delta, -8, -1, 0.25, readout_format=".0e"),
                "l2_sensitivity": float_slider("Δ₂f = f(D') − f(D)", l2_sensitivity, 0.2, 3, 0.1)}
    fig, (ax, ax2) = new_figure(1, 2, figsize=(9.4, 3.5))
    z = np.linspace(-6, 6, 361)           # output r / σ, with f(D) = 0
    zero = np.zeros_like(z)
    shade = band(ax, z, zero, zero, color=PALETTE["vermillion"], alpha=0.35,
                 label=r"loss $> \varepsilon$")
    density_line(ax, z, stats.norm.pdf(z), color=PALETTE["blue"], label="D")
    l_d2 = density_line(ax, z, zero, color=PALETTE["orange"], linestyle="--", label="D'")
    ax.set_xlim(z[0], z[-1])
    ax.set_ylim(0, 0.5)
    label_axes(ax, r"output $r/\sigma$", r"density $\times\ \sigma$", "Gaussian outputs on neighbours")
    txt = note(ax, "")
    g_loss = density_line(ax2, z, zero, color=PALETTE["purple"], label="Gaussian loss")
    l_loss = density_line(ax2, z, zero, color=PALETTE["green"], linestyle="--",
                          label=r"Laplace loss, $b = \Delta/\varepsilon$")
    hline(ax2, 1.0)
    hline(ax2, -1.0)
    ax2.set_xlim(z[0], z[-1])
    ax2.set_ylim(-4, 4)
    label_axes(ax2, r"output $r/\sigma$", r"privacy loss $/\ \varepsilon$", r"loss $\ln p(r|D)/p(r|D')$ per output")
    fig.legend(loc="outside lower center", ncols=5, fontsize="small")

    def update(epsilon, delta, l2_sensitivity):
        d = l2_sensitivity
        sigma = mechanisms.gaussian_sigma(d, epsilon, delta, analytic=True)
        r = z * sigma
        l_d2.set_ydata(sigma * mechanisms.output_distribution(d, sigma, noise="gaussian").pdf(r))
        loss = mechanisms.privacy_loss(r, 0.0, d, sigma, noise="gaussian")
        g_loss.set_ydata(np.clip(loss / epsilon, -5, 5))
        lap = mechanisms.privacy_loss(r, 0.0, d, mechanisms.laplace_scale(d, epsilon))
        l_loss.set_ydata(lap / epsilon)
        # the loss is linear in r and passes epsilon exactly below r = d/2 - eps sigma^2/d
        cut = d / 2 - epsilon * sigma ** 2 / d
        set_band(shade, z, zero, np.where(r <= cut, stats.norm.pdf(z), 0.0))
        tail = float(stats.norm.cdf(cut / sigma))
        exact = mechanisms.gaussian_delta(sigma, d, epsilon)
        txt.set_text(f"σ = {sigma:.3g}\nPr[loss > ε] = {tail:.1e}\nδ = {exact:.1e}")
        return (f"σ = {sigma:.4g} (analytic); Pr[loss > ε] under D = {tail:.3e}; the "
                f"mechanism's exact δ = {exact:.3e} (target {readout(delta, tiny=True)})")

    return Panel(controls, fig, update, title="The Gaussian privacy loss is unbounded")

