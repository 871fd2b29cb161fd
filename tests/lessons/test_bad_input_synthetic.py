"""Bad and extreme input for every public function of dpteach.synthetic (issue 31).

Three tables, in the house style of tests/test_bad_input.py and tests/_bad_values.py:

* ``_TABLE``: the usual bad values by kind (NaN, infinities, booleans, strings, None,
  empty and ragged arrays, wrong shapes): each raises ValueError or TypeError naming the
  parameter, before any random number is drawn;
* ``_EDGES``: well-formed extremes (1e-320, 1e308, 10**400, -1e-320 for reals; 10**12,
  10**400, 1e308 and 1e-320 for counts and sizes; the first entry of an array replaced by
  each extreme): each is refused by name or answered finitely, within a few seconds;
* ``_HUGE``: sizes that would need gigabytes or minutes (issue 31: ``range_queries(1000)``
  raised MemoryError, ``mwem(passes=1000)`` ran for half a minute): refused by name at once,
  checked in a child process limited to 1 GB of address space.

The rows come from a fuzz over every parameter of every public function (1,231 probes,
each in a forked child with a 2 GB and 20 s limit); a public function added to the module
without rows fails ``test_every_public_function_has_rows``.
"""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from _bad_values import (BAD_COUNT, BAD_EPSILON, BAD_REAL, BAD_RNG, BAD_SEED, BAD_VALUES, EXTREME,
                         EXTREME_SIZES, check_row, is_finite_answer, rows)

from dpteach import synthetic as syn

H = [3.0, 1.0, 2.0]
T2 = [[3.0, 1.0], [2.0, 2.0]]
Q3 = np.eye(3)
BAD_HISTOGRAM = BAD_VALUES + [[], [[1.0, 2.0], [3.0]], [-1.0, 1.0, 1.0], [0.0, 0.0, 0.0],
                              [1e308, 1e308, 1.0], [1e308] * 3]
BAD_QUERIES = [np.eye(2), 0.5 * Q3, 2 * Q3, "q", None, [[1.0, 0.0], [1.0]], np.full((2, 3), np.nan),
               [[True, False, False]], np.zeros((0, 3))]
BAD_NEIGHBOURS = ["sub", "add-remove", None, 2, True]
BAD_ORDER = BAD_COUNT + [3]              # a (2, 3) table has only two attributes
BAD_SHAPE = [(), "ab", None, (2, 0), (2, -1), (2.5, 2), [2, "a"], (True, 2), 1.5]

