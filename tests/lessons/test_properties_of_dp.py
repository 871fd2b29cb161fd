"""The properties of differential privacy (notebook 12): post-processing, group privacy,
parallel composition.

Each formula is checked against an exact computation on a mechanism (hockey-stick
divergences of finite distributions, Laplace losses on a grid, sampling at alpha = 1e-6)
and each check rejects a deliberately wrong twin.
"""

import itertools

import numpy as np
import pytest
from scipy import stats

import dpteach as dp
from dpteach import mechanisms, properties

ALPHA = 1e-6


# ------------------------------------------------------------------ group privacy
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("delta", [0.0, 1e-6, 1e-3])
@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_group_privacy_closed_form(eps, delta, k):
    e, d = dp.group_privacy(eps, delta, k)
    assert e == pytest.approx(k * eps, rel=1e-15)
    assert d == pytest.approx(k * np.exp((k - 1) * eps) * delta, rel=1e-13, abs=0)
    assert isinstance(e, float) and isinstance(d, float)
    if k == 1:
        assert (e, d) == (pytest.approx(eps), pytest.approx(delta))


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
@pytest.mark.parametrize("k", [1, 2, 5, 10])
def test_laplace_loss_between_datasets_k_apart_is_exactly_k_eps(eps, k):
    """A count with Lap(1/eps): the largest loss between counts k apart is k eps, the
    pure part of group_privacy, and is reached (so the twin 'eps for any group' fails)."""
    r = np.linspace(-50, 60, 22001)
    worst = np.max(np.abs(mechanisms.privacy_loss(r, 0.0, float(k), 1 / eps)))
    assert worst == pytest.approx(dp.group_privacy(eps, 0.0, k)[0], rel=1e-12)
    if k > 1:
        assert worst > eps * 1.5                       # twin: groups cost the same eps


def _truncated_discrete_laplace(eps, m, shift, support):
    """x + Z with Pr[Z = z] proportional to e^(-eps |z|) on |z| <= m: (eps, delta)-DP with
    delta = Pr[Z = -m], the output the neighbour cannot produce."""
    z = np.arange(-m, m + 1)
    w = np.exp(-eps * np.abs(z))
    w /= w.sum()
    p = np.zeros(support.size)
    p[np.searchsorted(support, z + shift)] = w
    return p


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("m", [3, 8])
def test_approximate_group_privacy_holds_and_the_k_delta_twin_fails(eps, m):
    """Exact hockey-stick deltas of a truncated discrete Laplace on datasets k apart: at
    most k e^((k-1) eps) delta, but above k delta (so the e^((k-1) eps) factor is needed)."""
    support = np.arange(-m - 12, m + 13)
    p0 = _truncated_discrete_laplace(eps, m, 0, support)
    delta = dp.definition.smallest_delta(p0, _truncated_discrete_laplace(eps, m, 1, support), eps)
    assert delta > 0
    for k in range(1, 8):
        pk = _truncated_discrete_laplace(eps, m, k, support)
        eps_k, bound = dp.group_privacy(eps, delta, k)
        true = dp.definition.smallest_delta(p0, pk, eps_k)
        assert true <= bound * (1 + 1e-12)
        # the chain's exact value: delta (1 + e^eps + ... + e^((k-1) eps)) while k <= m
        if k <= m:
            assert true == pytest.approx(delta * np.sum(np.exp(eps * np.arange(k))), rel=1e-9)
        if k >= 2:
            assert true > k * delta * (1 + 1e-9)          # twin: k delta is not enough


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (1.0, 1e-5), (0.1, 1e-8)])
def test_gaussian_group_delta_is_below_the_bound(eps, delta):
    from dpteach.properties import group_curves
    ks = np.arange(1, 11)
    true, bound = group_curves(eps, delta, ks)
    assert np.all(true <= bound * (1 + 1e-9))
    assert true[0] == pytest.approx(delta, rel=1e-6)    # k = 1: the calibrated delta


def test_group_privacy_huge_k_does_not_crash():
    e, d = dp.group_privacy(5.0, 1e-6, 10_000)
    assert e == 50_000.0 and d == float("inf")
    assert dp.group_privacy(5.0, 0.0, 10_000) == (50_000.0, 0.0)


# ------------------------------------------------------------------ parallel composition
def test_parallel_composition_is_the_maximum():
    assert dp.parallel_composition([0.1, 0.5, 0.3]) == (0.5, 0.0)
    assert dp.parallel_composition([0.1, 0.5], [1e-5, 1e-7]) == (0.5, 1e-5)
    assert dp.parallel_composition(0.7) == (0.7, 0.0)
    assert dp.parallel_composition(np.array([0.2, 0.2])) == (0.2, 0.0)
    with pytest.raises(ValueError, match="deltas"):
        dp.parallel_composition([0.1, 0.2], [1e-5])


