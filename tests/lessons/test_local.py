"""The local model (notebook 17, the package dpteach.local): k-ary
randomized response, unary encoding, optimal local hashing and the protocols compared.

Every mechanism's output distribution is tested against its formula (chi-square at
alpha = 1e-6) and a wrong twin is rejected; every estimator is unbiased and has the
variance Wang et al. (2017) give; every mechanism's exact local epsilon equals epsilon,
and a twin's exceeds it."""

import math

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import local
from dpteach import panels
from dpteach.local import protocols as lp

ALPHA = 1e-6


def chi2_pvalue(samples, probs):
    """Goodness of fit of integer samples in 0..len(probs)-1 to probs (cells with
    expected count < 5 are pooled into one)."""
    probs = np.asarray(probs, float)
    n = samples.size
    observed = np.bincount(samples, minlength=probs.size).astype(float)
    big = probs * n >= 5
    obs = np.r_[observed[big], observed[~big].sum()]
    exp = np.r_[probs[big] * n, probs[~big].sum() * n]
    keep = exp > 0
    return stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue


def bits_to_index(reports):
    return (reports.astype(np.int64) << np.arange(reports.shape[-1])).sum(axis=-1)


# ------------------------------------------------------------------ output distributions
@pytest.mark.parametrize("k, eps", [(3, 0.5), (5, 1.0), (10, 2.0)])
def test_krr_reports_follow_the_matrix_and_a_binary_keep_probability_is_rejected(k, eps):
    rng = np.random.default_rng(1)
    P = local.k_randomized_response_probabilities(k, eps)
    for v in (0, k - 1):
        reports = dp.local.k_randomized_response(np.full(200_000, v), k, eps, rng=rng)
        assert chi2_pvalue(reports, P[v]) > ALPHA
        # the twin: binary randomized response's keep probability e^eps/(1+e^eps) for k > 2
        p_wrong = math.exp(eps) / (1 + math.exp(eps))
        wrong = np.full(k, (1 - p_wrong) / (k - 1))
        wrong[v] = p_wrong
        assert chi2_pvalue(reports, wrong) < ALPHA


def test_krr_matrix_closed_form():
    for k, eps in [(2, 0.1), (4, 1.0), (50, 3.0), (3, 800.0)]:
        P = local.k_randomized_response_probabilities(k, eps)
        e = math.exp(min(eps, 700))
        assert P[0, 0] == pytest.approx(e / (e + k - 1), rel=1e-12)
        assert P.sum(axis=1) == pytest.approx(np.ones(k), abs=1e-12)
    assert local.k_randomized_response_keep_probability(2, 0.7) == pytest.approx(
        dp.mechanisms.randomized_response_keep_probability(0.7), rel=1e-15)


def test_krr_with_two_categories_is_binary_randomized_response():
    bits = np.random.default_rng(0).integers(0, 2, 1000)
    a = dp.local.k_randomized_response(bits, 2, 0.8, rng=np.random.default_rng(5))
    b = dp.randomized_response(bits, 0.8, rng=np.random.default_rng(5))
    assert np.array_equal(a, b)
    est = dp.local.k_randomized_response_estimate(a, 2, 0.8)
    assert est[1] == pytest.approx(dp.randomized_response_estimate(a, 0.8), rel=1e-12)
    assert est.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("optimized", [True, False])
def test_unary_encoding_vectors_follow_the_formula_and_eps_per_bit_is_rejected(optimized):
    k, eps = 3, 1.0
    rng = np.random.default_rng(2)
    table = local.unary_encoding_output_probabilities(k, eps, optimized=optimized)
    # the twin: symmetric unary encoding at eps per bit instead of eps/2 (or OUE's q at eps/2)
    twin = (local.unary_encoding_output_probabilities(k, 2 * eps, optimized=False) if not optimized
            else _oue_table_with_q(k, 1 / (math.exp(eps / 2) + 1)))
    for v in range(k):
        reports = dp.local.unary_encoding(np.full(200_000, v), k, eps, optimized=optimized, rng=rng)
        assert reports.shape == (200_000, k) and set(np.unique(reports)) <= {0, 1}
        idx = bits_to_index(reports)
        assert chi2_pvalue(idx, table[v]) > ALPHA
        assert chi2_pvalue(idx, twin[v]) < ALPHA


