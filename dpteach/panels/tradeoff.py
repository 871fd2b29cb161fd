"""Panels for notebook 13, what epsilon means as a test.

- ``loss_distribution``: the privacy loss L of Laplace, Gaussian and randomized response
  as a distribution (stems for atoms, a curve for a density), with delta(eps') -- the
  hockey-stick divergence -- against Pr[L > eps'].
- ``tradeoff_curves``: the (eps, delta) region against the exact curves of the Laplace
  mechanism and of mu-Gaussian DP.
- ``tradeoff_attack``: a membership-inference attack on a released count; its measured
  (alpha, beta) over thresholds against the region every (eps, delta)-DP mechanism
  keeps an attacker in.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection

from .. import mechanisms, tradeoff
from ..plots import (PALETTE, band, density_line, hline, label_axes, log_axes, new_figure,
                    note, set_band, vline)
from ._controls import dropdown, float_slider, int_slider, log_slider
from ._panel import Panel
from ._registry import register

__all__ = ["loss_distribution", "tradeoff_curves", "tradeoff_attack"]

_MECHS = [("Laplace, b = Δ/ε", "laplace"), ("Gaussian, analytic σ for (ε, δ)", "gaussian"),
          ("randomized response", "randomized_response")]


def _pld(mechanism, epsilon, delta):
    if mechanism == "gaussian":
        sigma = mechanisms.gaussian_sigma(1.0, epsilon, delta, analytic=True)
        return tradeoff.privacy_loss_distribution("gaussian", sigma=sigma)
    return tradeoff.privacy_loss_distribution(mechanism, epsilon=epsilon)


#: the largest eps'/eps on the loss panel's slider and axis
R_MAX = 2.0


@register
def loss_distribution(mechanism="laplace", epsilon=1.0, delta=1e-5, ratio=0.5):
    """The privacy loss distribution and delta(eps') against Pr[L > eps'], eps' = ratio * eps."""
    controls = {"mechanism": dropdown("mechanism", _MECHS, mechanism),
                "epsilon": log_slider("ε", epsilon, -1, 0.5),
                "delta": log_slider("δ target", delta, -8, -2, 0.25, readout_format=".0e"),
                "ratio": float_slider("ε′ / ε", ratio, 0.0, R_MAX, 0.05)}
    fig, (ax, ax2) = new_figure(1, 2, figsize=(9.6, 3.6))
    x = np.linspace(-4, 4, 801)               # loss in units of eps
    zero = 0 * x
    shade = band(ax, x, zero, zero, color=PALETTE["vermillion"], alpha=0.35, label=r"$L > \varepsilon'$")
    dens = density_line(ax, x, zero, color=PALETTE["blue"], label=r"density $\times\ \varepsilon$")
    stems = LineCollection([], colors=PALETTE["blue"], linewidths=3)
    ax.add_collection(stems)
    (tops,) = ax.plot([], [], "o", color=PALETTE["blue"], ms=6, label="atoms (probability)")
    cut = vline(ax, 0.5, color=PALETTE["vermillion"], label="ε′")
    vline(ax, 1.0)
    vline(ax, -1.0)
    ax.set_xlim(x[0], x[-1])
    ax.set_ylim(0, 1.6)
    label_axes(ax, r"privacy loss $L/\varepsilon$", r"probability / density $\times\,\varepsilon$",
               "Distribution of the privacy loss")
    ax.legend(loc="upper left", fontsize=8)
    r = np.linspace(0.0, R_MAX, 121)
    nan = np.full(r.size, np.nan)
    l_delta = density_line(ax2, r, nan, color=PALETTE["blue"],
                           label=r"$\delta(\varepsilon')=\mathrm{E}[(1-e^{\varepsilon'-L})_+]$")
    l_tail = density_line(ax2, r, nan, color=PALETTE["orange"], linestyle="--",
                          label=r"$\Pr[L>\varepsilon']$")
    (dots,) = ax2.plot([ratio, ratio], [0.1, 0.1], "o", color=PALETTE["black"], zorder=5)
    target = hline(ax2, delta, color=PALETTE["grey"], label="δ target")
    (cross,) = ax2.plot([1.0], [delta], "D", color=PALETTE["green"], ms=6, zorder=6,
                        label="ε(δ): δ(ε′) meets the target")
    log_axes(ax2, x=False, plain=True)            # plain tick labels: no mathtext on every layout
    ax2.set_xlim(0, R_MAX)
    ax2.set_ylim(1e-8, 1.5)
    label_axes(ax2, r"$\varepsilon'/\varepsilon$", "probability", r"$\delta(\varepsilon')$ is not $\Pr[L > \varepsilon']$")
    ax2.legend(loc="lower left", fontsize=8)
    txt = note(ax2, "", loc="upper right")

    def update(mechanism, epsilon, delta, ratio):
        pld = _pld(mechanism, epsilon, delta)
        if mechanism == "gaussian":
            # density of L/eps is eps * density of L at eps * x
            g = tradeoff.privacy_loss_distribution("gaussian", sigma=pld.params["sigma"],
                                                   grid=x * epsilon)
            dens.set_ydata(epsilon * g.density)
        elif mechanism == "laplace":
            inside = np.abs(x) < 1
            dens.set_ydata(np.where(inside, epsilon * 0.25 * np.exp(-(epsilon - x * epsilon) / 2),
                                    np.nan))
        else:
            dens.set_ydata(np.full(x.size, np.nan))
        ax_atoms = pld.atoms / epsilon
        stems.set_segments([[(a, 0.0), (a, p)] for a, p in zip(ax_atoms, pld.atom_probs)])
        tops.set_data(ax_atoms, pld.atom_probs)
        y = dens.get_ydata()
        set_band(shade, x, zero, np.where(x > ratio, np.nan_to_num(y), 0.0))
        cut.set_xdata([ratio, ratio])
        epsilons = r * epsilon
        d, t = pld.delta(epsilons), pld.tail(epsilons)
        l_delta.set_ydata(np.where(d > 0, d, np.nan))
        l_tail.set_ydata(np.where(t > 0, t, np.nan))
        d0, t0 = float(pld.delta(ratio * epsilon)), float(pld.tail(ratio * epsilon))
        dots.set_data([ratio, ratio], [max(d0, 1e-9), max(t0, 1e-9)])
        target.set_ydata([delta, delta])
        e_delta = pld.epsilon(delta)
        cross.set_data([e_delta / epsilon], [delta])
        txt.set_text(f"ε′ = {ratio * epsilon:.3g}\nδ(ε′) = {d0:.3g}\nPr[L > ε′] = {t0:.3g}\n"
                     f"ε(δ) = {e_delta:.3g}")
        # the axes hold what is drawn: the loss of Laplace and randomized response stops at
        # eps (ratio 1); the Gaussian's goes on until its tail leaves the log axis (1e-8)
        if mechanism == "gaussian":
            mu = 1.0 / pld.params["sigma"]
            lo_l, hi_l = (mu * mu / 2 - 4.5 * mu) / epsilon, (mu * mu / 2 + 4.5 * mu) / epsilon
            seen = r[t > 1e-8]
            right = float(seen[-1]) if seen.size else 1.0
        else:
            lo_l, hi_l, right = -1.0, 1.0, 1.0
        # rounded to 0.25 so that most slider moves keep the limits (and the cached background)
        left = (max(np.floor((min(lo_l, -1.0) - 0.15) * 4) / 4, x[0]),
                min(np.ceil((max(hi_l, 1.0) + 0.15) * 4) / 4, x[-1]))
        right_lim = (0.0, min(np.ceil((max(right, ratio) + 0.1) * 4) / 4, R_MAX))
        if ax.get_xlim() != left:
            ax.set_xlim(*left)
        if ax2.get_xlim() != right_lim:
            ax2.set_xlim(*right_lim)
        return (f"{mechanism}: at ε′ = {ratio * epsilon:.4g}, δ(ε′) = {d0:.4g} while "
                f"Pr[L > ε′] = {t0:.4g}; E[L] = {pld.mean:.4g} nats; it is "
                f"(ε′, {delta:.0e})-DP from ε′ = {e_delta:.4g}")

    return Panel(controls, fig, update, title="The privacy loss is a random variable", full_draw_on_move=True)


