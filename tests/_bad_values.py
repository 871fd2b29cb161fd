"""The usual bad values by kind, as in tests/lessons/test_bad_input.py's table, for the modules of
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
BAD_DELTA = BAD_REAL + [-1e-12, 1, 1.0, 1.5]                 # optional delta: [0, 1)
BAD_DELTA_REQUIRED = BAD_DELTA + [0, 0.0]                    # required delta: (0, 1)
BAD_SENSITIVITY = BAD_REAL + [-1, -1e-9]                     # >= 0, finite
BAD_SENSITIVITY_POSITIVE = BAD_SENSITIVITY + [0, 0.0]        # > 0, finite
BAD_SCALE = BAD_SENSITIVITY_POSITIVE
BAD_COUNT = [0, -1, 2.5, NAN, INF, True, "3", None, [3], 1j]  # positive integers
#: an array of data that may be empty; BAD_VALUES_NONEMPTY where it may not
BAD_VALUES = [NAN, INF, -INF, [1.0, NAN], [1.0, INF], "1.0", ["1", "2"], True, [True, False],
              None, [1.0, None], [1 + 1j]]
BAD_VALUES_NONEMPTY = BAD_VALUES + [[]]
BAD_SCORES = [[1.0, NAN], [1.0, INF], [1.0, -INF], [], [[1.0, 2.0]], 3.0, "abc", ["1", "2"],
              [True, False], None, [1.0, None]]
BAD_BITS = [[0, 2], [0, 1, -1], [0.5], [NAN], [0, INF], "0101", ["0", "1"], [], None, [0, None]]
BAD_BOOL_FLAG = ["yes", 1, 0, None, 1.0]
BAD_RNG = [np.random.RandomState(0), "seed", 1.5, True, object()]
BAD_SIZE = [-1, 2.5, True, "5", NAN, INF, (2, -1), (2.5,), [3, "4"], 1j]
BAD_SEED = [-1, 1.5, "x", True, None]


def bad_values_for(constraint) -> list:
    """The bad values of one declared constraint (dpteach/_support/validate.py's kinds), from the
    lists above and the constraint's own options (``allow_zero`` keeps 0 out of an
    epsilon's bad values, ``maximum`` adds the first number past it, ...)."""
    from dpteach._support import validate as v

    kind = next(k for k in type(constraint).__mro__ if k.__module__ == v.__name__)
    o = constraint.options
    if kind is v.OrNone:
        return [x for x in bad_values_for(o["constraint"]) if x is not None]
    if kind is v.Using:              # a module's own validator: what no kind accepts
        return [None, object()]
    if kind in (v.Real, v.Reals, v.Probability):
        low, high = (0.0, 1.0) if kind is v.Probability else (o.get("low"), o.get("high"))
        out = [NAN, np.float64(NAN), np.array(NAN)] + NOT_A_NUMBER[:5] + [1j]
        out += [] if o.get("allow_inf") else [INF, -INF]
        if low is not None:            # the next float below the lowest allowed, and further
            out += [low - max(1.0, abs(low)), float(np.nextafter(low, -INF))] + \
                ([low] if o.get("low_open") else [])
        if high is not None:
            out += [high + max(1.0, abs(high)), float(np.nextafter(high, INF))] + \
                ([high] if o.get("high_open") else [])
        return out
    if kind is v.Epsilon:
        out = [x for x in BAD_EPSILON if not (o.get("allow_zero") and x == 0)]
        return [x for x in out if not (o.get("allow_inf") and x == INF)]
    if kind is v.Delta:
        return BAD_DELTA_REQUIRED if o.get("required") else BAD_DELTA
    if kind is v.Sensitivity:
        return BAD_SENSITIVITY_POSITIVE if o.get("positive") else BAD_SENSITIVITY
    if kind in (v.PositiveInt, v.NonnegativeInt, v.Count, v.PositiveInts):
        low = {v.NonnegativeInt: 0, v.Count: o.get("minimum", 1)}.get(kind, 1)
        out = [low - 1, 2.5, NAN, INF, True, "3", None, 1j]
        out += [] if kind is v.PositiveInts else [[3]]
        return out + ([o["maximum"] + 1] if o.get("maximum") is not None else [])
    if kind is v.Values:
        out = BAD_VALUES if o.get("allow_empty") else BAD_VALUES_NONEMPTY
        return [x for x in out if not (o.get("allow_inf") and repr(x) in ("inf", "-inf",
                                                                      "[1.0, inf]"))]
    table = {v.Scores: BAD_SCORES, v.Bits: BAD_BITS, v.Flag: BAD_BOOL_FLAG, v.Rng: BAD_RNG,
             v.Size: BAD_SIZE}
    return table[kind]


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


# ------------------------------------------------------------------ the public callables
def public_names():
    """Every name a public module of the kit exports: ``(module name, name, object)`` for
    each entry of the ``__all__`` of every module or package under dpteach whose dotted
    path has no private part (``dpteach._validate``, ``dpteach.panels._render`` are left
    out), in the order pkgutil walks them. The one walk over the lesson callables that the
    bad-input table and the declared checks both start from."""
    import importlib
    import pkgutil

    import dpteach

    out = []
    for info in pkgutil.walk_packages(dpteach.__path__, "dpteach."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            out.append((info.name, name, getattr(module, name, None)))
    return out
