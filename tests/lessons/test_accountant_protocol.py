"""One interface for the composition accountants (issue 33, item 2): the RDP, PLD and exact
Gaussian accountants all follow dpteach.accounting.CompositionAccountant, and on a shared
Gaussian case they agree within their known looseness (exact <= PLD <= RDP)."""

import inspect
import math

import numpy as np
import pytest

import dpteach as dp
from dpteach.accounting import CompositionAccountant, ExactGaussianAccountant

ACCOUNTANTS = {"exact": ExactGaussianAccountant, "pld": dp.PLDAccountant,
               "rdp": dp.RDPAccountant}


@pytest.mark.parametrize("name", sorted(ACCOUNTANTS))
def test_every_accountant_follows_the_protocol(name):
    acc = ACCOUNTANTS[name]()
    assert isinstance(acc, CompositionAccountant)
    assert acc.compose_gaussian(3.0, q=1.0, steps=2) is acc          # chainable
    compose = inspect.signature(acc.compose_gaussian).parameters
    assert list(compose)[:3] == ["sigma", "q", "steps"]
    assert compose["q"].kind is compose["q"].KEYWORD_ONLY and compose["q"].default == 1.0
    assert compose["steps"].kind is compose["steps"].KEYWORD_ONLY and compose["steps"].default == 1
    assert list(inspect.signature(acc.epsilon).parameters)[0] == "delta"
    assert list(inspect.signature(acc.delta).parameters)[0] == "epsilon"
    eps = acc.epsilon(1e-5)
    assert 0 < eps < math.inf and acc.delta(eps) <= 1e-5 * (1 + 1e-9)


def test_the_ledger_and_other_objects_are_not_composition_accountants():
    # the budget ledger keeps its own interface (spend, spent, remaining, history)
    ledger = dp.PrivacyAccountant(1.0)
    assert not isinstance(ledger, CompositionAccountant)
    ledger.spend(0.4)
    assert ledger.remaining == pytest.approx((0.6, 0.0))
    assert not isinstance(object(), CompositionAccountant)


def test_the_protocol_is_documented():
    for method in ("compose_gaussian", "epsilon", "delta"):
        assert inspect.getdoc(getattr(CompositionAccountant, method))
    assert "upper bound" in CompositionAccountant.__doc__


@pytest.mark.parametrize("sigma,steps", [(2.0, 10), (1.0, 100), (5.0, 1000), (0.8, 1)])
def test_the_accountants_agree_within_their_looseness_on_a_shared_gaussian(sigma, steps):
    accs = {name: cls().compose_gaussian(sigma, steps=steps) for name, cls in ACCOUNTANTS.items()}
    exact = dp.gaussian_epsilon(sigma, 1e-5, k=steps)
    eps = {name: acc.epsilon(1e-5) for name, acc in accs.items()}
    assert eps["exact"] == pytest.approx(exact, rel=1e-12)   # the curve of the contract's function
    # PLD: above the truth by at most about one grid step (1e-3) per composition; RDP: its
    # conversion loses more, but less than 15% here
    assert exact <= eps["pld"] <= exact + 1e-3 * math.log2(2 * steps)
    assert eps["pld"] <= eps["rdp"] <= 1.15 * exact
    for epsilon in (0.0, 1.0, 5.0):
        d = {name: acc.delta(epsilon) for name, acc in accs.items()}
        assert d["exact"] * (1 - 1e-9) <= d["pld"] <= d["rdp"] <= 1.0
        assert d["pld"] <= d["exact"] + 1e-6


def test_a_wrong_twin_of_the_rdp_delta_is_caught_by_the_same_check():
    """delta(epsilon) of the RDP accountant solves the improved conversion for δ; a wrong
    twin that converts the curve of one step where ten were composed claims a δ below the
    exact one and fails the check above."""
    from dpteach import rdp
    acc = dp.RDPAccountant().compose_gaussian(2.0, steps=10)
    exact = ExactGaussianAccountant().compose_gaussian(2.0, steps=10)
    a, r = acc.orders, acc.rdp
    for epsilon in (1.0, 5.0):
        ours = acc.delta(epsilon)
        assert ours == rdp._delta_of_curve(a, r, epsilon, "improved")
        assert ours >= exact.delta(epsilon)
        one_step = rdp._delta_of_curve(a, r / 10, epsilon, "improved")
        assert one_step < exact.delta(epsilon)
    # delta and epsilon are the same conversion read both ways
    for d in (1e-3, 1e-5, 1e-12):
        assert acc.delta(acc.epsilon(d)) <= d * (1 + 1e-9)
        assert acc.epsilon(acc.delta(3.0)) <= 3.0 * (1 + 1e-9)


