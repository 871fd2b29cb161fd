"""A7 (properties of DP, the hypothesis-testing view): model solutions pass on many seeds,
stubs are unsolved, copy-cheats and the classic slips fail, judges survive garbage, data
survives JSON."""

import math

import numpy as np
import pytest

import dpteach as dp
from dpteach.coursework import assignments
from _tasks import run_task, tasks_of


def _tasks():
    return tasks_of("A7")


def run(key, seed, **answers):
    return run_task("A7", key, seed, **answers)


# ------------------------------------------------------------------ model solutions
def group_epsilon_delta(epsilon, delta, k):
    return k * epsilon, k * math.exp((k - 1) * epsilon) * delta


def parallel_cost(epsilons):
    return max(epsilons)


def sequential_cost(epsilons):
    return sum(epsilons)


def tradeoff_beta(alpha, epsilon, delta):
    a = np.asarray(alpha, dtype=float)
    return np.maximum.reduce([np.zeros_like(a), 1 - delta - np.exp(epsilon) * a,
                              np.exp(-epsilon) * (1 - delta - a)])


def membership_test_errors(scores_out, scores_in, threshold):
    return (float(np.mean(np.asarray(scores_out) > threshold)),
            float(np.mean(np.asarray(scores_in) <= threshold)))


def pair_delta(p, q, epsilon):
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    e = math.exp(epsilon)
    return float(max(np.maximum(p - e * q, 0).sum(), np.maximum(q - e * p, 0).sum()))


MODEL = {"Task 1": {"group_epsilon_delta": group_epsilon_delta},
         "Task 2": {"parallel_cost": parallel_cost, "sequential_cost": sequential_cost},
         "Task 3": {"tradeoff_beta": tradeoff_beta},
         "Task 4": {"membership_test_errors": membership_test_errors},
         "Task 6": {"pair_delta": pair_delta}}


def test_tasks_and_points():
    tasks = _tasks()
    assert list(tasks) == ["Task 1", "Task 2", "Task 3", "Task 4", "Task 5", "Task 6"]
    assert sum(t.points for t in tasks.values()) == 12
    assert "A7" in assignments.ASSIGNMENTS
    keys = list(assignments.ASSIGNMENTS)
    assert keys == sorted(keys, key=lambda k: int(k[1:]))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("key", list(MODEL))
def test_model_passes(key, seed):
    fb = run(key, seed, **MODEL[key])
    assert fb.passed, fb.message
    assert fb.message.startswith(key + ":")


def test_check_in_a_notebook_passes():
    fb = dp.assignments.check("A7", "Task 3", tradeoff_beta=tradeoff_beta)
    assert fb.passed, fb.message


# ------------------------------------------------------------------ stubs
@pytest.mark.parametrize("key", list(MODEL))
def test_stubs_are_not_yet_solved(key):
    def stub(*args):
        return None
    for answer in (None, stub, ...):
        answers = {name: answer for name in MODEL[key]}
        fb = run(key, 0, **answers)
        assert not fb.passed and fb.solved is False and "not yet solved" in fb.message


def test_task2_half_solved_is_not_yet_solved():
    fb = run("Task 2", 0, parallel_cost=parallel_cost, sequential_cost=None)
    assert not fb.passed and fb.solved is False


# ------------------------------------------------------------------ calling the kit
def test_calling_the_kit_fails():
    cheats = {
        "Task 1": {"group_epsilon_delta": lambda e, d, k: dp.group_privacy(e, d, k)},
        "Task 2": {"parallel_cost": lambda v: dp.parallel_composition(v)[0],
                   "sequential_cost": sequential_cost},
        "Task 3": {"tradeoff_beta": lambda a, e, d: dp.tradeoff_curve(a, e, d)},
        "Task 4": {"membership_test_errors": lambda o, i, t: tuple(
            x[0] for x in dp.tradeoff.empirical_tradeoff(o, i, [t]))},
        "Task 6": {"pair_delta": lambda p, q, e: dp.definition.smallest_delta(p, q, e)},
    }
    for key, answers in cheats.items():
        fb = run(key, 1, **answers)
        assert not fb.passed and "yourself" in fb.message, (key, fb.message)
    # the answer IS the helper, or the helper imported by name
    fb = run("Task 3", 2, tradeoff_beta=dp.tradeoff_curve)
    assert not fb.passed and "yourself" in fb.message
    ns = {"curve": dp.tradeoff.tradeoff_curve}
    exec("def via_name(a, e, d):\n    return curve(a, e, d)\n", ns)
    fb = run("Task 3", 2, tradeoff_beta=ns["via_name"])
    assert not fb.passed and "yourself" in fb.message
    assert ns["curve"] is dp.tradeoff.tradeoff_curve
    assert dp.tradeoff_curve is dp.tradeoff.tradeoff_curve
    fb = run("Task 2", 2, parallel_cost=parallel_cost,
             sequential_cost=lambda v: dp.basic_composition(v)[0])
    assert not fb.passed and "yourself" in fb.message


