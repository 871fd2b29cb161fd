"""Composition theorems, a privacy accountant that refuses to overspend, and the one
interface of the composition accountants.

Notebook 07 teaches this module; the Curator (notebooks 02 and 03) charges one. The
composition accountants of notebook 16 (:class:`dpteach.RDPAccountant`,
:class:`dpteach.PLDAccountant` and :class:`ExactGaussianAccountant`) share the protocol
:class:`CompositionAccountant`.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction
from typing import Protocol, runtime_checkable

import numpy as np

from ._support.validate import (Delta, Epsilon, OrNone, PositiveInt, PositiveInts, Real, Reals,
                        Sensitivity, Using, Values, checked, valid_delta, valid_epsilon,
                        valid_positive_int, valid_real)
from ._support import gaussian as _gaussian
from .mechanisms import privacy_loss

__all__ = ["basic_composition", "advanced_composition", "PrivacyAccountant",
           "BudgetExceededError"]


class BudgetExceededError(RuntimeError):
    """A spend would take the accountant past its (epsilon, delta) budget."""


def _valid_epsilons(epsilons, name):
    """A non-empty sequence of epsilons > 0, each checked by name (``epsilons[i]``)."""
    return [valid_epsilon(e, f"{name}[{i}]") for i, e in enumerate(_as_list(epsilons, name))]


def _valid_deltas(deltas, name):
    """A non-empty sequence of deltas in [0, 1), each checked by name (``deltas[i]``)."""
    return [valid_delta(d, f"{name}[{i}]") for i, d in enumerate(_as_list(deltas, name))]


@checked(epsilons=Using(_valid_epsilons), deltas=OrNone(Using(_valid_deltas)))
def basic_composition(epsilons, deltas=None):
    """(sum eps_i, sum delta_i): running k mechanisms with independent randomness on
    the same data is (sum eps_i, sum delta_i)-DP [DR14 Theorem 3.16; seed 004].

    Returns a tuple of floats. The sums are computed exactly (as fractions of the
    decimals given) and rounded once, so ten 0.1s give exactly 1.0.
    """
    eps = [_exact(e) for e in epsilons]
    if deltas is None:
        dl = [Fraction(0)] * len(eps)
    else:
        dl = [_exact(d) for d in deltas]
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


@checked(epsilon=Reals(low=0.0, low_open=True), delta=Reals(low=0.0, high=1.0, high_open=True),
         k=PositiveInts(), delta_slack=Reals(low=0.0, high=1.0, low_open=True, high_open=True))
def advanced_composition(epsilon, delta, k, delta_slack):
    """The k-fold composition of an (eps, delta)-DP mechanism is (eps', k delta + delta')-DP
    with eps' = eps sqrt(2 k ln(1/delta')) + k eps (e^eps - 1)
    (Dwork, Rothblum & Vadhan 2010; DR14 Theorem 3.20). ``delta_slack`` is delta'.

    It beats basic composition (k eps) only when k is large compared with
    ln(1/delta'); notebook 07 computes the crossover. Every parameter may be an array
    (numpy broadcasting, each element checked as a scalar would be): the notebook 07 panel
    sweeps k, notebook 16's compares it at a per-release epsilon for each k. Scalars give
    a pair of floats, arrays a pair of arrays of the broadcast shape.
    """
    try:
        shape = np.broadcast_shapes(*(np.shape(x) for x in (epsilon, delta, k, delta_slack)))
    except ValueError:
        raise ValueError(f"epsilon, delta, k and delta_slack must broadcast together, got shapes "
                         f"{[np.shape(x) for x in (epsilon, delta, k, delta_slack)]}") from None
    kf = _float_k(k) if np.ndim(k) == 0 else k
    eps_total = _advanced_epsilon(epsilon, kf, delta_slack)
    if not np.isfinite(eps_total).all():
        bad = np.broadcast_to(~np.isfinite(eps_total), shape)
        e, kk = (np.broadcast_to(np.asarray(x, dtype=object), shape)[bad].flat[0] for x in (epsilon, k))
        raise ValueError(f"the total epsilon overflows the float range for epsilon={e:g} "
                         f"and k={kk}; use a smaller epsilon or k")
    delta_total = kf * delta + delta_slack
    if shape == ():
        return float(eps_total), float(delta_total)
    return (np.broadcast_to(eps_total, shape).astype(float),
            np.broadcast_to(delta_total, shape).astype(float))


def _advanced_epsilon(epsilon, k, slack):
    """eps sqrt(2 k ln(1/delta')) + k eps (e^eps - 1) for checked numbers or arrays (k a
    float); inf where it overflows. The one place the formula is written."""
    with np.errstate(over="ignore", invalid="ignore"):
        return epsilon * np.sqrt(2 * k * np.log(1 / slack)) + k * epsilon * np.expm1(epsilon)


def _float_k(k: int) -> float:
    """k as a float, or a ValueError naming k when it is beyond the float range."""
    try:
        return float(k)
    except OverflowError:
        raise ValueError(f"k must be below 1.8e308 (the float range), got a number with "
                         f"{len(str(k))} digits") from None


def _exact(x: float) -> Fraction:
    """The decimal the user wrote, as an exact fraction: 0.1 -> 1/10, 5e-324 -> 5/10^324."""
    return Fraction(repr(float(x)))


class PrivacyAccountant:
    """Keeps track of the privacy spent against a total (epsilon, delta) budget.

    Spending uses basic composition [DR14 Theorem 3.16]. Totals are kept as exact
    fractions of the decimals passed in, never as float sums, so ten spends of 0.1 fit
    a budget of 1.0 exactly and, once the budget is used up, even a spend of 5e-324 is
    refused. A refused spend raises :class:`BudgetExceededError` and changes nothing.

    Thread-safe: the check against the budget and the charge happen under one lock, so
    threads spending at the same time can never pass the budget together.

    >>> acc = PrivacyAccountant(1.0)
    >>> for _ in range(10): acc.spend(0.1)
    >>> acc.remaining
    (0.0, 0.0)
    """

    def __init__(self, epsilon, delta=0.0):
        self._budget = (_exact(valid_epsilon(epsilon)), _exact(valid_delta(delta)))
        self._spent = (Fraction(0), Fraction(0))
        self._history: list[tuple] = []
        self._lock = threading.RLock()   # check-and-charge is one atomic step

    @property
    def budget(self):
        """The total (epsilon, delta) budget, as floats."""
        return float(self._budget[0]), float(self._budget[1])

    @property
    def spent(self):
        """(epsilon, delta) spent so far, as floats (the exact totals are kept inside)."""
        with self._lock:
            spent = self._spent
        return float(spent[0]), float(spent[1])

    @property
    def remaining(self):
        """(epsilon, delta) still available, as floats."""
        with self._lock:
            spent = self._spent
        return (float(self._budget[0] - spent[0]), float(self._budget[1] - spent[1]))

    @property
    def history(self):
        """A list of (label, epsilon, delta), one entry per accepted spend (a copy)."""
        with self._lock:
            return list(self._history)

    @checked(epsilon=Real(low=0.0), delta=Delta())
    def can_spend(self, epsilon, delta=0.0) -> bool:
        """Would :meth:`spend` accept this charge? Spends nothing."""
        e, d = _exact(epsilon), _exact(delta)
        with self._lock:
            return self._fits(e, d)

    def _fits(self, e, d):
        return self._spent[0] + e <= self._budget[0] and self._spent[1] + d <= self._budget[1]

    @checked(epsilon=Real(low=0.0), delta=Delta())
    def spend(self, epsilon, delta=0.0, label=None):
        """Charge (epsilon, delta), or raise BudgetExceededError and charge nothing."""
        e, d = _exact(epsilon), _exact(delta)
        with self._lock:   # no other thread may charge between the check and the charge
            if not self._fits(e, d):
                rem = self.remaining
                raise BudgetExceededError(
                    f"spending epsilon={float(e):g}, delta={float(d):g} would pass the budget "
                    f"(epsilon={float(self._budget[0]):g}, delta={float(self._budget[1]):g}); "
                    f"remaining: epsilon={rem[0]:g}, delta={rem[1]:g}")
            self._spent = (self._spent[0] + e, self._spent[1] + d)
            self._history.append((label, float(e), float(d)))

    def __repr__(self):
        with self._lock:
            s, b, n = self.spent, self.budget, len(self._history)
        return (f"PrivacyAccountant(spent epsilon={s[0]:g} of {b[0]:g}, "
                f"delta={s[1]:g} of {b[1]:g}, {n} spends)")


# ----------------------------------------------------------------------------------
# Notebooks 04 and 07: the crossover of advanced and basic composition, splitting a
# budget. (The divergences that define (epsilon, delta)-DP on two output distributions,
# hockey_stick_divergence, smallest_delta and max_probability_ratio, are in
# dpteach.definition; Rényi DP, zCDP and the exact Gaussian are in dpteach.rdp.)

__all__ += ["advanced_composition_crossover", "advanced_composition_epsilon", "split_budget"]


@checked(epsilon=Epsilon(), delta_slack=Delta(required=True))
def advanced_composition_crossover(epsilon, delta_slack):
    """The smallest k at which advanced composition gives a smaller total epsilon than
    basic composition, or None if it never does.

    Compares eps' = eps sqrt(2 k ln(1/delta')) + k eps (e^eps - 1) (the bound of
    :func:`advanced_composition`, DR14 Theorem 3.20) with k eps (DR14 Theorem 3.16):
    eps' < k eps  <=>  sqrt(2 k ln(1/delta')) < k (2 - e^eps)  <=>
    k > 2 ln(1/delta') / (2 - e^eps)^2, which needs e^eps < 2, i.e. eps < ln 2.
    Only the epsilons are compared: advanced composition always costs delta' more.
    Dropping the k eps (e^eps - 1) term gives the too-early answer k > 2 ln(1/delta').
    Notebook 07.
    """
    if epsilon >= np.log(2.0):
        return None
    gap = 2.0 - np.exp(epsilon)
    if gap <= 0:
        return None
    bound = 2 * np.log(1 / delta_slack) / gap ** 2
    if not np.isfinite(bound) or bound > 1e300:
        raise ValueError(f"epsilon={epsilon!r} is so close to ln 2 that the crossover k "
                         "passes the float range; use a smaller epsilon")
    k = max(1, int(np.floor(bound)) + 1)

    def wins(kk):
        return _advanced_epsilon(epsilon, float(kk), delta_slack) < kk * epsilon

    # the closed form can be off through rounding; settle it with the formula by a
    # bisection for the smallest winning k (at most ~1000 steps, even for k near 1e300)
    lo, hi = max(1, k - 2), k + 2
    while lo > 1 and wins(lo):
        lo = max(1, lo // 2)
    while not wins(hi):
        hi *= 2
    if wins(lo):
        return int(lo)
    while hi - lo > 1:           # invariant: not wins(lo), wins(hi)
        mid = (lo + hi) // 2
        if wins(mid):
            hi = mid
        else:
            lo = mid
    return int(hi)


@checked(epsilon_total=Epsilon(), k=PositiveInt(), delta_slack=Delta(required=True))
def advanced_composition_epsilon(epsilon_total, k, delta_slack):
    """The per-mechanism epsilon whose k-fold advanced composition totals ``epsilon_total``:
    solves eps sqrt(2 k ln(1/delta')) + k eps (e^eps - 1) = epsilon_total for eps
    (the left side increases with eps; solved by scipy's brentq to 1e-12 relative).
    Compare with epsilon_total / k from basic composition and use the larger, since
    both theorems hold. Notebook 07.
    """
    from scipy import optimize

    total = epsilon_total
    kf = _float_k(k)
    root_l = np.sqrt(2 * kf * np.log(1 / delta_slack))

    def f(e):
        return _advanced_epsilon(e, kf, delta_slack) - total

    if root_l > 0 and total / root_l < 1e-200:
        # second term k e (e^e - 1) ~ k e^2 is negligible: the root is total / root_l
        eps = total / root_l
        if eps <= 0:
            raise ValueError(f"epsilon_total={total!r} is too small for k={k}: the "
                             "per-mechanism epsilon underflows to 0")
        return float(eps)

    # the root lies below total / root_l (first term alone) and below
    # max(1, ln(1 + total/k)) (second term alone), so this bracket needs no search
    hi = min(total / root_l if root_l > 0 else np.inf, max(1.0, np.log1p(total / kf)))
    hi = max(hi, 5e-324)
    for _ in range(64):          # float rounding: nudge the bracket up, a few steps at most
        if f(hi) >= 0:
            break
        hi = hi * 2 if hi > 1e-300 else np.nextafter(hi, np.inf) * 2
    else:  # pragma: no cover - the bound above makes this unreachable
        raise ValueError(f"could not bracket the per-mechanism epsilon for "
                         f"epsilon_total={total!r}, k={k}")
    if f(hi) == 0:
        return float(hi)
    eps = float(optimize.brentq(f, 0.0, hi, xtol=5e-324, rtol=1e-12))
    if eps <= 0:
        raise ValueError(f"epsilon_total={total!r} is too small for k={k}: the "
                         "per-mechanism epsilon underflows to 0")
    return eps


_MAX_SHARES = 1_000_000


def _valid_weights(weights, name):
    """A count k of equal shares (1 <= k <= 10^6) as k weights 1.0, or a sequence of
    positive weights, each checked by name (``weights[i]``)."""
    if np.ndim(weights) == 0 and not isinstance(weights, (str, bytes)):
        # a single number is a count of equal shares: 3 (or 3.0), never 3.5 or True
        return [1.0] * valid_positive_int(weights, name, maximum=_MAX_SHARES)
    return [valid_real(x, f"{name}[{i}]", low=0.0, low_open=True)
            for i, x in enumerate(_as_list(weights, name))]


@checked(epsilon=Epsilon(), weights=Using(_valid_weights))
def split_budget(epsilon, weights):
    """Split ``epsilon`` across queries in proportion to ``weights`` (a sequence of
    positive numbers, or an int k <= 10^6 for k equal shares).

    Returns a list of floats whose exact decimal sum never exceeds ``epsilon``, so that a
    :class:`PrivacyAccountant` with budget ``epsilon`` accepts every share: 1.0 / 3
    printed as 0.3333333333333333 three times sums to less than 1, but other splits can
    round up and the last spend would then be refused. Shares are rounded to 15
    significant digits (down, if to-nearest would pass the budget); if their exact sum
    still passes ``epsilon``, shares are lowered by the smallest float steps needed.
    Notebook 07.
    """
    eps, w = epsilon, weights
    total_w = float(sum(w))
    # 15 significant digits: 0.3 split three ways gives 0.1, not 0.09999999999999999;
    # if rounding to nearest passes the budget, round down instead
    limit = _exact(eps)
    raw = [eps * x / total_w for x in w]
    shares = [float(f"{r:.15g}") for r in raw]
    if sum((_exact(s) for s in shares), Fraction(0)) > limit:
        shares = [_floor_digits(r, 15) for r in raw]
    order = sorted(range(len(shares)), key=lambda i: -shares[i])
    j = 0
    while sum((_exact(s) for s in shares), Fraction(0)) > limit:
        i = order[j % len(order)]
        shares[i] = float(np.nextafter(shares[i], 0.0))
        j += 1
    return shares


def _floor_digits(x: float, digits: int) -> float:
    import decimal

    d = decimal.Decimal(repr(x))
    q = decimal.Decimal(1).scaleb(d.adjusted() - digits + 1)
    return float(d.quantize(q, rounding=decimal.ROUND_FLOOR))


# ----------------------------------------------------------------------------------
# Notebook 07: seed 000's two queries released together -- their privacy losses add.
__all__ += ["joint_privacy_loss"]


@checked(r1=Values(), r2=Values(), gap1=Sensitivity(), gap2=Sensitivity(),
         scale1=Sensitivity(positive=True), scale2=Sensitivity(positive=True))
def joint_privacy_loss(r1, r2, gap1, gap2, scale1, scale2):
    """ln p(r1, r2 | D1) / p(r1, r2 | D2) for two Laplace releases with independent
    noise: f1 + Lap(scale1) and f2 + Lap(scale2), where f1(D1) - f1(D2) = gap1 and
    f2(D1) - f2(D2) = gap2 (D2's answers placed at 0). The densities multiply, so the
    losses add: (|r1| - |r1 - gap1|)/scale1 + (|r2| - |r2 - gap2|)/scale2, at most
    gap1/scale1 + gap2/scale2. With both scales (Delta1 + Delta2)/eps this is <= eps
    (seed 000, eq. 5). ``r1``, ``r2`` broadcast. Notebook 07. Each term is one release's
    loss, :func:`dpteach.mechanisms.privacy_loss` (the kit's one home of the Laplace loss).
    """
    return privacy_loss(r1, gap1, 0.0, scale1) + privacy_loss(r2, gap2, 0.0, scale2)


# ----------------------------------------------------------------------------------
# Notebook 16: one interface for the accountants that compose many releases.
__all__ += ["CompositionAccountant", "ExactGaussianAccountant"]


@runtime_checkable
class CompositionAccountant(Protocol):
    """What every composition accountant of the kit offers: compose releases, then ask
    for epsilon at a delta or for delta at an epsilon.

    :class:`dpteach.RDPAccountant`, :class:`dpteach.PLDAccountant` and
    :class:`ExactGaussianAccountant` follow it (``isinstance(acc, CompositionAccountant)``
    checks that the three methods are there). The promise behind the names: both answers
    are upper bounds for the composed releases, never below the true curve (a float's
    rounding aside), never NaN; where an accountant cannot bound, ``epsilon`` says
    ``inf`` (``delta`` says 1) or the call is refused with an error naming the parameter.
    The accountants differ only in how loose they are: the exact one is the curve itself,
    the PLD one is above it by about one grid step per composition, the RDP one loses
    most through its conversion. :class:`PrivacyAccountant` is something else: a ledger
    that charges (epsilon, delta) spends against a budget by basic composition.
    """

    def compose_gaussian(self, sigma, *, q=1.0, steps=1):
        """Add ``steps`` releases of a Gaussian with noise multiplier ``sigma`` (the noise
        standard deviation over the L2 sensitivity), each on a Poisson subsample of rate
        ``q``, add/remove neighbours. Returns the accountant itself, so calls chain."""

    def epsilon(self, delta):
        """An epsilon at which the composition is (epsilon, ``delta``)-DP: never below
        the smallest such epsilon; ``inf`` where no finite one can be certified."""

    def delta(self, epsilon):
        """A delta at which the composition is (``epsilon``, delta)-DP: never below the
        hockey-stick divergence of the composed releases at ``epsilon``."""


def _valid_exact_q(q, name):
    """A sampling rate of 0 or 1: a Poisson-subsampled Gaussian (0 < q < 1) has no
    closed-form curve."""
    q = valid_real(q, name, low=0.0, high=1.0)
    if 0.0 < q < 1.0:
        raise ValueError(f"{name} must be 0 or 1 for the exact Gaussian accountant (a Poisson-"
                         f"subsampled Gaussian has no closed-form curve), got {name}={q!r}; "
                         "use dp.PLDAccountant or dp.RDPAccountant")
    return q


class ExactGaussianAccountant:
    """The exact privacy curve of composed Gaussian releases (no subsampling).

    Releases with noise multipliers σ₁, ..., σ_T (σ = noise standard deviation / L2
    sensitivity) on the same data have independent normal privacy losses N(μᵢ²/2, μᵢ²)
    with μᵢ = 1/σᵢ; their sum is N(μ²/2, μ²) with μ² = Σ 1/σᵢ², the loss of one Gaussian
    of noise multiplier 1/μ (μ-GDP composes this way, exactly: Dong, Roth & Su 2022,
    Section 3). So the composed curve is Balle & Wang's (2018, Theorem 8)

        δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2),

    evaluated by :meth:`delta` and inverted by :meth:`epsilon` (the smallest float whose δ
    meets the target, as :func:`dpteach.gaussian_epsilon`). This is the truth, not a
    bound: the RDP and PLD accountants are measured against it. A Poisson-subsampled step
    (0 < q < 1) has no closed form and is refused by name (use
    :class:`dpteach.PLDAccountant`); q = 0 releases nothing about the record.
    ``epsilon(0)`` is ``inf`` once anything is composed (a Gaussian's loss is unbounded);
    ``delta`` never returns 0 for a positive true δ (the smallest positive float stands
    in where the true δ is below the float range), and an ε beyond the float range is
    ``inf``. Notebook 16.
    """

    def __init__(self):
        self.mu_squared = 0.0
        self.history: list[tuple[float, float, int]] = []

    @checked(sigma=Real(low=0.0, low_open=True), q=Using(_valid_exact_q),
             steps=PositiveInt(maximum=10 ** 15))
    def compose_gaussian(self, sigma, *, q=1.0, steps=1):
        """Add ``steps`` Gaussian releases of noise multiplier ``sigma`` (``q`` = 1; q = 0
        releases nothing): μ² grows by steps/σ². Returns the accountant itself."""
        if q == 1.0:
            with np.errstate(over="ignore"):
                self.mu_squared = float(self.mu_squared + steps * (1.0 / sigma) / sigma)
        self.history.append((sigma, q, steps))
        return self

    @property
    def mu(self) -> float:
        """μ of the composition: it is exactly μ-GDP."""
        return math.sqrt(self.mu_squared)

    @checked(delta=Delta())
    def epsilon(self, delta):
        """The exact ε at ``delta`` (0 <= δ < 1), rounded up to a float; ``inf`` at δ = 0
        or where ε passes 1e300."""
        if self.mu_squared == 0.0:
            return 0.0
        if delta == 0.0 or self.mu_squared > 1e300:
            return math.inf
        return float(_gaussian.epsilon_of_mu(self.mu, delta))

    @checked(epsilon=Real(low=0.0, allow_inf=True))
    def delta(self, epsilon):
        """The exact δ at ``epsilon`` (>= 0, inf allowed: δ = 0 there)."""
        if self.mu_squared == 0.0 or epsilon == math.inf:
            return 0.0
        if not math.isfinite(self.mu_squared):
            return 1.0
        d = float(_gaussian.gaussian_delta_exact(1.0, self.mu, epsilon))
        return max(d, 5e-324)    # the true δ of a Gaussian is positive at every finite ε

    def __repr__(self):
        return f"ExactGaussianAccountant({len(self.history)} compositions, mu={self.mu:.6g})"
