"""DP-SGD on a small model: per-example clipping, Gaussian noise, Poisson subsampling.

Logistic regression trained by noisy gradient descent (Abadi et al. 2016, "Deep learning
with differential privacy", Algorithm 1), in NumPy. One step:

1. Poisson subsampling: each training example joins the batch independently with
   probability q (``sampling_rate``);
2. per-example gradients g_i of the logistic loss, each clipped to L2 norm at most C:
   g_i · min(1, C / ||g_i||₂) (:func:`clip_gradients`);
3. the clipped gradients are summed and Gaussian noise N(0, σ²C² I) is added
   (:func:`noisy_gradient_sum`; σ is the noise multiplier): adding or removing one
   example moves the sum by at most C in L2, so this is the Gaussian mechanism with
   sensitivity C;
4. the step divides the noisy sum by the expected batch size q·n and moves the weights
   against it.

Every step is a Poisson-subsampled Gaussian mechanism; the RDP accountant of notebook 16
(:class:`dpteach.RDPAccountant`, Mironov, Talwar & Zhang 2019) adds up their cost and
reports ε at δ as training runs. :func:`membership_inference` attacks the trained model
by its losses (members of the training set have lower loss; Yeom et al. 2018, "Privacy
risk in machine learning", Section 3) and reports the attack's type I / type II errors,
which a DP model must keep inside the trade-off region of notebook 13
(:func:`dpteach.tradeoff_curve`). Taught in notebook 18; every public name here is also
``dp.NAME`` (the training function is ``dp.dp_sgd``).
"""

from __future__ import annotations

import inspect

from dataclasses import dataclass

import numpy as np
from scipy import special

from ._support.validate import (OrNone, PositiveInt, Real, Rng, Using, Values, checked,
                        valid_delta, valid_positive_int, valid_real, valid_rng, valid_values)

__all__ = ["clip_gradients", "noisy_gradient_sum", "per_example_gradients", "logistic_loss",
           "predict", "accuracy", "dp_sgd", "DPSGDResult", "membership_inference",
           "membership_game",
           "make_overfit_data", "EXAMPLE"]

#: The notebook's setting (notebook 18): data of :func:`make_overfit_data` and the
#: training recipe shared by the private and the non-private run (the non-private run
#: uses noise_multiplier 0 and clip inf).
EXAMPLE = {"n_train": 300, "n_test": 1000, "d": 1500, "noise_scale": 0.15, "signal": 0.7,
           "epochs": 10, "sampling_rate": 0.1, "clip": 1.0, "learning_rate": 3.0,
           "noise_multiplier": 3.0, "delta": 1e-5}


#: the most gradient steps one call of dp_sgd takes (epochs x round(1/sampling_rate))
_MAX_STEPS = 10 ** 6


# -- the model -----------------------------------------------------------------------------
def _data(X, y, *, allow_empty=False):
    X = valid_values(X, "X", allow_empty=allow_empty)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d array (examples x features), got shape {X.shape}")
    y = valid_values(y, "y", allow_empty=allow_empty)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have one label per row of X ({X.shape[0]}), got shape "
                         f"{y.shape}")
    if not ((y == 0.0) | (y == 1.0)).all():
        raise ValueError("y must hold labels 0 and 1")
    return X, y


def _weights(w, d, name="w", *, stack=False):
    """A weight vector of shape (d,) or, with ``stack``, also a stack of them (k, d)."""
    w = valid_values(w, name)
    if w.shape != (d,) and not (stack and w.ndim == 2 and w.shape[1] == d):
        more = f" or (k, {d}) (k models)" if stack else ""
        raise ValueError(f"{name} must have shape ({d},){more}, got {w.shape}")
    return w


def _logits(w, X):
    """z = X·w: shape (n,) for one model, (k, n) for a stack of k models (rows of w)."""
    return X @ w if w.ndim == 1 else (X @ w.T).T


