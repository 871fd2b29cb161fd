"""Panels for notebook 17: the error of the local model against the central one, measured;
the variance of the local protocols (k-RR, SUE, OUE, OLH) as the domain grows."""

from __future__ import annotations

import numpy as np

from .. import local
from ..bounds import laplace_std
from ..plots import PALETTE, label_axes, log_axes, new_figure, note
from ._controls import dropdown, int_slider, log_slider
from ._panel import Panel
from ._registry import register

_K_MAX = 32
_RUNS = 100                                   # simulated surveys per n
_GRID = np.round(10 ** np.arange(2.0, 6.01, 0.5)).astype(np.int64)     # 100 .. 10^6 people
_MECHANISMS = [("OUE (optimized unary)", "oue"),
               ("SUE (symmetric unary)", "sue"),
               ("k-RR (k-ary rand. response)", "krr")]
#: the central baseline is judged like the local ε: one person's answer swapped moves two
#: counts by one, so each count gets Lap(2/ε)
_CENTRAL_SENSITIVITY = 2.0


def measured_errors(counts, epsilon, mechanism, rng, laplace):
    """Root-mean-square error of the estimated frequencies, local and central, over the
    k categories and the runs, for every dataset (row) of ``counts``.

    Local: report counts drawn from their exact distribution (``local.report_counts``)
    and corrected by ``local.estimate_from_counts``. Central: ``laplace`` (unit Laplace
    noise, shape runs x datasets x k) times 2/eps added to the counts (the swap of one
    person's answer, the relation of the local ε, moves two counts). Returns
    (local rmse, central rmse, one local estimate, one central estimate) per dataset.
    """
    n = counts.sum(axis=-1, keepdims=True)
    k = counts.shape[-1]
    truth = counts / n
    reports = local.report_counts(counts, epsilon, mechanism=mechanism, rng=rng, size=laplace.shape[0])
    est_local = local.estimate_from_counts(reports, n, k, epsilon, mechanism=mechanism)  # n per dataset
    est_central = (counts + laplace * (_CENTRAL_SENSITIVITY / epsilon)) / n
    rmse_local = np.sqrt(np.mean((est_local - truth) ** 2, axis=(0, 2)))
    rmse_central = np.sqrt(np.mean((est_central - truth) ** 2, axis=(0, 2)))
    return rmse_local, rmse_central, est_local[0], est_central[0]


