"""Dinur-Nissim reconstruction (notebook 03): LSQ against exact least squares, the LP
decoder (HiGHS on the dual by default, the opt-in interior-point method) against the
equality-form LP solved by HiGHS (same optimum, certified gap, same bits), the exhaustive
attack's 4E guarantee under adversarial noise, exact recovery for E < 1/2, bad input."""

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from conftest import ALPHA

A = dp.attacks
from dpteach.attacks import _solvers as S  # noqa: E402
from dpteach.attacks import reconstruction as R  # noqa: E402


def problem(n, m, sigma, rng, *, noise="gaussian", prevalence=0.5):
    d = (rng.random(n) < prevalence).astype(np.int8)
    q = A.random_subset_queries(m, n, rng=rng)
    return d, q, A.noisy_answers(q, d, sigma, noise=noise, rng=rng)


# ------------------------------------------------------------------------ queries
def test_random_subset_queries_are_fair_coins(rng):
    q = A.random_subset_queries(400, 250, rng=rng)
    assert q.shape == (400, 250) and q.dtype == np.int8 and set(np.unique(q)) == {0, 1}
    ones = int(q.sum())
    assert stats.binomtest(ones, q.size, 0.5).pvalue > ALPHA
    assert stats.binomtest(ones, q.size, 0.48).pvalue < ALPHA      # wrong twin
    # seeded: the same seed gives the same queries
    np.testing.assert_array_equal(A.random_subset_queries(5, 7, rng=3),
                                  A.random_subset_queries(5, 7, rng=3))


def test_answers_and_noise(rng):
    d = np.array([1, 0, 1, 1], np.int8)
    q = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 1, 1]])
    np.testing.assert_array_equal(A.answer_queries(q, d), [1, 2, 3])
    qq = A.random_subset_queries(3000, 4, rng=rng)
    exact = A.answer_queries(qq, d)
    for noise, dist, twin in [("gaussian", stats.norm(scale=2), stats.norm(scale=2.5)),
                              ("laplace", stats.laplace(scale=2), stats.norm(scale=2 * 2 ** 0.5)),
                              ("uniform", stats.uniform(-2, 4), stats.uniform(-2.3, 4.6))]:
        z = A.noisy_answers(qq, d, 2.0, noise=noise, rng=rng) - exact
        assert stats.kstest(z, dist.cdf).pvalue > ALPHA
        assert stats.kstest(z, twin.cdf).pvalue < ALPHA


# -------------------------------------------------------------------- least squares
@pytest.mark.parametrize("n, m", [(30, 60), (80, 320), (150, 600)])
def test_lsq_matches_numpy_least_squares(rng, n, m):
    d, q, a = problem(n, m, 0.4 * np.sqrt(n), rng)
    x = np.linalg.lstsq(q.astype(float), a, rcond=None)[0]
    ours = A.reconstruct_lsq(q, a)
    near = np.abs(x - 0.5) < 1e-6                 # ties at 1/2 may round either way
    np.testing.assert_array_equal(ours[~near], (x >= 0.5)[~near].astype(np.int8))


def test_lsq_cg_and_gram_paths_agree(rng):
    d, q, a = problem(500, 2000, 0.2 * np.sqrt(500), rng)
    assert q.size >= S.CG_MIN_SIZE
    x_cg = S.lsq_cg(q, a)
    x_gram = S.lsq_gram(q, a)
    assert x_cg is not None
    np.testing.assert_allclose(x_cg, x_gram, atol=1e-6)


def test_lsq_falls_back_for_constant_columns(rng):
    d, q, a = problem(400, 2600, 1.0, rng)
    q[:, 0] = 1                                   # no preconditioner: exact Gram route
    a = A.answer_queries(q, d) + rng.normal(0, 1.0, len(a))
    assert S.lsq_cg(q, a) is None
    assert A.fraction_agree(A.reconstruct_lsq(q, a), d) > 0.99


def test_lsq_recovers_at_low_noise_and_fails_at_high(rng):
    n = 400
    d, q, a = problem(n, 4 * n, 0.1 * np.sqrt(n), rng)
    assert A.fraction_agree(A.reconstruct_lsq(q, a), d) >= 0.99
    d, q, a = problem(n, 4 * n, 3.0 * np.sqrt(n), rng)
    assert A.fraction_agree(A.reconstruct_lsq(q, a), d) < 0.75


