"""Parameter validators shared by the whole package (``valid_*``: "check" is the
coursework's word, for grading an answer).

Every public function validates its inputs here, before doing any work, so that a
student who passes ``epsilon=float('nan')`` or ``delta=1.5`` gets a message that names
the parameter, shows the value and states the allowed range -- and never a release of
the true answer computed with a meaningless privacy parameter.

A lesson function declares its checks above its body with :func:`checked`, one
constraint per parameter (:class:`Epsilon`, :class:`Delta`, :class:`Values`, ...), so
the body a notebook shows is the mathematics; only checks that relate two parameters
to each other stay in the body. The constraints are stored on the function as
``__checks__``, where the bad-input tests read them.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import sys

import numpy as np

__all__ = [
    "valid_real",
    "valid_reals",
    "valid_positive_ints",
    "valid_epsilon",
    "valid_delta",
    "valid_sensitivity",
    "valid_positive_int",
    "valid_nonnegative_int",
    "valid_probability",
    "valid_flag",
    "valid_values",
    "valid_scores",
    "valid_bits",
    "valid_rng",
    "valid_size",
    "valid_count",
    "finite_result",
    "valid_noise_scale",
    "valid_range",
    "describe",
    "release_shape",
    "checked",
    "Constraint", "Real", "Reals", "Epsilon", "Delta", "Sensitivity", "Probability",
    "PositiveInt", "NonnegativeInt", "PositiveInts", "Count", "Values", "Scores", "Bits",
    "Flag", "Rng", "Size", "Using", "OrNone",
]


def describe(value) -> str:
    """A value's repr for an error message, shortened to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def valid_real(value, name: str, *, low=None, high=None, low_open=False,
               high_open=False, allow_inf=False) -> float:
    """Return ``value`` as a float after checking that it is a real number in range.

    Booleans and strings are refused with TypeError (``True`` is an int in Python, but
    an epsilon of ``True`` is always a mistake). NaN is always refused; infinities are
    refused unless ``allow_inf``.
    """
    if type(value) is float:         # the common case, without the slower checks of type
        x = value
    else:
        if isinstance(value, (bool, np.bool_)) or \
                not isinstance(value, (numbers.Real, np.integer, np.floating)):
            if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
                value = value.item()
            else:
                raise TypeError(f"{name} must be a real number, got {describe(value)} "
                                f"of type {type(value).__name__}")
        try:
            x = float(value)
        except OverflowError:  # an int beyond the float range, e.g. 10**400
            x = float("inf") if value > 0 else float("-inf")
    if math.isnan(x):
        raise ValueError(f"{name} must be a number, got NaN")
    if math.isinf(x) and not allow_inf:
        raise ValueError(f"{name} must be finite, got {x}")
    if ((low is not None and (x < low or (low_open and x == low)))
            or (high is not None and (x > high or (high_open and x == high)))):
        rng_text = _range_text(low, high, low_open, high_open)
        raise ValueError(f"{name} must be {rng_text}, got {describe(value)}")
    return x


