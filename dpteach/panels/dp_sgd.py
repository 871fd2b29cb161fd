"""Panel for notebook 18: DP-SGD's accuracy against ε, and a membership attack on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import sgd as _sgd
from ..plots import PALETTE, density_line, label_axes, log_axes, new_figure
from .._support.validate import valid_real
from ..tradeoff import outside_region, tradeoff_curve
from ._controls import dropdown, int_slider
from ._panel import Panel
from ._registry import register

#: noise multipliers the panel trains with (0 = the non-private run: no clipping, no noise)
SIGMAS = (0.0, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0)
SEEDS = 3
_ALPHA = np.linspace(0.0, 1.0, 201)
#: :func:`training_grid`'s results as the panel reads them (:func:`grid_record`), so that
#: the panel opens without training for a second and a half; tests/lessons/test_sgd.py retrains
#: the grid and compares it with this file bit for bit (rewrite it with
#: ``save_grid_record()`` after a change to the training)
GRID_RECORD = Path(__file__).with_name("dp_sgd_grid.npz")
def training_grid(sigmas=SIGMAS, seeds=SEEDS, data_seed=0):
    """Play the notebook's membership game (:func:`dpteach.sgd.membership_game`) once per σ
    and seed: the 300 training and 300 held-out examples of :data:`dpteach.sgd.EXAMPLE` form a
    pool, each joins the training set by its own coin (add/remove neighbours, the relation
    of the accountant's ε), and the model is trained on those that joined.

    Returns a dict with ``eps[σ]`` (ε per epoch, from the RDP accountant of the σ's first
    run; ε does not depend on the seed, so the other runs keep no account) and
    ``runs[(σ, seed)]`` holding test accuracy per epoch and, per epoch, the losses of the
    members and of the rest of the pool (the attack's two samples)."""
    ex = _sgd.EXAMPLE
    X, y, Xt, yt = _sgd.make_overfit_data(ex["n_train"], ex["n_test"], ex["d"],
                                          noise_scale=ex["noise_scale"], signal=ex["signal"],
                                          rng=data_seed)
    n = X.shape[0]
    pool_X, pool_y = np.vstack([X, Xt[:n]]), np.r_[y, yt[:n]]
    Xt, yt = Xt[n:], yt[n:]                                   # test on the rest
    out = {"eps": {}, "runs": {}, "n": n}
    for s in sigmas:
        for seed in range(seeds):
            r, joined = _sgd.membership_game(
                pool_X, pool_y, epochs=ex["epochs"], sampling_rate=ex["sampling_rate"],
                clip=ex["clip"] if s else np.inf, noise_multiplier=s,
                learning_rate=ex["learning_rate"], rng=1000 + seed,
                accountant="rdp" if seed == 0 else None, delta=ex["delta"])
            if seed == 0:
                out["eps"][s] = r.epsilons                      # inf for σ = 0
            H = r.history[1:]                                   # (epochs, d): one model per epoch
            loss = _sgd.logistic_loss(H, pool_X, pool_y)        # (epochs, pool)
            out["runs"][(s, seed)] = {"acc": _sgd.accuracy(H, Xt, yt),
                                      "member": loss[:, joined], "nonmember": loss[:, ~joined]}
    return out


def grid_record(grid):
    """What the panel reads from :func:`training_grid`, compactly: ``eps`` (σ, epoch),
    ``acc`` (σ, seed, epoch), and for each model ``members`` (σ, seed, epoch, bits): which
    examples of the pool are members, in the order of their losses, and ``ties``: which
    loss in that order equals the one before it (packed bits). The loss-threshold attack
    depends on the losses only through their order, ties included, so the attack on the
    ranks this keeps is the attack on the losses (the same α, β and thresholds)."""
    sig = sorted(grid["eps"])
    seeds = sorted({k for (_, k) in grid["runs"]})
    members = np.zeros((len(sig), len(seeds), len(grid["eps"][sig[0]]), 2 * grid["n"]), bool)
    ties = np.zeros_like(members)
    for i, s in enumerate(sig):
        for j, k in enumerate(seeds):
            run = grid["runs"][(s, k)]
            loss = np.concatenate([run["member"], run["nonmember"]], axis=1)
            is_member = np.r_[np.ones(run["member"].shape[1], bool),
                              np.zeros(run["nonmember"].shape[1], bool)]
            order = np.argsort(loss, axis=1, kind="stable")
            members[i, j] = is_member[order]
            ties[i, j, :, 1:] = np.diff(np.take_along_axis(loss, order, axis=1), axis=1) == 0
    return {"sigmas": np.array(sig), "eps": np.array([grid["eps"][s] for s in sig]),
            "acc": np.array([[grid["runs"][(s, k)]["acc"] for k in seeds] for s in sig]),
            "members": np.packbits(members, axis=-1), "ties": np.packbits(ties, axis=-1),
            "pool": np.array(2 * grid["n"])}


def save_grid_record(path=GRID_RECORD):
    """Train :func:`training_grid` and write its :func:`grid_record` to ``path``."""
    np.savez_compressed(path, **grid_record(training_grid()))


def _grid_from_record(path=GRID_RECORD):
    """The panel's grid from the record: ranks in the loss order stand for the losses."""
    rec = np.load(path)
    pool = int(rec["pool"])
    out = {"eps": {}, "runs": {}, "n": pool // 2}
    for i, s in enumerate(rec["sigmas"].tolist()):
        out["eps"][s] = rec["eps"][i]
        for k in range(rec["acc"].shape[1]):
            order = np.unpackbits(rec["members"][i, k], axis=-1, count=pool).astype(bool)
            tie = np.unpackbits(rec["ties"][i, k], axis=-1, count=pool).astype(bool)
            ranks = np.cumsum(~tie, axis=-1) - 1.0      # equal losses, equal ranks
            out["runs"][(s, k)] = {"acc": rec["acc"][i, k],
                                   "member": ranks[order].reshape(len(order), -1),
                                   "nonmember": ranks[~order].reshape(len(order), -1)}
    return out


def _accuracy_axes(ax1, grid, ex):
    """The left of :func:`dp_sgd_attack`: every σ's final models (grey), the non-private
    model's accuracy and guessing; returns this run's trajectory, its current point and
    the non-private accuracy."""
    finals = np.array([[grid["eps"][s][-1], np.mean([grid["runs"][(s, k)]["acc"][-1]
                                                     for k in range(SEEDS)])]
                       for s in SIGMAS[1:]])
    ax1.plot(finals[:, 0], finals[:, 1], "o", color=PALETTE["grey"], alpha=0.7,
             label=f"every σ after {ex['epochs']} epochs (mean of {SEEDS} seeds)")
    nonpriv = float(np.mean([grid["runs"][(0.0, k)]["acc"][-1] for k in range(SEEDS)]))
    ax1.axhline(nonpriv, color=PALETTE["black"], linestyle="--", linewidth=1.2,
                label=f"non-private model ({nonpriv:.2f})")
    ax1.axhline(0.5, color=PALETTE["grey"], linestyle=":", linewidth=1.0, label="guessing")
    traj = density_line(ax1, [1.0], [0.5], color=PALETTE["blue"], label="this run, epoch by epoch")
    traj.set_marker(".")
    (now1,) = ax1.plot([1.0], [0.5], marker="o", markersize=9, color=PALETTE["vermillion"],
                       linestyle="none")
    log_axes(ax1, y=False)
    ax1.set_xlim(0.05, 200)
    ax1.set_ylim(0.4, 0.8)
    label_axes(ax1, r"$\varepsilon$ at $\delta = 10^{-5}$ (RDP accountant, log scale)", "test accuracy",
               "Accuracy against privacy")
    return traj, now1, nonpriv


@register
def dp_sgd_attack(noise_multiplier=3.0, epoch=10, seed=0):
    """DP-SGD on the notebook's overfitting logistic regression (1500 features), in the
    membership game of notebook 18 (each of 600 examples joins the training set by its own
    coin: add/remove neighbours): left, test accuracy against ε epoch by epoch, for this σ
    and (grey) the final models of every σ, with the non-private model's accuracy; right,
    the loss-threshold membership attack's (α, β) against the trade-off region of the run's
    (ε, δ) (RDP accountant; for the non-private run, the region of the σ = 3 run). The 24
    runs are :func:`training_grid`'s; the panel reads their results from
    :data:`GRID_RECORD` (which the tests retrain and compare), or trains them when the
    record is missing (about a second and a half); a move only looks results up.
    """
    ex = _sgd.EXAMPLE
    opts = [("non-private (no clip, no noise)", 0.0)] + [(f"σ = {s:g}", s) for s in SIGMAS[1:]]
    noise_multiplier = valid_real(noise_multiplier, "noise_multiplier", low=0.0)
    controls = {"noise_multiplier": dropdown("noise multiplier", opts, noise_multiplier),
                "epoch": int_slider("after epoch", epoch, 1, ex["epochs"]),
                "seed": int_slider("seed", seed, 0, SEEDS - 1)}
    grid = _grid_from_record() if GRID_RECORD.exists() else training_grid()
    delta = ex["delta"]
    ref_sigma = ex["noise_multiplier"]
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(10.0, 4.5))

    traj, now1, nonpriv = _accuracy_axes(ax1, grid, ex)
    ax1.legend(loc="lower right", fontsize=8)

    # right: the attack against the trade-off region
    from matplotlib.patches import Polygon
    region = Polygon(np.zeros((3, 2)), closed=True, color=PALETTE["vermillion"], alpha=0.15,
                     label=r"forbidden by $(\varepsilon, \delta)$-DP")
    ax2.add_patch(region)
    bound = density_line(ax2, _ALPHA, _ALPHA, color=PALETTE["vermillion"],
                         label=r"trade-off curve $f(\alpha)$")
    roc = density_line(ax2, [0, 1], [1, 0], color=PALETTE["blue"],
                       label="loss-threshold attack")
    roc.set_drawstyle("steps-post")
    (flag,) = ax2.plot([], [], "x", color=PALETTE["black"], markersize=6,
                       label="outside even at the corner of its\nClopper-Pearson box (level $10^{-6}$ per error)")
    ax2.plot([0, 1], [1, 0], color=PALETTE["grey"], linestyle=":", linewidth=1.0)
    ax2.set_xlim(0, 1)
    ax2.set_ylim(0, 1)
    label_axes(ax2, r"$\alpha$: non-members called members", r"$\beta$: members missed",
               "Membership inference")
    # below the axes: inside, the box would cover the attack's curve wherever it runs
    # near the diagonal (a weak attack, the large-sigma runs)
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=8,
               frameon=False)
    title_size = 0.85 * ax2.title.get_fontsize()

    def update(noise_multiplier, epoch, seed):
        s = float(noise_multiplier)
        run = grid["runs"][(s, int(seed))]
        e = int(epoch) - 1
        eps = grid["eps"][s]
        acc = run["acc"]
        if s == 0:
            traj.set_data([], [])
            now1.set_data([150.0], [acc[e]])
            eps_region = float(grid["eps"][ref_sigma][e])
            which = f"the σ = {ref_sigma:g} run's ε = {eps_region:.3g}"
        else:
            traj.set_data(eps, acc)
            now1.set_data([eps[e]], [acc[e]])
            eps_region = float(eps[e])
            which = f"this run's ε = {eps_region:.3g}"
        alpha, beta, _ = _sgd.membership_inference(run["member"][e], run["nonmember"][e])
        f = tradeoff_curve(_ALPHA, eps_region, delta)
        bound.set_ydata(f)
        region.set_xy(np.column_stack([np.r_[_ALPHA, 1.0, 0.0], np.r_[f, 0.0, 0.0]]))
        roc.set_data(alpha, beta)
        n_in, n_out = run["member"].shape[1], run["nonmember"].shape[1]
        out = outside_region(alpha, beta, n_out, n_in, eps_region, delta)
        flag.set_data(alpha[out], beta[out])
        best = float(np.min(alpha + beta))
        ax2.set_title(f"shaded: forbidden at ε = {eps_region:.3g}"
                      f"{f' (of σ = {ref_sigma:g})' if s == 0 else ''}, δ = {delta:g}\n"
                      f"thresholds inside it beyond doubt (×): {int(out.sum())} of {alpha.size}",
                      fontsize=title_size)
        eps_text = "∞ (no noise)" if s == 0 else f"{eps[e]:.3g}"
        return (f"{'non-private' if s == 0 else f'σ = {s:g}'}, after epoch {epoch} "
                f"({int(epoch) * int(round(1 / ex['sampling_rate']))} steps, q = "
                f"{ex['sampling_rate']:g}): ε = {eps_text} at δ = {delta:g}; test accuracy "
                f"{acc[e]:.3f} (non-private {nonpriv:.3f}). The attack's best α + β is "
                f"{best:.2f}; {int(out.sum())} of its {alpha.size} thresholds lie in the region "
                f"forbidden by {which} beyond sampling doubt.")

    return Panel(controls, fig, update, title="DP-SGD: accuracy, ε and a membership attack")