# ---------------------------------------------------------------------- LP decoding
@pytest.mark.parametrize("solver", ["highs", "ipm"])
@pytest.mark.parametrize("n, m, sigma, gross", [
    (20, 60, 1.0, 0), (40, 160, 2.0, 0), (60, 120, 3.0, 0), (50, 200, 1.0, 20),
    (30, 30, 0.5, 0), (80, 320, 0.0, 0), (100, 400, 4.0, 40),
    (200, 800, 0.1 * np.sqrt(200), 0),     # ipm: large enough for BLAS, row dropping, refinement
])
def test_lp_decode_matches_the_equality_form(rng, n, m, sigma, gross, solver):
    d, q, a = problem(n, m, sigma, rng)
    if gross:                                      # arbitrarily corrupted answers
        idx = rng.choice(m, gross, replace=False)
        a[idx] += rng.uniform(-n, n, gross)
    res = A.lp_decode(q, a, solver=solver)
    x_ref, opt = A.textbook_lp(q, a)
    assert res.relative_gap <= 1e-8
    assert res.dual - 1e-7 * max(1, opt) <= opt <= res.primal + 1e-7 * max(1, opt)
    assert res.primal == pytest.approx(opt, rel=1e-8, abs=1e-7)
    assert np.all((res.x >= 0) & (res.x <= 1)) and np.all(np.abs(res.y) <= 1)
    assert np.abs(a - q @ res.x).sum() == pytest.approx(res.primal, rel=1e-12, abs=1e-9)
    # same decoded bits (positions where either vertex sits near 1/2 excepted)
    clear = (np.abs(x_ref - 0.5) > 1e-6) & (np.abs(res.x - 0.5) > 1e-6)
    np.testing.assert_array_equal(res.bits[clear], (x_ref >= 0.5)[clear].astype(np.int8))
    np.testing.assert_array_equal(A.reconstruct_lp(q, a, solver=solver), res.bits)


def test_certificate_is_computed_from_x_and_y_not_trusted(rng):
    # LPResult recomputes both objectives: a wrong x or a wrong y widens the gap
    d, q, a = problem(40, 160, 2.0, rng)
    good = A.lp_decode(q, a)
    assert good.relative_gap <= 1e-8
    wrong_x = R.LPResult(q, a, 1.0 - good.x, good.y, 0, "wrong twin")
    wrong_y = R.LPResult(q, a, good.x, -good.y, 0, "wrong twin")
    assert wrong_x.gap > 1.0 and wrong_y.gap > 1.0
    # weak duality: every (x, y) in the boxes brackets the optimum
    for _ in range(20):
        r = R.LPResult(q, a, rng.random(40), rng.uniform(-1, 1, 160), 0, "random")
        assert r.dual <= good.primal + 1e-9 <= r.primal + 2e-9


def test_highs_reports_its_status(rng):
    d, q, a = problem(30, 120, 1.0, rng)
    res = A.lp_decode(q, a)
    assert "Optimal" in res.message and res.iterations >= 1
    with pytest.raises(ValueError, match="solver"):
        A.lp_decode(q, a, solver="simplex")
    with pytest.raises(ValueError, match="solver"):
        A.reconstruct_lp(q, a, solver="magic")


def test_highs_at_the_notebooks_largest_size_reconstructs(rng):
    # its time budget (1 s at n = 200, m = 4n) is measured by benchmarks/bench_reconstruction.py
    d, q, a = problem(200, 800, 0.1 * np.sqrt(200), rng)
    bits = A.reconstruct_lp(q, a)
    assert A.fraction_agree(bits, d) >= 0.99


