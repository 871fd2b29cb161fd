"""Syntactic privacy: k-anonymity, l-diversity, t-closeness and generalisation. The
attacks that defeat them live in :mod:`dpteach.attacks.anonymity_attacks`
(``dp.attacks.linkage_attack``). Taught in notebook 01 (seed 004's opening slides).

Vocabulary
----------
* quasi-identifiers (QIs): columns an adversary can learn elsewhere (ZIP code, age,
  birth year, gender) and join on;
* sensitive attribute: the column to protect (a diagnosis, a salary);
* equivalence class: the rows that share one combination of QI values.

Definitions (all computed with pandas/numpy group operations, never a Python loop over
rows, so each metric handles 10^5 rows in well under a second):

* k-anonymity (Sweeney 2002): every class has at least k rows; the table's k is the
  smallest class size.
* distinct l-diversity (Machanavajjhala et al. 2007): every class holds at least l
  distinct sensitive values.
* entropy l-diversity (same paper): every class has entropy
  H = -sum_s p(s) ln p(s) >= ln l; the table's l is exp(min H) (a real number).
* recursive (c, l)-diversity (same paper): with the class's value counts sorted
  r_1 >= r_2 >= ... >= r_m, the class satisfies it when r_1 < c (r_l + ... + r_m).
* t-closeness (Li, Li & Venkatasubramanian 2007): the Earth Mover's Distance (EMD)
  between each class's distribution of the sensitive value and the whole table's is
  at most t. Ground distance: every pair of distinct categories at distance 1 (then
  EMD = (1/2) sum_i |p_i - q_i|, the total variation distance), or for ordered values
  |i - j| / (m - 1) between the i-th and j-th smallest of the m distinct values in the
  whole table (then EMD = sum_i |P_i - Q_i| / (m - 1), P and Q the cumulative
  distributions -- what ``scipy.stats.wasserstein_distance`` computes on the ranks).
  The paper's salary example: the class {3K, 4K, 5K} of the 9-row table is at
  distance 0.375.

Where the pycanon library (Sainz-Pardo Díaz & López García 2022) differs
-------------------------------------------------------------------------
``tests/lessons/test_pycanon_crosscheck.py`` checks k, distinct l and t against pycanon 1.x on
the seed tables and on random tables; they agree, except where pycanon is wrong:

1. entropy l-diversity: pycanon returns ``int(e ** H)``; three equally frequent values
   give e ** ln 3 = 2.9999999999999996 and so l = 2 instead of 3. Here l = exp(min H)
   is a float, and a value within 1e-9 (relative) of a whole number is returned as
   that whole number.
2. recursive (c, l)-diversity: pycanon sorts the counts in increasing order and
   compares the *smallest* count with the tail, so a class with counts (5, 1, 1) is
   reported as (1, 3)-diverse although 5 < 1 * 1 is false; here r_1 is the largest
   count, as in the definition.
3. pycanon looks rows up by index label as if labels were positions (``iloc`` on
   group labels), so a table indexed 1..n (like the seed tables) gives wrong classes
   or an IndexError; it must be given a 0..n-1 index. It also drops rows with a
   missing quasi-identifier silently; here that is an error naming the column.
4. ordered t-closeness of an attribute with a single distinct value: pycanon divides
   by m - 1 = 0; here every class then equals the table and the distance is 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ._support.tables import class_ids, prepare, valid_columns, valid_no_missing, valid_table
from ._support.validate import (Flag, NonnegativeInt, OrNone, PositiveInt, Real, Using, checked,
                                describe, valid_values)

__all__ = [
    "equivalence_classes", "equivalence_class_ids", "k_anonymity", "l_diversity",
    "t_closeness", "emd", "class_report",
    "mask_zip", "bucket_ages", "suppress_column", "suppress_rows", "suppress_small_classes",
    "generalize", "four_anonymous_rules",
]


def _codes(column: pd.Series, ordered: bool):
    """Integer codes of the sensitive values; with ``ordered``, codes are ranks among
    the distinct values present (0 = smallest)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        if ordered and not column.cat.ordered:
            raise TypeError(f"ordered=True needs an ordered attribute; column {column.name!r} "
                            "is an unordered Categorical (make it ordered=True)")
        col = column.cat.remove_unused_categories()
        return col.cat.codes.to_numpy().astype(np.intp), list(col.cat.categories)
    if ordered and not (pd.api.types.is_numeric_dtype(column)
                        or pd.api.types.is_datetime64_any_dtype(column)):
        raise TypeError(f"ordered=True needs numbers, dates or an ordered Categorical; column "
                        f"{column.name!r} has dtype {column.dtype} (text such as '11K' < '3K' "
                        "would sort wrongly)")
    codes, uniques = pd.factorize(column, sort=True)
    return codes.astype(np.intp), list(uniques)


