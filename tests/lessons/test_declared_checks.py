"""The parameter checks declared with ``@checked`` (dpteach/_validate.py).

Every public lesson function that declares its checks stores them as ``__checks__``; the
bad-input rows here are generated from those stored constraints and the one table of bad
values by kind (tests/_bad_values.py, :func:`bad_values_for`): every bad value of every
declared parameter must be refused with ValueError or TypeError naming the parameter,
before a random number is drawn. The decorator must also keep what a reader and the tools
see of the function: its name, docstring, signature and source.
"""

import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import dpteach
from dpteach import _validate as v
from dpteach import mechanisms, notebook, tradeoff
from _bad_values import bad_values_for


def _declared():
    """Every public callable of the lesson modules that declares its checks, and the
    methods of their public classes that do: {qualified name: function}."""
    found = {}
    for info in pkgutil.walk_packages(dpteach.__path__, "dpteach."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            members = vars(obj).items() if inspect.isclass(obj) else [(None, obj)]
            for attr, fn in members:
                if callable(fn) and hasattr(fn, "__checks__"):
                    label = f"{fn.__module__}.{fn.__qualname__}"
                    found.setdefault(label, fn)
    return found


DECLARED = _declared()

_LAPLACE_LOSS = tradeoff.privacy_loss_distribution("laplace", epsilon=1.0)

#: calls that work, where the declared kinds alone cannot make one (a module's own
#: validator, arguments that must agree with each other, a method): the callable and
#: its keyword arguments; every other function is called with GOOD values by kind
CALLS = {
    "dpteach.mechanisms.clamped_sum": (None, dict(values=[1.0, 7.0, 30.0], lower=0.0,
                                                  upper=10.0, epsilon=0.5, size=3)),
    "dpteach.mechanisms.sigma_curves": (None, dict(eps_grid=[0.5, 1.0], l2_sensitivity=1.0,
                                                   delta=1e-5)),
    "dpteach.mechanisms.exponential_mechanism": (None, dict(candidates=["a", "b"],
                                                            scores=[1.0, 2.0], sensitivity=1.0,
                                                            epsilon=0.5, size=4)),
    "dpteach.tradeoff.tradeoff_curve": (None, dict(alpha=0.1, epsilon=1.0)),
    "dpteach.tradeoff.gaussian_tradeoff": (None, dict(alpha=0.1, mu=1.0)),
    "dpteach.tradeoff.laplace_tradeoff": (None, dict(alpha=0.1, epsilon=1.0)),
    "dpteach.tradeoff.gdp_delta": (None, dict(epsilon=1.0, mu=1.0)),
    "dpteach.tradeoff.gdp_compose": (None, dict(mus=[0.5, 1.0])),
    "dpteach.tradeoff.privacy_loss_distribution": (None, dict(mechanism="laplace",
                                                              epsilon=1.0)),
    "dpteach.tradeoff.membership_attack": (None, dict(epsilon=1.0, n_trials=10)),
    "dpteach.tradeoff.outside_region": (None, dict(alpha=[0.1], beta=[0.5], n_out=100,
                                                   n_in=100, epsilon=1.0)),
    "dpteach.sparse_vector.above_threshold": (None, dict(query_answers=[1.0, 5.0, 2.0],
                                                         threshold=4.0, epsilon=1.0)),
    "dpteach.sparse_vector.sparse": (None, dict(query_answers=[1.0, 5.0, 2.0], threshold=4.0,
                                                epsilon=1.0, c=2)),
    "dpteach.sparse_vector.numeric_sparse": (None, dict(query_answers=[1.0, 5.0, 2.0],
                                                        threshold=4.0, epsilon=1.0, c=2)),
    "dpteach.sparse_vector.noisy_top_c": (None, dict(query_answers=[1.0, 5.0, 2.0],
                                                     epsilon=1.0, c=2)),
    "dpteach.beyond_global.ptr_median": (None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0],
                                                    lower=0.0, upper=10.0, epsilon=1.0,
                                                    delta=1e-5, proposed_bound=1.0)),
    "dpteach.clipping.quantile_interval_probabilities": (None, dict(values=[1.0, 7.0, 30.0],
                                                                     q=0.5, lower=0.0,
                                                                     upper=10.0, epsilon=1.0)),
    "dpteach.local.k_randomized_response": (None, dict(values=[0, 1, 2], k=3, epsilon=1.0)),
    "dpteach.local.unary_encoding": (None, dict(values=[0, 1, 2], k=3, epsilon=1.0)),
    "dpteach.local.olh_estimate": (None, dict(values=[0, 1, 2], k=3, epsilon=1.0)),
    "dpteach.sgd.clip_gradients": (None, dict(per_example_grads=[[3.0, 4.0], [0.1, 0.2]],
                                              clip=1.0)),
    "dpteach.attacks.reconstruction.lp_decode": (None, dict(queries=[[1, 0], [0, 1], [1, 1]],
                                                            answers=[1.0, 0.0, 1.0])),
    "dpteach.tradeoff.LossDistribution.tail": (_LAPLACE_LOSS.tail, dict(epsilon=0.5)),
    "dpteach.tradeoff.LossDistribution.delta": (_LAPLACE_LOSS.delta, dict(epsilon=0.5)),
    "dpteach.tradeoff.LossDistribution.epsilon": (_LAPLACE_LOSS.epsilon, dict(delta=0.01)),
}

