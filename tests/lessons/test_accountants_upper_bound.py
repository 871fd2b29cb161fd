"""Every accountant is an upper bound at every delta (shared/DESIGN.md): each (ε, δ) claim
of the kit is attacked with a known truth and must never fall below it.

The truths are computed here, not by the kit:
- k Gaussians of noise multiplier σ: μ = √k/σ and δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)
  (Balle & Wang 2018, Theorem 8), in log space with scipy's log_ndtr (cross-checked against
  50-digit mpmath below; for μ >= 1e-3 its relative error stays below 1e-11);
- k randomized responses at ε₀: the loss is ε₀(k - 2i), i ~ Binomial(k, 1/(1 + e^ε₀)); by
  Kairouz, Oh & Viswanath 2015 (Theorem 3.3) this is the worst k-fold composition of ε₀-DP
  mechanisms, so every composition theorem for pure DP must bound it;
- k Laplace releases at ε₀ (k <= 4): the exact one-step loss law, each cell rounded down to
  a fine grid and convolved: a lower bound on the true δ, which is all the check needs;
- Poisson-subsampled Gaussians: dp-accounting's optimistic PLD (losses rounded down), a
  lower bound, used below ε = 600 only (above about 709 its answers snap to grid points).

"Never below" is read with a stated tolerance for floating point: a δ claim may be below the
truth by 1e-9 of it (or by 2.3e-308, the smallest normal float, below which floats lose
their relative precision), an ε claim by 1e-9 of it. No claim may be NaN; where an
accountant cannot bound it says inf (δ: 1) or refuses by name. Each check is also shown to
reject a deliberately wrong twin."""

import itertools
import math

import numpy as np
import pytest
from scipy import special

import dpteach as dp
from dpteach import rdp
from dpteach.accounting import ExactGaussianAccountant
from dpteach.tradeoff import privacy_loss_distribution

REL = 1e-9
TINY = 2.3e-308

SIGMAS = np.logspace(-3, 3, 13)
KS = [1, 10, 1000, 10 ** 6]
DELTAS = [0.5, 0.1, 1e-5, 1e-10, 1e-20, 1e-50, 1e-100, 1e-200, 1e-300]
EPSILONS = np.array([0.0, 1e-6, 1e-3, 0.1, 1.0, 3.0, 10.0, 30.0, 100.0, 1e3])


# ------------------------------------------------------------------------------ truths
def gaussian_delta(epsilon, mu):
    """Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2), elementwise, in log space."""
    e, m = np.broadcast_arrays(np.asarray(epsilon, float), np.asarray(mu, float))
    la = special.log_ndtr(-e / m + m / 2)
    lb = e + special.log_ndtr(-e / m - m / 2)
    with np.errstate(under="ignore", invalid="ignore"):
        out = np.exp(la) * -np.expm1(np.minimum(lb - la, 0.0))
    return np.where(np.isneginf(la), 0.0, out)        # Φ(-ε/μ + μ/2) itself underflows


def rr_kfold_delta(epsilons, e0, k):
    """δ(ε) of k randomized responses at ε₀ (the worst k-fold composition of ε₀-DP)."""
    i = np.arange(k + 1, dtype=float)
    log_w = (special.gammaln(k + 1) - special.gammaln(i + 1) - special.gammaln(k - i + 1)
             - (k - i) * np.logaddexp(0, -e0) - i * np.logaddexp(0, e0))
    loss = e0 * (k - 2 * i)
    out = []
    for eps in np.atleast_1d(epsilons):
        over = loss > eps
        out.append(float(np.exp(special.logsumexp(log_w[over] + np.log(-np.expm1(eps - loss[over])))))
                   if over.any() else 0.0)
    return np.array(out)


def laplace_kfold_delta_lower(epsilons, e0, k, cells=4000):
    """A lower bound on δ(ε) of k Laplace releases at ε₀: each step's loss (atoms 1/2 at ε₀
    and e^-ε₀/2 at -ε₀, density e^(-(ε₀ - l)/2)/4 between) with every cell's mass put on
    its lower end; rounding losses down can only lower E[(1 - e^(ε - L))₊]."""
    h = 2 * e0 / cells
    edges = -e0 + h * np.arange(cells + 1)
    p = np.zeros(cells + 1)
    p[:-1] = 0.5 * (np.exp(-(e0 - edges[1:]) / 2) - np.exp(-(e0 - edges[:-1]) / 2))
    p[0] += 0.5 * np.exp(-e0)
    p[-1] += 0.5
    total = np.array([1.0])
    for _ in range(k):
        total = np.convolve(total, p)
    loss = -k * e0 + h * np.arange(total.size)
    return np.array([np.sum(total * np.maximum(0.0, -np.expm1(eps - loss)))
                     for eps in np.atleast_1d(epsilons)])


