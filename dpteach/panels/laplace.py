"""Panels for notebook 06, the Laplace mechanism: density, privacy loss, accuracy and
histogram release."""

from __future__ import annotations

import numpy as np

from .. import bounds, mechanisms
from .._support.densities import laplace_pdf as _laplace_pdf   # scipy.stats.laplace.pdf's floats
from ..plots import PALETTE, band, density_line, hline, label_axes, new_figure, note, set_band, vline
from ._controls import dropdown, float_slider, int_slider, log_slider
from ._panel import Panel
from ._registry import register

_X = np.linspace(-12, 12, 481)


@register
def laplace_density(epsilon=1.0, sensitivity=1.0):
    """Lap(b) with b = Δf/ε against fixed references: small b is pointy, large b flat."""
    controls = {"epsilon": log_slider("privacy ε", epsilon, -1, 1),
                "sensitivity": float_slider("sensitivity Δf", sensitivity, 0.1, 5.0, 0.1)}
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.4))
    refs = [0.5, 1.0, 2.0, 4.0]
    for b, c in zip(refs, [PALETTE["sky"], PALETTE["green"], PALETTE["orange"], PALETTE["purple"]]):
        density_line(ax, _X, _laplace_pdf(_X, 0.0, b), color=c, linestyle=":",
                     label=f"b = {b:g}").set_alpha(0.8)
    line = density_line(ax, _X, _X * 0, color=PALETTE["blue"], label=r"$\mathrm{Lap}(\Delta f/\varepsilon)$")
    label_axes(ax, "noise added to the answer", "density", r"Laplace noise $\mathrm{Lap}(b)$, $b = \Delta f/\varepsilon$")
    ax.set_xlim(_X[0], _X[-1])
    ax.set_ylim(0, 1.05)
    ax.legend(loc="upper right", fontsize=8)
    txt = note(ax, "")

    def update(epsilon, sensitivity):
        b = mechanisms.laplace_scale(sensitivity, epsilon)
        line.set_ydata(_laplace_pdf(_X, 0.0, b))
        sd = bounds.laplace_std(b)
        txt.set_text(f"b = {b:.3g}\nsd = √2·b = {sd:.3g}")
        return f"scale b = Δf/ε = {b:.4g}; standard deviation √2·b = {sd:.4g}"

    return Panel(controls, fig, update, title="The Laplace density: pointier or flatter")


@register
def laplace_privacy_loss(epsilon=1.0, sensitivity=1.0, gap=1.0):
    """The two neighbouring output densities and their log-ratio against the ±ε band.

    The noise is calibrated to ``sensitivity`` (Δf); the neighbours' answers differ by
    ``gap`` = |f(D1) - f(D2)|. While gap <= Δf the loss stays inside [-ε, ε] for every
    output r (seed 000, eq. 3); a gap above Δf (sensitivity understated) breaks it.
    """
    controls = {"epsilon": log_slider("privacy ε", epsilon, -1, 0.4),
                "sensitivity": float_slider("noise calibrated to Δf", sensitivity, 0.1, 4.0, 0.1),
                "gap": float_slider("|f(D1) − f(D2)|", gap, 0.0, 4.0, 0.1)}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.5, 3.5))
    r = np.linspace(-10, 14, 481)
    l1 = density_line(ax1, r, r * 0, color=PALETTE["blue"], label="p(r | D1)")
    l2 = density_line(ax1, r, r * 0, color=PALETTE["orange"], label="p(r | D2)", linestyle="--")
    label_axes(ax1, "released value r", "density", "Outputs on neighbouring datasets")
    ax1.set_xlim(r[0], r[-1])
    ax1.set_ylim(0, 1.05)
    ax1.legend(loc="upper right", fontsize=8)
    bnd = band(ax2, r, -1, 1, color=PALETTE["green"], alpha=0.2, label=r"allowed: $[-\varepsilon, \varepsilon]$")
    loss = density_line(ax2, r, r * 0, color=PALETTE["vermillion"], label=r"$\ln p(r|D_1)/p(r|D_2)$")
    hline(ax2, 0.0)
    label_axes(ax2, "released value r", "privacy loss (nats)", "Privacy loss against the ε band")
    ax2.set_xlim(r[0], r[-1])
    ax2.set_ylim(-4, 4)
    ax2.legend(loc="lower left", fontsize=8)
    txt = note(ax2, "", loc="upper right")

    def update(epsilon, sensitivity, gap):
        b = mechanisms.laplace_scale(sensitivity, epsilon)
        l1.set_ydata(_laplace_pdf(r, 0.0, b))
        l2.set_ydata(_laplace_pdf(r, gap, b))
        y = mechanisms.privacy_loss(r, 0.0, gap, b)
        loss.set_ydata(y)
        set_band(bnd, r, -epsilon, epsilon)
        worst = gap / b
        ok = worst <= epsilon * (1 + 1e-12)
        txt.set_text(f"max loss = {worst:.3g}\nε = {epsilon:.3g}\n" + ("inside the band" if ok else "BREAKS ε-DP")
                     + ("\n(curve leaves the chart)" if worst > 4 else ""))
        loss.set_color(PALETTE["vermillion"] if ok else PALETTE["purple"])
        verdict = ("stays inside [−ε, ε]: ε-DP holds" if ok else
                   f"exceeds ε by a factor {worst / epsilon:.2f}: the sensitivity was understated")
        return (f"b = Δf/ε = {b:.3g}; worst-case loss |f(D1)−f(D2)|/b = {worst:.3g} — {verdict}")

    return Panel(controls, fig, update, title="Privacy loss of the Laplace mechanism")


