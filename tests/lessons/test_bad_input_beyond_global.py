"""Bad and extreme input for every public function of notebook 19's module
(dpteach.beyond_global), from the issue-31 fuzz: NaN, infinities, zero, negatives,
subnormals (1e-320), 1e308, 10**400, booleans, strings, None, empty and ragged arrays
and huge sizes.

Three tables, in tests/test_bad_input.py's style (tests/_bad_values.py's lists and its
``check_row``):

* BAD: every value is refused with ValueError or TypeError naming the parameter, before
  any random number is drawn;
* EXTREME: a well-formed but extreme value is either refused by name, before any draw, or
  answered with finite numbers (an infinite distance only where documented) within a few
  seconds;
* the targeted rows below pin the issue's cases (tiny delta, a range near the float
  limit, a million distances, 200,001 records).
"""

import math
import os
import signal
import time

import numpy as np
import pytest

from _bad_values import (BAD_EPSILON, BAD_REAL, BAD_RNG, EXTREME, EXTREME_SIZES, check_row,
                         is_finite_answer)
from dpteach import beyond_global as bg

NAN, INF = float("nan"), float("inf")
V5 = [1.0, 2.0, 3.0, 4.0, 5.0]
BAD_DELTA = BAD_REAL + [0, 0.0, -1e-12, 1, 1.0, 1.5]                   # (0, 1)
BAD_FLAG = ["yes", 1, 0, None, 1.0]
BAD_VALUES = [NAN, INF, [1.0, NAN], [1.0, INF], [1.0, -INF], "1.0", ["1", "2"], True,
              [True, False], None, [1.0, None], [], [1 + 1j], [[1.0], [1.0, 2.0]],
              [10 ** 400, 1.0, 2.0]]
BAD_ODD = BAD_VALUES + [[1.0, 2.0], [[1.0, 2.0, 3.0]] * 3]                # the median needs odd n, 1-D
BAD_RANGE = BAD_REAL + [10 ** 400, -10 ** 400]
BAD_DISTANCE = [-1, 2.5, True, "1", NAN, INF, None, [0, -1], [0, 2.5], [0, True], ["1"],
                [[1.0], [1.0, 2.0]], np.array([0.0, NAN]), np.array([-3]), 1j]
BAD_BOUND = BAD_REAL + [-1.0, -1e-320]
BAD_PROPOSED = BAD_REAL + [0, 0.0, -1.0, 1e301, 10 ** 400]
BAD_RUNS = [0, -1, 2.5, True, "5", NAN, INF, 10 ** 12, 10 ** 400, 1j]
BAD_DELTA_EXACT = [0.5, 0.7, 1 - 1e-16]                                   # ln(1/(2 delta)) <= 0

MEDIAN = dict(values=V5, lower=0, upper=10)
PTR = dict(MEDIAN, epsilon=1.0, delta=1e-3, proposed_bound=1.0)