def logistic_loss(w, X, y):
    """Per-example logistic loss ℓ_i = ln(1 + e^{z_i}) - y_i z_i with z_i = x_i·w (nats),
    computed stably (logaddexp). Returns an array of n losses; ``w`` may also be a stack of
    k models, shape (k, d) (e.g. the weights after each epoch), giving shape (k, n).
    Notebook 18."""
    X, y = _data(X, y)
    z = _logits(_weights(w, X.shape[1], stack=True), X)
    return np.logaddexp(0.0, z) - y * z


def per_example_gradients(w, X, y):
    """Gradient of each example's logistic loss: g_i = (σ(x_i·w) - y_i) x_i, shape (n, d),
    with σ the logistic function. An empty batch (X of shape (0, d)) gives shape (0, d).
    Notebook 18."""
    X, y = _data(X, y, allow_empty=True)
    return _grads(_weights(w, X.shape[1]), X, y)


def _grads(w, X, y):
    return (special.expit(X @ w) - y)[:, None] * X


@checked(X=Values())
def predict(w, X):
    """Predicted labels 1[x·w > 0] (probability σ(x·w) > 1/2); ``w`` of shape (d,) gives
    (n,) labels, a stack of k models (k, d) gives (k, n). Notebook 18."""
    return (_logits(_weights(w, X.shape[-1], stack=True), X) > 0).astype(int)


def accuracy(w, X, y):
    """Fraction of examples whose predicted label equals y: a float, or one per model
    (shape (k,)) for a stack of k models (k, d). Notebook 18."""
    X, y = _data(X, y)
    out = np.mean(predict(w, X) == y, axis=-1)
    return float(out) if np.ndim(out) == 0 else out


# -- the private step ------------------------------------------------------------------------
def _clip(clip):
    return valid_real(clip, "clip", low=0.0, low_open=True, allow_inf=True)


def _valid_grads(per_example_grads, name):
    g = valid_values(per_example_grads, name, allow_empty=True)
    if g.ndim != 2:
        raise ValueError(f"{name} must be 2-d (examples x parameters), got shape {g.shape}")
    return g


@checked(per_example_grads=Using(_valid_grads), clip=Real(low=0.0, low_open=True, allow_inf=True))
def clip_gradients(per_example_grads, clip):
    """Scale each row g_i to L2 norm at most C: g_i · min(1, C / ||g_i||₂).

    Directions are kept; rows already within the bound are returned unchanged; C = inf
    clips nothing. ``per_example_grads`` has shape (n, d) (one row per example). After
    clipping, adding or removing one example moves the sum of the rows by at most C in
    L2: the sum has L2 sensitivity C (Abadi et al. 2016, Section 3.1). Notebook 18.
    """
    return _clip_rows(per_example_grads, clip)


def _clip_rows(g, c):
    if np.isinf(c):
        return g.copy()
    # each row's L2 norm, scaled by its largest entry first so that squaring cannot
    # overflow (a row [1e200, 1e200] has norm 1.41e200, not inf)
    big = np.abs(g).max(axis=1, initial=0.0)
    safe = np.where(big > 0, big, 1.0)
    unit = g / safe[:, None]
    norms = big * np.sqrt(np.einsum("ij,ij->i", unit, unit))
    with np.errstate(over="ignore"):      # c / tiny norm = inf: the row is kept as is
        scale = np.minimum(1.0, c / np.maximum(norms, np.finfo(float).tiny))
    return g * scale[:, None]


@checked(per_example_grads=Using(_valid_grads), clip=Real(low=0.0, low_open=True, allow_inf=True),
         noise_multiplier=Real(low=0.0), rng=Rng())