#: a good value of each kind, for the functions not in CALLS
GOOD = {v.Real: 0.5, v.Reals: 0.5, v.Probability: 0.5, v.Epsilon: 0.5, v.Delta: 1e-5,
        v.Sensitivity: 1.0, v.PositiveInt: 3, v.NonnegativeInt: 3, v.PositiveInts: 3,
        v.Count: 3, v.Values: [1.0, 2.0], v.Scores: [1.0, 2.0], v.Bits: [0, 1, 1],
        v.Flag: False, v.Rng: 0, v.Size: 2}


def _good_call(label, fn):
    if label in CALLS:
        call, kwargs = CALLS[label]
        return call or fn, dict(kwargs)
    params = inspect.signature(fn).parameters
    return fn, {name: GOOD[type(check)] for name, check in fn.__checks__.items()
                if params[name].default is inspect.Parameter.empty}


def _rows():
    for label, fn in sorted(DECLARED.items()):
        for param, check in fn.__checks__.items():
            yield pytest.param(label, param, bad_values_for(check), id=f"{label}-{param}")


def test_the_lesson_modules_declare_their_checks():
    """mechanisms and tradeoff declare the checks of every public function; each stored
    constraint is one of the kinds the bad-value table knows."""
    for module in (mechanisms, tradeoff):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                assert hasattr(obj, "__checks__"), f"{module.__name__}.{name}"
    for label, fn in DECLARED.items():
        for param, check in fn.__checks__.items():
            assert bad_values_for(check), (label, param, check)
    assert len(DECLARED) >= 30


@pytest.mark.parametrize("label", sorted(DECLARED))
def test_the_good_call_works(label):
    call, kwargs = _good_call(label, DECLARED[label])
    call(**kwargs)


@pytest.mark.parametrize("label,param,bads", list(_rows()))
def test_every_declared_parameter_refuses_its_bad_values(label, param, bads):
    call, good = _good_call(label, DECLARED[label])
    slipped = []
    for bad in bads:
        kwargs = dict(good)
        rng = np.random.default_rng(0)
        if "rng" in inspect.signature(call).parameters and param != "rng":
            kwargs["rng"] = rng
        state = rng.bit_generator.state
        kwargs[param] = bad
        try:
            call(**kwargs)
        except (ValueError, TypeError) as err:
            if param not in str(err):
                slipped.append(f"{bad!r}: the message does not name {param}: {err}")
            elif rng.bit_generator.state != state:
                slipped.append(f"{bad!r}: a random number was drawn before the check")
        else:
            slipped.append(f"{bad!r}: accepted")
    assert not slipped, "\n".join(slipped)


