"""DP-SGD (notebook 18, dpteach.sgd): clipping, the noise, training, accounting, the
membership attack."""

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import sgd

ALPHA = 1e-6
EX = sgd.EXAMPLE


# -- clipping --------------------------------------------------------------------------------
def test_clip_gradients_exact():
    rng = np.random.default_rng(0)
    g = rng.normal(size=(500, 7)) * rng.choice([0.01, 0.3, 5.0, 100.0], size=(500, 1))
    g[0] = 0.0                                     # a zero gradient stays zero
    for c in (0.1, 1.0, 2.5):
        out = sgd.clip_gradients(g, c)
        norms = np.linalg.norm(g, axis=1)
        new = np.linalg.norm(out, axis=1)
        assert (new <= c * (1 + 1e-12)).all()
        small = norms <= c
        np.testing.assert_array_equal(out[small], g[small])           # untouched
        big = ~small
        np.testing.assert_allclose(new[big], c, rtol=1e-12)            # exactly C
        cos = np.einsum("ij,ij->i", out[big], g[big]) / (new[big] * norms[big])
        np.testing.assert_allclose(cos, 1.0, rtol=1e-12)               # direction kept
    np.testing.assert_array_equal(sgd.clip_gradients(g, np.inf), g)


def test_clipping_the_sum_instead_is_a_different_thing():
    # the classic slip: clip the summed gradient, not each example's: the sum's sensitivity
    # is then not C (one example with a huge gradient moves the clipped sum by up to 2C, and
    # the clipped sum of many examples is far from the sum of clipped ones)
    rng = np.random.default_rng(1)
    g = rng.normal(size=(50, 4)) * 3
    right = sgd.clip_gradients(g, 1.0).sum(axis=0)
    s = g.sum(axis=0)
    twin = s * min(1.0, 1.0 / np.linalg.norm(s))
    assert np.linalg.norm(right - twin) > 1.0


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), "1", True, None])
def test_clip_rejects_bad_bounds(bad):
    with pytest.raises((ValueError, TypeError), match="clip"):
        sgd.clip_gradients(np.ones((2, 2)), bad)


def test_clip_rejects_bad_gradients():
    with pytest.raises(ValueError, match="per_example_grads"):
        sgd.clip_gradients(np.ones(3), 1.0)
    with pytest.raises(ValueError, match="per_example_grads"):
        sgd.clip_gradients([[1.0, float("nan")]], 1.0)


# -- the noise -------------------------------------------------------------------------------
def _noise_draws(fn, g, clip, sigma, runs, seed):
    rng = np.random.default_rng(seed)
    clipped = sgd.clip_gradients(g, clip).sum(axis=0)
    return np.array([fn(g, clip, sigma, rng) - clipped for _ in range(runs)]).ravel()


def _right(g, clip, sigma, rng):
    return sgd.noisy_gradient_sum(g, clip, sigma, rng=rng)


def _unscaled(g, clip, sigma, rng):                 # noise N(0, σ²), forgetting C
    return sgd.clip_gradients(g, clip).sum(axis=0) + rng.normal(0, sigma, g.shape[1])


def _per_example(g, clip, sigma, rng):              # noise added to each example's gradient
    c = sgd.clip_gradients(g, clip)
    return (c + rng.normal(0, sigma * clip, c.shape)).sum(axis=0)


@pytest.mark.parametrize("clip,sigma", [(0.5, 1.0), (2.0, 0.7), (4.0, 3.0)])
def test_noise_is_gaussian_sigma_times_clip(clip, sigma):
    g = np.random.default_rng(2).normal(size=(20, 10)) * 2
    z = _noise_draws(_right, g, clip, sigma, 2000, 3)
    assert stats.kstest(z, "norm", args=(0, sigma * clip)).pvalue > ALPHA
    # both wrong twins are rejected by the same test
    for twin in (_unscaled, _per_example):
        zt = _noise_draws(twin, g, clip, sigma, 2000, 4)
        assert stats.kstest(zt, "norm", args=(0, sigma * clip)).pvalue < ALPHA


