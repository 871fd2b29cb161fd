"""Composition theorems and a privacy accountant that refuses to overspend.

Notebook 07 teaches this module; the Curator (notebooks 02 and 03) charges one.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ._checks import check_delta, check_epsilon, check_positive_int, check_real

__all__ = ["basic_composition", "advanced_composition", "PrivacyAccountant",
           "BudgetExceededError"]


class BudgetExceededError(RuntimeError):
    """A spend would take the accountant past its (epsilon, delta) budget."""


def basic_composition(epsilons, deltas=None):
    """(sum eps_i, sum delta_i): running k mechanisms with independent randomness on
    the same data is (sum eps_i, sum delta_i)-DP [DR14 Theorem 3.16; seed 004].

    Returns a tuple of floats. The sums are computed exactly (as fractions of the
    decimals given) and rounded once, so ten 0.1s give exactly 1.0.
    """
    eps = [_exact(check_epsilon(e, f"epsilons[{i}]")) for i, e in enumerate(_as_list(epsilons, "epsilons"))]
    if deltas is None:
        dl = [Fraction(0)] * len(eps)
    else:
        dl = [_exact(check_delta(d, f"deltas[{i}]")) for i, d in enumerate(_as_list(deltas, "deltas"))]
        if len(dl) != len(eps):
            raise ValueError(f"deltas has {len(dl)} entries but epsilons has {len(eps)}")
    return float(sum(eps, Fraction(0))), float(sum(dl, Fraction(0)))


def _as_list(values, name):
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of numbers, got a string")
    try:
        out = list(np.atleast_1d(np.asarray(values, dtype=object)).ravel())
    except Exception:  # pragma: no cover - defensive
        raise TypeError(f"{name} must be a sequence of numbers") from None
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


def advanced_composition(epsilon, delta, k, delta_slack):
    """The k-fold composition of an (eps, delta)-DP mechanism is (eps', k delta + delta')-DP
    with eps' = eps sqrt(2 k ln(1/delta')) + k eps (e^eps - 1)
    (Dwork, Rothblum & Vadhan 2010; DR14 Theorem 3.20). ``delta_slack`` is delta'.

    It beats basic composition (k eps) only when k is large compared with
    ln(1/delta'); notebook 07 computes the crossover.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_positive_int(k, "k")
    slack = check_delta(delta_slack, "delta_slack", required=True)
    eps_total = epsilon * np.sqrt(2 * k * np.log(1 / slack)) + k * epsilon * np.expm1(epsilon)
    return float(eps_total), float(k * delta + slack)


def _exact(x: float) -> Fraction:
    """The decimal the user wrote, as an exact fraction: 0.1 -> 1/10, 5e-324 -> 5/10^324."""
    return Fraction(repr(float(x)))


class PrivacyAccountant:
    """Keeps track of the privacy spent against a total (epsilon, delta) budget.

    Spending uses basic composition [DR14 Theorem 3.16]. Totals are kept as exact
    fractions of the decimals passed in, never as float sums, so ten spends of 0.1 fit
    a budget of 1.0 exactly and, once the budget is used up, even a spend of 5e-324 is
    refused. A refused spend raises :class:`BudgetExceededError` and changes nothing.

    >>> acc = PrivacyAccountant(1.0)
    >>> for _ in range(10): acc.spend(0.1)
    >>> acc.remaining
    (0.0, 0.0)
    """

    def __init__(self, epsilon, delta=0.0):
        self._budget = (_exact(check_epsilon(epsilon)), _exact(check_delta(delta)))
        self._spent = (Fraction(0), Fraction(0))
        self._history: list[tuple] = []

    @property
    def budget(self):
        """The total (epsilon, delta) budget, as floats."""
        return float(self._budget[0]), float(self._budget[1])

    @property
    def spent(self):
        """(epsilon, delta) spent so far, as floats (the exact totals are kept inside)."""
        return float(self._spent[0]), float(self._spent[1])

    @property
    def remaining(self):
        """(epsilon, delta) still available, as floats."""
        return (float(self._budget[0] - self._spent[0]), float(self._budget[1] - self._spent[1]))

    @property
    def history(self):
        """A list of (label, epsilon, delta), one entry per accepted spend."""
        return list(self._history)

    def can_spend(self, epsilon, delta=0.0) -> bool:
        """Would :meth:`spend` accept this charge? Spends nothing."""
        e, d = self._checked(epsilon, delta)
        return self._fits(e, d)

    def _checked(self, epsilon, delta):
        e = _exact(check_real("epsilon", epsilon, low=0.0))
        d = _exact(check_delta(delta))
        return e, d

    def _fits(self, e, d):
        return self._spent[0] + e <= self._budget[0] and self._spent[1] + d <= self._budget[1]

    def spend(self, epsilon, delta=0.0, label=None):
        """Charge (epsilon, delta), or raise BudgetExceededError and charge nothing."""
        e, d = self._checked(epsilon, delta)
        if not self._fits(e, d):
            rem = self.remaining
            raise BudgetExceededError(
                f"spending epsilon={float(e):g}, delta={float(d):g} would pass the budget "
                f"(epsilon={float(self._budget[0]):g}, delta={float(self._budget[1]):g}); "
                f"remaining: epsilon={rem[0]:g}, delta={rem[1]:g}")
        self._spent = (self._spent[0] + e, self._spent[1] + d)
        self._history.append((label, float(e), float(d)))

    def __repr__(self):
        s, b = self.spent, self.budget
        return (f"PrivacyAccountant(spent epsilon={s[0]:g} of {b[0]:g}, "
                f"delta={s[1]:g} of {b[1]:g}, {len(self._history)} spends)")
