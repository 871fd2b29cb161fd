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
from .._support.validate import valid_positive_int, valid_real, valid_rng, valid_values

__all__ = ["difference_of_counts", "difference_of_means", "sickle_cell_queries",
           "exact_count", "exact_mean", "perturb_records", "blood_sugar_differencing",
           "difference_noise_pdf"]


def difference_of_counts(count_all, count_without_target) -> float:
    """The target's contribution to a count: count(everyone) - count(everyone but X).

    With exact answers this is X's bit (seed 004: "how many have the sickle cell trait"
    minus "how many, not named X, have it"). With a Curator's answers at epsilon each
    it is X's bit + Lap(1/epsilon) - Lap(1/epsilon), see :func:`difference_noise_pdf`.
    """
    a = valid_real(count_all, "count_all")
    b = valid_real(count_without_target, "count_without_target")
    return a - b


def difference_of_means(mean_all, n_all, mean_rest, n_rest) -> float:
    """The left-out person's value: n_all * mean_all - n_rest * mean_rest.

    The sums behind two averages differ by exactly the people in one group and not the
    other; with one person left out, the difference is that person's value. Seed 004:
    5 * 5.58 - 4 * 5.50 = 5.9, Bob's blood sugar (mmol/L).
    """
    m1 = valid_real(mean_all, "mean_all")
    m2 = valid_real(mean_rest, "mean_rest")
    n1 = valid_positive_int(n_all, "n_all", maximum=2 ** 53)
    n2 = valid_positive_int(n_rest, "n_rest", maximum=2 ** 53)
    if n2 >= n1:
        raise ValueError(f"n_rest must be smaller than n_all, got n_rest={n2}, n_all={n1}")
    return n1 * m1 - n2 * m2


def sickle_cell_queries(target="X", *, column="Sickle cell trait", name_column="Name"):
    """Seed 004's two counting queries as ``where`` callables (table -> boolean mask):
    everyone with the trait, and everyone with the trait who is not named ``target``.
    Pass them to :func:`exact_count` or to :meth:`dpteach.Curator.count`."""
    if not isinstance(target, str):
        raise TypeError(f"target must be a name (str), got {target!r}")

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


def perturb_records(values, bound, *, rng=None, size=None):
    """Input perturbation: each value plus independent uniform(-bound, bound) noise.

    This is seed 004's "add some noise of unif(-2, 2)" to every record before averaging.
    Bounded noise is *not* differential privacy (an output more than ``bound`` away from
    one input's possible results rules that input out), and each new query perturbs the
    records afresh, so repeated or differenced queries still leak (notebook 02).
    ``size`` draws that many independent perturbed copies (shape size + shape(values)).
    """
    vals = valid_values(values, "values")
    b = valid_real(bound, "bound", low=0.0, high=1e300)
    rng = valid_rng(rng)
    if size is None:
        shape = vals.shape
    else:
        k = valid_positive_int(size, "size")
        shape = (k,) + vals.shape
    return vals + rng.uniform(-b, b, size=shape)


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
    for col in ("Gender", "Blood sugar"):
        if col not in table.columns:
            raise ValueError(f"table must have a {col!r} column")
    values = table["Blood sugar"].to_numpy(float)
    female = (table["Gender"] == "F").to_numpy()
    rng = valid_rng(rng)
    reps = 1 if size is None else valid_positive_int(size, "size")
    first = perturb_records(values, bound, rng=rng, size=reps)
    second = perturb_records(values[female], bound, rng=rng, size=reps)
    est = values.size * first.mean(axis=1) - female.sum() * second.mean(axis=1)
    return float(est[0]) if size is None else est


def difference_noise_pdf(z, scale):
    """Density of L1 - L2 for independent L1, L2 ~ Lap(scale):
    f(z) = (1 + |z|/b) exp(-|z|/b) / (4 b).

    The noise left after differencing two Laplace answers (notebook 02). Its log-ratio
    between the worlds "X has the trait" and "X has not" is at most 2/b: two queries at
    epsilon each cost 2 epsilon, as composition says."""
    z = valid_values(z, "z")
    b = valid_real(scale, "scale", low=0.0, low_open=True)
    t = np.abs(z) / b
    out = (1.0 + t) * np.exp(-t) / (4.0 * b)
    return out.item() if out.ndim == 0 else out