def test_no_noise_and_infinite_clip():
    g = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(sgd.noisy_gradient_sum(g, np.inf, 0.0), g.sum(axis=0))
    with pytest.raises(ValueError, match="clip"):
        sgd.noisy_gradient_sum(g, np.inf, 1.0)
    for bad in (-1.0, float("nan"), float("inf"), "1", True):
        with pytest.raises((ValueError, TypeError), match="noise_multiplier"):
            sgd.noisy_gradient_sum(g, 1.0, bad)


# -- gradients and training --------------------------------------------------------------------
def test_per_example_gradients_match_finite_differences():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(6, 4)), rng.integers(0, 2, 6).astype(float)
    w = rng.normal(size=4)
    g = sgd.per_example_gradients(w, X, y)
    h = 1e-6
    for j in range(4):
        e = np.zeros(4)
        e[j] = h
        fd = (sgd.logistic_loss(w + e, X, y) - sgd.logistic_loss(w - e, X, y)) / (2 * h)
        np.testing.assert_allclose(g[:, j], fd, rtol=1e-6, atol=1e-9)
    # the loss agrees with -y ln p - (1 - y) ln(1 - p)
    p = 1 / (1 + np.exp(-X @ w))
    np.testing.assert_allclose(sgd.logistic_loss(w, X, y),
                               -y * np.log(p) - (1 - y) * np.log1p(-p), rtol=1e-12)


def test_no_noise_no_clipping_full_batch_is_plain_gradient_descent():
    X, y, _, _ = sgd.make_overfit_data(40, 1, 8, rng=0)
    r = sgd.dp_sgd(X, y, epochs=25, sampling_rate=1.0, clip=np.inf, noise_multiplier=0.0,
                   learning_rate=0.7, rng=1)
    w = np.zeros(8)
    for _ in range(25):
        p = 1 / (1 + np.exp(-X @ w))
        w = w - 0.7 * X.T @ (p - y) / len(y)
    np.testing.assert_allclose(r.weights, w, rtol=1e-12, atol=1e-14)
    assert np.isinf(r.epsilons).all() and r.steps == 25
    # a wrong twin (dividing by the batch's own size is the same here; a forgotten 1/n is not)
    w2 = np.zeros(8)
    for _ in range(25):
        w2 = w2 - 0.7 * X.T @ (1 / (1 + np.exp(-X @ w2)) - y)
    assert np.abs(w2 - r.weights).max() > 1e-2


def test_training_is_reproducible_and_seeded():
    X, y, _, _ = sgd.make_overfit_data(50, 1, 20, rng=0)
    kw = dict(epochs=3, sampling_rate=0.2, clip=1.0, noise_multiplier=1.0, learning_rate=1.0)
    a = sgd.dp_sgd(X, y, rng=7, **kw)
    b = sgd.dp_sgd(X, y, rng=7, **kw)
    c = sgd.dp_sgd(X, y, rng=8, **kw)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert np.abs(a.weights - c.weights).max() > 0
    assert a.history.shape == (4, 20) and a.steps == 15


# -- accounting ------------------------------------------------------------------------------
def test_epsilon_trajectory_is_the_kits_accountant():
    X, y, _, _ = sgd.make_overfit_data(60, 1, 10, rng=0)
    r = sgd.dp_sgd(X, y, epochs=4, sampling_rate=0.1, clip=1.0, noise_multiplier=1.3,
                   learning_rate=1.0, rng=0, delta=1e-6)
    for k, eps in enumerate(r.epsilons, start=1):
        acc = dp.RDPAccountant().compose_gaussian(1.3, q=0.1, steps=10 * k)
        assert eps == pytest.approx(acc.epsilon(1e-6), rel=1e-12)
    assert np.all(np.diff(r.epsilons) > 0)


