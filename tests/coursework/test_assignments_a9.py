"""A9 (accounting and DP-SGD): model solutions pass on many seeds, stubs are unsolved,
copy-cheats and the classic slips fail, judges survive garbage, data survives JSON."""

import numpy as np
import pytest

import dpteach as dp
from dpteach.coursework.assignments import _transport
from _notebook_json import code, markdown, outputs
from _tasks import run_task, tasks_of
from dpteach.coursework.assignments import a9_dp_sgd as a9


def _tasks():
    return tasks_of("A9")


def run(key, seed, **answers):
    return run_task("A9", key, seed, **answers)


# ------------------------------------------------------------------ model solutions
def _epsilon(sigma, delta, steps, q, accountant, *, classic=False, ignore_q=False):
    if accountant == "rdp":
        return dp.RDPAccountant().compose_gaussian(sigma, q=1.0 if ignore_q else q,
                                                   steps=steps).epsilon(delta)
    if accountant == "zcdp":
        return dp.zcdp_to_dp(steps / (2 * sigma ** 2), delta,
                             method="classic" if classic else "improved")
    return dp.gaussian_epsilon(sigma, delta, k=steps)


def _bisect(eps, target, rtol=1e-5):
    lo, hi = 0.1, 1.0
    while eps(hi) > target:
        lo, hi = hi, 2 * hi
    while eps(lo) <= target:
        lo, hi = lo / 2, lo
    while hi / lo > 1 + rtol:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if eps(mid) > target else (lo, mid)
    return float(hi)


def calibrate_sigma(target_epsilon, delta, steps, q, accountant):
    return _bisect(lambda s: _epsilon(s, delta, steps, q, accountant), target_epsilon)


def clip_and_noise(per_example_grads, clip, noise_multiplier, rng):
    g = np.asarray(per_example_grads, dtype=float)
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    clipped = g * np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    return clipped.sum(axis=0) + rng.normal(0.0, noise_multiplier * clip, size=g.shape[1])


@pytest.mark.parametrize("seed", range(20))
def test_model_calibration_passes(seed):
    for key in ("Task 1a", "Task 1b"):
        fb = run(key, seed, calibrate_sigma=calibrate_sigma)
        assert fb.passed, fb.message


@pytest.mark.parametrize("seed", range(40))
def test_model_clip_and_noise_passes(seed):
    fb = run("Task 2", seed, clip_and_noise=clip_and_noise)
    assert fb.passed, fb.message


def test_calling_the_packages_step_fails():
    # dp.sgd.noisy_gradient_sum and dp.sgd.clip_gradients are notebook 18's answer: not allowed
    def via_package(g, clip, sigma, rng):
        return dp.sgd.noisy_gradient_sum(g, clip, sigma, rng=rng)

    def via_module(g, clip, sigma, rng):
        return dp.sgd.clip_gradients(g, clip).sum(axis=0) + rng.normal(0, sigma * clip,
                                                                          np.shape(g)[1])
    for fn in (via_package, via_module):
        fb = run("Task 2", 3, clip_and_noise=fn)
        assert not fb.passed and "yourself" in fb.message
    assert dp.sgd.noisy_gradient_sum is dp.sgd.noisy_gradient_sum       # restored afterwards


def test_the_packages_step_is_noticed_when_imported_by_name():
    ns = {"step": dp.sgd.noisy_gradient_sum, "clip": dp.sgd.clip_gradients}
    exec("def via_name(g, c, s, rng):\n    return step(g, c, s, rng=rng)\n"
         "def via_clip(g, c, s, rng):\n    return clip(g, c).sum(axis=0) + "
         "rng.normal(0, s * c, len(g[0]))\n", ns)
    for fn in (ns["via_name"], ns["via_clip"]):
        fb = run("Task 2", 3, clip_and_noise=fn)
        assert not fb.passed and "yourself" in fb.message, fb.message
    assert ns["step"] is dp.sgd.noisy_gradient_sum and ns["clip"] is dp.sgd.clip_gradients
    assert dp.sgd.clip_gradients is dp.sgd.clip_gradients


def test_calling_the_checks_own_search_fails():
    def copy_the_check(target_epsilon, delta, steps, q, accountant):
        return a9.smallest_sigma(target_epsilon, delta, steps, q, accountant)
    for key in ("Task 1a", "Task 1b"):
        fb = run(key, 0, calibrate_sigma=copy_the_check)
        assert not fb.passed and "yourself" in fb.message