@register
def laplace_tail_vs_samples(epsilon=1.0, sensitivity=1.0, n=2000, seed=0):
    """Pr[|noise| >= t] = exp(-t/b): the tail formula against the fraction of n samples."""
    controls = {"epsilon": log_slider("privacy ε", epsilon, -1, 1),
                "sensitivity": float_slider("sensitivity Δf", sensitivity, 0.1, 5.0, 0.1),
                "n": int_slider("samples n", n, 50, 20000, 50),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.4))
    # one pool of unit-scale noise per seed, drawn once; the sliders only rescale and cut it
    pools = {}
    t = np.linspace(0, 30, 301)
    theory = density_line(ax, t, t * 0, color=PALETTE["blue"], label=r"$e^{-t/b}$")
    (emp,) = ax.step(t, t * 0, where="post", color=PALETTE["orange"], label="fraction of samples",
                     linewidth=1.6)
    mark = vline(ax, 0.0, label=r"$t$ for 95%: $b \ln 20$")
    label_axes(ax, "error t (query units)", r"$\Pr[|\mathrm{noise}| \geq t]$", "Accuracy: how far can the noise go?")
    ax.set_xlim(0, 30)
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="upper right", fontsize=8)
    txt = note(ax, "", loc="lower left")

    def update(epsilon, sensitivity, n, seed):
        if seed not in pools:
            unit = mechanisms.laplace_mechanism(0.0, 1.0, 1.0, rng=np.random.default_rng(seed),
                                                size=20000)       # Lap(1), rescaled by b
            pools[seed] = np.abs(unit)
        b = mechanisms.laplace_scale(sensitivity, epsilon)
        sample = np.sort(pools[seed][:n]) * b
        frac = 1.0 - np.searchsorted(sample, t, side="left") / n
        theory.set_ydata(bounds.laplace_tail(b, t))
        emp.set_ydata(frac)
        t95 = bounds.laplace_accuracy(b, 0.05)     # Pr[|noise| >= t95] = 5%
        mark.set_xdata([t95, t95])
        within = np.mean(sample < t95)
        txt.set_text(f"b = {b:.3g}; 95% of noise within {t95:.3g}\n"
                     f"sample: {100 * within:.1f}% within")
        return (f"b = {b:.3g}. Theory: Pr[|noise| ≥ t·b] = e<sup>−t</sup>, so 95% of releases are within "
                f"b·ln 20 = {t95:.3g}; in these {n} samples {100 * within:.1f}% are.")

    return Panel(controls, fig, update, title="Accuracy: the Laplace tail bound against samples")


_SMALL = np.array([3, 7, 1, 0, 5, 2, 4, 6])
_LARGE = np.array([3120, 7480, 1015, 240, 5230, 2210, 4105, 6020])
_BINS = ["A", "B", "C", "D", "E", "F", "G", "H"]


@register
def laplace_histogram(epsilon=1.0, counts="small", seed=0):
    """A histogram released with Lap(1/ε) per bin (Δ = 1 under add/remove, seed 001)."""
    controls = {"epsilon": log_slider("privacy ε", epsilon, -2, np.log10(30)),
                "counts": dropdown("counts", [("small (tens)", "small"), ("large (thousands)", "large")],
                                   counts),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.4))
    x = np.arange(len(_BINS))
    true_bars = ax.bar(x - 0.2, _SMALL, width=0.4, color=PALETTE["grey"], label="true count")
    noisy_bars = ax.bar(x + 0.2, _SMALL, width=0.4, color=PALETTE["blue"], label="released")
    hline(ax, 0.0, linestyle="-")
    ax.set_xticks(x, _BINS)
    label_axes(ax, "histogram bin", "count ÷ unit (see box)", r"Releasing a histogram with $\mathrm{Lap}(1/\varepsilon)$ per bin")
    # one fixed scale for both datasets (counts drawn in units of 1 or 1000), so that
    # switching datasets moves no axis: the same bars, and noise 1000 times smaller
    top = 1.25 * max(_SMALL.max(), _LARGE.max() / 1000)
    ax.set_ylim(-0.35 * top, top)
    ax.legend(loc="upper right", fontsize=8)
    txt = note(ax, "")

    def update(epsilon, counts, seed):
        true, unit = (_SMALL, 1) if counts == "small" else (_LARGE, 1000)
        noisy = mechanisms.laplace_mechanism(true, 1.0, epsilon, rng=np.random.default_rng(seed))
        for bar, h in zip(true_bars, true / unit):
            bar.set_height(h)
        for bar, h in zip(noisy_bars, noisy / unit):   # noise may leave the fixed chart
            bar.set_height(h)
        mae = np.mean(np.abs(noisy - true))
        rel = mae / true.mean()
        txt.set_text(f"unit = {unit}; b = 1/ε = {1 / epsilon:.3g}\n"
                     f"mean |error| = {mae:.3g} ({100 * rel:.2g}% of mean count)")
        return (f"ε = {epsilon:.3g}: noise scale 1/ε = {1 / epsilon:.3g}; mean absolute error "
                f"{mae:.3g}, i.e. {100 * rel:.3g}% of the average count.")

    return Panel(controls, fig, update, title="A noisy histogram: when does ε matter?")

