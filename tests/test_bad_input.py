"""Table-driven bad-input tests: every public function, every parameter.

Each row of the table is ``(callable, good_kwargs, param, bad_value)``: the call with
``good_kwargs`` works, and replacing ``param`` by ``bad_value`` must raise ValueError or
TypeError *before any work* (no random number drawn), with a message that names the
parameter.

To cover another module, add a ``Spec`` to ``SPECS`` below (a callable, keyword arguments
that work, and for each parameter the list of bad values -- the shared lists such as
``BAD_EPSILON`` cover the usual suspects), or append raw rows to ``EXTRA_ROWS``.
"""

import re
from dataclasses import dataclass, field

import numpy as np
import pytest

from dpteach import accounting, bounds, mechanisms

NAN, INF = float("nan"), float("inf")

# ------------------------------------------------------------ the usual bad values by kind
NOT_A_NUMBER = [True, False, np.bool_(True), "1", None, [1.0], 1j]
BAD_REAL = [NAN, INF, -INF, np.float64(NAN), np.array(NAN)] + NOT_A_NUMBER
BAD_EPSILON = BAD_REAL + [0, 0.0, -0.0, -1, -1e-300]
BAD_DELTA = BAD_REAL + [-1e-12, 1, 1.0, 1.5]                 # optional delta: [0, 1)
BAD_DELTA_REQUIRED = BAD_DELTA + [0, 0.0]                    # required delta: (0, 1)
BAD_SENSITIVITY = BAD_REAL + [-1, -1e-9]                     # >= 0, finite
BAD_SENSITIVITY_POSITIVE = BAD_SENSITIVITY + [0, 0.0]        # > 0, finite
BAD_SCALE = BAD_SENSITIVITY_POSITIVE
BAD_COUNT = [0, -1, 2.5, NAN, INF, True, "3", None, [3], 1j]  # positive integers
BAD_VALUES = [NAN, INF, -INF, [1.0, NAN], [1.0, INF], "1.0", ["1", "2"], True, [True, False],
              None, [1.0, None], [], [1 + 1j]]
BAD_SCORES = [[1.0, NAN], [1.0, INF], [1.0, -INF], [], [[1.0, 2.0]], 3.0, "abc", ["1", "2"],
              [True, False], None, [1.0, None]]
BAD_BITS = [[0, 2], [0, 1, -1], [0.5], [NAN], [0, INF], "0101", ["0", "1"], [], None, [0, None]]
BAD_BOOL_FLAG = ["yes", 1, 0, None, 1.0]
BAD_RNG = [np.random.RandomState(0), "seed", 1.5, True, object()]
BAD_SIZE = [-1, 2.5, True, "5", NAN, INF, (2, -1), (2.5,), [3, "4"], 1j]


@dataclass
class Spec:
    func: object
    good: dict
    bad: dict = field(default_factory=dict)
    name: str = ""

    def rows(self):
        label = self.name or getattr(self.func, "__name__", repr(self.func))
        for param, values in self.bad.items():
            for i, v in enumerate(values):
                yield pytest.param(self.func, self.good, param, v,
                                   id=f"{label}-{param}-{i}:{_short(v)}")


def _short(v):
    text = repr(v)
    return text if len(text) <= 20 else text[:17] + "..."


# ------------------------------------------------------- helpers for methods and classes
def accountant_spend(epsilon, delta=0.0, label=None):
    return accounting.PrivacyAccountant(5.0, 0.5).spend(epsilon, delta, label)


def accountant_can_spend(epsilon, delta=0.0):
    return accounting.PrivacyAccountant(5.0, 0.5).can_spend(epsilon, delta)


def rng_kw():
    return np.random.default_rng(0)