# ------------------------------------------------------------------ stubs
def test_stubs_are_not_yet_solved():
    def stub(*args):
        return None
    for key, name in [("Task 1a", "calibrate_sigma"), ("Task 1b", "calibrate_sigma"),
                      ("Task 2", "clip_and_noise")]:
        for answer in (None, stub, ...):
            fb = run(key, 0, **{name: answer})
            assert not fb.passed and fb.solved is False and "not yet solved" in fb.message


# ------------------------------------------------------------------ cheats and slips
def _printed_sigma(*args):
    return 1.513                                      # the notebook's table


def _constant(*args):
    return 3.0


def _ignores_subsampling(target_epsilon, delta, steps, q, accountant):
    return _bisect(lambda s: _epsilon(s, delta, steps, q, accountant, ignore_q=True),
                   target_epsilon)


def _classic_zcdp(target_epsilon, delta, steps, q, accountant):
    return _bisect(lambda s: _epsilon(s, delta, steps, q, accountant, classic=True),
                   target_epsilon)


def _per_step_target(target_epsilon, delta, steps, q, accountant):
    # calibrates one step to epsilon/steps: the basic-composition habit
    return _bisect(lambda s: _epsilon(s, delta, 1, q, accountant), target_epsilon / steps)


def _coarse(target_epsilon, delta, steps, q, accountant):
    return calibrate_sigma(target_epsilon, delta, steps, q, accountant) * 1.01


def _rdp_for_everything(target_epsilon, delta, steps, q, accountant):
    return calibrate_sigma(target_epsilon, delta, steps, q, "rdp")


@pytest.mark.parametrize("cheat", [_printed_sigma, _constant, _per_step_target, _coarse])
def test_calibration_cheats_fail_both(cheat):
    for key in ("Task 1a", "Task 1b"):
        for seed in range(3):
            assert not run(key, seed, calibrate_sigma=cheat).passed, (key, cheat.__name__)


def test_ignoring_subsampling_fails_1b_only():
    for seed in range(3):
        fb = run("Task 1b", seed, calibrate_sigma=_ignores_subsampling)
        assert not fb.passed and "subsampling" in fb.message
        assert run("Task 1a", seed, calibrate_sigma=_ignores_subsampling).passed


def test_wrong_accountant_fails_1a():
    for seed in range(5):
        assert not run("Task 1a", seed, calibrate_sigma=_classic_zcdp).passed
        assert not run("Task 1a", seed, calibrate_sigma=_rdp_for_everything).passed


def _unscaled(g, clip, sigma, rng):
    c = clip_and_noise(g, clip, 0.0, rng)
    return c + rng.normal(0.0, sigma, size=c.shape)


def _per_example_noise(g, clip, sigma, rng):
    g = np.asarray(g, float)
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    clipped = g * np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    return (clipped + rng.normal(0.0, sigma * clip, size=clipped.shape)).sum(axis=0)


def _clip_the_sum(g, clip, sigma, rng):
    s = np.asarray(g, float).sum(axis=0)
    s = s * min(1.0, clip / max(np.linalg.norm(s), 1e-300))
    return s + rng.normal(0.0, sigma * clip, size=s.shape)


def _fixed_noise(g, clip, sigma, rng):
    c = clip_and_noise(g, clip, 0.0, rng)
    return c + np.random.default_rng(0).normal(0.0, sigma * clip, size=c.shape)


def _laplace_noise(g, clip, sigma, rng):                      # right sd, wrong law
    c = clip_and_noise(g, clip, 0.0, rng)
    return c + rng.laplace(0.0, sigma * clip / np.sqrt(2), size=c.shape)


def _uniform_noise(g, clip, sigma, rng):
    c = clip_and_noise(g, clip, 0.0, rng)
    w = sigma * clip * np.sqrt(3)
    return c + rng.uniform(-w, w, size=c.shape)


def _no_noise(g, clip, sigma, rng):
    return clip_and_noise(g, clip, 0.0, rng)


def _clip_at_one(g, clip, sigma, rng):
    return clip_and_noise(g, 1.0, sigma, rng) if sigma == 0 else clip_and_noise(g, clip, sigma, rng)


def _nan_on_zero(g, clip, sigma, rng):
    g = np.asarray(g, float)
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        clipped = g * np.minimum(1.0, clip / norms) * (norms / norms)
    return clipped.sum(axis=0) + rng.normal(0.0, sigma * clip, size=g.shape[1])


