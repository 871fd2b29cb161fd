"""Comparing the mechanisms: seed 002's Table 1 generated from the code, and a decision guide.

Seed 002 (Utaliyeva, Shin & Choi) compares the Laplace, Gaussian and exponential
mechanisms in a small table: privacy guarantee, data type, mechanism type, additive noise
and sensitivity norm. Here each row is *derived* from the real function in
:mod:`dpteach.mechanisms`: the guarantee and the sensitivity norm are read off its
signature (a ``delta`` parameter means (epsilon, delta)-DP; an ``l2_sensitivity``
parameter means the L2 norm), the data type and kind off what it takes (a ``value`` to
perturb, or ``candidates`` with ``scores``), and the noise family is a short card kept
next to the function reference and checked against samples of the function by the tests.
Notebook 10 shows the table and uses :func:`choose_mechanism`.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from . import bounds, mechanisms
from ._support.gaussian import analytic_sigma, unit_sigma
from ._support.validate import (Delta, Epsilon, Flag, OrNone, PositiveInt, Real, Scores, Sensitivity,
                        Using, checked, valid_delta, valid_epsilon, valid_nonnegative_int,
                        valid_values)

__all__ = ["MechanismCard", "MECHANISMS", "mechanism_table", "noise_std", "choose_mechanism",
           "Recommendation", "count_release_errors", "count_release_error_curves",
           "noisy_argmax_probabilities",
           "classic_gaussian_epsilon_limit", "queries_noise"]


@dataclass(frozen=True)
class MechanismCard:
    """What the code cannot say about itself: the noise family and its scale function.

    ``function`` is the real mechanism; ``noise`` names the scipy.stats family of what is
    added (``None`` when nothing is added to an answer); ``scale`` is the real function
    that computes the noise parameter (b for Laplace, sigma for Gaussian) from
    (sensitivity, epsilon[, delta]); ``formula`` writes that noise in symbols; ``source``
    cites where the mechanism is defined. The tests draw from ``function`` and check
    both ``noise`` and ``scale`` against the samples.
    """

    name: str
    function: Callable
    noise: str | None
    scale: Callable | None
    formula: str
    source: str

    # -- facts read off the function's signature ------------------------------------
    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(inspect.signature(self.function).parameters)

    @property
    def guarantee(self) -> str:
        return "(ε, δ)-DP" if "delta" in self.parameters else "ε-DP"

    @property
    def kind(self) -> str:
        p = self.parameters
        if "value" in p:
            return "output perturbation"
        if "scores" in p:
            return "scoring function"
        if "bits" in p:
            return "input perturbation (local)"
        raise ValueError(f"cannot classify {self.function.__name__} from its parameters {p}")

    @property
    def data_type(self) -> str:
        p = self.parameters
        if "value" in p:
            return "numeric"
        if "candidates" in p:
            return "categorical"
        if "scores" in p:
            return "categorical (an index)"
        if "bits" in p:
            return "binary"
        raise ValueError(f"cannot tell the data type of {self.function.__name__}")

    @property
    def sensitivity(self) -> str:
        p = self.parameters
        if "l2_sensitivity" in p:
            return "L2 norm"
        if "sensitivity" in p:
            return "L1 norm" if self.kind == "output perturbation" else "Δu of the score"
        return "none (each person randomises their own bit)"


    def row(self) -> dict:
        return {"guarantee": self.guarantee, "data type": self.data_type, "kind": self.kind,
                "noise": self.formula, "sensitivity": self.sensitivity,
                "function": f"dp.{self.function.__name__}",
                "noise scale": f"dp.{self.scale.__name__}" if self.scale else "-", "source": self.source}


#: The cards, in the order of seed 002's table; the last two extend it.
MECHANISMS = {
    "Laplace": MechanismCard(
        "Laplace", mechanisms.laplace_mechanism, "laplace", mechanisms.laplace_scale,
        "Lap(Δ₁f/ε)", "Dwork et al. 2006; DR14 Def. 3.3"),
    "Gaussian": MechanismCard(
        "Gaussian", mechanisms.gaussian_mechanism, "norm", mechanisms.gaussian_sigma,
        "N(0, σ²), σ = √(2 ln(1.25/δ))·Δ₂f/ε for ε < 1, or analytic σ",
        "DR14 Thm A.1; Balle & Wang 2018"),
    "Exponential": MechanismCard(
        "Exponential", mechanisms.exponential_mechanism, None, None,
        "none: Pr[r] ∝ exp(ε·u(D, r)/(2Δu))", "McSherry & Talwar 2007; DR14 Def. 3.4"),
    "Report noisy max": MechanismCard(
        "Report noisy max", mechanisms.report_noisy_max, "laplace", None,
        "Lap(2Δu/ε) on every score (Δu/ε if monotone), only the argmax released",
        "DR14 Claim 3.9"),
    "Randomized response": MechanismCard(
        "Randomized response", mechanisms.randomized_response, None, None,
        "none: the true bit is kept with probability e^ε/(1+e^ε)", "Warner 1965; DR14 3.2"),
}

_SEED_ROWS = ("Laplace", "Gaussian", "Exponential")


@checked(extended=Flag())
def mechanism_table(*, extended: bool = False) -> pd.DataFrame:
    """Seed 002's Table 1, one row per mechanism, generated from :data:`MECHANISMS`.

    Columns: guarantee, data type, kind, noise, sensitivity (the seed's five), then
    function, noise scale (the dpteach functions behind the row) and source. With
    ``extended=True`` report noisy max and randomized response are added. Transpose
    (``.T``) for the seed's layout (mechanisms as columns). Notebook 10.
    """
    names = list(MECHANISMS) if extended else list(_SEED_ROWS)
    table = pd.DataFrame([MECHANISMS[n].row() for n in names], index=names)
    table.index.name = "mechanism"
    return table


def _valid_mechanism(mechanism, name):
    if not isinstance(mechanism, str) or mechanism not in ("Laplace", "Gaussian"):
        raise ValueError(f"{name} must be 'Laplace' or 'Gaussian', got {mechanism!r}")
    return mechanism


@checked(mechanism=Using(_valid_mechanism), epsilon=Epsilon(), analytic=Flag(),
         l1_sensitivity=OrNone(Sensitivity()), l2_sensitivity=OrNone(Sensitivity()))
def noise_std(mechanism: str, *, epsilon, l1_sensitivity=None, l2_sensitivity=None,
              delta=0.0, analytic=True) -> float:
    """Standard deviation of the noise on each coordinate of an output-perturbation release.

    Laplace: sqrt(2) * b with b = Delta_1 / epsilon (seed 004: Lap(b) has variance 2 b^2).
    Gaussian: sigma from :func:`dpteach.gaussian_sigma` (analytic by default, so any
    epsilon > 0 works; ``analytic=False`` is the classic formula, epsilon < 1 only).
    """
    delta = valid_delta(delta, required=mechanism == "Gaussian")   # delta > 0 for Gaussian
    if mechanism == "Laplace":
        if l1_sensitivity is None:
            raise ValueError("the Laplace mechanism needs l1_sensitivity")
        return _finite_std(bounds.laplace_std(l1_sensitivity / epsilon), "l1_sensitivity")
    if l2_sensitivity is None:
        raise ValueError("the Gaussian mechanism needs l2_sensitivity")
    # sigma is proportional to the sensitivity: calibrate for 1, then scale
    return _finite_std(l2_sensitivity * _gaussian_unit_sigma(epsilon, delta, analytic),
                       "l2_sensitivity")


def _gaussian_unit_sigma(epsilon, delta, analytic):
    """gaussian_sigma(1, epsilon, delta) for checked floats. The analytic sigma comes
    from the panels' numpy bisection, remembered (:func:`dpteach._support.gaussian.unit_sigma`,
    equal to gaussian_sigma's to 1e-12 for epsilon up to 1e15, tested), so notebook 10's
    first panel imports no scipy.optimize; beyond epsilon = 1e100 it is refused by name."""
    if not analytic:
        return mechanisms.gaussian_sigma(1.0, epsilon, delta)
    if epsilon > 1e100:
        raise ValueError(f"epsilon={epsilon:g} is too large for the analytic Gaussian "
                         "calibration; use epsilon <= 1e100")
    return unit_sigma(epsilon, delta)


def _finite_std(std, name):
    if not np.isfinite(std):
        raise ValueError(f"the noise standard deviation overflows: {name} is too large "
                         "for this epsilon")
    return float(std)


@dataclass(frozen=True)
class Recommendation:
    """The decision guide's answer: which mechanism, why, and the numbers behind it."""

    mechanism: str
    reason: str
    numbers: dict

    def __repr__(self):
        return f"Recommendation({self.mechanism}: {self.reason})"

    def _repr_markdown_(self):
        return f"**{self.mechanism}** — {self.reason}"


_OUTPUTS = ("numeric", "categorical", "binary")


def _valid_output(output, name):
    if output not in _OUTPUTS:
        raise ValueError(f"{name} must be one of {_OUTPUTS}, got {output!r}")
    return output


@checked(output=Using(_valid_output), epsilon=Epsilon(), delta=Delta(), local=Flag(),
         l1_sensitivity=OrNone(Sensitivity(positive=True)),
         l2_sensitivity=OrNone(Sensitivity(positive=True)))
def choose_mechanism(output, *, epsilon, delta=0.0, l1_sensitivity=None, l2_sensitivity=None,
                     local=False) -> Recommendation:
    """A decision guide in the spirit of seed 002, section IV.

    - ``local=True`` with a ``binary`` answer (each person randomises their own yes/no,
      no trusted curator): randomized response.
    - ``categorical`` output (a name, a price, a category): the exponential mechanism, as
      output perturbation cannot add noise to a category (seed 004, "When output
      perturbation doesn't make sense").
    - ``numeric`` output with ``delta == 0``: Laplace, the only pure epsilon-DP choice of
      the two. With ``delta > 0``: whichever of Laplace (sqrt(2) Delta_1/epsilon) and the
      analytic Gaussian (sigma(Delta_2, epsilon, delta)) has the smaller noise standard
      deviation per coordinate; both sensitivities are then required.
    """
    # every sensitivity given is checked (declared), whether or not this output needs it
    if local:
        if output != "binary":
            raise ValueError("local=True is supported for binary answers (randomized response)")
        keep = mechanisms.randomized_response_keep_probability(epsilon)
        return Recommendation("Randomized response",
                              f"each person keeps their true answer with probability "
                              f"{keep:.3f} = e^ε/(1+e^ε), so no curator sees the truth",
                              {"keep_probability": keep})
    if output in ("categorical", "binary"):
        return Recommendation("Exponential",
                              "the answer is a choice, not a number: noise cannot be added to "
                              "it, so score each candidate and sample with exp(ε·u/(2Δu))", {})
    if l1_sensitivity is None:
        raise ValueError("a numeric release needs l1_sensitivity")
    lap = noise_std("Laplace", epsilon=epsilon, l1_sensitivity=l1_sensitivity)
    if delta == 0:
        return Recommendation("Laplace", f"δ = 0 asks for pure ε-DP; Laplace noise std "
                                         f"{lap:.4g} per coordinate", {"Laplace": lap})
    if l2_sensitivity is None:
        raise ValueError("with delta > 0 the comparison needs l2_sensitivity as well")
    gau = noise_std("Gaussian", epsilon=epsilon, l2_sensitivity=l2_sensitivity, delta=delta)
    numbers = {"Laplace": lap, "Gaussian": gau}
    l1, l2 = f"L1 = {l1_sensitivity:.4g}", f"L2 = {l2_sensitivity:.4g}"
    if gau < lap:
        return Recommendation("Gaussian", f"noise std {gau:.4g} (Gaussian, {l2}) "
                                          f"< {lap:.4g} (Laplace, {l1})", numbers)
    return Recommendation("Laplace", f"noise std {lap:.4g} (Laplace, {l1}) "
                                     f"<= {gau:.4g} (Gaussian, {l2})", numbers)


def _valid_laplace_epsilon(epsilon, name):
    """An epsilon whose Laplace scale 1/epsilon is a finite float."""
    epsilon = valid_epsilon(epsilon, name)
    if not np.isfinite(1.0 / epsilon):
        raise ValueError(f"{name}={epsilon!r} is too small: the Laplace scale 1/{name} "
                         "overflows")
    return epsilon


@checked(epsilon=Using(_valid_laplace_epsilon), delta=Delta(required=True), n_max=PositiveInt())
def count_release_errors(epsilon, *, delta=1e-5, count=50, n_max=100) -> dict:
    """Expected absolute error of three ways to release one count in {0, ..., n_max}.

    - Laplace, b = 1/epsilon: E|Lap(b)| = b.
    - Gaussian, analytic sigma at (epsilon, delta) with Delta_2 = 1: E|N(0, sigma^2)| =
      sigma * sqrt(2/pi).
    - Exponential mechanism over the candidates 0..n_max with score -|r - count|
      (Delta_u = 1): sum_r P(r) |r - count|, P from :func:`dpteach.exponential_probabilities`.

    The three are computed exactly (no sampling). Notebook 10's comparison panel.
    """
    count = valid_nonnegative_int(count, "count", maximum=n_max)
    sigma = _gaussian_unit_sigma(epsilon, delta, True)       # remembered; refuses > 1e100
    errors = _count_release_errors(np.array([epsilon]), delta, count, n_max, np.array([sigma]))
    return {name: float(values[0]) for name, values in errors.items()}


def _valid_epsilons(epsilons, name):
    """Epsilons (flattened) each > 0, at most 1e100, with a finite Laplace scale 1/epsilon."""
    eps = valid_values(epsilons, name).ravel()
    if eps.size == 0:
        raise ValueError(f"{name} must not be empty")
    eps = np.array([valid_epsilon(e, name) for e in eps])
    if eps.max() > 1e100 or not np.isfinite(1.0 / eps.min()):
        raise ValueError(f"{name} must be at most 1e100 (the analytic Gaussian calibration) "
                         "and large enough that the Laplace scale 1/epsilon is finite")
    return eps


@checked(epsilons=Using(_valid_epsilons), delta=Delta(required=True), n_max=PositiveInt())
def count_release_error_curves(epsilons, *, delta=1e-5, count=50, n_max=100) -> dict:
    """:func:`count_release_errors` at every epsilon of ``epsilons`` (each at most 1e100,
    and large enough that the Laplace scale 1/epsilon is a finite float): a dict of
    arrays, the Gaussian's analytic sigmas found for all the epsilons at once (one numpy
    bisection). Notebook 10's curves."""
    count = valid_nonnegative_int(count, "count", maximum=n_max)
    return _count_release_errors(epsilons, delta, count, n_max)


def _count_release_errors(epsilons, delta, count, n_max, sigmas=None):
    """The three expected errors over an array of checked epsilons (a dict of arrays; the
    Gaussian's sigmas in one bisection unless given)."""
    distance = np.abs(np.arange(n_max + 1) - count)
    if sigmas is None:
        sigmas = analytic_sigma(epsilons, delta)
    exponential = [mechanisms.exponential_probabilities(-distance, 1.0, e) @ distance
                   for e in epsilons]
    return {"Laplace": 1.0 / epsilons,
            "Gaussian": sigmas * np.sqrt(2 / np.pi),
            "Exponential": np.array(exponential, dtype=float)}


@checked(scores=Scores(), scale=Real(low=0.0, low_open=True))
def noisy_argmax_probabilities(scores, scale) -> np.ndarray:
    """Exact chance that each candidate wins argmax_i (u_i + Lap(scale)), i.i.d. noise.

    P(i wins) = integral over z of lap_pdf(z) * prod_{j != i} lap_cdf(u_i + z - u_j) dz
    (z is candidate i's own noise; ties have probability 0), by adaptive quadrature
    (scipy.integrate.quad) over |z| <= 60 scales, where the mass left out is below
    e^-60, with breakpoints at z = 0, at +-1, 4 and 16 scales and at every kink
    z = u_j - u_i inside: the density's peak is never missed however far apart the
    scores are, so the probabilities sum to 1 (to 1e-12) even when a gap is 10^5 scales.
    ``scale`` is b in score units. This one distribution describes both "release a
    Laplace-noised histogram, then take its largest bar" and report noisy max with scale
    b (DR14 3.3): they are the same mechanism. Notebook 10.
    """
    from scipy import integrate

    u, b = scores, scale
    if not np.isfinite(60 * b) or not np.isfinite(np.ptp(u) / b):
        raise ValueError(f"scale must be between the scores' spread / 1e308 and 1e306, "
                         f"got {b!r}")

    def cdf(z):                                   # Laplace(0, b) distribution function
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0) / b),
                        1 - 0.5 * np.exp(-np.maximum(z, 0) / b))

    window = 60 * b
    steps = np.array([0.0, 1.0, 4.0, 16.0]) * b
    out = np.empty(u.size)
    for i in range(u.size):
        others = np.delete(u, i)
        kinks = others - u[i]
        points = np.unique(np.concatenate([steps, -steps, kinks[np.abs(kinks) < window]]))

        def integrand(z, i=i, others=others):
            return np.exp(-abs(z) / b) / (2 * b) * np.prod(cdf(u[i] + z - others))

        out[i] = integrate.quad(integrand, -window, window, points=points, limit=400,
                                epsabs=1e-13, epsrel=1e-11)[0]
    return out