# ------------------------------------------------------------------ cheats and slips
@pytest.mark.parametrize("slip, word", [
    (lambda e, d, k: (k * e, k * d), "k·δ"),
    (lambda e, d, k: (k * e, math.exp(k * e) * d), "e^(kε)·δ"),
    (lambda e, d, k: (k * e, k * math.exp(k * e) * d), "last step"),
    (lambda e, d, k: (k * e, d), "grows"),
    (lambda e, d, k: (e, k * math.exp((k - 1) * e) * d), "ε_k"),
    (lambda e, d, k: (0.8, 2.7e-6), "expected"),               # a value from the notebook
    (lambda e, d, k: k * e, "pair"),
    (lambda e, d, k: (k * e, float("nan")), "pair"),
])
def test_task1_slips_fail(slip, word):
    for seed in range(5):
        fb = run("Task 1", seed, group_epsilon_delta=slip)
        assert not fb.passed and fb.solved is not False and word in fb.message, fb.message


@pytest.mark.parametrize("par, seq, word", [
    (sequential_cost, sequential_cost, "the sum"),
    (parallel_cost, parallel_cost, "largest ε"),
    (sequential_cost, parallel_cost, "the sum"),                         # swapped
    (lambda v: len(v) * v[0], sequential_cost, "expected"),
    (lambda v: 1.0, lambda v: 1.0, "expected"),
    (lambda v: np.mean(v), sequential_cost, "expected"),
    (parallel_cost, lambda v: "sum", "one number"),
])
def test_task2_slips_fail(par, seq, word):
    for seed in range(5):
        fb = run("Task 2", seed, parallel_cost=par, sequential_cost=seq)
        assert not fb.passed and word in fb.message, fb.message


def _first_line_only(alpha, epsilon, delta):
    a = np.asarray(alpha, float)
    return np.maximum(0, 1 - delta - np.exp(epsilon) * a)


def _no_delta(alpha, epsilon, delta):
    return tradeoff_beta(alpha, epsilon, 0.0)


@pytest.mark.parametrize("slip, word", [
    (_first_line_only, "swapping"),
    (_no_delta, "δ"),
    (lambda a, e, d: tradeoff_beta(a, e / 2, d), "expected"),
    (lambda a, e, d: 1 - np.asarray(a), "expected"),                    # eps = 0
    (lambda a, e, d: float(tradeoff_beta(0.01, e, d)), "array"),        # a scalar
    (lambda a, e, d: [tradeoff_beta(x, e, d) for x in a][:-1], "array"),
    (lambda a, e, d: np.full(np.shape(a), np.nan), "array"),
])
def test_task3_slips_fail(slip, word):
    for seed in range(5):
        fb = run("Task 3", seed, tradeoff_beta=slip)
        assert not fb.passed and word in fb.message, fb.message


@pytest.mark.parametrize("slip, word", [
    (lambda o, i, t: membership_test_errors(o, i, t)[::-1], "swapped"),
    (lambda o, i, t: (float(np.mean(o >= t)), float(np.mean(i < t))), "≥"),
    (lambda o, i, t: (float(np.mean(o > t)), float(np.mean(i > t))), "power"),
    (lambda o, i, t: (int(np.sum(o > t)), int(np.sum(i <= t))), "counts"),
    (lambda o, i, t: (0.0, 0.0), "expected"),
    (lambda o, i, t: (0.05, 0.5), "expected"),
    (lambda o, i, t: "IN", "pair"),
])
def test_task4_slips_fail(slip, word):
    for seed in range(5):
        fb = run("Task 4", seed, membership_test_errors=slip)
        assert not fb.passed and word in fb.message, fb.message


def test_task4_ties_at_the_threshold_are_present():
    for seed in range(20):
        req, _ = _tasks()["Task 4"].request(np.random.default_rng(seed))
        assert any(np.any(np.array(c["scores_out"] + c["scores_in"]) == c["threshold"])
                   for c in req["cases"])


def test_errors_are_reported_not_raised():
    def boom(*args):
        raise ZeroDivisionError("oops")
    for key, names in MODEL.items():
        fb = run(key, 0, **{n: boom for n in names})
        assert not fb.passed and fb.solved is not False and "ZeroDivisionError" in fb.message
        fb = run(key, 0, **{n: 42 for n in names})
        assert not fb.passed and "function" in fb.message