# ------------------------------------------------------------------ trade-off curves
@register
def tradeoff_curves(epsilon=1.0, delta=1e-5, mu=1.0):
    """The (eps, delta) region beta >= f(alpha) against the exact curves of the Laplace
    mechanism (at eps) and of a mu-Gaussian DP mechanism, with the Gaussian's own
    (eps, delta_mu(eps)) curve, which touches G_mu."""
    controls = {"epsilon": log_slider("ε", epsilon, -1, 0.5),
                "delta": log_slider("δ", delta, -8, -1, 0.25, readout_format=".0e"),
                "mu": float_slider("Gaussian μ = Δ/σ", mu, 0.1, 3.0, 0.05)}
    # wide and short like the other panels: the square plot on the left, the legend beside it
    fig, ax = new_figure(1, 1, figsize=(9.0, 4.4))
    a = np.linspace(0, 1, 401)
    zero = 0 * a
    forbidden = band(ax, a, zero, zero, color=PALETTE["grey"], alpha=0.3,
                     label="forbidden by (ε, δ)-DP")
    f_line = density_line(ax, a, zero, color=PALETTE["black"], label="f(α) for (ε, δ)")
    lap = density_line(ax, a, zero, color=PALETTE["blue"], linestyle="--",
                       label="Laplace at ε (exact)")
    gau = density_line(ax, a, zero, color=PALETTE["orange"], label="Gaussian G_μ (exact)")
    g_f = density_line(ax, a, zero, color=PALETTE["orange"], linestyle=":",
                       label="f(α) for (ε, δ_μ(ε))")
    (kink,) = ax.plot([0.5], [0.5], "o", color=PALETTE["black"], zorder=5)
    ax.plot([0, 1], [1, 0], ":", color=PALETTE["grey"], lw=1)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    label_axes(ax, "α: type I error", "β: type II error", "Trade-off curves")
    ax.legend(loc="upper left", bbox_to_anchor=(1.04, 1.0), fontsize=9)
    txt = note(ax, "", loc="upper right")
    txt.set_y(0.62)

    def update(epsilon, delta, mu):
        f = tradeoff.tradeoff_curve(a, epsilon, delta)
        f_line.set_ydata(f)
        set_band(forbidden, a, zero, f)
        lap.set_ydata(tradeoff.laplace_tradeoff(a, epsilon))
        gau.set_ydata(tradeoff.gaussian_tradeoff(a, mu))
        d_mu = float(tradeoff.privacy_loss_distribution("gaussian", sigma=1 / mu).delta(epsilon))
        g_f.set_ydata(tradeoff.tradeoff_curve(a, epsilon, min(d_mu, 1 - 1e-12)))
        k = (1 - delta) / (1 + np.exp(epsilon))
        kink.set_data([k], [k])
        beta5 = float(tradeoff.tradeoff_curve(0.05, epsilon, delta))
        txt.set_text(f"at α = 0.05: β ≥ {beta5:.3f}\nbest 1 − α − β ≤ "
                     f"{tradeoff.advantage_bound(epsilon, delta):.3f}\nδ_μ(ε) = {d_mu:.2e}")
        return (f"(ε, δ) = ({epsilon:.3g}, {delta:.0e}): an attacker with α = 0.05 misses at least "
                f"β = {beta5:.4f}; the kink is at α = β = {k:.4f}. A {mu:.3g}-GDP mechanism is "
                f"(ε, {d_mu:.3g})-DP at this ε.")

    return Panel(controls, fig, update, title="ε and δ as limits on an attacker's two errors")