@checked(delta=Delta(required=True))
def classic_gaussian_epsilon_limit(delta) -> float:
    """The epsilon up to which the classic Gaussian sigma still keeps its delta.

    Carry sigma = sqrt(2 ln(1.25/delta)) * Delta_2 / epsilon [DR14 Theorem A.1, proved
    only for epsilon < 1] past epsilon = 1 and measure the delta it really gives with the
    exact formula of Balle & Wang (2018, Theorem 8), :func:`dpteach.mechanisms.gaussian_delta`.
    sigma / Delta_2 depends on epsilon and delta only, so the answer does not depend on
    Delta_2. The true delta divided by the target grows with epsilon; this returns the
    epsilon where it reaches 1 (brentq on the log of the ratio, xtol 1e-10). Below it the
    extrapolated formula happens to hold, above it the promise is broken. Notebook 08.
    """
    from scipy import optimize

    def log_ratio(eps):
        sigma = np.sqrt(2 * np.log(1.25 / delta)) / eps
        return np.log(mechanisms.gaussian_delta(sigma, 1.0, eps)) - np.log(delta)

    lo, hi = 0.5, 4.0
    while log_ratio(lo) > 0:
        lo /= 2
    while log_ratio(hi) < 0:
        hi *= 2
    return float(optimize.brentq(log_ratio, lo, hi, xtol=1e-10, rtol=1e-14))


def _valid_query_counts(k, name):
    k = valid_values(k, name)
    if (k < 1).any() or (k != np.round(k)).any():
        raise ValueError(f"{name} must hold whole numbers of queries >= 1")
    return k


@checked(k=Using(_valid_query_counts))
def queries_noise(k, epsilon, delta, *, analytic=True):
    """Noise standard deviation per query when k counting queries are released at once.

    One person changes each of the k counts by at most 1, so the L1 sensitivity is k and
    the L2 sensitivity sqrt(k) (seed 002, section IV: 50 queries give 50 and 7.07).
    Laplace: sqrt(2) k / epsilon; Gaussian: sigma(sqrt(k), epsilon, delta). Returns
    (laplace_std, gaussian_std) as arrays over ``k``. Notebooks 08 and 10.
    """
    lap = k * bounds.laplace_std(mechanisms.laplace_scale(1.0, epsilon))
    gau = np.sqrt(k) * mechanisms.gaussian_sigma(1.0, epsilon, delta, analytic=analytic)
    return lap, gau