def noisy_gradient_sum(per_example_grads, clip, noise_multiplier, *, rng=None):
    """Σ_i clip(g_i, C) + N(0, σ²C² I): the Gaussian mechanism on the clipped sum.

    σ (``noise_multiplier``) is the noise's standard deviation in units of the
    sensitivity C (Abadi et al. 2016, Algorithm 1). σ = 0 adds no noise (no privacy);
    σ > 0 needs a finite C. Returns a vector of length d. Notebook 18.
    """
    g, c, sigma = per_example_grads, clip, noise_multiplier
    if sigma > 0 and np.isinf(c):
        raise ValueError("clip must be finite when noise_multiplier > 0 (the noise is σ·C)")
    total = _clip_rows(g, c).sum(axis=0)
    if sigma > 0:
        total = total + rng.normal(0.0, sigma * c, size=total.shape)
    return total


# -- training --------------------------------------------------------------------------------
@dataclass
class DPSGDResult:
    """What :func:`dp_sgd` returns.

    ``weights`` (d,): the final model; ``epochs`` (E,): 1..E; ``epsilons`` (E,): ε at δ
    after each epoch (inf when σ = 0; None when the run kept no account,
    ``accountant=None``); ``steps``: steps taken (E·round(1/q)); ``history`` (E + 1, d):
    the weights at the start and after each epoch; ``delta``, ``sampling_rate``,
    ``noise_multiplier``, ``clip``: the run's parameters.
    """

    weights: np.ndarray
    epochs: np.ndarray
    epsilons: np.ndarray | None
    steps: int
    history: np.ndarray
    delta: float
    sampling_rate: float
    noise_multiplier: float
    clip: float

    @property
    def epsilon(self) -> float:
        """ε at δ after the whole run (ValueError when the run kept no account)."""
        if self.epsilons is None:
            raise ValueError("this run kept no account (accountant=None): it has no epsilon; "
                             "train with accountant='rdp' (the default)")
        return float(self.epsilons[-1]) if self.epsilons.size else 0.0


def dp_sgd(X, y, *, epochs, sampling_rate, clip, noise_multiplier, learning_rate, rng=None,
           accountant="rdp", delta=1e-5, w0=None, progress=False):
    """Train logistic regression with DP-SGD; return a :class:`DPSGDResult`.

    Each epoch has round(1/q) steps (q = ``sampling_rate``). Each step draws a Poisson
    sample (every example with probability q), takes the sampled examples' gradients
    (:func:`per_example_gradients`), clips each to L2 norm C (``clip``; inf = no
    clipping) and adds N(0, σ²C² I) to their sum (:func:`noisy_gradient_sum`; σ =
    ``noise_multiplier``, 0 = no noise), and updates w ← w - η · noisy sum / (q n)
    (η = ``learning_rate``; q n is the expected batch size, so that the batch's size,
    which depends on the data, is never released). With q = 1, σ = 0 and C = inf this
    is plain gradient descent on the mean loss.

    ``accountant`` keeps the privacy cost: "rdp" (default) a fresh
    :class:`dpteach.RDPAccountant`; an RDPAccountant, to go on composing on one that has
    already spent (its earlier steps count in the ε reported); None, no accounting
    (``epsilons`` is None: for runs whose ε is known from another run). Each epoch
    composes round(1/q) subsampled Gaussian steps and ε at ``delta`` is recorded (Abadi
    et al. 2016; accounting as in Mironov, Talwar & Zhang 2019). σ = 0 records ε = inf.
    At most 10⁶ steps in all (epochs · round(1/q); a smaller q or more epochs raise
    ValueError). ``progress=True`` shows a tqdm bar (:func:`dpteach.notebook.progress`)
    with ε so far. Notebook 18.
    """
    X, y = _data(X, y)
    n, d = X.shape
    epochs, q, c, sigma, eta, delta, accountant = _valid_training(
        epochs, sampling_rate, clip, noise_multiplier, learning_rate, delta, accountant)
    rng = valid_rng(rng)
    steps_per_epoch = max(1, int(round(1.0 / q)))
    w = np.zeros(d) if w0 is None else _weights(w0, d, "w0").copy()
    history = [w.copy()]
    eps = []
    epoch_iter = range(epochs)
    bar = None
    if progress:
        from .notebook import progress as _progress
        bar = _progress(epoch_iter, desc="DP-SGD epochs", total=epochs)
        epoch_iter = bar
    for _ in epoch_iter:
        for _ in range(steps_per_epoch):
            batch = np.flatnonzero(rng.random(n) < q) if q < 1 else np.arange(n)
            g = per_example_gradients(w, X[batch], y[batch])
            w = w - eta * noisy_gradient_sum(g, c, sigma, rng=rng) / (q * n)
        history.append(w.copy())
        if accountant is not None:
            if sigma > 0:
                accountant.compose_gaussian(sigma, q=q, steps=steps_per_epoch)
            eps.append(float(accountant.epsilon(delta)) if sigma > 0 else np.inf)
            if bar is not None:
                bar.set_postfix_str(f"ε = {eps[-1]:.3g}")
    return DPSGDResult(w, np.arange(1, epochs + 1), np.array(eps) if accountant is not None
                       else None, epochs * steps_per_epoch, np.array(history), delta, q, sigma, c)


