"""A8 (clipping and the sparse vector technique): model solutions pass on many seeds, stubs
are unsolved, copy-cheats and the classic slips fail, judges survive garbage, data survives
JSON."""

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach.coursework import assignments
from _tasks import run_task, tasks_of
from dpteach.coursework.assignments import a8_clipping_svt as a8


def _tasks():
    return tasks_of("A8")


def run(key, seed, **answers):
    return run_task("A8", key, seed, **answers)


# ------------------------------------------------------------------ model solutions
def my_clipped_mean(values, lower, upper, epsilon, rng):
    x = np.clip(np.asarray(values, dtype=float), lower, upper)
    d = max(abs(lower), abs(upper))
    s = x.sum() + rng.laplace(0.0, 2 * d / epsilon)
    n = x.size + rng.laplace(0.0, 2 / epsilon)
    return float(np.clip(s / max(n, 1.0), lower, upper))


def best_clip_bound(values, epsilon, candidates):
    x = np.asarray(values, dtype=float)
    n = x.size

    def rmse(c):
        m = np.clip(x, 0, c).mean()
        return math.hypot(m - x.mean(), math.sqrt(8 * c * c + 8 * m * m) / (epsilon * n))
    return min(candidates, key=rmse)


def my_above_threshold(answers, threshold, epsilon, rng, sensitivity=1.0):
    t = threshold + rng.laplace(0.0, 2 * sensitivity / epsilon)
    for i, a in enumerate(answers):
        if a + rng.laplace(0.0, 4 * sensitivity / epsilon) >= t:
            return i
    return None


SEEDS = range(20)


@pytest.mark.parametrize("seed", SEEDS)
def test_model_clipped_mean_passes(seed):
    fb = run("Task 1", seed, my_clipped_mean=my_clipped_mean)
    assert fb.passed, fb.message


@pytest.mark.parametrize("seed", range(40))
def test_model_best_clip_bound_passes(seed):
    fb = run("Task 2", seed, best_clip_bound=best_clip_bound)
    assert fb.passed, fb.message


@pytest.mark.parametrize("seed", SEEDS)
def test_model_above_threshold_passes(seed):
    fb = run("Task 3", seed, my_above_threshold=my_above_threshold)
    assert fb.passed, fb.message


# ------------------------------------------------------------------ stubs
def stub(*args, **kwargs):
    return None


@pytest.mark.parametrize("key,name", [("Task 1", "my_clipped_mean"),
                                      ("Task 2", "best_clip_bound"),
                                      ("Task 3", "my_above_threshold")])
def test_stub_and_missing_are_unsolved(key, name):
    for answer in (stub, None, ...):
        fb = run(key, 1, **{name: answer})
        assert not fb.passed and fb.solved is False, fb.message
        assert fb.message.startswith(key)


# ------------------------------------------------------------------ Task 1 slips and cheats
def full_epsilon_each(values, lower, upper, epsilon, rng):
    return my_clipped_mean(values, lower, upper, 2 * epsilon, rng)


def no_clamping(values, lower, upper, epsilon, rng):
    x = np.asarray(values, dtype=float)
    d = max(abs(lower), abs(upper))
    s = x.sum() + rng.laplace(0.0, 2 * d / epsilon)
    n = x.size + rng.laplace(0.0, 2 / epsilon)
    return float(np.clip(s / max(n, 1.0), lower, upper))


def width_sensitivity(values, lower, upper, epsilon, rng):
    x = np.clip(np.asarray(values, dtype=float), lower, upper)
    s = x.sum() + rng.laplace(0.0, 2 * (upper - lower) / epsilon)
    n = x.size + rng.laplace(0.0, 2 / epsilon)
    return float(np.clip(s / max(n, 1.0), lower, upper))


def exact_count(values, lower, upper, epsilon, rng):
    x = np.clip(np.asarray(values, dtype=float), lower, upper)
    d = max(abs(lower), abs(upper))
    return float(np.clip((x.sum() + rng.laplace(0.0, 2 * d / epsilon)) / x.size, lower, upper))


