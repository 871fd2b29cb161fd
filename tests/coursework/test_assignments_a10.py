"""A10 (local sensitivity and synthetic data): model solutions pass on many seeds, stubs
are unsolved, calls of the kit's answers and the classic slips fail on every draw, judges
survive garbage, data survive JSON. Task 2 accepts every PTR of its graded family (other
thresholds, other splits) and refuses the ones that are not (epsilon, delta)-DP; a hint
names a slip only when the answer fits that slip."""

import functools
import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach.coursework import assignments
from _tasks import run_task, tasks_of
from dpteach.coursework.assignments import _a10_ptr as ptr
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
    assert list(tasks) == ["Task 1a", "Task 1b", "Task 1c", "Task 1d", "Task 2", "Task 3a",
                           "Task 3b"]
    assert sum(t.points for t in tasks.values()) == 15
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
        padded = np.concatenate(([lower], x, [upper]))
        return math.exp(dp.beyond_global._median_log_smooth_sensitivity(padded, (x.size + 1) // 2, beta))
    assert "yourself" in run("Task 1b", 0, smooth_sensitivity=via_private).message
    assert dp.local_sensitivity_median is dp.beyond_global.local_sensitivity_median


# ------------------------------------------------------------------ Task 1c, 1d: smooth median
def beta_for(epsilon, delta):
    return epsilon / (2 * math.log(2 / delta))


BETA_SLIPS = {
    "ln_1_over_delta": lambda e, d: e / (2 * math.log(1 / d)),
    "no_factor_2": lambda e, d: e / math.log(2 / d),         # twice too large
    "log10": lambda e, d: e / (2 * math.log10(2 / d)),
}


@pytest.mark.parametrize("seed", SEEDS)
def test_model_beta_passes(seed):
    fb = run("Task 1c", seed, beta_for=beta_for)
    assert fb.passed, fb.message


@pytest.mark.parametrize("slip", list(BETA_SLIPS))
def test_beta_slips_fail_and_are_named(slip):
    for seed in SEEDS:
        fb = run("Task 1c", seed, beta_for=BETA_SLIPS[slip])
        assert not fb.passed and fb.details["reason"] == "wrong", fb.message
    assert "factor 2" in run("Task 1c", 0, beta_for=BETA_SLIPS["no_factor_2"]).message
    # a wrong beta that is no known slip is told the answer and the ratio, no slip
    fb = run("Task 1c", 0, beta_for=lambda e, d: 1.3 * beta_for(e, d))
    assert "1.3 times" in fb.message and "factor 2" not in fb.message


def test_the_kits_beta_is_refused():
    fb = run("Task 1c", 0, beta_for=dp.smooth_beta)
    assert fb.details["reason"] == "library"


def _smooth_median(values, lower, upper, epsilon, delta, rng, *, beta=beta_for, factor=2.0,
                   clamp=True, local=False):
    b = beta(epsilon, delta)
    s = (local_sensitivity(values, lower, upper, 0) if local else
         _fast_smooth(tuple(np.asarray(values, float)), lower, upper, b))
    x = np.sort(np.clip(values, lower, upper) if clamp else np.asarray(values, float))
    return float(x[len(x) // 2] + rng.laplace(0.0, factor * s / epsilon))


@functools.lru_cache(maxsize=None)
def _fast_smooth(values, lower, upper, beta):
    return smooth_sensitivity(list(values), lower, upper, beta)


def smooth_median(values, lower, upper, epsilon, delta, rng):
    return _smooth_median(values, lower, upper, epsilon, delta, rng)


SMOOTH_MEDIAN_SLIPS = {
    "beta_twice_too_large": dict(beta=lambda e, d: 2 * beta_for(e, d)),
    "scale_1_over_eps": dict(factor=1.0),
    "no_clamping": dict(clamp=False),
    "local_sensitivity": dict(local=True),
    "no_noise": dict(factor=1e-12),
}


@pytest.mark.parametrize("seed", range(8))
def test_model_smooth_median_passes(seed):
    fb = run("Task 1d", seed, smooth_median=smooth_median)
    assert fb.passed, fb.message


@pytest.mark.parametrize("slip", list(SMOOTH_MEDIAN_SLIPS))
def test_smooth_median_slips_fail_on_every_draw(slip):
    def slipped(values, lower, upper, epsilon, delta, rng):
        return _smooth_median(values, lower, upper, epsilon, delta, rng,
                              **SMOOTH_MEDIAN_SLIPS[slip])
    for seed in PTR_SEEDS:
        fb = run("Task 1d", seed, smooth_median=slipped)
        assert not fb.passed and fb.details["reason"] == "release", (seed, fb.message)


def test_smooth_median_hints_name_only_a_fitting_slip():
    def doubled(values, lower, upper, epsilon, delta, rng):
        return _smooth_median(values, lower, upper, epsilon, delta, rng,
                              beta=lambda e, d: 2 * beta_for(e, d))

    def unclamped(values, lower, upper, epsilon, delta, rng):
        return _smooth_median(values, lower, upper, epsilon, delta, rng, clamp=False)

    def three(values, lower, upper, epsilon, delta, rng):
        return _smooth_median(values, lower, upper, epsilon, delta, rng, factor=3.0)
    assert "twice too large" in run("Task 1d", 0, smooth_median=doubled).message
    assert "clamp" in run("Task 1d", 0, smooth_median=unclamped).message
    fb = run("Task 1d", 0, smooth_median=three)        # no known slip: what was measured
    assert not fb.passed and "Hint:" in fb.message and "mean absolute deviation" in fb.message


def test_smooth_median_hidden_data_need_clamping():
    for seed in range(20):
        req, truth = _tasks()["Task 1d"].request(np.random.default_rng(seed))
        beyond = [c for c in req["cases"]
                  if not c["lower"] <= float(np.median(c["values"])) <= c["upper"]]
        assert beyond and all(any(not c["lower"] <= v <= c["upper"] for v in c["values"])
                              for c in req["cases"])
        for c, fact in zip(req["cases"], truth["cases"]):
            kit = dp.smooth_sensitivity_median(c["values"], c["lower"], c["upper"],
                                               dp.smooth_beta(c["epsilon"], c["delta"]))
            assert fact["scale"] == pytest.approx(2 * kit / c["epsilon"], rel=1e-12)


def test_the_kits_smooth_median_is_refused():
    def via_kit(values, lower, upper, epsilon, delta, rng):
        return float(dp.smooth_median(values, lower, upper, epsilon, delta, rng=rng))
    assert run("Task 1d", 0, smooth_median=via_kit).details["reason"] == "library"


# ------------------------------------------------------------------ Task 2: PTR
@functools.lru_cache(maxsize=None)
def _distance(values, lower, upper, bound):
    return dp.distance_to_instability(list(values), lower, upper, bound)


def _ptr(values, lower, upper, epsilon, delta, bound, rng, *, split=0.5, exact_delta=False,
         test_noise=None, threshold=None, release_scale=None, d_shift=0, reverse=False,
         test=True, clamp=True):
    """PTR with test budget split * epsilon (threshold ln(1/delta)/epsilon_1, or
    ln(1/(2 delta))/epsilon_1 with exact_delta) and the rest for the release, or a slip."""
    d = _distance(tuple(np.asarray(values, float)), lower, upper, bound) + d_shift
    e1 = split * epsilon
    noise = rng.laplace(0.0, 1 / e1 if test_noise is None else test_noise(epsilon))
    c = math.log(1 / (2 * delta)) if exact_delta else math.log(1 / delta)
    t = c / e1 if threshold is None else threshold(epsilon, delta)
    passed = d + noise > t
    if test and passed == reverse:
        return None
    x = np.sort(np.clip(values, lower, upper) if clamp else np.asarray(values, float))
    scale = (bound / (epsilon - e1) if release_scale is None else
             release_scale(bound, epsilon, upper - lower))
    return float(x[len(x) // 2] + rng.laplace(0.0, scale))


def my_ptr_median(values, lower, upper, epsilon, delta, proposed_bound, rng):
    return _ptr(values, lower, upper, epsilon, delta, proposed_bound, rng)


#: correct PTRs of the graded family: each must pass on every seed
PTR_MEMBERS = {
    "kit": {},
    "exact_delta_threshold": dict(exact_delta=True),          # ln(1/(2 delta)) / (epsilon/2)
    "quarter_test_three_quarters_release": dict(split=0.25),
    "quarter_split_exact_delta": dict(split=0.25, exact_delta=True),
    "three quarters for the test": dict(split=0.75),
    "two thirds for the test": dict(split=2 / 3, exact_delta=True),
}

#: PTRs that are not (epsilon, delta)-DP, or not of the asked form: each must fail
PTR_SLIPS = {
    "no_test_noise": dict(test_noise=lambda e: 1e-300),
    "threshold_ln_over_eps": dict(threshold=lambda e, d: math.log(1 / d) / e),
    "threshold_ln": dict(threshold=lambda e, d: math.log(1 / d)),
    "test_noise_full_eps": dict(test_noise=lambda e: 1 / e),
    "quarter_split_half_threshold": dict(split=0.25,
                                         threshold=lambda e, d: math.log(1 / d) / (e / 2)),
    "release_noise_b_over_eps": dict(release_scale=lambda b, e, r: b / e),
    "release_noise_global": dict(release_scale=lambda b, e, r: 2 * r / e),
    "release_noise_4b": dict(release_scale=lambda b, e, r: 4 * b / e),
    "reversed_test": dict(reverse=True),
    "no_test": dict(test=False),
    "no_clamping": dict(clamp=False),
}


def _as_answer(kw):
    def answer(values, lower, upper, epsilon, delta, proposed_bound, rng):
        return _ptr(values, lower, upper, epsilon, delta, proposed_bound, rng, **kw)
    return answer


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("member", list(PTR_MEMBERS))
def test_every_ptr_of_the_graded_family_passes(member, seed):
    fb = run("Task 2", seed, my_ptr_median=_as_answer(PTR_MEMBERS[member]))
    assert fb.passed, fb.message


def test_model_ptr_with_the_kits_distance_passes():
    def honest(values, lower, upper, epsilon, delta, proposed_bound, rng):
        d = dp.distance_to_instability(values, lower, upper, proposed_bound)
        if d + rng.laplace(0, 2 / epsilon) <= math.log(1 / delta) / (epsilon / 2):
            return None
        return float(np.median(np.clip(values, lower, upper))
                     + rng.laplace(0, 2 * proposed_bound / epsilon))
    assert run("Task 2", 3, my_ptr_median=honest).passed


def test_a_distance_one_too_large_is_a_member_at_these_epsilons():
    """d + 1 against ln(1/delta)/epsilon_1 is the threshold (ln(1/delta) - epsilon_1)/epsilon_1
    on the true d, inside the family while epsilon_1 <= ln 2: the hidden epsilon is at
    most 1.35, so with the kit's split it is a correct PTR, and passes."""
    for seed in PTR_SEEDS:
        req, _ = _tasks()["Task 2"].request(np.random.default_rng(seed))
        assert req["epsilon"] / 2 <= math.log(2)
        fb = run("Task 2", seed, my_ptr_median=_as_answer(dict(d_shift=1)))
        assert fb.passed, fb.message


@pytest.mark.parametrize("slip", list(PTR_SLIPS))
def test_ptr_slips_fail_on_every_draw(slip):
    for seed in PTR_SEEDS:
        fb = run("Task 2", seed, my_ptr_median=_as_answer(PTR_SLIPS[slip]))
        assert not fb.passed and fb.solved, (seed, fb.message)
        assert fb.details["reason"] in ("rate", "release"), fb.message


def test_ptr_messages_name_a_slip_only_when_it_fits():
    named = {"no_test_noise": "without noise", "release_noise_b_over_eps": "Lap(b/ε)",
             "no_clamping": "clamp", "test_noise_full_eps": "Lap(1/ε)",
             "reversed_test": "above the threshold"}
    for slip, words in named.items():
        fb = run("Task 2", 1, my_ptr_median=_as_answer(PTR_SLIPS[slip]))
        assert words in fb.message, (slip, fb.message)
    # a wrong PTR that is no known slip: the message gives what was measured, no slip
    fb = run("Task 2", 1, my_ptr_median=_as_answer(dict(
        release_scale=lambda b, e, r: 3 * b / e)))
    assert not fb.passed and "Hint:" in fb.message and "fit this slip" not in fb.message
    assert "answered (did not return None)" in fb.message and "/800" in fb.message


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


def test_ptr_hidden_draws_are_at_their_distances_and_need_clamping():
    for seed in range(30):
        req, truth = _tasks()["Task 2"].request(np.random.default_rng(seed))
        lo, hi, b = req["lower"], req["upper"], req["proposed_bound"]
        ds = []
        for c, fact in zip(req["cases"], truth["cases"]):
            assert dp.distance_to_instability(c["values"], lo, hi, b) == fact["d"]
            assert any(not lo <= v <= hi for v in c["values"])
            ds.append(fact["d"])
        assert ds[0] == 0 and ds == sorted(ds) and len(set(ds)) == len(ds)
        beyond = req["cases"][4]["values"]
        assert not lo <= float(np.median(beyond)) <= hi       # the clamped median is an end
        # the kit's PTR answers the three near the threshold 10-90% of the time
        for fact in truth["cases"][1:4]:
            p = stats.laplace.sf(ptr.ptr_threshold(req["epsilon"], req["delta"]) - fact["d"],
                                 scale=2 / req["epsilon"])
            assert 0.1 <= p <= 0.9
        # every member of the family answers the far one almost always
        far = truth["cases"][-1]["d"]
        assert ptr.T2_SPLIT[0] * req["epsilon"] * far - math.log(1 / req["delta"]) >= 4
        # every known slip's expected data lie outside the family
        for rate, scale in ptr.ptr_slips(req["epsilon"], req["delta"], b, lo, hi).values():
            assert ptr._slip_is_out(rate, scale, ds, req["epsilon"], req["delta"], b)


def test_the_family_fit_accepts_each_members_expected_data():
    """With the data a member produces on average, the family fits for every split and
    threshold of the family (the judge's bands contain the member)."""
    eps, delta, b = 1.2, 1e-4, 2.0
    dists = [0, 14, 16, 18, 25, 45]
    calls = [n for _, n in ptr._T2_KINDS]
    for split in (0.25, 0.4, 0.5, 0.75):
        for c in (math.log(1 / (2 * delta)), math.log(1 / delta)):
            e1 = split * eps
            ps = [stats.laplace.cdf(e1 * d - c) for d in dists]
            rates = [(d, int(round(n * p)), n) for d, p, n in zip(dists, ps, calls)]
            count = sum(n * p for n, p in zip(calls, ps))
            fit = ptr.ptr_family_fit(rates, ("expected", count, b / (eps - e1)), eps, delta, b,
                                     1e-7)
            assert fit["fits"], (split, c)


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
    fb = run("Task 3a", seed, mw_update=mw_update)
    assert fb.passed, fb.message


@pytest.mark.parametrize("slip", list(MW_SLIPS))
def test_update_slips_fail_on_every_draw(slip):
    def slipped(synthetic, query, measurement):
        with np.errstate(over="ignore", invalid="ignore"):
            return _mw(synthetic, query, measurement, **MW_SLIPS[slip])
    for seed in SEEDS:
        fb = run("Task 3a", seed, mw_update=slipped)
        assert not fb.passed and fb.details["reason"] in ("wrong", "type"), (seed, fb.message)


def test_update_messages_name_the_slip():
    def sign(s, q, m):
        return _mw(s, q, m, sign=-1)
    def half(s, q, m):
        return _mw(s, q, m, half=1.0)
    def raw(s, q, m):
        return _mw(s, q, m, total=None)
    assert "sign" in run("Task 3a", 0, mw_update=sign).message
    assert "1/2" in run("Task 3a", 0, mw_update=half).message
    assert "renormalise" in run("Task 3a", 0, mw_update=raw).message


def test_the_kits_update_is_refused():
    def via_kit(synthetic, query, measurement):
        return dp.synthetic.multiplicative_weights_update(synthetic, query, measurement)
    ns = {"step": dp.synthetic.multiplicative_weights_update}
    exec("def by_name(s, q, m):\n    return step(s, q, m)\n", ns)
    for fn in (via_kit, ns["by_name"], dp.synthetic.multiplicative_weights_update):
        fb = run("Task 3a", 0, mw_update=fn)
        assert not fb.passed and fb.details["reason"] == "library", fb.message
    assert ns["step"] is dp.synthetic.multiplicative_weights_update


# ------------------------------------------------------------------ Task 3b: one MWEM round
def _round(histogram, synthetic, queries, epsilon, T, rng, *, factor=1.0, mode="exp",
           measure=None):
    x, a, q = (np.asarray(v, float) for v in (histogram, synthetic, queries))
    score = np.abs(q @ a - q @ x)
    if mode == "uniform":
        i = int(rng.integers(len(score)))
    elif mode == "worst":
        i = int(np.argmax(score))
    elif mode == "gumbel":                      # the exponential mechanism by Gumbel-max
        i = int(np.argmax(epsilon / (2 * T) * score / 2 + rng.gumbel(size=len(score))))
    else:
        logits = factor * epsilon / (2 * T) * score / 2
        p = np.exp(logits - logits.max())
        i = int(rng.choice(len(p), p=p / p.sum()))
    scale = 2 * T / epsilon if measure is None else measure(T, epsilon)
    return i, float(q[i] @ x + rng.laplace(0.0, scale))


def mwem_round(histogram, synthetic, queries, epsilon, iterations, rng):
    return _round(histogram, synthetic, queries, epsilon, iterations, rng)


ROUND_SLIPS = {
    "selection_eps_over_T": dict(factor=2.0),            # a half missing: twice the exponent
    "selection_no_halves": dict(factor=4.0),
    "selection_extra_half": dict(factor=0.5),
    "selection_uniform": dict(mode="uniform"),
    "selection_worst_query": dict(mode="worst"),
    "measure_T_over_eps": dict(measure=lambda T, e: T / e),
    "measure_1_over_eps": dict(measure=lambda T, e: 1 / e),
    "measure_2_over_eps": dict(measure=lambda T, e: 2 / e),
    "measure_4T_over_eps": dict(measure=lambda T, e: 4 * T / e),
}


@pytest.mark.parametrize("seed", SEEDS)
def test_model_round_passes(seed):
    fb = run("Task 3b", seed, mwem_round=mwem_round)
    assert fb.passed, fb.message
    def gumbel(h, a, q, e, T, rng):
        return _round(h, a, q, e, T, rng, mode="gumbel")
    assert run("Task 3b", seed, mwem_round=gumbel).passed


@pytest.mark.parametrize("slip", list(ROUND_SLIPS))
def test_round_slips_fail_on_every_draw(slip):
    def slipped(h, a, q, e, T, rng):
        return _round(h, a, q, e, T, rng, **ROUND_SLIPS[slip])
    want = "selection" if slip.startswith("selection") else "measurement"
    for seed in SEEDS:
        fb = run("Task 3b", seed, mwem_round=slipped)
        assert not fb.passed and fb.details["reason"] == want, (seed, fb.message)


def test_round_hints_name_only_a_fitting_slip():
    def uniform(h, a, q, e, T, rng):
        return _round(h, a, q, e, T, rng, mode="uniform")

    def half_measure(h, a, q, e, T, rng):
        return _round(h, a, q, e, T, rng, measure=lambda T, e: T / e)

    def odd(h, a, q, e, T, rng):
        return _round(h, a, q, e, T, rng, measure=lambda T, e: 1.3 * 2 * T / e)
    assert "uniformly" in run("Task 3b", 0, mwem_round=uniform).message
    assert "not Lap(T/ε)" in run("Task 3b", 0, mwem_round=half_measure).message
    fb = run("Task 3b", 0, mwem_round=odd)
    assert not fb.passed and "Hint:" in fb.message and "mean absolute value" in fb.message


def test_the_kits_mwem_is_refused():
    def via_kit(h, a, q, e, T, rng):
        p = dp.synthetic.mwem_selection_probabilities(h, a, q, e / T)
        i = int(rng.choice(len(p), p=p))
        return i, float(q[i] @ h + rng.laplace(0, 2 * T / e))
    assert run("Task 3b", 0, mwem_round=via_kit).details["reason"] == "library"


# ------------------------------------------------------------------ stubs, garbage
NAMES = {"Task 1a": "local_sensitivity", "Task 1b": "smooth_sensitivity",
         "Task 1c": "beta_for", "Task 1d": "smooth_median", "Task 2": "my_ptr_median",
         "Task 3a": "mw_update", "Task 3b": "mwem_round"}


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
                 {"updated": ["x"] * 5}, {"called_library": True}, {"error": "E"},
                 {"releases": [[1.0] * 500] * 3}, {"releases": [[None] * n for n in
                                                                 (400, 800, 800, 800, 1000, 300)]},
                 {"rounds": [[99, 1.0]] * 2000}, {"rounds": [[0.5, 1.0]] * 2000},
                 {"rounds": [["0", "x"]] * 2000}, {"rounds": [[0, 1.0]] * 3}):
        fb = task.judge(data, req, truth)
        assert not fb.passed and fb.message.startswith(key), (data, fb.message)
    for t in ({}, None, {"cases": "x"}, {"values": []}):
        assert not task.judge({}, req, t).passed


# ------------------------------------------------------------------ issue 31: A10's texts
def test_task_1b_hint_says_the_whole_range_comes_at_k_equal_n():
    """A(k) = upper - lower from k = n on (not n + 1): the hint for a maximum that stops
    before k = n says so, and the windows agree (a dataset all at one value)."""
    def short(values, lower, upper, beta):
        return _smooth(values, lower, upper, beta, **SMOOTH_SLIPS["k_below_n"])
    messages = [run("Task 1b", seed, smooth_sensitivity=short).message for seed in range(3)]
    assert any("from k = n on" in m for m in messages), messages
    assert not any("k = n + 1 on" in m for m in messages)
    a = a10.window_maxima(np.full(7, 3.0), 0.0, 10.0, 9)
    assert list(a[7:]) == [10.0, 10.0, 10.0] and a[6] == 7.0     # one end at k = 3 ... 6, both at k = n = 7


def test_a10_texts_cite_ptr_as_section_7_2_and_describe_mwem_rightly():
    import json
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
    for folder in ("solutions", "exercises"):
        cells = json.loads((root / folder / "A10_local_sensitivity_and_synthetic_data.ipynb")
                           .read_text(encoding="utf-8"))["cells"]
        prose = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        assert "Section 7.3" not in prose and "Section 7.2" in prose, folder
        assert "Lemma 2.6" not in prose and "Example 2" not in prose
    assert "leaves every relation it never measured" not in prose.replace("\n", " ")
    solution = json.loads((root / "solutions" / "A10_local_sensitivity_and_synthetic_data.ipynb")
                          .read_text(encoding="utf-8"))["cells"]
    model = " ".join("".join(c["source"]) for c in solution if c["cell_type"] == "markdown")
    model = " ".join(model.split())
    assert "leaves every relation it never measured" not in model
    assert "rescales every cell" in model
    assert "Sec. 7.3" not in (a10.__doc__ or "") and "Sec. 7.2" in a10.__doc__
    assert "Sec. 7.2" in ptr.ptr_threshold.__doc__
