"""Tests for dpteach._support.validate, the one set of parameter validators the whole package uses."""

from fractions import Fraction

import numpy as np
import pytest

from dpteach._support import validate as c


# --------------------------------------------------------------------------- valid_real
@pytest.mark.parametrize("value,expected", [(1, 1.0), (2.5, 2.5), (np.float32(0.5), 0.5),
                                            (np.int64(3), 3.0), (np.array(1.25), 1.25),
                                            (Fraction(1, 4), 0.25), (-7, -7.0)])
def test_valid_real_accepts_real_numbers(value, expected):
    out = c.valid_real(value, "x")
    assert out == expected and type(out) is float


@pytest.mark.parametrize("value", [True, False, np.bool_(True), "1", b"1", None, [1.0],
                                   np.array([1.0]), 1 + 0j, np.array(True), object()])
def test_valid_real_refuses_non_numbers_with_type_error(value):
    with pytest.raises(TypeError, match="^my_param must be a real number"):
        c.valid_real(value, "my_param")


def test_valid_real_nan_inf_and_ranges():
    with pytest.raises(ValueError, match="my_param must be a number, got NaN"):
        c.valid_real(float("nan"), "my_param")
    with pytest.raises(ValueError, match="my_param must be a number, got NaN"):
        c.valid_real(np.array(np.nan), "my_param")
    for inf in (np.inf, -np.inf, 10**400, -(10**400)):
        with pytest.raises(ValueError, match="my_param must be finite"):
            c.valid_real(inf, "my_param")
    assert c.valid_real(np.inf, "x", allow_inf=True) == np.inf
    assert c.valid_real(10**400, "x", allow_inf=True) == np.inf
    with pytest.raises(ValueError, match=r"my_param must be in \[0, 1\], got 2"):
        c.valid_real(2, "my_param", low=0, high=1)
    with pytest.raises(ValueError, match=r"my_param must be in \(0, 1\), got 0"):
        c.valid_real(0, "my_param", low=0, high=1, low_open=True, high_open=True)
    with pytest.raises(ValueError, match=r"my_param must be > 0"):
        c.valid_real(0, "my_param", low=0, low_open=True)
    with pytest.raises(ValueError, match=r"my_param must be <= 3"):
        c.valid_real(3.5, "my_param", high=3)
    assert c.valid_real(0, "x", low=0) == 0.0
    assert c.valid_real(1, "x", high=1) == 1.0


def test_long_values_are_shortened_in_messages():
    with pytest.raises(TypeError) as info:
        c.valid_real("a" * 500, "x")
    assert len(str(info.value)) < 150 and "..." in str(info.value)


# -------------------------------------------------------------- epsilon, delta, sensitivity
def test_valid_epsilon():
    assert c.valid_epsilon(0.1) == 0.1
    assert c.valid_epsilon(1e-300) == 1e-300
    for bad in (0, -1, -0.0):
        with pytest.raises(ValueError, match=r"epsilon must be > 0"):
            c.valid_epsilon(bad)
    with pytest.raises(ValueError, match="epsilon must be finite"):
        c.valid_epsilon(np.inf)
    assert c.valid_epsilon(np.inf, allow_inf=True) == np.inf
    with pytest.raises(ValueError, match="eps_step"):
        c.valid_epsilon(np.nan, "eps_step")
    with pytest.raises(TypeError, match="epsilon"):
        c.valid_epsilon(True)


def test_valid_delta():
    assert c.valid_delta(0) == 0.0
    assert c.valid_delta(1e-5, required=True) == 1e-5
    with pytest.raises(ValueError, match=r"delta must be in \(0.0, 1.0\), got 0"):
        c.valid_delta(0, required=True)
    for bad in (1, 1.5, -1e-9):
        with pytest.raises(ValueError, match=r"delta must be in \[0.0, 1.0\)"):
            c.valid_delta(bad)
    with pytest.raises(ValueError, match="delta_slack"):
        c.valid_delta(1.0, "delta_slack", required=True)


