"""Mironov's floating-point attack on the naive sampler and on numpy's Generator.laplace."""

import numpy as np
import pytest

from conftest import ALPHA, ks_pvalue

import dpteach as dp
from dpteach.attacks.floating_point import (floating_point_attack, naive_laplace_mechanism,
                                            preimages)
from scipy import stats


def test_names_are_exported():
    assert dp.attacks.naive_laplace_mechanism is naive_laplace_mechanism
    assert dp.attacks.floating_point_attack is floating_point_attack


def test_naive_sampler_is_laplace_in_distribution():
    """The leak is not in the distribution: KS against Laplace(value, scale) passes; the
    wrong twin (scale 1.1 b) is rejected."""
    rng = np.random.default_rng(81)
    out = naive_laplace_mechanism(3.0, 2.0, rng=rng, size=200_000)
    assert ks_pvalue(out, stats.laplace(loc=3.0, scale=2.0).cdf) > ALPHA
    assert ks_pvalue(out, stats.laplace(loc=3.0, scale=2.2).cdf) < ALPHA
    assert isinstance(naive_laplace_mechanism(0.0, 1.0, rng=rng), float)
    assert naive_laplace_mechanism([0.0, 1.0], 1.0, rng=rng, size=3).shape == (3, 2)


def test_the_naive_sampler_is_the_textbook_formula_in_scalar_floats():
    """Bit for bit what one float at a time gives, with the C library's log (math.log):
    the outputs do not depend on the processor (numpy's vectorised np.log differs in the
    last bit on some machines, e.g. with AVX-512, which would change the lesson's
    numbers)."""
    import math
    for value, scale, seed in [(0.0, 1.0, 1), (3.0, 10.0, 2), (-7.25, 0.01, 3)]:
        out = naive_laplace_mechanism(value, scale, rng=np.random.default_rng(seed), size=20_000)
        u = np.random.default_rng(seed).random(20_000) - 0.5
        ref = np.array([value + (-scale * math.copysign(1.0, v) if v else 0.0) * math.log(1.0 - 2.0 * abs(v))
                        for v in u])
        assert np.array_equal(out, ref)


@pytest.mark.parametrize("sampler", ["naive", "numpy"])
@pytest.mark.parametrize("scale,truth", [(10.0, 0.0), (1.0, 0.0), (10.0, 1.0), (0.3, 3.7),
                                         (2.0, -25.0)])
def test_attack_never_rules_out_the_truth(sampler, scale, truth):
    rng = np.random.default_rng(82)
    n = 3_000
    if sampler == "naive":
        out = naive_laplace_mechanism(truth, scale, rng=rng, size=n)
    else:
        out = rng.laplace(truth, scale, size=n)
    res = floating_point_attack(out, [truth, truth + 1.0, truth - 1.0], scale, sampler=sampler)
    assert res.shape == (n, 3) and res.dtype == bool
    assert res[:, 0].all()
    # it rules out a neighbour for most outputs when the noise is large next to the
    # value; when |value| >> scale the sum's rounding is coarser than the noise grid and
    # fewer outputs give the input away (measured about 8% at value -25, scale 2)
    ruled_out = min((~res[:, 1]).mean(), (~res[:, 2]).mean())
    assert ruled_out > (0.5 if abs(truth) < 4 * scale else 0.02)


@pytest.mark.parametrize("sampler", ["naive", "numpy"])
def test_attack_at_epsilon_0_1_rules_out_input_1_for_most_outputs(sampler):
    rng = np.random.default_rng(83)
    scale, n = 10.0, 10_000                      # epsilon = 0.1 for a count (Delta = 1)
    out = (naive_laplace_mechanism(0.0, scale, rng=rng, size=n) if sampler == "naive"
           else rng.laplace(0.0, scale, size=n))
    res = floating_point_attack(out, [0.0, 1.0], scale, sampler=sampler)
    assert res[:, 0].all()
    fraction = (~res[:, 1]).mean()
    assert 0.7 < fraction < 0.95                 # measured: about 0.80 for both samplers


def test_attack_is_bit_exact_wrong_twins_fail():
    """The attack depends on modelling the arithmetic exactly: with the wrong sampler model
    or a scale off by one part in 10^15 it 'rules out' the truth -- so the True entries
    above are a real computation, not a default."""
    rng = np.random.default_rng(84)
    out = rng.laplace(0.0, 10.0, size=2_000)
    wrong_model = floating_point_attack(out, [0.0], 10.0, sampler="naive")
    assert (~wrong_model[:, 0]).mean() > 0.1
    naive = naive_laplace_mechanism(0.0, 10.0, rng=rng, size=2_000)
    wrong_scale = floating_point_attack(naive, [0.0], 10.0 * (1 + 1e-15))
    assert (~wrong_scale[:, 0]).mean() > 0.1