def _histogram_worst_loss(eps, change):
    """Largest joint loss of independent Lap(1/eps) releases of several counts when the
    counts change by ``change``: the losses add, each at most |change_i| eps, and each
    bound is reached on its own coordinate (far on the left), so the maximum is the sum."""
    r = np.linspace(-40, 40, 8001)
    return sum(np.max(mechanisms.privacy_loss(r, 0.0, float(c), 1 / eps)) for c in change)


@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0])
@pytest.mark.parametrize("bins", [1, 4, 12])
def test_disjoint_histogram_costs_the_max_and_overlapping_counts_the_sum(eps, bins):
    """One person changes one disjoint bin (parallel: max) but every cumulative count
    'age group <= j' (sequential: sum). The twins -- sum for disjoint, max for
    overlapping -- are both rejected when there is more than one count."""
    from dpteach.properties import parallel_costs
    disjoint = _histogram_worst_loss(eps, [1] + [0] * (bins - 1))
    overlapping = _histogram_worst_loss(eps, [1] * bins)
    par = dp.parallel_composition([eps] * bins)[0]
    seq = dp.basic_composition([eps] * bins)[0]
    assert disjoint == pytest.approx(par, rel=1e-9)
    assert overlapping == pytest.approx(seq, rel=1e-9)
    assert parallel_costs(eps, bins) == (pytest.approx(par), pytest.approx(seq))
    if bins > 1:
        assert disjoint != pytest.approx(seq, rel=1e-3)
        assert overlapping != pytest.approx(par, rel=1e-3)


def test_parallel_histogram_empirically_one_eps():
    """Sampling: a histogram of disjoint bins released with Lap(1/eps) per bin on two
    neighbours; the event 'bin 0 released above 0.5' has a frequency ratio near e^eps
    (exact binomial tests at 1e-6) -- and the other bins' releases are identically
    distributed (KS at 1e-6), so they add no loss. The twin, a shifted second bin, is
    rejected by the same KS test."""
    eps, n, bins = 1.0, 200_000, 4
    rng = np.random.default_rng(4)
    counts = np.array([0.0, 5.0, 3.0, 7.0])
    neighbour = counts + np.array([1.0, 0, 0, 0])
    x = counts + rng.laplace(0, 1 / eps, size=(n, bins))
    y = neighbour + rng.laplace(0, 1 / eps, size=(n, bins))
    px = float(stats.laplace.sf(1.5, 0, 1 / eps))
    py = float(stats.laplace.sf(1.5, 1, 1 / eps))
    assert stats.binomtest(int(np.sum(x[:, 0] > 1.5)), n, px).pvalue > ALPHA
    assert stats.binomtest(int(np.sum(y[:, 0] > 1.5)), n, py).pvalue > ALPHA
    assert py / px == pytest.approx(np.exp(eps), rel=1e-12)
    for j in range(1, bins):
        assert stats.ks_2samp(x[:, j], y[:, j]).pvalue > ALPHA
    assert stats.ks_2samp(x[:, 1], y[:, 1] + 0.05).pvalue < ALPHA


# ------------------------------------------------------------------ post-processing
FS = [("identity", {}), ("round", dict(step=1.0)), ("round", dict(step=0.3)),
      ("round", dict(step=3.0)), ("clamp", dict(lower=0.0, upper=1.0)),
      ("clamp", dict(lower=0.4, upper=0.6)), ("clamp", dict(lower=-5.0, upper=8.0)),
      ("threshold", dict(threshold=0.5)), ("threshold", dict(threshold=3.0))]


@pytest.mark.parametrize("f,kw", FS)
def test_postprocessed_law_sums_to_one(f, kw):
    from scipy import integrate
    law = properties.postprocess_laplace(0.3, 0.7, f, **kw)
    mass = law.atom_probs.sum()
    if f in ("identity", "clamp"):
        lo, hi = law.support
        lo, hi = max(lo, 0.3 - 60 * 0.7), min(hi, 0.3 + 60 * 0.7)
        cont, _ = integrate.quad(lambda y: stats.laplace.pdf(y, 0.3, 0.7), lo, hi, points=[0.3]
                                 if lo < 0.3 < hi else None, epsabs=1e-13)
        mass += cont
        assert law.continuous_mass == pytest.approx(cont, abs=1e-9)
    assert mass == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("f,kw", [x for x in FS if x[0] != "identity"])