@register
def local_vs_central(epsilon=1.0, n=10_000, k=8, mechanism="oue", seed=0):
    """Frequency estimation in the local model against the central one.

    Left: root-mean-square error of an estimated frequency against the number of people n
    (log-log); dots are measured over 100 simulated surveys per n (the seed fixes them),
    lines are the formulas (Wang et al. 2017 for local; 2 sqrt(2)/(eps n) for a central
    Laplace histogram judged alike, Lap(2/eps) per count). Right: the true frequencies of the k categories and one survey's
    local and central estimates at the chosen n.
    """
    controls = {"epsilon": log_slider("privacy ε", epsilon, -1, 1),
                "n": log_slider("people n", n, 2, 6, 0.1, readout_format=".3g"),
                "k": int_slider("categories k", k, 2, _K_MAX),
                "mechanism": dropdown("local mechanism", _MECHANISMS, mechanism),
                "seed": int_slider("seed", seed, 0, 20)}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(10.0, 4.2), width_ratios=[1.15, 1.0])
    n_line = np.logspace(2, 6, 60)
    (loc_curve,) = ax1.plot(n_line, n_line, color=PALETTE["orange"], label="local: formula")
    (cen_curve,) = ax1.plot(n_line, n_line, color=PALETTE["blue"], label=r"central, Lap$(2/\varepsilon)$: $2\sqrt{2}/(\varepsilon n)$")
    (loc_dots,) = ax1.plot([], [], "o", color=PALETTE["orange"], markersize=5, label="local: measured")
    (cen_dots,) = ax1.plot([], [], "s", color=PALETTE["blue"], markersize=5, label="central: measured")
    (here,) = ax1.plot([n, n], [1e-8, 1e2], ":", color=PALETTE["black"], linewidth=1)
    (loc_here,) = ax1.plot([], [], "o", color=PALETTE["vermillion"], markersize=9, fillstyle="none",
                           markeredgewidth=2)
    (cen_here,) = ax1.plot([], [], "s", color=PALETTE["vermillion"], markersize=9, fillstyle="none",
                           markeredgewidth=2)
    log_axes(ax1)
    ax1.set_xlim(70, 1.4e6)
    ax1.set_ylim(1e-7, 30)
    label_axes(ax1, "people $n$", "error of a frequency (RMSE)", "Error against $n$")
    ax1.legend(loc="lower left", fontsize=8)
    txt1 = note(ax1, "", loc="upper right")
    edges = np.arange(_K_MAX + 1) - 0.5
    truth_bars = ax2.stairs(np.zeros(_K_MAX), edges, fill=True, color=PALETTE["grey"],
                            label="true frequency")
    (loc_est,) = ax2.plot([], [], "o", color=PALETTE["orange"], markersize=5, label="local estimate")
    (cen_est,) = ax2.plot([], [], "s", color=PALETTE["blue"], markersize=4, label="central estimate")
    ax2.axhline(0.0, color=PALETTE["black"], linewidth=0.6)
    ax2.set_xlim(-0.8, k - 0.2)       # the k categories drawn, no more (follows k)
    ax2.set_ylim(-0.1, 0.8)
    label_axes(ax2, "category $v$", "frequency (share of people)", "One survey at the chosen $n$")
    ax2.legend(loc="upper right", fontsize=8)
    txt2 = note(ax2, "", loc="lower right")
    cache = {}

    def update(epsilon, n, k, mechanism, seed):
        n = int(round(n))
        if (seed, "laplace") not in cache:
            g = np.random.default_rng([seed, 17])
            cache[seed, "laplace"] = g.laplace(size=(_RUNS, _GRID.size + 1, _K_MAX))
        if k not in cache:
            cache[k] = local.example_frequencies(k)
        f = cache[k]
        if (k, n) not in cache:           # the true counts change with k and n, not with ε
            cache[k, n] = np.array([local.true_counts(m, f) for m in (*_GRID, n)])
        counts = cache[k, n]
        rng = np.random.default_rng([seed, int(round(1000 * np.log(epsilon))) % 2**31, k, n])
        laplace = cache[seed, "laplace"][:, :, :k]
        rl, rc, one_local, one_central = measured_errors(counts, epsilon, mechanism, rng, laplace)
        var_star = np.mean(local.local_variance(1, k, epsilon, mechanism=mechanism, frequency=f))
        loc_curve.set_ydata(np.sqrt(var_star / n_line))
        cen_sd = laplace_std(_CENTRAL_SENSITIVITY / epsilon)   # one count's noise, in people
        cen_curve.set_ydata(cen_sd / n_line)
        loc_dots.set_data(_GRID, rl[:-1])
        cen_dots.set_data(_GRID, rc[:-1])
        here.set_xdata([n, n])
        loc_here.set_data([n], [rl[-1]])
        cen_here.set_data([n], [rc[-1]])
        ratio = rl[-1] / rc[-1]
        txt1.set_text(f"n = {n:,}: local {rl[-1]:.2g}, central {rc[-1]:.2g}\n"
                      f"local error is {ratio:,.0f}× larger")
        x = np.arange(k)
        truth_bars.set_data(np.r_[counts[-1] / n, np.zeros(_K_MAX - k)])
        loc_est.set_data(x, one_local[-1])
        cen_est.set_data(x, one_central[-1])
        if ax2.get_xlim() != (-0.8, k - 0.2):   # set only on a move of k: setting marks
            ax2.set_xlim(-0.8, k - 0.2)         # the axis stale, which forces a full draw
        # a fixed y range: estimates beyond [-0.1, 0.8] are counted in the note
        lo, hi = ax2.get_ylim()
        off = int(np.sum((one_local[-1] < lo) | (one_local[-1] > hi)))
        txt2.set_text(f"{off} local estimate(s) off the scale" if off else "")
        need = n * ratio**2
        return (f"ε = {epsilon:.3g}, n = {n:,}, k = {k}, {mechanism.upper()}: measured error of a "
                f"frequency {rl[-1]:.3g} (local) against {rc[-1]:.3g} (central), "
                f"{ratio:,.1f}× larger; formulas {np.sqrt(var_star / n):.3g} and "
                f"{cen_sd / n:.3g}. To match the central error the local model "
                f"needs about {need:,.3g} people.")

    # a move of k changes the x range: that move is drawn in full (a blitted redraw over a
    # cached background would not equal a full draw there); the other moves blit
    return Panel(controls, fig, update, title="Local against central: the error of a frequency", full_draw_on_move=True)


_K_GRID = np.unique(np.round(np.logspace(np.log10(2), 6, 60)).astype(np.int64))   # 2 .. 10^6
_EPS_GRID = np.logspace(-1, 1, 60)                                                  # 0.1 .. 10
_PROTOCOLS = [("k-RR", "krr", "orange"), ("SUE", "sue", "sky"), ("OUE", "oue", "blue"),
              ("OLH", "olh", "vermillion")]