def test_the_rdp_delta_at_the_ends():
    acc = dp.RDPAccountant()
    assert acc.delta(0.0) == 0.0 and acc.epsilon(1e-5) == 0.0            # nothing composed
    acc.compose_gaussian(1.0, steps=3)
    assert acc.delta(math.inf) == 0.0
    assert 0 < acc.delta(1e3) < 1e-300                   # tiny, but never 0 for a Gaussian
    assert acc.delta(0.0) <= 1.0
    assert dp.RDPAccountant().compose_gaussian(1e-100).delta(1.0) == 1.0
    classic = acc.delta(2.0, method="classic")
    assert classic >= acc.delta(2.0)
    with pytest.raises(ValueError, match="method"):
        acc.delta(1.0, method="tight")


def test_the_exact_accountant_is_the_closed_form():
    acc = ExactGaussianAccountant().compose_gaussian(2.0, steps=3).compose_gaussian(1.0)
    mu = math.sqrt(3 / 4 + 1)                               # mu^2 = sum of 1/sigma_i^2
    assert acc.mu == pytest.approx(mu, rel=1e-15)
    assert acc.epsilon(1e-5) == pytest.approx(dp.gaussian_epsilon(1 / mu, 1e-5), rel=1e-12)
    assert acc.delta(1.0) == pytest.approx(float(dp.tradeoff.gdp_delta(1.0, mu)), rel=1e-12)
    assert acc.epsilon(0.0) == math.inf and acc.delta(math.inf) == 0.0
    assert acc.delta(1e4) == 5e-324                          # positive, below the float range
    empty = ExactGaussianAccountant()
    assert empty.epsilon(0.0) == 0.0 and empty.delta(0.0) == 0.0
    assert empty.compose_gaussian(0.5, q=0.0, steps=7).epsilon(1e-5) == 0.0   # q = 0: nothing
    assert ExactGaussianAccountant().compose_gaussian(1e-160).epsilon(1e-5) == math.inf
    assert ExactGaussianAccountant().compose_gaussian(1e-160).delta(3.0) == 1.0
    assert "mu=" in repr(acc)


BAD = [(np.nan, "NaN"), (math.inf, None), (True, None), ("1", None), (-1.0, None)]


@pytest.mark.parametrize("value,_", BAD)
@pytest.mark.parametrize("call,name", [
    (lambda v: ExactGaussianAccountant().compose_gaussian(v), "sigma"),
    (lambda v: ExactGaussianAccountant().compose_gaussian(1.0, q=v), "q"),
    (lambda v: ExactGaussianAccountant().compose_gaussian(1.0, steps=v), "steps"),
    (lambda v: ExactGaussianAccountant().compose_gaussian(1.0).epsilon(v), "delta"),
    (lambda v: ExactGaussianAccountant().compose_gaussian(1.0).delta(v), "epsilon"),
    (lambda v: dp.RDPAccountant().compose_gaussian(1.0).delta(v), "epsilon"),
])
def test_bad_parameters_are_refused_by_name(call, name, value, _):
    if value == math.inf and name == "epsilon":
        assert call(value) == 0.0                    # epsilon = inf is allowed: delta 0
        return
    with pytest.raises((ValueError, TypeError), match=name):
        call(value)


def test_a_subsampled_step_is_refused_by_the_exact_accountant():
    acc = ExactGaussianAccountant().compose_gaussian(1.0)
    with pytest.raises(ValueError, match="q must be 0 or 1.*PLDAccountant"):
        acc.compose_gaussian(1.0, q=0.5)
    assert acc.history == [(1.0, 1.0, 1)]              # the refused call changed nothing
