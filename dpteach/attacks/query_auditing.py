"""Query auditing: refuse the disclosive query -- and disclose by refusing.

An auditor keeps every past query and answer and refuses a new query if answering it
would pin down somebody's sensitive value. Seed 004 shows why this is hard: two max
queries (max over males = 2, max over first-year PhD students = 3) already reveal Xi,
the only female first-year student, has value 3. Worse, a refusal decided by looking at
the true answer is itself a message (Kenthapadi, Mishra & Nissim 2005): the attacker
learns "answering would have revealed something", which can reveal the same thing.
Their fix is *simulatable* auditing: decide using only past answers, never the data.
Not to be confused with dpteach.audit (empirical lower bounds on epsilon, notebook 11).
Taught in notebook 02.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._support.validate import Real, Using, checked, valid_values
from .._support.tables import row_mask

__all__ = ["max_query", "infer_from_max_queries", "MaxAuditor", "refusal_attack"]



def _valid_frame(table, name):
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(table).__name__}")
    return table


@checked(table=Using(_valid_frame))
def max_query(table, column, where=None) -> float:
    """The exact maximum of ``column`` over the rows selected by ``where``."""
    if column not in table.columns:
        raise ValueError(f"column must be one of {list(table.columns)}, got {column!r}")
    mask = row_mask(table, where)
    if not mask.any():
        raise ValueError("where selects no rows; the maximum is undefined")
    return float(table.loc[mask, column].max())


@checked(max_group=Real(), max_group_with_target=Real())
def infer_from_max_queries(max_group, max_group_with_target):
    """What two max answers say about a target who is in the second group only.

    ``max_group``: the maximum over a set A (seed 004: all males); ``max_group_with_target``:
    the maximum over a set B whose only member outside A is the target (first-year PhD
    students; Xi is the only one who is not male). Every member of B other than the
    target is in A, so is at most ``max_group``; if B's maximum is larger, the target
    holds it. Returns (low, high) bounds on the target's value: (3, 3) for seed 004's
    answers 2 and 3; otherwise (-inf, max_group_with_target).
    """
    if max_group_with_target > max_group:
        return (max_group_with_target, max_group_with_target)
    return (-np.inf, max_group_with_target)


class MaxAuditor:
    """A max-query server that refuses answers which would reveal a value exactly.

    ``max(where)`` returns the maximum of ``column`` over the selected rows, or ``None``
    for a refusal. Each person's value is bounded above by the smallest answer of a
    query containing them; after a query S with answer a, if exactly one member of S can
    still reach a, that member's value is a -- disclosed. (This is the max-auditing
    check; values are assumed distinct enough that only bounds, not ties, matter.)

    ``simulatable=False``: the naive auditor computes the true answer and refuses if
    *it* would disclose -- so a refusal tells the attacker the answer was disclosive.
    ``simulatable=True``: the auditor refuses if *some* answer consistent with the past
    could disclose, deciding without looking at the data; refusals then say nothing new
    (Kenthapadi, Mishra & Nissim 2005).
    """

    def __init__(self, table, column, *, simulatable=False):
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}")
        if column not in table.columns:
            raise ValueError(f"column must be one of {list(table.columns)}, got {column!r}")
        if not isinstance(simulatable, bool):
            raise TypeError(f"simulatable must be True or False, got {simulatable!r}")
        self._table = table.copy()
        self._values = valid_values(table[column].to_numpy(), f"column {column!r}")
        self.simulatable = simulatable
        self.history: list[tuple[np.ndarray, float | None]] = []

    def _bounds(self, extra=None):
        upper = np.full(len(self._values), np.inf)
        answered = [(s, a) for s, a in self.history if a is not None]
        if extra is not None:
            answered.append(extra)
        for s, a in answered:
            upper[s] = np.minimum(upper[s], a)
        return upper, answered

    def _discloses(self, extra):
        upper, answered = self._bounds(extra)
        for s, a in answered:
            if np.count_nonzero(upper[s] >= a) == 1:
                return True
        return False

    def max(self, where=None):
        mask = row_mask(self._table, where)
        if not mask.any():
            raise ValueError("where selects no rows; the maximum is undefined")
        if self.simulatable:
            refuse = any(self._discloses((mask, a)) for a in self._possible_answers(mask))
        else:
            refuse = self._discloses((mask, float(self._values[mask].max())))
        answer = None if refuse else float(self._values[mask].max())
        self.history.append((mask, answer))
        return answer

    def _possible_answers(self, mask):
        """Representative answers to max over ``mask`` given the past answers only: each
        distinct upper bound of a member, midpoints between them, one value below all
        and, if a member is unbounded, one above."""
        upper, _ = self._bounds()
        ub = np.unique(upper[mask])
        finite = ub[np.isfinite(ub)]
        cands = list(finite)
        if finite.size:
            cands += list((finite[:-1] + finite[1:]) / 2) + [finite.min() - 1.0]
        if not np.isfinite(ub).all():
            cands.append((finite.max() if finite.size else 0.0) + 1.0)
        return cands


def _valid_where(where, name):
    if not callable(where):
        raise TypeError("group and target must be where callables (table -> boolean mask)")
    return where


@checked(group=Using(_valid_where), target=Using(_valid_where))
def refusal_attack(auditor, group, target):
    """Seed-style attack on a naive auditor: ask max over ``group``, then over ``group``
    without ``target`` (two where callables). If the second query is refused, the
    attacker concludes the target holds the group's maximum. Returns the inferred value
    of the target, or None when the attacker learns nothing exact."""
    first = auditor.max(group)
    if first is None:
        return None

    def without(table):
        return np.asarray(group(table)) & ~np.asarray(target(table))

    second = auditor.max(without)
    if second is None:
        return first          # refused: answering would have exposed the target = first
    if second < first:
        return first          # answered: the maximum left with the target
    return None
