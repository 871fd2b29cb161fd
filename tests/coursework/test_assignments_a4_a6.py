"""Graded tasks of A4 (composition and curator), A5 (exponential mechanism) and
A6 (auditing): for every task the model solution passes on many hidden draws, the blank
stub is "not yet solved", copy-cheats and the classic slip fail, the judge never raises
on garbage, and the data survives the JSON transport."""

import math

import numpy as np
import pytest
from scipy import special

import dpteach as dp
from dpteach.coursework import assignments
from dpteach.coursework.assignments import _transport
from dpteach.coursework.assignments import a4_composition as a4
from dpteach.coursework.assignments import a5_exponential as a5
from dpteach.coursework.assignments import _a6_pool as a6_pool, a6_auditing as a6

SEEDS = range(20)
GARBAGE = [None, {}, [], "x", 3, float("nan"), {"error": 5}, {"unsolved": "yes"},
           {"totals": "x"}, {"pairs": [None]}, {"values": [float("nan")] * 4},
           {"type": "dpteach.curator.Curator", "attacks": [{"answers": "x"}, 7]},
           {"recovered": float("nan"), "answers": [[1, 2]], "epsilons": [1]},
           {"probabilities": [[1, 2], "x"]}, {"fractions": [None, "a"]}, {"results": [[1]]},
           {"outputs": {"x": [1, 2]}}, {"y": "nan"}, {"p": [float("inf")]}]


_REQUESTS = {}


def _request(assignment, key, seed, transport):
    """The task's request and truth for this seed (drawn once per test session)."""
    cache_key = (assignment, key, seed, transport)
    if cache_key not in _REQUESTS:
        task = assignments._task(assignment, key)
        request, truth = task.request(np.random.default_rng(seed))
        if transport:
            request = _transport.loads(_transport.dumps(request))
        _REQUESTS[cache_key] = (request, truth)
    return _REQUESTS[cache_key]


def run(assignment, key, seed=0, transport=None, **answers):
    """request -> collect -> (JSON) -> judge, as the grader does. The JSON round trip of
    the request is made for the first three seeds (it is the same code every time)."""
    task = assignments._task(assignment, key)
    transport = seed < 3 if transport is None else transport
    request, truth = _request(assignment, key, seed, transport)
    data = task.collect(answers, request)
    data = _transport.loads(_transport.dumps(data))
    return task.judge(data, request, truth)


def stub(*args, **kwargs):
    """What the exercise generator leaves: a function whose body is `...`."""
    return None


def assert_garbage_safe(assignment, key):
    task = assignments._task(assignment, key)
    request, truth = task.request(np.random.default_rng(1))
    for junk in GARBAGE:
        fb = task.judge(junk, request, truth)
        assert not fb.passed and fb.message.startswith(key), (junk, fb)


# ================================================================== A4
def averaging_attack(curator, where, k, epsilon):
    answers = [curator.count(where, epsilon=epsilon) for _ in range(k)]
    return int(round(np.mean(answers)))


def basic_epsilon(epsilons):
    return dp.basic_composition(list(epsilons))[0]


def advanced_epsilon(epsilon, k, delta, delta_slack):
    eps_total = epsilon * np.sqrt(2 * k * np.log(1 / delta_slack)) + k * epsilon * np.expm1(epsilon)
    return eps_total, k * delta + delta_slack


def defended_curator(table):
    return dp.Curator(table, epsilon=1.0)


def split_sd(total_epsilon, k):
    return np.sqrt(2) * (k / total_epsilon) / np.sqrt(k)


def best_k(total_epsilon, ks):
    return min(ks, key=lambda k: split_sd(total_epsilon, k))


A4_MODEL = {"Task 1": dict(averaging_attack=averaging_attack),
            "Task 2": dict(basic_epsilon=basic_epsilon),
            "Task 3": dict(advanced_epsilon=advanced_epsilon),
            "Task 4": dict(defended_curator=defended_curator),
            "Task 5a": dict(split_sd=split_sd), "Task 5b": dict(best_k=best_k)}


def test_a4_tasks_and_points():
    tasks = assignments.tasks("A4")
    assert [t.key for t in tasks] == list(A4_MODEL)
    assert sum(t.points for t in tasks) == 10


@pytest.mark.parametrize("key", list(A4_MODEL))
def test_a4_model_passes_on_many_seeds(key):
    for seed in SEEDS:
        fb = run("A4", key, seed, **A4_MODEL[key])
        assert fb.passed and fb.message.startswith(key), (seed, fb)


@pytest.mark.parametrize("key", list(A4_MODEL))
def test_a4_stub_is_not_yet_solved(key):
    for answers in ({name: stub for name in A4_MODEL[key]}, {name: None for name in A4_MODEL[key]}):
        fb = run("A4", key, **answers)
        assert not fb.passed and not fb.solved and "not yet solved" in fb.message, fb


@pytest.mark.parametrize("key", list(A4_MODEL))
def test_a4_judge_survives_garbage(key):
    assert_garbage_safe("A4", key)


