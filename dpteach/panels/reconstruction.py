"""Panels for notebook 03, reconstruction attacks: Dinur-Nissim's exhaustive attack and
its 4E bound, LP and least-squares attacks on random subset queries, and the
differentially private defence. Every sweep is computed once when the panel is built
(small n), so a slider move only looks results up and redraws."""

from __future__ import annotations

import numpy as np

from ..attacks import reconstruction as rec
from ..plots import PALETTE, density_line, hline, label_axes, new_figure, note
from ._base import Panel, dropdown, float_slider, log_slider, register

__all__ = ["reconstruction_exhaustive", "reconstruction_random_queries",
           "reconstruction_dp_defence", "phase_transition_figure"]

_SEED = 403
_BITS_CMAP = "cividis"


def _exhaustive_sweep(n, grid, rng):
    """For each E: the worst Hamming distance to the truth among all databases consistent
    with (a) answers steered to a decoy and (b) uniform noise in [-E, E]; and how many
    databases are consistent."""
    d = (rng.random(n) < 0.5).astype(np.int8)
    worst_decoy, worst_unif, count_decoy = [], [], []
    for e in grid:
        answers, _ = rec.decoy_answers(d, e, rng=rng)
        cands = rec.consistent_candidates(answers, e)
        worst_decoy.append(int((cands != d).sum(axis=1).max()))
        count_decoy.append(len(cands))
        cands = rec.consistent_candidates(rec.bounded_noise_answers(d, e, rng=rng), e)
        worst_unif.append(int((cands != d).sum(axis=1).max()))
    return np.array(worst_decoy), np.array(worst_unif), np.array(count_decoy)


@register("reconstruction_exhaustive")
def reconstruction_exhaustive(noise_bound=1.0):
    """Dinur & Nissim's exhaustive attack on n = 10 people, all 2^10 subset sums answered
    with noise at most E. Every database consistent with all answers is within 4E of
    the truth; the panel lists them all and plots the worst one's distance against E,
    for answers steered towards a decoy (the adversarial case, which meets the bound)
    and for uniform noise. E < 1/2 pins the database down exactly."""
    n = 10
    grid = np.round(np.arange(0.0, 3.01, 0.25), 2)
    controls = {"noise_bound": float_slider("noise bound E", noise_bound, 0.0, 3.0, 0.25)}
    worst_decoy, worst_unif, count = _exhaustive_sweep(n, grid, np.random.default_rng(_SEED))
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.4))
    ax.plot(grid, np.minimum(4 * grid, n), color=PALETTE["grey"], linestyle="--",
            label="Dinur–Nissim bound 4E")
    ax.plot(grid, worst_decoy, "o-", color=PALETTE["vermillion"], markersize=4,
            label="worst consistent database, decoy noise")
    ax.plot(grid, worst_unif, "s-", color=PALETTE["blue"], markersize=4,
            label="worst consistent database, uniform noise")
    (mark,) = ax.plot([0], [0], "o", markersize=13, markerfacecolor="none",
                      markeredgecolor=PALETTE["black"], markeredgewidth=1.5)
    ax.set_xlim(-0.1, 3.1)
    ax.set_ylim(-0.3, n + 0.5)
    label_axes(ax, "noise bound E (answers within ±E)", "bits wrong (of 10)",
               "Exhaustive reconstruction from all 2^n subset sums")
    ax.legend(loc="upper left", fontsize=8)
    txt = note(ax, "", loc="lower right")

    def update(noise_bound):
        i = int(np.argmin(np.abs(grid - noise_bound)))
        mark.set_data([grid[i]], [worst_decoy[i]])
        txt.set_text(f"E = {grid[i]:g}: {count[i]} consistent databases\n"
                     f"worst is {worst_decoy[i]} bits off; bound 4E = {4 * grid[i]:g}")
        return (f"With every answer within E = {grid[i]:g}, {count[i]} databases fit all "
                f"{2 ** n} answers (decoy noise); the worst differs from the truth in "
                f"{worst_decoy[i]} of {n} positions, within 4E = {4 * grid[i]:g}.")

    return Panel(controls, fig, update, name="reconstruction_exhaustive",
                 title="The exhaustive attack and its 4E guarantee")


_RATIOS = np.round(np.arange(0.0, 1.41, 0.2), 2)
_MN = (1, 2, 4, 8)