def test_valid_sensitivity():
    assert c.valid_sensitivity(0) == 0.0
    assert c.valid_sensitivity(2) == 2.0
    with pytest.raises(ValueError, match=r"sensitivity must be > 0"):
        c.valid_sensitivity(0, positive=True)
    with pytest.raises(ValueError, match=r"sensitivity must be >= 0"):
        c.valid_sensitivity(-1)
    with pytest.raises(ValueError, match="l2_sensitivity must be finite"):
        c.valid_sensitivity(np.inf, "l2_sensitivity")


def test_valid_probability():
    assert c.valid_probability(0, "p") == 0.0 and c.valid_probability(1, "p") == 1.0
    with pytest.raises(ValueError, match="beta"):
        c.valid_probability(0, "beta", low_open=True)
    with pytest.raises(ValueError, match="beta"):
        c.valid_probability(1, "beta", high_open=True)
    with pytest.raises(ValueError, match="beta"):
        c.valid_probability(1.01, "beta")


# ---------------------------------------------------------------------------- integers
@pytest.mark.parametrize("value,expected", [(3, 3), (3.0, 3), (np.int32(4), 4), (np.float64(5.0), 5),
                                            (np.array(6), 6), (2**60 + 1, 2**60 + 1)])
def test_valid_positive_int_accepts_whole_numbers(value, expected):
    out = c.valid_positive_int(value, "n")
    assert out == expected and type(out) is int


@pytest.mark.parametrize("value,exc", [(0, ValueError), (-2, ValueError), (2.5, ValueError),
                                       (np.nan, ValueError), (np.inf, ValueError),
                                       (True, TypeError), ("3", TypeError), (None, TypeError),
                                       ([3], TypeError)])
def test_valid_positive_int_refuses(value, exc):
    with pytest.raises(exc, match="n_candidates"):
        c.valid_positive_int(value, "n_candidates")


def test_integer_maximum_and_nonnegative():
    assert c.valid_positive_int(4, "k", maximum=4) == 4
    with pytest.raises(ValueError, match=r"k must be an integer >= 1 and <= 4, got 5"):
        c.valid_positive_int(5, "k", maximum=4)
    assert c.valid_nonnegative_int(0, "m") == 0
    with pytest.raises(ValueError, match="m must be an integer >= 0"):
        c.valid_nonnegative_int(-1, "m")


# ------------------------------------------------------------------------------ arrays
def test_valid_values_accepts_numbers_and_returns_floats():
    out = c.valid_values([1, 2, 3], "v")
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0, 3.0]
    assert c.valid_values(5, "v").shape == ()
    assert c.valid_values(np.array([[1, 2]], dtype=np.int8), "v").shape == (1, 2)
    assert c.valid_values(np.array([1, 2], dtype=object), "v").dtype == np.float64
    assert c.valid_values([Fraction(1, 2)], "v").tolist() == [0.5]
    assert c.valid_values([], "v", allow_empty=True).shape == (0,)
    assert c.valid_values([np.inf], "v", allow_inf=True)[0] == np.inf


@pytest.mark.parametrize("bad,exc,text", [
    ("12", TypeError, "numeric"), (True, TypeError, "numeric"), (np.bool_(False), TypeError, "numeric"),
    ([True, False], TypeError, "boolean"), (["1", "2"], TypeError, "numeric"),
    ([1 + 2j], TypeError, "numeric"), ([1.0, None], TypeError, "real numbers"),
    (None, TypeError, "real numbers"), ([1, "a"], TypeError, "numeric"),
    ([[1, 2], [3]], TypeError, "numeric"), (np.array(["2020-01-01"], dtype="datetime64[D]"),
                                            TypeError, "numeric"),
    ([], ValueError, "empty"), ([1.0, np.nan], ValueError, "NaN"), ([np.inf], ValueError, "finite"),
    ([10**400], ValueError, "finite"),
])
def test_valid_values_refuses(bad, exc, text):
    with pytest.raises(exc, match="my_values") as info:
        c.valid_values(bad, "my_values")
    assert text in str(info.value)


