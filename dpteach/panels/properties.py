"""Panels for notebook 12, the properties of differential privacy.

- ``postprocessing``: the exact output distributions of f(M(x)) and f(M(x')) for a
  Laplace release and a function f (rounding, clamping, thresholding), and the largest
  log-ratio over output sets of every f against eps.
- ``group_privacy``: datasets k people apart -- the Laplace loss reaches k eps; for the
  Gaussian mechanism the true delta at k eps against the bound k e^((k-1) eps) delta.
- ``parallel_composition``: a histogram over disjoint bins costs one eps; cumulative
  (overlapping) counts cost the sum.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection

from .. import mechanisms, properties
from ..properties import group_curves, parallel_costs
from ..accounting import basic_composition
from ..plots import (PALETTE, band, density_line, hline, label_axes, log_axes, new_figure,
                    note, set_band)
from ._controls import dropdown, float_slider, int_slider, log_slider
from ._panel import Panel
from ._registry import register

__all__ = ["postprocessing", "group_privacy_loss", "parallel_histogram"]

_LABELS = {"identity": "none (the release)", "round": "round to a step",
           "clamp": "clamp to 0.5 ± c/2", "threshold": "report release > t"}
#: what the one number slider means for each f (its label follows the dropdown)
_PARAMETER = {"identity": "(not used by f)", "round": "rounding step",
              "clamp": "clamp width c", "threshold": "threshold t"}


def _stems(law, width):
    """Segments and tops for the atoms of an OutputLaw (probability as stem height)."""
    keep = law.atom_probs > 1e-4
    x, p = law.atoms[keep], law.atom_probs[keep]
    segs = np.stack([np.column_stack([x + width, 0 * x]), np.column_stack([x + width, p])], axis=1)
    return segs, x + width, p


@register
def postprocessing(epsilon=1.0, f="round", parameter=1.0):
    """Output laws of f(x + Lap(1/eps)) on neighbouring counts 0 and 1, and the largest
    log-ratio over output sets of every f, in units of eps."""
    controls = {"epsilon": log_slider("privacy ε", epsilon, -1, 0.5),
                "f": dropdown("function f",
                              [(v, k) for k, v in _LABELS.items()], f),
                "parameter": float_slider(_PARAMETER[f], parameter, 0.2, 4.0, 0.1)}
    fig, (ax, ax2) = new_figure(1, 2, figsize=(9.6, 3.6), gridspec_kw={"width_ratios": [1.7, 1]})
    nan = np.full(2, np.nan)
    d1 = density_line(ax, nan, nan, color=PALETTE["blue"], label="f(M(x)), count 0")
    d2 = density_line(ax, nan, nan, color=PALETTE["orange"], linestyle="--",
                      label="f(M(x')), count 1")
    s1 = LineCollection([], colors=PALETTE["blue"], linewidths=2.5)
    s2 = LineCollection([], colors=PALETTE["orange"], linewidths=2.5)
    ax.add_collection(s1)
    ax.add_collection(s2)
    (t1,) = ax.plot([], [], "o", color=PALETTE["blue"], ms=4)
    (t2,) = ax.plot([], [], "s", color=PALETTE["orange"], ms=4)
    ax.set_xlim(-8, 9)
    ax.set_ylim(0, 1.05)
    label_axes(ax, "output of f", "probability (stems) / density (curves)",
               "Exact output laws of f(M(x)) and f(M(x'))")
    ax.legend(loc="upper right", fontsize=8)
    names = list(_LABELS)
    xs = np.arange(len(names))
    bars = ax2.bar(xs, np.zeros(len(names)), color=PALETTE["sky"])
    hline(ax2, 1.0, color=PALETTE["vermillion"])
    ax2.set_xticks(xs, ["none", "round", "clamp", "threshold"], fontsize=8)
    ax2.set_ylim(0, 1.25)
    label_axes(ax2, "f", r"max log-ratio over sets $/\ \varepsilon$", "Privacy loss after f (line: ε)")
    txt = note(ax, "", loc="upper left")

    def update(epsilon, f, parameter):
        controls["parameter"].description = _PARAMETER[f]
        b = mechanisms.laplace_scale(1.0, epsilon)
        kw = dict(step=parameter, lower=0.5 - parameter / 2, upper=0.5 + parameter / 2,
                  threshold=parameter)
        grid = np.linspace(-8, 9, 681)
        law1 = properties.postprocess_laplace(0.0, b, f, grid=grid, **kw)
        law2 = properties.postprocess_laplace(1.0, b, f, grid=grid, **kw)
        shift = 0.04 * parameter if f == "round" else 0.08
        for law, line, stems, tops, w in ((law1, d1, s1, t1, -shift), (law2, d2, s2, t2, shift)):
            if law.grid.size:
                line.set_data(law.grid, law.density)
            else:
                line.set_data([], [])
            segs, x, p = _stems(law, w)
            stems.set_segments(list(segs))
            tops.set_data(x, p)
        ratios = [properties.max_log_ratio(0.0, 1.0, b, g, **kw) for g in names]
        for bar, r, g in zip(bars, ratios, names):
            bar.set_height(min(r / epsilon, 1.2))
            bar.set_color(PALETTE["blue"] if g == f else PALETTE["sky"])
        mine = ratios[names.index(f)]
        what = "" if f == "identity" else f"\n{_PARAMETER[f]} = {parameter:.3g}"
        txt.set_text(f"b = 1/ε = {b:.3g}\nmax log-ratio = {mine:.3g}\nε = {epsilon:.3g}{what}")
        return (f"f = {_LABELS[f]}: largest log-ratio over output sets {mine:.4g} "
                f"≤ ε = {epsilon:.4g}; all four f: " + ", ".join(f"{r:.3g}" for r in ratios))

    return Panel(controls, fig, update, title="Post-processing never adds privacy loss")


# ------------------------------------------------------------------ group privacy
K_MAX = 10


@register
def group_privacy_loss(epsilon=0.5, delta=1e-6, k=3):
    """Datasets k people apart: the Laplace loss against ±k eps, and the Gaussian
    mechanism's true delta at k eps against k e^((k-1) eps) delta."""
    controls = {"epsilon": log_slider("privacy ε", epsilon, -1, 0.3),
                "delta": log_slider("δ", delta, -10, -3, 0.25, readout_format=".0e"),
                "k": int_slider("group size k", k, 1, K_MAX)}
    fig, (ax, ax2) = new_figure(1, 2, figsize=(9.6, 3.6))
    r = np.linspace(-4, 14, 721)            # the release, in counts (true counts 0 and k)
    bnd = band(ax, r, -1, 1, color=PALETTE["green"], alpha=0.2, label=r"$\pm k\varepsilon$")
    one = density_line(ax, r, 0 * r, color=PALETTE["grey"], linestyle=":", label="k = 1")
    lk = density_line(ax, r, 0 * r, color=PALETTE["vermillion"], label="k apart")
    ax.set_xlim(r[0], r[-1])
    ax.set_ylim(-K_MAX - 0.8, K_MAX + 0.8)
    # with b = 1/eps the loss is eps (|r - k| - |r|): in units of eps it does not depend on eps
    label_axes(ax, r"release $r$ (counts; true counts $0$ and $k$)", r"loss / $\varepsilon$",
               "Laplace loss, counts k apart")
    ax.legend(loc="lower right", fontsize=8)
    ks = np.arange(1, K_MAX + 1)
    nan = np.full(ks.size, np.nan)
    l_true = density_line(ax2, ks, nan, color=PALETTE["blue"],
                          label=r"Gaussian: true $\delta$ at $k\varepsilon$")
    l_chain = density_line(ax2, ks, nan, color=PALETTE["green"], linestyle="-.",
                           label=r"chain: $\delta\,(e^{k\varepsilon}-1)/(e^{\varepsilon}-1)$")
    l_bound = density_line(ax2, ks, nan, color=PALETTE["orange"], linestyle="--",
                           label=r"textbook: $k\,e^{(k-1)\varepsilon}\,\delta$")
    (dots,) = ax2.plot([k, k], [1, 1], "o", color=PALETTE["black"], zorder=5)
    hline(ax2, 1.0)
    log_axes(ax2, x=False, plain=True)            # plain tick labels: no mathtext on every layout
    ax2.set_xlim(0.5, K_MAX + 0.5)
    ax2.set_ylim(1e-12, 1e3)
    ax2.set_xticks(ks)
    label_axes(ax2, "group size k", "δ for the group", "Approximate DP for groups")
    ax2.legend(loc="lower right", fontsize=8)
    txt = note(ax, "", loc="upper left")

    def update(epsilon, delta, k):
        # loss of count 0 against count k, Lap(b) noise, r in units of b: (|r - k| - |r|)
        lk.set_ydata(mechanisms.privacy_loss(r, 0.0, float(k), 1.0))
        one.set_ydata(mechanisms.privacy_loss(r, 0.0, 1.0, 1.0))
        set_band(bnd, r, -k, k)
        true, bound = group_curves(epsilon, delta, ks)
        l_true.set_ydata(np.clip(true, 1e-13, None))
        l_bound.set_ydata(np.clip(bound, 1e-13, 1e4))
        chain = np.array([properties.group_privacy_chain(epsilon, delta, int(j))[1] for j in ks])
        l_chain.set_ydata(np.clip(chain, 1e-13, 1e4))
        dots.set_data([k, k], [max(true[k - 1], 1e-13), min(bound[k - 1], 1e4)])
        eps_k, delta_k = properties.group_privacy(epsilon, delta, k)
        txt.set_text(f"k = {k}: max loss = {k}ε = {eps_k:.3g}")
        return (f"k = {k}: pure part kε = {eps_k:.4g}; bound kδe^((k−1)ε) = {delta_k:.3g}; "
                f"chain sum {chain[k - 1]:.3g}; the Gaussian mechanism's true δ at kε = "
                f"{true[k - 1]:.3g}")

    return Panel(controls, fig, update, title="Group privacy: k people cost kε")


