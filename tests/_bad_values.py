"""The usual bad values by kind, as in tests/test_bad_input.py's table, for the modules of
notebooks 14 and 15 (dpteach.clipping, dpteach.sparse_vector), whose tests run the same
check: every bad value raises ValueError or TypeError naming the parameter, and no random
number is drawn first."""

import inspect

import numpy as np
import pytest

NAN, INF = float("nan"), float("inf")
NOT_A_NUMBER = [True, False, np.bool_(True), "1", None, [1.0], 1j]
BAD_REAL = [NAN, INF, -INF, np.float64(NAN), np.array(NAN)] + NOT_A_NUMBER
BAD_EPSILON = BAD_REAL + [0, 0.0, -0.0, -1, -1e-300]
BAD_SENSITIVITY_POSITIVE = BAD_REAL + [-1, -1e-9, 0, 0.0]
BAD_COUNT = [0, -1, 2.5, NAN, INF, True, "3", None, [3], 1j]
BAD_VALUES = [NAN, INF, -INF, [1.0, NAN], [1.0, INF], "1.0", ["1", "2"], True, [True, False],
              None, [1.0, None], [1 + 1j]]
BAD_SCORES = [[1.0, NAN], [1.0, INF], [1.0, -INF], [], [[1.0, 2.0]], 3.0, "abc", ["1", "2"],
              [True, False], None, [1.0, None]]
BAD_RNG = [np.random.RandomState(0), "seed", 1.5, True, object()]
BAD_SIZE = [-1, 2.5, True, "5", NAN, INF, (2, -1), (2.5,), [3, "4"], 1j]
BAD_SEED = [-1, 1.5, "x", True, None]


def swept(bads, good):
    """Bad values for a parameter that accepts arrays: each scalar bad value alone, then in
    a list beside a good value, then (numbers only) in a numpy array beside it. A
    one-element list such as [1.0] is a good array there, so it is left out."""
    alone = [v for v in bads if not isinstance(v, list)]
    listed = [[good, v] for v in alone]
    arrays = [np.array([good, v]) for v in alone
              if isinstance(v, (float, int, np.floating)) and not isinstance(v, (bool, np.bool_))]
    return alone + listed + arrays


def rows(table):
    """pytest params (func, good kwargs, param, bad value) from [(func, good, {param: bads})]."""
    out = []
    for func, good, bad in table:
        for param, values in bad.items():
            for i, v in enumerate(values):
                out.append(pytest.param(func, good, param, v, id=f"{func.__name__}-{param}-{i}"))
    return out


def check_row(func, good, param, bad):
    func(**good)                                  # the good call works
    kwargs = dict(good)
    rng = np.random.default_rng(0)
    if "rng" in inspect.signature(func).parameters and param != "rng":
        kwargs["rng"] = rng
    state = rng.bit_generator.state
    kwargs[param] = bad
    with pytest.raises((ValueError, TypeError)) as info:
        func(**kwargs)
    assert param in str(info.value), f"message does not name {param!r}: {info.value}"
    assert rng.bit_generator.state == state, "a random number was drawn before the check"


# ------------------------------------------------------------------ extreme but well-formed
#: numbers at the edges of float64 (issue 19): a subnormal, nearly the largest float, and
#: an int beyond the float range. Each is either refused (ValueError/TypeError naming the
#: parameter, before any work) or gives a finite answer.
TINY, HUGE, BEYOND = 1e-320, 1e308, 10 ** 400
EXTREME = [TINY, HUGE, BEYOND, -TINY]
#: a count or size no function may try to allocate or loop over
HUGE_SIZE = 10 ** 12
EXTREME_SIZES = [HUGE_SIZE, BEYOND, HUGE, TINY]


def is_finite_answer(value) -> bool:
    """True when every number in ``value`` (scalars, arrays, tuples, lists, dicts,
    dataclasses) is finite; None, strings, booleans and ints pass. A field named
    ``support`` (an interval whose ends are +-inf for an unbounded law) is not a result."""
    import dataclasses
    import numbers

    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        return True
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return all(is_finite_answer(getattr(value, f.name)) for f in dataclasses.fields(value)
                   if f.name != "support")
    if isinstance(value, dict):
        return all(is_finite_answer(v) for v in value.values())
    if isinstance(value, (tuple, list)):
        return all(is_finite_answer(v) for v in value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return bool(np.isfinite(value).all())
        if value.dtype.kind == "O":
            return all(is_finite_answer(v) for v in value.flat)
        return True
    if isinstance(value, (numbers.Number, np.number)):
        return bool(np.isfinite(value))
    return True