# ------------------------------------------------------------------------------ the table
SPECS = [
    # mechanisms
    Spec(mechanisms.laplace_scale, dict(sensitivity=1.0, epsilon=0.5),
         dict(sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON)),
    Spec(mechanisms.laplace_mechanism, dict(value=[1.0, 2.0], sensitivity=1.0, epsilon=0.5, size=3),
         dict(value=BAD_VALUES, sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON, rng=BAD_RNG,
              size=BAD_SIZE)),
    Spec(mechanisms.clamped_sum, dict(values=[1.0, 7.0, 30.0], lower=0.0, upper=10.0,
                                      epsilon=0.5, size=3),
         dict(values=[v for v in BAD_VALUES if not (isinstance(v, list) and v == [])],
              lower=BAD_REAL + [10.0, 11.0], upper=BAD_REAL + [0.0, -1.0], epsilon=BAD_EPSILON,
              rng=BAD_RNG, size=BAD_SIZE)),
    Spec(mechanisms.gaussian_sigma, dict(l2_sensitivity=1.0, epsilon=0.5, delta=1e-5),
         dict(l2_sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON, delta=BAD_DELTA_REQUIRED,
              analytic=BAD_BOOL_FLAG)),
    Spec(mechanisms.gaussian_sigma, dict(l2_sensitivity=1.0, epsilon=2.0, delta=1e-5, analytic=True),
         dict(l2_sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON, delta=BAD_DELTA_REQUIRED),
         name="gaussian_sigma_analytic"),
    Spec(mechanisms.gaussian_delta, dict(sigma=1.0, l2_sensitivity=1.0, epsilon=0.5),
         dict(sigma=BAD_SCALE, l2_sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON)),
    Spec(mechanisms.gaussian_mechanism,
         dict(value=[1.0, 2.0], l2_sensitivity=1.0, epsilon=0.5, delta=1e-5, size=2),
         dict(value=BAD_VALUES, l2_sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON,
              delta=BAD_DELTA_REQUIRED, analytic=BAD_BOOL_FLAG, rng=BAD_RNG, size=BAD_SIZE)),
    Spec(mechanisms.exponential_probabilities, dict(scores=[1.0, 2.0], sensitivity=1.0, epsilon=0.5),
         dict(scores=BAD_SCORES, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON)),
    Spec(mechanisms.exponential_mechanism,
         dict(candidates=["a", "b"], scores=[1.0, 2.0], sensitivity=1.0, epsilon=0.5, size=4),
         dict(candidates=[[["a", "b"]], "ab", ["a"], ["a", "b", "c"], None],
              scores=BAD_SCORES, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              rng=BAD_RNG, size=BAD_SIZE)),
    Spec(mechanisms.report_noisy_max, dict(scores=[1.0, 2.0], sensitivity=1.0, epsilon=0.5),
         dict(scores=BAD_SCORES, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              monotonic=BAD_BOOL_FLAG, rng=BAD_RNG)),
    Spec(mechanisms.randomized_response, dict(bits=[0, 1, 1], epsilon=1.0),
         dict(bits=BAD_BITS, epsilon=BAD_EPSILON, rng=BAD_RNG)),
    Spec(mechanisms.randomized_response_keep_probability, dict(epsilon=1.0),
         dict(epsilon=BAD_EPSILON)),
    Spec(mechanisms.randomized_response_estimate, dict(reports=[0, 1, 1], epsilon=1.0),
         dict(reports=BAD_BITS, epsilon=BAD_EPSILON)),
    Spec(mechanisms.output_distribution, dict(value=0.0, scale=1.0),
         dict(value=BAD_REAL + [[0.0, 1.0]], scale=BAD_SCALE,
              noise=["cauchy", "Laplace", None, 1, "", np.array(["laplace", "gaussian"])])),
    Spec(mechanisms.privacy_loss, dict(r=[0.0, 1.0], value1=0.0, value2=1.0, scale=1.0),
         dict(r=BAD_VALUES, value1=BAD_REAL, value2=BAD_REAL, scale=BAD_SCALE,
              noise=["cauchy", None, 1, np.array(["laplace", "gaussian"])])),
    # accounting
    Spec(accounting.basic_composition, dict(epsilons=[0.1, 0.2], deltas=[0.0, 1e-6]),
         dict(epsilons=[[0.1, NAN], [0.1, INF], [0.1, 0.0], [0.1, -0.2], [0.1, True], [0.1, "0.2"],
                        [0.1, None], [], "0.1", NAN, 0],
              deltas=[[0.0, NAN], [0.0, 1.0], [0.0, -1e-9], [0.0, True], [0.0, "0"], [0.0, None],
                      [0.0], [0.0, 0.0, 0.0], "00"])),
    Spec(accounting.advanced_composition, dict(epsilon=0.1, delta=1e-7, k=10, delta_slack=1e-6),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA, k=BAD_COUNT, delta_slack=BAD_DELTA_REQUIRED)),
    Spec(accounting.PrivacyAccountant, dict(epsilon=1.0, delta=1e-5),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA)),
    Spec(accountant_spend, dict(epsilon=0.1, delta=1e-6, label="q"),
         dict(epsilon=BAD_REAL + [-0.1, -1e-300], delta=BAD_DELTA), name="PrivacyAccountant.spend"),
    Spec(accountant_can_spend, dict(epsilon=0.1, delta=1e-6),
         dict(epsilon=BAD_REAL + [-0.1], delta=BAD_DELTA), name="PrivacyAccountant.can_spend"),
    # bounds
    Spec(bounds.laplace_tail, dict(scale=1.0, t=[0.0, 1.0]),
         dict(scale=BAD_SCALE, t=BAD_VALUES + [-1.0, [1.0, -0.5]])),
    Spec(bounds.laplace_accuracy, dict(scale=1.0, beta=0.05),
         dict(scale=BAD_SCALE, beta=BAD_REAL + [0, 1, -0.1, 1.5])),
    Spec(bounds.exponential_utility_threshold,
         dict(opt=10.0, sensitivity=1.0, epsilon=1.0, n_candidates=4, t=3.0, n_optimal=1),
         dict(opt=BAD_REAL, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              n_candidates=BAD_COUNT, t=BAD_REAL + [-1.0, -1e-12], n_optimal=BAD_COUNT + [5])),
]

