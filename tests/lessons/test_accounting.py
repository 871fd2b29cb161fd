"""Tests for dpteach.accounting: composition theorems and the exact PrivacyAccountant."""

from fractions import Fraction

import numpy as np
import pytest

import dpteach as dp
from dpteach.accounting import (BudgetExceededError, PrivacyAccountant, advanced_composition,
                                basic_composition)


def snapshot(acc):
    return acc.spent, acc.remaining, acc.history, acc.budget, repr(acc)


# --------------------------------------------------------------------- basic composition
def test_basic_composition_sums_exactly():
    assert basic_composition([0.1] * 10) == (1.0, 0.0)
    assert sum([0.1] * 10) != 1.0                      # the float sum would be 0.9999999999999999
    assert basic_composition([0.1, 0.2]) == (0.3, 0.0)
    assert 0.1 + 0.2 != 0.3
    eps, delta = basic_composition([0.5, 0.25, 1.0], [1e-6, 0.0, 2e-6])
    assert eps == 1.75 and delta == pytest.approx(3e-6, rel=1e-15)


def test_basic_composition_accepts_scalars_arrays_and_tuples():
    assert basic_composition(0.7) == (0.7, 0.0)
    assert basic_composition(np.array([0.25, 0.75])) == (1.0, 0.0)
    assert basic_composition((1, 2), (0.1, 0.2)) == (3.0, pytest.approx(0.3))
    out = basic_composition([0.3, 0.3])
    assert isinstance(out, tuple) and all(type(x) is float for x in out)


def test_basic_composition_seed_two_queries():
    # seed 000: two queries answered with eps1 and eps2 cost eps1 + eps2 together
    assert basic_composition([0.5, 0.5]) == (1.0, 0.0)
    assert basic_composition([np.log(3), np.log(3)])[0] == pytest.approx(np.log(9), rel=1e-15)


def test_basic_composition_length_mismatch_and_empty():
    with pytest.raises(ValueError, match="deltas"):
        basic_composition([0.1, 0.2], [0.0])
    with pytest.raises(ValueError, match="epsilons"):
        basic_composition([])


# ------------------------------------------------------------------ advanced composition
def drv(eps, delta, k, slack):
    """Dwork, Rothblum & Vadhan 2010 (DR14 Theorem 3.20), written out in the test."""
    return (eps * np.sqrt(2 * k * np.log(1 / slack)) + k * eps * (np.exp(eps) - 1),
            k * delta + slack)


@pytest.mark.parametrize("eps,delta,k,slack", [(0.1, 0.0, 100, 1e-6), (0.01, 1e-7, 1000, 1e-5),
                                               (1.0, 0.0, 1, 0.5), (0.5, 1e-9, 37, 1e-3)])
def test_advanced_composition_formula(eps, delta, k, slack):
    e, d = advanced_composition(eps, delta, k, slack)
    re, rd = drv(eps, delta, k, slack)
    assert e == pytest.approx(re, rel=1e-13)
    assert d == pytest.approx(rd, rel=1e-13)
    assert type(e) is float and type(d) is float


def test_advanced_composition_hand_checked_numbers():
    # eps = 0.1, k = 100, delta' = 1e-6:
    # 0.1 * sqrt(200 * ln 1e6) = 0.1 * sqrt(2763.1) = 5.2565; 100 * 0.1 * (e^0.1 - 1) = 1.0517
    e, d = advanced_composition(0.1, 0.0, 100, 1e-6)
    assert e == pytest.approx(5.2565 + 1.0517, abs=2e-4)
    assert d == 1e-6
    # far better than basic composition's k * eps = 10 ...
    assert e < basic_composition([0.1] * 100)[0]
    # ... but worse for few compositions
    assert advanced_composition(0.1, 0.0, 5, 1e-6)[0] > 0.5


def test_advanced_composition_grows_like_sqrt_k_for_small_eps():
    e1 = advanced_composition(0.001, 0, 100, 1e-6)[0]
    e4 = advanced_composition(0.001, 0, 400, 1e-6)[0]
    assert e4 / e1 == pytest.approx(2.0, rel=1e-2)