def _oue_table_with_q(k, q):
    bits = (np.arange(2**k)[None, :] >> np.arange(k)[:, None]) & 1
    out = np.empty((k, 2**k))
    for v in range(k):
        one = np.where(np.arange(k) == v, 0.5, q)[:, None]
        out[v] = np.prod(np.where(bits == 1, one, 1 - one), axis=0)
    return out


def test_unary_encoding_probabilities_closed_form():
    for eps in (0.1, 1.0, 5.0):
        p, q = local.unary_encoding_probabilities(eps, optimized=False)
        assert p == pytest.approx(math.exp(eps / 2) / (math.exp(eps / 2) + 1), rel=1e-14)
        assert q == pytest.approx(1 - p, rel=1e-14)
        assert p == pytest.approx(dp.mechanisms.randomized_response_keep_probability(eps / 2), rel=1e-15)
        p, q = local.unary_encoding_probabilities(eps)
        assert (p, q) == (0.5, pytest.approx(1 / (math.exp(eps) + 1), rel=1e-14))


def test_symmetric_unary_encoding_is_randomized_response_at_half_epsilon():
    values = np.random.default_rng(0).integers(0, 6, 500)
    a = dp.local.unary_encoding(values, 6, 1.3, optimized=False, rng=np.random.default_rng(3))
    onehot = (values[:, None] == np.arange(6)).astype(int)
    b = dp.randomized_response(onehot, 0.65, rng=np.random.default_rng(3))
    assert np.array_equal(a, b)


# ------------------------------------------------------------------ exact local epsilon
@pytest.mark.parametrize("k", [2, 3, 7, 40])
@pytest.mark.parametrize("eps", [0.05, 1.0, 4.0])
def test_krr_exact_local_epsilon_is_epsilon_and_the_binary_twin_exceeds_it(k, eps):
    assert local.local_epsilon(local.k_randomized_response_probabilities(k, eps)) == \
        pytest.approx(eps, rel=1e-9)
    p_wrong = math.exp(eps) / (1 + math.exp(eps))
    twin = np.full((k, k), (1 - p_wrong) / (k - 1))
    np.fill_diagonal(twin, p_wrong)
    twin_eps = local.local_epsilon(twin)
    assert twin_eps == pytest.approx(eps + math.log(k - 1), rel=1e-9)
    if k > 2:
        assert twin_eps > eps + 0.5


@pytest.mark.parametrize("k", [2, 3, 6])
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_unary_encoding_exact_local_epsilon_by_brute_force(k, eps):
    for optimized in (True, False):
        table = local.unary_encoding_output_probabilities(k, eps, optimized=optimized)
        assert table.shape == (k, 2**k)
        assert local.local_epsilon(table) == pytest.approx(eps, rel=1e-9)
    # the twin: eps on every bit, two bits differ, total 2 eps
    twin = local.unary_encoding_output_probabilities(k, 2 * eps, optimized=False)
    assert local.local_epsilon(twin) == pytest.approx(2 * eps, rel=1e-9)


def test_local_epsilon_of_small_tables():
    assert local.local_epsilon([[0.75, 0.25], [0.25, 0.75]]) == pytest.approx(math.log(3))
    assert local.local_epsilon([[1.0, 0.0], [0.5, 0.5]]) == math.inf
    with pytest.raises(ValueError, match="probabilities"):
        local.local_epsilon([[0.5, 0.6], [0.5, 0.5]])


def test_krr_epsilon_agrees_with_opendp():
    opendp = pytest.importorskip("opendp.prelude")
    opendp.enable_features("contrib")
    for k, eps in [(2, 0.5), (5, 1.0), (20, 2.5)]:
        p = local.k_randomized_response_keep_probability(k, eps)
        meas = opendp.m.make_randomized_response(categories=list(range(k)), prob=p)
        assert meas.map(1) == pytest.approx(eps, rel=1e-6)
        assert local.local_epsilon(local.k_randomized_response_probabilities(k, eps)) == \
            pytest.approx(meas.map(1), rel=1e-6)


# ------------------------------------------------------------------ estimators
FREQ = np.array([0.55, 0.25, 0.15, 0.05])


