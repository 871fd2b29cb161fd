"""dpteach.sensitivity: the course's sensitivities confirmed by brute force, checked
against an independent (slow, obvious) enumeration, and bad input refused."""

import itertools
import math
import statistics
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpteach as dp
from dpteach import sensitivity as sens

U101 = list(range(101))


def mean_rows(X):
    return X.mean(axis=1)


def median_rows(X):
    return np.median(X, axis=1)


# --------------------------------------------------------------- a slow reference
def naive_sensitivity(query, universe, size, neighbours, norm=1, ordered=False):
    """Obvious brute force: every dataset, every pair, compare. Quadratic and slow."""
    maker = itertools.product if ordered else itertools.combinations_with_replacement
    sizes = range(0, size + 1) if neighbours == "add_remove" else (size,)
    answers = {}
    for m in sizes:
        for d in (maker(universe, repeat=m) if ordered else maker(universe, m)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    v = query(np.array(d))
            except (ArithmeticError, ValueError, IndexError):
                continue
            v = np.atleast_1d(np.asarray(v, float))
            if not np.isnan(v).any():
                answers[tuple(d)] = v
    best = 0.0
    for x, fx in answers.items():
        for y, fy in answers.items():
            if neighbours == "add_remove":
                if len(y) != len(x) + 1:
                    continue
                if ordered:
                    ok = any(y[:i] + y[i + 1:] == x for i in range(len(y)))
                else:
                    ok = any(tuple(sorted(y[:i] + y[i + 1:])) == x for i in range(len(y)))
            else:
                ok = sum(a != b for a, b in zip(x, y)) == 1 if ordered else (
                    sum((__import__("collections").Counter(x) - __import__("collections").Counter(y)).values()) == 1)
            if ok:
                d = fx - fy
                best = max(best, float(np.abs(d).sum() if norm == 1 else np.sqrt((d ** 2).sum())))
    return best


# ------------------------------------------------------------- the course's values
@pytest.mark.parametrize("neighbours", ["add_remove", "substitute"])
def test_count_has_sensitivity_one(neighbours):
    count = lambda d: np.sum(d >= 50)
    assert dp.global_sensitivity(count, U101, 2, neighbours=neighbours) == 1.0


def test_histogram_add_remove_1_substitute_2():
    cats = ["flu", "cold", "covid", "none"]
    hist = lambda d: [np.sum(d == c) for c in cats]
    # seed 001: add/remove one record -> one bar moves by one
    assert dp.global_sensitivity(hist, cats, 4) == 1.0
    assert dp.global_sensitivity(hist, cats, 4, norm=2) == 1.0
    # seed 004: substitution -> one bar down, another up
    assert dp.global_sensitivity(hist, cats, 4, neighbours="substitute") == 2.0
    assert math.isclose(dp.global_sensitivity(hist, cats, 4, neighbours="substitute", norm=2),
                        math.sqrt(2))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_mean_substitute_is_100_over_n(n):
    got = dp.global_sensitivity(mean_rows, U101, n, neighbours="substitute", batched=True,
                                details=True)
    assert math.isclose(got.value, 100 / n)
    assert math.isclose(abs(np.mean(got.x) - np.mean(got.y)), 100 / n)


def test_mean_add_remove_depends_on_smallest_dataset():
    # sizes 0..n: the pair {0} vs {0, 100} changes the mean by 50 whatever n is
    for n in (2, 3):
        res = dp.global_sensitivity(mean_rows, U101, n, batched=True, details=True)
        assert res.value == 50.0 and len(res.x) == 1
        assert res.n_undefined == 1            # the empty dataset
    # with sizes n-1 and n only (n about known), it is 100/n
    for n in (2, 3, 4):
        assert math.isclose(dp.global_sensitivity(mean_rows, [0, 30, 100], n, min_size=n - 1,
                                                  batched=True), 100 / n)


def test_median_depends_on_neighbours_and_parity():
    # odd n, substitution: the seed's 100 ({0,0,100} -> {0,100,100})
    res = dp.global_sensitivity(median_rows, U101, 3, neighbours="substitute", batched=True,
                                details=True)
    assert res.value == 100.0
    assert sorted(res.x) != sorted(res.y)
    # even n with the usual median (average of the middle two): only 50
    assert dp.global_sensitivity(median_rows, [0, 50, 100], 4, neighbours="substitute",
                                 batched=True) == 50.0
    # add/remove: 50 ({0} -> {0, 100})
    assert dp.global_sensitivity(median_rows, U101, 3, batched=True) == 50.0
    # the lower median keeps the seed's 100 at even n
    low = lambda d: np.sort(d)[(len(d) - 1) // 2]
    assert dp.global_sensitivity(low, [0, 50, 100], 4, neighbours="substitute") == 100.0


def test_median_jump_only_from_extreme_split():
    # with odd n the jump 0 -> 100 needs (n-1)/2 zeros and (n-1)/2 hundreds around it
    for n in (3, 5):
        res = dp.global_sensitivity(np.median, [0, 50, 100], n, neighbours="substitute",
                                    details=True)
        assert res.value == 100.0
        both = sorted(res.x) + sorted(res.y)
        assert both.count(0) == n and both.count(100) == n


# ------------------------------------------------ agreement with the slow reference
@pytest.mark.parametrize("neighbours", ["add_remove", "substitute"])
@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("name,query,norm", [
    ("sum", np.sum, 1),
    ("max", np.max, 1),
    ("first", lambda d: d[0], 1),
    ("var", np.var, 1),
    ("vec", lambda d: [d.sum(), d.max() - d.min()], 1),
    ("vec2", lambda d: [d.sum(), d.max() - d.min()], 2),
    ("hist", lambda d: [np.sum(d == 0), np.sum(d == 2)], 1),
])
def test_matches_naive_reference(name, query, norm, neighbours, ordered):
    U = [0, 2, 7]
    got = dp.global_sensitivity(query, U, 3, neighbours=neighbours, norm=norm, ordered=ordered)
    assert math.isclose(got, naive_sensitivity(query, U, 3, neighbours, norm, ordered),
                        rel_tol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=4, unique=True),
       st.integers(1, 3), st.sampled_from(["add_remove", "substitute"]),
       st.sampled_from([1, 2]))
def test_random_vector_queries_match_reference(universe, size, neighbours, norm):
    q = lambda d: [np.sum(d ** 2), np.min(d)]
    assert math.isclose(dp.global_sensitivity(q, universe, size, neighbours=neighbours, norm=norm),
                        naive_sensitivity(q, universe, size, neighbours, norm), rel_tol=1e-12)


def test_batched_and_ordered_agree_on_symmetric_queries():
    U = [0, 10, 20, 100]
    for nb in ("add_remove", "substitute"):
        a = dp.global_sensitivity(np.median, U, 3, neighbours=nb)
        b = dp.global_sensitivity(median_rows, U, 3, neighbours=nb, batched=True)
        c = dp.global_sensitivity(np.median, U, 3, neighbours=nb, ordered=True)
        assert a == b == c


def test_order_dependent_query_differs():
    # "the first record": as a multiset it is the smallest, as a sequence anything
    first = lambda d: d[0]
    assert dp.global_sensitivity(first, [0, 5], 2, neighbours="substitute") == 5.0
    assert dp.global_sensitivity(first, [0, 5], 2, neighbours="substitute", ordered=True) == 5.0
    # "how many times does the next record go down?": a multiset is read sorted (0)
    descents = lambda d: np.sum(np.diff(d) < 0)
    assert dp.global_sensitivity(descents, [0, 5], 3, neighbours="substitute") == 0.0
    assert dp.global_sensitivity(descents, [0, 5], 3, neighbours="substitute",
                                 ordered=True) == 1.0


def test_witness_is_a_neighbouring_pair_attaining_the_value():
    res = dp.global_sensitivity(lambda d: d.sum() ** 2, [1, 2, 3], 3, details=True)
    assert abs(len(res.x) - len(res.y)) == 1
    big, small = (res.x, res.y) if len(res.x) > len(res.y) else (res.y, res.x)
    assert any(sorted(big[:i] + big[i + 1:]) == sorted(small) for i in range(len(big)))
    assert math.isclose(abs(sum(res.x) ** 2 - sum(res.y) ** 2), res.value)
    assert res.value == 9 ** 2 - 6 ** 2
    assert float(res) == res.value


# ----------------------------------------------------------- undefined answers
def test_undefined_datasets_are_skipped():
    def mean_py(d):
        return sum(d) / len(d)          # ZeroDivisionError on the empty dataset
    res = dp.global_sensitivity(mean_py, [0, 100], 2, details=True)
    assert res.value == 50.0 and res.n_undefined == 1
    assert dp.global_sensitivity(lambda d: statistics.mean(d.tolist()), [0, 100], 2) == 50.0
    assert dp.global_sensitivity(lambda d: None if len(d) < 2 else d.max(), [0, 9], 3) == 9.0


def test_bugs_in_the_query_are_not_hidden():
    with pytest.raises(TypeError):
        dp.global_sensitivity(lambda d: d + "x", [0, 1], 2)
    with pytest.raises(ValueError, match="undefined"):
        dp.global_sensitivity(lambda d: float("nan"), [0, 1], 2)
    with pytest.raises(ValueError, match="one length"):
        dp.global_sensitivity(lambda d: list(d), [0, 1], 2, neighbours="add_remove")
    with pytest.raises(ValueError, match="infinite"):
        dp.global_sensitivity(lambda d: np.inf, [0, 1], 2)
    with pytest.raises(ValueError, match="one answer per dataset"):
        dp.global_sensitivity(lambda X: X.sum(), [0, 1], 2, batched=True)


def test_no_defined_pair_gives_zero():
    # the mean with at most one record: no pair with both answers defined
    assert dp.global_sensitivity(np.mean, [0, 100], 1) == 0.0


def test_size_limit_is_checked_before_work():
    with pytest.raises(ValueError, match="max_datasets"):
        dp.global_sensitivity(np.sum, U101, 4)

# how fast global_sensitivity is on notebook-sized universes: benchmarks/bench_sensitivity.py


# ----------------------------------------------------------- local sensitivity
def test_local_sensitivity_of_median_and_mean():
    x = [40, 41, 42, 43, 44]
    assert sens.local_sensitivity(np.median, x, U101, neighbours="substitute") == 1.0
    assert sens.local_sensitivity(np.median, x, U101) == 0.5
    assert sens.local_sensitivity(np.mean, x, U101, neighbours="substitute") == 12.0
    # the extreme split {0,0,100}: local equals global
    assert sens.local_sensitivity(np.median, [0, 0, 100], U101, neighbours="substitute") == 100.0
    assert sens.local_sensitivity(median_rows, [0, 0, 100], U101, neighbours="substitute",
                                  batched=True) == 100.0


def test_local_never_exceeds_global():
    U = [0, 3, 10]
    g = dp.global_sensitivity(np.median, U, 3, neighbours="substitute")
    for d in itertools.combinations_with_replacement(U, 3):
        assert sens.local_sensitivity(np.median, d, U, neighbours="substitute") <= g
    assert max(sens.local_sensitivity(np.median, d, U, neighbours="substitute")
               for d in itertools.combinations_with_replacement(U, 3)) == g


def test_local_sensitivity_of_empty_dataset_add_remove():
    assert sens.local_sensitivity(lambda d: len(d), [], [1, 2]) == 1.0
    with pytest.raises(ValueError, match="undefined"):
        sens.local_sensitivity(np.mean, [], [1, 2])


# -------------------------------------------------------------- histograms
def test_seed003_histogram_and_distance():
    x = sens.histogram(["+", "-", "+", "-"], ["+", "-"])
    assert x.tolist() == [2, 2]                       # seed 003's x = (2 2)
    assert sens.l1_distance(x, [2, 2]) == 0.0
    assert sens.are_neighbours(x, [2, 1])             # one record removed
    assert not sens.are_neighbours(x, [3, 1])         # one substituted: l1 = 2
    assert sens.are_neighbours(x, [3, 1], neighbours="substitute")
    assert not sens.are_neighbours(x, [2, 1], neighbours="substitute")
    assert sens.l1_distance([3, 1], x) == 2.0
    assert math.isclose(sens.l2_distance([3, 1], x), math.sqrt(2))
    rows = [("Alice", "F", "+"), ("Bob", "M", "-")]
    assert sens.histogram(rows[:1] * 2, rows).tolist() == [2, 0]
    assert sens.l1_sensitivity(lambda d: len(d), [0, 1], 2) == 1.0
    assert sens.l2_sensitivity(lambda d: [len(d), len(d)], [0, 1], 2) == pytest.approx(math.sqrt(2))


# ------------------------------------------------------------------ bad input
GOOD = dict(query=np.sum, universe=[0, 1], size=2)


@pytest.mark.parametrize("change,exc,match", [
    (dict(query=3), TypeError, "query"),
    (dict(universe="abc"), TypeError, "universe"),
    (dict(universe=[]), ValueError, "universe"),
    (dict(universe=[1, 1, 2]), ValueError, "once"),
    (dict(universe=[0.0, float("nan")]), ValueError, "universe"),
    (dict(universe=[1, "a", (1, 2)]), TypeError, "universe"),
    (dict(size=0), ValueError, "size"),
    (dict(size=2.5), ValueError, "size"),
    (dict(size=True), TypeError, "size"),
    (dict(size="3"), TypeError, "size"),
    (dict(size=float("nan")), ValueError, "size"),
    (dict(neighbours="swap"), ValueError, "neighbours"),
    (dict(norm=3), ValueError, "norm"),
    (dict(norm=True), ValueError, "norm"),
    (dict(norm="1"), ValueError, "norm"),
    (dict(min_size=-1), ValueError, "min_size"),
    (dict(min_size=2), ValueError, "min_size"),
    (dict(ordered="yes"), TypeError, "ordered"),
    (dict(batched=1), TypeError, "batched"),
    (dict(details=None), TypeError, "details"),
    (dict(max_datasets=0), ValueError, "max_datasets"),
])
def test_global_sensitivity_bad_input(change, exc, match):
    args = {**GOOD, **change}
    q, u, s = args.pop("query"), args.pop("universe"), args.pop("size")
    with pytest.raises(exc, match=match):
        dp.global_sensitivity(q, u, s, **args)


@pytest.mark.parametrize("args,kwargs,exc,match", [
    ((np.median, [1, 2], [0, 1]), dict(neighbours="x"), ValueError, "neighbours"),
    ((np.median, [1, 2], [0, 1]), dict(norm=0), ValueError, "norm"),
    ((None, [1, 2], [0, 1]), {}, TypeError, "query"),
    ((np.median, "ab", [0, 1]), {}, TypeError, "dataset"),
    ((np.median, [[1, 2]], [0, 1]), {}, ValueError, "shape"),
    ((np.median, 3, [0, 1]), {}, ValueError, "shape"),
    ((np.median, [1, float("nan")], [0, 1]), {}, ValueError, "NaN"),
    ((np.median, [], [0, 1]), dict(neighbours="substitute"), ValueError, "at least one"),
    ((np.median, [1], []), {}, ValueError, "universe"),
    ((np.median, [1], [0, 1]), dict(batched="no"), TypeError, "batched"),
])
def test_local_sensitivity_bad_input(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        sens.local_sensitivity(*args, **kwargs)


@pytest.mark.parametrize("fn,args,kwargs,exc,match", [
    (sens.histogram, (["z"], ["a", "b"]), {}, ValueError, "universe"),
    (sens.histogram, ("ab", ["a", "b"]), {}, TypeError, "string"),
    (sens.histogram, ([[1, 2]], [1, 2]), {}, ValueError, "shape"),
    (sens.l1_distance, ([1, 2], [1]), {}, ValueError, "same length"),
    (sens.l1_distance, ([1, float("nan")], [1, 2]), {}, ValueError, "NaN"),
    (sens.l2_distance, ("ab", [1, 2]), {}, TypeError, "numeric"),
    (sens.l2_distance, ([[1], [2]], [[1], [2]]), {}, ValueError, "1-D"),
    (sens.are_neighbours, ([1, 2], [1, 1]), dict(neighbours="x"), ValueError, "neighbours"),
    (sens.are_neighbours, ([1, -2], [1, 1]), {}, ValueError, "histogram"),
    (sens.are_neighbours, ([1, 0.5], [1, 1]), {}, ValueError, "histogram"),
    (sens.l1_sensitivity, (np.sum, [0, 1], 0), {}, ValueError, "size"),
    (sens.l2_sensitivity, (np.sum, [0, 1], 1), dict(neighbours=1), ValueError, "neighbours"),
])
def test_helpers_bad_input(fn, args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)


def test_count_and_list_datasets():
    assert sens.count_datasets(101, 3) == math.comb(103, 3) == 176851
    assert sens.count_datasets(3, 2, ordered=True) == 9
    assert sens.count_datasets(5, 0) == 1
    d = sens.all_datasets([0, 5, 9], 2)
    assert d.tolist() == [[0, 0], [0, 5], [0, 9], [5, 5], [5, 9], [9, 9]]
    assert sens.all_datasets(["a", "b"], 2, ordered=True).shape == (4, 2)
    assert sens.all_datasets([1, 2], 0).shape == (1, 0)


@pytest.mark.parametrize("fn,args,kwargs,exc,match", [
    (sens.count_datasets, (0, 2), {}, ValueError, "universe_size"),
    (sens.count_datasets, (2.5, 2), {}, ValueError, "universe_size"),
    (sens.count_datasets, (3, -1), {}, ValueError, "size"),
    (sens.count_datasets, (3, True), {}, TypeError, "size"),
    (sens.count_datasets, (3, 2), dict(ordered=None), TypeError, "ordered"),
    (sens.all_datasets, ([], 2), {}, ValueError, "universe"),
    (sens.all_datasets, ([1, 1], 2), {}, ValueError, "once"),
    (sens.all_datasets, ([1, 2], float("nan")), {}, ValueError, "size"),
    (sens.all_datasets, (range(101), 4), {}, ValueError, "max_datasets"),
    (sens.all_datasets, ([1, 2], 2), dict(ordered=1), TypeError, "ordered"),
])
def test_dataset_helpers_bad_input(fn, args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)
