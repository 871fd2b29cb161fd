"""Issue 31: the edges and the fuzz of dpteach.sparse_vector, dpteach.local,
dpteach.local_protocols and dpteach.pld.

A fuzz over every public function of the four modules (NaN, infinities, 0, negatives, 1e-320,
1e308, 10**400, booleans, strings, empty and ragged arrays, huge sizes; each probe in a forked
child with time and memory limits) found inputs that were silently accepted, that crashed with
an exception other than ValueError/TypeError, that ran for minutes or that were refused with a
message not naming the parameter. Each row below is one of them: before the fix it failed;
now the input is answered finitely and quickly, or refused (ValueError/TypeError) naming the
parameter before any random number is drawn. The rows follow tests/_bad_values.py's house
style (``check_row``: the good call works, the bad one is refused by name)."""

import math
import time

import numpy as np
import pytest

from _bad_values import check_row, is_finite_answer, rows
from dpteach import local, local_protocols as lp, pld, sparse_vector as sv

NAN, INF = float("nan"), float("inf")
ANS = [10.0, 30.0, 60.0]
RAGGED = [[1.0, 2.0], [3.0]]


def pld_delta(epsilon=1.0):
    return pld.PLDAccountant(interval=1e-2).compose_gaussian(1.0, q=0.5, steps=3).delta(epsilon)


# ------------------------------------------------------------------ refused by name
_TABLE = [
    # a flag that took any truthy value (NaN, "1", 1j, None) as True or False
    (sv.sparse_scales, dict(epsilon=1.0, c=2), dict(numeric=[NAN, INF, "1", 1j, None, 1, 0.0])),
    (sv.sparse_draws, dict(query_answers=ANS, threshold=40.0, epsilon=1.0, c=2, size=3),
     dict(numeric=[NAN, "1", 1j, None, 1])),
    # c restarts at a tiny epsilon: every scale 4c Δ/ε (9c Δ/ε for values) overflowed to inf
    (sv.sparse, dict(query_answers=np.zeros(1000), threshold=0.0, epsilon=1.0, c=1000),
     dict(epsilon=[5e-305, 1e-306])),
    (sv.numeric_sparse, dict(query_answers=np.zeros(1000), threshold=0.0, epsilon=1.0, c=1000),
     dict(epsilon=[5e-305, 1e-306])),
    (sv.sparse_draws, dict(query_answers=np.zeros(1000), threshold=0.0, epsilon=1.0, c=1000, size=2),
     dict(epsilon=[5e-305])),
    (sv.noisy_top_c, dict(query_answers=np.zeros(1000), epsilon=1.0, c=1000), dict(epsilon=[1e-303])),
    # ragged booleans: numpy's "inhomogeneous shape" message, naming nothing
    (sv.sparse_run_error, dict(query_answers=ANS, threshold=40.0, answered=[False, True, True], c=2),
     dict(answered=[RAGGED, [[True, False], [True]], "abc", [1, 0, 1]])),
    (sv.no_stop_pattern_probability, dict(query_answers=ANS, pattern=[True, False, True],
                                          threshold=40.0, epsilon=1.0),
     dict(pattern=[RAGGED, [[True], [True, False]], "abc", [True, False]])),
    # errors a_i - T beyond the float range: inf
    (sv.run_error, dict(query_answers=[1e308, -1e308], threshold=0.0, index=1), dict(threshold=[-1e308, 1e308])),
    (sv.sparse_run_error, dict(query_answers=[1e308, -1e308], threshold=0.0, answered=[False, True], c=1),
     dict(threshold=[-1e308, 1e308])),
    # exact distributions of long streams (quadrature, k^2 work): minutes at k = 10^5
    (sv.above_threshold_probabilities, dict(query_answers=np.zeros(10), threshold=1.0, epsilon=1.0),
     dict(query_answers=[np.zeros(sv.MAX_EXACT_QUERIES + 1), np.zeros(10**5)])),
    (sv.no_stop_pattern_probability, dict(query_answers=np.zeros(3), pattern=[True, False, True],
                                          threshold=1.0, epsilon=1.0),
     dict(query_answers=[np.zeros(10**5)])),
    (sv.example_answers, dict(k=60), dict(k=[10**7, 10**8])),
    # the accuracy bound's overflow named epsilon only
    (sv.accuracy_bound, dict(k=10, epsilon=1.0, beta=0.05), dict(sensitivity=[1e308])),
    # OLH at n = 10^5, k = 10^6: 10^11 hash evaluations (about 2 hours)
    (local.olh_estimate, dict(values=[0, 1, 3], k=10**6, epsilon=1.0),
     dict(values=[np.zeros(10**5, dtype=int), np.zeros(1000, dtype=int)])),
    (local.olh_estimate, dict(values=np.zeros(10**5, dtype=int), k=4, epsilon=1.0),
     dict(k=[10**6, 2000])),
    # a person's one-hot vector of k bits, for n people: a 93 GiB MemoryError
    (local.unary_encoding, dict(values=np.zeros(10**5, dtype=int), k=4, epsilon=1.0), dict(k=[10**6])),
    (local.k_randomized_response_probabilities, dict(k=4, epsilon=1.0), dict(k=[5000, 10**4])),
    (local.unary_encoding_estimate, dict(reports=[[1, 0], [0, 1]], epsilon=1.0), dict(reports=[RAGGED])),
    # Laplace noise of scale 1e308: counts of -inf
    (local.central_histogram_estimate, dict(counts=[5, 3, 2], epsilon=1.0),
     dict(sensitivity=[1e308, 1e306], epsilon=[1e-306])),
    # (1e100 / 1e-100)^2: OverflowError
    (local.central_variance, dict(n=1, epsilon=1.0, sensitivity=1e100), dict(epsilon=[1e-100, 1e-60])),
    # 10^8 binomial draws: over a minute
    (local.report_counts, dict(counts=np.ones(10**6), epsilon=1.0), dict(size=[100, 10**4])),
    # a Python loop over a million (k, epsilon) points
    (lp.protocol_variances, dict(k=64, epsilon=1.0),
     dict(epsilon=[np.linspace(0.1, 5.0, 10**6)], k=[np.arange(2, 10**6)])),
]