def test_a4_task1_cheats_and_slips_fail():
    patients = dp.datasets.synthetic_patients(500, rng=4)
    notebook_count = int((patients["Condition"] == "Cancer").sum())
    cheats = {
        "the notebook's count": lambda c, w, k, e: notebook_count,
        "one answer": lambda c, w, k, e: round(c.count(w, epsilon=e)),
        "reads the table, asks nothing": lambda c, w, k, e: int(w(c._table).sum()),
        "all the budget in one query": lambda c, w, k, e: round(c.count(w, epsilon=k * e)),
        "half the queries": lambda c, w, k, e: round(np.mean([c.count(w, epsilon=e)
                                                              for _ in range(k // 2)])),
        "the median": lambda c, w, k, e: float(np.median([c.count(w, epsilon=e) for _ in range(k)])) + 3,
        "one more query than allowed": lambda c, w, k, e: np.mean([c.count(w, epsilon=e)
                                                                   for _ in range(k + 1)]),
    }
    for name, fn in cheats.items():
        for seed in range(3):
            fb = run("A4", "Task 1", seed, averaging_attack=fn)
            assert not fb.passed and fb.solved, (name, fb)


def test_a4_task1_an_error_is_reported():
    fb = run("A4", "Task 1", averaging_attack=lambda c, w, k, e: 1 / 0)
    assert not fb.passed and "ZeroDivisionError" in fb.message


def test_a4_task2_cheats_and_slips_fail():
    cheats = {"the notebook's accountant": lambda eps: 200.0,
              "parallel composition": lambda eps: max(eps),
              "k times the first": lambda eps: len(eps) * eps[0],
              "advanced instead": lambda eps: dp.advanced_composition(eps[0], 0, len(eps), 1e-6)[0]}
    for name, fn in cheats.items():
        assert not run("A4", "Task 2", 0, basic_epsilon=fn).passed, name


def test_a4_task3_cheats_and_slips_fail():
    def log10(e, k, d, s):
        return e * np.sqrt(2 * k * np.log10(1 / s)) + k * e * np.expm1(e), k * d + s

    def first_term(e, k, d, s):
        return e * np.sqrt(2 * k * np.log(1 / s)), k * d + s

    def no_k_delta(e, k, d, s):
        return advanced_epsilon(e, k, d, s)[0], s

    notebook = dp.advanced_composition(0.5, 0.0, 400, 1e-6)
    cheats = {"log10": log10, "first term only": first_term, "delta forgotten": no_k_delta,
              "the notebook's value": lambda e, k, d, s: notebook,
              "a number, not a pair": lambda e, k, d, s: advanced_epsilon(e, k, d, s)[0]}
    for name, fn in cheats.items():
        for seed in range(3):
            fb = run("A4", "Task 3", seed, advanced_epsilon=fn)
            assert not fb.passed and fb.solved, (name, fb)
    assert "log10" in run("A4", "Task 3", 0, advanced_epsilon=log10).message


def test_a4_task3_calling_the_library_fails_and_is_undone():
    original = dp.accounting.advanced_composition
    fb = run("A4", "Task 3", 0, advanced_epsilon=lambda e, k, d, s: dp.advanced_composition(e, d, k, s))
    assert not fb.passed and fb.details["reason"] == "library"
    assert dp.advanced_composition is original and dp.accounting.advanced_composition is original
    assert run("A4", "Task 3", 0, **A4_MODEL["Task 3"]).passed


def test_a4_task4_cheats_and_slips_fail():
    from dpteach.accounting import PrivacyAccountant

    def swapped(table):
        c = dp.Curator(table, epsilon=1.0)
        c.accountant = PrivacyAccountant(1e9)
        return c

    def private_swap(table):
        c = dp.Curator(table, epsilon=1.0)
        c._accountant = PrivacyAccountant(1e9)
        return c

    def spent_before(table):
        c = dp.Curator(table, epsilon=1.0)
        c.count(None, epsilon=0.01)
        return c

    class Lenient(PrivacyAccountant):
        def spend(self, epsilon, delta=0.0, label=None):
            return None

    def lenient(table):
        c = dp.Curator(table, epsilon=1.0)
        c.accountant = Lenient(1.0)
        return c

    class MyCurator(dp.Curator):
        pass

    def patched_count(table):
        c = dp.Curator(table, epsilon=1000)
        calls = []

        def count(where=None, *, epsilon):
            calls.append(epsilon)
            if len(calls) > 2:
                raise dp.BudgetExceededError("no")
            return 0.0
        c.count = count
        return c

    class TwoAnswers(PrivacyAccountant):     # refuses after two answers whatever their epsilon
        def spend(self, epsilon, delta=0.0, label=None):
            if len(self.history) >= 2:
                raise dp.BudgetExceededError("two answers only")
            return super().spend(epsilon, delta, label)

    def two_answers(table):
        c = dp.Curator(table, epsilon=1000)
        c.accountant = TwoAnswers(1000)
        return c

    patients = dp.datasets.synthetic_patients(500, rng=4)
    cheats = {"generous": lambda t: dp.Curator(t, epsilon=1000),
              "accountant swapped": swapped, "lenient accountant": lenient,
              "private accountant swapped": private_swap, "spent before": spent_before,
              "subclass": lambda t: MyCurator(t, epsilon=1.0),
              "patched count": patched_count, "refuse after two": two_answers,
              "budget 0.9": lambda t: dp.Curator(t, epsilon=0.9),
              "budget 1.2": lambda t: dp.Curator(t, epsilon=1.2),
              "the notebook's table": lambda t: dp.Curator(patients, epsilon=1.0),
              "not a curator": lambda t: 2}
    for seed in range(6):
        for name, fn in cheats.items():
            fb = run("A4", "Task 4", seed, defended_curator=fn)
            assert fb.solved and fb.message.startswith("Task 4"), (name, fb)
            assert not fb.passed, (name, seed, fb)


def test_a4_task4_hidden_epsilon_tells_budgets_apart():
    for eps in a4._T4_EPS:
        counts = {budget: int(budget / eps + 1e-9) for budget in (0.9, 1.0, 1.2)}
        assert counts[1.0] != 2 and counts[1.2] != counts[1.0], eps


def test_a4_task5_cheats_and_slips_fail():
    slips = {"one answer's sd": lambda e, k: np.sqrt(2) * k / e,
             "eps per answer kept": lambda e, k: np.sqrt(2) / (e * np.sqrt(k)),
             "the notebook's value": lambda e, k: np.sqrt(8)}
    for name, fn in slips.items():
        assert not run("A4", "Task 5a", 0, split_sd=fn).passed, name
    for name, fn in {"the notebook's 1": lambda e, ks: 1,
                     "the largest k": lambda e, ks: max(ks),
                     "the first k": lambda e, ks: ks[0]}.items():
        fails = sum(not run("A4", "Task 5b", s, best_k=fn).passed for s in range(5))
        assert fails == 5, name


def test_a4_checks_in_the_notebook_way():
    fb = dp.assignments.check("A4", "Task 2", basic_epsilon=basic_epsilon)
    assert fb.passed and repr(fb).startswith("✅ Task 2")


# ================================================================== A5


def exp_probabilities(scores, sensitivity, epsilon):
    u = np.asarray(scores, dtype=float)
    return special.softmax(epsilon * (u - u.max()) / (2 * sensitivity))


def loss_without_half(k, sensitivity, epsilon):
    u = np.zeros(k)
    u[0] = sensitivity
    u_prime = sensitivity - u
    p = special.softmax(epsilon * u / sensitivity)
    q = special.softmax(epsilon * u_prime / sensitivity)
    return float(np.max(np.abs(np.log(p) - np.log(q))))


def utility_threshold(scores, sensitivity, epsilon, t):
    scores = np.asarray(scores, float)
    return scores.max() - (2 * sensitivity / epsilon) * (np.log(scores.size) + t)


def fraction_at_or_below(scores, sensitivity, epsilon, t, n, rng):
    scores = np.asarray(scores, float)
    threshold = utility_threshold(scores, sensitivity, epsilon, t)
    picks = dp.exponential_mechanism(np.arange(scores.size), scores, sensitivity, epsilon,
                                     rng=rng, size=n)
    return float(np.mean(scores[picks] <= threshold))


def p_best_price(valuations, prices, epsilon):
    revenue = dp.exponential.posted_price_revenue(valuations, prices)
    return float(exp_probabilities(revenue, np.max(prices), epsilon)[np.argmax(revenue)])


A5_MODEL = {"Task 1": dict(exp_probabilities=exp_probabilities),
            "Task 2": dict(loss_without_half=loss_without_half),
            "Task 3a": dict(utility_threshold=utility_threshold),
            "Task 3b": dict(fraction_at_or_below=fraction_at_or_below),
            "Task 4": dict(p_best_price=p_best_price)}


def test_a5_tasks_and_points():
    tasks = assignments.tasks("A5")
    assert [t.key for t in tasks] == list(A5_MODEL)
    assert sum(t.points for t in tasks) == 10


@pytest.mark.parametrize("key", list(A5_MODEL))
def test_a5_model_passes_on_many_seeds(key):
    for seed in SEEDS:
        fb = run("A5", key, seed, **A5_MODEL[key])
        assert fb.passed and fb.message.startswith(key), (seed, fb)


@pytest.mark.parametrize("key", list(A5_MODEL))
def test_a5_stub_is_not_yet_solved(key):
    for answers in ({name: stub for name in A5_MODEL[key]}, {name: None for name in A5_MODEL[key]}):
        fb = run("A5", key, **answers)
        assert not fb.passed and not fb.solved and "not yet solved" in fb.message, fb


@pytest.mark.parametrize("key", list(A5_MODEL))
def test_a5_judge_survives_garbage(key):
    assert_garbage_safe("A5", key)


def test_without_half_formula_matches_brute_force_and_the_zoo():
    for k in (2, 3, 10, 100, 1000):
        for eps in (0.1, 1.0, 2.5):
            for d in (0.5, 1.0, 4.0):
                assert math.isclose(a5.without_half_loss(k, d, eps), loss_without_half(k, d, eps),
                                    rel_tol=1e-9)
    assert math.isclose(a5.without_half_loss(100, 1, 1.0),
                        dp.audit.ZOO["exponential_without_half"].actual_epsilon, rel_tol=1e-12)
    assert a5.without_half_loss(2, 1, 1.0) == pytest.approx(1.0)      # k = 2: exactly eps
    assert a5.without_half_loss(10**6, 1, 1.0) < 2.0                  # below 2 eps


def test_a5_task1_slips_fail():
    def naive(scores, sensitivity, epsilon):                # overflows on large scores
        with np.errstate(over="ignore", invalid="ignore"):
            w = np.exp(epsilon * np.asarray(scores, float) / (2 * sensitivity))
            return w / w.sum()

    def no_half(scores, sensitivity, epsilon):
        u = np.asarray(scores, float)
        return special.softmax(epsilon * (u - u.max()) / sensitivity)

    def quarter(scores, sensitivity, epsilon):              # private but too flat
        u = np.asarray(scores, float)
        return special.softmax(epsilon * (u - u.max()) / (4 * sensitivity))

    def no_sensitivity(scores, sensitivity, epsilon):
        u = np.asarray(scores, float)
        return special.softmax(epsilon * (u - u.max()) / 2)

    def unnormalised(scores, sensitivity, epsilon):
        u = np.asarray(scores, float)
        return np.exp(epsilon * (u - u.max()) / (2 * sensitivity))

    def uniform(scores, sensitivity, epsilon):               # private, useless
        return np.full(len(scores), 1 / len(scores))

    reasons = {}
    for name, fn in {"naive": naive, "no half": no_half, "quarter": quarter,
                     "no sensitivity": no_sensitivity, "unnormalised": unnormalised,
                     "uniform": uniform, "a list of None": lambda s, d, e: [None] * len(s),
                     "the notebook's array": lambda s, d, e: np.ones(6) / 6}.items():
        for seed in range(5):
            fb = run("A5", "Task 1", seed, exp_probabilities=fn)
            assert not fb.passed and fb.solved, (name, seed, fb)
        reasons[name] = fb.details["reason"]
    assert reasons["no half"] == "privacy" and reasons["quarter"] == "wrong"
    assert reasons["unnormalised"] == "normalise"


def test_a5_task1_calling_the_library_fails_and_is_undone():
    original = dp.mechanisms.exponential_probabilities
    fb = run("A5", "Task 1", 0, exp_probabilities=lambda s, d, e: dp.exponential_probabilities(s, d, e))
    assert not fb.passed and fb.details["reason"] == "library"
    fb = run("A5", "Task 1", 0,
             exp_probabilities=lambda s, d, e: dp.mechanisms.exponential_probabilities(s, d, e))
    assert not fb.passed and fb.details["reason"] == "library"
    assert dp.mechanisms.exponential_probabilities is original
    assert dp.exponential_probabilities is original
    assert run("A5", "Task 1", 0, **A5_MODEL["Task 1"]).passed


def _imported(name, helper, body):
    """A student function whose notebook did ``from ... import helper`` (under any name)."""
    ns = {name: helper, "np": np}
    exec(body, ns)
    return ns["f"]


@pytest.mark.parametrize("assignment, key, answers", [
    ("A4", "Task 3", {"advanced_epsilon": _imported(
        "adv", dp.accounting.advanced_composition,
        "def f(e, k, d, s):\n    return adv(e, d, k, s)")}),
    ("A5", "Task 1", {"exp_probabilities": _imported(
        "probs", dp.mechanisms.exponential_probabilities,
        "def f(u, d, e):\n    return probs(u, d, e)")}),
    ("A5", "Task 1", {"exp_probabilities": dp.exponential_probabilities}),   # the helper itself
])
def test_library_calls_are_noticed_however_imported(assignment, key, answers):
    (answer,) = answers.values()
    before = dict(getattr(answer, "__globals__", {}))
    fb = run(assignment, key, 0, **answers)
    assert not fb.passed and fb.details["reason"] == "library", fb
    after = getattr(answer, "__globals__", {})
    assert all(after[k] is v for k, v in before.items())         # bindings restored
    assert dp.accounting.advanced_composition is dp.advanced_composition
    assert dp.mechanisms.exponential_probabilities is dp.exponential_probabilities


def test_a5_task2_cheats_and_slips_fail():
    zoo = dp.audit.ZOO["exponential_without_half"].actual_epsilon
    for name, fn in {"the zoo's number": lambda k, d, e: zoo,
                     "with the half": lambda k, d, e: a5.without_half_loss(k, d, e / 2) ,
                     "numerator only": lambda k, d, e: e,
                     "2 epsilon": lambda k, d, e: 2 * e}.items():
        for seed in range(5):
            assert not run("A5", "Task 2", seed, loss_without_half=fn).passed, name


def test_a5_task3a_slips_fail():
    def log10(scores, d, e, t):
        scores = np.asarray(scores, float)
        return scores.max() - (2 * d / e) * (np.log10(scores.size) + t)
    fb = run("A5", "Task 3a", 0, utility_threshold=log10)
    assert not fb.passed and "log10" in fb.message
    assert not run("A5", "Task 3a", 0, utility_threshold=lambda s, d, e, t: 75.0).passed


def test_a5_task3b_cheats_and_slips_fail():
    def exact(scores, d, e, t, n, rng):                        # no sampling at all
        scores = np.asarray(scores, float)
        p = dp.exponential_probabilities(scores, d, e)
        return float(p[scores <= utility_threshold(scores, d, e, t)].sum())

    def log10(scores, d, e, t, n, rng):
        scores = np.asarray(scores, float)
        thr = scores.max() - (2 * d / e) * (np.log10(scores.size) + t)
        picks = dp.exponential_mechanism(np.arange(scores.size), scores, d, e, rng=rng, size=n)
        return float(np.mean(scores[picks] <= thr))

    def unit_sensitivity(scores, d, e, t, n, rng):
        return fraction_at_or_below(scores, 1.0, e, t, n, rng) if d != 1.0 else \
            fraction_at_or_below(scores, 2.0, e, t, n, rng)

    def uniform_draws(scores, d, e, t, n, rng):                # not the mechanism
        scores = np.asarray(scores, float)
        picks = rng.integers(0, scores.size, n)
        return float(np.mean(scores[picks] <= utility_threshold(scores, d, e, t)))

    cheats = {"zero": lambda *a: 0.0, "the bound": lambda s, d, e, t, n, r: np.exp(-t),
              "the bound, as a count": lambda s, d, e, t, n, r: round(np.exp(-t) * n) / n,
              "exact probability": exact, "log10": log10, "Δ = 1": unit_sensitivity,
              "uniform draws": uniform_draws, "one": lambda *a: 1.0}
    for name, fn in cheats.items():
        for seed in range(5):
            fb = run("A5", "Task 3b", seed, fraction_at_or_below=fn)
            assert not fb.passed and fb.solved, (name, seed, fb)


def test_a5_task3b_test_is_two_sided_and_exact():
    # a fraction a little too low (the count shifted by 10 standard deviations) fails too
    task = assignments._task("A5", "Task 3b")
    request, truth = task.request(np.random.default_rng(3))
    n = a5._T3B_N
    for sign in (+1, -1):
        fr = [min(max(p + sign * 10 * math.sqrt(p * (1 - p) / n), 0), 1) for p in truth["p"]]
        data = {"fractions": [round(f * n) / n for f in fr]}
        assert not task.judge(data, request, truth).passed
    data = {"fractions": [round(p * n) / n for p in truth["p"]]}
    assert task.judge(data, request, truth).passed


def test_a5_task4_cheats_and_slips_fail():
    def unit(valuations, prices, epsilon):
        revenue = dp.exponential.posted_price_revenue(valuations, prices)
        return float(exp_probabilities(revenue, 1.0, epsilon)[np.argmax(revenue)])

    def second_best(valuations, prices, epsilon):
        revenue = dp.exponential.posted_price_revenue(valuations, prices)
        p = exp_probabilities(revenue, np.max(prices), epsilon)
        return float(np.sort(p)[-2])

    valuations = dp.datasets.apple_buyers()["Valuation ($)"].to_numpy()
    prices = np.array([1.00, 1.01, 4.01, 4.02])
    notebook = p_best_price(valuations, prices, 1.0)
    for name, fn in {"Δ = 1": unit, "second best": second_best,
                     "the notebook's number": lambda v, p, e: notebook}.items():
        for seed in range(5):
            assert not run("A5", "Task 4", seed, p_best_price=fn).passed, name
    assert "Δ = 1" in run("A5", "Task 4", 0, p_best_price=unit).message


# ================================================================== A6


def epsilon_lower_bound_from_samples(samples_x, samples_y, alpha):
    def replay(data, size, rng):
        return np.asarray(data)[:size]
    return dp.audit.audit(replay, samples_x, samples_y, n=len(samples_x), alpha=alpha).epsilon_lb


def audit_verdict(samples_x, samples_y, claimed_epsilon, alpha):
    lb = epsilon_lower_bound_from_samples(samples_x, samples_y, alpha)
    return lb, lb > claimed_epsilon


def worst_neighbour(values, lower, upper):
    return list(values) + [lower if abs(lower) > abs(upper) else upper]


def clipped_sum_release(values, lower, upper, epsilon, rng):
    total = float(np.sum(np.clip(values, lower, upper)))
    return total + rng.laplace(0.0, max(abs(lower), abs(upper)) / epsilon)


def understated_release(values, lower, upper, epsilon, rng):
    total = float(np.sum(np.clip(values, lower, upper)))
    return total + rng.laplace(0.0, 1.0 / epsilon)


A6_MODEL = {"Task 1": dict(epsilon_lower_bound_from_samples=epsilon_lower_bound_from_samples),
            "Task 2": dict(audit_verdict=audit_verdict),
            "Task 3a": dict(worst_neighbour=worst_neighbour),
            "Task 3b": dict(clipped_sum_release=clipped_sum_release),
            "Task 4": dict(understated_release=understated_release)}
#: the slow tasks run on fewer seeds in the cheat tests
FEW = range(3)


def test_a6_tasks_and_points():
    tasks = assignments.tasks("A6")
    assert [t.key for t in tasks] == list(A6_MODEL)
    assert sum(t.points for t in tasks) == 10


@pytest.mark.parametrize("key", list(A6_MODEL))
def test_a6_model_passes_on_many_seeds(key):
    for seed in SEEDS:
        fb = run("A6", key, seed, **A6_MODEL[key])
        assert fb.passed and fb.message.startswith(key), (seed, fb)


@pytest.mark.parametrize("key", list(A6_MODEL))
def test_a6_stub_is_not_yet_solved(key):
    for answers in ({name: stub for name in A6_MODEL[key]}, {name: None for name in A6_MODEL[key]}):
        fb = run("A6", key, **answers)
        assert not fb.passed and not fb.solved and "not yet solved" in fb.message, fb


@pytest.mark.parametrize("key", list(A6_MODEL))
def test_a6_judge_survives_garbage(key):
    assert_garbage_safe("A6", key)


def test_a6_request_hides_the_labels():
    for key in ("Task 1", "Task 2"):
        request, truth = assignments._task("A6", key).request(np.random.default_rng(0))
        text = _transport.dumps(request)
        for kind in a6.CORRECT + a6.BROKEN:
            assert kind not in text
        assert all(set(c) == {"samples_x", "samples_y", "claimed_epsilon", "alpha"}
                   for c in request["cases"])
        kinds = {c["kind"] for c in truth["cases"]}
        assert kinds & set(a6.BROKEN)
        assert key == "Task 1" or kinds & set(a6.CORRECT)


def test_a6_pool_truth_is_right():
    """Every correct mechanism's reference bound stays below its claim and every broken
    one is refuted with the pool's sample size (so Task 2 can demand it), on every draw;
    the upper bounds U are the exact losses where finite."""
    rng = np.random.default_rng(7)
    for kind in a6.CORRECT + a6.BROKEN:
        for _ in range(3):
            x, y, claim, upper, private, _text = a6.draw_mechanism(kind, rng, a6.N_SAMPLES)
            ref = a6.reference_bound(x, y, a6.CASE_ALPHA)
            assert ref <= upper
            if private:
                assert upper <= claim * (1 + 1e-12) and ref <= claim, kind
            else:
                assert upper > claim and ref > a6.REFUTABLE * claim, (kind, ref, claim)
    assert math.isclose(a6_pool.exp_loss(100, 1.0),
                        dp.audit.ZOO["exponential_without_half"].actual_epsilon)
    assert math.isclose(a6_pool.exp_loss(100, 0.5), dp.audit.ZOO["exponential"].actual_epsilon)


def _plug_in(samples_x, samples_y, alpha):
    """The winner's curse: the best ratio of counts over many events, on all the samples."""
    x, y = np.asarray(samples_x), np.asarray(samples_y)
    if x.ndim > 1:
        x, y = x @ (2 ** np.arange(x.shape[1])), y @ (2 ** np.arange(y.shape[1]))
    best = 0.0
    for t in np.unique(np.quantile(np.concatenate([x, y]), np.linspace(0.001, 0.999, 60))):
        for a, b in ((x, y), (y, x)):
            for ev in (lambda s: s >= t, lambda s: s <= t):
                pa, pb = np.mean(ev(a)), np.mean(ev(b))
                if pa > 0:
                    best = max(best, math.inf if pb == 0 else math.log(pa / pb))
    return best


def test_a6_task1_cheats_and_slips_fail():
    cheats = {"plug-in estimate": _plug_in, "zero": lambda x, y, a: 0.0,
              "infinity": lambda x, y, a: math.inf,
              "alpha ignored (0.5)": lambda x, y, a: epsilon_lower_bound_from_samples(x, y, 0.5) * 1.3,
              "the zoo's 4": lambda x, y, a: 4.0, "negative": lambda x, y, a: -1.0,
              "a string": lambda x, y, a: "REFUTED"}
    for name, fn in cheats.items():
        fails = [not run("A6", "Task 1", s, epsilon_lower_bound_from_samples=fn).passed for s in FEW]
        assert all(fails), (name, fails)


def test_a6_infinity_from_disjoint_samples_is_not_supported():
    def inf_when_disjoint(x, y, claim, alpha):
        lb = epsilon_lower_bound_from_samples(x, y, alpha)
        xs, ys = a6._codes(x, y)
        if set(np.unique(xs)) ^ set(np.unique(ys)):           # an output seen on one side only
            lb = math.inf
        return lb, lb > claim
    seen = 0
    for s in range(8):
        _, truth = _request("A6", "Task 2", s, False)
        kinds = {c["kind"] for c in truth["cases"]}
        fb = run("A6", "Task 2", s, audit_verdict=inf_when_disjoint)
        if kinds & {"truncated_noise", "svt_no_query_noise", "discrete_laplace", "exponential"}:
            seen += 1
            assert not fb.passed and fb.details["reason"] in ("unsupported", "invalid"), (s, fb)
    assert seen >= 3


def test_a6_dp_audit_stays_within_the_envelope():
    rng = np.random.default_rng(21)
    for kind in a6.CORRECT + a6.BROKEN:
        for _ in range(4):
            x, y, *_ = a6.draw_mechanism(kind, rng, a6.N_SAMPLES)
            env = a6.data_envelope(x, y, a6.CASE_ALPHA)
            ref = a6.reference_bound(x, y, a6.CASE_ALPHA)
            assert ref <= a6.ENVELOPE_SLACK[0] * env + a6.ENVELOPE_SLACK[1], kind
            assert math.isfinite(env)


def test_a6_task1_plug_in_fails_for_validity():
    fb = run("A6", "Task 1", 0, epsilon_lower_bound_from_samples=_plug_in)
    assert fb.details["reason"] in ("invalid", "unsupported"), fb


def test_a6_task2_cheats_and_slips_fail():
    def plug_in(x, y, claim, alpha):
        lb = _plug_in(x, y, alpha)
        return lb, lb > claim

    def always(x, y, claim, alpha):
        return epsilon_lower_bound_from_samples(x, y, alpha), True

    def lenient(x, y, claim, alpha):
        lb = epsilon_lower_bound_from_samples(x, y, alpha)
        return lb, lb > 0.8 * claim

    cheats = {"plug-in": plug_in, "refute everything": always, "refute nothing":
              lambda x, y, c, a: (0.0, False), "refute near the claim": lenient,
              "refuted as a string": lambda x, y, c, a: (0.0, "no"),
              "one number": lambda x, y, c, a: 0.0}
    for name, fn in cheats.items():
        fails = [not run("A6", "Task 2", s, audit_verdict=fn).passed for s in FEW]
        assert all(fails), (name, fails)


def test_a6_task3a_slips_fail():
    slips = {"a small record": lambda v, lo, hi: list(v) + [0.5],
             "always the upper bound": lambda v, lo, hi: list(v) + [hi],
             "unchanged": lambda v, lo, hi: list(v),
             "two records": lambda v, lo, hi: list(v) + [hi, lo],
             "a changed record": lambda v, lo, hi: [hi] + list(v)[1:],
             "remove the first": lambda v, lo, hi: list(v)[1:]}
    for name, fn in slips.items():
        fails = [not run("A6", "Task 3a", s, worst_neighbour=fn).passed for s in SEEDS]
        assert all(fails), (name, fails)
    # removing a record that clips to the far bound is worst-case too
    def remove_far(values, lo, hi):
        far = lo if abs(lo) > abs(hi) else hi
        v = list(values)
        for i, x in enumerate(v):
            if (far > 0 and x >= far) or (far < 0 and x <= far):
                return v[:i] + v[i + 1:]
        return v + [far]
    assert all(run("A6", "Task 3a", s, worst_neighbour=remove_far).passed for s in SEEDS)


def _release(scale, clip=True, noise="laplace"):
    def release(values, lower, upper, epsilon, rng):
        v = np.clip(values, lower, upper) if clip else np.asarray(values, float)
        b = scale(lower, upper, epsilon)
        if noise == "gauss":
            return float(np.sum(v)) + rng.normal(0.0, math.sqrt(2) * b)
        return float(np.sum(v)) + rng.laplace(0.0, b)
    return release


def test_a6_task3b_slips_fail():
    sens = lambda lo, hi, e: max(abs(lo), abs(hi))             # noqa: E731
    slips = {"understated (Lap(1/ε))": _release(lambda lo, hi, e: 1 / e),
             "ε/2 in the scale": _release(lambda lo, hi, e: sens(lo, hi, e) / (2 * e)),
             "twice the noise": _release(lambda lo, hi, e: 2 * sens(lo, hi, e) / e),
             "no clipping": _release(lambda lo, hi, e: sens(lo, hi, e) / e, clip=False),
             "Gaussian noise, same variance": _release(lambda lo, hi, e: sens(lo, hi, e) / e,
                                                       noise="gauss"),
             "no noise": lambda v, lo, hi, e, rng: float(np.sum(np.clip(v, lo, hi))),
             "an array": lambda v, lo, hi, e, rng: np.zeros(3)}
    for name, fn in slips.items():
        fails = [not run("A6", "Task 3b", s, clipped_sum_release=fn).passed for s in FEW]
        assert all(fails), (name, fails)
    # right only when lower = 0: every draw of Task 3b has bounds on both sides of 0, the
    # nearer at least half as far as the other, so it fails on every seed
    width = _release(lambda lo, hi, e: (hi - lo) / e)
    for s in range(8):
        request, _ = _request("A6", "Task 3b", s, False)
        assert request["lower"] < 0 < request["upper"]
        assert min(-request["lower"], request["upper"]) >= max(-request["lower"],
                                                               request["upper"]) / 2
        assert not run("A6", "Task 3b", s, clipped_sum_release=width).passed


def test_a6_task4_slips_fail():
    sens = lambda lo, hi, e: max(abs(lo), abs(hi))             # noqa: E731
    slips = {"the correct mechanism": clipped_sum_release,
             "no noise": lambda v, lo, hi, e, rng: float(np.sum(np.clip(v, lo, hi))),
             "Lap(1/(2ε))": _release(lambda lo, hi, e: 1 / (2 * e)),
             "Gaussian": _release(lambda lo, hi, e: 1 / e, noise="gauss"),
             "no clipping": _release(lambda lo, hi, e: 1 / e, clip=False),
             "Lap(Δ/ε) with Δ = upper − lower": _release(lambda lo, hi, e: (hi - lo) / e)}
    for name, fn in slips.items():
        fails = [not run("A6", "Task 4", s, understated_release=fn).passed for s in FEW]
        assert all(fails), (name, fails)
    assert sens(0, 1, 1) == 1


# ================================================================== all: hostile data
def _mutations(data, path=()):
    """(path, junk) replacements of every leaf and container of data (up to depth 3)."""
    junk = [float("nan"), "x", None, -1, [], {}, [[1, 2], [3]], math.inf, True]
    if isinstance(data, dict) and len(path) < 3:
        for k, v in list(data.items())[:8]:
            yield from ((path + (k,), j) for j in junk)
            yield from _mutations(v, path + (k,))
    elif isinstance(data, list) and len(path) < 3:
        for i, v in enumerate(data[:3]):
            yield from ((path + (i,), j) for j in junk)
            yield from _mutations(v, path + (i,))


def _replace(data, path, value):
    import copy
    out = copy.deepcopy(data)
    node = out
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return out


@pytest.mark.parametrize("assignment, key", [("A4", k) for k in A4_MODEL] + [("A5", k) for k in A5_MODEL]
                         + [("A6", k) for k in A6_MODEL])
def test_judge_never_raises_on_mutated_data(assignment, key):
    model = {"A4": A4_MODEL, "A5": A5_MODEL, "A6": A6_MODEL}[assignment][key]
    task = assignments._task(assignment, key)
    request, truth = _request(assignment, key, 0, False)
    data = _transport.loads(_transport.dumps(task.collect(model, request)))
    assert task.judge(data, request, truth).passed
    for path, junk in _mutations(data):
        fb = task.judge(_replace(data, path, junk), request, truth)
        assert isinstance(fb.passed, bool) and fb.message.startswith(key), (path, junk, fb)


@pytest.mark.parametrize("assignment, key", [("A4", k) for k in A4_MODEL] + [("A5", k) for k in A5_MODEL]
                         + [("A6", k) for k in A6_MODEL])
def test_transport_is_small(assignment, key):
    import time
    model = {"A4": A4_MODEL, "A5": A5_MODEL, "A6": A6_MODEL}[assignment][key]
    task = assignments._task(assignment, key)
    t0 = time.perf_counter()
    request, truth = task.request(np.random.default_rng(99))
    request_text = _transport.dumps(request)
    data_text = _transport.dumps(task.collect(model, _transport.loads(request_text)))
    task.judge(_transport.loads(data_text), request, truth)
    seconds = time.perf_counter() - t0
    assert len(request_text) < 3e6 and len(data_text) < 1e6, (len(request_text), len(data_text))
    print(f"{assignment} {key}: {seconds:.1f} s")   # the tasks' CPU time: benchmarks/bench_tasks.py


def test_a4_averaging_tolerance_is_a_valid_tail_bound():
    """Task 1 accepts |mean - count| <= b sqrt(8 ln(2/alpha) / k) (+ 0.5 for rounding): the
    Chernoff bound P(|mean of k Lap(b)| >= t) <= 2 exp(-k t^2 / (8 b^2)), valid for
    t <= 2 sqrt(2) b, i.e. k >= 8 ln(2/alpha) / 8 = ln(2/alpha) ~ 14.5 (the check's k >= 200).
    Checked against simulation at a looser t, where the tail is measurable."""
    rng = np.random.default_rng(5)
    k, b = 200, 4.0
    means = rng.laplace(0, b, size=(50_000, k)).mean(axis=1)
    for t in (0.5, 0.8, 1.0):
        bound = 2 * math.exp(-k * t ** 2 / (8 * b ** 2))
        assert np.mean(np.abs(means) >= t) <= bound
    assert math.log(2 / 1e-6) <= 200


def test_student_values_are_read_without_raising():
    from fractions import Fraction

    from dpteach.coursework.assignments._student import g, number, real_or_inf
    for x, want in [(3, 3.0), (np.int64(7), 7.0), (np.float32(0.5), 0.5), ([2.5], 2.5),
                    (np.array([[1.5]]), 1.5), (Fraction(1, 4), 0.25)]:
        assert number(x) == want, x
    for x in [True, np.bool_(False), "3", b"3", None, [], [1, 2], [[1, 2], [3]], {}, 1j,
              float("nan"), math.inf, -math.inf, 10 ** 400, np.array(["a"]), [True]]:
        assert number(x) is None, x
    assert real_or_inf(math.inf) == math.inf
    assert real_or_inf(-math.inf) is None and real_or_inf(float("nan")) is None
    assert [g(10_000), g(True), g(float("nan")), g(-math.inf), g(1 / 3)] == \
        ["10000", "True", "nan", "-∞", "0.3333"]