def _random_query_sweep(n, rng):
    """fraction[method][m/n index, ratio index] and the guesses at each grid point."""
    d = (rng.random(n) < 0.5).astype(np.int8)
    out = {"lsq": np.zeros((len(_MN), len(_RATIOS))), "lp": np.zeros((len(_MN), len(_RATIOS)))}
    guesses = {}
    base = rng.standard_normal(max(_MN) * n)
    queries = rec.random_subset_queries(max(_MN) * n, n, rng=rng)
    exact = rec.answer_queries(queries, d).astype(float)
    for i, mn in enumerate(_MN):
        q = queries[: mn * n]
        for j, r in enumerate(_RATIOS):
            a = exact[: mn * n] + r * np.sqrt(n) * base[: mn * n]
            for method, fn in (("lsq", rec.reconstruct_lsq), ("lp", rec.reconstruct_lp)):
                g = fn(q, a)
                guesses[method, i, j] = g
                out[method][i, j] = np.mean(g == d)
    return d, out, guesses


@register("reconstruction_random_queries")
def reconstruction_random_queries(ratio=0.4, queries_per_person=4, method="lp"):
    """LP and least-squares reconstruction of n = 64 secret bits from m random subset
    sums with Gaussian noise σ = ratio·√n. Left: the fraction of bits recovered against
    σ/√n for both attacks at the chosen m/n. Right: the secret (top) and the attack's
    guess (bottom), wrong bits marked. Noise well below √n exposes nearly everyone;
    more queries push the breaking point further out."""
    n = 64
    controls = {"ratio": float_slider("σ / √n", ratio, 0.0, 1.4, 0.2),
                "queries_per_person": dropdown("queries m/n", list(_MN), queries_per_person),
                "method": dropdown("attack", [("LP (L1)", "lp"), ("least squares", "lsq")],
                                   method)}
    d, frac, guesses = _random_query_sweep(n, np.random.default_rng(_SEED))
    fig, (ax, axi) = new_figure(1, 2, figsize=(9.4, 3.4), gridspec_kw={"width_ratios": [1.6, 1]})
    (l_lp,) = ax.plot(_RATIOS, frac["lp"][0], "o-", color=PALETTE["vermillion"], markersize=4,
                      label="LP (L1) decoding")
    (l_ls,) = ax.plot(_RATIOS, frac["lsq"][0], "s-", color=PALETTE["blue"], markersize=4,
                      label="least squares")
    hline(ax, 0.5, color=PALETTE["grey"], linestyle=":", label="coin flipping")
    (mark,) = ax.plot([0], [0], "o", markersize=12, markerfacecolor="none",
                      markeredgecolor=PALETTE["black"], markeredgewidth=1.5)
    ax.set_xlim(-0.05, 1.45)
    ax.set_ylim(0.4, 1.02)
    label_axes(ax, "noise σ / √n", "fraction of bits recovered", "Random subset queries")
    ax.legend(loc="lower left", fontsize=8)
    img = axi.imshow(np.zeros((3, n)), aspect="auto", cmap=_BITS_CMAP, vmin=0, vmax=1,
                     interpolation="nearest")
    axi.set_yticks([0, 1, 2], ["secret", "guess", "wrong"])
    label_axes(axi, "person", None, "Secret vs guess")

    def update(ratio, queries_per_person, method):
        i = _MN.index(queries_per_person)
        j = int(np.argmin(np.abs(_RATIOS - ratio)))
        l_lp.set_ydata(frac["lp"][i])
        l_ls.set_ydata(frac["lsq"][i])
        mark.set_data([_RATIOS[j]], [frac[method][i, j]])
        g = guesses[method, i, j]
        img.set_data(np.vstack([d, g, (g != d).astype(float)]))
        name = "LP" if method == "lp" else "least squares"
        sigma = _RATIOS[j] * np.sqrt(n)
        return (f"m = {queries_per_person * n} queries, σ = {_RATIOS[j]:g}·√{n} = {sigma:.3g}: "
                f"{name} recovers {frac[method][i, j]:.1%} of the {n} bits "
                f"({int((g != d).sum())} wrong).")

    return Panel(controls, fig, update, name="reconstruction_random_queries",
                 title="LP and least-squares reconstruction")


_LOG_EPS = np.round(np.arange(-1.0, 3.51, 0.25), 2)


