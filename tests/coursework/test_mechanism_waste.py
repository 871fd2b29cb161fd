"""A graded Laplace mechanism (A3 Task 4) that adds far more noise than ε needs is
private but not correct: twice the scale fails on every seed, saying by what factor it
wastes accuracy; 1.1 times and exactly Δ/ε pass on every seed. The threshold is a
Gamma test at alpha = 1e-6 (dpteach.coursework._mechanism_judge.WASTE_TOLERANCE).

One collection per seed (the model mechanism); the outputs are then rescaled around the
inputs, which gives exact Lap(f·Δ/ε) samples for each factor f."""

import numpy as np
import pytest
from scipy import stats

from dpteach.coursework import assignments
from dpteach.coursework._feedback import number_text
from dpteach.coursework._mechanism_judge import WASTE_TOLERANCE, mechanism_judge

SEEDS = range(5)


def _release(value, sensitivity, epsilon, rng):
    return value + rng.laplace(0.0, sensitivity / epsilon)


@pytest.fixture(scope="module")
def collected():
    task = assignments._task("A3", "Task 4")
    out = []
    for seed in SEEDS:
        request, truth = task.request(np.random.default_rng(seed))
        out.append((task, request, truth, task.collect({"laplace_release": _release}, request)))
    return out


def _scaled(data, request, factor):
    inputs = np.asarray(request["inputs"], float).reshape(-1, 1)
    outputs = np.asarray(data["outputs"], float)
    return {**data, "outputs": inputs + factor * (outputs - inputs)}


@pytest.mark.slow
@pytest.mark.parametrize("factor, passes", [(1.0, True), (1.1, True), (2.0, False),
                                            (100.0, False)])
def test_a_wasteful_scale_fails_the_graded_task_on_every_seed(collected, factor, passes):
    for task, request, truth, data in collected:
        verdict = task.judge(_scaled(data, request, factor), request, truth)
        assert verdict.passed is passes, (factor, verdict.message)
        if not passes:
            assert verdict.details["reason"] == "wasteful"
            assert "private, but wasteful" in verdict.message
            assert abs(verdict.details["factor"] / factor - 1) < 0.05     # says by how much
            assert f"about {number_text(verdict.details['factor'], 3)} times" in verdict.message
        # the formative check keeps passing a larger scale, saying so
        plain = mechanism_judge(_scaled(data, request, factor), request, name="check")
        assert plain.passed


def test_the_waste_threshold_is_sound_at_alpha():
    # N·mean|z|/b' ~ Gamma(N, 1); the task fails when mean|z|/(b·q_hi) > WASTE_TOLERANCE
    n, a_i = 14_000 * 12, 1e-6 / 274              # runs per point, alpha_i
    q_hi = stats.gamma.isf(a_i, n, scale=1 / n)
    cut = WASTE_TOLERANCE * q_hi                       # on mean|z| / b
    assert stats.gamma.sf(cut / 1.1 * n, n) < 1e-100   # 1.1 × Δ/ε fails: never
    assert stats.gamma.cdf(cut / 2.0 * n, n) < 1e-100  # 2 × Δ/ε passes: never