@register
def local_protocols_variance(epsilon=1.0, k=64):
    """Which frequency oracle is most accurate: k-RR, SUE, OUE and OLH (Wang et al. 2017).

    Left: n Var* (the variance of an estimated frequency, times n) against the domain
    size k at the chosen epsilon, log-log; only k-RR's grows with k. Right: the same
    against epsilon at the chosen k. The dotted lines mark where k-RR stops being the
    best: k = 3e^eps + 2 against OUE, and the epsilon where the curves cross.
    """
    controls = {"epsilon": log_slider("privacy ε", epsilon, -1, 1),
                "k": log_slider("domain size k", k, float(np.log10(2)), 6, 0.05, readout_format=".0f")}
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(10.0, 4.4))
    lines1, lines2, dots1, dots2 = {}, {}, {}, {}
    for label, key, colour in _PROTOCOLS:
        style = "--" if key == "olh" else "-"
        (lines1[key],) = ax1.plot(_K_GRID, np.ones(_K_GRID.size), style, color=PALETTE[colour], label=label)
        (lines2[key],) = ax2.plot(_EPS_GRID, np.ones(_EPS_GRID.size), style, color=PALETTE[colour], label=label)
        (dots1[key],) = ax1.plot([], [], "o", color=PALETTE[colour], markersize=6)
        (dots2[key],) = ax2.plot([], [], "o", color=PALETTE[colour], markersize=6)
    (cross_k,) = ax1.plot([], [], ":", color=PALETTE["black"], linewidth=1.3,
                          label=r"k-RR = OUE: $k = 3e^{\varepsilon} + 2$")
    (cross_e,) = ax2.plot([], [], ":", color=PALETTE["black"], linewidth=1.3, label="k-RR = OUE")
    for ax in (ax1, ax2):
        log_axes(ax)
        ax.set_ylim(1e-4, 1e8)
    ax1.set_xlim(1.5, 1.5e6)
    ax2.set_xlim(0.09, 11)
    label_axes(ax1, "domain size $k$", r"$n \cdot \mathrm{Var}^*$ of a frequency",
               r"Against $k$ at the chosen $\varepsilon$")
    label_axes(ax2, r"privacy $\varepsilon$", r"$n \cdot \mathrm{Var}^*$ of a frequency",
               r"Against $\varepsilon$ at the chosen $k$")
    ax1.legend(loc="upper left", fontsize=8, ncol=2)
    ax2.legend(loc="upper right", fontsize=8, ncol=2)
    txt1 = note(ax1, "", loc="lower right")
    txt2 = note(ax2, "", loc="lower left")
    by_eps, by_k = {}, {}
    flat = local.protocol_variances(2, _EPS_GRID, protocols=("sue", "oue", "olh"))   # free of k

    def update(epsilon, k):
        k = int(round(k))
        if epsilon not in by_eps:
            if len(by_eps) > 64:
                by_eps.clear()
            by_eps[epsilon] = ({**local.protocol_variances(_K_GRID[:1], epsilon, protocols=("sue", "oue", "olh")),
                                **local.protocol_variances(_K_GRID, epsilon, protocols=("krr",))},
                               local.k_randomized_response_crossover_k(epsilon, against="oue"),
                               local.k_randomized_response_crossover_k(epsilon, against="olh"))
        if k not in by_k:
            if len(by_k) > 64:
                by_k.clear()
            by_k[k] = ({**flat, **local.protocol_variances(k, _EPS_GRID, protocols=("krr",))},
                       local.k_randomized_response_crossover_epsilon(k, against="oue", low=0.1, high=10.0))
        over_k, k_oue, k_olh = by_eps[epsilon]
        over_e, e_oue = by_k[k]
        here = local.protocol_variances(k, epsilon)
        for _, key, _ in _PROTOCOLS:
            lines1[key].set_ydata(np.broadcast_to(over_k[key], _K_GRID.shape))
            lines2[key].set_ydata(over_e[key])
            dots1[key].set_data([k], [here[key]])
            dots2[key].set_data([epsilon], [here[key]])
        cross_k.set_data([k_oue, k_oue], [1e-4, 1e8])
        cross_e.set_data([e_oue, e_oue] if e_oue else [], [1e-4, 1e8] if e_oue else [])
        best = min(local.PROTOCOLS, key=lambda p: here[p])
        bits = {p: local.report_bits(k, epsilon, p) for p in local.PROTOCOLS}
        txt1.set_text(f"k-RR best below k = {k_oue:.1f} (OUE), {k_olh:.1f} (OLH)")
        txt2.set_text(f"k = {k:,}: k-RR best for ε > {e_oue:.2f}" if e_oue else
                      f"k = {k:,}: {'k-RR best' if k <= 5 else 'k-RR never best'} on 0.1–10")
        values = ", ".join(f"{label} {here[key]:.3g}" for label, key, _ in _PROTOCOLS)
        return (f"ε = {epsilon:.3g}, k = {k:,}: n·Var* {values}; best: {best.upper()}. Bits per "
                f"report: k-RR {bits['krr']}, SUE/OUE {bits['oue']:,}, OLH {bits['olh']} "
                f"(g = {local.olh_hash_size(epsilon)} buckets plus a 64-bit hash seed).")

    return Panel(controls, fig, update, title="Local protocols: whose variance is smallest, as k grows")