def test_accountant_is_the_kits_or_none_never_a_fake():
    X, y, _, _ = sgd.make_overfit_data(40, 1, 8, rng=0)
    kw = dict(epochs=3, sampling_rate=0.25, clip=1.0, noise_multiplier=1.1, learning_rate=1.0,
              delta=1e-5)
    default = sgd.dp_sgd(X, y, rng=3, **kw)
    given = dp.RDPAccountant()
    explicit = sgd.dp_sgd(X, y, rng=3, accountant=given, **kw)
    silent = sgd.dp_sgd(X, y, rng=3, accountant=None, **kw)
    np.testing.assert_array_equal(default.epsilons, explicit.epsilons)
    assert given.history == [(1.1, 0.25, 4)] * 3          # the run composed on the one given
    # no accounting: the same model (accounting draws nothing), no epsilon at all
    np.testing.assert_array_equal(silent.history, default.history)
    assert silent.epsilons is None
    with pytest.raises(ValueError, match="no account"):
        silent.epsilon
    # an accountant composed before keeps counting: its earlier steps are in the epsilons
    more = sgd.dp_sgd(X, y, rng=3, accountant=given, **kw)
    assert more.epsilons[0] > default.epsilons[-1]

    class Fake:                     # what the notebook 18 panel used to pass: records nothing
        def compose_gaussian(self, *args, **kwargs):
            return self

        def epsilon(self, delta):
            return 0.0

    for bad, error in ((Fake(), TypeError), ("rpd", ValueError), (dp.PrivacyAccountant(1.0), TypeError)):
        with pytest.raises(error, match="accountant"):
            sgd.dp_sgd(X, y, rng=3, accountant=bad, **kw)


def test_training_loop_calls_the_lesson_functions(monkeypatch):
    """Each step is per_example_gradients then noisy_gradient_sum (nothing retyped): a wrong
    twin of noisy_gradient_sum (noise forgotten) changes the model."""
    X, y, _, _ = sgd.make_overfit_data(30, 1, 6, rng=0)
    kw = dict(epochs=2, sampling_rate=0.5, clip=1.0, noise_multiplier=1.0, learning_rate=1.0,
              accountant=None)
    calls = {"grad": 0, "sum": 0}
    real_grad, real_sum = sgd.per_example_gradients, sgd.noisy_gradient_sum

    def grad(*a, **k):
        calls["grad"] += 1
        return real_grad(*a, **k)

    def noisy(*a, **k):
        calls["sum"] += 1
        return real_sum(*a, **k)

    monkeypatch.setattr(sgd, "per_example_gradients", grad)
    monkeypatch.setattr(sgd, "noisy_gradient_sum", noisy)
    r = sgd.dp_sgd(X, y, rng=5, **kw)
    assert calls == {"grad": r.steps, "sum": r.steps} and r.steps == 4
    monkeypatch.setattr(sgd, "noisy_gradient_sum",
                        lambda g, c, s, *, rng=None: sgd.clip_gradients(g, c).sum(axis=0))
    assert not np.array_equal(sgd.dp_sgd(X, y, rng=5, **kw).weights, r.weights)


def test_losses_and_accuracy_of_a_stack_of_models():
    X, y, _, _ = sgd.make_overfit_data(25, 1, 5, rng=1)
    W = np.random.default_rng(2).normal(size=(4, 5))
    np.testing.assert_allclose(sgd.logistic_loss(W, X, y),
                               np.array([sgd.logistic_loss(w, X, y) for w in W]), rtol=1e-13)
    np.testing.assert_array_equal(sgd.accuracy(W, X, y), [sgd.accuracy(w, X, y) for w in W])
    np.testing.assert_array_equal(sgd.predict(W, X), [sgd.predict(w, X) for w in W])
    assert isinstance(sgd.accuracy(W[0], X, y), float)
    for bad in (np.ones((4, 6)), np.ones((2, 3, 5)), np.ones(6)):
        with pytest.raises(ValueError, match="w"):
            sgd.logistic_loss(bad, X, y)