def _always_scale_to_c(g, clip, sigma, rng):                  # normalises every gradient
    g = np.asarray(g, float)
    norms = np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-300)
    return (g * clip / norms).sum(axis=0) + rng.normal(0.0, sigma * clip, size=g.shape[1])


@pytest.mark.parametrize("twin", [_unscaled, _per_example_noise, _clip_the_sum, _fixed_noise,
                                  _no_noise, _clip_at_one, _nan_on_zero, _always_scale_to_c,
                                  _laplace_noise, _uniform_noise])
def test_clip_and_noise_twins_fail(twin):
    for seed in range(4):
        fb = run("Task 2", seed, clip_and_noise=twin)
        assert not fb.passed and fb.solved is not False, (twin.__name__, fb.message)


def test_twin_messages_name_the_slip():
    assert "scaled by C" in run("Task 2", 1, clip_and_noise=_unscaled).message
    assert "every example" in run("Task 2", 1, clip_and_noise=_per_example_noise).message
    assert "clip every example" in run("Task 2", 1, clip_and_noise=_clip_the_sum).message


def test_errors_are_reported():
    def broken(*args):
        raise ZeroDivisionError("oops")
    for key, name in [("Task 1a", "calibrate_sigma"), ("Task 2", "clip_and_noise")]:
        fb = run(key, 0, **{name: broken})
        assert not fb.passed and "ZeroDivisionError" in fb.message
    fb = run("Task 2", 0, clip_and_noise=lambda g, c, s, r: np.zeros(3))
    assert not fb.passed and "length" in fb.message


# ------------------------------------------------------------------ hostile data
GARBAGE = [{}, [], "x", 3, None, {"sigmas": "x"}, {"sigmas": [float("nan")] * 5},
           {"sigmas": [1.0]}, {"singles": "x", "sums": None, "noisy": [[1.0]]},
           {"singles": np.full((40, 5), np.nan)}, {"error": 3}, {"unsolved": "yes"},
           {"shape": None}, {"sigmas": [True, "1", None, [], {}]}]


@pytest.mark.parametrize("key", ["Task 1a", "Task 1b", "Task 2"])
def test_judges_never_raise(key):
    task = _tasks()[key]
    req, truth = task.request(np.random.default_rng(0))
    for data in GARBAGE:
        fb = task.judge(data, req, truth)
        assert not fb.passed and fb.message.startswith(key)


def test_data_survives_json():
    for key, name, fn in [("Task 1b", "calibrate_sigma", calibrate_sigma),
                          ("Task 2", "clip_and_noise", clip_and_noise)]:
        task = _tasks()[key]
        req, truth = task.request(np.random.default_rng(5))
        data = task.collect({name: fn}, req)
        back = _transport.decode(_transport.encode(data))
        assert task.judge(back, req, truth).passed


def test_the_check_agrees_with_dp_accounting():
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp
    orders = list(range(2, 65)) + [128, 256, 512, 1024]
    for q, sigma, steps in [(0.01, 1.5, 1000), (0.2, 4.0, 300)]:
        ours = dp.RDPAccountant(orders=orders).compose_gaussian(sigma, q=q, steps=steps)
        theirs = dpa_rdp.RdpAccountant(orders=orders)
        theirs.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
        assert ours.epsilon(1e-5) == pytest.approx(theirs.get_epsilon(1e-5), rel=1e-6)
    # and the check's own target calibration is tight: one step of 1e-4 smaller breaks it
    s = a9.smallest_sigma(1.0, 1e-5, 1000, 0.01, "rdp")
    assert a9.accountant_epsilon(s, 1e-5, 1000, 0.01, "rdp") <= 1.0
    assert a9.accountant_epsilon(s * (1 - 1e-4), 1e-5, 1000, 0.01, "rdp") > 1.0


# ------------------------------------------------------------------ Task 3: the subsampled RDP
import math  # noqa: E402

from dpteach.rdp import subsampled_gaussian_rdp as _by_name  # noqa: E402


def _terms(q, sigma, alpha, *, exponent=lambda i: i * i - i, swap=False, lo=0, hi=None):
    hi = alpha if hi is None else hi
    out = []
    for i in range(lo, hi + 1):
        a, b = (alpha - i, i) if not swap else (i, alpha - i)
        out.append(math.comb(alpha, i) * (1 - q) ** a * q ** b
                   * math.exp(exponent(i) / (2 * sigma * sigma)))
    return sum(out)


