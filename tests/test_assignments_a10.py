"""A10 (local sensitivity and synthetic data): model solutions pass on many seeds, stubs
are unsolved, calls of the kit's answers and the classic slips fail on every draw, judges
survive garbage, data survive JSON."""

import functools
import math

import numpy as np
import pytest

import dpteach as dp
from dpteach.coursework import assignments
from _tasks import run_task, tasks_of
from dpteach.coursework.assignments import a10_local_synthetic as a10

SEEDS = range(12)
PTR_SEEDS = range(6)


def _tasks():
    return tasks_of("A10")


def run(key, seed, **answers):
    return run_task("A10", key, seed, **answers)


# ------------------------------------------------------------------ Task 1: local sensitivity
def _local(values, lower, upper, k, *, m_shift=0, clamp=True, ts=None, pad=True, k_shift=0):
    """A(k) written out with loops, with the knobs a slip turns."""
    x = np.asarray(values, dtype=float)
    x = sorted(np.clip(x, lower, upper) if clamp else x)
    n = len(x)
    m = (n + 1) // 2 + m_shift
    k = k + k_shift

    def at(i):
        if i < 1:
            return lower if pad else x[0]
        if i > n:
            return upper if pad else x[-1]
        return x[i - 1]
    ts = range(k + 2) if ts is None else ts(k)
    return max(at(m + t) - at(m + t - k - 1) for t in ts)


def local_sensitivity(values, lower, upper, k):
    return _local(values, lower, upper, k)


def smooth_sensitivity(values, lower, upper, beta):
    return max(math.exp(-k * beta) * local_sensitivity(values, lower, upper, k)
               for k in range(len(values) + 2))


LOCAL_SLIPS = {
    "median_low": dict(m_shift=-1),         # the (n - 1)/2-th value: the even-n index
    "median_high": dict(m_shift=1),
    "no_clamping": dict(clamp=False),
    "t_only_to_k": dict(ts=lambda k: range(k + 1)),
    "t_from_one": dict(ts=lambda k: range(1, k + 2)),
    "no_padding": dict(pad=False),
    "window_k_minus_1": dict(k_shift=-1),
    "window_k_plus_1": dict(k_shift=1),
}


def _smooth(values, lower, upper, beta, ks=None, factor=True, **slip):
    n = len(values)
    ks = range(n + 2) if ks is None else ks(n)
    return max((math.exp(-k * beta) if factor else 1.0) * _local(values, lower, upper, k, **slip)
               for k in ks)