BAD = [
    (bg.local_sensitivity_median, dict(MEDIAN, distance=1),
     dict(values=BAD_ODD, lower=BAD_RANGE + [20], upper=BAD_RANGE + [-5], distance=BAD_DISTANCE)),
    (bg.median_sensitivity_window, dict(MEDIAN, distance=1),
     dict(values=BAD_ODD, lower=BAD_RANGE + [20], upper=BAD_RANGE + [-5],
          distance=[d for d in BAD_DISTANCE if not isinstance(d, (list, np.ndarray))])),
    (bg.smooth_sensitivity_median, dict(MEDIAN, beta=0.1),
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE, beta=BAD_EPSILON)),
    (bg.distance_to_instability, dict(MEDIAN, bound=1.0),
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE, bound=BAD_BOUND)),
    (bg.ptr_threshold, dict(epsilon=1.0, delta=1e-6),
     dict(epsilon=BAD_EPSILON + [1e-101, 1e-320], delta=BAD_DELTA, exact_delta=BAD_FLAG)),
    (bg.ptr_pass_probability, dict(distance=[0.0, 30.0], epsilon=1.0, delta=1e-6),
     dict(distance=[NAN, -1.0, -INF, [0.0, NAN], [-1.0], "1", None, [True], [[1.0], [1.0, 2.0]], 1j],
          epsilon=BAD_EPSILON, delta=BAD_DELTA, exact_delta=BAD_FLAG)),
    (bg.ptr_median, dict(PTR, size=3),
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE, epsilon=BAD_EPSILON, delta=BAD_DELTA,
          proposed_bound=BAD_PROPOSED, exact_delta=BAD_FLAG, rng=BAD_RNG, size=BAD_RUNS)),
    (bg.ptr_answer_probability, PTR,
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE, epsilon=BAD_EPSILON, delta=BAD_DELTA,
          proposed_bound=BAD_PROPOSED, exact_delta=BAD_FLAG)),
    (bg.smooth_beta, dict(epsilon=1.0, delta=1e-6), dict(epsilon=BAD_EPSILON, delta=BAD_DELTA)),
    (bg.smooth_median, dict(MEDIAN, epsilon=1.0, delta=1e-6, size=3),
     dict(values=BAD_ODD, lower=BAD_RANGE, upper=BAD_RANGE + [1e308], epsilon=BAD_EPSILON,
          delta=BAD_DELTA, rng=BAD_RNG, size=BAD_RUNS)),
    (bg.sample_and_aggregate, dict(MEDIAN, statistic=np.mean, epsilon=1.0, blocks=2),
     dict(values=[v for v in BAD_VALUES if v != [[1.0], [1.0, 2.0]]] + [[2.0]],
          statistic=["mean", None, 3, lambda b: NAN, lambda b: "x", lambda b: [1.0, 2.0]],
          lower=BAD_RANGE, upper=BAD_RANGE, epsilon=BAD_EPSILON, blocks=BAD_RUNS + [6], rng=BAD_RNG)),
    (bg.local_sensitivity_mean, dict(MEDIAN, distance=1),
     dict(values=BAD_VALUES + [[[1.0, 2.0]] * 2], lower=BAD_RANGE + [20], upper=BAD_RANGE + [-5],
          distance=BAD_DISTANCE)),
    (bg.distance_to_instability_mean, dict(MEDIAN, bound=1.0),
     dict(values=BAD_VALUES, lower=BAD_RANGE, upper=BAD_RANGE, bound=BAD_BOUND)),
    (bg.ptr_mean, dict(PTR, size=3),
     dict(values=BAD_VALUES, lower=BAD_RANGE, upper=BAD_RANGE, epsilon=BAD_EPSILON, delta=BAD_DELTA,
          proposed_bound=BAD_PROPOSED, exact_delta=BAD_FLAG, rng=BAD_RNG, size=BAD_RUNS)),
]
BAD += [(f, dict(good, exact_delta=True), dict(delta=BAD_DELTA_EXACT)) for f, good in
        [(bg.ptr_threshold, dict(epsilon=1.0, delta=1e-6)), (bg.ptr_median, PTR), (bg.ptr_mean, PTR),
         (bg.ptr_answer_probability, PTR)]]


def _bad_rows():
    """One pytest case per (function, parameter), trying every bad value in it (a case per
    value would spend most of its time in pytest's bookkeeping)."""
    return [pytest.param(func, good, param, values, id=f"{func.__name__}-{param}")
            for func, good, bad in BAD for param, values in bad.items()]


def _refused(func, good, param, bad):
    """None when ``bad`` is refused as it must be, else what went wrong."""
    try:
        if param == "statistic" and callable(bad):      # garbage answers, named as such
            with pytest.raises((ValueError, TypeError), match="statistic"):
                func(**dict(good, statistic=bad, rng=np.random.default_rng(0)))
        elif func is bg.sample_and_aggregate and param == "values" and bad == [2.0]:
            with pytest.raises(ValueError, match="values"):     # fewer values than blocks
                func(**dict(good, values=bad))
        else:
            check_row(func, good, param, bad)
    except BaseException as err:                        # noqa: BLE001 - collected, reported
        return f"{param}={bad!r}: {type(err).__name__}: {err}"
    return None


@pytest.mark.parametrize("func, good, param, values", _bad_rows())
def test_bad_values_are_refused_by_name_before_any_draw(func, good, param, values):
    slipped = [msg for v in values if (msg := _refused(func, good, param, v))]
    assert not slipped, "\n".join(slipped)


