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