def _z_ok(samples, mean, var):
    """Bonferroni z-test over the k categories at ALPHA."""
    z = (samples.mean(axis=0) - mean) / np.sqrt(var / samples.shape[0])
    return np.max(np.abs(z)) < stats.norm.isf(ALPHA / (2 * np.size(mean)))


@pytest.mark.parametrize("mechanism", ["krr", "sue", "oue"])
def test_estimators_are_unbiased_on_simulated_people_and_raw_shares_are_not(mechanism):
    n, k, eps, runs = 400, 4, 1.0, 1500
    values = np.repeat(np.arange(k), (FREQ * n).astype(int))
    rng = np.random.default_rng(11)
    if mechanism == "krr":
        reports = dp.local.k_randomized_response(np.tile(values, (runs, 1)), k, eps, rng=rng)
        est = np.array([dp.local.k_randomized_response_estimate(r, k, eps) for r in reports])
        raw = np.array([np.bincount(r, minlength=k) / n for r in reports])
    else:
        optimized = mechanism == "oue"
        reports = dp.local.unary_encoding(np.tile(values, (runs, 1)), k, eps, optimized=optimized, rng=rng)
        est = np.array([dp.local.unary_encoding_estimate(r, eps, optimized=optimized) for r in reports])
        raw = reports.mean(axis=1)
    var = dp.local.local_variance(n, k, eps, mechanism=mechanism, frequency=FREQ)
    assert _z_ok(est, FREQ, var)
    # the spread of the person-by-person estimates matches the formula too (chi-square on s^2)
    stat = (runs - 1) * est.var(axis=0, ddof=1) / var
    assert np.all(stats.chi2.sf(stat, runs - 1) > ALPHA / (2 * k))
    assert np.all(stats.chi2.cdf(stat, runs - 1) > ALPHA / (2 * k))
    # twins: the uncorrected shares, and the correction at the wrong epsilon
    assert not _z_ok(raw, FREQ, var)
    wrong = local.estimate_from_counts(raw * n, n, k, eps / 2, mechanism=mechanism)
    assert not _z_ok(wrong, FREQ, var)


@pytest.mark.parametrize("mechanism", ["krr", "sue", "oue"])
def test_estimator_variance_matches_wang_et_al_and_var_star_alone_is_rejected(mechanism):
    n, k, eps, runs = 1000, 4, 1.0, 40_000
    counts = (FREQ * n).astype(int)
    rng = np.random.default_rng(12)
    reports = local.report_counts(counts, eps, mechanism=mechanism, rng=rng, size=runs)
    est = local.estimate_from_counts(reports, n, k, eps, mechanism=mechanism)
    assert _z_ok(est, FREQ, dp.local.local_variance(n, k, eps, mechanism=mechanism, frequency=FREQ))
    s2 = est[:, 0].var(ddof=1)

    def consistent(var):
        stat = (runs - 1) * s2 / var
        return min(stats.chi2.cdf(stat, runs - 1), stats.chi2.sf(stat, runs - 1)) > ALPHA / 2

    assert consistent(dp.local.local_variance(n, k, eps, mechanism=mechanism, frequency=FREQ[0]))
    if mechanism == "sue":
        # p + q = 1: the f_v term vanishes, Var* is the whole variance; the twin is eps per bit
        assert dp.local.local_variance(n, k, eps, mechanism="sue") == pytest.approx(
            dp.local.local_variance(n, k, eps, mechanism="sue", frequency=FREQ[0]), rel=1e-12)
        assert not consistent(dp.local.local_variance(n, k, 2 * eps, mechanism=mechanism))
    else:
        # the twin: Var* without the f_v term, for the category most people hold
        assert not consistent(dp.local.local_variance(n, k, eps, mechanism=mechanism))


def test_var_star_closed_forms():
    for n, k, eps in [(100, 2, 0.5), (10_000, 16, 1.0), (10**6, 100, 4.0)]:
        e = math.exp(eps)
        assert dp.local.local_variance(n, k, eps, mechanism="krr") == pytest.approx((e + k - 2) / (n * (e - 1) ** 2), rel=1e-10)
        h = math.exp(eps / 2)
        assert dp.local.local_variance(n, k, eps, mechanism="sue") == pytest.approx(h / (n * (h - 1) ** 2), rel=1e-10)
        assert dp.local.local_variance(n, k, eps, mechanism="oue") == pytest.approx(4 * e / (n * (e - 1) ** 2), rel=1e-10)
        # the twin (k - 1 for k - 2) is a different number
        assert dp.local.local_variance(n, k, eps, mechanism="krr") != pytest.approx((e + k - 1) / (n * (e - 1) ** 2), rel=1e-6)