def _elements(name, value):
    """An array-like as a numeric array, or None when it needs element-by-element checks
    (a list or object array may hide a boolean, a string or None among its numbers)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # ragged nesting
        raise TypeError(f"{name} must be a number or an array of numbers, got "
                        f"{describe(value)}") from None
    if isinstance(value, np.ndarray) and arr.dtype.kind in "iuf":
        return arr
    return None


def valid_reals(value, name: str, **limits):
    """:func:`valid_real` for a scalar (a float back) and for every element of an array-like
    (a float array back, same shape): the same rules and messages, element by element --
    what a lesson function sweeps for a panel (numpy broadcasting: scalar in, scalar out)."""
    if np.ndim(value) == 0 and not isinstance(value, (list, tuple)):
        return valid_real(value, name, **limits)
    arr = _elements(name, value)
    if arr is None:                  # lists, object arrays: every element by valid_real
        obj = np.asarray(value, dtype=object)
        return np.array([valid_real(v, name, **limits) for v in obj.flat],
                        dtype=float).reshape(obj.shape)
    x = arr.astype(float)
    bad = np.isnan(x) | (np.isinf(x) & (not limits.get("allow_inf", False)))
    low, high = limits.get("low"), limits.get("high")
    if low is not None:
        bad |= (x < low) | ((x == low) & limits.get("low_open", False))
    if high is not None:
        bad |= (x > high) | ((x == high) & limits.get("high_open", False))
    if bad.any():                    # the first bad element, with valid_real's own message
        valid_real(x[bad].flat[0], name, **limits)
    return x


def valid_positive_ints(value, name: str):
    """:func:`valid_positive_int` for a scalar (an exact int back) and for every element of
    an array-like (a float array back, same shape; each element a whole number >= 1 within
    the float range)."""
    if np.ndim(value) == 0 and not isinstance(value, (list, tuple)):
        return valid_positive_int(value, name)
    arr = _elements(name, value)
    if arr is None:
        obj = np.asarray(value, dtype=object)
        ints = [valid_positive_int(v, name) for v in obj.flat]
    else:
        ints = arr.ravel()
        bad = ~np.isfinite(ints) | (ints < 1) | (ints != np.round(ints)) if arr.dtype.kind == "f" \
            else ints < 1
        if bad.any():
            valid_positive_int(ints[bad][0].item(), name)
        return arr.astype(float)
    try:
        return np.array(ints, dtype=float).reshape(obj.shape)
    except OverflowError:
        raise ValueError(f"{name} must be below 1.8e308 (the float range)") from None


def _range_text(low, high, low_open, high_open) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high}"
    return "a real number"


def valid_epsilon(epsilon, name: str = "epsilon", *, allow_inf: bool = False,
                  allow_zero: bool = False) -> float:
    """epsilon > 0, finite (``allow_inf`` only where a docstring says inf means no noise;
    ``allow_zero`` only where epsilon = 0, perfect privacy, is a valid input, e.g. a
    trade-off curve, which is then beta = 1 - delta - alpha)."""
    return valid_real(epsilon, name, low=0.0, low_open=not allow_zero, allow_inf=allow_inf)


def valid_delta(delta, name: str = "delta", *, required: bool = False) -> float:
    """delta in [0, 1); with ``required`` (Gaussian mechanism) delta in (0, 1)."""
    return valid_real(delta, name, low=0.0, high=1.0, low_open=required, high_open=True)


def valid_sensitivity(sensitivity, name: str = "sensitivity", *, positive: bool = False) -> float:
    """sensitivity >= 0 and finite (> 0 with ``positive``)."""
    return valid_real(sensitivity, name, low=0.0, low_open=positive)


def valid_probability(p, name: str, *, low_open=False, high_open=False) -> float:
    return valid_real(p, name, low=0.0, high=1.0, low_open=low_open, high_open=high_open)


def valid_positive_int(value, name: str, *, maximum: int | None = None) -> int:
    """A positive whole number (1, 2, ...); 3.0 is accepted, 2.5, True and '3' are not."""
    return _valid_int(value, name, minimum=1, maximum=maximum)


def valid_nonnegative_int(value, name: str, *, maximum: int | None = None) -> int:
    return _valid_int(value, name, minimum=0, maximum=maximum)


def _valid_int(value, name, *, minimum, maximum):
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise TypeError(f"{name} must be an integer, got {describe(value)} of type {type(value).__name__}")
    if isinstance(value, (numbers.Integral, np.integer)):
        x = int(value)  # exact, even beyond 2**53
    else:
        x = float(value)
        if not np.isfinite(x) or x != int(x):
            raise ValueError(f"{name} must be a whole number, got {describe(value)}")
        x = int(x)
    if x < minimum or (maximum is not None and x > maximum):
        upper = "" if maximum is None else f" and <= {maximum}"
        raise ValueError(f"{name} must be an integer >= {minimum}{upper}, got {describe(value)}")
    return x


def valid_values(values, name: str, *, allow_empty: bool = False, allow_inf: bool = False) -> np.ndarray:
    """A real-valued array (scalars allowed) with no NaN (and no infinities unless allowed)."""
    if isinstance(values, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{name} must be numeric, got {describe(values)} of type {type(values).__name__}")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):  # ragged nesting
        raise TypeError(f"{name} must be a numeric array, got {describe(values)}") from None
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError(f"{name} must be numeric, not boolean")
    if kind == "O":
        # mixed Python objects: every entry must be a real number (no None, str, bool)
        for item in arr.flat:
            if (isinstance(item, (bool, np.bool_))
                    or not isinstance(item, (numbers.Real, np.integer, np.floating))):
                raise TypeError(f"{name} must contain only real numbers, got {describe(item)} "
                                f"of type {type(item).__name__}")
    elif kind not in "iuf":
        # strings ('1'), complex numbers, dates: refused rather than silently converted
        raise TypeError(f"{name} must be numeric, got {describe(values)} (dtype {arr.dtype})")
    try:
        arr = arr.astype(float, copy=False)
    except OverflowError:
        raise ValueError(f"{name} must be finite, got an entry beyond the float range") from None
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    if allow_inf or not np.isfinite(arr).all():       # one pass when all is well
        if np.isnan(arr).any():
            raise ValueError(f"{name} must not contain NaN")
        if not allow_inf:
            raise ValueError(f"{name} must be finite, got an infinite entry")
    return arr


def valid_scores(scores, name: str = "scores") -> np.ndarray:
    """A non-empty 1-D array of finite scores (utilities) for the exponential mechanism."""
    arr = valid_values(scores, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def valid_bits(bits, name: str = "bits") -> np.ndarray:
    """An array of 0/1 values (booleans are accepted as bits)."""
    if isinstance(bits, (str, bytes)):
        raise TypeError(f"{name} must be an array of 0/1 values, got a string")
    arr = np.asarray(bits)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of 0/1 values, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype.kind == "b":
        return arr.astype(np.int8)
    bad = ~np.isin(arr, (0, 1))
    if bad.any():
        raise ValueError(f"{name} must contain only 0 and 1, got {describe(arr[bad].flat[0])}")
    return arr.astype(np.int8)


def valid_rng(rng) -> np.random.Generator:
    """None -> a fresh Generator; a Generator is used as is; an int seeds a new one."""
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (numbers.Integral, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"rng must be a numpy.random.Generator, a non-negative int seed "
                             f"or None, got {describe(rng)}")
        return np.random.default_rng(int(rng))
    raise TypeError(f"rng must be a numpy.random.Generator, an int seed or None, got {type(rng).__name__}")


#: the most numbers one call may draw or allocate (10^8 float64 = 800 MB): a larger size is
#: refused by :func:`valid_size` / :func:`valid_count` before anything is allocated, so a
#: size such as 10**12 gives an error at once instead of a MemoryError or a hang
MAX_DRAWS = 10 ** 8


def valid_size(size, name: str = "size", *, per_draw: int = 1, maximum: int = MAX_DRAWS):
    """numpy's size= convention: None, a non-negative int or a tuple of them, asking for at
    most ``maximum`` numbers in all when each draw needs ``per_draw`` of them."""
    if size is None:
        return None
    if isinstance(size, (tuple, list)):
        out = tuple(valid_nonnegative_int(s, name) for s in size)
        total = int(np.prod(out, dtype=object)) if out else 1
    else:
        out = total = valid_nonnegative_int(size, name)
    if total * max(int(per_draw), 1) > maximum:
        raise ValueError(f"{name} asks for {total} draws of {max(int(per_draw), 1)} number(s) each; "
                         f"at most {maximum} numbers per call, got {name}={describe(size)}")
    return out


def valid_count(value, name: str, *, minimum: int = 1, maximum: int = MAX_DRAWS, per_item: int = 1) -> int:
    """A whole number of draws, runs, steps or categories in [minimum, maximum / per_item]:
    what a call will loop over or allocate, refused before any work when too large."""
    limit = max(int(maximum) // max(int(per_item), 1), minimum)
    return _valid_int(value, name, minimum=minimum, maximum=limit)


#: the usable range of a noise scale (Laplace b, Gaussian sigma): below it densities and
#: quadratures overflow, above it a single draw (up to about 745 b) overflows
SCALE_RANGE = (1e-300, 1e305)


def valid_noise_scale(scale, name: str, formula: str) -> float:
    """A noise scale computed from checked parameters (``formula``, e.g. "2 sensitivity /
    epsilon") must lie in :data:`SCALE_RANGE`; a subnormal epsilon (1e-320) or a huge
    sensitivity (1e308) is refused here, naming the parameter and the usable range."""
    b = float(scale)
    low, high = SCALE_RANGE
    if not (low <= b <= high):
        raise ValueError(f"{name} is outside the usable range: the noise scale {formula} must lie "
                         f"in [{low:g}, {high:g}], got {b:g}")
    return b


def finite_result(value, name: str, formula: str):
    """A quantity computed from checked parameters (a noise scale such as sensitivity/epsilon,
    a bound such as e^epsilon) must be a finite number: a valid but extreme parameter (epsilon =
    1e-320) can make it overflow. Refused naming the parameter and the formula."""
    arr = np.asarray(value, dtype=float)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} is outside the usable range: {formula} overflows the floating-point "
                         f"range (got {name} at an extreme value)")
    return value


def valid_flag(value, name: str) -> bool:
    """A True/False switch: a bool or numpy bool (not 0/1, not a string). Returns a bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def release_shape(size, value_shape) -> tuple:
    """Shape of ``size`` independent releases of a value of shape ``value_shape``
    (numpy's convention: None -> the value's own shape)."""
    if size is None:
        return tuple(value_shape)
    if isinstance(size, tuple):
        return size + tuple(value_shape)
    return (size,) + tuple(value_shape)


def valid_range(lower, upper) -> tuple:
    """A clamping or clipping range: finite reals with lower < upper. Returns (lower, upper)."""
    lo = valid_real(lower, "lower")
    hi = valid_real(upper, "upper")
    if lo >= hi:
        raise ValueError(f"lower must be < upper, got lower={lo:g}, upper={hi:g}")
    return lo, hi


# ------------------------------------------------------------------ declared checks
class Constraint:
    """What one parameter must be: ``constraint(value, name)`` returns the value converted
    (a float, an array, a Generator) or raises naming the parameter. Each kind below runs
    one ``valid_*`` function with the keyword options it was declared with; ``options``
    keeps them for the tests to read."""

    validator = None

    def __init__(self, **options):
        self.options = options
        self._run = functools.partial(type(self).validator, **options)

    def __call__(self, value, name):
        return self._run(value, name)

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"


class Real(Constraint):
    """A real number (:func:`valid_real`: ``low``, ``high``, ``low_open``, ``high_open``,
    ``allow_inf``)."""
    validator = staticmethod(valid_real)


class Reals(Constraint):
    """A real number or an array of them (:func:`valid_reals`, same options)."""
    validator = staticmethod(valid_reals)


class Epsilon(Constraint):
    """epsilon > 0 and finite (:func:`valid_epsilon`: ``allow_zero``, ``allow_inf``)."""
    validator = staticmethod(valid_epsilon)


class Delta(Constraint):
    """delta in [0, 1), or (0, 1) with ``required`` (:func:`valid_delta`)."""
    validator = staticmethod(valid_delta)


class Sensitivity(Constraint):
    """sensitivity >= 0 and finite, > 0 with ``positive`` (:func:`valid_sensitivity`)."""
    validator = staticmethod(valid_sensitivity)


class Probability(Constraint):
    """A probability in [0, 1] (:func:`valid_probability`: ``low_open``, ``high_open``)."""
    validator = staticmethod(valid_probability)


class PositiveInt(Constraint):
    """A whole number >= 1 (:func:`valid_positive_int`: ``maximum``)."""
    validator = staticmethod(valid_positive_int)


class NonnegativeInt(Constraint):
    """A whole number >= 0 (:func:`valid_nonnegative_int`: ``maximum``)."""
    validator = staticmethod(valid_nonnegative_int)


class PositiveInts(Constraint):
    """A whole number >= 1 or an array of them (:func:`valid_positive_ints`)."""
    validator = staticmethod(valid_positive_ints)


class Count(Constraint):
    """A number of draws, runs or steps (:func:`valid_count`: ``minimum``, ``maximum``,
    ``per_item``)."""
    validator = staticmethod(valid_count)


class Values(Constraint):
    """A real array or scalar, no NaN (:func:`valid_values`: ``allow_empty``,
    ``allow_inf``)."""
    validator = staticmethod(valid_values)


class Scores(Constraint):
    """A non-empty 1-D array of finite scores (:func:`valid_scores`)."""
    validator = staticmethod(valid_scores)


class Bits(Constraint):
    """An array of 0/1 values (:func:`valid_bits`)."""
    validator = staticmethod(valid_bits)


class Flag(Constraint):
    """True or False (:func:`valid_flag`)."""
    validator = staticmethod(valid_flag)


def _rng_named(rng, name):
    return valid_rng(rng)


class Rng(Constraint):
    """None, a Generator or an int seed, as a Generator (:func:`valid_rng`)."""
    validator = staticmethod(_rng_named)


class Size(Constraint):
    """numpy's ``size=``: None, an int or a tuple (:func:`valid_size`: ``per_draw``,
    ``maximum``)."""
    validator = staticmethod(valid_size)


class Using(Constraint):
    """A module's own validator ``function(value, name)``, for a kind met only there."""

    def __init__(self, function):
        self.options = {"function": function}
        self._run = function

    def __repr__(self):
        return f"Using({getattr(self.options['function'], '__name__', '?')})"


class OrNone(Constraint):
    """None (passed on as it is) or what ``constraint`` accepts."""

    def __init__(self, constraint):
        self.options = {"constraint": constraint}
        self._run = lambda value, name: None if value is None else constraint(value, name)

    def __repr__(self):
        return f"OrNone({self.options['constraint']!r})"


_EMPTY = inspect.Parameter.empty
_SKIP = object()                 # a default its constraint leaves as it is: not run per call


def _plain_default(check, name, default):
    """The default to check per call, or _SKIP when checking it changes nothing (a number
    or None that its constraint returns unchanged, such as delta=0.0 or size=None)."""
    if default is _EMPTY:
        return _EMPTY
    out = check(default, name)   # a default its own constraint refuses is a declaration bug
    if (default is None or type(default) in (bool, int, float, str)) and type(out) is type(default) \
            and out == default:
        return _SKIP
    return default


def checked(**constraints):
    """Declare the checks of a function's parameters: ``@checked(epsilon=Epsilon(), ...)``.

    Before the body runs, each declared argument (given or defaulted) goes through its
    constraint, in the order declared, and the body gets the converted values; a bad one
    raises the constraint's own message, which names the parameter. A call that does not
    fit the signature raises Python's own TypeError, as it would without the decorator.
    The wrapper keeps the function's name, docstring, signature and source
    (``functools.wraps``), and stores the constraints as ``__checks__``."""

    def decorate(fn):
        signature = inspect.signature(fn)
        names = list(signature.parameters)
        plan = []
        for name, check in constraints.items():
            param = signature.parameters.get(name)
            if param is None or param.kind not in (param.POSITIONAL_OR_KEYWORD,
                                                   param.KEYWORD_ONLY):
                raise TypeError(f"checked: {fn.__qualname__} has no parameter {name!r} "
                                "that can be passed by keyword")
            if not isinstance(check, Constraint):
                raise TypeError(f"checked: the check of {name!r} must be a Constraint, "
                                f"got {check!r}")
            index = names.index(name) if param.kind is param.POSITIONAL_OR_KEYWORD \
                else sys.maxsize
            plan.append((name, index, check._run, _plain_default(check, name, param.default)))
        plan = tuple(plan)
        positional = sys.maxsize if any(p.kind is p.VAR_POSITIONAL for p in
                                        signature.parameters.values()) else \
            sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                for p in signature.parameters.values())

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if len(args) > positional:   # Python's own message, with nothing added
                return fn(*args, **kwargs)
            given = list(args)
            try:
                for name, index, check, default in plan:
                    if index < len(given):
                        given[index] = check(given[index], name)
                    elif name in kwargs:
                        kwargs[name] = check(kwargs[name], name)
                    elif default is not _SKIP and default is not _EMPTY:
                        kwargs[name] = check(default, name)
            except Exception:
                try:
                    signature.bind(*args, **kwargs)
                except TypeError:        # the call itself is wrong: Python's own message
                    return fn(*args, **kwargs)
                raise
            return fn(*given, **kwargs)

        wrapper.__checks__ = dict(constraints)
        return wrapper

    return decorate
