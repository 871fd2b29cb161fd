"""Notebook 16's privacy-loss-distribution accountant (dpteach.pld) against the exact
Gaussian (Balle & Wang), Google's dp-accounting PLD accountant and the RDP accountant."""

import numpy as np
import pytest

import dpteach as dp

dpa = pytest.importorskip("dp_accounting")
from dp_accounting.pld import pld_privacy_accountant as dpa_pld  # noqa: E402


@pytest.mark.parametrize("sigma,k", [(3.0, 10), (1.0, 1), (0.8, 100), (4.0, 1000)])
def test_pld_equals_the_exact_gaussian_from_above(sigma, k):
    exact = dp.gaussian_epsilon(sigma, 1e-5, k=k)
    ours = dp.PLDAccountant().compose_gaussian(sigma, steps=k).epsilon(1e-5)
    assert exact <= ours <= exact * (1 + 1e-4) + 1e-4


@pytest.mark.parametrize("q,sigma,k", [(0.1, 3.0, 100), (0.01, 1.0, 1000), (0.5, 0.8, 100),
                                       (0.01, 4.0, 10000), (0.1, 3.0, 1), (0.2, 1.5, 300)])
def test_pld_agrees_with_dp_accounting_and_beats_rdp(q, sigma, k):
    """Within 1.5% of dp-accounting's PLD accountant at a ten times finer grid (1e-4); never
    above the RDP accountant (whose conversion loses more)."""
    event = dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma))
    acc = dpa_pld.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(event, k)
    theirs = acc.get_epsilon(1e-5)
    ours = dp.PLDAccountant().compose_gaussian(sigma, q=q, steps=k).epsilon(1e-5)
    assert abs(ours - theirs) <= 0.015 * theirs
    rdp = dp.RDPAccountant().compose_gaussian(sigma, q=q, steps=k).epsilon(1e-5)
    assert ours <= rdp


def test_pld_wrong_twins_are_rejected():
    """Add/remove needs both directions: the remove direction alone (a twin) would claim
    a smaller ε here. Each step's discretised loss keeps E_P[e^{-L}] = 1 (a pair of
    distributions), which plain rounding up would not."""
    from dpteach import pld
    acc = dp.PLDAccountant().compose_gaussian(1.0, q=0.01, steps=1000)
    ours = acc.epsilon(1e-5)
    assert ours == pytest.approx(1.8282, abs=2e-3)
    one_direction = max(acc._delta(e, "remove") for e in [ours * 0.97])
    assert one_direction < 1e-5         # the remove direction alone would claim a smaller ε
    assert acc._delta(ours * 0.97, "add") > 1e-5
    k0, p, inf = pld._one_step(0.01, 1.0, 1e-3, "add")
    assert np.isclose(p.sum() + inf, 1.0, atol=1e-12)
    losses = 1e-3 * (k0 + np.arange(p.size))
    mean_loss = float(np.sum(p * losses))
    # E_P[e^{-L}] = 1 is kept by the split (a pair of distributions)
    assert np.sum(p * np.exp(-losses)) == pytest.approx(1.0, abs=1e-9)
    assert mean_loss > 0


def test_pld_mixed_compositions_and_bad_input():
    a = dp.PLDAccountant().compose_gaussian(2.0, steps=3).compose_gaussian(1.0, q=0.02, steps=500)
    event = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(2.0), 3),
                                 dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(
                                     0.02, dpa.GaussianDpEvent(1.0)), 500)])
    ref = dpa_pld.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(event)
    assert a.epsilon(1e-6) == pytest.approx(ref.get_epsilon(1e-6), rel=0.01)
    assert a.epsilon(0.999) == 0.0
    assert dp.PLDAccountant().compose_gaussian(1.0, q=0.0, steps=5).epsilon(1e-5) == 0.0
    for call, name in [(lambda: dp.PLDAccountant(interval=0.0), "interval"),
                       (lambda: dp.PLDAccountant().compose_gaussian(-1.0), "sigma"),
                       (lambda: dp.PLDAccountant().compose_gaussian(1.0, q=1.5), "q"),
                       (lambda: dp.PLDAccountant().compose_gaussian(1.0, steps=0), "steps"),
                       (lambda: dp.PLDAccountant().epsilon(0.0), "delta"),
                       (lambda: dp.PLDAccountant().delta(-1.0), "epsilon")]:
        with pytest.raises((ValueError, TypeError), match=name):
            call()


# ------------------------------------------------------- upper bounds down to δ = 1e-300
from dpteach import pld as _pld  # noqa: E402
from dpteach._support.gaussian import epsilon_of_mu, gaussian_delta_exact  # noqa: E402

DELTAS = np.logspace(-2, -300, 30)
SIGMAS_K = [(s, k) for k in (1, 10, 100) for s in (0.5, 1.0, 3.0)]


