"""Averaging: fresh noise on every answer averages away.

A server that adds independent Lap(b) noise to each answer of the same query lets the
attacker ask k times and average: the mean has standard deviation sqrt(2) b / sqrt(k)
(Lap(b) has variance 2 b^2), so the truth emerges as k grows (seed 004). Caching the
answer per query text does not help, because the same question can be phrased in
endlessly many ways. A budgeted :class:`~dpteach.curator.Curator` stops the attack:
by composition k answers at epsilon each cost k epsilon, and it refuses once the budget
is spent. Taught in notebook 02.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._support.validate import (PositiveInt, Real, Size, Using, checked, valid_real, valid_rng,
                                 valid_values)
from ..accounting import BudgetExceededError
from ..bounds import laplace_std

__all__ = ["averaging_attack", "averaging_error", "collect_releases", "NaiveNoisyServer",
           "CachingNoisyServer", "equivalent_phrasings"]


def _valid_release(release, name):
    if not callable(release):
        raise TypeError(f"{name} must be a callable returning one noisy answer, got {release!r}")
    return release


@checked(release=Using(_valid_release), k=PositiveInt(maximum=10 ** 7))
def averaging_attack(release, k) -> float:
    """The mean of k fresh releases of one query: ``release()`` is called k times.

    ``release`` is a callable with no arguments returning one noisy answer, e.g.
    ``lambda: server.count(where)`` or ``lambda: curator.count(where, epsilon=0.1)``.
    A Curator raises BudgetExceededError once its budget is spent, and so does this
    attack (nothing is averaged past the budget; use :func:`collect_releases` to keep
    what was released before the refusal).
    """
    total = 0.0
    for _ in range(k):
        total += valid_real(release(), "release()")
    return total / k


@checked(release=Using(_valid_release), k=PositiveInt(maximum=10 ** 7))
def collect_releases(release, k):
    """Ask ``release()`` up to k times; stop at the first BudgetExceededError.

    Returns (answers as a float array, number of refused requests)."""
    answers = []
    for i in range(k):
        try:
            answers.append(valid_real(release(), "release()"))
        except BudgetExceededError:
            return np.array(answers, dtype=float), k - i
    return np.array(answers, dtype=float), 0


def _valid_ks(k, name):
    kk = valid_values(k, name)
    if (kk < 1).any() or (kk != np.round(kk)).any():
        raise ValueError(f"{name} must contain whole numbers >= 1")
    return kk


@checked(scale=Real(low=0.0), k=Using(_valid_ks))
def averaging_error(scale, k):
    """Standard deviation of the mean of k independent Lap(scale) noises:
    sqrt(2) * scale / sqrt(k), in the query's units. Vectorised over k."""
    out = laplace_std(scale) / np.sqrt(k)
    return out.item() if out.ndim == 0 else out


def _valid_where(where, name):
    if not callable(where):
        raise TypeError(f"{name} must be a callable taking the table and returning a mask")
    return where


class NaiveNoisyServer:
    """The naive defence: every answer is the true count plus fresh Lap(scale) noise.

    ``count(where, size=None)`` with ``where(table) -> boolean mask``; no budget, no
    memory. ``.answers_given`` counts the answers. Averaging k answers defeats it."""

    def __init__(self, table, scale, *, rng=None):
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
        self._table = table.copy()
        self.scale = valid_real(scale, "scale", low=0.0)
        self._rng = valid_rng(rng)
        self.answers_given = 0

    def _count(self, where):
        mask = np.asarray(where(self._table))
        if mask.shape != (len(self._table),) or mask.dtype.kind != "b":
            raise ValueError("where must return a boolean mask with one entry per row")
        return int(mask.sum())

    @checked(where=Using(_valid_where), size=Size())
    def count(self, where, *, size=None):
        """The true count plus fresh Lap(scale) noise; ``size`` (numpy convention) gives
        that many independent answers at once, as if asked that many times."""
        return self._release(self._count(where), size)

    def _release(self, true, size=None):
        # the naive defence's own sampler (the point of this class): fresh Lap(scale)
        # noise on every request, nothing remembered, nothing charged
        if size is None:
            self.answers_given += 1
            return true + float(self._rng.laplace(0.0, self.scale))
        noise = self._rng.laplace(0.0, self.scale, size=size)
        self.answers_given += int(noise.size)
        return true + noise


def _valid_expression(expression, name):
    if not isinstance(expression, str):
        raise TypeError(f"{name} must be a pandas query string, got {expression!r}")
    return expression


class CachingNoisyServer(NaiveNoisyServer):
    """A server that remembers each query *text* and repeats its first noisy answer.

    ``count(expression)`` takes a pandas query string (``table.query(expression)``).
    Asking the same string again gives the same answer, but a differently written,
    equivalent string (see :func:`equivalent_phrasings`) gets fresh noise, so the
    averaging attack still works: deciding whether two queries are equivalent is
    hopeless in general (undecidable for rich query languages; seed 004)."""

    def __init__(self, table, scale, *, rng=None):
        super().__init__(table, scale, rng=rng)
        self._cache: dict[str, float] = {}

    @checked(expression=Using(_valid_expression))
    def count(self, expression):
        """The count of ``table.query(expression)`` plus Lap(scale) noise, drawn the first
        time this text is asked and repeated for the same text afterwards."""
        if expression not in self._cache:                # the naive server's answer, kept
            self._cache[expression] = self._release(len(self._table.query(expression)))
        return self._cache[expression]


def _valid_column_name(column, name):
    if not isinstance(column, str):
        raise TypeError(f"{name} must be a column name (str), got {column!r}")
    return column


@checked(column=Using(_valid_column_name), threshold=Real(), k=PositiveInt(maximum=10 ** 7))
def equivalent_phrasings(column, threshold, k):
    """k different pandas query strings that all select ``column > threshold``:
    "`c` > t", "`c` - 1 > t - 1", "`c` + 2 > t + 2", ... (integer shifts).
    Each is a new query to a cache keyed by text, yet all have the same answer."""
    out = [f"`{column}` > {threshold!r}"]
    for i in range(1, k):
        shift = (i + 1) // 2 * (1 if i % 2 else -1)
        op = "+" if shift > 0 else "-"
        out.append(f"`{column}` {op} {abs(shift)} > {threshold!r} {op} {abs(shift)}")
    return out