def test_postprocessed_law_matches_samples_and_rejects_a_wrong_scale(f, kw):
    """Frequencies of f(value + Lap(b)) over the atoms (chi-square at 1e-6); the law for
    the scale 1.3 b (twin) is rejected on the same samples."""
    rng = np.random.default_rng(8)
    v, b, n = 0.3, 0.7, 200_000
    y = v + rng.laplace(0, b, n)
    if f == "round":
        out = np.round(y / kw["step"]) * kw["step"]
    elif f == "clamp":
        out = np.clip(y, kw["lower"], kw["upper"])
    else:
        out = (y > kw["threshold"]).astype(float)

    def pvalue(scale):
        law = properties.postprocess_laplace(v, scale, f, **kw)
        keep = law.atom_probs > 5 / n
        obs = np.array([np.sum(np.isclose(out, a, rtol=0, atol=1e-9)) for a in law.atoms[keep]])
        exp = law.atom_probs[keep] * n
        rest_obs, rest_exp = n - obs.sum(), n - exp.sum()     # density part and tiny atoms
        if rest_exp > 5:
            obs, exp = np.append(obs, rest_obs), np.append(exp, rest_exp)
        else:
            exp = exp * obs.sum() / exp.sum()
        return stats.chisquare(obs, exp).pvalue

    assert pvalue(b) > ALPHA
    assert pvalue(1.3 * b) < ALPHA


def _brute_sup_over_sets(p, q):
    """sup over every non-empty set S of outputs of |ln P(S)/Q(S)| (small supports)."""
    keep = (p > 1e-300) | (q > 1e-300)
    p, q = p[keep], q[keep]
    best = 0.0
    for r in range(1, p.size + 1):
        for s in itertools.combinations(range(p.size), r):
            a, b = p[list(s)].sum(), q[list(s)].sum()
            if a > 0 and b > 0:
                best = max(best, abs(np.log(a / b)))
    return best


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("f,kw", FS)
def test_post_processing_never_exceeds_eps(eps, f, kw):
    b = 1 / eps
    loss = properties.max_log_ratio(0.0, 1.0, b, f, **kw)
    assert loss <= eps * (1 + 1e-12)
    if f == "identity":
        assert loss == pytest.approx(eps)


@pytest.mark.parametrize("eps", [0.3, 1.0])
@pytest.mark.parametrize("f,kw", [("threshold", dict(threshold=0.5)), ("threshold", dict(threshold=-2.0)),
                                  ("round", dict(step=4.0)), ("round", dict(step=1.0))])
def test_max_log_ratio_equals_the_sup_over_all_sets(eps, f, kw):
    b = 1 / eps
    p = properties.postprocess_laplace(0.0, b, f, **kw)
    q = properties.postprocess_laplace(1.0, b, f, **kw)
    # the same outputs in both laws; for round, the 12 cells nearest the values (2^12 sets)
    qmap = dict(zip(np.round(q.atoms, 9), q.atom_probs))
    outs = sorted(set(np.round(p.atoms, 9)) & set(qmap), key=lambda a: abs(a - 0.5))[:12]
    pmap = dict(zip(np.round(p.atoms, 9), p.atom_probs))
    brute = _brute_sup_over_sets(np.array([pmap[a] for a in outs]), np.array([qmap[a] for a in outs]))
    assert properties.max_log_ratio(0.0, 1.0, b, f, **kw) >= brute - 1e-9
    if f == "threshold":
        assert properties.max_log_ratio(0.0, 1.0, b, f, **kw) == pytest.approx(brute, rel=1e-9)
        # twin: the log of the ratio of the means E f(M(x)) / E f(M(x')) is a single set's
        # ratio, below the sup for a threshold between the values
        t = kw["threshold"]
        one = abs(np.log(stats.laplace.sf(t, 0, b) / stats.laplace.sf(t, 1, b)))
        assert one <= brute + 1e-12


def test_threshold_between_the_counts_reduces_the_loss():
    eps = 1.0
    loss = properties.max_log_ratio(0.0, 1.0, 1 / eps, "threshold", threshold=0.5)
    expected = np.log((1 - 0.5 * np.exp(-0.5)) / (0.5 * np.exp(-0.5)))   # the "below" outcome
    assert loss == pytest.approx(expected, rel=1e-12)
    assert loss < eps
    # clamping to a window inside the gap helps a little (the end atoms decide);
    # rounding keeps eps (the far cells)
    atoms = max(abs(np.log(stats.laplace.cdf(0.4, 0, 1) / stats.laplace.cdf(0.4, 1, 1))),
                abs(np.log(stats.laplace.sf(0.6, 0, 1) / stats.laplace.sf(0.6, 1, 1))))
    clamp = properties.max_log_ratio(0.0, 1.0, 1.0, "clamp", lower=0.4, upper=0.6)
    assert clamp == pytest.approx(atoms, rel=1e-12) and clamp < 1.0
    assert properties.max_log_ratio(0.0, 1.0, 1.0, "round", step=2.0) == pytest.approx(1.0)


