"""Accounting for notebooks 04 and 07 beyond the theorems: the crossover of
advanced and basic composition, inverse advanced composition, budget splitting that an
accountant accepts, and the (epsilon, delta) definition on two output distributions."""

import math

import numpy as np
import pytest

from conftest import ALPHA, chisq_pvalue
from dpteach import accounting as acc
from dpteach import definition


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
