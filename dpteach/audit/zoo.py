"""A zoo of correct and broken mechanisms to audit (notebook 11, assignment A6).

Each :class:`ZooEntry` of :data:`ZOO` is a mechanism with a privacy claim, a pair of
neighbouring inputs chosen so that a bug shows, and the truth about the claim. The broken
ones sample their noise inline on purpose: each is a specific, named mistake (a scale of
epsilon instead of 1/epsilon, a released maximum instead of its index, a sparse vector
without query noise, ...). :func:`audit_zoo` runs :func:`dpteach.audit.audit` on them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._support.validate import Flag, OrNone, PositiveInt, Rng, Using, checked, valid_positive_int
from .._support.lazy import lazy_module
from .experiment import AuditResult, audit

special = lazy_module("scipy.special")   # imported by the first mechanism that uses it

__all__ = ["ZooEntry", "ZOO", "audit_zoo", "audit_convergence_counts"]

#: confidence level used for zoo verdicts (see ZooEntry.audit)
ZOO_ALPHA = 1e-3


@dataclass
class ZooEntry:
    """A mechanism with a privacy claim, the neighbours that test it, and the truth.

    ``mechanism(data, size, rng)`` as :func:`audit` expects; ``x``, ``y`` the neighbouring
    inputs (chosen so that a bug shows); ``claimed_epsilon`` what its author claims;
    ``private`` whether the claim is true; ``actual_epsilon`` the exact privacy loss on
    (x, y) where known (``inf`` for unbounded); ``n`` the audit size used by default.
    """

    name: str
    description: str
    mechanism: Callable
    x: Any
    y: Any
    claimed_epsilon: float
    private: bool
    actual_epsilon: float | None = None
    n: int = 1_000_000
    source: str = ""

    def audit(self, *, n=None, alpha=ZOO_ALPHA, rng=None) -> AuditResult:
        """Audit this entry on its neighbours, against its claimed epsilon.

        The default alpha is small (1e-3): for a correct mechanism whose best event attains
        exactly its epsilon (Laplace, randomized response), a lower bound at level alpha
        exceeds epsilon -- a false accusation -- with probability up to alpha, so a
        verdict table wants a small alpha. It costs little: at n = 10^6 the bound only
        moves by about 0.01.
        """
        return audit(self.mechanism, self.x, self.y, n=self.n if n is None else n,
                     alpha=alpha, rng=rng, claimed_epsilon=self.claimed_epsilon)


def _laplace_count(epsilon):
    def mech(data, size, rng):
        from ..mechanisms import laplace_mechanism
        return laplace_mechanism(float(np.sum(data)), 1.0, epsilon, rng=rng, size=size)
    return mech


def _laplace_scale_is_epsilon(epsilon):
    def mech(data, size, rng):
        return float(np.sum(data)) + rng.laplace(0.0, epsilon, size=size)   # bug: b = epsilon
    return mech


def _sum_understated(epsilon):
    def mech(data, size, rng):
        total = float(np.sum(np.clip(data, 0, 5)))
        return total + rng.laplace(0.0, 1.0 / epsilon, size=size)   # bug: Delta = 1, not 5
    return mech


def _noisy_max_value(epsilon):
    def mech(data, size, rng):
        scores = np.asarray(data, float)
        noisy = scores + rng.laplace(0.0, 2.0 / epsilon, size=(size, scores.size))
        return noisy.max(axis=1)                                    # bug: releases the value
    return mech


def _noisy_max_index(epsilon):
    def mech(data, size, rng):
        scores = np.asarray(data, float)
        noisy = scores + rng.laplace(0.0, 2.0 / epsilon, size=(size, scores.size))
        return noisy.argmax(axis=1)
    return mech


def _rr(epsilon):
    def mech(data, size, rng):
        from ..mechanisms import randomized_response
        return randomized_response(np.full(size, int(data), dtype=np.int8), epsilon, rng=rng)
    return mech


def _rr_wrong_keep(epsilon):
    def mech(data, size, rng):
        keep = 1 - math.exp(-epsilon) / 2          # bug: the Laplace CDF, not e^eps/(1+e^eps)
        flip = rng.random(size) >= keep
        return np.where(flip, 1 - int(data), int(data)).astype(np.int8)
    return mech


def _svt_no_query_noise(epsilon, threshold):
    def mech(data, size, rng):
        answers = np.asarray(data, float)
        rho = rng.laplace(0.0, 2.0 / epsilon, size=(size, 1))     # eps1 = eps/2 on the threshold
        return answers[None, :] >= threshold + rho                 # bug: no noise on answers
    return mech


def _above_threshold(epsilon, threshold):
    """DR14 Algorithm 1 (AboveThreshold): index of the first answer above the noisy
    threshold (len(answers) if none), rho ~ Lap(2/eps), nu_i ~ Lap(4/eps)."""
    def mech(data, size, rng):
        answers = np.asarray(data, float)
        rho = rng.laplace(0.0, 2.0 / epsilon, size=(size, 1))
        nu = rng.laplace(0.0, 4.0 / epsilon, size=(size, answers.size))
        above = answers[None, :] + nu >= threshold + rho
        return np.where(above.any(axis=1), above.argmax(axis=1), answers.size)
    return mech


def _exponential(epsilon, half=True):
    def mech(data, size, rng):
        scores = np.asarray(data, float)
        if half:
            from ..mechanisms import exponential_mechanism
            return exponential_mechanism(np.arange(scores.size), scores, 1.0, epsilon,
                                         rng=rng, size=size)
        p = special.softmax(epsilon * scores)        # bug: exp(eps u / Delta), no 1/2
        return rng.choice(scores.size, p=p, size=size)
    return mech


def _discrete_laplace(epsilon):
    def mech(data, size, rng):
        from ..discrete import discrete_laplace_mechanism
        return discrete_laplace_mechanism(int(np.sum(data)), 1, epsilon, rng=rng, size=size)
    return mech


def _build_zoo() -> dict:
    records = np.array([1, 0, 1, 1, 0, 0, 0, 1, 0, 1])          # a yes/no column, count 5
    records_plus = np.append(records, 1)                         # add one 'yes' person: 6
    values = np.array([2, 0, 5, 1, 3, 4, 0, 2])                  # a column clipped to [0, 5]
    values_plus = np.append(values, 5)                           # add one person with value 5
    five_counts = np.full(5, 10.0)                               # 5 counts, all 10
    svt_x, svt_y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    k = 100
    exp_x = np.zeros(k)
    exp_x[0] = 1.0                                               # candidate 0 scores 1, others 0
    exp_y = 1.0 - exp_x                                          # every score moves by 1
    ln3 = math.log(3)
    entries = [
        ZooEntry("laplace", "Laplace mechanism on a count: Lap(Δ/ε) with Δ = 1.",
                 _laplace_count(1.0), records, records_plus, 1.0, True, 1.0,
                 source="Dwork & Roth 2014, Def. 3.3"),
        ZooEntry("laplace_scale_is_epsilon",
                 "Laplace noise with scale ε instead of Δ/ε (at ε = 0.25 the noise is 16 times "
                 "too small).",
                 _laplace_scale_is_epsilon(0.25), records, records_plus, 0.25, False, 4.0,
                 source="a classic slip of b = Δ/ε"),
        ZooEntry("sum_sensitivity_understated",
                 "A sum of values clipped to [0, 5] released with Lap(1/ε): the sensitivity is "
                 "5, not 1, so adding one person with value 5 costs 5ε.",
                 _sum_understated(1.0), values, values_plus, 1.0, False, 5.0,
                 source="Dwork & Roth 2014, Def. 3.1 (L1 sensitivity)"),
        ZooEntry("noisy_max_releases_value",
                 "Report noisy max with Lap(2Δ/ε) that publishes the winning noisy VALUE, not "
                 "just its index. Five counts that one new person raises together shift the "
                 "maximum's lower tail by e^(5ε/2).",
                 _noisy_max_value(1.0), five_counts, five_counts + 1, 1.0, False, 2.5,
                 source="Ding et al. 2018 (CCS), incorrect noisy max variant"),
        ZooEntry("report_noisy_max",
                 "Report noisy max with Lap(2Δ/ε) publishing only the index.",
                 _noisy_max_index(1.0), np.array([10.0, 9, 10, 8, 10]),
                 np.array([10.0, 10, 10, 8, 10]), 1.0, True, None,
                 source="Dwork & Roth 2014, Claim 3.9"),
        ZooEntry("randomized_response",
                 "Randomized response keeping the true bit with probability e^ε/(1+e^ε), "
                 "ε = ln 3 (keep 3/4).",
                 _rr(ln3), 1, 0, ln3, True, ln3, source="Warner 1965; Dwork & Roth 2014, 3.2"),
        ZooEntry("randomized_response_wrong_keep",
                 "Randomized response whose keep probability uses the Laplace CDF formula "
                 "1 − e^(−ε)/2 instead of e^ε/(1+e^ε): at ε = ln 3 it keeps the bit with "
                 "probability 5/6, which is ε = ln 5.",
                 _rr_wrong_keep(ln3), 1, 0, ln3, False, math.log(5),
                 source="Dwork & Roth 2014, 3.2"),
        ZooEntry("sparse_vector_no_query_noise",
                 "Sparse vector variant with noise on the threshold only (ρ ~ Lap(2Δ/ε)) and "
                 "none on the answers, answering every query. Answers (1, 0) on x and (0, 1) "
                 "on y with threshold 0.5: the pattern (above, below) is possible on x and "
                 "impossible on y, so no finite ε holds.",
                 _svt_no_query_noise(1.0, 0.5), svt_x, svt_y, 1.0, False, math.inf,
                 n=300_000,
                 source="Lyu, Su & Li 2017 (PVLDB), Algorithm 5 (after Stoddard et al. 2014)"),
        ZooEntry("sparse_vector",
                 "AboveThreshold: ρ ~ Lap(2Δ/ε) on the threshold, ν_i ~ Lap(4Δ/ε) on each "
                 "answer, stop at the first answer above.",
                 _above_threshold(1.0, 0.5), svt_x, svt_y, 1.0, True, None, n=300_000,
                 source="Dwork & Roth 2014, Algorithm 1; Lyu, Su & Li 2017, Algorithm 1"),
        ZooEntry("exponential",
                 f"Exponential mechanism P(r) ∝ exp(ε u(r) / 2Δ) over {k} candidates.",
                 _exponential(1.0, half=True), exp_x, exp_y, 1.0, True,
                 math.log(math.exp(0.5) * (1 + (k - 1) * math.exp(0.5)) / (math.exp(0.5) + k - 1)),
                 source="McSherry & Talwar 2007; Dwork & Roth 2014, Theorem 3.10"),
        ZooEntry("exponential_without_half",
                 f"Exponential mechanism without the 1/2, P(r) ∝ exp(ε u(r) / Δ), claimed "
                 f"ε-DP (seed 000's form). Over {k} candidates, when candidate 0 gains a point "
                 "and every other loses one, its probability changes by almost e^(2ε).",
                 _exponential(1.0, half=False), exp_x, exp_y, 1.0, False,
                 math.log(math.e * (1 + (k - 1) * math.e) / (math.e + k - 1)),
                 source="McSherry & Talwar 2007; seed 000"),
        ZooEntry("discrete_laplace",
                 "Discrete Laplace on a count, P(k) ∝ exp(−ε|k|/Δ), sampled exactly with "
                 "integers (Canonne, Kamath & Steinke 2020).",
                 _discrete_laplace(1.0), records, records_plus, 1.0, True, 1.0, n=300_000,
                 source="Canonne, Kamath & Steinke 2020, Algorithm 2"),
    ]
    return {e.name: e for e in entries}


#: name -> ZooEntry: correct mechanisms and classic broken ones (see notebook 11).
ZOO: dict[str, ZooEntry] = _build_zoo()


def _valid_entries(names, name):
    """A list (not a string) of names of :data:`ZOO` entries, as a list."""
    if isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):
        raise TypeError(f"{name} must be a list of zoo entries, got {names!r}")
    names = list(names)
    for entry in names:
        if entry not in ZOO:
            raise ValueError(f"{name} must be zoo entries {sorted(ZOO)}, got {entry!r}")
    return names


def _valid_grid(grid, name):
    """Increasing run counts >= 1 (at most 10^7), as an int array."""
    grid = np.array([valid_positive_int(g, name, maximum=10**7) for g in np.ravel(grid)],
                    dtype=int)
    if len(grid) == 0 or (np.diff(grid) <= 0).any():
        raise ValueError(f"{name} must be increasing run counts >= 1")
    return grid


def _valid_zoo_names(names, name):
    """Names of :data:`ZOO` entries (not one string), returned as given."""
    try:
        unknown = [entry for entry in names if entry not in ZOO]
    except TypeError:                # not iterable (None, a number)
        raise TypeError(f"{name} must be a list of ZOO entries, got {names!r}") from None
    if unknown or isinstance(names, str):
        raise ValueError(f"{name} must be a list of ZOO entries, got {names!r}")
    return names


@checked(rng=Rng(), names=OrNone(Using(_valid_entries)), progress=Flag())
def audit_zoo(names=None, *, n=None, alpha=None, rng=None, progress=False):
    """Audit zoo entries and return a pandas DataFrame of verdicts, one row per entry.

    Columns: mechanism, claimed ε, ε lower bound, true loss on (x, y) (NaN when not worked
    out), verdict, truly private, event, seconds.
    ``alpha`` defaults to :data:`ZOO_ALPHA` (1e-3); ``n`` to each entry's own ``.n``;
    ``progress=True`` shows a progress bar (for notebooks).
    """
    import pandas as pd

    alpha = ZOO_ALPHA if alpha is None else alpha
    names = list(ZOO) if names is None else names
    if progress:
        from ..notebook import progress as _progress
        names = _progress(names, desc="auditing the zoo")
    rows = []
    for name in names:
        entry = ZOO[name]
        res = entry.audit(n=n, alpha=alpha, rng=rng)
        rows.append({"mechanism": name, "claimed ε": round(entry.claimed_epsilon, 3),
                     "ε lower bound": round(res.epsilon_lb, 3),
                     "true loss on (x, y)": (float("nan") if entry.actual_epsilon is None
                                             else round(entry.actual_epsilon, 3)),
                     "verdict": "REFUTED" if res.refuted else "no violation found",
                     "truly private": entry.private, "event": str(res.event),
                     "seconds": round(res.seconds, 2)})
    return pd.DataFrame(rows).set_index("mechanism")


@checked(grid=Using(_valid_grid), n_select=PositiveInt(maximum=10**7),
         names=Using(_valid_zoo_names), rng=Rng())
def audit_convergence_counts(names, grid, *, n_select=5_000, rng=None):
    """For each zoo entry: choose the event with :func:`dpteach.audit.audit` on
    ``n_select`` runs, then run the mechanism max(grid) more times on x and on y and
    record how often the event happened among the first n counting runs, for every n in
    ``grid`` (increasing run counts). Notebook 11's convergence panel draws
    :func:`epsilon_interval` from these counts.
    Returns name -> dict(event, numerator, grid, count_num, count_den)."""
    n_max = int(grid[-1])
    table = {}
    for name in names:
        entry = ZOO[name]
        chosen = audit(entry.mechanism, entry.x, entry.y, n=2 * n_select,
                              select_fraction=0.5, rng=rng)
        ev = chosen.event
        hit_x = ev.contains(np.asarray(entry.mechanism(entry.x, n_max, rng)))
        hit_y = ev.contains(np.asarray(entry.mechanism(entry.y, n_max, rng)))
        cx, cy = np.cumsum(hit_x)[grid - 1], np.cumsum(hit_y)[grid - 1]
        num, den = (cx, cy) if chosen.numerator == "x" else (cy, cx)
        table[name] = {"event": ev, "numerator": chosen.numerator, "grid": grid,
                       "count_num": num, "count_den": den}
    return table