# ------------------------------------------------------------------ the attack
_RELEASES = [("no noise (exact count)", "none"), ("Laplace, b = 1/ε", "laplace"),
             ("Laplace, Δ understated (b = 1/(4ε))", "understated"),
             ("Gaussian, analytic σ for (ε, δ)", "gaussian")]
COUNT = 40
N_MAX = 20000


@register
def tradeoff_attack(epsilon=1.0, delta=1e-5, release="laplace", n_trials=4000, seed=0):
    """Measured (alpha, beta) of a threshold attack on a released count against the
    (eps, delta)-DP region beta >= f(alpha)."""
    controls = {"epsilon": log_slider("ε", epsilon, -1, 0.5),
                "delta": log_slider("δ", delta, -8, -1, 0.25, readout_format=".0e"),
                "release": dropdown("release", _RELEASES, release),
                "n_trials": int_slider("trials per table", n_trials, 500, N_MAX, 500),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, ax = new_figure(1, 1, figsize=(9.6, 3.6))   # the size of the course's other panels
    a = np.linspace(0, 1, 401)
    forbidden = band(ax, a, 0 * a, 0 * a, color=PALETTE["grey"], alpha=0.3,
                     label="forbidden by (ε, δ)-DP")
    curve = density_line(ax, a, 0 * a, color=PALETTE["black"], label="f(α) for (ε, δ)")
    exact = density_line(ax, a, 0 * a, color=PALETTE["blue"], linestyle="--",
                         label="this release: exact curve")
    (points,) = ax.plot([], [], "o", color=PALETTE["vermillion"], ms=5,
                        label="attack: measured (α, β)")
    ax.plot([0, 1], [1, 0], ":", color=PALETTE["grey"], lw=1)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    label_axes(ax, "α: type I error (says 'in', target out)", "β: type II error (misses)",
               "Membership inference on a count")
    # legend and readout to the right of the square plot: nothing covers the points
    ax.legend(loc="upper left", bbox_to_anchor=(1.04, 1.0), fontsize=8)
    txt = note(ax, "", loc="lower left")
    txt.set_x(1.04)
    pools = {}

    def update(epsilon, delta, release, n_trials, seed):
        if seed not in pools:
            g = np.random.default_rng(seed)
            # unit-scale noise drawn once per seed, rescaled by b or sigma on each redraw; the
            # Gaussian mechanism has no unit-scale form, so its stream is N(0, 1) itself
            pools[seed] = (mechanisms.laplace_mechanism(0.0, 1.0, 1.0, rng=g, size=(2, N_MAX)),
                           g.normal(size=(2, N_MAX)))
        lap, gau = pools[seed]
        if release == "none":
            z = np.zeros((2, n_trials))
            exact.set_ydata(np.full(a.size, np.nan))
        elif release in ("laplace", "understated"):
            b = (1.0 if release == "laplace" else 0.25) / epsilon
            z = lap[:, :n_trials] * b
            exact.set_ydata(tradeoff.laplace_tradeoff(a, 1.0 / b))
        else:
            sigma = mechanisms.gaussian_sigma(1.0, epsilon, delta, analytic=True)
            z = gau[:, :n_trials] * sigma
            exact.set_ydata(tradeoff.gaussian_tradeoff(a, 1.0 / sigma))
        out, in_ = COUNT + z[0], COUNT + 1 + z[1]
        alpha, beta = tradeoff.empirical_tradeoff(out, in_, tradeoff.attack_thresholds(out, in_, count=COUNT))
        points.set_data(alpha, beta)
        f = tradeoff.tradeoff_curve(a, epsilon, delta)
        curve.set_ydata(f)
        set_band(forbidden, a, 0 * a, f)
        # flagged only when the Clopper-Pearson box (level 1e-6) lies wholly below f
        below = int(np.sum(tradeoff.outside_region(alpha, beta, n_trials, n_trials,
                                                   epsilon, delta)))
        adv = float(np.max(1 - alpha - beta))
        bound = tradeoff.advantage_bound(epsilon, delta)
        txt.set_text(f"{below} of {alpha.size} points surely below f\n"
                     f"best 1 − α − β = {adv:.3f}\nDP allows ≤ {bound:.3f}")
        return (f"{release}: {below} of {alpha.size} measured (α, β) points lie in the forbidden "
                f"region beyond their Clopper-Pearson boxes (level 1e-6); the best attacker advantage 1 − α − β = {adv:.3f}, and (ε, δ)-DP allows "
                f"at most (e^ε − 1 + 2δ)/(e^ε + 1) = {bound:.3f}")

    return Panel(controls, fig, update, title="ε as a test: what an attacker can and cannot do")
