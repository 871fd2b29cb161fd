"""Tests for dpteach.accounting: composition theorems and the exact PrivacyAccountant,
and what notebooks 04 and 07 do with them beyond the theorems."""

from fractions import Fraction

import numpy as np
import pytest

import dpteach as dp
from dpteach.accounting import (BudgetExceededError, PrivacyAccountant, advanced_composition,
                                basic_composition)
import math
from conftest import ALPHA, chisq_pvalue
from dpteach import accounting as acc
from dpteach import definition


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


# ------------------------------------------------------------------
# Accounting for notebooks 04 and 07 beyond the theorems: the crossover of
# advanced and basic composition, inverse advanced composition, budget splitting that an
# accountant accepts, and the (epsilon, delta) definition on two output distributions.


# ------------------------------------------------------------------- crossover
@pytest.mark.parametrize("eps,slack", [(0.01, 1e-5), (0.1, 1e-5), (0.1, 1e-9), (0.5, 1e-6),
                                       (0.3, 0.1), (0.69, 1e-5), (1e-4, 1e-3)])
def test_crossover_is_the_first_k_where_advanced_wins(eps, slack):
    k = acc.advanced_composition_crossover(eps, slack)
    adv = lambda kk: acc.advanced_composition(eps, 0.0, kk, slack)[0]
    assert adv(k) < k * eps
    if k > 1:
        assert adv(k - 1) >= (k - 1) * eps
    # and it keeps winning afterwards (the gap grows with k)
    for kk in (k + 1, 2 * k, 10 * k):
        assert adv(kk) < kk * eps
    # closed form k > 2 ln(1/delta') / (2 - e^eps)^2
    assert k == math.floor(2 * math.log(1 / slack) / (2 - math.exp(eps)) ** 2) + 1


def test_crossover_values_quoted_in_notebook_07():
    assert acc.advanced_composition_crossover(0.1, 1e-5) == 29
    assert acc.advanced_composition_crossover(0.5, 1e-5) == 187
    # the careless bound (ignoring k eps (e^eps - 1)) says k > 2 ln(1/delta') = 23.03
    assert acc.advanced_composition(0.5, 0, 24, 1e-5)[0] > 24 * 0.5


def test_no_crossover_from_ln2():
    assert acc.advanced_composition_crossover(math.log(2), 1e-5) is None
    assert acc.advanced_composition_crossover(1.0, 1e-5) is None
    # just below ln 2 it exists but is huge
    assert acc.advanced_composition_crossover(0.69, 1e-5) > 10 ** 5


# ----------------------------------------------------------- inverse composition
@pytest.mark.parametrize("total,k,slack", [(1.0, 100, 1e-5), (0.5, 10, 1e-6), (3.0, 1000, 1e-8),
                                           (1.0, 1, 0.5)])
def test_advanced_composition_epsilon_inverts(total, k, slack):
    e = acc.advanced_composition_epsilon(total, k, slack)
    assert math.isclose(acc.advanced_composition(e, 0, k, slack)[0], total, rel_tol=1e-10)


def test_advanced_beats_basic_split_only_past_crossover():
    slack = 1e-5
    for k in (10, 1000):
        e_adv = acc.advanced_composition_epsilon(1.0, k, slack)
        assert (e_adv > 1.0 / k) == (k >= acc.advanced_composition_crossover(e_adv, slack))


# --------------------------------------------------------------- split_budget
@pytest.mark.parametrize("eps,weights", [(1.0, 3), (0.3, 3), (1.0, 10), (0.7, [1, 2, 3]),
                                         (2 / 3, [1, 1]), (1e-9, 7), (5.0, [0.1] * 13)])
def test_split_budget_is_accepted_by_the_accountant(eps, weights):
    shares = acc.split_budget(eps, weights)
    w = [1.0] * weights if isinstance(weights, int) else weights
    assert len(shares) == len(w)
    for s, x in zip(shares, w):
        assert math.isclose(s, eps * x / sum(w), rel_tol=1e-13)
    a = acc.PrivacyAccountant(eps)
    for s in shares:
        a.spend(s)
    assert a.remaining[0] >= 0


def test_split_budget_keeps_nice_decimals():
    assert acc.split_budget(0.3, 3) == [0.1, 0.1, 0.1]
    assert acc.split_budget(1.0, [1, 3]) == [0.25, 0.75]


def test_naive_split_can_be_refused_but_split_budget_is_not():
    # find a budget whose naive float split sums (exactly) past it
    for eps in np.linspace(0.1, 3, 300):
        naive = [eps / 7] * 7
        a = acc.PrivacyAccountant(eps)
        try:
            for s in naive:
                a.spend(s)
        except acc.BudgetExceededError:
            break
    else:
        pytest.fail("no refused naive split found")
    a = acc.PrivacyAccountant(eps)
    for s in acc.split_budget(eps, 7):
        a.spend(s)


# ------------------------------------------------------ the definition, discretely
def test_randomized_response_is_exactly_ln3_dp():
    p, q = [0.75, 0.25], [0.25, 0.75]                # seed 004's coin-flip survey
    assert math.isclose(definition.max_probability_ratio(p, q), 3.0)
    assert definition.smallest_delta(p, q, math.log(3)) == pytest.approx(0.0, abs=1e-15)
    assert definition.smallest_delta(p, q, math.log(2)) == pytest.approx(0.75 - 2 * 0.25)
    assert definition.hockey_stick_divergence(p, q, 0) == pytest.approx(0.5)   # total variation


