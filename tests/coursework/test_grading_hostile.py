"""The judge trusts nothing that crosses (issue 30, item 3): crafted payloads fed straight to
the transport and to the judges, no kernel or sandbox involved, so each test is fast.

* the transport: the 2 MB string of escaped quotes that made the old regular expression
  quadratic is scanned in linear time and refused; a 0.2 MB description of a 12,000 x
  12,000 DataFrame is refused before anything is allocated; deep nesting, huge numbers,
  made-up tags, dtypes and shapes are refused with a message that says why; honest data of
  every kind still round-trips, and the largest honest result fits the size cap;
* counts: A8 Task 3's counts of calls must be whole, non-negative and sum to the calls
  made (the red team's dyadic "exact expected counts" earn nothing), and counts that fit
  the expected counts too well fail as suspect, while sampled counts pass on every seed;
* fits too good: releases placed at the quantiles of the right distribution (A6, A8 Task 4)
  and antithetic Gaussian noise (A9 Task 2) fail; honest draws pass.
"""

import json
import math
import time
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpteach.coursework import _grade_report, _judging, assignments
from dpteach.coursework.assignments import _student, _transport
from dpteach.coursework.assignments import a8_clipping_svt as a8
from dpteach.sparse_vector import above_threshold_probabilities

from _tasks import run_task, tasks_of

ALPHA = 1e-6


def refused(text):
    """The ResultRefused message loads(text) raises (the test fails if it does not)."""
    with pytest.raises(_transport.ResultRefused) as info:
        _transport.loads(text)
    return str(info.value)


# ------------------------------------------------------------------ the linear scan
def _depth(obj):
    """Nesting depth of decoded JSON, the slow and obviously right way."""
    if isinstance(obj, list):
        return 1 + max((_depth(x) for x in obj), default=0)
    if isinstance(obj, dict):
        return 1 + max((_depth(x) for x in obj.values()), default=0)
    return 0


def _random_json(rng, level=0):
    r = rng.random()
    if level > 6 or r < 0.35:
        pieces = ['"', "\\", "[", "]", "{", "}", ",", ":", "a", "é", "\n"]
        return "".join(rng.choice(pieces, size=int(rng.integers(0, 8))))
    if r < 0.45:
        return float(rng.normal())
    if r < 0.75:
        return [_random_json(rng, level + 1) for _ in range(int(rng.integers(0, 4)))]
    return {_random_json(rng, 7): _random_json(rng, level + 1)
            for _ in range(int(rng.integers(0, 4)))}


@pytest.mark.parametrize("chunk", [3, 7, 1 << 20])
def test_the_scan_agrees_with_the_parser_on_strings_full_of_quotes_and_backslashes(
        monkeypatch, chunk):
    # tiny chunks put quotes and backslash runs across every chunk boundary
    monkeypatch.setattr(_transport, "_CHUNK", chunk)
    rng = np.random.default_rng(30)
    for _ in range(300):
        obj = _random_json(rng)
        text = json.dumps(obj, ensure_ascii=bool(rng.random() < 0.5))
        assert _transport.scan(text)[0] == _depth(json.loads(text)), text
        assert _grade_report.nesting_depth(text) == _depth(json.loads(text))
    assert _grade_report.nesting_depth('{"data": ["[[[[", {"a": "]]{"}]}') == 3
    assert _transport.scan(r'["\\", "\\\"[", [["\\\\"]]]')[0] == 3