def subsampled_rdp(q, sigma, alpha):
    return math.log(_terms(q, sigma, alpha)) / (alpha - 1)


T3_SLIPS = {
    "linear in q": lambda q, s, a: q * a / (2 * s * s),
    "q squared approximation": lambda q, s, a: q * q * a * math.expm1(1 / s ** 2) / 2,
    "no subsampling": lambda q, s, a: a / (2 * s * s),
    "no 1/(alpha - 1)": lambda q, s, a: math.log(_terms(q, s, a)),
    "1/alpha": lambda q, s, a: math.log(_terms(q, s, a)) / a,
    "exponent i^2": lambda q, s, a: math.log(_terms(q, s, a, exponent=lambda i: i * i)) / (a - 1),
    "swapped powers": lambda q, s, a: math.log(_terms(q, s, a, swap=True)) / (a - 1),
    "first term dropped": lambda q, s, a: math.log(_terms(q, s, a, lo=1)) / (a - 1),
    "last term dropped": lambda q, s, a: math.log(_terms(q, s, a, hi=a - 1)) / (a - 1),
}


@pytest.mark.parametrize("seed", range(20))
def test_model_subsampled_rdp_passes(seed):
    fb = run("Task 3", seed, subsampled_rdp=subsampled_rdp)
    assert fb.passed, fb.message


@pytest.mark.parametrize("slip", sorted(T3_SLIPS))
def test_subsampled_rdp_slips_fail_on_every_seed(slip):
    for seed in range(20):
        fb = run("Task 3", seed, subsampled_rdp=T3_SLIPS[slip])
        assert not fb.passed, (slip, seed, fb.message)


def test_subsampled_rdp_slip_messages_name_the_slip():
    assert "linear in q" in run("Task 3", 0, subsampled_rdp=T3_SLIPS["linear in q"]).message
    assert "α - 1" in run("Task 3", 0, subsampled_rdp=T3_SLIPS["no 1/(alpha - 1)"]).message
    assert "without subsampling" in run("Task 3", 0, subsampled_rdp=T3_SLIPS["no subsampling"]).message


def test_subsampled_rdp_calling_the_kit_fails():
    def kit(q, sigma, alpha):
        return float(dp.subsampled_gaussian_rdp(q, sigma, alpha))

    def accountant(q, sigma, alpha):
        acc = dp.RDPAccountant(orders=[alpha]).compose_gaussian(sigma, q=q)
        return float(acc.rdp[0])

    def imported(q, sigma, alpha):          # bound by name in the notebook's globals
        return float(_by_name(q, sigma, alpha))

    for fn in (kit, accountant, imported):
        fb = run("Task 3", 1, subsampled_rdp=fn)
        assert not fb.passed and "yourself" in fb.message, (fn.__name__, fb.message)


def test_subsampled_rdp_stub_garbage_and_json():
    for answer in (None, ..., lambda *a: None):
        fb = run("Task 3", 0, subsampled_rdp=answer)
        assert not fb.passed and fb.solved is False
    task = _tasks()["Task 3"]
    req, truth = task.request(np.random.default_rng(0))
    for data in GARBAGE + [{"rdp": ["x"] * 4}, {"rdp": [float("inf")] * 4}]:
        fb = task.judge(data, req, truth)
        assert not fb.passed and fb.message.startswith("Task 3")
    data = task.collect({"subsampled_rdp": subsampled_rdp}, req)
    assert task.judge(_transport.decode(_transport.encode(data)), req, truth).passed
    # the hidden draw has one case of each kind, so the kinds' slips are told apart
    alphas = sorted(c["alpha"] for c in req["cases"])
    assert alphas[0] == 2 and 3 <= alphas[1] <= 6 and alphas[2] >= 7


# ------------------------------------------------------------------ the solution notebook's text
def test_a9_model_answer_on_clipping_the_sum():
    text = markdown("A9")
    assert "bounds nothing" not in text
    assert "by $2C$, not $C$" in text


def test_a9_has_the_subsampled_rdp_task():
    assert 'dp.assignments.check("A9", "Task 3", subsampled_rdp=subsampled_rdp)' in code("A9")
    assert "✅ Task 3" in outputs("A9")
    student = code("A9", student=True)
    assert "def subsampled_rdp(q, sigma, alpha):" in student and "math.comb(alpha, i)" not in student