@pytest.mark.parametrize("m, n", [(60, 20), (800, 200)])
def test_normal_equations_refinement_reaches_float64_accuracy(rng, m, n):
    # late in the iterations the weights span many orders of magnitude: the float32
    # factor alone leaves a visible residual, conjugate gradients on top remove it
    qf = A.random_subset_queries(m, n, rng=rng).astype(np.float64)
    inv_e = 10.0 ** rng.uniform(-12, 6, m)
    f_diag = 10.0 ** rng.uniform(-6, 6, n)
    exact = np.diag(f_diag) + qf.T @ (inv_e[:, None] * qf)
    rhs = rng.standard_normal(n)
    args = (qf, np.ascontiguousarray(qf.T), qf.astype(np.float32), inv_e, f_diag)

    def residual(refine):
        dx = S._NormalEquations(*args, refine=refine).solve(rhs)
        return np.linalg.norm(exact @ dx - rhs) / np.linalg.norm(rhs)

    assert residual(True) <= 1e-10
    assert residual(False) > 1e-8                  # the wrong twin: float32 alone


@pytest.mark.parametrize("solver", ["highs", "ipm"])
def test_lp_exact_answers_recover_everything(rng, solver):
    d, q, a = problem(60, 240, 0.0, rng)
    res = A.lp_decode(q, a, solver=solver)
    np.testing.assert_array_equal(res.bits, d)
    assert res.primal == pytest.approx(0.0, abs=1e-8)