@pytest.mark.parametrize("q,sigma,epochs", [(0.1, 3.0, 10), (0.05, 1.0, 3), (0.2, 0.8, 5)])
def test_epsilon_matches_dp_accounting(q, sigma, epochs):
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp
    orders = np.concatenate([np.arange(2, 64), [128, 256]]).astype(float)
    X, y, _, _ = sgd.make_overfit_data(40, 1, 5, rng=0)
    r = sgd.dp_sgd(X, y, epochs=epochs, sampling_rate=q, clip=1.0, noise_multiplier=sigma,
                   learning_rate=1.0, rng=0, accountant=dp.RDPAccountant(orders=orders),
                   delta=1e-5)
    theirs = dpa_rdp.RdpAccountant(orders=list(orders))
    theirs.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), r.steps)
    assert r.epsilon == pytest.approx(theirs.get_epsilon(1e-5), rel=1e-6)
    # wrong twin: accounting without subsampling (q = 1) costs far more
    full = dp.RDPAccountant(orders=orders).compose_gaussian(sigma, steps=r.steps).epsilon(1e-5)
    assert full > 1.5 * r.epsilon


# -- the membership attack -------------------------------------------------------------------
def test_membership_inference_counts():
    a, b, t = sgd.membership_inference([0.1, 0.2, 0.3], [0.25, 0.5, 0.9, 1.0])
    i = list(t).index(0.3)
    assert a[i] == pytest.approx(1 / 4) and b[i] == 0.0
    assert (a[0], b[0]) == (0.0, 1.0) and (a[-1], b[-1]) == (1.0, 0.0)
    # swapped roles (members with HIGHER loss) is the wrong twin: it reads the gap backwards
    a2, b2, _ = sgd.membership_inference([0.25, 0.5, 0.9, 1.0], [0.1, 0.2, 0.3])
    assert np.min(a + b) < np.min(a2 + b2)


def _attack(sigma, seed, epsilon_region):
    X, y, Xt, yt = sgd.make_overfit_data(EX["n_train"], EX["n_test"], EX["d"],
                                         noise_scale=EX["noise_scale"], signal=EX["signal"],
                                         rng=seed)
    r = sgd.dp_sgd(X, y, epochs=EX["epochs"], sampling_rate=EX["sampling_rate"],
                   clip=EX["clip"] if sigma else np.inf, noise_multiplier=sigma,
                   learning_rate=EX["learning_rate"], rng=100 + seed, delta=EX["delta"])
    n = len(y)
    a, b, _ = sgd.membership_inference(sgd.logistic_loss(r.weights, X, y),
                                       sgd.logistic_loss(r.weights, Xt[:n], yt[:n]))
    eps = r.epsilon if sigma else epsilon_region
    return r, dp.tradeoff.outside_region(a, b, n, n, eps, EX["delta"], level=ALPHA)


def test_membership_attack_private_inside_nonprivate_outside():
    for seed in range(3):
        private, out_p = _attack(EX["noise_multiplier"], seed, None)
        assert 1.0 < private.epsilon < 2.0
        assert not out_p.any()
        _, out_np = _attack(0.0, seed, private.epsilon)
        assert out_np.sum() >= 10