def test_a_row_may_be_all_false():
    rng = np.random.default_rng(85)
    out = naive_laplace_mechanism(0.0, 10.0, rng=rng, size=300)
    nudged = np.nextafter(out, np.inf)           # one ulp up: mostly impossible outputs
    res = floating_point_attack(nudged, [0.0, 1.0], 10.0)
    assert (~res.any(axis=1)).sum() > 50


def test_a_guessed_window_finds_the_lower_bound_of_the_full_search():
    """_lower_bound with a guess (good, off by a little, off by far, beyond the range)
    returns the brute-force answer, as the full search does; trusting a window without
    checking its ends (the wrong twin) does not."""
    from dpteach.attacks import floating_point as fpm

    rng = np.random.default_rng(87)
    values = np.sort(rng.integers(0, 50_000, size=2 ** 16))      # key(j) = values[j - 1]
    padded = np.append(values, 10 ** 9)          # the search may look at hi + 1 when done
    key = lambda j: padded[np.asarray(j) - 1]                    # noqa: E731
    target = rng.integers(-10, 50_010, size=4_000)
    lo = np.ones(target.shape, dtype=np.int64)
    hi = np.full(target.shape, values.size, dtype=np.int64)
    truth = np.searchsorted(values, target, side="left") + 1      # hi + 1 where none
    assert np.array_equal(fpm._lower_bound(key, target, lo, hi), truth)
    for shift in (0, 3, -700, 10 ** 5, -(10 ** 5), 2.0 ** 70):
        guess = truth + shift
        assert np.array_equal(fpm._lower_bound(key, target, lo, hi, guess=guess, width=64),
                              truth), shift
    far = truth + 10 ** 4            # the window [far - 64, far + 64] misses the answer
    top = np.minimum(far + 64, hi)
    start = np.minimum(np.maximum(far - 64, lo), top)
    trusted = fpm._lower_bound(key, target, start, top)
    assert (trusted != truth).mean() > 0.5


@pytest.mark.parametrize("sampler", ["naive", "numpy"])
def test_the_attack_is_the_same_with_and_without_the_guessed_window(sampler, monkeypatch):
    """Outputs of both samplers, one ulp off, far from the candidates, and at a tiny scale
    with a large value (where the guess is too coarse and the full search takes over)."""
    from dpteach.attacks import floating_point as fpm

    rng = np.random.default_rng(88)
    cases = []
    for value, scale in [(0.0, 10.0), (3.7, 0.3), (1e6, 1e-3), (-25.0, 2.0)]:
        out = (naive_laplace_mechanism(value, scale, rng=rng, size=500) if sampler == "naive"
               else rng.laplace(value, scale, size=500))
        out = np.concatenate([out, np.nextafter(out[:100], np.inf), out[:50] + 40 * scale])
        cases.append((out, [value, value + 1.0, value - 2.5], scale))
    fast = [floating_point_attack(*c, sampler=sampler) for c in cases]
    monkeypatch.setattr(fpm, "_uniform_guess", lambda *a: None)
    full = [floating_point_attack(*c, sampler=sampler) for c in cases]
    for f, g in zip(fast, full):
        assert np.array_equal(f, g)
    assert all(f[:500, 0].all() for f in fast)


def _exact_reachable(outputs, cand, scale, sampler):
    """The attack's question answered with the C library's log throughout: full binary
    search (no guess), then only the crossing itself is compared."""
    from dpteach.attacks import floating_point as fpm
    two52 = 2 ** 52
    c = np.full(outputs.shape, float(cand))
    found = np.zeros(outputs.shape, dtype=bool)
    if sampler == "naive":
        for sign in (1.0, -1.0):
            def key(j, sign=sign):
                return -sign * fpm._naive_forward(c, scale, sign, j)
            j0 = fpm._lower_bound(key, -sign * outputs, np.ones(outputs.shape, np.int64),
                                  np.full(outputs.shape, two52, np.int64))
            found |= fpm._naive_forward(c, scale, sign, np.minimum(j0, two52)) == outputs
    else:
        for lo, hi in ((two52, 2 * two52 - 1), (1, two52 - 1)):
            j0 = fpm._lower_bound(lambda j: fpm._numpy_forward(c, scale, j), outputs,
                                  np.full(outputs.shape, lo, np.int64),
                                  np.full(outputs.shape, hi, np.int64))
            found |= fpm._numpy_forward(c, scale, np.minimum(j0, hi)) == outputs
    return found