# ------------------------------------------------------------------------------ checks
def epsilon_is_bound(eps, delta, truth_delta_at):
    """The reported ε meets δ once raised by the tolerance (and is never NaN)."""
    eps = np.asarray(eps, float)
    assert not np.isnan(eps).any(), "an epsilon is NaN"
    finite = np.isfinite(eps)
    ok = np.ones(eps.shape, bool)
    ok[finite] = truth_delta_at(eps[finite] * (1 + REL))[...] <= np.broadcast_to(
        delta, eps.shape)[finite] * (1 + REL)
    return ok


def delta_is_bound(reported, truth):
    reported, truth = np.asarray(reported, float), np.asarray(truth, float)
    assert not np.isnan(reported).any(), "a delta is NaN"
    return reported >= truth * (1 - REL) - TINY


def _gaussian_claims(sigma, k, make=None):
    """(name, epsilons at DELTAS, deltas at EPSILONS or None) of every Gaussian accountant."""
    mu = math.sqrt(k) / sigma
    out = []
    exact = (make or ExactGaussianAccountant)().compose_gaussian(sigma, steps=k)
    out.append(("exact", [exact.epsilon(d) for d in DELTAS], [exact.delta(e) for e in EPSILONS]))
    if make is not None:
        return out
    acc = dp.RDPAccountant().compose_gaussian(sigma, steps=k)
    for method in ("improved", "classic"):
        out.append((f"rdp-{method}", [acc.epsilon(d, method=method) for d in DELTAS],
                    [acc.delta(e, method=method) for e in EPSILONS]))
        out.append((f"zcdp-{method}", [dp.zcdp_to_dp(mu * mu / 2, d, method=method)
                                       for d in DELTAS], None))
    out.append(("gaussian_epsilon", [dp.gaussian_epsilon(sigma, d, k=k) for d in DELTAS], None))
    if 1e-150 <= mu <= 1e150:
        out.append(("gdp_delta", None, dp.tradeoff.gdp_delta(EPSILONS, mu)))
        ld = privacy_loss_distribution("gaussian", sigma=1 / mu)
        out.append(("loss_distribution", [ld.epsilon(d) for d in DELTAS], ld.delta(EPSILONS)))
    return out


@pytest.mark.parametrize("sigma", SIGMAS, ids=lambda s: f"sigma={s:.3g}")
def test_every_gaussian_accountant_is_an_upper_bound(sigma):
    deltas = np.array(DELTAS)
    for k in KS:
        mu = math.sqrt(k) / sigma
        truth = gaussian_delta(EPSILONS, mu)
        for name, eps, dels in _gaussian_claims(sigma, k):
            if eps is not None:
                ok = epsilon_is_bound(eps, deltas, lambda e: gaussian_delta(e, mu))
                assert ok.all(), (name, sigma, k, deltas[~ok], np.asarray(eps)[~ok])
            if dels is not None:
                ok = delta_is_bound(dels, truth)
                assert ok.all(), (name, sigma, k, EPSILONS[~ok], np.asarray(dels)[~ok])


@pytest.mark.parametrize("delta", DELTAS)
def test_the_five_panel_accountants_are_upper_bounds_for_every_k(delta):
    ks = [1, 7, 1000, 10 ** 6, 10 ** 9, 10 ** 15]
    for sigma in SIGMAS:
        try:
            curves = rdp.composition_epsilons(sigma, delta, ks)
        except ValueError as err:            # refused by name where advanced overflows
            assert "sigma" in str(err)
            continue
        mu = np.sqrt(np.array(ks, float)) / sigma
        for name, eps in curves.items():
            ok = epsilon_is_bound(eps, delta, lambda e: gaussian_delta(e, mu[np.isfinite(eps)]))
            assert ok.all(), (name, sigma, delta, np.array(ks)[~ok], eps[~ok])


class _ForgetsOneStep(ExactGaussianAccountant):
    """A wrong twin: composes steps - 1 releases (or σ 1% too large for one release)."""

    def compose_gaussian(self, sigma, *, q=1.0, steps=1):
        if steps == 1:
            return super().compose_gaussian(sigma * 1.01, q=q)
        return super().compose_gaussian(sigma, q=q, steps=steps - 1)


def test_the_gaussian_check_rejects_a_wrong_twin():
    caught = 0
    for sigma, k in itertools.product(SIGMAS, KS):
        mu = math.sqrt(k) / sigma
        (_, eps, dels), = _gaussian_claims(sigma, k, make=_ForgetsOneStep)
        bad_eps = ~epsilon_is_bound(eps, np.array(DELTAS), lambda e: gaussian_delta(e, mu))
        bad_del = ~delta_is_bound(dels, gaussian_delta(EPSILONS, mu))
        caught += bool(bad_eps.any() or bad_del.any())
    assert caught >= 0.8 * len(SIGMAS) * len(KS)