_TABLE = [
    (syn.mwem, dict(histogram=H, queries=Q3, epsilon=1.0, iterations=2),
     dict(histogram=BAD_HISTOGRAM, queries=BAD_QUERIES, epsilon=BAD_EPSILON, iterations=BAD_COUNT,
          passes=BAD_COUNT, release=["mean", None, 1, "Last"], rng=BAD_RNG)),
    (syn.mwem_rounds, dict(histogram=H, queries=Q3, epsilon=1.0, iterations=2),
     dict(histogram=BAD_HISTOGRAM, queries=BAD_QUERIES, epsilon=BAD_EPSILON, iterations=BAD_COUNT,
          passes=BAD_COUNT, rng=BAD_RNG)),
    (syn.mwem_error_bound, dict(n=100.0, domain_size=32, n_queries=180, epsilon=1.0, iterations=10),
     dict(n=BAD_REAL + [0.0, -1.0], domain_size=BAD_COUNT, n_queries=BAD_COUNT, epsilon=BAD_EPSILON,
          iterations=[0, -1, 2.5, float("nan"), float("inf"), True, "3", None, [1, 0], [2.5], 10 ** 400])),
    (syn.multiplicative_weights_update, dict(synthetic=[2.0, 2.0, 2.0], query=[1, 0, 0], measurement=3.0),
     dict(synthetic=BAD_HISTOGRAM + [3.0], query=[[1, 0], [0.5, 0, 0], [[1, 0, 0], [0, 1, 0]], "q", None,
                                                  [True, False, False], [np.nan, 0, 0]],
          measurement=BAD_REAL, total=[v for v in BAD_EPSILON if v is not None] + [1e-320])),
    (syn.mwem_selection_probabilities, dict(histogram=H, synthetic=[2.0, 2.0, 2.0], queries=Q3, epsilon_round=0.5),
     dict(histogram=BAD_HISTOGRAM, synthetic=BAD_HISTOGRAM + [[1.0, 2.0]], queries=BAD_QUERIES,
          epsilon_round=BAD_EPSILON)),
    (syn.range_queries, dict(domain_size=4), dict(domain_size=BAD_COUNT + [272, 10 ** 6, 10 ** 400])),
    (syn.table_workload, dict(n_rows=3, n_cols=2), dict(n_rows=BAD_COUNT + [10 ** 400], n_cols=BAD_COUNT)),
    (syn.marginal_queries, dict(shape=(2, 3), order=2), dict(shape=BAD_SHAPE, order=BAD_ORDER)),
    (syn.workload_error, dict(histogram=H, synthetic=[2.0, 2.0, 2.0], queries=Q3),
     dict(histogram=BAD_VALUES + [[], [1.0, 2.0]], synthetic=BAD_VALUES + [[1.0, 2.0]],
          queries=BAD_QUERIES)),
    (syn.example_table, dict(seed=20), dict(seed=BAD_SEED)),
    (syn.example_binary_table, dict(n_attributes=4, n_records=50, seed=1),
     dict(n_attributes=BAD_COUNT + [21], n_records=BAD_COUNT + [10 ** 6 + 1], seed=BAD_SEED)),
    (syn.noisy_histogram, dict(histogram=T2, epsilon=1.0),
     dict(histogram=BAD_HISTOGRAM, epsilon=BAD_EPSILON + [1e-320], neighbours=BAD_NEIGHBOURS, rng=BAD_RNG)),
    (syn.marginals_scale, dict(n_marginals=2, epsilon=1.0),
     dict(n_marginals=BAD_COUNT, epsilon=BAD_EPSILON + [1e-320], neighbours=BAD_NEIGHBOURS)),
    (syn.noisy_marginals, dict(table=T2, epsilon=1.0),
     dict(table=BAD_HISTOGRAM + [3.0], epsilon=BAD_EPSILON + [1e-320], neighbours=BAD_NEIGHBOURS, rng=BAD_RNG)),
    (syn.independent_marginals, dict(table=T2, epsilon=1.0),
     dict(table=BAD_HISTOGRAM + [[1.0, 2.0], 3.0], epsilon=BAD_EPSILON + [1e-320], neighbours=BAD_NEIGHBOURS,
          rng=BAD_RNG)),
    (syn.sample_records, dict(synthetic=T2, n_records=5),
     dict(synthetic=BAD_VALUES + [[], [-1.0, -2.0], [0.0, 0.0], [1e308, 1e308]],
          n_records=[-1, 2.5, float("nan"), True, "3", None, 10 ** 12], rng=BAD_RNG)),
]


@pytest.mark.parametrize("func, good, param, bad", rows(_TABLE))
def test_bad_values_are_refused_naming_the_parameter(func, good, param, bad):
    check_row(func, good, param, bad)


