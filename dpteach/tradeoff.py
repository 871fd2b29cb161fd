"""What epsilon means as a test: privacy loss distributions and trade-off curves
(notebook 13).

An attacker sees one output of M and must decide whether it came from x (the target is
out) or x' (the target is in). Any decision rule has a type I error alpha (saying "in"
when the target is out) and a type II error beta (saying "out" when it is in).

- The **privacy loss** L = ln p_x(Y)/p_x'(Y), Y ~ M(x), is a random variable:
  :func:`privacy_loss_distribution` gives its law for the Laplace, Gaussian and
  randomized-response mechanisms, with the exact delta(eps) = E[(1 - e^(eps - L))_+]
  (the hockey-stick divergence) and Pr[L > eps].
- (eps, delta)-DP holds exactly when every test has beta >= f(alpha) with
  f(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))
  [Kairouz, Oh & Viswanath 2015, Theorem 2.1; Dong, Roth & Su 2019]:
  :func:`tradeoff_curve`.
- The Gaussian mechanism with mu = Delta/sigma has the trade-off curve
  G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (mu-Gaussian DP, Dong, Roth & Su 2019,
  "Gaussian differential privacy"): :func:`gaussian_tradeoff`; the Laplace one is :func:`laplace_tradeoff`.
- :func:`membership_attack` runs the test on a released count and
  :func:`empirical_tradeoff` measures its (alpha, beta) over thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._support.validate import (Delta, Epsilon, NonnegativeInt, OrNone, PositiveInt, Real, Rng,
                        Sensitivity, Using, Values, checked, valid_epsilon, valid_noise_scale,
                        valid_real, valid_values)
from . import audit as _audit
from ._support.lazy import lazy_module
from ._support.gaussian import epsilon_of_mu, gaussian_delta_exact

special = lazy_module("scipy.special")   # imported by the first function that uses it

__all__ = ["tradeoff_curve", "gaussian_tradeoff", "laplace_tradeoff", "privacy_loss_distribution",
           "LossDistribution", "membership_attack", "empirical_tradeoff", "outside_region",
           "advantage_bound", "MECHANISMS", "attack_thresholds",
           "gdp_delta", "gdp_compose", "gdp_clt_mu"]

MECHANISMS = ("laplace", "gaussian", "randomized_response")


def _valid_alpha(alpha, name):
    a = valid_values(alpha, name)
    if ((a < 0) | (a > 1)).any():
        raise ValueError(f"{name} must lie in [0, 1] (a type I error probability)")
    return a


def _valid_beta(beta, name):
    b = valid_values(beta, name)
    if ((b < 0) | (b > 1)).any():
        raise ValueError(f"{name} must lie in [0, 1] (a type II error probability)")
    return b


def _valid_epsilons(epsilon, name):
    e = valid_values(epsilon, name)
    if (e < 0).any():
        raise ValueError(f"{name} must be >= 0")
    return e


def _out(x):
    return x.item() if np.ndim(x) == 0 else x


# ------------------------------------------------------------------ trade-off curves
@checked(alpha=Using(_valid_alpha), epsilon=Epsilon(allow_zero=True), delta=Delta())
def tradeoff_curve(alpha, epsilon, delta=0.0):
    """The smallest type II error beta that an (eps, delta)-DP mechanism allows at type I
    error alpha: beta = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)).

    Both error rates are probabilities (no units). A mechanism is (eps, delta)-DP exactly
    when every test between neighbours x and x' stays on or above this curve
    [Kairouz, Oh & Viswanath 2015, Theorem 2.1; Dong, Roth & Su 2019].
    Vectorised over ``alpha`` in [0, 1]; ``epsilon`` >= 0 (0 is perfect privacy up to
    delta: beta = 1 - delta - alpha). Notebook 13.
    """
    with np.errstate(over="ignore"):
        grow = np.exp(epsilon)             # inf for a huge eps: then alpha > 0 allows beta = 0
        steep = 1 - delta - np.where(alpha > 0, grow * np.where(alpha > 0, alpha, 1.0), 0.0)
    beta = np.maximum.reduce([np.zeros_like(alpha), steep,
                              np.exp(-epsilon) * (1 - delta - alpha)])
    return _out(beta)


@checked(epsilon=Epsilon(allow_zero=True), delta=Delta())
def advantage_bound(epsilon, delta=0.0):
    """The largest advantage 1 - alpha - beta any test can have against an (eps, delta)-DP
    mechanism: (e^eps - 1 + 2 delta)/(e^eps + 1), reached where the two lines of
    :func:`tradeoff_curve` cross, at alpha = beta = (1 - delta)/(1 + e^eps)
    [Kairouz, Oh & Viswanath 2015]. ``epsilon`` >= 0: at 0 the bound is 2 delta / 2 =
    delta (no test beats guessing by more than delta). Notebook 13."""
    if epsilon >= 700:
        return 1.0
    return float((np.expm1(epsilon) + 2 * delta) / (np.exp(epsilon) + 1))


@checked(alpha=Using(_valid_alpha), mu=Real(low=0.0))
def gaussian_tradeoff(alpha, mu):
    """G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu): the trade-off curve of telling N(0, 1)
    from N(mu, 1), i.e. of the Gaussian mechanism with mu = Delta_2 / sigma.

    A mechanism is mu-Gaussian DP when every test has beta >= G_mu(alpha) [Dong, Roth &
    Su 2019, "Gaussian differential privacy"]. Phi^-1(1 - alpha) is computed as norm.isf(alpha), exact in
    the far tail. ``mu`` >= 0; vectorised over ``alpha``. Notebook 13.
    """
    from scipy import stats
    return _out(stats.norm.cdf(stats.norm.isf(alpha) - mu))


@checked(mu=Real(low=1e-100),     # mu -> 0 is sigma -> inf: refused, like a tiny sigma
         epsilon=Using(_valid_epsilons))
def gdp_delta(epsilon, mu):
    """delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2): the smallest delta at
    which a mu-GDP mechanism is (eps, delta)-DP, for every eps >= 0 at once (mu-GDP is
    exactly this whole curve of guarantees). It is the Gaussian mechanism's delta with
    sigma = 1/mu [Balle & Wang 2018, Theorem 8; Dong, Roth & Su 2022, Section 2].
    Computed by :func:`privacy_loss_distribution`; ``mu`` > 0. Notebook 13."""
    return privacy_loss_distribution("gaussian", sigma=1.0 / mu).delta(epsilon)


def _valid_mus(mus, name):
    m = valid_values(mus, name)
    if m.size == 0 or (m < 0).any():
        raise ValueError(f"{name} must be a non-empty list of numbers >= 0, got {mus!r}")
    return m


@checked(mus=Using(_valid_mus))
def gdp_compose(mus):
    """sqrt(mu_1^2 + ... + mu_k^2): mechanisms that are mu_i-GDP, run one after the other
    (also adaptively), are together this-GDP, exactly [Dong, Roth & Su 2022, Section 3].
    Notebook 13."""
    return float(np.sqrt(np.sum(mus * mus)))


@checked(loss_mean=Real(low=0.0, low_open=True), loss_variance=Real(low=0.0, low_open=True),
         k=PositiveInt(maximum=10**12))
def gdp_clt_mu(loss_mean, loss_variance, k):
    """mu = 2 k m / sqrt(k v): the central-limit approximation of k composed copies of a
    mechanism whose privacy loss has mean m (the KL divergence) and variance v
    [Dong, Roth & Su 2022, Section 3]. A sum of many independent losses is nearly normal,
    and a normal loss is mu-GDP exactly when its mean is half its variance (mu^2/2 and
    mu^2); this mu matches the two up to the CLT's error. An approximation, not a bound.
    Notebook 13."""
    return float(2.0 * k * loss_mean / np.sqrt(k * loss_variance))


@checked(alpha=Using(_valid_alpha), epsilon=Epsilon(allow_zero=True))
def laplace_tradeoff(alpha, epsilon):
    """The exact trade-off curve of the Laplace mechanism with b = Delta/eps:
    beta = F(F^-1(1 - alpha) - eps), F the CDF of Lap(0, 1).

    The likelihood ratio of Lap(Delta, b) to Lap(0, b) rises with the output, so the
    best tests reject above a threshold (Neyman-Pearson); in units of b the means are
    eps apart [Dong, Roth & Su 2019]. It lies on or above
    :func:`tradeoff_curve` at (eps, 0): equal to it for alpha <= e^-eps/2 and for
    alpha >= 1/2, strictly above in between (randomized response fills that gap).
    ``epsilon`` >= 0 (0: infinite noise, beta = 1 - alpha). Notebook 13.
    """
    from scipy import stats
    return _out(stats.laplace.cdf(stats.laplace.isf(alpha) - epsilon))


# ------------------------------------------------------------------ privacy loss distributions
@dataclass(frozen=True)
class LossDistribution:
    """The law of the privacy loss L = ln p_x(Y)/p_x'(Y), Y ~ M(x).

    ``atoms``/``atom_probs``: loss values taken with positive probability. ``grid``/
    ``density``: the density of the continuous part (empty when there is none).
    ``mechanism`` and ``params`` say where it came from. Use :meth:`delta` for the
    exact hockey-stick delta(eps) and :meth:`tail` for Pr[L > eps].
    """

    mechanism: str
    params: dict
    atoms: np.ndarray
    atom_probs: np.ndarray
    grid: np.ndarray
    density: np.ndarray

    @property
    def mean(self) -> float:
        """E[L], the KL divergence of M(x) from M(x') (nats)."""
        m, p = self.mechanism, self.params
        if m == "gaussian":
            return p["mu"] ** 2 / 2
        if m == "laplace":   # e^-eps - 1 + eps, integrated in closed form
            return float(np.expm1(-p["epsilon"]) + p["epsilon"])
        return float(np.dot(self.atoms, self.atom_probs))

    @checked(epsilon=Using(_valid_epsilons))
    def tail(self, epsilon):
        """Pr[L > eps] (vectorised over eps >= 0)."""
        m, p = self.mechanism, self.params
        if m == "gaussian":
            from scipy import stats       # here: the Laplace and RR losses need no scipy.stats
            mu = p["mu"]
            out = stats.norm.sf((epsilon - mu ** 2 / 2) / mu)
        elif m == "laplace":     # atom 1/2 at +eps0, density e^-((eps0 - l)/2)/4 on (-eps0, eps0)
            e0 = p["epsilon"]
            inside = 1 - 0.5 * np.exp(-(e0 - np.minimum(epsilon, e0)) / 2)
            out = np.where(epsilon >= e0, 0.0, inside)
        else:
            out = np.array([self.atom_probs[self.atoms > x].sum()
                            for x in epsilon.ravel()]).reshape(epsilon.shape)
        return _out(out)

    @checked(epsilon=Using(_valid_epsilons))
    def delta(self, epsilon):
        """delta(eps) = E[(1 - e^(eps - L))_+] = sup_S Pr[M(x) in S] - e^eps Pr[M(x') in S],
        the hockey-stick divergence: the smallest delta for which the pair is (eps, delta)-
        indistinguishable in this direction [Balle & Wang 2018, Theorem 5]. Always
        <= Pr[L > eps]. Vectorised over eps >= 0.
        """
        m, p = self.mechanism, self.params
        if m == "gaussian":   # Balle & Wang's delta with sigma = 1, sensitivity mu
            out = gaussian_delta_exact(1.0, p["mu"], epsilon)
        elif m == "laplace":
            e0 = p["epsilon"]
            out = np.where(epsilon >= e0, 0.0, -np.expm1(-(e0 - np.minimum(epsilon, e0)) / 2))
        else:
            out = np.array([np.sum(self.atom_probs * np.maximum(0.0, -np.expm1(x - self.atoms)))
                            for x in epsilon.ravel()]).reshape(epsilon.shape)
        return _out(np.maximum(out, 0.0))


    @checked(delta=Delta())
    def epsilon(self, delta):
        """The smallest eps >= 0 with delta(eps) <= ``delta``: the mechanism is
        (eps, delta)-DP in this direction exactly from there on. For the Gaussian this is
        the exact Gaussian epsilon (:func:`dpteach._support.gaussian.epsilon_of_mu`, the one
        :func:`dpteach.gaussian_epsilon` gives); its loss is unbounded, so there
        ``delta`` must be > 0. For Laplace and randomized response delta(eps) falls to 0
        at the largest loss eps0, so the root is bisected (in numpy: no root finder to
        import before a panel's first drawing) in [0, eps0] until the ends are
        neighbouring floats, at most 200 times; the upper end, whose delta meets
        ``delta``, is returned."""
        d = delta
        if self.mechanism == "gaussian":
            if d == 0:
                raise ValueError("delta must be > 0 for the Gaussian loss: no finite epsilon "
                                 "has delta(epsilon) = 0")
            return float(epsilon_of_mu(self.params["mu"], d))
        if float(self.delta(0.0)) <= d:
            return 0.0
        lo, hi = 0.0, float(self.params["epsilon"])     # delta(eps0) = 0 <= d
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:                # neighbouring floats: as close as it gets
                break
            if float(self.delta(mid)) > d:
                lo = mid
            else:
                hi = mid
        return float(hi)


def _valid_mechanism(mechanism, name):
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise ValueError(f"{name} must be one of {MECHANISMS}, got {mechanism!r}")
    return mechanism


@checked(mechanism=Using(_valid_mechanism), sensitivity=Sensitivity(positive=True),
         grid=OrNone(Values()))
def privacy_loss_distribution(mechanism, *, epsilon=None, sigma=None, sensitivity=1.0,
                              grid=None):
    """The distribution of the privacy loss L = ln p_x(Y)/p_x'(Y), Y ~ M(x), for
    neighbours whose answers differ by ``sensitivity``.

    - "laplace" (``epsilon``; b = Delta/eps): L lies in [-eps, eps]; atom 1/2 at +eps
      (outputs on x's far side), atom e^-eps/2 at -eps, and density e^-((eps - l)/2)/4
      on (-eps, eps) [loss (|y - Delta| - |y|)/b of y ~ Lap(0, b), changed variables].
    - "gaussian" (``sigma``; mu = Delta/sigma): L ~ Normal(mu^2/2, mu^2), unbounded
      [Balle & Wang 2018, Lemma 3; Dong, Roth & Su 2019].
    - "randomized_response" (``epsilon``; truth kept with p = e^eps/(1 + e^eps)):
      L = +eps with probability p, -eps with probability 1 - p.

    Usable ranges: mu = sensitivity / sigma in [1e-150, 1e150], epsilon <= 1e300 (and
    sensitivity / epsilon finite); beyond them the call is refused naming the parameters.
    The loss is in nats. ``grid`` is where a density is tabulated (default: 601 points
    over the support, or mean +- 6 sd for the Gaussian). Returns a
    :class:`LossDistribution`; students plot ``.atoms``/``.atom_probs`` as stems and
    ``.grid``/``.density`` as a curve. Notebook 13.
    """
    delta_f = sensitivity
    empty = np.zeros(0)
    if mechanism == "gaussian":
        if sigma is None:
            raise ValueError("the Gaussian privacy loss needs sigma (the noise standard deviation)")
        s = valid_real(sigma, "sigma", low=0.0, low_open=True)
        with np.errstate(over="ignore", under="ignore"):
            mu = delta_f / s
        if not 1e-150 <= mu <= 1e150:
            raise ValueError(f"sensitivity / sigma must lie in [1e-150, 1e150] (mu^2 must stay a "
                             f"finite float), got sensitivity={delta_f!r}, sigma={s!r}")
        if grid is None:
            grid = np.linspace(mu ** 2 / 2 - 6 * mu, mu ** 2 / 2 + 6 * mu, 601)
        from scipy import stats           # only the Gaussian's density needs it
        return LossDistribution("gaussian", {"mu": mu, "sigma": s, "sensitivity": delta_f},
                                empty, empty, grid, stats.norm.pdf(grid, mu ** 2 / 2, mu))
    if epsilon is None:
        raise ValueError(f"the {mechanism} privacy loss needs epsilon")
    e = valid_epsilon(epsilon, allow_inf=False)
    if e > 1e300:
        raise ValueError(f"epsilon must be <= 1e300 (the loss range 2 epsilon must stay finite), got {e!r}")
    if mechanism == "laplace":
        with np.errstate(over="ignore"):
            if not np.isfinite(delta_f / e):
                raise ValueError(f"epsilon is outside the usable range: the scale sensitivity / "
                                 f"epsilon overflows, got epsilon={e!r}")
        if grid is None:
            grid = np.linspace(-e, e, 601)[1:-1]
        inside = (grid > -e) & (grid < e)
        dens = np.where(inside, 0.25 * np.exp(-(e - np.clip(grid, -e, e)) / 2), 0.0)
        return LossDistribution("laplace", {"epsilon": e, "scale": delta_f / e, "sensitivity": delta_f},
                                np.array([-e, e]), np.array([0.5 * np.exp(-e), 0.5]), grid, dens)
    keep = special.expit(e)            # e^eps / (1 + e^eps)
    return LossDistribution("randomized_response", {"epsilon": e, "keep": float(keep)},
                            np.array([-e, e]), np.array([1 - keep, keep]), empty, empty)


# ------------------------------------------------------------------ the attack
def _valid_attack_noise(noise, name):
    if not isinstance(noise, str) or noise not in ("none", "laplace", "gaussian"):
        raise ValueError(f"{name} must be 'none', 'laplace' or 'gaussian', got {noise!r}")
    return noise


@checked(n_trials=PositiveInt(maximum=10**8), count=NonnegativeInt(maximum=2**53 - 1),
         noise=Using(_valid_attack_noise), delta=Delta(required=True),   # even when unused
         sensitivity_used=Sensitivity(positive=True), rng=Rng())
def membership_attack(epsilon=None, *, n_trials=2000, count=40, noise="laplace",
                      sensitivity_used=1.0, delta=1e-5, rng=None):
    """Released counts with and without a target, for a membership-inference test.

    A table without the target has ``count`` people with the property; adding the target
    (who has it) makes count + 1. The attacker knows everyone else (the strongest
    attacker DP allows for) and sees one release. ``noise``: "none" (the exact count),
    "laplace" (count + Lap(sensitivity_used/eps); sensitivity_used < 1 understates it)
    or "gaussian" (analytic sigma for (eps, delta), Balle & Wang 2018). Returns
    (out, in): ``n_trials`` releases on each table. Notebook 13.
    """
    if noise == "none":
        base = np.zeros(n_trials)
        return base + count, base + count + 1
    e = valid_epsilon(epsilon)
    if noise == "laplace":
        with np.errstate(over="ignore"):
            valid_noise_scale(sensitivity_used / e, "sensitivity_used / epsilon",
                              "sensitivity_used / epsilon")
    elif e > 700:
        raise ValueError(f"epsilon must be <= 700 for the analytic Gaussian, got {e!r}")
    from .mechanisms import gaussian_mechanism, laplace_mechanism

    tables = np.repeat([[count], [count + 1]], n_trials, axis=1).astype(float)  # out, in
    if noise == "laplace":
        out, in_ = laplace_mechanism(tables, sensitivity_used, e, rng=rng)
    else:
        out, in_ = gaussian_mechanism(tables, 1.0, e, delta, analytic=True, rng=rng)
    return out, in_


@checked(out=Values(), in_=Values(), thresholds=Values())
def empirical_tradeoff(out, in_, thresholds):
    """Measured (alpha, beta) of the tests "say in when the release exceeds t", one per
    threshold t: alpha = fraction of ``out`` releases above t (false alarms), beta =
    fraction of ``in_`` releases at or below t (misses). Returns two arrays. Notebook 13.
    """
    a, b = np.sort(out.ravel()), np.sort(in_.ravel())
    alpha = 1.0 - np.searchsorted(a, thresholds, side="right") / a.size
    beta = np.searchsorted(b, thresholds, side="right") / b.size
    return alpha, beta


@checked(out=Values(), in_=Values(), n=PositiveInt(maximum=10**6), count=Real())
def attack_thresholds(out, in_, n=31, *, count=40):
    """Thresholds for the attack: quantiles of all releases, plus the midpoint between
    the two true counts, ``count`` and ``count + 1`` (the one test that separates exact
    counts). Used by :func:`empirical_tradeoff` in notebook 13's attack panel."""
    both = np.concatenate([out.ravel(), in_.ravel()])
    return np.unique(np.append(np.quantile(both, np.linspace(0.01, 0.99, n)), count + 0.5))


#: the most trials outside_region accepts: 2**53, beyond which float64
#: no longer counts every trial exactly (10**400 raised OverflowError)
_MAX_TRIALS = 2 ** 53


@checked(alpha=Using(_valid_alpha), beta=Using(_valid_beta),
         n_out=PositiveInt(maximum=_MAX_TRIALS), n_in=PositiveInt(maximum=_MAX_TRIALS),
         epsilon=Epsilon(allow_zero=True), delta=Delta(),
         level=Real(low=0.0, high=1.0, low_open=True, high_open=True))
def outside_region(alpha, beta, n_out, n_in, epsilon, delta=0.0, *, level=1e-6):
    """Which measured (alpha, beta) points lie in the forbidden region beyond doubt.

    ``alpha`` was measured on ``n_out`` releases without the target, ``beta`` on
    ``n_in`` with it. A point is flagged when even the most favourable corner of its
    Clopper-Pearson box (:func:`dpteach.audit.clopper_pearson` at ``level``), the
    largest beta with the largest alpha, stays below :func:`tradeoff_curve` (which
    falls as alpha grows, so the largest alpha asks the least). Only the upper ends are
    used, and each falls below the true rate with probability at most ``level / 2``; a
    correct (eps, delta)-DP mechanism therefore has each point flagged with probability at
    most ``level`` (1e-6 by default; the same figure in notebook 13 and A7). ``epsilon`` >= 0, as in
    :func:`tradeoff_curve`. Returns a boolean array. Notebook 13.
    """
    _, a_high = _audit.clopper_pearson(np.round(alpha * n_out), n_out, alpha=level)
    _, b_high = _audit.clopper_pearson(np.round(beta * n_in), n_in, alpha=level)
    return np.asarray(b_high < tradeoff_curve(np.asarray(a_high), epsilon, delta))