def _dp_sweep(n, m, trials, prevalence, rng):
    """Fraction recovered by least squares when each of m counting queries is answered
    with Lap(m/ε) (a total budget ε split evenly; each count has sensitivity 1)."""
    fr = np.zeros((len(_LOG_EPS), trials))
    shown = []
    for t in range(trials):
        d = (rng.random(n) < prevalence).astype(np.int8)
        q = rec.random_subset_queries(m, n, rng=rng)
        exact = rec.answer_queries(q, d).astype(float)
        z = rng.laplace(size=m)
        for i, le in enumerate(_LOG_EPS):
            g = rec.reconstruct_lsq(q, exact + (m / 10 ** le) * z)
            fr[i, t] = np.mean(g == d)
            if t == 0:
                shown.append(g)
        if t == 0:
            d0 = d
    return fr.mean(axis=1), d0, shown


@register("reconstruction_dp_defence")
def reconstruction_dp_defence(epsilon=1.0):
    """The defence: the curator answers the m = 4n = 256 random subset queries about
    n = 64 people with Laplace noise under a total budget ε, i.e. Lap(m/ε) per answer
    (sensitivity 1 per count, budget split evenly). The least-squares attacker's success
    (averaged over 5 populations, 30% of them with secret bit 1) against the budget ε;
    the grey line is what anyone gets by guessing the majority value, 0, for everybody.
    With a meaningful ε the attack is no better than that guess."""
    n, m, trials, prev = 64, 256, 5, 0.3
    controls = {"epsilon": log_slider("total budget ε", epsilon, -1.0, 3.5, 0.25)}
    frac, d, shown = _dp_sweep(n, m, trials, prev, np.random.default_rng(_SEED))
    eps = 10.0 ** _LOG_EPS
    fig, (ax, axi) = new_figure(1, 2, figsize=(9.4, 3.4), gridspec_kw={"width_ratios": [1.6, 1]})
    density_line(ax, eps, frac, color=PALETTE["blue"], label="least-squares attack")
    hline(ax, 1 - prev, color=PALETTE["grey"], label=f"majority guess ({1 - prev:.0%})")
    (mark,) = ax.plot([0], [0], "o", markersize=12, markerfacecolor="none",
                      markeredgecolor=PALETTE["black"], markeredgewidth=1.5)
    ax.set_xscale("log")
    ax.set_ylim(0.4, 1.02)
    label_axes(ax, "total privacy budget ε", "fraction of bits recovered",
               "Laplace answers under a budget")
    ax.legend(loc="upper left", fontsize=8)
    img = axi.imshow(np.zeros((3, n)), aspect="auto", cmap=_BITS_CMAP, vmin=0, vmax=1,
                     interpolation="nearest")
    axi.set_yticks([0, 1, 2], ["secret", "guess", "wrong"])
    label_axes(axi, "person", None, "Secret vs guess")

    def update(epsilon):
        i = int(np.argmin(np.abs(_LOG_EPS - np.log10(epsilon))))
        mark.set_data([eps[i]], [frac[i]])
        g = shown[i]
        img.set_data(np.vstack([d, g, (g != d).astype(float)]))
        b = m / eps[i]
        return (f"ε = {eps[i]:.3g} in total: each of the {m} answers gets Lap({b:.3g}); the "
                f"attack recovers {frac[i]:.1%} of the bits on average, against "
                f"{1 - prev:.0%} for guessing 0 for everyone.")

    return Panel(controls, fig, update, name="reconstruction_dp_defence",
                 title="The differentially private defence")


def phase_transition_figure(table):
    """A static figure of :func:`dpteach.attacks.phase_transition`'s table: fraction of
    bits recovered against σ/√n, one line per n. Returns the Figure (notebook 03)."""
    fig, ax = new_figure(1, 1, figsize=(7.2, 3.6))
    colours = [PALETTE[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky")]
    for colour, (n, grp) in zip(colours * 3, table.groupby("n")):
        ax.plot(grp["ratio"], grp["fraction"], "o-", color=colour, markersize=3.5, label=f"n = {n}")
    hline(ax, 0.5, color=PALETTE["grey"], linestyle=":", label="coin flipping")
    ax.set_ylim(0.45, 1.02)
    label_axes(ax, "noise σ / √n", "fraction of bits recovered",
               "Reconstruction breaks down once the noise reaches the order of √n")
    ax.legend(loc="upper right", fontsize=8)
    return fig