# -- bad input -------------------------------------------------------------------------------
def test_dp_sgd_rejects_bad_parameters():
    X, y, _, _ = sgd.make_overfit_data(10, 1, 6, rng=0)
    good = dict(epochs=1, sampling_rate=0.5, clip=1.0, noise_multiplier=1.0, learning_rate=0.1)
    for name, bad in [("epochs", 0), ("epochs", 1.5), ("sampling_rate", 0.0), ("sampling_rate", 1.1),
                      ("sampling_rate", float("nan")), ("clip", -1.0), ("noise_multiplier", -0.1),
                      ("learning_rate", 0.0), ("learning_rate", "0.1"), ("epochs", True)]:
        with pytest.raises((ValueError, TypeError), match=name):
            sgd.dp_sgd(X, y, **{**good, name: bad})
    with pytest.raises(ValueError, match="delta"):
        sgd.dp_sgd(X, y, **good, delta=1.0)
    with pytest.raises(ValueError, match="y"):
        sgd.dp_sgd(X, y + 2, **good)
    with pytest.raises(ValueError, match="X"):
        sgd.dp_sgd(X[0], y, **good)
    # round(1/q) steps per epoch: a tiny batch rate (5e-324 overflowed) or too many steps
    # in all are refused before any work, naming the parameters
    for q in (5e-324, 1e-300, 1e-7):
        with pytest.raises(ValueError, match="sampling_rate"):
            sgd.dp_sgd(X, y, **{**good, "sampling_rate": q})
    with pytest.raises(ValueError, match="epochs"):
        sgd.dp_sgd(X, y, **{**good, "epochs": 100_000, "sampling_rate": 0.01})
    assert sgd.dp_sgd(X, y, **{**good, "epochs": 2, "sampling_rate": 0.25}).steps == 8


def test_exported():
    assert dp.sgd.clip_gradients is sgd.clip_gradients
    # dp.dp_sgd is the training function (notebook 18 calls it so), not a module
    assert dp.dp_sgd is sgd.dp_sgd and callable(dp.dp_sgd)
    assert math.isfinite(sgd.accuracy(np.zeros(3), np.ones((2, 3)), np.array([0, 1])))


# -- the notebook 18 panel's record of its runs (issue 19: the first draw trains nothing) ----
@pytest.mark.slow
def test_panel_record_is_the_training_grid_and_the_attack_on_its_ranks_is_the_attack(
        committed_stream):
    """A record, not a statistical test: retrained on the stream the record was made
    from (under --seed-shift too), the runs are the record bit for bit."""
    from dpteach.panels import dp_sgd as panel

    grid = panel.training_grid()
    fresh = panel.grid_record(grid)
    saved = np.load(panel.GRID_RECORD)
    assert sorted(saved.files) == sorted(fresh)
    for key in ("sigmas", "acc", "members", "ties", "pool"):
        np.testing.assert_array_equal(saved[key], fresh[key], err_msg=key)
    np.testing.assert_allclose(saved["eps"], fresh["eps"], rtol=1e-12)
    # the ranks stand for the losses: every model's attack gives the same alpha, beta and
    # number of thresholds (ties included)
    read = panel._grid_from_record()
    flat = 0
    for key, run in grid["runs"].items():
        for e in range(run["acc"].size):
            a1, b1, t1 = sgd.membership_inference(run["member"][e], run["nonmember"][e])
            a2, b2, t2 = sgd.membership_inference(read["runs"][key]["member"][e],
                                                  read["runs"][key]["nonmember"][e])
            np.testing.assert_array_equal(a1, a2)
            np.testing.assert_array_equal(b1, b2)
            flat += t1.size != 2 + 2 * grid["n"]
        np.testing.assert_array_equal(read["runs"][key]["acc"], run["acc"])
    assert flat > 0          # some models have tied losses: ranks without the ties bits
    #                          (0..599) would count 602 thresholds there, the wrong twin


def test_panel_opens_from_its_record_without_training(monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    from dpteach.panels import dp_sgd as panel

    def no_training(*args, **kwargs):
        raise AssertionError("the panel trained on its first draw")

    monkeypatch.setattr(panel, "training_grid", no_training)
    p = panel.dp_sgd_attack()
    before = p.figure.axes[1].get_title()
    p.controls["noise_multiplier"].value = 1.0
    assert p.figure.axes[1].get_title() != before