def test_a_constraint_that_lets_bad_values_through_is_caught():
    """The wrong twin: an epsilon declared with a kind that accepts whatever it is given
    leaves the generated bad rows accepted, so the rows test the declaration."""
    class LaxEpsilon(v.Epsilon):
        validator = staticmethod(lambda value, name: value)

    @v.checked(epsilon=LaxEpsilon())
    def scale(epsilon):
        return 1.0 / epsilon if epsilon else 0.0

    accepted = []
    for bad in bad_values_for(scale.__checks__["epsilon"]):
        try:
            scale(epsilon=bad)
        except (ValueError, TypeError, ZeroDivisionError):
            continue
        accepted.append(bad)
    assert len(accepted) >= 5


@pytest.mark.parametrize("label", sorted(DECLARED))
def test_the_decorator_keeps_name_docstring_signature_and_source(label):
    fn = DECLARED[label]
    inner = inspect.unwrap(fn)
    assert inner is not fn and fn.__wrapped__ is inner
    assert (fn.__name__, fn.__qualname__, fn.__doc__, fn.__module__) == \
        (inner.__name__, inner.__qualname__, inner.__doc__, inner.__module__)
    assert inspect.signature(fn) == inspect.signature(inner)
    assert fn.__doc__ and "@checked(" not in fn.__doc__
    source = inspect.getsource(fn)
    assert source.lstrip().startswith("@checked(") and f"def {fn.__name__}(" in source
    assert set(fn.__checks__) <= set(inspect.signature(fn).parameters)


def test_show_source_shows_the_declaration_one_parameter_per_line_at_most():
    shown = notebook.show_source(mechanisms.laplace_mechanism).data
    lines = shown.splitlines()
    assert lines[1].startswith("@checked(value=Values(), sensitivity=Sensitivity()")
    assert "def laplace_mechanism(value, sensitivity, epsilon, *, rng=None, size=None):" in shown
    assert "valid_" not in shown.split('"""')[-1]        # the body is the mathematics
    for label, fn in DECLARED.items():
        source = inspect.getsource(fn)
        declaration = source[:source.index(f"def {fn.__name__}(")]
        assert declaration.count("\n") <= len(fn.__checks__), label


def test_checks_run_in_the_declared_order_on_given_and_default_values():
    seen = []

    class Note(v.Constraint):
        validator = staticmethod(lambda value, name: seen.append(name) or value)

    @v.checked(b=Note(), a=Note(), rng=v.Rng())
    def f(a, b=2, *, rng=None):
        return a, b, rng

    a, b, rng = f(1)
    assert seen == ["b", "a"] and (a, b) == (1, 2)
    assert isinstance(rng, np.random.Generator)           # the default went through Rng
    assert f(1, rng=7)[2].random() == np.random.default_rng(7).random()
    assert f.__checks__["rng"].options == {} and repr(f.__checks__["a"]) == "Note()"


def test_a_call_that_does_not_fit_gets_python_s_own_type_error():
    plain = mechanisms.laplace_mechanism.__wrapped__
    for args, kwargs in [((1.0, 1.0), {}), ((1.0, 1.0, 0.5, 4), {}),
                         ((1.0, 1.0, float("nan")), {"value": 1.0}),
                         ((1.0, 1.0, 0.5), {"seed": 3})]:
        with pytest.raises(TypeError) as wrapped:
            mechanisms.laplace_mechanism(*args, **kwargs)
        with pytest.raises(TypeError) as bare:
            plain(*args, **kwargs)
        assert str(wrapped.value) == str(bare.value)


def test_a_declaration_that_names_no_parameter_or_refuses_its_default_is_refused():
    with pytest.raises(TypeError, match="no parameter 'eps'"):
        v.checked(eps=v.Epsilon())(lambda epsilon: epsilon)
    with pytest.raises(TypeError, match="must be a Constraint"):
        v.checked(epsilon=v.valid_epsilon)(lambda epsilon: epsilon)
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        v.checked(epsilon=v.Epsilon())(lambda epsilon=None: epsilon)