def test_valid_scores():
    assert c.valid_scores([3, 1, 2]).tolist() == [3.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="scores must be one-dimensional"):
        c.valid_scores([[1, 2]])
    with pytest.raises(ValueError, match="scores must be one-dimensional"):
        c.valid_scores(3.0)
    with pytest.raises(ValueError, match="utilities must not contain NaN"):
        c.valid_scores([1, np.nan], "utilities")


def test_valid_bits():
    out = c.valid_bits([0, 1, 1])
    assert out.dtype == np.int8 and out.tolist() == [0, 1, 1]
    assert c.valid_bits([True, False]).tolist() == [1, 0]
    assert c.valid_bits(np.array([0.0, 1.0])).tolist() == [0, 1]
    assert c.valid_bits(1).shape == ()
    for bad in ([0, 2], [0.5], [-1], [np.nan], [0, 1, np.inf]):
        with pytest.raises(ValueError, match="reports must contain only 0 and 1"):
            c.valid_bits(bad, "reports")
    for bad in ("0101", b"01", ["0", "1"], [0, None], None):
        with pytest.raises(TypeError, match="reports"):
            c.valid_bits(bad, "reports")
    for empty in ([], np.array([], dtype=bool)):
        with pytest.raises(ValueError, match="reports must not be empty"):
            c.valid_bits(empty, "reports")


# ------------------------------------------------------------------------- rng and size
def test_valid_rng():
    g = np.random.default_rng(1)
    assert c.valid_rng(g) is g
    assert isinstance(c.valid_rng(None), np.random.Generator)
    assert c.valid_rng(None) is not c.valid_rng(None)
    assert c.valid_rng(5).random() == np.random.default_rng(5).random()
    assert c.valid_rng(np.int64(5)).random() == np.random.default_rng(5).random()
    for bad in (np.random.RandomState(0), np.random, True, 1.5, "seed"):
        with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
            c.valid_rng(bad)


def test_valid_size():
    assert c.valid_size(None) is None
    assert c.valid_size(5) == 5 and c.valid_size(0) == 0
    assert c.valid_size(np.int64(3)) == 3
    assert c.valid_size((2, 3)) == (2, 3)
    assert c.valid_size([2, 3]) == (2, 3)
    assert c.valid_size(()) == ()
    for bad, exc in ((-1, ValueError), (2.5, ValueError), ((2, -1), ValueError), (True, TypeError),
                     ("5", TypeError), (np.nan, ValueError)):
        with pytest.raises(exc, match="size"):
            c.valid_size(bad)


def test_all_lists_every_validator():
    for name in c.__all__:
        assert callable(getattr(c, name))


# -------------------------------------------------------------- one verb, one order
# "check" is the coursework's word (grading an answer); a parameter validator is valid_*.
_COURSEWORK = {"coursework", "assignments", "grading", "exercises", "_nbgrader", "_feedback",
               "_mechanism_judge", "_mechanism_stats", "_anonymity_checks", "_grade_kernel",
               "_grade_runner", "_grade_report", "_sandbox"}


def _lesson_sources():
    import pathlib

    root = pathlib.Path(c.__file__).parent
    for path in sorted(root.rglob("*.py")):
        parts = {p.removesuffix(".py") for p in path.relative_to(root).parts}
        if not parts & _COURSEWORK:
            yield path


def test_no_lesson_or_support_function_is_called_check():
    import ast

    found = [f"{path.name}:{node.lineno} {node.name}"
             for path in _lesson_sources()
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
             and node.name.lstrip("_").startswith("check_")]
    assert not found, found


def test_validators_take_the_value_first_and_its_name_second():
    import inspect

    for fname in c.__all__:
        params = list(inspect.signature(getattr(c, fname)).parameters)
        if "name" in params:
            assert params.index("name") == 1, (fname, params)


def test_one_keyword_spelling_for_open_ends():
    import re

    for path in _lesson_sources():
        assert not re.search(r"\bopen_(low|high)\b", path.read_text()), path.name