# ----------------------------------------------------------------- well-formed extremes
BIG = syn.example_table()
BIG_Q = syn.table_workload(8, 4)
#: (function, good kwargs, real parameters, count parameters, array parameters)
_EDGES = [
    (syn.mwem, dict(histogram=H, queries=Q3, epsilon=1.0, iterations=2, rng=0), ("epsilon",),
     ("iterations", "passes"), ("histogram",)),
    (syn.mwem, dict(histogram=BIG, queries=BIG_Q, epsilon=1.0, iterations=15, passes=5, release="average",
                    rng=0), ("epsilon",), ("iterations", "passes"), ()),
    (syn.mwem_rounds, dict(histogram=H, queries=Q3, epsilon=1.0, iterations=3, passes=2, rng=0), ("epsilon",),
     ("iterations", "passes"), ("histogram",)),
    (syn.mwem_error_bound, dict(n=100.0, domain_size=32, n_queries=180, epsilon=1.0, iterations=10),
     ("n", "epsilon"), ("domain_size", "n_queries", "iterations"), ()),
    (syn.multiplicative_weights_update, dict(synthetic=[2.0, 2.0, 2.0], query=[1, 0, 0], measurement=3.0),
     ("measurement", "total"), (), ("synthetic",)),
    (syn.mwem_selection_probabilities, dict(histogram=H, synthetic=[2.0, 2.0, 2.0], queries=Q3,
                                            epsilon_round=0.5), ("epsilon_round",), (), ("histogram", "synthetic")),
    (syn.range_queries, dict(domain_size=4), (), ("domain_size",), ()),
    (syn.table_workload, dict(n_rows=3, n_cols=2), (), ("n_rows", "n_cols"), ()),
    (syn.marginal_queries, dict(shape=(2, 3), order=2), (), ("order",), ("shape",)),
    (syn.workload_error, dict(histogram=H, synthetic=[2.0, 2.0, 2.0], queries=Q3), (), (),
     ("histogram", "synthetic")),
    (syn.example_table, dict(seed=20), (), ("seed",), ()),
    (syn.example_binary_table, dict(n_attributes=4, n_records=50, seed=1), (), ("n_attributes", "n_records", "seed"),
     ()),
    (syn.noisy_histogram, dict(histogram=T2, epsilon=1.0, rng=0), ("epsilon",), (), ("histogram",)),
    (syn.marginals_scale, dict(n_marginals=2, epsilon=1.0), ("epsilon",), ("n_marginals",), ()),
    (syn.noisy_marginals, dict(table=T2, epsilon=1.0, rng=0), ("epsilon",), (), ("table",)),
    (syn.independent_marginals, dict(table=T2, epsilon=1.0, rng=0), ("epsilon",), (), ("table",)),
    (syn.independent_marginals, dict(table=T2, epsilon=1.0, neighbours="add_remove", rng=0), ("epsilon",), (),
     ("table",)),
    (syn.sample_records, dict(synthetic=T2, n_records=5, rng=0), (), ("n_records",), ("synthetic",)),
]


def _edge_rows():
    out = []
    for func, good, reals, sizes, arrays in _EDGES:
        for kind, params, values in (("real", reals, EXTREME), ("size", sizes, EXTREME_SIZES),
                                     ("array", arrays, EXTREME)):
            for p in params:
                out.append(pytest.param(func, good, p, kind, values, id=f"{func.__name__}-{p}-{len(out)}"))
    return out


def _replace_first(value, v):
    if isinstance(value, tuple):                  # a shape: its first size
        return (v,) + value[1:]
    arr = np.array(value, dtype=object)
    arr.flat[0] = v
    return arr.tolist()


def _alarm(signum, frame):
    raise TimeoutError("the call ran for over 20 s")


@pytest.mark.parametrize("func, good, param, kind, values", _edge_rows())
def test_extremes_are_refused_by_name_or_answered_finitely(func, good, param, kind, values):
    problems = []
    for v in values:
        kwargs = dict(good)
        kwargs[param] = _replace_first(good[param], v) if kind == "array" else v
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(20)
        try:
            out = func(**kwargs)
        except (ValueError, TypeError) as err:
            if param not in str(err) and not (kind == "array" and param == "shape" and "shape" in str(err)):
                problems.append(f"{param}={v!r}: the message does not name {param!r}: {err}")
            continue
        except Exception as err:                  # noqa: BLE001 - reported, not hidden
            problems.append(f"{param}={v!r}: raised {type(err).__name__}: {err}")
            continue
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        if not is_finite_answer(out):
            problems.append(f"{param}={v!r} returned a non-finite answer: {out!r}")
    assert not problems, "\n".join(problems)


