"""The anonymity checks of :mod:`dpteach.coursework.exercises` (notebook 01, assignment A1):
a generalised table is k-anonymous (and kept its sensitive column and its rows), an
l-diversity or t-closeness figure is right, a disclosure was read off the target's
class. Kept apart so that exercises.py stays readable; import them from
``dpteach.coursework.exercises``.
"""

from __future__ import annotations

import math

from ._feedback import Feedback, failure, not_solved, number_text as g, unsolved

__all__ = ["check_k_anonymous", "check_l_diversity", "check_t_closeness", "check_disclosure"]


def check_k_anonymous(table, quasi_identifiers, k, *, original=None, sensitive=None,
                      max_suppressed=0, name="k-anonymity"):
    """Is ``table`` k-anonymous on ``quasi_identifiers``?

    With ``original`` (the table before generalisation) it also checks that at most
    ``max_suppressed`` rows were deleted and, with ``sensitive``, that every kept row
    still carries its original sensitive value (generalising the sensitive column, or
    shuffling rows, destroys what the release is for). Notebook A1.
    """
    import pandas as pd

    from .._support.validate import valid_nonnegative_int, valid_positive_int
    from ..anonymity import equivalence_classes, k_anonymity

    k = valid_positive_int(k, "k")
    max_suppressed = valid_nonnegative_int(max_suppressed, "max_suppressed")
    if unsolved(table):
        return not_solved(name)
    if not isinstance(table, pd.DataFrame):
        return failure(name, f"expected a pandas DataFrame, found {type(table).__name__}.", "type")
    qis = list(quasi_identifiers)
    missing = [q for q in qis if q not in table.columns]
    if missing:
        return failure(name, f"the table has no column {missing[0]!r}; keep every "
                             "quasi-identifier (generalise it, or replace it by '*').", "columns")
    if original is not None:
        dropped = len(original) - len(table)
        if dropped > max_suppressed:
            return failure(name, f"{dropped} rows were deleted, at most {max_suppressed} allowed. "
                                 "Hint: generalise values instead of deleting people.",
                           "suppressed", dropped=dropped)
        if sensitive is not None:
            if sensitive not in table.columns:
                return failure(name, f"the sensitive column {sensitive!r} is gone; keep it as it "
                                     "is.", "columns")
            unknown = [i for i in table.index if i not in original.index]
            if unknown:
                return failure(name, f"row label {unknown[0]!r} is not in the original table; keep "
                                     "the original index.", "rows")
            same = table[sensitive].to_numpy() == original.loc[table.index, sensitive].to_numpy()
            if not same.all():
                i = table.index[~same][0]
                return failure(name, f"row {i!r} has {sensitive} = {table.loc[i, sensitive]!r}, "
                                     f"but originally {original.loc[i, sensitive]!r}. Generalise "
                                     "the quasi-identifiers, never the sensitive values.",
                               "sensitive_changed")
    found_k = k_anonymity(table, qis)
    if found_k >= k:
        return Feedback(True, f"{name}: the table is {found_k}-anonymous (at least {k} needed).",
                        details={"reason": "passed", "k": found_k})
    report = equivalence_classes(table, qis)
    small = report.loc[report["size"].idxmin()]
    combo = ", ".join(f"{q} = {small[q]!r}" for q in qis)
    return failure(name, f"the smallest equivalence class has {found_k} row(s), {k} needed: "
                         f"{combo}. Hint: generalise further (mask more ZIP digits, wider age "
                         "ranges) or suppress a column.", "too_small", k=found_k)


def check_l_diversity(found, table, quasi_identifiers, sensitive, *, kind="distinct",
                      name="l-diversity"):
    """Compare a computed l with :func:`dpteach.anonymity.l_diversity`. Notebook A1."""
    from ..anonymity import class_report, l_diversity

    if unsolved(found):
        return not_solved(name)
    expected = l_diversity(table, quasi_identifiers, sensitive, kind=kind)
    try:
        value = float(found)
    except (TypeError, ValueError):
        return failure(name, f"expected a number, found {found!r}.", "type")
    if math.isclose(value, expected, rel_tol=1e-6):
        return Feedback(True, f"{name}: correct, l = {g(expected)} ({kind}).",
                        details={"reason": "passed", "expected": expected})
    report = class_report(table, quasi_identifiers, sensitive)
    col = "l_distinct" if kind == "distinct" else "l_entropy"
    worst = report.loc[report[col].idxmin()]
    hint = ("count the distinct sensitive values in each class and take the minimum"
            if kind == "distinct" else "exp of the smallest class entropy -Σ p ln p (nats)")
    return failure(name, f"expected l = {g(expected)}, found {g(value)}. The weakest class holds "
                         f"{worst['values']}. Hint: {hint}.", "wrong", expected=expected)


def check_t_closeness(found, table, quasi_identifiers, sensitive, *, ordered=False,
                      name="t-closeness"):
    """Compare a computed t with :func:`dpteach.anonymity.t_closeness` (EMD with equal
    or ordered ground distance). Notebook A1."""
    from ..anonymity import t_closeness

    if unsolved(found):
        return not_solved(name)
    expected = t_closeness(table, quasi_identifiers, sensitive, ordered=ordered)
    try:
        value = float(found)
    except (TypeError, ValueError):
        return failure(name, f"expected a number, found {found!r}.", "type")
    if math.isclose(value, expected, rel_tol=1e-6, abs_tol=1e-12):
        return Feedback(True, f"{name}: correct, t = {g(expected)}.",
                        details={"reason": "passed", "expected": expected})
    other = t_closeness(table, quasi_identifiers, sensitive, ordered=not ordered)
    hint = (f" That is the {'ordered' if not ordered else 'equal'} ground distance's value; "
            f"this task uses the {'ordered' if ordered else 'equal'} one."
            if math.isclose(value, other, rel_tol=1e-6) else
            " Hint: the EMD of the class distribution from the whole table's, largest over "
            "classes" + (" (cumulative differences / (m − 1))." if ordered else
                         " (half the L1 distance)."))
    return failure(name, f"expected t = {g(expected)}, found {g(value)}.{hint}", "wrong",
                   expected=expected)


def check_disclosure(found, table, quasi_identifiers, sensitive, target, *,
                     name="disclosure"):
    """The homogeneity attack: ``target`` (a dict of the target's released
    quasi-identifier values) falls in one class; if every row of it shares one
    sensitive value, that value is disclosed and ``found`` must name it; otherwise
    ``found`` must be None-like "no disclosure" (the string "none"). Notebook A1."""
    from .._support.tables import prepare, target_class

    if unsolved(found):
        return not_solved(name)
    tbl, qis = prepare(table, quasi_identifiers, sensitive)
    rows = target_class(tbl, qis, target)
    values = rows[sensitive].unique().tolist()
    expected = values[0] if len(values) == 1 else "none"
    if str(found).strip().lower() == str(expected).strip().lower():
        why = (f"all {len(rows)} rows of the class share it, so k = {len(rows)} did not help"
               if expected != "none" else f"the class holds {values}")
        return Feedback(True, f"{name}: correct ({expected!r}): {why}.",
                        details={"reason": "passed", "expected": expected})
    return failure(name, f"expected {expected!r}, found {found!r}. Hint: find the target's "
                         f"equivalence class ({len(rows)} rows) and list its {sensitive} values.",
                   "wrong", expected=expected)