# raw rows (callable, good_kwargs, param, bad_value) for cases that fit no Spec
EXTRA_ROWS = [
    # a list-valued size must hold non-negative integers too
    pytest.param(mechanisms.laplace_mechanism, dict(value=0.0, sensitivity=1.0, epsilon=1.0),
                 "size", [2, -3], id="laplace_mechanism-size-list"),
]

ROWS = [row for spec in SPECS for row in spec.rows()] + EXTRA_ROWS
PUBLIC = {spec.func for spec in SPECS}


def _mentions(message, param):
    return re.search(rf"(?<![\w]){re.escape(param)}(?![\w])", message) is not None


# ---------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name or s.func.__name__)
def test_good_arguments_work(spec):
    """The baseline of every row is valid, so each bad-input row tests exactly one parameter."""
    kwargs = dict(spec.good)
    if "rng" in spec.bad:
        kwargs["rng"] = rng_kw()
    spec.func(**kwargs)


@pytest.mark.parametrize("func,good,param,bad", ROWS)
def test_bad_input_is_refused_naming_the_parameter(func, good, param, bad):
    kwargs = dict(good)
    uses_rng = "rng" in {k for s in SPECS if s.func is func for k in s.bad}
    rng = rng_kw()
    if uses_rng and param != "rng":
        kwargs["rng"] = rng
    before = rng.bit_generator.state
    kwargs[param] = bad
    with pytest.raises((ValueError, TypeError)) as info:
        func(**kwargs)
    message = str(info.value)
    if param == "candidates" and "entries" in message:
        assert _mentions(message, "candidates")          # a length mismatch names both
    else:
        assert _mentions(message, param), f"message does not name {param!r}: {message}"
    # refused before any work: not one random number drawn
    assert rng.bit_generator.state == before


# the package core: every public name of mechanisms and bounds, and the accounting
# contract (functions appended to accounting.py later bring their own rows)
CORE = {
    mechanisms: set(mechanisms.__all__),
    bounds: set(bounds.__all__),
    accounting: {"basic_composition", "advanced_composition", "PrivacyAccountant",
                 "BudgetExceededError"},
}


def test_every_public_function_of_the_core_is_in_the_table():
    listed = {f.__name__ for f in PUBLIC} | {"BudgetExceededError"}   # an exception class
    for module, names in CORE.items():
        assert names <= set(module.__all__)
        for name in sorted(names):
            assert name in listed, f"{module.__name__}.{name} has no bad-input rows"


# ------------------------------------------------- a NaN epsilon never releases the answer
NAN_EPSILONS = [float("nan"), np.float64("nan"), np.float32("nan"), np.array(np.nan)]
RELEASES = {
    # sensitivity 0 would otherwise release the true answer exactly
    "laplace_mechanism": lambda e, rng: mechanisms.laplace_mechanism(42.0, 0.0, e, rng=rng),
    "laplace_mechanism vector": lambda e, rng: mechanisms.laplace_mechanism([42.0, 7.0], 1.0, e,
                                                                            rng=rng, size=3),
    "clamped_sum": lambda e, rng: mechanisms.clamped_sum([1.0, 2.0], 0.0, 5.0, e, rng=rng),
    "gaussian_mechanism": lambda e, rng: mechanisms.gaussian_mechanism(42.0, 0.0, e, 1e-5, rng=rng),
    "gaussian_mechanism analytic": lambda e, rng: mechanisms.gaussian_mechanism(
        42.0, 1.0, e, 1e-5, analytic=True, rng=rng),
    "exponential_mechanism": lambda e, rng: mechanisms.exponential_mechanism(
        ["secret", "other"], [1e9, 0.0], 1.0, e, rng=rng),
    "report_noisy_max": lambda e, rng: mechanisms.report_noisy_max([1e9, 0.0], 1.0, e, rng=rng),
    "randomized_response": lambda e, rng: mechanisms.randomized_response([1, 0, 1], e, rng=rng),
    "PrivacyAccountant": lambda e, rng: accounting.PrivacyAccountant(e),
    "PrivacyAccountant.spend": lambda e, rng: accounting.PrivacyAccountant(1.0).spend(e),
}


@pytest.mark.parametrize("nan", NAN_EPSILONS, ids=repr)
@pytest.mark.parametrize("name", sorted(RELEASES))
def test_a_nan_epsilon_never_releases_the_true_answer(name, nan):
    rng = rng_kw()
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match="epsilon must be a number, got NaN"):
        RELEASES[name](nan, rng)
    assert rng.bit_generator.state == before


def test_nan_epsilon_does_not_slip_through_comparisons():
    # NaN compares False with everything, so a check written as `if epsilon <= 0: raise`
    # would let it through; make sure the accountant does not count it as a free spend
    acc = accounting.PrivacyAccountant(1.0)
    with pytest.raises(ValueError):
        acc.spend(float("nan"))
    with pytest.raises(ValueError):
        acc.can_spend(float("nan"))
    assert acc.history == [] and acc.spent == (0.0, 0.0)