# ------------------------------------------------------------------ extreme, well formed
#: parameters whose extreme values may give a documented infinity (a distance to
#: instability is infinite when no dataset is that unstable: a bound at least the range)
INFINITE_OK = {bg.distance_to_instability: {"bound", "upper"},
               bg.distance_to_instability_mean: {"bound", "upper"}}

EXTREME_TABLE = [
    (bg.local_sensitivity_median, dict(MEDIAN, distance=1), ("lower", "upper"), ("distance",), ("values",)),
    (bg.median_sensitivity_window, dict(MEDIAN, distance=1), ("lower", "upper"), ("distance",), ("values",)),
    (bg.smooth_sensitivity_median, dict(MEDIAN, beta=0.1), ("lower", "upper", "beta"), (), ("values",)),
    (bg.distance_to_instability, dict(MEDIAN, bound=1.0), ("lower", "upper", "bound"), (), ("values",)),
    (bg.ptr_threshold, dict(epsilon=1.0, delta=1e-6), ("epsilon", "delta"), (), ()),
    (bg.ptr_pass_probability, dict(distance=3.0, epsilon=1.0, delta=1e-6),
     ("distance", "epsilon", "delta"), (), ()),
    (bg.ptr_median, dict(PTR, size=3), ("lower", "upper", "epsilon", "delta", "proposed_bound"),
     ("size",), ("values",)),
    (bg.ptr_answer_probability, PTR, ("lower", "upper", "epsilon", "delta", "proposed_bound"), (),
     ("values",)),
    (bg.smooth_beta, dict(epsilon=1.0, delta=1e-6), ("epsilon", "delta"), (), ()),
    (bg.smooth_median, dict(MEDIAN, epsilon=1.0, delta=1e-6, size=3),
     ("lower", "upper", "epsilon", "delta"), ("size",), ("values",)),
    (bg.sample_and_aggregate, dict(MEDIAN, statistic=np.mean, epsilon=1.0, blocks=2),
     ("lower", "upper", "epsilon"), ("blocks",), ("values",)),
    (bg.local_sensitivity_mean, dict(MEDIAN, distance=1), ("lower", "upper"), ("distance",), ("values",)),
    (bg.distance_to_instability_mean, dict(MEDIAN, bound=1.0), ("lower", "upper", "bound"), (),
     ("values",)),
    (bg.ptr_mean, dict(PTR, size=3), ("lower", "upper", "epsilon", "delta", "proposed_bound"),
     ("size",), ("values",)),
]


def _extreme_rows():
    out = []
    for func, good, reals, sizes, arrays in EXTREME_TABLE:
        for kind, params, values in (("real", reals, EXTREME + [-1e308, 5e-324]),
                                     ("size", sizes, EXTREME_SIZES), ("array", arrays, EXTREME)):
            out += [pytest.param(func, good, param, kind, list(values), id=f"{func.__name__}-{param}-{kind}")
                    for param in params]
    return out


def _alarm(signum, frame):
    raise TimeoutError("no answer within the guard")


def _extreme_problem(func, good, param, kind, value):
    """None when ``func`` refuses the extreme ``value`` by name before any draw, or answers
    finitely (a documented infinite distance, never NaN); else what went wrong."""
    kwargs = dict(good)
    rng = np.random.default_rng(0)
    if func in (bg.ptr_median, bg.smooth_median, bg.sample_and_aggregate, bg.ptr_mean):
        kwargs["rng"] = rng
    before = rng.bit_generator.state
    kwargs[param] = [value] + list(good[param])[1:] if kind == "array" else value
    where = f"{func.__name__}({param}={value!r})"
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(os.environ.get("DPTEACH_HANG_GUARD", "60")))
    try:
        out = func(**kwargs)
    except (ValueError, TypeError) as err:
        if param not in str(err):
            return f"{where}: the message does not name {param!r}: {err}"
        if rng.bit_generator.state != before:
            return f"{where}: a random number was drawn before the check"
        return None
    except Exception as err:                            # noqa: BLE001 - reported
        return f"{where}: raised {type(err).__name__}: {err}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if param in INFINITE_OK.get(func, ()):
        ok = not np.isnan(np.asarray(out, dtype=float)).any()
    elif func in (bg.ptr_median, bg.ptr_mean):
        ok = out is None or bool(np.isfinite(np.asarray(out)[~np.isnan(np.asarray(out))]).all())
    else:
        ok = is_finite_answer(out)
    return None if ok else f"{where} returned {out!r}"


