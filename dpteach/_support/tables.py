"""Tables shared by the anonymity lesson and the attacks on it: checking a table and its
columns, the equivalence class of every row, a released target's class, and the rows a
query's ``where`` selects. Used by :mod:`dpteach.anonymity`,
:mod:`dpteach.attacks.anonymity_attacks`, :mod:`dpteach.attacks.differencing` and
:mod:`dpteach.attacks.query_auditing` (and the coursework's anonymity checks)."""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
import pandas as pd


def valid_table(table, name="table") -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(table).__name__}")
    if len(table) == 0:
        raise ValueError(f"{name} is empty (0 rows); anonymity needs at least one row")
    return table


def valid_columns(table, columns, name, *, allow_empty=False) -> list:
    """A column name or a list of names, every one a column of ``table``."""
    if isinstance(columns, (str, numbers.Number)) or columns is None:
        columns = [columns]
    try:
        columns = list(columns)
    except TypeError:
        raise TypeError(f"{name} must be a column name or a list of column names, "
                        f"got {columns!r}") from None
    if not columns and not allow_empty:
        raise ValueError(f"{name} must name at least one column")
    for col in columns:
        if col not in table.columns:
            raise ValueError(f"{name}: unknown column {col!r}; the table has columns "
                             f"{list(table.columns)}")
    dup = [c for c in set(columns) if columns.count(c) > 1]
    if dup:
        raise ValueError(f"{name}: column {dup[0]!r} is listed twice")
    return columns


def valid_no_missing(table, columns):
    for col in columns:
        missing = table[col].isna().to_numpy()
        if missing.any():
            first = table.index[np.argmax(missing)]
            raise ValueError(f"column {col!r} has {int(missing.sum())} missing value(s) "
                             f"(NaN/None), first at row {first!r}; fill or drop them first")


def prepare(table, quasi_identifiers, sensitive=None):
    table = valid_table(table)
    qis = valid_columns(table, quasi_identifiers, "quasi_identifiers")
    cols = list(qis)
    if sensitive is not None:
        if isinstance(sensitive, (list, tuple)):
            raise TypeError(f"sensitive must be one column name, got {sensitive!r}")
        valid_columns(table, [sensitive], "sensitive")
        if sensitive in qis:
            raise ValueError(f"sensitive column {sensitive!r} is also a quasi-identifier")
        cols.append(sensitive)
    valid_no_missing(table, cols)
    return table, qis


def class_ids(table, qis) -> np.ndarray:
    """Class number of every row, 0, 1, ... in order of first appearance."""
    # factorize column by column and re-factorize the combined key (keeps it small);
    # pd.factorize numbers values in order of first appearance, so classes are too
    key = np.zeros(len(table), np.int64)
    for col in qis:
        codes, uniques = pd.factorize(table[col], sort=False)
        key, _ = pd.factorize(key * len(uniques) + codes, sort=False)
    # np.intp, the platform's index type: np.bincount refuses int64 where intp is 32 bits
    # (the browser's WebAssembly Python), and a class number never needs more
    return key.astype(np.intp)


def target_class(table, qis, target):
    """The released rows in ``target``'s class (target: quasi-identifier -> value)."""
    if not isinstance(target, Mapping):
        raise TypeError("target must be a dict quasi-identifier -> value (as released)")
    missing = [q for q in qis if q not in target]
    if missing:
        raise ValueError(f"target has no value for quasi-identifier {missing[0]!r}")
    mask = np.ones(len(table), bool)
    for q in qis:
        mask &= (table[q] == target[q]).to_numpy()
    if not mask.any():
        raise ValueError(f"no released row matches the target {dict((q, target[q]) for q in qis)}")
    return table.loc[mask]


def row_mask(table, where):
    """The boolean mask of the rows ``where(table)`` selects (all rows for None), checked."""
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    if where is None:
        return np.ones(len(table), dtype=bool)
    if not callable(where):
        raise TypeError(f"where must be a callable (table -> boolean mask) or None, got {where!r}")
    mask = np.asarray(where(table))
    if mask.shape != (len(table),) or mask.dtype.kind != "b":
        raise ValueError(f"where must return a boolean mask with one entry per row, got "
                         f"dtype {mask.dtype} and shape {mask.shape}")
    return mask