def test_variance_keeps_its_precision_at_tiny_epsilon():
    """p - q is computed without cancellation: Var* stays exact to 1e-9 at eps = 1e-12
    (subtracting p and q there loses four digits)."""
    eps = 1e-12
    e, m = math.exp(eps), math.expm1(eps)
    assert dp.local.local_variance(1, 8, eps, mechanism="oue") == pytest.approx(4 * e / m**2, rel=1e-9)
    assert dp.local.local_variance(1, 8, eps, mechanism="krr") == pytest.approx((e + 6) / m**2, rel=1e-9)
    h = math.expm1(eps / 2)
    assert dp.local.local_variance(1, 8, eps, mechanism="sue") == pytest.approx(math.exp(eps / 2) / h**2, rel=1e-9)
    with pytest.raises(ValueError, match="epsilon"):
        dp.local.local_variance(10, 3, 5e-324)


def test_oue_never_worse_than_sue_and_the_krr_rule():
    for eps in np.linspace(0.1, 6, 25):
        assert dp.local.local_variance(1000, 8, eps, mechanism="oue") <= dp.local.local_variance(1000, 8, eps, mechanism="sue") * (1 + 1e-12)
        for k in (2, 3, 5, 10, 30, 100, 1000):
            better = dp.local.local_variance(1000, k, eps, mechanism="krr") < dp.local.local_variance(1000, k, eps, mechanism="oue")
            assert local.k_randomized_response_is_better(k, eps) == better


def test_the_central_local_gap():
    for eps in (0.01, 0.001):
        # OUE: sqrt(n Var*) * eps -> 2 as eps -> 0; the central error sqrt(2)/(eps n) exactly
        assert math.sqrt(1000 * dp.local.local_variance(1000, 8, eps)) * eps == pytest.approx(2.0, rel=1e-2)
    for n in (100, 10_000):
        assert math.sqrt(local.central_variance(n, 0.5)) == pytest.approx(math.sqrt(2) / (0.5 * n))
    # measured: the central histogram's frequency variance over many runs
    counts = np.array([300, 500, 200])
    est = local.central_histogram_estimate(counts, 0.5, rng=np.random.default_rng(3), size=40_000)
    s2 = est.var(axis=0, ddof=1)
    stat = (est.shape[0] - 1) * s2 / local.central_variance(1000, 0.5)
    # Laplace noise is not normal: compare with a z-test on the variance instead (4th moment 6b^4)
    b4 = (1 / 0.5 / 1000) ** 4
    se = np.sqrt((24 * b4 - (2 * (1 / 0.5 / 1000) ** 2) ** 2) / est.shape[0])
    z = (s2 - local.central_variance(1000, 0.5)) / se
    assert np.all(np.abs(z) < stats.norm.isf(ALPHA / 6)) and stat.size == 3
    z_twin = (s2 - local.central_variance(1000, 0.5 / 2)) / se        # eps/2: four times the variance
    assert np.all(np.abs(z_twin) > stats.norm.isf(ALPHA / 6))


# ------------------------------------------------------------------ the fast count sampler
def _exact_count_distribution(per_person, holders):
    """Exact distribution of the report counts: per_person[v] maps an output (a tuple of k
    0/1 counts it adds) to its probability for a holder of v."""
    dist = {None: 1.0}
    for v in holders:
        new = {}
        for c, pc in dist.items():
            for add, pa in per_person[v].items():
                key = add if c is None else tuple(a + b for a, b in zip(c, add))
                new[key] = new.get(key, 0.0) + pc * pa
        dist = new
    return dist