def _upper_bound_failures(acc, mu, k, interval=1e-3):
    """(δ, ours, exact) wherever the accountant's ε is below the exact Gaussian ε, or
    finite and further above it than the grid allows (1% plus steps·interval)."""
    bad = []
    for d in DELTAS:
        ours, exact = acc.epsilon(float(d)), float(epsilon_of_mu(mu, float(d)))
        if ours < exact or (np.isfinite(ours) and ours > exact * 1.01 + k * interval):
            bad.append((float(d), ours, exact))
    return bad


@pytest.mark.parametrize("sigma,k", SIGMAS_K)
def test_pld_epsilon_is_an_upper_bound_from_1e_2_to_1e_300(sigma, k):
    """k composed Gaussians with σ are μ-GDP with μ = √k/σ: at 30 δ's from 1e-2 to 1e-300
    the accountant's ε is never below the exact ε (inf allowed, below its floor), close
    where finite, finite wherever δ is above 1e-10, and a single step is finite down to
    1e-300 (its atom at +∞ is below 1e-300)."""
    acc = dp.PLDAccountant().compose_gaussian(sigma, steps=k)
    mu = np.sqrt(k) / sigma
    assert _upper_bound_failures(acc, mu, k) == []
    eps = np.array([acc.epsilon(float(d)) for d in DELTAS])
    assert np.all(np.isfinite(eps[DELTAS >= 1e-10]))
    assert np.all(np.isinf(eps[DELTAS < acc.floor_delta]))
    if k == 1:
        assert np.all(np.isfinite(eps))
    # the same answer as the module-level helper gaussian_epsilon
    assert acc.epsilon(1e-5) >= dp.gaussian_epsilon(sigma, 1e-5, k=k)


def test_pld_issue_31_cases():
    """The issue's numbers: before the fix 8.81 at δ = 1e-30 and 1e-300 (exact 11.74 and
    37.45) and δ(10) = 0 (exact 9.8e-23)."""
    acc = dp.PLDAccountant().compose_gaussian(1.0)
    for d, exact in [(1e-6, 4.8866), (1e-12, 7.2385), (1e-30, 11.7439), (1e-300, 37.4488)]:
        ours = acc.epsilon(d)
        assert ours >= float(epsilon_of_mu(1.0, d))
        assert ours == pytest.approx(exact, abs=2e-3)
    assert acc.delta(10.0) >= gaussian_delta_exact(1.0, 1.0, 10.0) > 9e-23


@pytest.mark.parametrize("sigma,k", [(1.0, 1), (1.0, 10), (0.5, 100), (3.0, 100), (0.05, 1)])
def test_pld_delta_is_never_below_the_exact_gaussian_delta(sigma, k):
    acc = dp.PLDAccountant().compose_gaussian(sigma, steps=k)
    mu = np.sqrt(k) / sigma
    top = mu * mu / 2 + 40 * mu
    for eps in np.r_[0.0, np.linspace(0, top, 150)[1:], [1e3, 1e6]]:
        exact = float(gaussian_delta_exact(1.0, mu, eps))
        ours = acc.delta(float(eps))
        assert ours >= exact * (1 - 1e-9), (eps, ours, exact)   # 1e-9: the reference's rounding
        assert ours >= acc.floor_delta


def _old_tail_twin(sigma):
    """A deliberately wrong twin of one Gaussian step, re-implementing the old tails: the
    step's atom as 1 - sum (rounds to 0), then composed onto the empty start with the atom
    1 - (1 - a)(1 - b), which rounds the trimmed tail (about 1e-17) to 0."""
    from scipy import signal

    def old_compose(a, b):
        p = np.maximum(signal.fftconvolve(a[1], b[1]), 0.0)
        return _pld._trim(a[0] + b[0], p, 1 - (1 - a[2]) * (1 - b[2]))

    acc = dp.PLDAccountant()
    for d in ("add", "remove"):
        k0, p, _ = _pld._one_step(1.0, sigma, 1e-3, d)
        one = _pld._trim(k0, p, max(0.0, 1.0 - p.sum()))
        acc._dists[d] = old_compose((0, np.ones(1), 0.0), one)
    return acc


def test_pld_wrong_twin_of_the_old_tail_formula_fails_the_upper_bound():
    """The twin loses the tail: finite ε's below the exact ones at tiny δ (8.8 at 1e-30,
    exact 11.74), which the upper-bound check catches; the accountant itself passes it."""
    twin = _old_tail_twin(1.0)
    assert twin.floor_delta == 0.0
    bad = _upper_bound_failures(twin, 1.0, 1)
    assert len(bad) >= 20 and all(o < e for _, o, e in bad)
    assert twin.epsilon(1e-30) < 9.0 < 11.74 < dp.PLDAccountant().compose_gaussian(1.0).epsilon(1e-30)