@pytest.mark.parametrize("func, good, param, bad", rows(_TABLE))
def test_fuzz_findings_are_refused_by_name(func, good, param, bad):
    check_row(func, good, param, bad)


# ------------------------------------------------------------------ answered finitely
@pytest.mark.parametrize("call", [
    # OLH at a tiny epsilon: p - q = 0 in floating point, estimates of +-inf
    lambda: local.olh_estimate([0, 1, 3], 4, 1e-20, rng=0),
    # ZeroDivisionError from the same cancellation
    lambda: local.olh_variance(100, 1e-20),
    lambda: local.olh_variance(10**15, 1e-100, g=1e12),
    # OverflowError: cannot convert float infinity to integer
    lambda: pld_delta(1e308),
    lambda: pld.PLDAccountant(interval=1e-4).compose_gaussian(1.0).delta(1e300),
    # 2-D values: "operands could not be broadcast together"
    lambda: local.olh_estimate([[0, 1], [3, 2]], 4, 1.0, rng=0),
], ids=["olh_estimate-1e-20", "olh_variance-1e-20", "olh_variance-g-1e12", "pld-delta-1e308",
        "pld-delta-1e300-fine-grid", "olh_estimate-2d"])
def test_fuzz_findings_are_answered_finitely(call):
    assert is_finite_answer(call())


def test_olh_at_tiny_epsilon_is_unbiased_in_expectation_formula():
    """p - q without cancellation: at epsilon = 1e-20, (g - 1)(e^eps - 1)/(g(e^eps + g - 1))
    = 1e-20 / 4 for g = 2, and the variance n q (1 - q)/(p - q)^2 = n * 4e40."""
    assert local.olh_variance(1, 1e-20) == pytest.approx(0.25 / (1e-20 / 4) ** 2, rel=1e-12)
    est = local.olh_estimate([0, 1, 3], 4, 1e-20, rng=np.random.default_rng(0))
    assert np.isfinite(est).all() and np.abs(est).max() < 1e21


def test_olh_estimate_refuses_the_two_hour_case_at_once_and_stays_fast_below_the_limit():
    values = np.random.default_rng(1).integers(0, 10**6, size=10**5)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="values and k"):
        local.olh_estimate(values, 10**6, 1.0, rng=0)
    assert time.perf_counter() - t0 < 1.0
    # 2 * 10^6 pairs (the 10^11 took about 2 h at the old rate of ~1.3e7 pairs/s)
    t0 = time.perf_counter()
    local.olh_estimate(values[:2000] % 1000, 1000, 1.0, rng=0)
    assert time.perf_counter() - t0 < 2.0


def test_pld_refuses_a_composition_sure_to_outgrow_the_grid_before_convolving():
    """interval 1e-5, σ = 1, q = 1e-3, 10^7 steps needs about 9e6 points: it was refused
    only after seconds of convolutions; the width estimate refuses it at once. Neighbouring
    compositions that fit are still computed (and stay upper bounds: tests/test_pld.py)."""
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"\bsteps\b"):
        pld.PLDAccountant(interval=1e-5).compose_gaussian(1.0, q=1e-3, steps=10**7)
    assert time.perf_counter() - t0 < 3.0


def test_pld_width_estimate_never_refuses_what_fits():
    """The early refusal allows twice the limit: a composition that fits (about 1e6 points)
    is computed, and agrees with the same composition done in two halves."""
    one = pld.PLDAccountant(interval=1e-3).compose_gaussian(1.0, q=0.01, steps=10**5)
    two = pld.PLDAccountant(interval=1e-3).compose_gaussian(1.0, q=0.01, steps=5 * 10**4) \
        .compose_gaussian(1.0, q=0.01, steps=5 * 10**4)
    assert math.isfinite(one.epsilon(1e-5))
    assert one.epsilon(1e-5) == pytest.approx(two.epsilon(1e-5), abs=0.05)


def test_extreme_epsilons_of_sparse_are_refused_or_finite():
    """The fuzz's extreme values for every real parameter of Sparse, NumericSparse and the
    peeled exponential mechanism: refused by name or finite, never inf or NaN."""
    calls = {
        "epsilon": lambda v: sv.numeric_sparse(np.zeros(50), 0.0, v, 50, rng=0),
        "sensitivity": lambda v: sv.numeric_sparse(np.zeros(50), 0.0, 1.0, 50, sensitivity=v, rng=0),
        "threshold": lambda v: sv.numeric_sparse(np.zeros(50), v, 1.0, 50, rng=0),
    }
    for name, call in calls.items():
        for v in (1e-320, 1e-300, 1e-250, 1e250, 1e308, 10**400, -1e308):
            try:
                out = call(v)
            except (ValueError, TypeError) as err:
                assert name in str(err), (name, v, err)
            else:
                assert is_finite_answer(out), (name, v, out)
