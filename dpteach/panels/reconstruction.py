"""Panels for notebook 03, reconstruction attacks: Dinur-Nissim's exhaustive attack and
its 4E bound, LP and least-squares attacks on random subset queries, and the
differentially private defence. Every sweep is computed once when the panel is built
(small n) for the ``seed`` slider's current value and kept, so a slider move only
looks results up and redraws; moving the seed computes the sweep for a new population,
new queries and new noise once."""

from __future__ import annotations

import numpy as np

from ..attacks import reconstruction as rec
from ..plots import PALETTE, density_line, figure_png, hline, label_axes, log_axes, new_figure, note
from ._controls import dropdown, float_slider, int_slider, log_slider
from ._panel import Panel
from ._registry import register

__all__ = ["reconstruction_exhaustive", "reconstruction_random_queries",
           "reconstruction_dp_defence", "phase_transition_figure"]

_SEED = 403
_SEED_MAX = 20      # the seed sliders run over 0..20, as in the other panels
_BITS_CMAP = "cividis"


def _exhaustive_sweep(n, grid, rng):
    return rec.exhaustive_sweep(n, grid, rng=rng)


@register
def reconstruction_exhaustive(noise_bound=1.0, seed=0):
    """Dinur & Nissim's exhaustive attack on n = 10 people, all 2^10 subset sums answered
    with noise at most E. Every database consistent with all answers is within 4E of
    the truth; the panel lists them all and plots the worst one's distance against E,
    for answers steered towards a decoy (the adversarial case: the consistent-candidate
    attack can end 2·floor(2E) bits off, the bound's own limit) and for uniform noise.
    The dotted line is the lower bound the decoy proves for every attacker: a secret and
    its decoy differ in 2·floor(2E) bits and share one answer vector, so whatever is
    output is floor(2E) or more off in one of the two worlds (notebook 03). E < 1/2 pins
    the database down exactly. The ``seed`` slider draws another secret, decoy and
    uniform noise (about 6 ms)."""
    n = 10
    grid = np.round(np.arange(0.0, 3.01, 0.25), 2)
    controls = {"noise_bound": float_slider("noise bound E", noise_bound, 0.0, 3.0, 0.25),
                "seed": int_slider("seed", seed, 0, _SEED_MAX)}
    sweeps = {}

    def sweep(seed):
        if seed not in sweeps:
            sweeps[seed] = _exhaustive_sweep(n, grid, np.random.default_rng(_SEED + seed))
        return sweeps[seed]

    worst_decoy, worst_unif, count = sweep(seed)
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.4))
    ax.plot(grid, np.minimum(4 * grid, n), color=PALETTE["grey"], linestyle="--",
            label="Dinur–Nissim bound 4E")
    ax.plot(grid, np.minimum(np.floor(2 * grid + 1e-12), n // 2), color=PALETTE["black"],
            linestyle=":", label="no attacker can promise less: ⌊2E⌋")
    (l_decoy,) = ax.plot(grid, worst_decoy, "o-", color=PALETTE["vermillion"], markersize=4,
                         label="worst consistent database, decoy noise")
    (l_unif,) = ax.plot(grid, worst_unif, "s-", color=PALETTE["blue"], markersize=4,
                        label="worst consistent database, uniform noise")
    (mark,) = ax.plot([0], [0], "o", markersize=13, markerfacecolor="none",
                      markeredgecolor=PALETTE["black"], markeredgewidth=1.5)
    ax.set_xlim(-0.1, 3.1)
    ax.set_ylim(-0.3, n + 0.5)
    label_axes(ax, r"noise bound $E$ (answers within $\pm E$)", "bits wrong (of 10)",
               r"Exhaustive reconstruction from all $2^n$ subset sums")
    ax.legend(loc="upper left", fontsize=8)
    txt = note(ax, "", loc="lower right")

    def update(noise_bound, seed):
        worst_decoy, worst_unif, count = sweep(seed)
        l_decoy.set_ydata(worst_decoy)
        l_unif.set_ydata(worst_unif)
        i = int(np.argmin(np.abs(grid - noise_bound)))
        mark.set_data([grid[i]], [worst_decoy[i]])
        txt.set_text(f"E = {grid[i]:g}: {count[i]} consistent databases\n"
                     f"worst is {worst_decoy[i]} bits off; bound 4E = {4 * grid[i]:g}")
        floor2e = min(int(np.floor(2 * grid[i] + 1e-12)), n // 2)
        return (f"With every answer within E = {grid[i]:g}, {count[i]} databases fit all "
                f"{2 ** n} answers (decoy noise); the worst differs from the truth in "
                f"{worst_decoy[i]} of {n} positions, within 4E = {4 * grid[i]:g}. No attacker "
                f"can promise fewer than ⌊2E⌋ = {floor2e} wrong bits for every secret.")

    return Panel(controls, fig, update,
                 title="The exhaustive attack and its 4E guarantee")


_RATIOS = np.round(np.arange(0.0, 1.41, 0.2), 2)
_MN = (1, 2, 4, 8)


def _RandomQuerySweep(n, rng):
    return rec.RandomQuerySweep(n, _RATIOS, _MN, rng=rng)


def _random_query_sweep(n, rng):
    """fraction[method][m/n index, ratio index] and the guesses at each grid point
    (every m/n at once; the panel computes them one m/n at a time)."""
    sw = _RandomQuerySweep(n, rng)
    out = {m: np.array([sw.fraction(i)[m] for i in range(len(_MN))]) for m in ("lsq", "lp")}
    guesses = {(m, i, j): sw.guess(i, m, j) for m in ("lsq", "lp")
               for i in range(len(_MN)) for j in range(len(_RATIOS))}
    return sw.d, out, guesses


@register
def reconstruction_random_queries(ratio=0.4, queries_per_person=4, method="lp", seed=0):
    """LP and least-squares reconstruction of n = 64 secret bits from m random subset
    sums with Gaussian noise σ = ratio·√n. Left: the fraction of bits recovered against
    σ/√n for both attacks at the chosen m/n. Right: the secret (top) and the attack's
    guess (bottom), wrong bits marked. Noise well below √n exposes nearly everyone;
    more queries push the breaking point further out. The ``seed`` slider draws another
    population, queries and noise (the m/n shown is swept again: about 40 ms)."""
    n = 64
    controls = {"ratio": float_slider("σ / √n", ratio, 0.0, 1.4, 0.2),
                "queries_per_person": dropdown("queries m/n", list(_MN), queries_per_person),
                "method": dropdown("attack", [("LP (L1)", "lp"), ("least squares", "lsq")],
                                   method),
                "seed": int_slider("seed", seed, 0, _SEED_MAX)}
    sweeps = {}

    def sweep(seed):
        if seed not in sweeps:
            sweeps[seed] = _RandomQuerySweep(n, np.random.default_rng(_SEED + seed))
        return sweeps[seed]

    first = sweep(seed).fraction(_MN.index(queries_per_person))
    fig, (ax, axi) = new_figure(1, 2, figsize=(9.4, 3.4), gridspec_kw={"width_ratios": [1.6, 1]})
    (l_lp,) = ax.plot(_RATIOS, first["lp"], "o-", color=PALETTE["vermillion"], markersize=4,
                      label="LP (L1) decoding")
    (l_ls,) = ax.plot(_RATIOS, first["lsq"], "s-", color=PALETTE["blue"], markersize=4,
                      label="least squares")
    hline(ax, 0.5, color=PALETTE["grey"], linestyle=":", label="coin flipping")
    (mark,) = ax.plot([0], [0], "o", markersize=12, markerfacecolor="none",
                      markeredgecolor=PALETTE["black"], markeredgewidth=1.5)
    ax.set_xlim(-0.05, 1.45)
    ax.set_ylim(0.4, 1.02)
    label_axes(ax, r"noise $\sigma/\sqrt{n}$", "fraction of bits recovered", "Random subset queries")
    ax.legend(loc="lower left", fontsize=8)
    img = axi.imshow(np.zeros((3, n)), aspect="auto", cmap=_BITS_CMAP, vmin=0, vmax=1,
                     interpolation="nearest")
    axi.set_yticks([0, 1, 2], ["secret", "guess", "wrong"])
    label_axes(axi, "person", None, "Secret vs guess")

    def update(ratio, queries_per_person, method, seed):
        sw = sweep(seed)
        d = sw.d
        i = _MN.index(queries_per_person)
        j = int(np.argmin(np.abs(_RATIOS - ratio)))
        frac = sw.fraction(i)
        l_lp.set_ydata(frac["lp"])
        l_ls.set_ydata(frac["lsq"])
        mark.set_data([_RATIOS[j]], [frac[method][j]])
        g = sw.guess(i, method, j)
        img.set_data(np.vstack([d, g, (g != d).astype(float)]))
        name = "LP" if method == "lp" else "least squares"
        sigma = _RATIOS[j] * np.sqrt(n)
        return (f"m = {queries_per_person * n} queries, σ = {_RATIOS[j]:g}·√{n} = {sigma:.3g}: "
                f"{name} recovers {frac[method][j]:.1%} of the {n} bits "
                f"({int((g != d).sum())} wrong).")

    return Panel(controls, fig, update,
                 title="LP and least-squares reconstruction")


_LOG_EPS = np.round(np.arange(-1.0, 3.51, 0.25), 2)


def _dp_sweep(n, m, trials, prevalence, rng):
    return rec.dp_defence_sweep(n, m, trials, prevalence, _LOG_EPS, rng=rng)


@register
def reconstruction_dp_defence(epsilon=1.0, seed=0):
    """The defence: the curator answers the m = 4n = 256 random subset queries about
    n = 64 people with Laplace noise under a total budget ε, i.e. Lap(m/ε) per answer
    (sensitivity 1 per count, budget split evenly). The least-squares attacker's success
    (averaged over 5 populations, 30% of them with secret bit 1) against the budget ε;
    the grey line is what anyone gets by guessing the majority value, 0, for everybody.
    With a meaningful ε the attack is no better than that guess. The ``seed`` slider
    draws five other populations, their queries and noise."""
    n, m, trials, prev = 64, 256, 5, 0.3
    controls = {"epsilon": log_slider("total budget ε", epsilon, -1.0, 3.5, 0.25),
                "seed": int_slider("seed", seed, 0, _SEED_MAX)}
    sweeps = {}

    def sweep(seed):
        if seed not in sweeps:
            sweeps[seed] = _dp_sweep(n, m, trials, prev, np.random.default_rng(_SEED + seed))
        return sweeps[seed]

    frac, d, shown = sweep(seed)
    eps = 10.0 ** _LOG_EPS
    fig, (ax, axi) = new_figure(1, 2, figsize=(9.4, 3.4), gridspec_kw={"width_ratios": [1.6, 1]})
    curve = density_line(ax, eps, frac, color=PALETTE["blue"], label="least-squares attack")
    hline(ax, 1 - prev, color=PALETTE["grey"], label=f"majority guess ({1 - prev:.0%})")
    (mark,) = ax.plot([0], [0], "o", markersize=12, markerfacecolor="none",
                      markeredgecolor=PALETTE["black"], markeredgewidth=1.5)
    log_axes(ax, y=False)
    ax.set_ylim(0.4, 1.02)
    label_axes(ax, "total privacy budget ε", "fraction of bits recovered",
               "Laplace answers under a budget")
    ax.legend(loc="upper left", fontsize=8)
    img = axi.imshow(np.zeros((3, n)), aspect="auto", cmap=_BITS_CMAP, vmin=0, vmax=1,
                     interpolation="nearest")
    axi.set_yticks([0, 1, 2], ["secret", "guess", "wrong"])
    label_axes(axi, "person", None, "Secret vs guess")

    def update(epsilon, seed):
        frac, d, shown = sweep(seed)
        curve.set_ydata(frac)
        i = int(np.argmin(np.abs(_LOG_EPS - np.log10(epsilon))))
        mark.set_data([eps[i]], [frac[i]])
        g = shown[i]
        img.set_data(np.vstack([d, g, (g != d).astype(float)]))
        b = m / eps[i]
        return (f"ε = {eps[i]:.3g} in total: each of the {m} answers gets Lap({b:.3g}); the "
                f"attack recovers {frac[i]:.1%} of the bits on average, against "
                f"{1 - prev:.0%} for guessing 0 for everyone.")

    return Panel(controls, fig, update,
                 title="The differentially private defence")


def phase_transition_figure(table):
    """A static figure of :func:`dpteach.attacks.phase_transition`'s table: fraction of
    bits recovered against σ/√n, one line per n. Returns the Figure (notebook 03), which a
    notebook displays as a PNG (a Figure made without pyplot has no picture of its own)."""
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.6))
    colours = [PALETTE[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky")]
    for colour, (n, grp) in zip(colours * 3, table.groupby("n")):
        ax.plot(grp["ratio"], grp["fraction"], "o-", color=colour, markersize=3.5, label=f"n = {n}")
    hline(ax, 0.5, color=PALETTE["grey"], linestyle=":", label="coin flipping")
    ax.set_ylim(0.45, 1.02)
    label_axes(ax, r"noise $\sigma/\sqrt{n}$", "fraction of bits recovered",
               "Reconstruction breaks down once the noise reaches the order of √n")
    ax.legend(loc="upper right", fontsize=8)
    fig._repr_png_ = lambda: figure_png(fig)
    return fig