@pytest.mark.parametrize("mechanism", ["krr", "oue", "sue"])
def test_report_counts_has_the_exact_joint_distribution_and_a_twin_does_not(mechanism):
    k, eps, counts = 3, 1.0, np.array([2, 1, 1])
    holders = np.repeat(np.arange(k), counts)
    if mechanism == "krr":
        P = local.k_randomized_response_probabilities(k, eps)
        per_person = {v: {tuple(np.eye(k, dtype=int)[r]): P[v, r] for r in range(k)} for v in range(k)}
    else:
        table = local.unary_encoding_output_probabilities(k, eps, optimized=mechanism == "oue")
        per_person = {v: {tuple((j >> np.arange(k)) & 1): table[v, j] for j in range(2**k)}
                      for v in range(k)}
    exact = _exact_count_distribution(per_person, holders)
    keys = sorted(exact)
    index = {key: i for i, key in enumerate(keys)}
    probs = np.array([exact[key] for key in keys])
    rng = np.random.default_rng(4)
    draws = local.report_counts(counts, eps, mechanism=mechanism, rng=rng, size=200_000)
    assert np.all(draws.sum(axis=1) == 4) if mechanism == "krr" else True
    samples = np.array([index[tuple(row)] for row in draws])
    assert chi2_pvalue(samples, probs) > ALPHA
    # the twin: keep the truth with p (not p - q), then a uniform category
    if mechanism == "krr":
        p = local.k_randomized_response_keep_probability(k, eps)
        kept = rng.binomial(counts, p, size=(200_000, k))
        twin = kept + rng.multinomial(4 - kept.sum(axis=1), np.full(k, 1 / k))
    else:   # unary encoding at eps per bit
        p, q = local.unary_encoding_probabilities(2 * eps, optimized=False)
        twin = rng.binomial(counts, p, size=(200_000, k)) + rng.binomial(4 - counts, q, size=(200_000, k))
    twin_samples = np.array([index.get(tuple(row), len(keys)) for row in twin])
    assert chi2_pvalue(twin_samples, np.r_[probs, 0.0]) < ALPHA


def test_report_counts_shapes_and_true_counts():
    c = local.true_counts(1000, local.example_frequencies(7))
    assert c.sum() == 1000 and c.dtype.kind == "i" and np.all(np.diff(c) <= 0)
    out = local.report_counts(np.stack([c, c]), 1.0, mechanism="krr", rng=0, size=5)
    assert out.shape == (5, 2, 7) and np.all(out.sum(axis=-1) == 1000)
    assert local.report_counts(c, 1.0, rng=0).shape == (7,)


