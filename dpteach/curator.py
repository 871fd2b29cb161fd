"""A curator: a private table that answers noisy queries and refuses past its budget.

The analyst never sees the table. Every answer is the true answer plus Laplace noise
calibrated to the query's sensitivity under add/remove neighbours (two tables are
neighbours when one has one record more than the other) [DR14 3.3], and each answer
charges its epsilon to a :class:`~dpteach.accounting.PrivacyAccountant`. By basic
composition [DR14 Theorem 3.16] the answers together are (budget)-DP, so an attacker who
repeats a query to average the noise away (notebook 02) or asks thousands of subset
queries to reconstruct the table (notebook 03) is refused once the budget is spent.

Taught in notebooks 02 and 03.
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd

from ._support.validate import (Epsilon, OrNone, Real, Using, checked, valid_delta, valid_epsilon,
                                valid_rng)
from .accounting import PrivacyAccountant
from .clipping import clipped_mean_ratio
from .mechanisms import laplace_mechanism

__all__ = ["Curator"]


# checks of query arguments that do not depend on the data
def _valid_where(where, name):
    if not callable(where):
        raise TypeError(f"{name} must be a callable taking the table and returning a boolean "
                        f"mask, or None; got {type(where).__name__}")
    return where


def _valid_categories(categories, name):
    """Distinct hashable values, as a list."""
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__iter__"):
        raise TypeError(f"{name} must be a list of values, got {categories!r}")
    cats = list(categories)
    if not cats:
        raise ValueError(f"{name} must not be empty")
    try:
        distinct = len(set(cats)) == len(cats)
    except TypeError:
        raise TypeError(f"{name} must be hashable values, got {cats!r}") from None
    if not distinct:
        raise ValueError(f"{name} must be distinct, got {cats!r}")
    return cats


class Curator:
    """A private pandas table answering epsilon-DP queries under a total budget.

    Parameters
    ----------
    table : pandas.DataFrame
        The private data (copied; the curator never hands it out).
    epsilon, delta : float
        The total budget, enforced by ``.accountant`` (basic composition).
    rng : numpy.random.Generator, int or None
        Source of the noise.

    Every query takes its own ``epsilon`` (keyword). A query that would pass the budget
    raises :class:`~dpteach.accounting.BudgetExceededError` and releases nothing.

    When a query is charged -- the rule that leaks nothing for free:

    * Arguments that do not depend on the data (``epsilon``, a column name, ``lower`` and
      ``upper``, ``categories``, whether ``where`` is callable) are checked first; a bad
      one raises ValueError or TypeError and charges nothing, since refusing it tells the
      analyst nothing about the table (the column names are public).
    * Then the query's epsilon is charged, *before* any code looks at the private rows.
    * Then ``where`` runs and the answer is computed. If ``where`` raises, returns a
      malformed mask, or the selected column holds missing values, the query is refused
      with an error **and the charge stands**: the refusal itself depends on the data, so
      a free refusal would be a free answer to the question "does the data make this
      fail?" (e.g. a ``where`` that returns a bad mask only when someone's income passes
      a threshold).

    ``where`` arguments are callables ``where(table) -> boolean mask`` (one entry per
    row), e.g. ``lambda t: t["Gender"] == "F"``; ``None`` selects every row.

    Queries are thread-safe: each one checks the budget, charges it, runs ``where`` and
    draws its noise under one lock, so threads querying at the same time never pass the
    budget together.

    What this protects, and what it cannot (a Python object is not a security boundary):
    it guards an analyst who uses only the public API -- ``count``, ``sum``, ``mean``,
    ``histogram``, ``columns``, the read-only ``accountant`` property (assigning to it
    raises AttributeError) and ``charges``, a tuple copy of every (epsilon, delta, label)
    this curator charged. It cannot stop code in the same process from reading the
    private attribute ``_table``, replacing ``_accountant`` or ``_charges``, patching the
    class, or a ``where`` callable that saves the copy of the table it is given (it is
    charged first, but the release is then no longer epsilon-DP) or that leaks through
    timing. ``where`` is therefore trusted code in this teaching model; a real curator
    runs in another process and accepts queries in a restricted language.

    >>> import dpteach as dp
    >>> cur = dp.Curator(dp.datasets.sickle_cell(), epsilon=1.0, rng=0)
    >>> noisy = cur.count(lambda t: t["Sickle cell trait"], epsilon=0.5)
    >>> cur.accountant.spent
    (0.5, 0.0)
    >>> cur.charges
    ((0.5, 0.0, 'count'),)
    """

    def __init__(self, table, epsilon, delta=0.0, *, rng=None):
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
        self._table = table.copy()
        self._accountant = PrivacyAccountant(valid_epsilon(epsilon), valid_delta(delta))
        self._rng = valid_rng(rng)
        self._charges: list[tuple] = []
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ public info
    @property
    def accountant(self) -> PrivacyAccountant:
        """The :class:`~dpteach.accounting.PrivacyAccountant` charged by every query
        (read-only: assigning another accountant raises AttributeError)."""
        return self._accountant

    @property
    def charges(self) -> tuple:
        """Every charge this curator made, in order, as a tuple of
        ``(epsilon, delta, label)`` (a copy: changing it changes nothing). Charges made
        directly on ``.accountant`` by other code are not listed here."""
        with self._lock:
            return tuple(self._charges)

    @property
    def columns(self) -> list:
        """The column names (public: the schema is not secret)."""
        return list(self._table.columns)

    def __repr__(self):
        s, b = self._accountant.spent, self._accountant.budget
        return (f"Curator({len(self._table.columns)} columns, epsilon spent {s[0]:g} of {b[0]:g}, "
                f"{len(self.charges)} answers)")

    # ------------------------------------------------------------------ queries
    @checked(epsilon=Epsilon(), where=OrNone(Using(_valid_where)))
    def count(self, where=None, *, epsilon):
        """Noisy count of the rows selected by ``where``: count + Lap(1/epsilon).

        Sensitivity 1: adding or removing one person changes a count by at most 1
        [DR14 Example 3.1; seed 004, "S(counting) = 1"]. Units: people. Costs epsilon.
        """
        _noise_scale(1.0, epsilon)                 # refuse an epsilon too small, before charging
        with self._lock:
            self._charge(epsilon, "count")
            mask = self._mask(where, epsilon)
            return float(laplace_mechanism(float(mask.sum()), 1.0, epsilon, rng=self._rng))

    @checked(epsilon=Epsilon(), lower=Real(), upper=Real(), where=OrNone(Using(_valid_where)))
    def sum(self, column, *, lower, upper, epsilon, where=None):
        """Noisy sum of ``column`` over the selected rows, each value clipped to
        [lower, upper]: sum + Lap(max(|lower|, |upper|) / epsilon).

        Sensitivity max(|lower|, |upper|): adding or removing one person adds or removes
        one clipped value, which lies in [lower, upper] [DR14 3.3]. Units: the column's.
        Costs epsilon.
        """
        sens = self._clip_args(column, lower, upper)
        _noise_scale(sens, epsilon)
        with self._lock:
            self._charge(epsilon, f"sum({column})")
            total, _ = self._clipped_sum(column, lower, upper, where, epsilon)
            return float(laplace_mechanism(total, sens, epsilon, rng=self._rng))  # sens 0: no noise

    @checked(epsilon=Epsilon(), lower=Real(), upper=Real(), where=OrNone(Using(_valid_where)))
    def mean(self, column, *, lower, upper, epsilon, where=None):
        """Noisy mean of ``column`` (clipped to [lower, upper]) over the selected rows.

        Spends epsilon/2 on a noisy clipped sum (sensitivity max(|lower|, |upper|)) and
        epsilon/2 on a noisy count (sensitivity 1) and returns their ratio, post-processed
        into [lower, upper] (the count is floored at 1). Post-processing costs no privacy
        [DR14 Prop. 2.1], so the mean costs epsilon in total.
        """
        sens = self._clip_args(column, lower, upper)
        half = epsilon / 2.0
        _noise_scale(sens, half, "epsilon / 2")
        _noise_scale(1.0, half, "epsilon / 2")
        with self._lock:
            self._charge(epsilon, f"mean({column})")
            total, mask = self._clipped_sum(column, lower, upper, where, epsilon)
            total = float(laplace_mechanism(total, sens, half, rng=self._rng))
            count = float(laplace_mechanism(float(mask.sum()), 1.0, half, rng=self._rng))
            return float(clipped_mean_ratio(total, count, lower, upper))      # notebook 14's step

    @checked(epsilon=Epsilon(), categories=Using(_valid_categories),
             where=OrNone(Using(_valid_where)))
    def histogram(self, column, categories, *, epsilon, where=None):
        """Noisy count per category of ``column``: a pandas Series indexed by category,
        each entry count + Lap(1/epsilon), independently.

        L1 sensitivity 1 under add/remove neighbours: one person sits in one bin
        [DR14 Example 3.2]. (Seed 004's "S(histogram) = 2" counts a *changed* record,
        which leaves one bin and enters another.) Rows whose value is not one of the
        ``categories`` are counted nowhere. Costs epsilon for the whole histogram.
        """
        _noise_scale(1.0, epsilon)
        self._valid_column(column)
        with self._lock:
            self._charge(epsilon, f"histogram({column})")
            mask = self._mask(where, epsilon)
            col = self._table[column]
            counts = col[mask].value_counts().reindex(categories, fill_value=0).to_numpy(float)
            noisy = laplace_mechanism(counts, 1.0, epsilon, rng=self._rng)
            return pd.Series(noisy, index=pd.Index(categories, name=column), name="noisy count")

    # ------------------------------------------------------------------ helpers
    def _charge(self, eps, label):
        """Charge the accountant (raises BudgetExceededError, charging nothing, when it
        would pass the budget) and record the charge. Called with the lock held."""
        self._accountant.spend(eps, label=label)
        self._charges.append((eps, 0.0, label))

    # checks that do not look at the private rows (run before the charge)
    def _valid_column(self, column):
        try:
            known = column in self._table.columns
        except TypeError:   # an unhashable column name
            known = False
        if not known:
            raise ValueError(f"column must be one of {list(self._table.columns)}, got {column!r}")

    def _valid_numeric(self, column):
        self._valid_column(column)
        dtype = self._table[column].dtype
        if dtype.kind not in "iuf":
            raise TypeError(f"column {column!r} must be numeric for a sum or mean, "
                            f"got dtype {dtype}")

    def _clip_args(self, column, lower, upper):
        """The clipped sum's sensitivity max(|lower|, |upper|) [DR14 3.3], for sum and mean,
        after checking that lower < upper and that ``column`` is a numeric column."""
        if lower >= upper:
            raise ValueError(f"lower must be < upper, got lower={lower:g}, upper={upper:g}")
        self._valid_numeric(column)
        return max(abs(lower), abs(upper))

    # steps that look at the private rows (run after the charge; a failure keeps it)
    def _values(self, column, eps):
        values = self._table[column].to_numpy(float)
        if np.isnan(values).any():
            raise ValueError(f"column {column!r} contains missing values; the query was "
                             f"refused after looking at the data, so epsilon={eps:g} stays "
                             "charged")
        return values

    def _clipped_sum(self, column, lo, hi, where, eps):
        """The exact sum of ``column`` clipped to [lo, hi] over the rows ``where`` selects,
        and that mask (for sum and mean). Called with the lock held, after the charge."""
        values = self._values(column, eps)
        mask = self._mask(where, eps)
        return float(np.clip(values[mask], lo, hi).sum()), mask

    def _mask(self, where, eps):
        n = len(self._table)
        if where is None:
            return np.ones(n, dtype=bool)
        charged = (f"where ran on the private data, so epsilon={eps:g} stays charged "
                   "(see the Curator docstring)")
        try:
            mask = where(self._table.copy())
            mask = mask.to_numpy() if isinstance(mask, pd.Series) else np.asarray(mask)
        except Exception as exc:
            _add_note(exc, charged)
            raise
        if mask.shape != (n,) or mask.dtype.kind != "b":
            raise ValueError(f"where must return a boolean mask with one entry per row ({n}), "
                             f"got dtype {mask.dtype} and shape {mask.shape}; {charged}")
        return mask


def _add_note(exc, note):
    """PEP 678 note on the student's own error (Python 3.10 has no add_note: the same
    ``__notes__`` list is set by hand, where PEP 678-aware tools look for it)."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10
        exc.__notes__ = [*getattr(exc, "__notes__", []), note]


def _noise_scale(sensitivity, eps, name="epsilon"):
    """sensitivity / eps, refused (before anything is charged) when it is not a finite
    number: an epsilon such as 5e-324 would give infinite noise, or none at all."""
    scale = sensitivity / eps if eps > 0 else float("inf")
    if not np.isfinite(scale):
        raise ValueError(f"epsilon is too small: the noise scale sensitivity / ({name}) = "
                         f"{sensitivity:g} / {eps:g} is not a finite number; use a larger "
                         "epsilon (or smaller bounds lower, upper)")
    return scale