def test_the_gaussian_truth_agrees_with_50_digit_arithmetic():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    for eps, mu in [(0.0, 1e-3), (0.04, 1e-3), (3.0, 1.0), (30.0, 2.0), (1e3, 30.0),
                    (10.0, 1e3), (0.5, 0.1)]:
        e, m = mp.mpf(eps), mp.mpf(mu)
        ref = mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)
        assert float(gaussian_delta(eps, mu)) == pytest.approx(float(ref), rel=1e-11, abs=1e-320)


# ------------------------------------------------------------ pure DP: RR and Laplace
E0S = [1e-4, 1e-2, 0.1, 0.5, 1.0, 3.0, 10.0]
KS_PURE = [1, 2, 10, 100, 10 ** 4, 10 ** 6]
SLACKS = [0.5, 1e-2, 1e-5, 1e-10, 1e-50, 1e-300]


def _advanced(e0, k, slack, per_step=0.0):
    try:
        return dp.advanced_composition(e0, per_step, k, slack)
    except ValueError as err:               # the total overflows: refused by name
        assert "epsilon" in str(err) and "k" in str(err)
        return None


@pytest.mark.parametrize("k", KS_PURE)
def test_composition_theorems_bound_k_randomized_responses(k):
    """Advanced composition (DRV10) and basic composition hold for the worst ε₀-DP
    composition; with a per-step δ₀ the worst case is 1 - (1 - δ₀)^k (1 - δ_RR(ε'))
    (KOV15, Theorem 3.3), which k δ₀ + δ' must bound too."""
    for e0 in E0S:
        claims = [c for c in (_advanced(e0, k, s) for s in SLACKS) if c is not None]
        eps = np.array([c[0] for c in claims])
        truth = rr_kfold_delta(eps, e0, k)
        assert delta_is_bound([c[1] for c in claims], truth).all(), (e0, k, eps)
        assert rr_kfold_delta([k * e0], e0, k)[0] == 0.0          # basic: (k ε₀, 0)
        for d0 in (1e-3, 1e-8):
            c = _advanced(e0, k, 1e-5, per_step=d0)
            if c is not None:
                worst = -np.expm1(k * np.log1p(-d0)) + np.exp(k * np.log1p(-d0)) * \
                    rr_kfold_delta([c[0]], e0, k)[0]
                assert delta_is_bound(c[1], worst), (e0, k, d0)


def test_the_pure_dp_check_rejects_advanced_composition_without_its_second_term():
    """Dropping k ε₀ (e^ε₀ - 1) from advanced composition under-reports for large ε₀."""
    caught = 0
    for e0, k, slack in itertools.product(E0S, KS_PURE, SLACKS):
        twin = e0 * math.sqrt(2 * k * math.log(1 / slack))
        caught += not delta_is_bound(slack, rr_kfold_delta([twin], e0, k)[0])
    assert caught >= 40


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_composition_theorems_bound_k_laplace_releases(k):
    for e0 in [0.01, 0.1, 1.0, 3.0]:
        claims = [c for c in (_advanced(e0, k, s) for s in SLACKS) if c is not None]
        low = laplace_kfold_delta_lower([c[0] for c in claims] + [k * e0], e0, k)
        assert delta_is_bound([c[1] for c in claims], low[:-1]).all(), (e0, k)
        assert low[-1] < 1e-15                                       # basic: (k ε₀, 0)
        assert (low <= rr_kfold_delta([c[0] for c in claims] + [k * e0], e0, k) + 1e-12).all()
        # the wrong twin: basic composition with the budget not split, (k ε₀/2, 0)
        assert not delta_is_bound(0.0, laplace_kfold_delta_lower([k * e0 / 2], e0, k)[0])


@pytest.mark.parametrize("mechanism", ["laplace", "randomized_response"])
def test_one_pure_release_reads_its_exact_curve(mechanism):
    for e0 in [1e-6, 1e-3, 0.1, 1.0, 10.0, 100.0, 700.0]:
        ld = privacy_loss_distribution(mechanism, epsilon=e0)
        if mechanism == "laplace":
            def truth(e, e0=e0):
                e = np.asarray(e, float)
                return np.where(e >= e0, 0.0, -np.expm1(-(e0 - np.minimum(e, e0)) / 2))
        else:
            def truth(e, e0=e0):
                return rr_kfold_delta(e, e0, 1)
        deltas = np.array([0.0] + DELTAS)
        with np.errstate(over="ignore"):        # e^(ε + ε₀) of an atom at -ε₀ overflows
            eps = [ld.epsilon(d) for d in deltas]
        assert epsilon_is_bound(eps, deltas, truth).all(), (mechanism, e0, eps)
        with np.errstate(over="ignore"):
            dels = ld.delta(EPSILONS)
        assert delta_is_bound(dels, truth(EPSILONS)).all(), (mechanism, e0)
        # twin: the curve of a release at e0 / 2 claims too little
        if e0 <= 10:
            half = privacy_loss_distribution(mechanism, epsilon=e0 / 2)
            with np.errstate(over="ignore"):    # e^(ε + ε₀) of an atom at -ε₀ overflows
                assert not delta_is_bound(half.delta(EPSILONS), truth(EPSILONS)).all()