# ------------------------------------------------------------------ bad input
BAD = [
    (dp.local.k_randomized_response, dict(values=[0, 1], k=3, epsilon=float("nan")), "epsilon"),
    (dp.local.k_randomized_response, dict(values=[0, 1], k=3, epsilon=0.0), "epsilon"),
    (dp.local.k_randomized_response, dict(values=[0, 1], k=3, epsilon=True), "epsilon"),
    (dp.local.k_randomized_response, dict(values=[0, 1], k=3, epsilon="1"), "epsilon"),
    (dp.local.k_randomized_response, dict(values=[0, 1], k=3, epsilon=math.inf), "epsilon"),
    (dp.local.k_randomized_response, dict(values=[0, 1], k=1, epsilon=1.0), "k"),
    (dp.local.k_randomized_response, dict(values=[0, 1], k=2.5, epsilon=1.0), "k"),
    (dp.local.k_randomized_response, dict(values=[0, 1], k=True, epsilon=1.0), "k"),
    (dp.local.k_randomized_response, dict(values=[0, 3], k=3, epsilon=1.0), "values"),
    (dp.local.k_randomized_response, dict(values=[0.5], k=3, epsilon=1.0), "values"),
    (dp.local.k_randomized_response, dict(values=[-1], k=3, epsilon=1.0), "values"),
    (dp.local.k_randomized_response, dict(values="012", k=3, epsilon=1.0), "values"),
    (dp.local.k_randomized_response, dict(values=[0, np.nan], k=3, epsilon=1.0), "values"),
    (dp.local.k_randomized_response_estimate, dict(reports=[0, 5], k=3, epsilon=1.0), "reports"),
    (dp.local.k_randomized_response_estimate, dict(reports=[0, 1], k=3, epsilon=-1.0), "epsilon"),
    (dp.local.unary_encoding, dict(values=[0, 1], k=3, epsilon=1.0, optimized="yes"), "optimized"),
    (dp.local.unary_encoding, dict(values=[0, 1], k=3, epsilon=float("nan")), "epsilon"),
    (dp.local.unary_encoding, dict(values=[0, 4], k=3, epsilon=1.0), "values"),
    (dp.local.unary_encoding_estimate, dict(reports=[[0, 2], [1, 0]], epsilon=1.0), "reports"),
    (dp.local.unary_encoding_estimate, dict(reports=[1], epsilon=1.0), "reports"),
    (dp.local.unary_encoding_estimate, dict(reports=[[0, 1]], epsilon=0), "epsilon"),
    (dp.local.local_variance, dict(n=0, k=3, epsilon=1.0), "n"),
    (dp.local.local_variance, dict(n=10.5, k=3, epsilon=1.0), "n"),
    (dp.local.local_variance, dict(n=10, k=3, epsilon=1.0, mechanism="rappor"), "mechanism"),
    (dp.local.local_variance, dict(n=10, k=3, epsilon=1.0, frequency=1.5), "frequency"),
    (dp.local.local_variance, dict(n=10, k=3, epsilon=1e400), "epsilon"),
    (local.central_variance, dict(n=10, epsilon=1.0, sensitivity=-1.0), "sensitivity"),
    (local.report_counts, dict(counts=[1.5, 2], epsilon=1.0), "counts"),
    (local.report_counts, dict(counts=[1, 2], epsilon=1.0, rng=-1), "rng"),
    (local.report_counts, dict(counts=[1, 2], epsilon=1.0, size=-2), "size"),
    (local.true_counts, dict(n=10, frequencies=[0.5, 0.6]), "frequencies"),
    (local.unary_encoding_output_probabilities, dict(k=13, epsilon=1.0), "k"),
    (local.k_randomized_response_is_better, dict(k=1, epsilon=1.0), "k"),
    (dp.local.local_variance, dict(n=10**400, k=3, epsilon=1.0), "n"),
    (local.central_variance, dict(n=1e308, epsilon=1.0), "n"),
    (local.true_counts, dict(n=10**400, frequencies=[0.5, 0.5]), "n"),
    (local.estimate_from_counts, dict(counts=[1, 2], n=10**400, k=2, epsilon=1.0), "n"),
    (local.estimate_from_counts, dict(counts=[1, 2], n=3, k=2, epsilon=5e-324), "epsilon"),
    (local.unary_encoding_output_probabilities, dict(k=1, epsilon=1.0), "k"),
    (local.local_epsilon, dict(probabilities=[[0.5, 0.5]]), "probabilities"),
    (local.local_epsilon, dict(probabilities=[0.5, 0.5]), "probabilities"),
    (local.central_histogram_estimate, dict(counts=[-1, 2], epsilon=1.0), "counts"),
    (local.central_histogram_estimate, dict(counts=[0, 0], epsilon=1.0), "counts"),
    (local.central_histogram_estimate, dict(counts=[3, 2], epsilon=0.0), "epsilon"),
]