class _Groups:
    """Sparse counts of (class, sensitive value): one entry per pair that occurs."""

    def __init__(self, table, qis, sensitive, *, ordered=False):
        cls = class_ids(table, qis)
        codes, self.values = _codes(table[sensitive], ordered)
        self.m = len(self.values)
        self.n = len(table)
        self.n_classes = int(cls.max()) + 1
        self.sizes = np.bincount(cls, minlength=self.n_classes)
        pair, counts = np.unique(cls * self.m + codes, return_counts=True)  # sorted by class
        self.cls, self.code, self.count = pair // self.m, pair % self.m, counts
        self.overall_counts = np.bincount(codes, minlength=self.m).astype(np.int64)
        self.first_row = np.unique(cls, return_index=True)[1]

    def distinct(self):
        return np.bincount(self.cls, minlength=self.n_classes)

    def entropy(self):
        p = self.count / self.sizes[self.cls]
        return np.bincount(self.cls, weights=-p * np.log(p), minlength=self.n_classes)

    def recursive(self, c):
        # sort each class's counts in decreasing order; j = 0-based position in the class
        order = np.lexsort((-self.count, self.cls))
        cls, cnt = self.cls[order], self.count[order]
        start = np.r_[0, np.cumsum(np.bincount(cls, minlength=self.n_classes))[:-1]]
        r1 = cnt[start[cls]]
        # at position j (0-based, l = j + 1) the tail r_l + ... + r_m is the class size
        # minus the counts before position j
        before = np.cumsum(cnt) - cnt - np.r_[0, np.cumsum(cnt)][start[cls]]
        tail = self.sizes[cls] - before
        ok = r1 < c * tail
        # the tails shrink with l, so the l's that hold are 1..L and L = how many hold
        return np.bincount(cls, weights=ok, minlength=self.n_classes).astype(int)

    def emd(self, ordered):
        # exact integer arithmetic in units of 1 / (n_c N): p_i - q_i = (c_i N - C_i n_c) / (n_c N),
        # so 0.375 comes out as 0.375 (one rounding, at the final division)
        N, nc = self.n, self.sizes.astype(np.int64)
        C = self.overall_counts
        if not ordered:
            # sum_i |p_i - q_i| = sum over values present in the class of (|p_i - q_i| - q_i) + 1
            diff = np.abs(self.count * N - C[self.code] * nc[self.cls]) - C[self.code] * nc[self.cls]
            num = nc * N + np.bincount(self.cls, weights=diff, minlength=self.n_classes)
            return np.clip(num / (2.0 * nc * N), 0.0, 1.0)
        if self.m == 1:
            return np.zeros(self.n_classes)
        num = _ordered_emd_units(self.cls, self.code, self.count, C, nc, N, self.m)
        return np.clip(num / (nc * float(N) * (self.m - 1)), 0.0, 1.0)