def test_the_answers_at_the_extremes_are_right():
    """Accepted extremes give the right answer, not only a finite one."""
    # a subnormal epsilon: selection uniform, the measurement's noise astronomically large,
    # so one update moves (almost) all mass to one side; the total is kept
    out = syn.mwem(H, Q3, 1e-320, 1, rng=0)
    assert out.sum() == pytest.approx(6.0) and np.isclose(out, 0).sum() >= 1
    # a huge epsilon: the exact worst query is measured exactly
    for seed in range(5):                         # errors 3, 1, 2 at the uniform start: query 0
        history, chosen = syn.mwem_rounds([5.0, 1.0, 0.0], Q3, 1e308, 1, rng=seed)
        exact = syn.multiplicative_weights_update([2.0, 2.0, 2.0], [1, 0, 0], 5.0)   # noise 0: m = q(x)
        assert chosen == [0] and np.allclose(history[1], exact, rtol=1e-12)
    # a measurement beyond what exp can take: the covered cells take everything
    assert np.allclose(syn.multiplicative_weights_update([1.0, 2.0, 3.0], [1, 0, 0], 1e308), [6.0, 0.0, 0.0])
    assert np.allclose(syn.multiplicative_weights_update([1.0, 2.0, 3.0], [1, 0, 0], -1e308), [0.0, 2.4, 3.6])
    assert syn.mwem_error_bound(1.0, 10 ** 400, 2, 1.0, 1) == pytest.approx(2 * np.sqrt(400 * np.log(10)) + 10 * np.log(2))
    assert syn.sample_records(T2, 0, rng=0).shape == (0, 2)


# -------------------------------------------------------------- huge sizes, in a child
_HUGE = textwrap.dedent("""
    import resource, time, numpy as np
    resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))
    from dpteach import synthetic as syn
    t, q = syn.example_table(), syn.table_workload(8, 4)
    calls = [("domain_size", lambda: syn.range_queries(1000)), ("domain_size", lambda: syn.range_queries(2000)),
             ("n_rows", lambda: syn.table_workload(2000, 100)),
             ("order", lambda: syn.marginal_queries((2,) * 20, 2)),
             ("passes", lambda: syn.mwem(t, q, 1.0, 100, passes=1000)),
             ("passes", lambda: syn.mwem(t, q, 1.0, 15, passes=100_000)),
             ("iterations", lambda: syn.mwem(t, q, 1.0, 10 ** 12)),
             ("n_records", lambda: syn.sample_records(t, 10 ** 12)),
             ("n_records", lambda: syn.example_binary_table(12, 10 ** 12))]
    for name, call in calls:
        start = time.time()
        try:
            call()
            print("ACCEPTED", name)
        except (ValueError, TypeError) as err:
            assert name in str(err), (name, str(err))
            assert time.time() - start < 1.0, (name, time.time() - start)
    print("done")
""")


def test_huge_sizes_are_refused_at_once_within_a_gigabyte():
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    run = subprocess.run([sys.executable, "-c", _HUGE], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["done"], run.stdout


def test_every_public_function_has_rows():
    import inspect
    covered = {}
    for func, _good, bad in _TABLE:
        covered.setdefault(func, set()).update(bad)
    missing = []
    for name in syn.__all__:
        obj = getattr(syn, name)
        if not callable(obj):
            continue
        params = set(inspect.signature(obj).parameters)
        gaps = params - covered.get(obj, set())
        if gaps:
            missing.append(f"{name}: {sorted(gaps)}")
    assert not missing, "public functions of dpteach.synthetic without bad-input rows:\n" + "\n".join(missing)
    assert {f for f, *_ in _EDGES} >= {getattr(syn, n) for n in syn.__all__ if callable(getattr(syn, n))}