def _valid_training(epochs, sampling_rate, clip, noise_multiplier, learning_rate, delta, accountant):
    """Every training parameter of :func:`dp_sgd`, checked before any work or draw; the
    accountant comes back ready to use ("rdp" -> a fresh RDPAccountant)."""
    from .rdp import RDPAccountant

    epochs = valid_positive_int(epochs, "epochs", maximum=100_000)
    q = valid_real(sampling_rate, "sampling_rate", low=0.0, high=1.0, low_open=True)
    c = _clip(clip)
    sigma = valid_real(noise_multiplier, "noise_multiplier", low=0.0, high=1e150)
    if 0 < sigma < 1e-150:
        raise ValueError(f"noise_multiplier must be 0 (no noise) or in [1e-150, 1e150] (the "
                         f"accountant's RDP grows like 1/noise_multiplier^2), got {sigma!r}")
    if sigma > 0 and np.isinf(c):
        raise ValueError("clip must be finite when noise_multiplier > 0 (the noise is σ·C)")
    if sigma * c > 1e300:
        raise ValueError(f"noise_multiplier * clip must be <= 1e300 (the noise's standard "
                         f"deviation), got noise_multiplier={sigma!r}, clip={c!r}")
    eta = valid_real(learning_rate, "learning_rate", low=0.0, low_open=True, high=1e6)
    delta = valid_delta(delta, required=True)
    if isinstance(accountant, str) and accountant == "rdp":
        accountant = RDPAccountant()
    elif isinstance(accountant, str):
        raise ValueError(f"accountant must be 'rdp', an RDPAccountant or None, got {accountant!r}")
    elif accountant is not None and not isinstance(accountant, RDPAccountant):
        raise TypeError(f"accountant must be 'rdp', an RDPAccountant or None, got "
                        f"{type(accountant).__name__}")
    if q * _MAX_STEPS < 1:   # round(1/q) steps per epoch: a tiny q would run for ever
        raise ValueError(f"sampling_rate must be >= {1 / _MAX_STEPS:g} (round(1/sampling_rate) "
                         f"steps per epoch, at most {_MAX_STEPS:,} steps), got {q:g}")
    steps_per_epoch = max(1, int(round(1.0 / q)))
    if epochs * steps_per_epoch > _MAX_STEPS:
        raise ValueError(f"epochs * round(1/sampling_rate) must be <= {_MAX_STEPS:,} steps, got "
                         f"{epochs} epochs of {steps_per_epoch:,} (sampling_rate = {q:g})")
    return epochs, q, c, sigma, eta, delta, accountant


# -- the attack --------------------------------------------------------------------------------
@checked(member_losses=Values(), nonmember_losses=Values(),
         thresholds=OrNone(Values(allow_inf=True)))