def test_two_megabytes_of_escaped_quotes_are_scanned_and_refused_in_well_under_a_second(tmp_path):
    attack = '{"data": "' + '\\"' * 1_000_000 + '"}'                  # 2 MB, the red team's
    assert len(attack) > 2_000_000
    t0 = time.process_time()
    assert _grade_report.nesting_depth(attack) == 1
    message = refused(attack)
    assert time.process_time() - t0 < 1.0
    assert message.startswith("the result is too large to be data: a string of 1,000,000")
    # the same through the grader's verdict, from a file
    task = assignments.tasks("A0")[1]
    request, truth = task.request(None)
    result = tmp_path / "result.json"
    result.write_text(attack, encoding="utf-8")
    t0 = time.process_time()
    passed, text = _judging.verdict(task, result, request, truth)
    assert not passed and "too large to be data" in text
    assert time.process_time() - t0 < 1.0
    # and a file at the size cap, all quotes and backslashes, stays linear too
    worst = '"' + '\\"' * ((_transport.MAX_RESULT_BYTES - 2) // 2) + '"'
    t0 = time.process_time()
    assert _transport.scan(worst) == (0, 1)
    assert time.process_time() - t0 < 5.0


def test_the_result_file_is_capped_before_it_is_read(tmp_path):
    path = tmp_path / "r.json"
    with open(path, "wb") as f:
        f.truncate(_grade_report.MAX_RESULT_BYTES + 1)
    assert _grade_report.read_result(path) is None
    path.write_text("[1]")
    assert _grade_report.read_result(path) == "[1]"
    assert _grade_report.MAX_RESULT_BYTES == _transport.MAX_RESULT_BYTES <= 16_000_000


def test_deep_nesting_is_refused_before_the_parser_recurses():
    for text in ("[" * 100_000 + "]" * 100_000, '{"a": ' * 101 + "1" + "}" * 101,
                 "[" * 5_000_000):
        assert "nested too deeply to be data" in refused(text)
    ok = '{"a": ' * 99 + "1" + "}" * 99
    assert _transport.loads(ok) is not None
    deep = 1
    for _ in range(150):
        deep = [deep]
    with pytest.raises(_transport.ResultRefused, match="nested too deeply"):
        _transport.decode(deep)                                  # decode alone checks too


# ------------------------------------------------------------------ sizes capped
def test_a_dataframe_of_12000_by_12000_cells_is_refused_before_it_is_allocated():
    names = json.dumps([f"c{i}" for i in range(12_000)])
    rows = json.dumps(list(range(12_000)))
    _transport.loads('{"__dataframe__": {"columns": [], "index": [], "data": []}}')  # warm
    for data in ("0", "[]", "[[0]]"):
        text = ('{"data": {"__dataframe__": {"columns": %s, "index": %s, "data": %s}}}'
                % (names, rows, data))
        assert len(text) < 250_000
        tracemalloc.start()
        t0 = time.process_time()
        message = refused(text)
        seconds = time.process_time() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert message.startswith("the result is too large to be data: a DataFrame of "
                                  "12,000 rows x 12,000 columns")
        assert peak < 30_000_000 and seconds < 1.0, (peak, seconds)
    # a Series cannot broadcast a scalar either
    text = '{"__series__": {"name": null, "index": %s, "data": 0}}' % rows
    assert "not data" in refused(text)


def test_too_many_values_long_strings_and_long_numbers_are_refused():
    assert "about 1,500,002 values" in refused("[" + "0," * 1_500_000 + "0]")
    assert "a string of 200,000 characters" in refused(json.dumps(["x" * 200_000]))
    assert "an integer of 5,000 digits" in refused("[" + "7" * 5_000 + "]")
    assert "a number of 1,002 characters" in refused("[1." + "0" * 1_000 + "]")
    assert "not data: NaN" in refused("[NaN]")
    assert "too large" in refused(" " * (_transport.MAX_RESULT_BYTES + 1))
    # the element budget also counts binary arrays
    one = {"__ndarray__": "", "dtype": "<f8", "shape": [0]}
    big = dict(one, shape=[5_000_000], __ndarray__="A" * (4 * ((40_000_000 + 2) // 3)))
    assert "too large" in str(pytest.raises(_transport.ResultRefused,
                                            _transport.decode, big).value)


@pytest.mark.parametrize("obj, why", [
    ({"__float__": "1e5"}, "tagged float"),
    ({"__float__": "nan", "x": 1}, "tag with the keys"),
    ({"__repr__": 5}, "repr that is not a string"),
    ({"__ndarray__": [1], "dtype": "S1000000000"}, "dtype"),
    ({"__ndarray__": [1], "dtype": "<c16"}, "dtype"),
    ({"__ndarray__": "AAAA", "dtype": "<f8", "shape": [1]}, "do not match"),
    ({"__ndarray__": "AAAAAAAAAAA!", "dtype": "<f8", "shape": [1]}, "base64"),
    ({"__ndarray__": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [True]}, "shape"),
    ({"__ndarray__": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [-1]}, "shape"),
    ({"__ndarray__": "", "dtype": "<f8", "shape": [10**9, 10**9]}, "too large"),
    ({"__dataframe__": {"columns": ["a"], "index": [0, 1], "data": [[1]]}}, "2 rows of 1"),
    ({"__dataframe__": {"columns": [1], "index": [0], "data": [[1]]}}, "columns"),
    ({"__series__": {"name": 3, "index": [0], "data": [1]}}, "name"),
])
def test_tags_are_read_only_in_the_exact_shapes_encode_writes(obj, why):
    with pytest.raises(_transport.ResultRefused, match=why):
        _transport.loads(json.dumps(obj))


def test_honest_data_of_every_kind_still_round_trips():
    rng = np.random.default_rng(1)
    data = {"draws": rng.laplace(size=(36, 1000)), "ints": np.arange(6, dtype=">i4"),
            "flags": np.array([True, False]), "scalar": np.float32(1.5), "empty": np.empty((0, 3)),
            "zero_d": np.array(2.0), "odd": [1, 2.5, math.inf, -math.inf, None, "x", (1, 2)],
            "objects": np.array(["a", None], dtype=object),
            "with_inf": np.array([1.0, np.inf, np.nan]),
            "frame": pd.DataFrame({"age": [31, 45], "zip": ["130**", "148**"]}),
            "series": pd.Series([0.5, 1.5], index=["p", "q"], name="s")}
    back = _transport.loads(_transport.dumps(data))
    for k in ("draws", "ints", "flags", "empty", "zero_d"):
        assert back[k].dtype == data[k].dtype.newbyteorder("=") and back[k].shape == data[k].shape
        assert np.array_equal(back[k], data[k])
    back["draws"][0, 0] = 0.0                                # writable, not a view of bytes
    assert np.array_equal(back["with_inf"], data["with_inf"], equal_nan=True)
    assert back["odd"] == [1, 2.5, math.inf, -math.inf, None, "x", [1, 2]]
    assert back["objects"].tolist() == ["a", None]
    assert back["frame"].equals(data["frame"]) and back["series"].equals(data["series"])
    # the older list form of arrays is still read
    assert _transport.loads('{"__ndarray__": [[1, 2]], "dtype": "<f8"}').shape == (1, 2)


def test_the_largest_honest_result_fits_the_cap_and_decodes_fast():
    """A3 Task 4 (check_mechanism): 3 (Δ, ε) points x 12 probes x 30,000 runs of float64,
    the largest result of any task (measured over A1-A10's worked solutions, 8 draws each:
    the next largest is under 0.6 MB)."""
    outputs = np.random.default_rng(2).laplace(size=(36, 30_000)) * 1e9
    text = _transport.dumps({"data": {"problem": None, "outputs": outputs, "runs": 30_000}})
    assert len(text) < 0.75 * _transport.MAX_RESULT_BYTES
    t0 = time.process_time()
    back = _transport.loads(text)
    assert time.process_time() - t0 < 2.0
    assert np.array_equal(back["data"]["outputs"], outputs)


# ------------------------------------------------------------------ counts: whole, >= 0, summing
def test_whole_counts_accepts_only_counts_a_sampler_could_produce():
    assert _student.whole_counts([3, 0, 2.0, np.int64(5)], 4, 10)[0].tolist() == [3, 0, 2, 5]
    for bad, why in [([2.5, 7.5], "whole"), ([0.5, 9.5], "whole"), ([-1, 11], "below 0"),
                     ([3, 3], "sum to 6"), ([True, 9], "whole"), (["3", 7], "whole"),
                     ([math.nan, 10], "whole"), ([1e300, 10], "whole"), ([1, 2, 7], "list of 2"),
                     ({"a": 1}, "list of 2"), (None, "list of 2")]:
        arr, text = _student.whole_counts(bad, 2, 10)
        assert arr is None and why in text, (bad, text)


def _a8_t3(seed):
    req, truth = a8.TASKS[2].request(np.random.default_rng(seed))
    probs = [above_threshold_probabilities(c["answers"], c["threshold"], c["epsilon"],
                                           sensitivity=c["sensitivity"]) for c in req["cases"]]
    return req, truth, probs


def _judge_a8_t3(req, truth, counts):
    data = {"counts": counts, "called_library": False}
    return a8.TASKS[2].judge(_transport.loads(_transport.dumps(data)), req, truth)


def _dyadic(p, calls):
    """The red team's counts: expected counts rounded to multiples of 2^-20, the last one
    absorbing the rest, so they sum exactly to the calls made."""
    e = np.round(p * calls * 2**20) / 2**20
    e[-1] = calls - e[:-1].sum()
    return e


@pytest.mark.parametrize("seed", range(4))
def test_a8_task3_counts_that_are_not_counts_fail(seed):
    req, truth, probs = _a8_t3(seed)
    n = req["calls"]
    sampled = [np.random.default_rng(seed).multinomial(n, p) for p in probs]
    assert _judge_a8_t3(req, truth, [s.tolist() for s in sampled]).passed
    dyadic = [_dyadic(p, n) for p in probs]
    assert all(d.sum() == n for d in dyadic)
    fb = _judge_a8_t3(req, truth, [d.tolist() for d in dyadic])
    assert not fb.passed and fb.details["reason"] == "malformed" and "whole" in fb.message
    negative = [s.copy() for s in sampled]
    negative[0][0], negative[0][1] = -1, negative[0][1] + negative[0][0] + 1
    assert not _judge_a8_t3(req, truth, [s.tolist() for s in negative]).passed
    short_by_one = [s.copy() for s in sampled]
    short_by_one[1][0] -= 1 if short_by_one[1][0] else -1
    fb = _judge_a8_t3(req, truth, [s.tolist() for s in short_by_one])
    assert not fb.passed and "sum to" in fb.message
    wrong_length = [s.tolist() for s in sampled]
    wrong_length[2] = wrong_length[2] + [0]
    assert not _judge_a8_t3(req, truth, wrong_length).passed


def _rounded_exact(p, n):
    """Whole counts as close to the expected counts as whole counts get (largest
    remainders), summing to n: a fit no sampler produces."""
    e = p * n
    c = np.floor(e).astype(int)
    c[np.argsort(c - e)[: n - c.sum()]] += 1
    return c


@pytest.mark.parametrize("seed", range(6))
def test_a8_task3_counts_that_fit_too_well_fail_as_suspect(seed):
    req, truth, probs = _a8_t3(seed)
    counts = [_rounded_exact(p, req["calls"]) for p in probs]
    assert all(c.sum() == req["calls"] and (c >= 0).all() for c in counts)
    fb = _judge_a8_t3(req, truth, [c.tolist() for c in counts])
    assert not fb.passed and fb.details["reason"] == "too_good", fb.message


def test_a8_task3_sampled_counts_pass_on_every_seed():
    """Counts drawn from the exact distribution (a multinomial of the calls made) on 400
    hidden draws: the lower-tail check never fires, and its p-values are uniform there
    (the share below 0.01 is near 0.01), so the continuous χ² lower tail is right for
    these whole-number counts (the judge pools 15 or more degrees of freedom)."""
    lows = []
    for seed in range(400):
        req, truth, probs = _a8_t3(seed)
        gen = np.random.default_rng([seed, 30])
        counts = [gen.multinomial(req["calls"], p) for p in probs]
        fb = _judge_a8_t3(req, truth, [c.tolist() for c in counts])
        assert fb.passed, fb.message
        stat = dof = 0
        for c, p in zip(counts, probs):
            e = p * req["calls"]
            big = e >= 5
            o, ee = np.append(c[big], c[~big].sum()), np.append(e[big], e[~big].sum())
            o, ee = o[ee > 0], ee[ee > 0]
            stat, dof = stat + np.sum((o - ee) ** 2 / ee), dof + len(o) - 1
        assert dof >= 15
        lows.append(stats.chi2.cdf(stat, dof))
    assert 0.0 < np.mean(np.array(lows) < 0.05) < 0.12


def _honest_above_threshold(answers, threshold, epsilon, rng, sensitivity=1.0):
    noisy_t = threshold + rng.laplace(0.0, 2 * sensitivity / epsilon)
    for i, a in enumerate(answers):
        if a + rng.laplace(0.0, 4 * sensitivity / epsilon) >= noisy_t:
            return i
    return None


@pytest.mark.parametrize("seed", [0, 1])
def test_a8_task3_an_honest_function_passes_through_the_transport(seed):
    assert run_task("A8", "Task 3", seed, my_above_threshold=_honest_above_threshold).passed


# ------------------------------------------------------------------ fits too good: KS lower tails
def test_a8_task4_releases_at_the_quantiles_fail_as_suspect_and_draws_pass():
    task = tasks_of("A8")["Task 4"]
    for seed in range(3):
        req, truth = task.request(np.random.default_rng(seed))
        placed, drawn = [], []
        gen = np.random.default_rng([seed, 4])
        for c in req["cases"]:
            cdf = a8.quantile_release_cdf(c)
            grid = np.linspace(c["lower"], c["upper"], 200_001)
            values = cdf(grid)
            u = (np.arange(req["calls"]) + 0.5) / req["calls"]
            placed.append(np.interp(u, values, grid).tolist())
            drawn.append(np.interp(gen.random(req["calls"]), values, grid).tolist())
        fb = task.judge({"releases": placed, "called_library": False}, req, truth)
        assert not fb.passed and fb.details["reason"] == "too_good", fb.message
        fb = task.judge({"releases": drawn, "called_library": False}, req, truth)
        assert fb.passed, fb.message


def test_the_ks_lower_tail_is_exact_for_draws():
    """P(D_n <= d) from scipy's kstwo matches simulated uniform samples in the lower tail,
    so ks_too_good at alpha fails honest draws with probability alpha."""
    gen = np.random.default_rng(5)
    n = 3000
    u = np.sort(gen.random((4000, n)), axis=1)
    i = np.arange(1, n + 1)
    d = np.maximum((i / n - u).max(axis=1), (u - (i - 1) / n).max(axis=1))
    cut = stats.kstwo.ppf(0.02, n)
    assert 0.01 < np.mean(d <= cut) < 0.03
    assert _student.ks_too_good(float(d.min()), n, ALPHA) is None
    assert _student.ks_too_good(0.5 / n, n, ALPHA) is not None        # the quantile sample


def test_a9_task2_antithetic_noise_fails_as_suspect_and_fresh_noise_passes():
    task = tasks_of("A9")["Task 2"]

    def honest(grads, clip, sigma, rng):
        g = np.asarray(grads, float)
        norms = np.linalg.norm(g, axis=1, keepdims=True)
        g = g * np.minimum(1.0, clip / np.maximum(norms, 1e-300))
        return g.sum(axis=0) + rng.normal(0.0, sigma * clip, size=g.shape[1])

    calls = {"k": 0}

    def antithetic(grads, clip, sigma, rng):
        # every other call returns the previous call's noise negated: the means are 0
        g = np.asarray(grads, float)
        norms = np.linalg.norm(g, axis=1, keepdims=True)
        g = g * np.minimum(1.0, clip / np.maximum(norms, 1e-300))
        if sigma == 0:
            return g.sum(axis=0)
        calls["k"] += 1
        if calls["k"] % 2:
            calls["z"] = rng.normal(0.0, sigma * clip, size=g.shape[1])
            return g.sum(axis=0) + calls["z"]
        return g.sum(axis=0) - calls["z"]

    for seed in range(2):
        assert run_task("A9", "Task 2", seed, clip_and_noise=honest).passed
        calls["k"] = 0
        fb = run_task("A9", "Task 2", seed, clip_and_noise=antithetic)
        assert not fb.passed and fb.details["reason"] == "too_good", fb.message
    assert task.key == "Task 2"