def test_pld_atoms_are_combined_without_rounding_to_zero():
    a = (0, np.array([0.5, 0.5]), 1e-30)
    b = (0, np.array([1.0]), 0.0)
    out = _pld._compose(a, b)
    assert out[2] >= 1e-30 * (1 - 1e-12)
    c = _pld._compose(a, a)
    assert c[2] >= 2e-30


@pytest.mark.parametrize("q,sigma", [(0.1, 3.0), (0.01, 1.0), (1.0, 2.0)])
def test_pld_fft_round_off_bound_covers_the_measured_error(q, sigma):
    """The bound put on +∞ for each FFT is above the 1-norm of its error against a direct
    convolution (a sum of positive terms, accurate to a few ulps)."""
    from scipy import signal
    k, p, _ = _pld._trim(*_pld._one_step(q, sigma, 1e-3, "add"))
    b = np.convolve(p, p)
    err = np.abs(signal.fftconvolve(p, b) - np.convolve(p, b)).sum()
    assert err <= _pld._fft_slack(p, b, p.size + b.size - 1)


def test_pld_agrees_with_dp_accounting_at_small_delta_and_is_inf_below_its_floor():
    event = dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(3.0))
    ref = dpa_pld.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(event, 100)
    acc = dp.PLDAccountant().compose_gaussian(3.0, q=0.1, steps=100)
    for d in (1e-8, 1e-10):
        assert acc.epsilon(d) == pytest.approx(ref.get_epsilon(d), rel=0.01)
    assert 0 < acc.floor_delta < 1e-10
    assert acc.epsilon(acc.floor_delta / 2) == np.inf
    assert ref.get_epsilon(1e-30) == np.inf and acc.epsilon(1e-30) == np.inf


# ---------------------------------------------------------------- small σ, huge steps
def test_pld_small_sigma_works_or_is_refused_by_name():
    acc = dp.PLDAccountant().compose_gaussian(0.05)          # was an IndexError
    for d in (1e-2, 1e-6, 1e-30, 1e-300):
        assert acc.epsilon(d) >= float(epsilon_of_mu(20.0, d))
    assert acc.epsilon(1e-6) == pytest.approx(float(epsilon_of_mu(20.0, 1e-6)), rel=1e-3)
    for sigma in (1e-3, 1e-300, 5e-324):                     # 22.5 GiB; an overflow
        fresh = dp.PLDAccountant()
        with pytest.raises(ValueError, match=r"grid points.*sigma="):
            fresh.compose_gaussian(sigma)
        assert fresh.history == [] and fresh.epsilon(1e-5) == 0.0
    huge = dp.PLDAccountant().compose_gaussian(1e200, steps=5)  # almost no privacy loss
    assert huge.epsilon(1e-5) <= 5e-3


def test_pld_many_steps_are_answered_or_refused_by_name():
    # (its time is benchmarks/bench_accounting.py's to print, not a test's to assert)
    acc = dp.PLDAccountant().compose_gaussian(1.0, q=0.01, steps=10**7)
    ours = acc.epsilon(1e-5)
    assert ours <= dp.RDPAccountant().compose_gaussian(1.0, q=0.01, steps=10**7).epsilon(1e-5)
    assert 0 < ours < np.inf
    with pytest.raises(ValueError, match="steps"):
        dp.PLDAccountant().compose_gaussian(1.0, steps=10**7 + 1)
    before = dp.PLDAccountant().compose_gaussian(2.0)
    with pytest.raises(ValueError, match=r"grid points.*steps=10000000"):
        before.compose_gaussian(1.0, steps=10**7)            # q = 1: too wide a loss
    assert len(before.history) == 1
    assert before.epsilon(1e-5) == dp.PLDAccountant().compose_gaussian(2.0).epsilon(1e-5)


BAD = [float("nan"), float("inf"), -float("inf"), True, False, "1", None, [1.0]]


@pytest.mark.parametrize("name,call", [
    ("interval", lambda v: dp.PLDAccountant(interval=v)),
    ("sigma", lambda v: dp.PLDAccountant().compose_gaussian(v)),
    ("q", lambda v: dp.PLDAccountant().compose_gaussian(1.0, q=v)),
    ("steps", lambda v: dp.PLDAccountant().compose_gaussian(1.0, steps=v)),
    ("epsilon", lambda v: dp.PLDAccountant().compose_gaussian(1.0).delta(v)),
    ("delta", lambda v: dp.PLDAccountant().compose_gaussian(1.0).epsilon(v)),
])
def test_pld_bad_parameters_are_refused_by_name(name, call):
    extra = {"interval": [0.0, -1e-3, 2.0, 1e-9], "sigma": [0.0, -1.0],
             "q": [-0.1, 1.5], "steps": [0, -3, 2.5, 10**400],
             "epsilon": [-1.0], "delta": [0.0, 1.0, -1e-5, 2.0]}[name]
    for v in BAD + extra:
        with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
            call(v)