# --------------------------------------------------------------------------- accountant
def test_ten_spends_of_a_tenth_fit_a_budget_of_one():
    acc = PrivacyAccountant(1.0)
    for i in range(10):
        acc.spend(0.1, label=f"q{i}")
    assert acc.spent == (1.0, 0.0)
    assert acc.remaining == (0.0, 0.0)
    assert len(acc.history) == 10


@pytest.mark.parametrize("tiny", [1e-17, 5e-324, 1e-300, 0.1])
def test_any_positive_spend_after_the_budget_is_used_is_refused(tiny):
    acc = PrivacyAccountant(1.0)
    for _ in range(10):
        acc.spend(0.1)
    before = snapshot(acc)
    assert not acc.can_spend(tiny)
    with pytest.raises(BudgetExceededError):
        acc.spend(tiny, label="one too many")
    assert snapshot(acc) == before                  # a refused spend changes nothing
    # a spend of zero is still fine (it costs nothing)
    acc.spend(0.0, label="free")
    assert acc.spent == (1.0, 0.0)


def test_tiny_spends_are_not_lost_in_float_rounding():
    acc = PrivacyAccountant(1.0)
    acc.spend(1e-17)
    # 1.0 - 1e-17 == 1.0 in floats, yet only 1 - 1e-17 remains and a spend of 1.0 is refused
    assert not acc.can_spend(1.0)
    with pytest.raises(BudgetExceededError):
        acc.spend(1.0)
    assert acc.history == [(None, 1e-17, 0.0)]


def test_refused_spend_in_the_middle_changes_nothing():
    acc = PrivacyAccountant(1.0, delta=1e-5)
    acc.spend(0.4, 4e-6, label="a")
    acc.spend(0.3, label="b")
    before = snapshot(acc)
    with pytest.raises(BudgetExceededError, match="remaining"):
        acc.spend(0.31, label="c")
    assert snapshot(acc) == before
    acc.spend(0.3, label="c")                     # exactly the rest fits
    assert acc.remaining == (0.0, pytest.approx(6e-6))


def test_delta_budget_is_enforced_too():
    acc = PrivacyAccountant(10.0, delta=1e-5)
    for _ in range(10):
        acc.spend(0.1, delta=1e-6)
    assert acc.spent == (1.0, 1e-5)
    before = snapshot(acc)
    with pytest.raises(BudgetExceededError, match="delta"):
        acc.spend(0.1, delta=5e-324)
    assert snapshot(acc) == before
    acc.spend(0.1)                                # pure-epsilon spends still fit
    # a pure-DP accountant refuses any positive delta
    pure = PrivacyAccountant(1.0)
    with pytest.raises(BudgetExceededError):
        pure.spend(0.1, delta=1e-12)
    assert pure.history == []


def test_history_lists_label_epsilon_delta():
    acc = PrivacyAccountant(2.0, delta=1e-6)
    acc.spend(0.5, label="mean age")
    acc.spend(0.25, delta=1e-7)
    acc.spend(np.float64(0.125), label="count")
    assert acc.history == [("mean age", 0.5, 0.0), (None, 0.25, 1e-7), ("count", 0.125, 0.0)]
    assert all(type(e) is float and type(d) is float for _, e, d in acc.history)
    # the returned list is a copy: editing it does not change the accountant
    h = acc.history
    h.append(("forged", 9.0, 0.0))
    h.clear()
    assert len(acc.history) == 3


def test_can_spend_spends_nothing():
    acc = PrivacyAccountant(0.5)
    assert acc.can_spend(0.5)
    assert not acc.can_spend(0.5000001)
    assert acc.spent == (0.0, 0.0) and acc.history == []


def test_budget_spent_remaining_properties():
    acc = PrivacyAccountant(1, delta=0.001)
    assert acc.budget == (1.0, 0.001)
    acc.spend(0.9, 0.0004)
    assert acc.spent == (0.9, 0.0004)
    assert acc.remaining == (0.1, 0.0006)         # exact: in floats 1 - 0.9 is 0.09999999999999998
    assert 1 - 0.9 != 0.1


def test_repr_is_readable():
    acc = PrivacyAccountant(1.0, delta=1e-5)
    acc.spend(0.3, label="x")
    text = repr(acc)
    assert text.startswith("PrivacyAccountant(")
    assert "0.3" in text and "1e-05" in text and "1 spends" in text