# ------------------------------------------------------------------ bad input
NAN, INF = float("nan"), float("inf")
BAD_REAL = [NAN, INF, -INF, True, "1", None, [1.0], 1j]

ROWS = (
    [(dp.group_privacy, dict(epsilon=1.0, delta=1e-6, k=2), "epsilon", v) for v in BAD_REAL + [0, -1.0]]
    + [(dp.group_privacy, dict(epsilon=1.0, delta=1e-6, k=2), "delta", v) for v in BAD_REAL + [-1e-9, 1.0]]
    + [(dp.group_privacy, dict(epsilon=1.0, delta=1e-6, k=2), "k", v)
       for v in [0, -1, 2.5, NAN, INF, True, "3", None]]
    + [(dp.parallel_composition, dict(epsilons=[0.1, 0.2]), "epsilons", v)
       for v in [[0.1, NAN], [0.1, -1.0], [0.0], "0.1", [], [True], None, [0.1, INF]]]
    + [(dp.parallel_composition, dict(epsilons=[0.1, 0.2], deltas=[0.0, 1e-6]), "deltas", v)
       for v in [[0.0, NAN], [0.0, 1.0], [0.0, -1e-9], "0", [], [True, 0.0]]]
    + [(properties.postprocess_laplace, dict(value=0.0, scale=1.0, f="round"), "scale", v)
       for v in BAD_REAL + [0.0, -1.0]]
    + [(properties.postprocess_laplace, dict(value=0.0, scale=1.0, f="round"), "f", v)
       for v in ["floor", None, 3]]
    + [(properties.postprocess_laplace, dict(value=0.0, scale=1.0, f="round"), "step", v)
       for v in BAD_REAL + [0.0]]
    + [(properties.postprocess_laplace, dict(value=0.0, scale=1.0, f="clamp"), "upper", v)
       for v in [NAN, -1.0, "1"]]
    + [(properties.max_log_ratio, dict(value1=0.0, value2=1.0, scale=1.0), "value2", v)
       for v in BAD_REAL]
    + [(properties.max_log_ratio, dict(value1=0.0, value2=1.0, scale=1.0, f="threshold"), "threshold", v)
       for v in BAD_REAL]
)


@pytest.mark.parametrize("func,good,param,bad", ROWS,
                         ids=[f"{r[0].__name__}-{r[2]}-{i}" for i, r in enumerate(ROWS)])
def test_bad_input_is_refused_with_the_parameter_named(func, good, param, bad):
    func(**good)
    with pytest.raises((ValueError, TypeError)) as err:
        func(**{**good, param: bad})
    message = str(err.value)
    assert param.rstrip("s") in message or (param == "upper" and "lower" in message)


def test_rounding_refuses_a_step_that_needs_too_many_cells():
    with pytest.raises(ValueError, match="step"):
        properties.max_log_ratio(0.0, 1.0, 1e6, "round", step=1e-3)
    with pytest.raises(ValueError, match="step"):
        properties.postprocess_laplace(0.0, 1e6, "round", step=1e-3)
    # a fine but allowed step stays within eps up to rounding
    assert properties.max_log_ratio(0.0, 1.0, 1.0, "round", step=1e-3) <= 1.0 + 1e-9


MORE_ROWS = (
    [(properties.gaussian_group_delta, dict(epsilon=0.5, delta=1e-6, k=2), "epsilon", v)
     for v in BAD_REAL + [0.0]]
    + [(properties.gaussian_group_delta, dict(epsilon=0.5, delta=1e-6, k=2), "delta", v)
       for v in BAD_REAL + [0.0, 1.0]]
    + [(properties.gaussian_group_delta, dict(epsilon=0.5, delta=1e-6, k=2), "k", v)
       for v in [0, 2.5, True, 10**7]]
    + [(dp.group_privacy, dict(epsilon=1.0, delta=1e-6, k=2), "k", 10**400)]
)


@pytest.mark.parametrize("func,good,param,bad", MORE_ROWS,
                         ids=[f"{r[0].__name__}-{r[2]}-{i}" for i, r in enumerate(MORE_ROWS)])
def test_more_bad_input_is_refused(func, good, param, bad):
    func(**good)
    with pytest.raises((ValueError, TypeError), match=param):
        func(**{**good, param: bad})
