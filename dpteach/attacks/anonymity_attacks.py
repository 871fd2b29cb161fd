"""Attacks on syntactic privacy: linkage, homogeneity, background knowledge, skewness
and similarity. Each takes a released table and shows what k-anonymity, l-diversity or
t-closeness (measured in :mod:`dpteach.anonymity`) fails to hide. Taught in notebook 01;
reached as ``dp.attacks.<attack>``.

* linkage (Sweeney 2002): join the release with a public table on the quasi-identifiers;
* homogeneity and background knowledge (Machanavajjhala et al. 2007): a class with one
  sensitive value, or one the adversary can narrow down, discloses it at any k;
* skewness and similarity (Li, Li & Venkatasubramanian 2007): an l-diverse class can
  still raise a rare value's odds, or hold values that all mean the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from .._support.tables import class_ids, prepare, target_class, valid_columns, valid_no_missing, valid_table
from .._support.validate import Using, checked, valid_real
from ..anonymity import class_report, generalize

__all__ = ["linkage_attack", "homogeneity_attack", "background_knowledge_attack",
           "skewness_attack", "similarity_attack"]


@checked(public=Using(valid_table))
def linkage_attack(released, public, quasi_identifiers, sensitive, *, rules=None) -> pd.DataFrame:
    """Join a released table with a public one (a voter list) on the quasi-identifiers
    (Sweeney 2002; seed 004's Race, Birth, Gender, ZIP setting).

    ``rules`` (optional) generalises the public table first, the way the release was
    generalised, so raw public values meet generalised released ones. Returns the public
    table, one row per person, with ``matches`` (released rows sharing the person's
    quasi-identifiers), ``candidates`` (their sensitive values, a tuple),
    ``reidentified`` (exactly one match) and ``disclosed`` (the sensitive value when all
    candidates agree, else None). Notebook 01.
    """
    released, qis = prepare(released, quasi_identifiers, sensitive)
    valid_columns(public, qis, "quasi_identifiers (in the public table)")
    keys = generalize(public, rules) if rules is not None else public
    valid_no_missing(keys, qis)
    grouped = released.groupby(qis, sort=False, observed=True)[sensitive]
    classes = grouped.agg(tuple).rename("candidates").reset_index()
    try:
        merged = keys[qis].reset_index(drop=True).merge(classes, how="left", on=qis)
    except ValueError as exc:  # e.g. int column merged with text
        raise ValueError(f"cannot join the public table with the release on {qis}: {exc}; "
                         "generalise the public table the same way (rules=...)") from None
    cand = [c if isinstance(c, tuple) else () for c in merged["candidates"]]
    out = public.copy()
    out["matches"] = np.array([len(c) for c in cand], dtype=int)
    out["candidates"] = pd.Series(cand, index=out.index, dtype=object)
    out["reidentified"] = out["matches"] == 1
    out["disclosed"] = pd.Series([c[0] if c and len(set(c)) == 1 else None for c in cand],
                                 index=out.index, dtype=object)
    return out


def homogeneity_attack(table, quasi_identifiers, sensitive) -> pd.DataFrame:
    """The classes whose rows all share one sensitive value: anyone known to be in such
    a class has that value disclosed, however large k is (Machanavajjhala et al. 2007;
    seed 004's 4-anonymous table, class 130** / 3* is all Cancer). Returns the classes'
    quasi-identifiers, ``size`` and the ``disclosed`` value (possibly no rows)."""
    report = class_report(table, quasi_identifiers, sensitive)
    hit = report[report["l_distinct"] == 1].copy()
    hit["disclosed"] = [next(iter(v)) for v in hit["values"]]
    qis = valid_columns(table, quasi_identifiers, "quasi_identifiers")
    return hit[qis + ["size", "disclosed"]]


def _valid_knowledge(knowledge, name):
    """The knowledge as likelihoods: {value: weight >= 0}, ruled-out values at 0."""
    if isinstance(knowledge, Mapping):
        return {value: valid_real(w, f"{name}[{value!r}]", low=0.0)
                for value, w in knowledge.items()}
    if isinstance(knowledge, str) or not isinstance(knowledge, Iterable):
        raise TypeError(f"{name} must be a list of ruled-out values or a dict value -> likelihood")
    return {value: 0.0 for value in knowledge}


@checked(knowledge=Using(_valid_knowledge))
def background_knowledge_attack(table, quasi_identifiers, sensitive, target, knowledge):
    """What an adversary believes about ``target`` (a dict of the target's released
    quasi-identifier values) after combining the target's class with background
    knowledge (Machanavajjhala et al. 2007's example: heart disease is rare among
    Japanese patients, so a Japanese patient in a class of heart disease and viral
    infection almost surely has the infection).

    knowledge: values the adversary rules out (an iterable), or a dict value -> relative
    likelihood for the target (missing values keep 1; 0 rules out). Returns a Series of
    posterior probabilities (proportional to count in the class x likelihood), largest
    first.
    """
    table, qis = prepare(table, quasi_identifiers, sensitive)
    rows = target_class(table, qis, target)
    counts = rows[sensitive].value_counts(sort=False).astype(float)
    like = np.array([knowledge.get(v, 1.0) for v in counts.index])      # knowledge: likelihoods
    post = counts.to_numpy() * like
    if post.sum() <= 0:
        raise ValueError("the knowledge rules out every value in the target's class")
    out = pd.Series(post / post.sum(), index=counts.index, name="posterior")
    return out.sort_values(ascending=False, kind="stable")


def skewness_attack(table, quasi_identifiers, sensitive, value) -> pd.DataFrame:
    """How much each class raises the chance of a rare sensitive ``value`` (Li, Li &
    Venkatasubramanian 2007's skewness attack: a class that is half positive is
    2-diverse, yet a test positive for 1% of the table becomes 50% likely).

    Returns one row per class: quasi-identifiers, ``size``, ``l_distinct``, ``share``
    (fraction of the class with ``value``), ``overall`` (fraction of the table) and
    ``lift`` = share / overall, largest lift first."""
    table, qis = prepare(table, quasi_identifiers, sensitive)
    hits = (table[sensitive] == value).to_numpy()
    overall = hits.mean()
    if overall == 0:
        raise ValueError(f"value {value!r} does not occur in column {sensitive!r}")
    report = class_report(table, qis, sensitive)
    ids = class_ids(table, qis)
    share = np.bincount(ids, weights=hits) / np.bincount(ids)
    out = report[qis + ["size", "l_distinct"]].copy()
    out["share"] = share
    out["overall"] = overall
    out["lift"] = share / overall
    return out.sort_values("lift", ascending=False, kind="stable")


def _valid_categories(categories, name):
    if not isinstance(categories, Mapping) and not callable(categories):
        raise TypeError(f"{name} must be a dict value -> category or a function")
    return categories


@checked(categories=Using(_valid_categories))
def similarity_attack(table, quasi_identifiers, sensitive, categories) -> pd.DataFrame:
    """Classes whose distinct sensitive values all fall into one semantic category
    (Li, Li & Venkatasubramanian 2007: a class of gastric ulcer, gastritis and stomach
    cancer is 3-diverse yet discloses "stomach disease").

    categories: dict value -> category, or a function Series -> Series of categories.
    Returns one row per class: quasi-identifiers, ``size``, ``l_distinct``,
    ``categories`` (the distinct categories, a tuple) and ``disclosed`` (the category
    when there is only one, else None)."""
    table, qis = prepare(table, quasi_identifiers, sensitive)
    col = table[sensitive]
    if isinstance(categories, Mapping):
        unknown = [v for v in pd.unique(col) if v not in categories]
        if unknown:
            raise ValueError(f"categories has no entry for value {unknown[0]!r} of {sensitive!r}")
        cat = col.map(categories)
    else:                                             # a function Series -> categories
        cat = pd.Series(np.asarray(categories(col), dtype=object), index=table.index)
    work = table[qis].copy()
    work["_category"] = cat.to_numpy()
    report = class_report(table, qis, sensitive)
    per_class = class_report(work, qis, "_category")
    out = report[qis + ["size", "l_distinct"]].copy()
    out["categories"] = [tuple(v) for v in per_class["values"]]
    out["disclosed"] = pd.Series([c[0] if len(c) == 1 else None for c in out["categories"]],
                                 index=out.index, dtype=object)
    return out