def membership_inference(member_losses, nonmember_losses, thresholds=None):
    """The loss-threshold membership attack: say "member" when an example's loss is ≤ t.

    Members of the training set tend to have lower loss (Yeom et al. 2018, Section 3).
    For each threshold t: α(t) = fraction of non-members with loss ≤ t (type I error:
    a non-member accused), β(t) = fraction of members with loss > t (type II error: a
    member missed). Default thresholds: every observed loss, plus -inf and +inf (so
    (0, 1) and (1, 0) are included). Returns (alpha, beta, thresholds), sorted by t.
    An (ε, δ)-DP training run keeps every test's (α, β) above
    :func:`dpteach.tradeoff_curve` (Kairouz, Oh & Viswanath 2015), up to sampling error.
    Notebook 18.
    """
    m = np.sort(member_losses.ravel())
    o = np.sort(nonmember_losses.ravel())
    if thresholds is None:
        t = np.concatenate([[-np.inf], np.unique(np.concatenate([m, o])), [np.inf]])
    else:
        t = np.sort(thresholds.ravel())
    alpha = np.searchsorted(o, t, side="right") / o.size
    beta = 1.0 - np.searchsorted(m, t, side="right") / m.size
    return alpha, beta, t


# -- the data --------------------------------------------------------------------------------
@checked(n_train=PositiveInt(maximum=10**6), n_test=PositiveInt(maximum=10**7),
         d=PositiveInt(maximum=10**5), signal=Real(low=0.0, high=1e100),
         noise_scale=Real(low=0.0, high=1e100), rng=Rng())
def make_overfit_data(n_train=300, n_test=1000, d=1500, *, informative=5, signal=0.7,
                      noise_scale=0.15, rng=None):
    """A binary classification data set on which plain logistic regression overfits.

    The first ``informative`` features are N(0, 1) and carry the label:
    y = 1[x·w* + logistic noise > 0] with w* = ``signal`` on them. The other d - informative
    features are pure noise N(0, ``noise_scale``²): individually tiny, but with d > n_train
    they make the training set linearly separable, so unregularised training memorises
    each member through them (large margins on members, small on fresh examples): the
    loss gap a membership attack reads. Returns (X_train, y_train, X_test, y_test)
    (``n_test`` fresh examples from the same distribution). Notebook 18.
    """
    informative = valid_positive_int(informative, "informative", maximum=d)   # at most d
    n = n_train + n_test
    X = rng.normal(0.0, 1.0, size=(n, d))
    X[:, informative:] *= noise_scale
    z = signal * X[:, :informative].sum(axis=1) + rng.logistic(size=n)
    y = (z > 0).astype(float)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def membership_game(X, y, *, rng=None, **training):
    """The membership game that an add/remove ε covers: every example of the pool (X, y)
    joins the training set by its own fair coin, independently; :func:`dp_sgd` trains on
    those that joined (``training``: its keyword arguments; ``rng`` draws the coins first,
    then drives training). For one target, the two worlds "in" and "out" differ by adding
    or removing it, the rest of the training set fixed by the other coins: exactly the
    neighbours of the accountant's ε. Returns (result, joined) with ``joined`` the boolean
    mask of members; :func:`membership_inference` on the losses of the members and of the
    rest measures the attack's (α, β) against that ε. (Members of one fixed training set
    against fresh examples would test a *swap* of one person instead, whose guarantee is
    that of a group of two.) Notebook 18.
    """
    X, y = _data(X, y)
    args = inspect.signature(dp_sgd).bind(X, y, **training)
    args.apply_defaults()
    a = args.arguments
    _valid_training(a["epochs"], a["sampling_rate"], a["clip"], a["noise_multiplier"],
                    a["learning_rate"], a["delta"], a["accountant"])
    rng = valid_rng(rng)
    joined = rng.random(X.shape[0]) < 0.5
    if joined.sum() < 2 or (~joined).sum() < 1:
        raise ValueError("the pool (X, y) is too small for the game: give it at least 4 examples")
    return dp_sgd(X[joined], y[joined], rng=rng, **training), joined