# ------------------------------------------------------------------ parallel composition
B_MAX = 20


@register
def parallel_histogram(epsilon=0.5, n_bins=8, seed=0):
    """A histogram over disjoint bins and the cost of disjoint against overlapping counts."""
    controls = {"epsilon": log_slider("ε per count", epsilon, -1, 0.3),
                "n_bins": int_slider("bins", n_bins, 1, B_MAX),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, (ax, ax2) = new_figure(1, 2, figsize=(9.6, 3.6))
    xs = np.arange(B_MAX)
    true_bars = ax.bar(xs - 0.2, np.zeros(B_MAX), width=0.4, color=PALETTE["grey"], label="true")
    noisy_bars = ax.bar(xs + 0.2, np.zeros(B_MAX), width=0.4, color=PALETTE["blue"],
                        label="released")
    hline(ax, 0.0, linestyle="-")
    ax.set_xlim(-0.7, B_MAX - 0.3)
    ax.set_xticks(xs[::2])
    ax.set_ylim(-15, 75)
    label_axes(ax, "bin (age group)", "count", r"Disjoint bins, $\mathrm{Lap}(1/\varepsilon)$ each")
    ax.legend(loc="upper right", fontsize=8)
    bs = np.arange(1, B_MAX + 1)
    density_line(ax2, bs, 0 * bs + 1.0, color=PALETTE["blue"], label="disjoint bins: max")
    density_line(ax2, bs, bs.astype(float), color=PALETTE["vermillion"], linestyle="--",
                 label="cumulative counts: sum")
    (p_dis,) = ax2.plot([n_bins], [1.0], "o", color=PALETTE["blue"], zorder=5)
    (p_cum,) = ax2.plot([n_bins], [n_bins], "s", color=PALETTE["vermillion"], zorder=5)
    ax2.set_xlim(0.5, B_MAX + 0.5)
    ax2.set_ylim(0, B_MAX + 1)
    label_axes(ax2, "number of counts released", r"total $\varepsilon$ / $\varepsilon$ per count",
               "Parallel against sequential")
    ax2.legend(loc="upper left", fontsize=8)
    txt = note(ax2, "", loc="lower right")
    txt.set_y(0.1)                          # above the flat "max" line
    pools = {}

    def update(epsilon, n_bins, seed):
        if seed not in pools:
            g = np.random.default_rng(seed)
            pools[seed] = (g.integers(5, 60, size=B_MAX),   # counts, then unit Laplace noise
                           mechanisms.laplace_mechanism(0.0, 1.0, 1.0, rng=g, size=B_MAX))
        counts, z = pools[seed]
        noisy = counts + z / epsilon
        for i, (tb, nb) in enumerate(zip(true_bars, noisy_bars)):
            tb.set_height(counts[i] if i < n_bins else 0.0)
            nb.set_height(noisy[i] if i < n_bins else 0.0)
        dis, cum = parallel_costs(epsilon, n_bins)
        p_dis.set_data([n_bins], [dis / epsilon])
        p_cum.set_data([n_bins], [cum / epsilon])
        par = properties.parallel_composition([epsilon] * n_bins)[0]
        seq = basic_composition([epsilon] * n_bins)[0]
        txt.set_text(f"{n_bins} counts at ε = {epsilon:.3g}\ndisjoint: {par:.3g}\n"
                     f"overlapping: {seq:.3g}")
        return (f"{n_bins} counts at ε = {epsilon:.3g} each: disjoint bins cost max = {par:.4g} "
                f"(worst loss {dis:.4g}); cumulative counts cost the sum = {seq:.4g} "
                f"(worst loss {cum:.4g})")

    return Panel(controls, fig, update, title="Parallel composition: disjoint data, one ε")