@pytest.mark.parametrize("fn", [full_epsilon_each, no_clamping, width_sensitivity,
                                lambda v, lo, hi, e, r: float(np.clip(np.mean(v), lo, hi)),
                                lambda v, lo, hi, e, r: float(np.mean(np.clip(v, lo, hi))),
                                lambda v, lo, hi, e, r: 3.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clipped_mean_slips_fail(fn, seed):
    fb = run("Task 1", seed, my_clipped_mean=fn)
    assert not fb.passed and fb.solved, fb.message


def test_clipped_mean_exact_count_fails():
    # an exact count leaks n: narrower than the construction
    fails = sum(not run("Task 1", s, my_clipped_mean=exact_count).passed for s in range(4))
    assert fails == 4


def test_clipped_mean_calling_the_kit_fails():
    def via_kit(v, lo, hi, e, r):
        return dp.clipped_mean(v, lo, hi, e, rng=r)

    def via_parts(v, lo, hi, e, r):
        s, n = dp.clipping.noisy_sum_and_count(v, lo, hi, e, rng=r)
        return float(np.clip(s / max(n, 1), lo, hi))
    for fn in (via_kit, via_parts):
        fb = run("Task 1", 0, my_clipped_mean=fn)
        assert not fb.passed and "dp.clipped_mean" in fb.message


def test_clipped_mean_wrong_type_and_error():
    fb = run("Task 1", 0, my_clipped_mean=lambda *a: "7")
    assert not fb.passed and "one number" in fb.message
    fb = run("Task 1", 0, my_clipped_mean=lambda *a: 1 / 0)
    assert not fb.passed and "ZeroDivisionError" in fb.message


# ------------------------------------------------------------------ Task 2 slips and cheats
def bias_only(values, epsilon, candidates):
    return max(candidates)


def noise_only(values, epsilon, candidates):
    return min(candidates)


def scale_not_sd(values, epsilon, candidates):
    # the Laplace scale c/epsilon of a full-budget sum taken for the noise's sd
    x = np.asarray(values, dtype=float)
    return min(candidates, key=lambda c: math.hypot(np.clip(x, 0, c).mean() - x.mean(),
                                                    c / (epsilon * x.size)))


@pytest.mark.parametrize("fn", [bias_only, noise_only, scale_not_sd,
                                lambda v, e, c: float(np.quantile(v, 0.95)),
                                lambda v, e, c: c[0]])
def test_best_bound_slips_fail(fn):
    fails = sum(not run("Task 2", s, best_clip_bound=fn).passed for s in range(5))
    assert fails >= 3


def test_best_bound_calling_the_kit_fails():
    def via_kit(v, e, cands):
        return min(cands, key=lambda c: dp.clipping.clipped_mean_error(v, 0, c, e).rmse)
    fb = run("Task 2", 0, best_clip_bound=via_kit)
    assert not fb.passed and "clipped_mean_error" in fb.message


# ------------------------------------------------------------------ Task 3 slips and cheats
def no_query_noise(answers, threshold, epsilon, rng, sensitivity=1.0):
    t = threshold + rng.laplace(0.0, 2 * sensitivity / epsilon)
    for i, a in enumerate(answers):
        if a >= t:
            return i
    return None


def fresh_threshold(answers, threshold, epsilon, rng, sensitivity=1.0):
    for i, a in enumerate(answers):
        t = threshold + rng.laplace(0.0, 2 * sensitivity / epsilon)
        if a + rng.laplace(0.0, 4 * sensitivity / epsilon) >= t:
            return i
    return None


def no_stop(answers, threshold, epsilon, rng, sensitivity=1.0):
    t = threshold + rng.laplace(0.0, 2 * sensitivity / epsilon)
    last = None
    for i, a in enumerate(answers):
        if a + rng.laplace(0.0, 4 * sensitivity / epsilon) >= t:
            last = i
    return last


def halved_scales(answers, threshold, epsilon, rng, sensitivity=1.0):
    return my_above_threshold(answers, threshold, 2 * epsilon, rng, sensitivity)


def ignores_sensitivity(answers, threshold, epsilon, rng, sensitivity=1.0):
    return my_above_threshold(answers, threshold, epsilon, rng, 1.0)


def counts_from_one(answers, threshold, epsilon, rng, sensitivity=1.0):
    i = my_above_threshold(answers, threshold, epsilon, rng, sensitivity)
    return None if i is None else i + 1


def noiseless(answers, threshold, epsilon, rng, sensitivity=1.0):
    above = np.flatnonzero(np.asarray(answers) >= threshold)
    return int(above[0]) if above.size else None


@pytest.mark.parametrize("fn", [no_query_noise, fresh_threshold, no_stop, halved_scales,
                                noiseless, counts_from_one])
def test_above_threshold_slips_fail(fn):
    fails = sum(not run("Task 3", s, my_above_threshold=fn).passed for s in range(3))
    assert fails == 3


def test_above_threshold_ignoring_sensitivity_fails():
    fails = sum(not run("Task 3", s, my_above_threshold=ignores_sensitivity).passed
                for s in range(3))
    assert fails >= 2


def test_above_threshold_calling_the_kit_fails():
    def via_kit(a, t, e, rng, sensitivity=1.0):
        return dp.above_threshold(a, t, e, sensitivity=sensitivity, rng=rng)
    fb = run("Task 3", 0, my_above_threshold=via_kit)
    assert not fb.passed and "dp.above_threshold" in fb.message


def test_above_threshold_wrong_type():
    fb = run("Task 3", 0, my_above_threshold=lambda *a, **k: "0")
    assert not fb.passed and fb.solved


# ------------------------------------------------------------------ judges and transport
GARBAGE = [None, {}, [], "x", 3, float("nan"), {"releases": "x"}, {"releases": [[np.nan]] * 3},
           {"bounds": [None, "a", np.nan, {}]}, {"counts": [[1, 2], "x", None]},
           {"counts": [[np.nan] * 10] * 3}, {"error": 5}, {"unsolved": True},
           {"releases": [[1.0] * 5000] * 3}, {"bounds": [1e300] * 4},
           {"counts": [[-4000] + [0] * 9] * 3}, {"type": None}]


@pytest.mark.parametrize("key", ["Task 1", "Task 2", "Task 3", "Task 4"])
def test_judge_never_raises_on_garbage(key):
    task = _tasks()[key]
    req, truth = task.request(np.random.default_rng(0))
    for data in GARBAGE:
        fb = task.judge(data, req, truth)
        assert not fb.passed and fb.message.startswith(key), (data, fb.message)
    for t in ({}, None, {"best": "x"}, {"reference_seed": "x"}):
        fb = task.judge({}, req, t)
        assert not fb.passed


def test_points_and_registration():
    assert "A8" in assignments.ASSIGNMENTS
    assert sum(t.points for t in a8.TASKS) == 12
    assert [t.key for t in a8.TASKS] == ["Task 1", "Task 2", "Task 3", "Task 4"]
    keys = list(assignments.ASSIGNMENTS)
    assert keys == sorted(keys, key=lambda k: int(k[1:]))          # A10 after A9


# ------------------------------------------------------------------ Task 1: empty and tiny groups
def no_floor(values, lower, upper, epsilon, rng):
    """Divides by the noisy count itself (which can be near 0 or negative)."""
    x = np.clip(np.asarray(values, dtype=float), lower, upper)
    d = max(abs(lower), abs(upper))
    s = x.sum() + rng.laplace(0.0, 2 * d / epsilon)
    n = x.size + rng.laplace(0.0, 2 / epsilon)
    return float(np.clip(s / n, lower, upper))


def no_final_clip(values, lower, upper, epsilon, rng):
    """Floors the count at 1 but releases the ratio unclipped."""
    x = np.clip(np.asarray(values, dtype=float), lower, upper)
    d = max(abs(lower), abs(upper))
    s = x.sum() + rng.laplace(0.0, 2 * d / epsilon)
    n = x.size + rng.laplace(0.0, 2 / epsilon)
    return float(s / max(n, 1.0))


def test_clipped_mean_hidden_cases_include_groups_of_0_1_2():
    for seed in range(10):
        req, _ = _tasks()["Task 1"].request(np.random.default_rng(seed))
        sizes = sorted(len(c["values"]) for c in req["cases"])
        assert sizes[:3] == [0, 1, 2] and min(sizes[3:]) >= 40


@pytest.mark.parametrize("fn, word", [(no_floor, "max(count~, 1)"),
                                      (no_final_clip, "max(count~, 1)")])
def test_clipped_mean_small_group_slips_fail_on_every_seed(fn, word):
    for seed in range(6):
        fb = run("Task 1", seed, my_clipped_mean=fn)
        assert not fb.passed and fb.solved and word in fb.message, fb.message


# ------------------------------------------------------------------ Task 4: private quantile
def my_private_quantile(values, q, lower, upper, epsilon, rng, *, weight=True, half=True,
                        uniform=True, clip=True):
    x = np.asarray(values, dtype=float)
    x = np.sort(np.clip(x, lower, upper)) if clip else np.sort(x)
    n = x.size
    edges = np.concatenate([[lower], x, [upper]])
    if not clip:                       # slip: the range silently stretches to the data
        edges = np.sort(edges)
    length = np.diff(edges)
    score = -np.abs(np.arange(n + 1) - q * n)
    with np.errstate(divide="ignore"):
        logw = epsilon * score / (2.0 if half else 1.0) + (np.log(length) if weight else
                                                           np.where(length > 0, 0.0, -np.inf))
    w = np.exp(logw - logw.max())
    i = rng.choice(n + 1, p=w / w.sum())
    return float(edges[i] + (rng.random() * length[i] if uniform else 0.0))


@pytest.mark.parametrize("seed", range(4))
def test_model_private_quantile_passes(seed):
    fb = run("Task 4", seed, my_private_quantile=my_private_quantile)
    assert fb.passed, fb.message


@pytest.mark.parametrize("slip, word", [
    (dict(weight=False), "length"),
    (dict(half=False), "exp(ε·u/2)"),
    (dict(uniform=False), "uniform point"),
    (dict(clip=False), "outside [lower, upper]"),
])
def test_private_quantile_slips_fail(slip, word):
    for seed in range(3):
        fb = run("Task 4", seed,
                 my_private_quantile=lambda *a, kw=slip: my_private_quantile(*a, **kw))
        assert not fb.passed and fb.solved and word in fb.message, fb.message


def test_private_quantile_calling_the_kit_fails():
    fb = run("Task 4", 0, my_private_quantile=lambda v, q, lo, hi, e, r: dp.clipping.private_quantile(
        v, q, lo, hi, e, rng=r))
    assert not fb.passed and "yourself" in fb.message
    for answer in (None, ...):
        assert run("Task 4", 0, my_private_quantile=answer).solved is False


def test_private_quantile_exact_cdf_matches_the_kit():
    from scipy import stats
    req, _ = _tasks()["Task 4"].request(np.random.default_rng(3))
    for c in req["cases"]:
        draws = dp.clipping.private_quantile(np.array(c["values"]), c["q"], c["lower"], c["upper"],
                                    c["epsilon"], rng=np.random.default_rng(0), size=50_000)
        assert stats.kstest(draws, a8.quantile_release_cdf(c)).pvalue > 1e-6
        wrong = dict(c, epsilon=2 * c["epsilon"])                 # a wrong twin is rejected
        assert stats.kstest(draws, a8.quantile_release_cdf(wrong)).pvalue < 1e-6