def _ordered_emd_units(cls, code, count, C, nc, N, m):
    """sum_{i=0}^{m-2} |P_c(i) - Q(i)| in units of 1 / (n_c N) for every class c, with
    P_c and Q the cumulative distributions, without a classes x m matrix.

    Within a class P_c is constant between consecutive values present in the class and
    Q increases, so each constant stretch [a, b) is summed in closed form from prefix
    sums of Q, split where Q crosses the constant level. Integers stay below 2**53 for
    tables up to about 10**5 rows with 10**5 distinct values.
    """
    n_classes = nc.size
    Qc = np.cumsum(C)                                   # N Q(i), integers
    SQ = np.r_[0, np.cumsum(Qc)]                        # SQ[i] = N (Q(0) + ... + Q(i-1))
    start = np.r_[0, np.cumsum(np.bincount(cls, minlength=n_classes))[:-1]]
    Pc = np.cumsum(count)
    Pc = Pc - np.r_[0, Pc][start[cls]]                  # n_c P_c at each present value
    last = np.r_[cls[1:] != cls[:-1], True]
    nxt = np.where(last, m - 1, np.r_[code[1:], m - 1])  # next present value, or the end
    # stretches: [0, first value) at level 0, then [value, next value) at level P
    a = np.r_[np.zeros(n_classes, np.int64), code]
    b = np.r_[code[start], nxt]
    level = np.r_[np.zeros(n_classes, np.int64), Pc]
    owner = np.r_[np.arange(n_classes), cls]
    n_o = nc[owner]
    # k = first i with Q(i) >= level; ties contribute 0, so a float search is exact enough
    k = np.clip(np.searchsorted(Qc / N, level / n_o, side="left"), a, b)
    below = level * N * (k - a) - n_o * (SQ[k] - SQ[a])
    above = n_o * (SQ[b] - SQ[k]) - level * N * (b - k)
    return np.bincount(owner, weights=(below + above).astype(float), minlength=n_classes)


def _snap(x: float) -> float:
    r = round(x)
    return float(r) if r and abs(x - r) <= 1e-9 * r else float(x)


# -- metrics ---------------------------------------------------------------------------
def equivalence_class_ids(table, quasi_identifiers) -> pd.Series:
    """The equivalence class of every row: 0, 1, ... in order of first appearance,
    aligned with ``table.index``. Notebook 01."""
    table, qis = prepare(table, quasi_identifiers)
    return pd.Series(class_ids(table, qis), index=table.index, name="class")