# ------------------------------------------------------------------ garbage data
GARBAGE = [None, {}, [], "x", 3, float("nan"), {"values": None}, {"values": [None] * 4},
           {"values": ["x", [1], {"a": 1}, float("nan")]}, {"values": [[1, 2]] * 10},
           {"values": [np.full(3, np.nan)] * 2}, {"used": "x", "values": []},
           {"parallel_cost": [None] * 4, "sequential_cost": "x"}, {"error": None},
           {"unsolved": "yes"}, {"values": [[float("nan"), 1.0]] * 4, "used": []}]


@pytest.mark.parametrize("key", list(MODEL))
def test_judge_never_raises_on_garbage(key):
    task = _tasks()[key]
    req, truth = task.request(np.random.default_rng(0))
    for data in GARBAGE:
        fb = task.judge(data, req, truth)
        assert not fb.passed and fb.message.startswith(key)


# ------------------------------------------------------------------ Task 5
def is_consistent_with_dp(alpha_hat, beta_hat, n_out, n_in, epsilon, delta, level):
    from scipy import stats

    def upper(p, n, lv):
        k = round(p * n)
        return 1.0 if k == n else float(stats.beta.ppf(1 - lv / 2, k + 1, n - k))
    a_high, b_high = upper(alpha_hat, n_out, level), upper(beta_hat, n_in, level)
    return bool(b_high >= tradeoff_beta(a_high, epsilon, delta))


@pytest.mark.parametrize("seed", range(25))
def test_task5_model_passes(seed):
    fb = run("Task 5", seed, is_consistent_with_dp=is_consistent_with_dp)
    assert fb.passed, fb.message


def test_task5_cases_cover_the_traps():
    for seed in range(20):
        req, truth = _tasks()["Task 5"].request(np.random.default_rng(seed))
        assert len(req["cases"]) == 6
        assert sum(truth["consistent"]) == 4                 # 3 excused + 1 above the curve


def _naive(a, b, n_out, n_in, e, d, level):
    return bool(b >= tradeoff_beta(a, e, d))


@pytest.mark.parametrize("slip, word", [
    (_naive, "by chance"),
    (lambda a, b, no, ni, e, d, lv: is_consistent_with_dp(a, b, no, ni, e, d, 0.05), "expected"),
    (lambda *args: True, "not (ε, δ)-DP"),
    (lambda *args: False, "expected True"),
    (lambda *args: not is_consistent_with_dp(*args), "expected"),
    (lambda *args: 1, "True or False"),
    (lambda *args: "yes", "True or False"),
])
def test_task5_slips_fail(slip, word):
    for seed in range(5):
        fb = run("Task 5", seed, is_consistent_with_dp=slip)
        assert not fb.passed and word in fb.message, fb.message


def test_task5_calling_the_kit_fails():
    def via_kit(a, b, no, ni, e, d, lv):
        return not bool(dp.tradeoff.outside_region(a, b, no, ni, e, d, level=lv))
    fb = run("Task 5", 0, is_consistent_with_dp=via_kit)
    assert not fb.passed and "yourself" in fb.message

    def via_the_interval(a, b, no, ni, e, d, lv):   # the kit's one Clopper-Pearson interval
        _, a_high = dp.audit.clopper_pearson(round(a * no), no, alpha=lv)
        _, b_high = dp.audit.clopper_pearson(round(b * ni), ni, alpha=lv)
        return bool(b_high >= tradeoff_beta(a_high, e, d))
    fb = run("Task 5", 0, is_consistent_with_dp=via_the_interval)
    assert not fb.passed and "yourself" in fb.message, fb.message
    for answer in (None, ...):
        fb = run("Task 5", 0, is_consistent_with_dp=answer)
        assert fb.solved is False


def test_task5_judge_never_raises_on_garbage():
    task = _tasks()["Task 5"]
    req, truth = task.request(np.random.default_rng(0))
    for data in GARBAGE + [{"values": [True] * 5, "used": []}, {"values": [1] * 6, "used": []}]:
        fb = task.judge(data, req, truth)
        assert not fb.passed and fb.message.startswith("Task 5")


# ------------------------------------------------------------------ Task 1: any correct bound
def chain_sum(epsilon, delta, k):
    """The chain argument's exact delta: delta (1 + e^eps + ... + e^((k-1) eps))."""
    return k * epsilon, delta * math.expm1(k * epsilon) / math.expm1(epsilon)