def test_blip_is_additive_but_not_ratio_dp():
    # with probability delta release the record: output 2 is impossible without it
    d = 1e-3
    x = [0.5, 0.5, 0.0]
    y = [0.5 * (1 - d), 0.5 * (1 - d), d]
    assert definition.smallest_delta(x, y, 0.0) == pytest.approx(d)
    assert definition.max_probability_ratio(x, y) == math.inf


def test_ratio_form_implies_additive_form():
    rng = np.random.default_rng(4)
    for _ in range(200):
        p = rng.dirichlet(np.ones(4))
        q = rng.dirichlet(np.ones(4))
        eps, delta = rng.uniform(0, 2), rng.uniform(0, 0.5)
        if definition.max_probability_ratio(p, q) <= math.exp(eps) + delta:
            assert definition.smallest_delta(p, q, eps) <= delta + 1e-12


def test_deterministic_mechanism_needs_delta_one():
    assert definition.smallest_delta([1, 0], [0, 1], 50.0) == 1.0


def test_hockey_stick_matches_simulated_events():
    """Sampling check: the event S = {p > e^eps q} has frequency P(S) under p, and
    P(S) - e^eps Q(S) equals the divergence; a wrong twin (e^eps replaced by e^(eps/2))
    is rejected by the same chi-square test."""
    rng = np.random.default_rng(11)
    p = np.array([0.5, 0.3, 0.15, 0.05])
    q = np.array([0.1, 0.3, 0.3, 0.3])
    eps = 0.5
    hs = definition.hockey_stick_divergence(p, q, eps)
    S = p > np.exp(eps) * q
    n = 200_000
    hits_p = (rng.choice(4, size=n, p=p)[:, None] == np.flatnonzero(S)).any(axis=1).sum()
    hits_q = (rng.choice(4, size=n, p=q)[:, None] == np.flatnonzero(S)).any(axis=1).sum()
    PS, QS = hs + np.exp(eps) * q[S].sum(), q[S].sum()
    assert chisq_pvalue([hits_p, n - hits_p], [PS, 1 - PS]) > ALPHA
    assert chisq_pvalue([hits_q, n - hits_q], [QS, 1 - QS]) > ALPHA
    wrong = float(np.maximum(p - np.exp(eps / 2) * q, 0).sum()) + np.exp(eps) * QS
    assert chisq_pvalue([hits_p, n - hits_p], [wrong, 1 - wrong]) < ALPHA


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("fn,args,exc,match", [
    (acc.advanced_composition_crossover, (0, 1e-5), ValueError, "epsilon"),
    (acc.advanced_composition_crossover, (float("nan"), 1e-5), ValueError, "epsilon"),
    (acc.advanced_composition_crossover, (True, 1e-5), TypeError, "epsilon"),
    (acc.advanced_composition_crossover, (0.1, 0), ValueError, "delta_slack"),
    (acc.advanced_composition_crossover, (0.1, 1), ValueError, "delta_slack"),
    (acc.advanced_composition_crossover, (0.1, "1e-5"), TypeError, "delta_slack"),
    (acc.advanced_composition_epsilon, (0, 10, 1e-5), ValueError, "epsilon_total"),
    (acc.advanced_composition_epsilon, (float("inf"), 10, 1e-5), ValueError, "epsilon_total"),
    (acc.advanced_composition_epsilon, (1, 0, 1e-5), ValueError, "k"),
    (acc.advanced_composition_epsilon, (1, 2.5, 1e-5), ValueError, "k"),
    (acc.advanced_composition_epsilon, (1, 10, -1e-5), ValueError, "delta_slack"),
    (acc.split_budget, (0, 3), ValueError, "epsilon"),
    (acc.split_budget, (-1, 3), ValueError, "epsilon"),
    (acc.split_budget, (1, 0), ValueError, "weights"),
    (acc.split_budget, (1, []), ValueError, "weights"),
    (acc.split_budget, (1, [1, -1]), ValueError, "weights"),
    (acc.split_budget, (1, [1, float("nan")]), ValueError, "weights"),
    (acc.split_budget, (1, True), TypeError, "weights"),
    (acc.split_budget, (1, "ab"), TypeError, "weights"),
    (definition.hockey_stick_divergence, ([0.5, 0.5], [1.0], 1), ValueError, "same length"),
    (definition.hockey_stick_divergence, ([0.5, 0.6], [0.5, 0.5], 1), ValueError, "sum to 1"),
    (definition.hockey_stick_divergence, ([1.5, -0.5], [0.5, 0.5], 1), ValueError, "negative"),
    (definition.hockey_stick_divergence, ([0.5, 0.5], [0.5, 0.5], -1), ValueError, "epsilon"),
    (definition.hockey_stick_divergence, ([0.5, 0.5], [0.5, 0.5], float("nan")), ValueError, "epsilon"),
    (definition.hockey_stick_divergence, ([[1.0]], [[1.0]], 1), ValueError, "1-D"),
    (definition.smallest_delta, ([0.5, float("nan")], [0.5, 0.5], 1), ValueError, "NaN"),
    (definition.smallest_delta, ("ab", [0.5, 0.5], 1), TypeError, "numeric"),
    (definition.max_probability_ratio, ([0.5, 0.5], [0.2, 0.2]), ValueError, "sum to 1"),
    (definition.max_probability_ratio, ([], []), ValueError, "empty"),
])
def test_bad_input(fn, args, exc, match):
    with pytest.raises(exc, match=match):
        fn(*args)