def test_budget_exceeded_error_is_a_runtime_error_with_a_clear_message():
    assert issubclass(BudgetExceededError, RuntimeError)
    acc = PrivacyAccountant(1.0)
    acc.spend(0.75)
    with pytest.raises(BudgetExceededError) as info:
        acc.spend(0.5)
    msg = str(info.value)
    assert "0.5" in msg and "budget" in msg and "0.25" in msg


def test_spends_are_exact_fractions_of_the_decimals_written():
    acc = PrivacyAccountant(1.0)
    for _ in range(3):
        acc.spend(1 / 3)          # 0.3333333333333333 three times: just under 1
    assert acc._spent[0] == 3 * Fraction("0.3333333333333333")
    assert acc.can_spend(1e-16)
    assert not acc.can_spend(2e-16)


def test_public_names_are_exported():
    for name in ("basic_composition", "advanced_composition", "PrivacyAccountant",
                 "BudgetExceededError"):
        assert getattr(dp, name) is getattr(dp.accounting, name)


def test_advanced_composition_takes_arrays_elementwise():
    """Issue 21: the panels sweep k (notebook 07) and a per-release epsilon (notebook 16)
    through the one formula; each element equals the scalar call, shapes broadcast, and a
    bad element is refused naming its parameter."""
    ks = np.array([1, 7, 100, 12345])
    eps = np.array([0.01, 0.1, 0.5, 1.0])
    e, d = advanced_composition(eps[:, None], 1e-7, ks[None, :], 1e-6)
    assert e.shape == d.shape == (4, 4)
    for i, ep in enumerate(eps):
        for j, k in enumerate(ks):
            assert (e[i, j], d[i, j]) == advanced_composition(float(ep), 1e-7, int(k), 1e-6)
    e1, d1 = advanced_composition(0.1, 0.0, [1.0, 2.0], 1e-6)
    assert isinstance(e1, np.ndarray) and e1.shape == (2,)
    assert isinstance(advanced_composition(0.1, 0.0, 3, 1e-6)[0], float)
    for bad, name in [(dict(k=[1, 2.5]), "k"), (dict(k=np.array([3, 0])), "k"),
                      (dict(epsilon=[0.1, float("nan")]), "epsilon"),
                      (dict(epsilon=np.array([0.1, -0.1])), "epsilon"),
                      (dict(delta_slack=[1e-6, 0.0]), "delta_slack"),
                      (dict(delta=[0.0, True]), "delta"), (dict(k=[1, "2"]), "k")]:
        kw = {**dict(epsilon=0.1, delta=0.0, k=10, delta_slack=1e-6), **bad}
        with pytest.raises((ValueError, TypeError), match=name):
            advanced_composition(**kw)
    with pytest.raises(ValueError, match="broadcast"):
        advanced_composition([0.1, 0.2], 0.0, [1, 2, 3], 1e-6)


def test_the_panels_draw_advanced_composition_from_the_lesson(monkeypatch):
    """The notebook 07 panel and notebook 16's composition_epsilons call
    advanced_composition (the formula is written once): a wrong twin of it (k eps, no
    sqrt term) shows up in both."""
    import matplotlib
    matplotlib.use("Agg")
    from dpteach import accounting, rdp
    from dpteach.panels.composition import composition_advanced

    real = rdp.composition_epsilons(2.0, 1e-5, [10, 100])["advanced"]
    panel = composition_advanced(k=100, epsilon=0.1, delta_slack=1e-5)
    curve = panel.figure.axes[0].lines[1].get_ydata()
    np.testing.assert_array_equal(curve, accounting.advanced_composition(
        0.1, 0.0, np.unique(np.round(np.logspace(0, 5, 300)).astype(int)), 1e-5)[0])

    def twin(epsilon, delta, k, delta_slack):
        e = np.asarray(epsilon) * np.asarray(k, float)
        return (e, e) if np.ndim(e) else (float(e), float(e))

    monkeypatch.setattr(accounting, "advanced_composition", twin)
    monkeypatch.setattr(rdp, "advanced_composition", twin)
    assert not np.allclose(rdp.composition_epsilons(2.0, 1e-5, [10, 100])["advanced"], real)
    panel.controls["epsilon"].value = 0.2
    panel.controls["epsilon"].value = 0.1
    assert not np.allclose(panel.figure.axes[0].lines[1].get_ydata(), curve)