@pytest.mark.parametrize("fn, kwargs, name", BAD, ids=[f"{f.__name__}-{n}-{i}" for i, (f, _, n) in enumerate(BAD)])
def test_bad_input_is_refused_naming_the_parameter(fn, kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        fn(**kwargs)


# ------------------------------------------------------------------ the panel's numbers
def test_panel_measures_errors_that_agree_with_the_formulas():
    from dpteach.panels import local as panel

    f = local.example_frequencies(8)
    counts = np.array([local.true_counts(m, f) for m in (1000, 100_000)])
    rng = np.random.default_rng(0)
    lap = rng.laplace(size=(400, 2, 8))
    for mech in ("oue", "sue", "krr"):
        rl, rc, _, _ = panel.measured_errors(counts, 1.0, mech, rng, lap)
        for i, n in enumerate((1000, 100_000)):
            want_l = math.sqrt(np.mean(dp.local.local_variance(n, 8, 1.0, mechanism=mech, frequency=counts[i] / n)))
            want_c = math.sqrt(local.central_variance(n, 1.0, sensitivity=2.0))  # judged alike: a swap
            assert rl[i] == pytest.approx(want_l, rel=0.1)
            assert rc[i] == pytest.approx(want_c, rel=0.1)
        # the gap grows like sqrt(n): 100 times more people, 10 times larger ratio
        assert (rl[1] / rc[1]) / (rl[0] / rc[0]) == pytest.approx(10.0, rel=0.15)


# ------------------------------------------------------------------
# Optimal local hashing (Wang, Blocki, Li & Jha 2017): unbiased counts, the variance
# formula, and the epsilon-LDP of the report given the hash function; each against a twin.


def test_hash_size_is_e_to_the_epsilon_plus_one():
    assert local.olh_hash_size(1.0) == round(math.e + 1)
    assert local.olh_hash_size(3.0) == round(math.exp(3) + 1)


def test_estimates_are_unbiased_with_the_stated_variance():
    k, n, eps = 50, 4000, 2.0
    values = np.random.default_rng(0).integers(0, 10, size=n)  # only 0..9 occur
    truth = np.bincount(values, minlength=k)
    runs = 60
    est = np.array([dp.olh_estimate(values, k, eps, rng=np.random.default_rng(100 + s)) for s in range(runs)])
    err = est - truth
    # each count's error has mean 0: a z-test over all runs and cells at alpha = 1e-6
    g = local.olh_hash_size(eps)
    p = math.exp(eps) / (math.exp(eps) + g - 1)
    q = 1 / g
    cell_var = (truth * p * (1 - p) + (n - truth) * q * (1 - q)) / (p - q) ** 2
    z = err.sum() / math.sqrt(runs * cell_var.sum())
    assert abs(z) < stats.norm.isf(ALPHA / 2)
    var = local.olh_variance(n, eps)
    # the variance of an absent value's estimate matches n q(1 - q) / (p - q)^2 (chi-square test)
    absent = err[:, 10:].ravel()
    chi2 = (absent ** 2).sum() / var
    lo, hi = stats.chi2.ppf(ALPHA / 2, absent.size), stats.chi2.isf(ALPHA / 2, absent.size)
    assert lo < chi2 < hi
    twin = n * p * (1 - p) / (p - 1 / g) ** 2    # wrong twin: the variance of the true value's own bucket
    assert not (stats.chi2.ppf(ALPHA / 2, absent.size) < (absent ** 2).sum() / twin
                < stats.chi2.isf(ALPHA / 2, absent.size))
    # at g = e^eps + 1 the variance is close to n 4 e^eps / (e^eps - 1)^2
    assert local.olh_variance(n, 3.0, g=math.exp(3.0) + 1) == pytest.approx(
        n * 4 * math.exp(3.0) / (math.exp(3.0) - 1) ** 2, rel=1e-9)


def test_report_is_epsilon_ldp_given_the_hash():
    """Given the user's hash seed, the report is g-ary randomized response of H(v):
    the probability ratio of any report between two inputs is at most e^epsilon."""
    eps = 1.5
    g = local.olh_hash_size(eps)
    p = math.exp(eps) / (math.exp(eps) + g - 1)
    q = 1 / (math.exp(eps) + g - 1)
    assert p / q == pytest.approx(math.exp(eps))
    rng = np.random.default_rng(3)
    seeds, reports = local.olh_reports(np.zeros(40_000, int), 5, eps, rng=rng)
    hashed = local.hashing._hash(seeds, np.zeros(seeds.size, np.int64), g)
    kept = np.mean(reports == hashed)
    assert stats.binomtest(int(kept * seeds.size), seeds.size, p).pvalue > ALPHA
    assert stats.binomtest(int(kept * seeds.size), seeds.size, 1 / g).pvalue < ALPHA  # no-privacy twin


@pytest.mark.parametrize("call, name", [
    (lambda: dp.olh_estimate([0, 1, 5], 3, 1.0), "values"),
    (lambda: dp.olh_estimate([0, 1], 1, 1.0), "k"),
    (lambda: dp.olh_estimate([0, 1], 3, 0.0), "epsilon"),
    (lambda: dp.olh_estimate([0, 1], 3, 100.0), "epsilon"),
    (lambda: dp.olh_estimate([0, 1], 3, float("nan")), "epsilon"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


# ------------------------------------------------------------------
# The local protocols compared in notebook 17 (k-ary randomized response, unary encoding,
# optimal local hashing): their variances are the lesson's formulas, the crossing points
# are where the variances meet, and the local_protocols_variance panel marks them.


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_protocol_variances_are_the_lesson_formulas(eps):
    ks = np.array([2, 5, 64, 1000])
    v = lp.protocol_variances(ks, eps)
    for m in ("krr", "sue", "oue"):
        np.testing.assert_allclose(v[m], [dp.local.local_variance(1, int(k), eps, mechanism=m) for k in ks])
    np.testing.assert_allclose(v["olh"], dp.local.olh_variance(1, eps))
    np.testing.assert_allclose(v["oue"], 4 * math.exp(eps) / math.expm1(eps) ** 2)
    e = math.exp(eps)
    np.testing.assert_allclose(v["krr"], (e + ks - 2) / (e - 1) ** 2)
    # OLH at g = e^eps + 1 exactly has OUE's variance; rounding g can only cost
    assert dp.local.olh_variance(1, eps, g=e + 1) == pytest.approx(v["oue"][0])
    assert v["olh"][0] >= v["oue"][0] * (1 - 1e-12)


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_krr_crossover_k_is_where_the_variances_meet(eps):
    k_oue = lp.k_randomized_response_crossover_k(eps, against="oue")
    assert k_oue == pytest.approx(3 * math.exp(eps) + 2)
    assert k_oue != pytest.approx(3 * math.exp(eps))                      # twin: k - 2 dropped
    for against in ("oue", "sue", "olh"):
        k = lp.k_randomized_response_crossover_k(eps, against=against)
        lo, hi = math.floor(k), math.ceil(k)
        if lo < 2:
            continue
        v = lp.protocol_variances(np.array([lo, hi]), eps)
        assert v["krr"][0] <= v[against][0] <= v["krr"][1]
        # k-RR's variance is linear in k: interpolating at k meets the other exactly
        assert np.interp(k, [lo, hi], v["krr"]) == pytest.approx(v[against][0]) if hi > lo else True
    for k in range(2, 40):
        assert local.k_randomized_response_is_better(k, eps) == (k < k_oue)


@pytest.mark.parametrize("k", [6, 16, 64, 1000])
def test_krr_crossover_epsilon_is_where_the_variances_meet(k):
    e = lp.k_randomized_response_crossover_epsilon(k, against="oue")
    assert e == pytest.approx(math.log((k - 2) / 3), abs=1e-9)
    for against in ("oue", "olh"):
        e = lp.k_randomized_response_crossover_epsilon(k, against=against)
        gap = [lp.protocol_variances(k, x)["krr"] - lp.protocol_variances(k, x)[against]
               for x in (e - 1e-6, e + 1e-6)]
        assert gap[0] > 0 > gap[1] or abs(gap[0] - gap[1]) > 0       # k-RR worse below, better above
    assert lp.k_randomized_response_crossover_epsilon(4) is None                     # k <= 5: k-RR always better


def test_report_bits():
    assert lp.report_bits(1024, 1.0, "krr") == 10
    assert lp.report_bits(1024, 1.0, "oue") == 1024
    assert lp.report_bits(1024, 1.0, "olh") == 2 + 64            # g = 4 buckets
    with pytest.raises(ValueError, match="protocol"):
        lp.report_bits(8, 1.0, "rappor")


# ------------------------------------------------------------------ the two panels
def test_local_protocols_panel_marks_the_crossings_the_lesson_computes():
    panel = panels.local_protocols_variance(epsilon=1.0, k=64)
    ax1, ax2 = panel.figure.axes[:2]
    cross_k = [ln for ln in ax1.get_lines() if "3e" in (ln.get_label() or "")][0]
    assert cross_k.get_xdata()[0] == pytest.approx(lp.k_randomized_response_crossover_k(1.0))
    cross_e = [ln for ln in ax2.get_lines() if ln.get_label() == "k-RR = OUE"][0]
    assert cross_e.get_xdata()[0] == pytest.approx(math.log(62 / 3))
    assert "best: OUE" in panel.status.value
    panel.controls["k"].value = 4
    assert "best: KRR" in panel.status.value
    panel.close()
