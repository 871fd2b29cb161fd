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

import numpy as np
import pandas as pd

from ._checks import check_delta, check_epsilon, check_real, check_rng
from .accounting import PrivacyAccountant

__all__ = ["Curator"]


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

    Every query takes its own ``epsilon`` (keyword) and charges it before any noise is
    drawn; a query that would pass the budget raises
    :class:`~dpteach.accounting.BudgetExceededError` and releases nothing. A query with
    bad arguments (unknown column, ``lower >= upper``, ``epsilon <= 0``) raises
    ValueError or TypeError and charges nothing.

    ``where`` arguments are callables ``where(table) -> boolean mask`` (one entry per
    row), e.g. ``lambda t: t["Gender"] == "F"``; ``None`` selects every row. The callable
    runs on a copy of the private table, so in this teaching model it is trusted code: a
    real curator would accept queries in a restricted language instead.

    >>> import dpteach as dp
    >>> cur = dp.Curator(dp.datasets.sickle_cell(), epsilon=1.0, rng=0)
    >>> noisy = cur.count(lambda t: t["Sickle cell trait"], epsilon=0.5)
    >>> cur.accountant.spent
    (0.5, 0.0)
    """

    def __init__(self, table, epsilon, delta=0.0, *, rng=None):
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
        self._table = table.copy()
        self.accountant = PrivacyAccountant(check_epsilon(epsilon), check_delta(delta))
        self._rng = check_rng(rng)

    # ------------------------------------------------------------------ public info
    @property
    def columns(self) -> list:
        """The column names (public: the schema is not secret)."""
        return list(self._table.columns)

    def __repr__(self):
        s, b = self.accountant.spent, self.accountant.budget
        return (f"Curator({len(self._table.columns)} columns, epsilon spent {s[0]:g} of {b[0]:g}, "
                f"{len(self.accountant.history)} answers)")

    # ------------------------------------------------------------------ queries
    def count(self, where=None, *, epsilon):
        """Noisy count of the rows selected by ``where``: count + Lap(1/epsilon).

        Sensitivity 1: adding or removing one person changes a count by at most 1
        [DR14 Example 3.1; seed 004, "S(counting) = 1"]. Units: people. Costs epsilon.
        """
        eps = check_epsilon(epsilon)
        mask = self._mask(where)
        self.accountant.spend(eps, label="count")
        return float(mask.sum() + self._rng.laplace(0.0, 1.0 / eps))

    def sum(self, column, *, lower, upper, epsilon, where=None):
        """Noisy sum of ``column`` over the selected rows, each value clipped to
        [lower, upper]: sum + Lap(max(|lower|, |upper|) / epsilon).

        Sensitivity max(|lower|, |upper|): adding or removing one person adds or removes
        one clipped value, which lies in [lower, upper] [DR14 3.3]. Units: the column's.
        Costs epsilon.
        """
        eps = check_epsilon(epsilon)
        lo, hi = self._bounds(lower, upper)
        values = self._numeric(column)
        mask = self._mask(where)
        sens = max(abs(lo), abs(hi))
        self.accountant.spend(eps, label=f"sum({column})")
        total = float(np.clip(values[mask], lo, hi).sum())
        return total + float(self._rng.laplace(0.0, sens / eps)) if sens > 0 else total

    def mean(self, column, *, lower, upper, epsilon, where=None):
        """Noisy mean of ``column`` (clipped to [lower, upper]) over the selected rows.

        Spends epsilon/2 on a noisy clipped sum (sensitivity max(|lower|, |upper|)) and
        epsilon/2 on a noisy count (sensitivity 1) and returns their ratio, post-processed
        into [lower, upper] (the count is floored at 1). Post-processing costs no privacy
        [DR14 Prop. 2.1], so the mean costs epsilon in total.
        """
        eps = check_epsilon(epsilon)
        lo, hi = self._bounds(lower, upper)
        values = self._numeric(column)
        mask = self._mask(where)
        sens = max(abs(lo), abs(hi))
        self.accountant.spend(eps, label=f"mean({column})")
        half = eps / 2.0
        total = float(np.clip(values[mask], lo, hi).sum())
        if sens > 0:
            total += float(self._rng.laplace(0.0, sens / half))
        count = float(mask.sum()) + float(self._rng.laplace(0.0, 1.0 / half))
        return float(np.clip(total / max(count, 1.0), lo, hi))

    def histogram(self, column, categories, *, epsilon, where=None):
        """Noisy count per category of ``column``: a pandas Series indexed by category,
        each entry count + Lap(1/epsilon), independently.

        L1 sensitivity 1 under add/remove neighbours: one person sits in one bin
        [DR14 Example 3.2]. (Seed 004's "S(histogram) = 2" counts a *changed* record,
        which leaves one bin and enters another.) Rows whose value is not one of the
        ``categories`` are counted nowhere. Costs epsilon for the whole histogram.
        """
        eps = check_epsilon(epsilon)
        col = self._column(column)
        if isinstance(categories, (str, bytes)) or not hasattr(categories, "__iter__"):
            raise TypeError(f"categories must be a list of values, got {categories!r}")
        cats = list(categories)
        if not cats:
            raise ValueError("categories must not be empty")
        if len(set(cats)) != len(cats):
            raise ValueError(f"categories must be distinct, got {cats!r}")
        mask = self._mask(where)
        self.accountant.spend(eps, label=f"histogram({column})")
        counts = col[mask].value_counts().reindex(cats, fill_value=0).to_numpy(float)
        noisy = counts + self._rng.laplace(0.0, 1.0 / eps, size=len(cats))
        return pd.Series(noisy, index=pd.Index(cats, name=column), name="noisy count")

    # ------------------------------------------------------------------ helpers
    def _column(self, column):
        if column not in self._table.columns:
            raise ValueError(f"column must be one of {list(self._table.columns)}, got {column!r}")
        return self._table[column]

    def _numeric(self, column):
        col = self._column(column)
        if col.dtype.kind not in "iuf":
            raise TypeError(f"column {column!r} must be numeric for a sum or mean, "
                            f"got dtype {col.dtype}")
        values = col.to_numpy(float)
        if np.isnan(values).any():
            raise ValueError(f"column {column!r} contains missing values")
        return values

    @staticmethod
    def _bounds(lower, upper):
        lo = check_real("lower", lower)
        hi = check_real("upper", upper)
        if lo >= hi:
            raise ValueError(f"lower must be < upper, got lower={lo:g}, upper={hi:g}")
        return lo, hi

    def _mask(self, where):
        n = len(self._table)
        if where is None:
            return np.ones(n, dtype=bool)
        if not callable(where):
            raise TypeError("where must be a callable taking the table and returning a boolean "
                            f"mask, or None; got {type(where).__name__}")
        mask = where(self._table.copy())
        mask = mask.to_numpy() if isinstance(mask, pd.Series) else np.asarray(mask)
        if mask.shape != (n,) or mask.dtype.kind != "b":
            raise ValueError(f"where must return a boolean mask with one entry per row ({n}), "
                             f"got dtype {mask.dtype} and shape {mask.shape}")
        return mask
