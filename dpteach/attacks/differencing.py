"""Differencing: two innocent-looking aggregate answers whose difference is one person.

"Only answer queries about large sets" does not protect anyone: the set of everybody and
the set of everybody except X are both large, and their counts differ exactly by X's
bit. Seed 004 gives two examples, the sickle-cell counts and the blood-sugar averages;
this module turns them into functions that take answers and return the target's value.
Against a :class:`~dpteach.curator.Curator` the same arithmetic returns X's bit plus the
difference of two Laplace noises, which hides it. Taught in notebook 02.
"""

from __future__ import annotations

import numpy as np

from .._support.tables import row_mask
from .._support.validate import (OrNone, PositiveInt, Real, Rng, Using, Values, checked,
                                 describe)

__all__ = ["difference_of_counts", "difference_of_means", "sickle_cell_queries",
           "exact_count", "exact_mean", "perturb_records", "blood_sugar_differencing",
           "difference_noise_pdf"]


@checked(count_all=Real(), count_without_target=Real())
def difference_of_counts(count_all, count_without_target) -> float:
    """The target's contribution to a count: count(everyone) - count(everyone but X).

    With exact answers this is X's bit (seed 004: "how many have the sickle cell trait"
    minus "how many, not named X, have it"). With a Curator's answers at epsilon each
    it is X's bit + Lap(1/epsilon) - Lap(1/epsilon), see :func:`difference_noise_pdf`.
    """
    return count_all - count_without_target


@checked(mean_all=Real(), mean_rest=Real(), n_all=PositiveInt(maximum=2 ** 53),
         n_rest=PositiveInt(maximum=2 ** 53))
def difference_of_means(mean_all, n_all, mean_rest, n_rest) -> float:
    """The left-out person's value: n_all * mean_all - n_rest * mean_rest.

    The sums behind two averages differ by exactly the people in one group and not the
    other; with one person left out, the difference is that person's value. Seed 004:
    5 * 5.58 - 4 * 5.50 = 5.9, Bob's blood sugar (mmol/L).
    """
    if n_rest >= n_all:
        raise ValueError(f"n_rest must be smaller than n_all, got n_rest={n_rest}, n_all={n_all}")
    return n_all * mean_all - n_rest * mean_rest


def _valid_target(target, name):
    if not isinstance(target, str):
        raise TypeError(f"{name} must be a name (str), got {target!r}")
    return target


@checked(target=Using(_valid_target))
def sickle_cell_queries(target="X", *, column="Sickle cell trait", name_column="Name"):
    """Seed 004's two counting queries as ``where`` callables (table -> boolean mask):
    everyone with the trait, and everyone with the trait who is not named ``target``.
    Pass them to :func:`exact_count` or to :meth:`dpteach.Curator.count`."""

    def with_trait(table):
        return table[column].astype(bool)

    def with_trait_not_target(table):
        return table[column].astype(bool) & (table[name_column] != target)

    with_trait.__name__ = "has_trait"
    with_trait_not_target.__name__ = f"has_trait_and_not_{target}"
    return with_trait, with_trait_not_target


def exact_count(table, where=None) -> int:
    """The true number of rows selected by ``where`` (what an unprotected server says)."""
    return int(row_mask(table, where).sum())


def exact_mean(table, column, where=None) -> float:
    """The true mean of ``column`` over the rows selected by ``where``."""
    if column not in table.columns:
        raise ValueError(f"column must be one of {list(table.columns)}, got {column!r}")
    mask = row_mask(table, where)
    if not mask.any():
        raise ValueError("where selects no rows; the mean is undefined")
    return float(table.loc[mask, column].astype(float).mean())


@checked(values=Values(), bound=Real(low=0.0, high=1e300), rng=Rng(),
         size=OrNone(PositiveInt()))
def perturb_records(values, bound, *, rng=None, size=None):
    """Input perturbation: each value plus independent uniform(-bound, bound) noise.

    This is seed 004's "add some noise of unif(-2, 2)" to every record before averaging.
    Bounded noise is *not* differential privacy (an output more than ``bound`` away from
    one input's possible results rules that input out), and each new query perturbs the
    records afresh, so repeated or differenced queries still leak (notebook 02).
    ``size`` draws that many independent perturbed copies (shape size + shape(values)).
    """
    shape = values.shape if size is None else (size,) + values.shape
    return values + rng.uniform(-bound, bound, size=shape)


def _valid_blood_sugar_table(table, name):
    if not hasattr(table, "columns"):
        raise TypeError(f"{name} must be a pandas DataFrame, got {describe(table)}")
    for col in ("Gender", "Blood sugar"):
        if col not in table.columns:
            raise ValueError(f"{name} must have a {col!r} column")
    return table


@checked(table=OrNone(Using(_valid_blood_sugar_table)), rng=Rng(), size=OrNone(PositiveInt()))
def blood_sugar_differencing(table=None, *, bound=2.0, rng=None, size=None):
    """Seed 004's averages attack on Bob, with the records perturbed by U(-bound, bound)
    afresh for each of the two queries (as the seed's two noisy tables are).

    Returns Bob's estimate 5 * mean(all noisy) - 4 * mean(female noisy), a float, or an
    array of ``size`` independent repetitions. The error is Bob's own noise plus the
    difference of the four women's two noises: its variance is 9 * bound^2 / 3
    (3 * bound^2 for bound = 2 gives a standard deviation of about 3.46 mmol/L).
    ``bound=0`` gives the exact 5.9.
    """
    from ..datasets import blood_sugar

    table = blood_sugar() if table is None else table
    values = table["Blood sugar"].to_numpy(float)
    female = (table["Gender"] == "F").to_numpy()
    reps = 1 if size is None else size
    first = perturb_records(values, bound, rng=rng, size=reps)
    second = perturb_records(values[female], bound, rng=rng, size=reps)
    est = values.size * first.mean(axis=1) - female.sum() * second.mean(axis=1)
    return float(est[0]) if size is None else est


@checked(z=Values(), scale=Real(low=0.0, low_open=True))
def difference_noise_pdf(z, scale):
    """Density of L1 - L2 for independent L1, L2 ~ Lap(scale):
    f(z) = (1 + |z|/b) exp(-|z|/b) / (4 b).

    The noise left after differencing two Laplace answers (notebook 02). Its log-ratio
    between the worlds "X has the trait" and "X has not" is at most 2/b: two queries at
    epsilon each cost 2 epsilon, as composition says."""
    t = np.abs(z) / scale
    out = (1.0 + t) * np.exp(-t) / (4.0 * scale)
    return out.item() if out.ndim == 0 else out