def test_lp_survives_gross_errors_that_break_lsq(rng):
    # a quarter of the answers wildly wrong: L1 decoding shrugs, least squares does not
    n, m = 100, 800
    d, q, a = problem(n, m, 0.0, rng)
    bad = rng.choice(m, m // 5, replace=False)
    a = a.astype(float)
    a[bad] += rng.choice([-1, 1], bad.size) * 3 * n
    assert A.fraction_agree(A.reconstruct_lp(q, a), d) >= 0.99
    assert A.fraction_agree(A.reconstruct_lsq(q, a), d) < 0.9


def test_lp_result_repr_and_gap_nonnegative(rng):
    d, q, a = problem(30, 90, 1.0, rng)
    res = A.lp_decode(q, a, solver="ipm")
    assert res.gap >= -1e-9 and "LPResult" in repr(res) and res.iterations >= 1


# ----------------------------------------------------------------- exhaustive attack
def test_subset_sums_indexing():
    d = np.array([1, 0, 1], np.int8)
    s = A.subset_sums(d)
    assert s.tolist() == [0, 1, 0, 1, 1, 2, 1, 2]       # mask bit i <-> person i
    assert A.subset_sums(np.ones(10, np.int8))[-1] == 10


def test_popcount_fallback_counts_bits_like_numpy_2():
    """numpy < 2.0 has no bitwise_count; the fallback must count the same bits."""
    rng = np.random.default_rng(7)
    x = np.concatenate([np.array([0, 1, 2, 3, 0xFFFFFFFF, 0x80000000, 0x55555555], np.uint32),
                        rng.integers(0, 2**32, size=4993, dtype=np.uint32)]).reshape(4, -1)
    want = np.array([[bin(int(v)).count("1") for v in row] for row in x])
    got = R._popcount_swar(x)
    assert got.shape == x.shape and got.dtype == np.uint8
    assert got.tolist() == want.tolist()
    assert R._popcount(x).tolist() == want.tolist()


@pytest.mark.parametrize("n, e, seed", [(20, 1.0, 1), (20, 1.5, 2), (16, 2.0, 3), (11, 2.5, 4),
                                        (9, 0.75, 5), (20, 0.5, 6)])
def test_exhaustive_within_4e_against_a_decoy(n, e, seed):
    rng = np.random.default_rng(seed)
    d = rng.integers(0, 2, n).astype(np.int8)
    answers, decoy = A.decoy_answers(d, e, rng=rng)
    exact = A.subset_sums(d)
    assert np.max(np.abs(answers - exact)) <= e + 1e-12          # noise really bounded
    # the decoy is consistent, and as far away as the theorem allows
    assert np.max(np.abs(A.subset_sums(decoy) - answers)) <= e + 1e-12
    k = int(np.floor(2 * e))
    assert int((decoy != d).sum()) == min(k, int(d.sum())) + min(k, int((d == 0).sum()))
    c = A.reconstruct_exhaustive(answers, e)
    assert np.max(np.abs(A.subset_sums(c) - answers)) <= e + 1e-9
    assert int((c != d).sum()) <= 4 * e


@pytest.mark.parametrize("e", [0.0, 0.2, 0.49])
def test_exhaustive_exact_when_e_below_half(rng, e):
    for _ in range(3):
        d = rng.integers(0, 2, 14).astype(np.int8)
        for answers in (A.bounded_noise_answers(d, e, rng=rng), A.decoy_answers(d, e, rng=rng)[0]):
            np.testing.assert_array_equal(A.reconstruct_exhaustive(answers, e), d)


def test_consistent_candidates_brute_force_and_bound(rng):
    n, e = 8, 1.0
    d = rng.integers(0, 2, n).astype(np.int8)
    answers, decoy = A.decoy_answers(d, e, rng=rng)
    cands = A.consistent_candidates(answers, e)
    # brute force over all 2^n databases
    allc = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(np.int8)
    ok = [np.max(np.abs(A.subset_sums(c) - answers)) <= e + 1e-9 for c in allc]
    assert sorted(map(tuple, cands)) == sorted(map(tuple, allc[ok]))
    assert any((c == decoy).all() for c in cands) and any((c == d).all() for c in cands)
    assert np.max((cands != d).sum(axis=1)) <= 4 * e


def test_exhaustive_n401_example():
    # noise n/401 leaves fewer than 1% of the bits wrong: 4 n / 401 < n / 100
    n = 20
    e = n / 401
    assert 4 * e < n / 100
    d = np.random.default_rng(7).integers(0, 2, n).astype(np.int8)
    answers, _ = A.decoy_answers(d, e, rng=1)
    np.testing.assert_array_equal(A.reconstruct_exhaustive(answers, e), d)


def test_exhaustive_raises_when_noise_exceeds_bound(rng):
    d = rng.integers(0, 2, 10).astype(np.int8)
    answers = A.subset_sums(d).astype(float)
    answers[0] = 5.0                         # the empty set cannot contain anyone
    with pytest.raises(ValueError, match="no database is consistent"):
        A.reconstruct_exhaustive(answers, 1.0)


# --------------------------------------------------------------- phase transition
def test_phase_transition_table(rng):
    df = A.phase_transition([16, 32], [0.05, 2.0], trials=2, rng=rng)
    assert list(df.columns) == ["n", "ratio", "sigma", "fraction"] and len(df) == 4
    low = df[df.ratio == 0.05].fraction
    high = df[df.ratio == 2.0].fraction
    assert (low >= 0.95).all() and (high < 0.85).all()
    df_lp = A.phase_transition([16], [0.05], method="lp", trials=1, rng=rng)
    assert df_lp.fraction.iloc[0] >= 0.9


def test_lsq_fraction_follows_the_inverse_wishart_prediction():
    # m = 4n, sigma = r sqrt(n): a bit survives rounding with probability about
    # Phi(sqrt(3) / (4 r)) (notebook 03); the naive 2 Phi(1/(2r)) - 1 is the wrong twin
    rng = np.random.default_rng(11)
    n, r, trials = 200, 0.6, 20
    hits = 0
    for _ in range(trials):
        d, q, a = problem(n, 4 * n, r * np.sqrt(n), rng)
        hits += int((A.reconstruct_lsq(q, a) == d).sum())
    total = n * trials
    assert stats.binomtest(hits, total, stats.norm.cdf(np.sqrt(3) / (4 * r))).pvalue > ALPHA
    assert stats.binomtest(hits, total, 2 * stats.norm.cdf(0.5 / r) - 1).pvalue < ALPHA


# ------------------------------------------------------------------------- bad input
Q = np.array([[1, 0], [0, 1], [1, 1]])
GOOD_A = np.array([1.0, 0.0, 1.0])


@pytest.mark.parametrize("fn", [A.reconstruct_lsq, A.reconstruct_lp, A.lp_decode, A.textbook_lp])
@pytest.mark.parametrize("queries, answers, exc, words", [
    (np.array([[1, 2], [0, 1]]), [1.0, 1.0], ValueError, "only 0 and 1"),
    (np.array([[0.5, 1], [0, 1]]), [1.0, 1.0], ValueError, "only 0 and 1"),
    (np.array([[-1, 1], [0, 1]], dtype=np.int8), [1.0, 1.0], ValueError, "0 and 1"),
    (np.array([1, 0, 1]), [1.0], ValueError, "two-dimensional"),
    (np.zeros((0, 3)), [], ValueError, "empty"),
    (np.array([["a", "b"]]), [1.0], TypeError, "0/1"),
    ("01", [1.0], TypeError, "string"),
    (Q, [1.0, 0.0], ValueError, "3 answers"),
    (Q, [[1.0, 0.0, 1.0]], ValueError, "3 answers"),
    (Q, [1.0, float("nan"), 1.0], ValueError, "NaN"),
    (Q, [1.0, float("inf"), 1.0], ValueError, "finite"),
    (Q, ["1", "0", "x"], TypeError, "numeric"),
])
def test_bad_queries_and_answers(fn, queries, answers, exc, words):
    with pytest.raises(exc, match=words):
        fn(queries, answers)


@pytest.mark.parametrize("answers, bound, exc, words", [
    (np.zeros(6), 1.0, ValueError, "power|2\\^n"),
    (np.zeros(1), 1.0, ValueError, "n >= 1"),
    (np.zeros(2 ** 25), 1.0, ValueError, "at most n = 24"),
    (np.zeros((4, 4)), 1.0, ValueError, "one-dimensional"),
    (np.array([0.0, np.nan, 1.0, 1.0]), 1.0, ValueError, "NaN"),
    (np.zeros(4), -0.5, ValueError, "noise_bound"),
    (np.zeros(4), float("nan"), ValueError, "noise_bound"),
    (np.zeros(4), "1", TypeError, "noise_bound"),
])
def test_bad_subset_answers(answers, bound, exc, words):
    with pytest.raises(exc, match=words):
        A.reconstruct_exhaustive(answers, bound)
    if answers.ndim == 1 and answers.size < 2 ** 15:
        with pytest.raises(exc):
            A.consistent_candidates(answers, bound)


@pytest.mark.parametrize("call, exc", [
    (lambda: A.random_subset_queries(0, 5), ValueError),
    (lambda: A.random_subset_queries(3, 2.5), ValueError),
    (lambda: A.random_subset_queries(3, True), TypeError),
    (lambda: A.answer_queries(Q, [1, 0, 1]), ValueError),
    (lambda: A.answer_queries(Q, [1, 2]), ValueError),
    (lambda: A.noisy_answers(Q, [1, 0], -1.0), ValueError),
    (lambda: A.noisy_answers(Q, [1, 0], 1.0, noise="cauchy"), ValueError),
    (lambda: A.subset_sums(np.ones(25, np.int8)), ValueError),
    (lambda: A.subset_sums([0, 2]), ValueError),
    (lambda: A.bounded_noise_answers([1, 0], -1.0), ValueError),
    (lambda: A.decoy_answers([1, 0], -0.1), ValueError),
    (lambda: A.consistent_candidates(np.zeros(2 ** 15), 1.0), ValueError),
    (lambda: A.fraction_agree([1, 0], [1, 0, 1]), ValueError),
    (lambda: A.lp_decode(Q, GOOD_A, tol=0), ValueError),
    (lambda: A.lp_decode(Q, GOOD_A, max_iter=0), ValueError),
    (lambda: A.lp_decode(Q, GOOD_A, solver=None), ValueError),
    (lambda: A.phase_transition([10], [-0.1]), ValueError),
    (lambda: A.phase_transition([10], [0.1], method="magic"), ValueError),
    (lambda: A.phase_transition([0], [0.1]), ValueError),
])
def test_bad_input_other(call, exc):
    with pytest.raises(exc):
        call()


def test_lp_decoding_reads_in_one_screen():
    # the design: the code a student reads is the formulation; the machinery is private
    import inspect
    import pathlib
    assert len(inspect.getsource(A.lp_decode).splitlines()) <= 45
    assert "linprog" in inspect.getsource(A.lp_decode)
    folder = pathlib.Path(R.__file__).parent
    for path in folder.glob("[!_]*.py"):
        assert len(path.read_text().splitlines()) <= 600, path.name