@pytest.mark.parametrize("func, good, param, kind, values", _extreme_rows())
def test_extreme_values_are_refused_by_name_or_answered_finitely(func, good, param, kind, values):
    problems = [p for v in values if (p := _extreme_problem(func, good, param, kind, v))]
    assert not problems, "\n".join(problems)


def test_every_public_function_has_rows():
    covered = {f for f, *_ in BAD} & {f for f, *_ in EXTREME_TABLE}
    missing = [name for name in bg.__all__ if getattr(bg, name) not in covered]
    assert not missing, missing


# ------------------------------------------------------------------ the cases
def test_tiny_delta_is_computed_with_minus_log_delta():
    assert bg.smooth_beta(1.0, 1e-320) == pytest.approx(6.78e-4, rel=1e-3)       # was 0
    assert bg.smooth_beta(1.0, 5e-324) > 0
    assert math.isfinite(bg.ptr_threshold(1.0, 5e-324))
    stable = np.full(101, 40.0)
    assert bg.ptr_answer_probability(stable, 0, 100, 1.0, 1e-320, proposed_bound=100.0) == 1.0
    assert bg.ptr_answer_probability(stable, 0, 100, 50.0, 1e-320, proposed_bound=1.0) > 0.5  # was 0
    runs = bg.ptr_median(stable, 0, 100, 50.0, 1e-320, proposed_bound=1.0,
                         rng=np.random.default_rng(0), size=100)
    assert np.mean(~np.isnan(runs)) > 0.5                                          # was always ⊥


def test_a_range_near_the_float_limit_is_refused_by_name():
    with pytest.raises(ValueError, match="upper"):
        bg.smooth_median(V5, 0, 1e308, 1.0, 1e-6, rng=np.random.default_rng(0))     # was inf
    with pytest.raises(ValueError, match="upper"):
        bg.local_sensitivity_median(V5, -1e308, 1e308)
    with pytest.raises(ValueError, match="proposed_bound"):
        bg.ptr_mean(V5, 0, 1e300, 1e-100, 1e-6, proposed_bound=1e300, rng=np.random.default_rng(0))
    assert math.isfinite(bg.smooth_sensitivity_median(V5, 0, 1e308, 0.1))


def test_large_inputs_are_answered_quickly():
    """A guard against runaway work, not a benchmark: each call takes well under a second
    here (CPU time, so a loaded machine does not fail it)."""
    big = np.random.default_rng(0).normal(40, 30, 100_001)
    flat = np.full(200_001, 40.0)
    calls = [lambda: bg.smooth_median(big, 0, 100, 1.0, 1e-6, rng=np.random.default_rng(0)),
             lambda: bg.local_sensitivity_median(V5, 0, 10, distance=np.arange(10 ** 6)),
             lambda: bg.local_sensitivity_mean(V5, 0, 10, distance=np.arange(10 ** 6)),
             lambda: bg.distance_to_instability(big, 0, 100, 1.0),
             lambda: bg.distance_to_instability_mean(flat, 0, 10, 1.0),
             lambda: bg.ptr_mean(flat, 0, 100, 1.0, 1e-6, proposed_bound=1.0, rng=np.random.default_rng(0)),
             lambda: bg.local_sensitivity_median(big, 0, 100, distance=10 ** 400)]
    for call in calls:
        start = time.process_time()
        out = call()
        assert time.process_time() - start < 5.0
        assert out is None or is_finite_answer(out)
    assert bg.distance_to_instability_mean(flat, 0, 10, 1.0) == 199_993      # n - 8: (u - l)/N > 1


def test_the_size_of_one_record_is_handled_for_the_mean():
    """n = 1: removing the record leaves the empty dataset, whose mean is the midpoint."""
    assert bg.local_sensitivity_mean([2.0], 0, 10) == pytest.approx(max(8 / 2, 2 / 2, abs(2.0 - 5.0)))
    assert bg.distance_to_instability_mean([2.0], 0, 10, 4.99) == 1.0        # the empty dataset: 5