# ------------------------------------------------------------ the PLD accountant (q = 1)
PLD_CASES = [(0.1, 1), (0.5, 10), (1.0, 1), (2.0, 100), (10.0, 1000), (100.0, 10 ** 6),
             (1e3, 1), (1e3, 10 ** 6)]


@pytest.mark.parametrize("sigma,k", PLD_CASES)
def test_the_pld_accountant_is_an_upper_bound(sigma, k):
    acc = dp.PLDAccountant().compose_gaussian(sigma, steps=k)
    mu = math.sqrt(k) / sigma
    deltas = np.array(DELTAS)
    eps = [acc.epsilon(d) for d in DELTAS]
    assert epsilon_is_bound(eps, deltas, lambda e: gaussian_delta(e, mu)).all()
    assert all(e == math.inf for e, d in zip(eps, DELTAS) if d < acc.floor_delta)
    assert delta_is_bound([acc.delta(e) for e in EPSILONS], gaussian_delta(EPSILONS, mu)).all()


def test_the_pld_accountant_refuses_a_sigma_it_cannot_hold_by_name():
    with pytest.raises(ValueError, match="sigma"):
        dp.PLDAccountant().compose_gaussian(1e-3)


# ------------------------------------------------------------ Poisson subsampling
SUBSAMPLED = [(1e-3, 0.5, 1000), (0.01, 1.0, 100), (0.1, 3.0, 1), (0.5, 0.7, 10),
              (0.99, 1.5, 30), (1e-6, 0.3, 1)]


@pytest.mark.parametrize("q,sigma,k", SUBSAMPLED)
def test_subsampled_accountants_are_above_dp_accountings_lower_bound(q, sigma, k):
    import logging
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as dpa_pld
    logging.getLogger().setLevel(logging.ERROR)
    low = dpa_pld.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=1e-3,
                                          pessimistic_estimate=False,
                                          use_connect_dots=False).self_compose(k)
    accs = {"pld": dp.PLDAccountant().compose_gaussian(sigma, q=q, steps=k),
            "rdp": dp.RDPAccountant().compose_gaussian(sigma, q=q, steps=k),
            "twin": dp.PLDAccountant().compose_gaussian(sigma, q=q, steps=max(1, k // 10))}
    for d in [0.3, 1e-3, 1e-5, 1e-10]:
        floor = low.get_epsilon_for_delta(d)
        if floor > 600:
            continue
        for name in ("pld", "rdp"):
            assert accs[name].epsilon(d) >= floor * (1 - REL), (name, q, sigma, k, d)
    for e in [0.0, 0.1, 0.5, 2.0]:
        floor = low.get_delta_for_epsilon(e) - 2e-15   # its tails: 1e-15 of mass each
        for name in ("pld", "rdp"):
            assert accs[name].delta(e) >= floor * (1 - REL), (name, q, sigma, k, e)
    if k >= 10:   # the twin that composes a tenth of the steps claims too little
        assert accs["twin"].epsilon(1e-5) < low.get_epsilon_for_delta(1e-5)


def test_at_delta_zero_every_gaussian_accountant_says_inf_or_refuses_by_name():
    """A Gaussian's loss is unbounded: no finite ε has δ = 0."""
    accs = [ExactGaussianAccountant(), dp.PLDAccountant(), dp.RDPAccountant()]
    for acc in accs:
        acc.compose_gaussian(2.0, steps=3)
        try:
            assert acc.epsilon(0.0) == math.inf
        except ValueError as err:
            assert "delta" in str(err)
    with pytest.raises(ValueError, match="delta"):
        privacy_loss_distribution("gaussian", sigma=2.0).epsilon(0.0)
    for call in (lambda: dp.gaussian_epsilon(2.0, 0.0), lambda: dp.zcdp_to_dp(0.5, 0.0),
                 lambda: dp.rdp_to_dp([2.0], [1.0], 0.0)):
        with pytest.raises(ValueError, match="delta"):
            call()