@pytest.mark.parametrize("sampler", ["naive", "numpy"])
def test_the_fast_search_finds_what_the_exact_one_finds(sampler):
    """The attack searches with numpy's vectorised log and checks a window of uniforms with
    the C library's: it answers as a search with the C library's log throughout. The
    window is needed: without it (window 0) the answer differs on a machine whose np.log
    differs from the C library's (this one: AVX-512), so the twin is checked only there."""
    import math
    from dpteach.attacks import floating_point as fpm
    rng = np.random.default_rng(91)
    for value, scale in [(0.0, 1.0), (0.0, 10.0), (37.5, 0.01)]:
        out = (naive_laplace_mechanism(value, scale, rng=rng, size=4000) if sampler == "naive"
               else rng.laplace(value, scale, size=4000))
        cands = [value, value + 1.0]
        got = floating_point_attack(out, cands, scale, sampler=sampler)
        want = np.column_stack([_exact_reachable(out, c, scale, sampler) for c in cands])
        assert np.array_equal(got, want)
    x = rng.random(200_000)
    if np.array_equal(np.log(x), np.array([math.log(v) for v in x])):
        return                                # here np.log is the C library's: no twin
    rng = np.random.default_rng(91)
    misses = 0
    for value, scale in [(0.0, 1.0), (0.0, 10.0), (37.5, 0.01)]:
        out = (naive_laplace_mechanism(value, scale, rng=rng, size=4000) if sampler == "naive"
               else rng.laplace(value, scale, size=4000))
        twin = fpm._reachable(out, np.full(out.shape, value), scale, sampler, window=0)
        misses += int(np.sum(~twin))
    assert misses > 0                         # the truth itself is missed without the window


def test_preimages_table_shows_the_exact_match():
    rng = np.random.default_rng(86)
    o = naive_laplace_mechanism(0.0, 10.0, rng=rng)
    table = preimages(o, 0.0, 10.0)
    assert table["equals"].any()
    assert {"branch", "uniform index", "output", "output (hex)", "equals"} <= set(table.columns)
    o = float(rng.laplace(0.0, 10.0))
    assert preimages(o, 0.0, 10.0, sampler="numpy")["equals"].any()


def test_integer_noise_leaves_nothing_to_exploit():
    """Discrete Laplace outputs are integers, each reachable from every integer input
    with probability ratio at most e^epsilon: both candidates stay possible, always."""
    out = dp.discrete_laplace_mechanism(0, 1, 0.1, rng=np.random.default_rng(87), size=1000)
    assert out.dtype == np.int64
    ratio = np.exp(np.abs(np.abs(out - 0) - np.abs(out - 1)) * 0.1)
    assert np.all(ratio <= np.exp(0.1) + 1e-12)


@pytest.mark.parametrize("call,exc,word", [
    (lambda: naive_laplace_mechanism(0.0, 0.0), ValueError, "scale"),
    (lambda: naive_laplace_mechanism(0.0, -1.0), ValueError, "scale"),
    (lambda: naive_laplace_mechanism(0.0, np.nan), ValueError, "scale"),
    (lambda: naive_laplace_mechanism("0", 1.0), TypeError, "value"),
    (lambda: naive_laplace_mechanism(np.nan, 1.0), ValueError, "value"),
    (lambda: naive_laplace_mechanism(0.0, 1.0, size=-2), ValueError, "size"),
    (lambda: naive_laplace_mechanism(0.0, 1.0, rng="x"), TypeError, "rng"),
    (lambda: floating_point_attack([1.0], [0.0], 0.0), ValueError, "scale"),
    (lambda: floating_point_attack([1.0], [0.0], True), TypeError, "scale"),
    (lambda: floating_point_attack([np.nan], [0.0], 1.0), ValueError, "outputs"),
    (lambda: floating_point_attack([np.inf], [0.0], 1.0), ValueError, "outputs"),
    (lambda: floating_point_attack([1.0], ["a"], 1.0), TypeError, "candidates"),
    (lambda: floating_point_attack([1.0], [], 1.0), ValueError, "candidates"),
    (lambda: floating_point_attack([1.0], [0.0], 1.0, sampler="java"), ValueError, "sampler"),
    (lambda: preimages(np.nan, 0.0, 1.0), ValueError, "output"),
    (lambda: preimages(1.0, 0.0, 1.0, sampler="x"), ValueError, "sampler"),
])
def test_bad_input_is_refused_clearly(call, exc, word):
    with pytest.raises(exc, match=word):
        call()