SMOOTH_SLIPS = {
    "no_discount": dict(factor=False),
    "k_below_n": dict(ks=lambda n: range(n)),
    "k_up_to_m": dict(ks=lambda n: range((n + 1) // 2 + 1)),
    "k_up_to_half_n": dict(ks=lambda n: range(n // 2 + 1)),
    "only_k_0": dict(ks=lambda n: range(1)),
    "median_low": dict(m_shift=-1),
    "median_high": dict(m_shift=1),
    "no_clamping": dict(clamp=False),
}


def test_tasks_points_and_registration():
    tasks = _tasks()
    assert list(tasks) == ["Task 1a", "Task 1b", "Task 2", "Task 3"]
    assert sum(t.points for t in tasks.values()) == 10
    keys = list(assignments.ASSIGNMENTS)
    assert keys[-1] == "A10" and keys == sorted(keys, key=lambda k: int(k[1:]))


def test_the_checks_windows_are_the_kits_local_sensitivity():
    rng = np.random.default_rng(5)
    for _ in range(100):
        case = a10._t1_dataset(rng, side=int(rng.integers(-1, 2)), tight=rng.random() < 0.3)
        n = len(case["values"])
        mine = a10.window_maxima(case["values"], 0.0, case["upper"], n + 3)
        kit = dp.local_sensitivity_median(case["values"], 0.0, case["upper"], np.arange(n + 4))
        loops = [_local(case["values"], 0.0, case["upper"], k) for k in range(n + 4)]
        np.testing.assert_allclose(mine, kit, rtol=0, atol=1e-12)
        np.testing.assert_allclose(loops, kit, rtol=0, atol=1e-12)


def test_local_sensitivity_by_brute_force_on_a_small_domain():
    """A(k) is the largest A(0) within k substitutions: enumerate them on a tiny domain."""
    import itertools
    domain, lo, hi = (0.0, 1.0, 3.0, 7.0), 0.0, 7.0
    rng = np.random.default_rng(1)
    for _ in range(6):
        x = tuple(rng.choice(domain, 5))
        for k in range(3):
            worst = 0.0
            for pos in itertools.combinations(range(5), k):
                for vals in itertools.product(domain, repeat=k):
                    y = list(x)
                    for p, v in zip(pos, vals):
                        y[p] = v
                    worst = max(worst, local_sensitivity(y, lo, hi, 0))
            # the universe here is the domain, so A(k) computed over [lo, hi] bounds it
            assert worst <= local_sensitivity(x, lo, hi, k) + 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_model_sensitivities_pass(seed):
    assert run("Task 1a", seed, local_sensitivity=local_sensitivity).passed
    fb = run("Task 1b", seed, smooth_sensitivity=smooth_sensitivity)
    assert fb.passed, fb.message


def test_a_longer_maximum_over_k_still_passes():
    def generous(values, lower, upper, beta):
        return max(math.exp(-k * beta) * local_sensitivity(values, lower, upper, k)
                   for k in range(3 * len(values) + 5))
    for seed in range(4):
        assert run("Task 1b", seed, smooth_sensitivity=generous).passed


@pytest.mark.parametrize("slip", list(LOCAL_SLIPS))
def test_local_sensitivity_slips_fail_on_every_draw(slip):
    def slipped(values, lower, upper, k):
        return _local(values, lower, upper, k, **LOCAL_SLIPS[slip])
    for seed in SEEDS:
        fb = run("Task 1a", seed, local_sensitivity=slipped)
        assert not fb.passed and fb.solved, (seed, fb.message)
        assert fb.details["reason"] == "wrong"


@pytest.mark.parametrize("slip", list(SMOOTH_SLIPS))
def test_smooth_sensitivity_slips_fail_on_every_draw(slip):
    def slipped(values, lower, upper, beta):
        return _smooth(values, lower, upper, beta, **SMOOTH_SLIPS[slip])
    for seed in SEEDS:
        fb = run("Task 1b", seed, smooth_sensitivity=slipped)
        assert not fb.passed and fb.details["reason"] == "wrong", (seed, fb.message)


def test_slip_messages_name_the_slip():
    def low(values, lower, upper, k):
        return _local(values, lower, upper, k, m_shift=-1)
    def undiscounted(values, lower, upper, beta):
        return _smooth(values, lower, upper, beta, factor=False)
    messages = [run("Task 1a", 0, local_sensitivity=low).message,
                run("Task 1b", 0, smooth_sensitivity=undiscounted).message]
    assert "one place too low" in messages[0] or "answer is" in messages[0]
    assert "e^(-k beta)" in messages[1]


def test_the_kits_sensitivities_are_refused():
    def via_kit(values, lower, upper, k):
        return dp.local_sensitivity_median(values, lower, upper, k)

    def via_module(values, lower, upper, beta):
        return dp.beyond_global.smooth_sensitivity_median(values, lower, upper, beta)

    def via_distance(values, lower, upper, k):
        dp.distance_to_instability(values, lower, upper, 1.0)
        return local_sensitivity(values, lower, upper, k)
    assert "yourself" in run("Task 1a", 0, local_sensitivity=via_kit).message
    assert "yourself" in run("Task 1b", 0, smooth_sensitivity=via_module).message
    assert "yourself" in run("Task 1a", 0, local_sensitivity=via_distance).message

    def via_private(values, lower, upper, beta):
        x = np.sort(np.clip(values, lower, upper))
        a = dp.beyond_global._all_local_sensitivities(x.tobytes(), lower, upper)
        return float(np.max(np.exp(-beta * np.arange(a.size)) * a))
    assert "yourself" in run("Task 1b", 0, smooth_sensitivity=via_private).message
    assert dp.local_sensitivity_median is dp.beyond_global.local_sensitivity_median


# ------------------------------------------------------------------ Task 2: PTR
@functools.lru_cache(maxsize=None)
def _distance(values, lower, upper, bound):
    return dp.distance_to_instability(list(values), lower, upper, bound)


def _ptr(values, lower, upper, epsilon, delta, bound, rng, *, test_noise=None, threshold=None,
         release_scale=None, d_shift=0, reverse=False, test=True):
    d = _distance(tuple(np.asarray(values, float)), lower, upper, bound) + d_shift
    noise = rng.laplace(0.0, 2 / epsilon if test_noise is None else test_noise(epsilon))
    t = math.log(1 / delta) / (epsilon / 2) if threshold is None else threshold(epsilon, delta)
    passed = d + noise > t
    if test and passed == reverse:
        return None
    x = np.sort(np.clip(values, lower, upper))
    scale = 2 * bound / epsilon if release_scale is None else release_scale(bound, epsilon,
                                                                             upper - lower)
    return float(x[len(x) // 2] + rng.laplace(0.0, scale))


def my_ptr_median(values, lower, upper, epsilon, delta, proposed_bound, rng):
    return _ptr(values, lower, upper, epsilon, delta, proposed_bound, rng)


PTR_SLIPS = {
    "no_test_noise": dict(test_noise=lambda e: 1e-300),
    "threshold_ln_over_eps": dict(threshold=lambda e, d: math.log(1 / d) / e),
    "threshold_ln": dict(threshold=lambda e, d: math.log(1 / d)),
    "test_noise_full_eps": dict(test_noise=lambda e: 1 / e),
    "release_noise_b_over_eps": dict(release_scale=lambda b, e, r: b / e),
    "release_noise_global": dict(release_scale=lambda b, e, r: 2 * r / e),
    "release_noise_4b": dict(release_scale=lambda b, e, r: 4 * b / e),
    "distance_minus_1": dict(d_shift=-1),
    "distance_plus_1": dict(d_shift=1),
    "reversed_test": dict(reverse=True),
    "no_test": dict(test=False),
}


@pytest.mark.parametrize("seed", range(10))
def test_model_ptr_passes(seed):
    fb = run("Task 2", seed, my_ptr_median=my_ptr_median)
    assert fb.passed, fb.message


def test_model_ptr_with_the_kits_distance_passes():
    def honest(values, lower, upper, epsilon, delta, proposed_bound, rng):
        d = dp.distance_to_instability(values, lower, upper, proposed_bound)
        if d + rng.laplace(0, 2 / epsilon) <= math.log(1 / delta) / (epsilon / 2):
            return None
        return float(np.median(np.clip(values, lower, upper))
                     + rng.laplace(0, 2 * proposed_bound / epsilon))
    assert run("Task 2", 3, my_ptr_median=honest).passed


@pytest.mark.parametrize("slip", list(PTR_SLIPS))
def test_ptr_slips_fail_on_every_draw(slip):
    def slipped(values, lower, upper, epsilon, delta, proposed_bound, rng):
        return _ptr(values, lower, upper, epsilon, delta, proposed_bound, rng, **PTR_SLIPS[slip])
    for seed in PTR_SEEDS:
        fb = run("Task 2", seed, my_ptr_median=slipped)
        assert not fb.passed and fb.solved, (seed, fb.message)
        assert fb.details["reason"] in ("rate", "release"), fb.message


def test_ptr_messages_name_the_slip():
    def noiseless(values, lower, upper, epsilon, delta, proposed_bound, rng):
        return _ptr(values, lower, upper, epsilon, delta, proposed_bound, rng,
                    test_noise=lambda e: 1e-300)
    def half_scale(values, lower, upper, epsilon, delta, proposed_bound, rng):
        return _ptr(values, lower, upper, epsilon, delta, proposed_bound, rng,
                    release_scale=lambda b, e, r: b / e)
    assert "without noise" in run("Task 2", 1, my_ptr_median=noiseless).message
    assert "ε/2" in run("Task 2", 1, my_ptr_median=half_scale).message


def test_ptr_via_the_kit_and_never_answering_fail():
    def via_kit(values, lower, upper, epsilon, delta, proposed_bound, rng):
        return dp.ptr_median(values, lower, upper, epsilon, delta,
                             proposed_bound=proposed_bound, rng=rng)

    def never(values, lower, upper, epsilon, delta, proposed_bound, rng):
        return None

    def text(*args):
        return "⊥"
    fb = run("Task 2", 0, my_ptr_median=via_kit)
    assert not fb.passed and fb.details["reason"] == "library"
    assert not run("Task 2", 0, my_ptr_median=never).passed
    assert run("Task 2", 0, my_ptr_median=text).details["reason"] == "type"
    assert dp.ptr_median is dp.beyond_global.ptr_median


def test_ptr_hidden_draws_tell_the_slips_apart():
    for seed in range(40):
        req, truth = _tasks()["Task 2"].request(np.random.default_rng(seed))
        c, fact = req["cases"][0], truth["cases"][0]
        assert 0.15 <= fact["p"] <= 0.85
        assert dp.distance_to_instability(c["values"], 0, c["upper"], c["proposed_bound"]) \
            == fact["d"]
        for p in a10.ptr_slip_rates(fact["d"], c["epsilon"], c["delta"]).values():
            assert abs(p - fact["p"]) >= 0.12
        assert truth["cases"][1]["p"] > 0.999 and truth["cases"][2]["d"] == 0


# ------------------------------------------------------------------ Task 3: MW update
def _mw(synthetic, query, measurement, *, sign=1, half=0.5, per_n=True, total="n"):
    a, q = np.asarray(synthetic, float), np.asarray(query, float)
    n = a.sum()
    w = a * np.exp(sign * q * (measurement - q @ a) * half / (n if per_n else 1.0))
    if total == "n":
        return n * w / w.sum()
    return w / w.sum() if total == "one" else w


def mw_update(synthetic, query, measurement):
    return _mw(synthetic, query, measurement)


MW_SLIPS = {
    "no_renormalisation": dict(total=None),
    "normalised_to_one": dict(total="one"),
    "wrong_sign": dict(sign=-1),
    "no_half": dict(half=1.0),
    "no_total": dict(per_n=False),
}


@pytest.mark.parametrize("seed", SEEDS)
def test_model_update_passes(seed):
    fb = run("Task 3", seed, mw_update=mw_update)
    assert fb.passed, fb.message


@pytest.mark.parametrize("slip", list(MW_SLIPS))
def test_update_slips_fail_on_every_draw(slip):
    def slipped(synthetic, query, measurement):
        with np.errstate(over="ignore", invalid="ignore"):
            return _mw(synthetic, query, measurement, **MW_SLIPS[slip])
    for seed in SEEDS:
        fb = run("Task 3", seed, mw_update=slipped)
        assert not fb.passed and fb.details["reason"] in ("wrong", "type"), (seed, fb.message)


def test_update_messages_name_the_slip():
    def sign(s, q, m):
        return _mw(s, q, m, sign=-1)
    def half(s, q, m):
        return _mw(s, q, m, half=1.0)
    def raw(s, q, m):
        return _mw(s, q, m, total=None)
    assert "sign" in run("Task 3", 0, mw_update=sign).message
    assert "1/2" in run("Task 3", 0, mw_update=half).message
    assert "renormalise" in run("Task 3", 0, mw_update=raw).message


def test_the_kits_update_is_refused():
    def via_kit(synthetic, query, measurement):
        return dp.multiplicative_weights_update(synthetic, query, measurement)
    ns = {"step": dp.synthetic.multiplicative_weights_update}
    exec("def by_name(s, q, m):\n    return step(s, q, m)\n", ns)
    for fn in (via_kit, ns["by_name"], dp.multiplicative_weights_update):
        fb = run("Task 3", 0, mw_update=fn)
        assert not fb.passed and fb.details["reason"] == "library", fb.message
    assert ns["step"] is dp.synthetic.multiplicative_weights_update


# ------------------------------------------------------------------ stubs, garbage
NAMES = {"Task 1a": "local_sensitivity", "Task 1b": "smooth_sensitivity",
         "Task 2": "my_ptr_median", "Task 3": "mw_update"}


@pytest.mark.parametrize("key", list(NAMES))
def test_stubs_are_not_yet_solved(key):
    def stub(*args):
        return None
    for answer in (None, stub, ...):
        fb = run(key, 0, **{NAMES[key]: answer})
        assert not fb.passed and fb.solved is False and "not yet solved" in fb.message


@pytest.mark.parametrize("key", list(NAMES))
def test_errors_and_wrong_types_fail_with_a_message(key):
    def boom(*args):
        raise ZeroDivisionError("oops")

    def text(*args):
        return "a string"
    fb = run(key, 0, **{NAMES[key]: boom})
    assert not fb.passed and "ZeroDivisionError" in fb.message
    fb = run(key, 0, **{NAMES[key]: text})
    assert not fb.passed and fb.solved and fb.message.startswith(key)


@pytest.mark.parametrize("key", list(NAMES))
def test_judges_survive_garbage(key):
    task = _tasks()[key]
    req, truth = task.request(np.random.default_rng(0))
    for data in (None, 3, "x", [], {}, {"values": "x"}, {"values": [None] * 6},
                 {"releases": [[1, "a"], [], []]}, {"releases": "x"}, {"updated": [[1]] * 5},
                 {"updated": ["x"] * 5}, {"called_library": True}, {"error": "E"}):
        fb = task.judge(data, req, truth)
        assert not fb.passed and fb.message.startswith(key), (data, fb.message)
    for t in ({}, None, {"cases": "x"}, {"values": []}):
        assert not task.judge({}, req, t).passed