@pytest.mark.parametrize("seed", range(30))
def test_task1_accepts_the_tighter_chain_sum(seed):
    fb = run("Task 1", seed, group_epsilon_delta=chain_sum)
    assert fb.passed, fb.message
    assert "exact chain sum, tighter" in fb.message


def test_task1_chain_sum_matches_the_kit():
    from dpteach.properties import group_privacy_chain
    assert group_privacy_chain(0.5, 1e-6, 10) == pytest.approx(chain_sum(0.5, 1e-6, 10), rel=1e-12)
    # about 4 times smaller than the textbook bound at eps = 0.5, k = 10 (issue 19)
    ratio = dp.group_privacy(0.5, 1e-6, 10)[1] / group_privacy_chain(0.5, 1e-6, 10)[1]
    assert 3.9 < ratio < 4.0
    assert group_privacy_chain(0.3, 1e-7, 1) == (0.3, 1e-7)


@pytest.mark.parametrize("slip, word", [
    (lambda e, d, k: (k * e, 0.99 * chain_sum(e, d, k)[1]), "smaller than the chain argument"),
    (lambda e, d, k: (k * e, 1.01 * group_epsilon_delta(e, d, k)[1]), "looser than the textbook"),
    (lambda e, d, k: (k * e, math.exp(k * e) * d), "e^(kε)·δ"),
])
def test_task1_wrong_bounds_fail_on_every_seed(slip, word):
    for seed in range(30):
        fb = run("Task 1", seed, group_epsilon_delta=slip)
        assert not fb.passed and fb.solved is not False and word in fb.message, fb.message


# ------------------------------------------------------------------ Task 6: hockey-stick delta
def _hs(p, q, e):
    return float(np.maximum(np.asarray(p) - math.exp(e) * np.asarray(q), 0).sum())


@pytest.mark.parametrize("slip, word", [
    (lambda p, q, e: _hs(p, q, e), "both orders"),
    (lambda p, q, e: _hs(q, p, e), "both orders"),
    (lambda p, q, e: max(float(np.asarray(p)[np.asarray(p) > math.exp(e) * np.asarray(q)].sum()),
                         float(np.asarray(q)[np.asarray(q) > math.exp(e) * np.asarray(p)].sum())),
     "Pr[L > ε]"),
    (lambda p, q, e: _hs(p, q, e) + _hs(q, p, e), "larger one"),
    (lambda p, q, e: max(_hs(p, q, -e), _hs(q, p, -e)), "e^−ε"),
    (lambda p, q, e: max(float((np.asarray(p) - math.exp(e) * np.asarray(q)).sum()),
                         float((np.asarray(q) - math.exp(e) * np.asarray(p)).sum())), "positive part"),
    (lambda p, q, e: 0.05, "expected"),
    (lambda p, q, e: "0.1", "one number"),
])
def test_task6_slips_fail_on_every_seed(slip, word):
    for seed in range(20):
        fb = run("Task 6", seed, pair_delta=slip)
        assert not fb.passed and fb.solved is not False and word in fb.message, fb.message


def test_task6_cases_cover_both_directions_and_an_infinite_loss():
    for seed in range(20):
        req, truth = _tasks()["Task 6"].request(np.random.default_rng(seed))
        sides = [_hs(c["p"], c["q"], c["epsilon"]) > _hs(c["q"], c["p"], c["epsilon"])
                 for c in req["cases"]]
        assert sorted(sides) == [False, False, True, True]
        assert any(min(c["q"]) == 0 for c in req["cases"])
        assert truth["expected"] == pytest.approx(
            [dp.definition.smallest_delta(c["p"], c["q"], c["epsilon"]) for c in req["cases"]])


def test_task1_text_teaches_the_pure_theorem_and_both_delta_bounds():
    """The hand-out and the model answer teach what the check accepts: Dwork & Roth's
    Theorem 2.2 for the pure case, the chain sum delta (e^(k eps) - 1)/(e^eps - 1) and the
    textbook's k e^((k-1) eps) delta, which bounds it."""
    import pathlib

    import nbformat
    root = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
    for folder in ("exercises", "solutions"):
        nb = nbformat.read(root / folder / "A7_properties_and_testing.ipynb", as_version=4)
        task = next(c.source for c in nb.cells
                    if c.cell_type == "markdown" and c.source.startswith("## Task 1"))
        assert "Theorem 2.2" in task and "pure case only" in task, folder
        assert r"\frac{e^{k\varepsilon} - 1}{e^{\varepsilon} - 1}" in task, folder
        assert r"k\,e^{(k-1)\varepsilon}\,\delta" in task, folder
        assert "accepts anything from the exact sum up to" in task, folder