def equivalence_classes(table, quasi_identifiers) -> pd.DataFrame:
    """The equivalence classes of ``table``: one row per combination of quasi-identifier
    values that occurs, in order of first appearance, with its ``size`` (number of rows)
    and ``rows`` (the index labels of its rows). Notebook 01.

    >>> equivalence_classes(dp.datasets.hospital_visits(), ["Race", "Birth", "Gender", "ZIP"])
    ... # three classes: {t1, t2}, {t3, t4}, {t5, t6, t7}
    """
    table, qis = prepare(table, quasi_identifiers)
    ids = class_ids(table, qis)
    sizes = np.bincount(ids)
    order = np.argsort(ids, kind="stable")            # rows grouped by class, in table order
    ends = np.cumsum(sizes)
    starts = ends - sizes
    out = table.iloc[order[starts]][qis].reset_index(drop=True)   # first row of each class
    out["size"] = sizes
    labels = table.index.to_numpy()[order].tolist()
    out["rows"] = [labels[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
    out.index.name = "class"
    return out


def k_anonymity(table, quasi_identifiers) -> int:
    """The table's k: the size of its smallest equivalence class (Sweeney 2002).

    The table is k-anonymous for this k and every smaller one: each row shares its
    quasi-identifier values with at least k - 1 other rows. Notebook 01.
    """
    table, qis = prepare(table, quasi_identifiers)
    return int(np.bincount(class_ids(table, qis)).min())


_KINDS = ("distinct", "entropy", "recursive")


def _valid_kind(kind, name):
    if kind not in _KINDS:
        raise ValueError(f"{name} must be one of {_KINDS}, got {kind!r}")
    return kind


@checked(kind=Using(_valid_kind), c=OrNone(Real(low=0.0, low_open=True)))
def l_diversity(table, quasi_identifiers, sensitive, *, kind="distinct", c=None):
    """The largest l for which ``table`` is l-diverse (Machanavajjhala et al. 2007).

    kind="distinct"  -> int, the fewest distinct sensitive values in any class;
    kind="entropy"   -> float, exp(min over classes of H), H = -sum_s p(s) ln p(s) in
                        nats, so a class with l equally frequent values gives exactly l
                        (values within 1e-9 of a whole number are returned as it);
    kind="recursive" -> int, the largest l such that every class satisfies recursive
                        (c, l)-diversity, r_1 < c (r_l + ... + r_m) with the class's
                        counts sorted r_1 >= ... >= r_m; needs ``c`` > 0. Returns 0 if
                        even l = 1 fails (possible only for c <= 1).

    Notebook 01 (the seed's 3-diverse table).
    """
    if kind == "recursive" and c is None:
        raise ValueError("kind='recursive' needs c, the constant of (c, l)-diversity (c > 0)")
    if kind != "recursive" and c is not None:
        raise ValueError(f"c is only used with kind='recursive', not kind={kind!r}")
    table, qis = prepare(table, quasi_identifiers, sensitive)
    g = _Groups(table, qis, sensitive)
    if kind == "distinct":
        return int(g.distinct().min())
    if kind == "entropy":
        return _snap(math.exp(float(g.entropy().min())))
    return int(g.recursive(c).min())


@checked(ordered=Flag())
def t_closeness(table, quasi_identifiers, sensitive, *, ordered=False) -> float:
    """The smallest t for which ``table`` has t-closeness: the largest Earth Mover's
    Distance between a class's distribution of ``sensitive`` and the whole table's
    (Li, Li & Venkatasubramanian 2007). A value in [0, 1].

    ordered=False: equal ground distance, EMD = (1/2) sum_i |p_i - q_i|.
    ordered=True: ground distance |i - j| / (m - 1) between ranks, m the number of
    distinct values in the whole table; EMD = sum_i |P_i - Q_i| / (m - 1) with P, Q
    cumulative. Needs numbers, dates or an ordered pandas Categorical.

    Seed 004's 3-diverse table with Salary (thousands): the class {3, 4, 5} is at
    0.375, and t = 0.375 for the table. Notebook 01.
    """
    table, qis = prepare(table, quasi_identifiers, sensitive)
    g = _Groups(table, qis, sensitive, ordered=ordered)
    return float(g.emd(ordered).max())


def _valid_weights(weights, name):
    v = valid_values(weights, name)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of weights")
    if not np.isfinite(v).all() or (v < 0).any() or v.sum() <= 0:
        raise ValueError(f"{name} must hold finite non-negative weights with a positive sum")
    return v


@checked(p=Using(_valid_weights), q=Using(_valid_weights), ordered=Flag())
def emd(p, q, *, ordered=False) -> float:
    """Earth Mover's Distance between two distributions over the same m values (listed
    in increasing order when ``ordered``), with the ground distances of
    :func:`t_closeness`. ``p`` and ``q`` are counts or probabilities (each is
    normalised to sum to 1). The ordered case uses ``scipy.stats.wasserstein_distance``
    on the ranks 0..m-1 and divides by m - 1.
    """
    from scipy.stats import wasserstein_distance

    if p.size != q.size:
        raise ValueError(f"p and q must have the same length, got {p.size} and {q.size}")
    p, q = p / p.sum(), q / q.sum()
    if not ordered:
        return float(0.5 * np.abs(p - q).sum())
    m = p.size
    if m == 1:
        return 0.0
    ranks = np.arange(m, dtype=float)
    return float(wasserstein_distance(ranks, ranks, p, q) / (m - 1))


@checked(ordered=Flag())
def class_report(table, quasi_identifiers, sensitive, *, ordered=False) -> pd.DataFrame:
    """One row per equivalence class: its quasi-identifier values, ``size`` (k of the
    class), ``l_distinct``, ``l_entropy``, ``emd`` (distance to the whole table, as in
    :func:`t_closeness`) and ``values`` (the sensitive values with their counts).
    The table's k, l and t are the column minima / maximum. Notebook 01."""
    table, qis = prepare(table, quasi_identifiers, sensitive)
    g = _Groups(table, qis, sensitive, ordered=ordered)
    out = table.iloc[g.first_row][qis].reset_index(drop=True)
    out["size"] = g.sizes
    out["l_distinct"] = g.distinct()
    out["l_entropy"] = [_snap(x) for x in np.exp(g.entropy())]
    out["emd"] = g.emd(ordered)
    vals = np.asarray(g.values, dtype=object)
    split = np.cumsum(np.bincount(g.cls, minlength=g.n_classes))[:-1]
    out["values"] = [dict(zip(v.tolist(), cnt.tolist()))
                     for v, cnt in zip(np.split(vals[g.code], split), np.split(g.count, split))]
    out.index.name = "class"
    return out


# -- generalisation ------------------------------------------------------------------------
def _series(values, name) -> pd.Series:
    if isinstance(values, pd.Series):
        return values
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a pandas Series or an array, got {type(values).__name__}")
    return pd.Series(list(values), name=name)


def _valid_codes(values, name):
    """A Series (or array) of codes without missing values, as a Series."""
    s = _series(values, name)
    valid_no_missing(s.to_frame(name=s.name if s.name is not None else name),
                     [s.name if s.name is not None else name])
    return s


def _valid_char(char, name):
    if not isinstance(char, str) or len(char) != 1:
        raise ValueError(f"{name} must be a single character, got {char!r}")
    return char


@checked(values=Using(_valid_codes), keep=NonnegativeInt(), char=Using(_valid_char))
def mask_zip(values, keep, *, char="*") -> pd.Series:
    """Keep the first ``keep`` characters of every ZIP code and replace the rest by
    ``char``: mask_zip(["13053"], 3) -> ["130**"]. keep=0 masks everything; a keep
    longer than a code leaves it whole. ZIP codes should be strings (leading zeros)."""
    codes, uniques = pd.factorize(values.astype(str))
    masked = np.array([u[:keep] + char * max(len(u) - keep, 0) for u in uniques], dtype=object)
    return pd.Series(masked[codes], index=values.index, name=values.name)


def _valid_ages(values, name):
    """Ages as a numeric Series without missing values."""
    s = _series(values, name)
    if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        raise TypeError(f"{name} (ages) must be numbers, got dtype {s.dtype}")
    column = s.name if s.name is not None else name
    valid_no_missing(s.to_frame(name=column), [column])
    return s


def _valid_edges(edges, name):
    try:
        arr = np.asarray(edges, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be at least two increasing numbers, got "
                        f"{describe(edges)}") from None
    if arr.ndim != 1 or arr.size < 2 or np.isnan(arr).any() or (np.diff(arr) <= 0).any():
        raise ValueError(f"{name} must be at least two increasing numbers, got {arr.tolist()}")
    return arr


@checked(values=Using(_valid_ages), width=OrNone(PositiveInt(maximum=10 ** 6)),
         edges=OrNone(Using(_valid_edges)))
def bucket_ages(values, width=None, *, edges=None, labels=None) -> pd.Series:
    """Replace ages by ranges. ``width`` (years): buckets [0, w), [w, 2w), ... labelled
    "20-29" (width 1 keeps the age itself). Or ``edges`` (increasing, left-closed
    [e_i, e_i+1)) with one label per bucket, e.g. seed 004's
    edges=[-inf, 30, 40, inf], labels=["< 30", "3*", "≥ 40"]."""
    if (width is None) == (edges is None):
        raise ValueError("give exactly one of width (years) or edges")
    x = values.to_numpy(dtype=float)
    if width is not None:
        if labels is not None:
            raise ValueError("labels go with edges, not with width")
        if width == 1:
            return pd.Series(values.astype(int).astype(str).to_numpy(), index=values.index,
                             name=values.name)
        lo = (np.floor(x / width) * width).astype(np.int64)
        codes, uniques = pd.factorize(lo)
        text = np.array([f"{u}-{u + width - 1}" for u in uniques], dtype=object)
        return pd.Series(text[codes], index=values.index, name=values.name)
    if labels is None:
        labels = [f"[{a:g}, {b:g})" for a, b in zip(edges[:-1], edges[1:])]
    labels = list(labels)
    if len(labels) != edges.size - 1:
        raise ValueError(f"labels must have one entry per bucket ({edges.size - 1}), got {len(labels)}")
    idx = np.searchsorted(edges, x, side="right") - 1
    outside = (idx < 0) | (idx >= len(labels)) | (x == edges[-1])
    if outside.any():
        raise ValueError(f"age {x[outside][0]:g} lies outside the edges [{edges[0]:g}, {edges[-1]:g})")
    return pd.Series(np.asarray(labels, dtype=object)[idx], index=values.index, name=values.name)


@checked(table=Using(valid_table))
def suppress_column(table, column, *, char="*") -> pd.DataFrame:
    """A copy of ``table`` with every value of ``column`` replaced by ``char``."""
    (column,) = valid_columns(table, [column], "column")
    out = table.copy()
    out[column] = pd.Series([char] * len(out), index=out.index)
    return out


@checked(table=Using(valid_table))
def suppress_rows(table, rows) -> pd.DataFrame:
    """A copy of ``table`` without ``rows`` (index labels, or a boolean mask aligned
    with the table: True = suppress)."""
    if isinstance(rows, (pd.Series, np.ndarray, list)) and len(rows) == len(table) and \
            np.asarray(rows).dtype.kind == "b":
        mask = np.asarray(rows, bool)
        return table.loc[~mask].copy()
    labels = [rows] if np.isscalar(rows) else list(rows)
    unknown = [r for r in labels if r not in table.index]
    if unknown:
        raise ValueError(f"rows: unknown row label {unknown[0]!r}")
    return table.drop(index=labels)


@checked(k=PositiveInt())
def suppress_small_classes(table, quasi_identifiers, k) -> pd.DataFrame:
    """A copy of ``table`` without the rows of classes smaller than ``k``: the remaining
    table is k-anonymous (unless nothing remains, which raises)."""
    table, qis = prepare(table, quasi_identifiers)
    ids = class_ids(table, qis)
    keep = np.bincount(ids)[ids] >= k
    if not keep.any():
        raise ValueError(f"every class has fewer than k={k} rows; suppression would leave nothing")
    return table.loc[keep].copy()


_RULES_HELP = ("a rule is None (keep), 'suppress' or '*', 'drop', ('mask', keep), "
               "('bucket', width), ('bucket', edges, labels) or a function Series -> Series")


def _valid_rules(rules, name):
    if not isinstance(rules, Mapping):
        raise TypeError(f"{name} must be a dict column -> rule; {_RULES_HELP}")
    return rules


@checked(table=Using(valid_table), rules=Using(_valid_rules))
def generalize(table, rules: Mapping) -> pd.DataFrame:
    """A new table with each column of ``rules`` generalised (the input is untouched).

    rules maps a column to: None (unchanged); "suppress" or "*" (every value -> "*");
    "drop" (remove the column); ("mask", keep) (:func:`mask_zip`); ("bucket", width) or
    ("bucket", edges, labels) (:func:`bucket_ages`); or a function Series -> Series of
    the same length. Example, seed 004's table (a) -> (b): see
    :func:`four_anonymous_rules`.
    """
    valid_columns(table, list(rules), "rules", allow_empty=True)
    out = table.copy()
    for col, rule in rules.items():
        if rule is None:
            continue
        if isinstance(rule, str):
            if rule in ("suppress", "*"):
                out = suppress_column(out, col)
            elif rule == "drop":
                out = out.drop(columns=[col])
            else:
                raise ValueError(f"rules[{col!r}] = {rule!r} is not a rule; {_RULES_HELP}")
        elif isinstance(rule, tuple) and rule and rule[0] in ("mask", "bucket"):
            if rule[0] == "mask" and len(rule) == 2:
                out[col] = mask_zip(out[col], rule[1])
            elif rule[0] == "bucket" and len(rule) == 2:
                out[col] = bucket_ages(out[col], rule[1])
            elif rule[0] == "bucket" and len(rule) == 3:
                out[col] = bucket_ages(out[col], edges=rule[1], labels=rule[2])
            else:
                raise ValueError(f"rules[{col!r}] = {rule!r} has the wrong length; {_RULES_HELP}")
        elif callable(rule):
            new = rule(out[col])
            if len(new) != len(out):
                raise ValueError(f"rules[{col!r}] returned {len(new)} values for {len(out)} rows")
            out[col] = new.to_numpy() if isinstance(new, pd.Series) else np.asarray(new)
        else:
            raise ValueError(f"rules[{col!r}] = {rule!r} is not a rule; {_RULES_HELP}")
    return out


def _seed_zip(zips: pd.Series) -> pd.Series:
    # seed 004's table (b) keeps three digits in the 130xx area and four in 1485x
    return mask_zip(zips, 3).where(~zips.astype(str).str.startswith("148"), mask_zip(zips, 4))


def four_anonymous_rules() -> dict:
    """The rules that turn seed 004's 12-row table (a) into its 4-anonymous version (b):
    ZIP 130xx -> 130**, 1485x -> 1485*; ages < 30, 3*, ≥ 40; nationality suppressed.
    ``generalize(hospital_conditions(), four_anonymous_rules())`` equals
    ``hospital_conditions_4anonymous()``."""
    return {"Zip Code": _seed_zip,
            "Age": ("bucket", [-math.inf, 30, 40, math.inf], ["< 30", "3*", "≥ 40"]),
            "Nationality": "suppress"}
