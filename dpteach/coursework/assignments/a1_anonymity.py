"""A1 · Anonymisation and its limits (notebooks/solutions/A1_anonymity.ipynb, with
notebook 01). Every task runs the student's function on tables the check draws afresh:

* Task 1 (2 points) ``generalise(table) -> table``: run on three held-out hospital
  tables (the schema of seed 004's 12-row table); each result must be 4-anonymous,
  keep every row, the index and the Condition column, keep the three quasi-identifier
  columns with *truthful* generalised values (a masked ZIP, an age range holding the
  age, the nationality or ``*``), and keep some information (at least two
  equivalence classes: a table in which everybody looks alike is 4-anonymous and
  useless);
* Task 2 (2 points) ``disclosed(published, target) -> str``: the homogeneity attack
  (Machanavajjhala et al. 2007) on held-out k-anonymous releases and targets, some of
  whose classes disclose the condition and some not;
* Task 3 (1 point) ``distinct_l(table, quasi_identifiers, sensitive) -> int`` on
  held-out tables, compared with :func:`dpteach.anonymity.l_diversity`;
* Task 4a (1 point) ``ordered_emd(class_values, table_values) -> float`` and
  Task 4b (1 point) ``t_ordered(table, quasi_identifiers, sensitive) -> float``: the
  Earth Mover's Distance with the ordered ground distance (Li, Li &
  Venkatasubramanian 2007), compared with :func:`dpteach.anonymity.emd` and
  :func:`dpteach.anonymity.t_closeness` on held-out data.

Tasks 3 and 4 ask the student to compute the quantity with pandas/numpy; calling the
package's own ``l_diversity``, ``t_closeness``, ``emd`` or ``class_report`` inside the
function is noticed and fails the task.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from ... import anonymity as an
from . import Task
from ._student import (call, collect_values, error_text, fail, field, first_problem, g,
                       missing_answer, number, ok, problem_feedback, short)

QIS = ["Zip Code", "Age", "Nationality"]
SENSITIVE = "Condition"
K = 4
NATIONALITIES = ["American", "Indian", "Japanese", "Russian", "Brazilian", "Nigerian"]
CONDITIONS = ["Heart Disease", "Viral Infection", "Cancer", "Flu", "Asthma"]


# ------------------------------------------------------------------ reading generalised values
_NUM = r"[-+]?\d+(?:\.\d+)?"


def age_interval(label):
    """The ages a released Age value stands for, as (low, high, low_closed,
    high_closed), or None if the value cannot be read. Accepted: the age itself (a
    number or its text), ``*``, ``lo-hi`` (both ends included, as
    :func:`dpteach.anonymity.bucket_ages` writes them), ``[lo, hi)`` and other
    brackets, ``< a``, ``<= a``/``≤ a``, ``> a``, ``>= a``/``≥ a``, and digit patterns
    such as ``3*`` (30-39)."""
    if isinstance(label, (bool, np.bool_)):
        return None
    v = number(label)
    if v is not None:
        return (v, v, True, True)
    if not isinstance(label, str):
        return None
    s = label.strip().replace("–", "-").replace("—", "-")
    if s == "*":
        return (-math.inf, math.inf, True, True)
    if re.fullmatch(_NUM, s):
        v = float(s)
        return (v, v, True, True)
    m = re.fullmatch(rf"({_NUM})\s*-\s*({_NUM})", s)
    if m:
        return (float(m[1]), float(m[2]), True, True)
    m = re.fullmatch(rf"([\[(])\s*({_NUM}|-inf)\s*,\s*({_NUM}|inf)\s*([\])])", s)
    if m:
        return (float(m[2]), float(m[3]), m[1] == "[", m[4] == "]")
    m = re.fullmatch(rf"(<=|≤|<|>=|≥|>)\s*({_NUM})", s)
    if m:
        op, a = m[1], float(m[2])
        return {"<": (-math.inf, a, True, False), "<=": (-math.inf, a, True, True),
                "≤": (-math.inf, a, True, True), ">": (a, math.inf, False, True),
                ">=": (a, math.inf, True, True), "≥": (a, math.inf, True, True)}[op]
    m = re.fullmatch(r"(\d*)(\*+)", s)
    if m:
        digits, stars = m[1], len(m[2])
        if not digits:
            return None
        lo = int(digits) * 10**stars
        return (float(lo), float(lo + 10**stars - 1), True, True)
    return None


def age_matches(label, age) -> bool:
    """Could a person of this ``age`` have been released with this Age ``label``?"""
    iv = age_interval(label)
    if iv is None:
        return False
    lo, hi, lo_closed, hi_closed = iv
    a = float(age)
    return (a > lo or (lo_closed and a == lo)) and (a < hi or (hi_closed and a == hi))


def zip_matches(label, zip_code) -> bool:
    """Is the released ZIP ``label`` the code itself with some digits masked by ``*``
    (or ``*`` alone)?"""
    s, z = str(label).strip(), str(zip_code).strip()
    if s == "*":
        return True
    return len(s) == len(z) and all(c == d or c == "*" for c, d in zip(s, z))


def nationality_matches(label, nationality) -> bool:
    """The nationality itself, ``*``, or a set of values naming it ("American/Indian")."""
    s, n = str(label).strip(), str(nationality).strip()
    if s in ("*", n):
        return True
    return n in [t.strip() for t in re.split(r"[,/|{}]", s) if t.strip()]


_MATCHERS = {"Zip Code": zip_matches, "Age": age_matches, "Nationality": nationality_matches}


# ------------------------------------------------------------------ held-out tables
def _areas(rng, count, keep):
    """``count`` distinct ZIP prefixes of ``keep`` digits (first digit 1-9)."""
    out = set()
    while len(out) < count:
        out.add(str(int(rng.integers(10 ** (keep - 1), 10**keep))))
    return sorted(out)


def hospital_table(rng, n=None) -> pd.DataFrame:
    """A held-out table shaped like seed 004's hospital records: Zip Code (5-digit
    text, 2-3 areas of at least 4 people, a few codes per area), Age (18-89),
    Nationality, Condition; index labels are distinct integers that are not 0..n-1."""
    n = int(rng.integers(16, 33)) if n is None else int(n)
    n_areas = int(rng.integers(2, 4))
    areas = _areas(rng, n_areas, 3)
    codes = {a: [a + f"{int(x):02d}" for x in rng.choice(100, int(rng.integers(2, 5)),
                                                           replace=False)] for a in areas}
    area_of = np.concatenate([np.arange(n_areas).repeat(4),
                              rng.integers(0, n_areas, n - 4 * n_areas)])
    rng.shuffle(area_of)
    zips = [str(rng.choice(codes[areas[i]])) for i in area_of]
    table = pd.DataFrame({
        "Zip Code": zips,
        "Age": rng.integers(18, 90, n).astype(int),
        "Nationality": rng.choice(NATIONALITIES, n),
        "Condition": rng.choice(CONDITIONS, n),
    })
    table.index = np.sort(rng.choice(np.arange(1, 1000), n, replace=False))
    return table


# ------------------------------------------------------------------ Task 1: generalise
def _t1_request(rng):
    return {"tables": [hospital_table(rng) for _ in range(3)]}, None


def _t1_collect(answers, request):
    if missing_answer(answers, ["generalise"]):
        return {"unsolved": True}
    out = []
    for table in request["tables"]:
        res, problem = call(answers["generalise"], table.copy())
        if problem is not None:
            out.append(problem)
        elif not isinstance(res, pd.DataFrame):
            out.append({"type": type(res).__name__})
        else:
            out.append({"table": res})
    return {"results": out}


def _t1_one(key, i, released, original):
    """None if ``released`` is a good 4-anonymous generalisation of ``original``, else
    the failing Feedback."""
    where = f"on held-out table {i + 1} ({len(original)} rows)"
    missing = [c for c in QIS + [SENSITIVE] if c not in released.columns]
    if missing:
        return fail(key, f"{where} the result has no column {missing[0]!r}. Keep the three "
                         "quasi-identifier columns (generalise their values, or replace them "
                         "by '*') and the Condition column.", "columns")
    labels = list(released.index)
    if len(set(map(repr, labels))) != len(labels):
        return fail(key, f"{where} the result repeats row labels; every person appears once "
                         "(copying rows to fill up a class is not generalisation).", "rows")
    orig_labels = {repr(x): x for x in original.index}
    unknown = [x for x in labels if repr(x) not in orig_labels]
    if unknown:
        return fail(key, f"{where} row label {short(unknown[0])} is not in the original table: "
                         "keep the original index (no reset_index, no new rows).", "rows")
    dropped = len(original) - len(labels)
    if dropped > 0:
        return fail(key, f"{where} {dropped} row(s) were deleted. Generalise values instead "
                         "of deleting people.", "suppressed", dropped=dropped)
    for lab in labels:
        row, orig = released.loc[lab], original.loc[orig_labels[repr(lab)]]
        if str(row[SENSITIVE]) != str(orig[SENSITIVE]):
            return fail(key, f"{where} row {short(lab)} has Condition {short(row[SENSITIVE])}, "
                             f"originally {orig[SENSITIVE]!r}. Generalise the quasi-identifiers, "
                             "never the sensitive value.", "sensitive_changed")
        for q in QIS:
            if not _MATCHERS[q](row[q], orig[q]):
                return fail(key, f"{where} row {short(lab)} has {q} = {short(row[q])}, which "
                                 f"does not cover its true value {orig[q]!r}. A generalised "
                                 "value must stay true: mask ZIP digits with '*', replace an "
                                 "age by a range holding it ('30-39', '< 30', '3*'), or use "
                                 "'*'.", "untruthful", column=q)
    view = released[QIS].astype(str)
    k_found = an.k_anonymity(view, QIS)
    classes = an.equivalence_classes(view, QIS)
    if k_found < K:
        small = classes.loc[classes["size"].idxmin()]
        combo = ", ".join(f"{q} = {small[q]!r}" for q in QIS)
        return fail(key, f"{where} the smallest equivalence class has {k_found} row(s), {K} "
                         f"needed: {combo}. Fixed rules that suit seed 004's table need not "
                         "suit another: generalise step by step until every class has 4 rows.",
                    "too_small", k=k_found)
    if len(classes) < 2:
        return fail(key, f"{where} every row looks alike (one equivalence class): 4-anonymous, "
                         "but the release says nothing about ZIP, age or nationality. Stop "
                         "generalising as soon as the table is 4-anonymous (each of these "
                         "tables has at least two ZIP areas of 4 or more people).",
                    "useless", classes=1)
    return None


def _t1_judge(data, request, truth):
    key = "Task 1"
    tables = field(request, "tables", [])
    kind, item = first_problem(data, len(tables))
    if kind is not None:
        return problem_feedback(key, kind, item, "generalise(table)")
    shapes = []
    for i, (item, original) in enumerate(zip(data["results"], tables)):
        if "type" in item or not isinstance(item.get("table"), pd.DataFrame):
            return fail(key, f"generalise returned {short(item.get('type', 'something'))}, not a "
                             "pandas DataFrame.", "type")
        try:
            bad = _t1_one(key, i, item["table"], original)
        except Exception as exc:                   # malformed table: never raise
            return fail(key, f"could not read the generalised table {i + 1} ({error_text(exc)}).",
                        "malformed")
        if bad is not None:
            return bad
        classes = an.equivalence_classes(item["table"][QIS].astype(str), QIS)
        shapes.append(f"{len(original)} rows -> {len(classes)} classes, k = "
                      f"{int(classes['size'].min())}")
    return ok(key, f"all {len(tables)} held-out tables generalised truthfully to 4-anonymity "
                   f"with every row kept ({'; '.join(shapes)}).")


# ------------------------------------------------------------------ Task 2: homogeneity attack
def _release(rng):
    """(published, raw) for the homogeneity task: a k-anonymous release with global
    recoding (ZIP prefix, age buckets, nationality '*'), at least one homogeneous class
    and one mixed class, rows shuffled."""
    keep = int(rng.choice([2, 3]))
    areas = _areas(rng, int(rng.integers(2, 4)), keep)
    inner = np.sort(rng.choice([30, 40, 50, 60, 70], int(rng.integers(2, 4)), replace=False))
    edges = np.concatenate([[18], inner, [90]]).astype(int)
    style = int(rng.integers(2))
    if style == 0:
        labels = [f"{a}-{b - 1}" for a, b in zip(edges[:-1], edges[1:])]
    else:
        labels = ([f"< {edges[1]}"] + [f"{a // 10}*" if b - a == 10 else f"{a}-{b - 1}"
                                       for a, b in zip(edges[1:-2], edges[2:-1])]
                  + [f"≥ {edges[-2]}"])
    cells = [(a, j) for a in range(len(areas)) for j in range(len(labels))]
    chosen = [cells[i] for i in rng.choice(len(cells), min(len(cells), int(rng.integers(3, 6))),
                                           replace=False)]
    homogeneous = rng.random(len(chosen)) < 0.45
    homogeneous[0], homogeneous[1] = True, False
    rows = []
    for (a, j), homo in zip(chosen, homogeneous):
        size = int(rng.integers(K, K + 3))
        if homo:
            conds = [str(rng.choice(CONDITIONS))] * size
        else:
            conds = list(rng.choice(CONDITIONS, size))
            while len(set(conds)) < 2:
                conds = list(rng.choice(CONDITIONS, size))
        for c in conds:
            z = areas[a] + "".join(str(int(d)) for d in rng.integers(0, 10, 5 - keep))
            age = int(rng.integers(edges[j], edges[j + 1]))
            rows.append((z, age, str(rng.choice(NATIONALITIES)), str(c),
                         areas[a] + "*" * (5 - keep), labels[j], homo))
    order = rng.permutation(len(rows))
    rows = [rows[i] for i in order]
    raw = pd.DataFrame([r[:4] for r in rows], columns=QIS + [SENSITIVE])
    published = pd.DataFrame({"Zip Code": [r[4] for r in rows], "Age": [r[5] for r in rows],
                              "Nationality": ["*"] * len(rows),
                              "Condition": [r[3] for r in rows]})
    raw.index = published.index = pd.RangeIndex(1, len(rows) + 1)
    return published, raw


def _expected_disclosure(published, target):
    mask = np.ones(len(published), bool)
    for q in QIS:
        mask &= np.array([_MATCHERS[q](v, target[q]) for v in published[q]])
    values = published.loc[mask, SENSITIVE].unique().tolist()
    return values[0] if len(values) == 1 else "none", int(mask.sum())


def _disclosure_on(published, target, columns):
    """What a slip that matches the target on ``columns`` only would answer."""
    mask = np.ones(len(published), bool)
    for q in columns:
        mask &= np.array([_MATCHERS[q](v, target[q]) for v in published[q]])
    values = published.loc[mask, SENSITIVE].unique().tolist()
    return values[0] if len(values) == 1 else "none"


#: the known slips of Task 2: matching the target on some quasi-identifiers only
_T2_SLIPS = (("Zip Code",), ("Age",), ("Zip Code", "Nationality"), ("Age", "Nationality"))


def _t2_request(rng):
    """Redrawn (within the request, from its own rng) until at least two targets are
    disclosed and two are not, and every slip of :data:`_T2_SLIPS` answers wrongly for
    at least one target: a property of every draw, not of lucky seeds."""
    while True:
        releases, targets, truth = [], [], []
        for r in range(2):
            published, raw = _release(rng)
            releases.append(published)
            for i in rng.choice(len(raw), 3, replace=False):
                target = {"Zip Code": str(raw.iloc[i]["Zip Code"]), "Age": int(raw.iloc[i]["Age"]),
                          "Nationality": str(raw.iloc[i]["Nationality"])}
                expected, _ = _expected_disclosure(published, target)
                targets.append({"release": r, "target": target})
                truth.append(expected)
        n_disclosed = sum(t != "none" for t in truth)
        if not 2 <= n_disclosed <= len(truth) - 2:
            continue
        if all(any(_disclosure_on(releases[t["release"]], t["target"], slip) != expected
                   for t, expected in zip(targets, truth)) for slip in _T2_SLIPS):
            return {"releases": releases, "targets": targets}, truth


def _t2_collect(answers, request):
    if missing_answer(answers, ["disclosed"]):
        return {"unsolved": True}
    out = []
    for item in request["targets"]:
        table = request["releases"][item["release"]].copy()
        res, problem = call(answers["disclosed"], table, dict(item["target"]))
        out.append(problem if problem is not None else {"answer": res if isinstance(res, str)
                                                        else {"type": type(res).__name__,
                                                              "repr": short(res)}})
    return {"results": out}


def _t2_judge(data, request, truth):
    key = "Task 2"
    targets = field(request, "targets", [])
    kind, item = first_problem(data, len(targets))
    if kind is not None:
        return problem_feedback(key, kind, item, "disclosed(published, target)")
    right = 0
    for item, target, expected in zip(data["results"], targets, truth):
        found = item.get("answer")
        if not isinstance(found, str):
            return fail(key, f"disclosed returned {short(field(found, 'repr', found))}; return "
                             "the disclosed condition as a string, or the string \"none\".",
                        "type")
        if found.strip().lower() == str(expected).strip().lower():
            right += 1
            continue
        who = target["target"]
        hint = ("the target's class holds more than one condition, so nothing is disclosed "
                "with certainty" if expected == "none" else
                "every row of the target's class has the same condition")
        return fail(key, f"for a target with ZIP {who['Zip Code']}, age {who['Age']}, "
                         f"nationality {who['Nationality']} in a held-out release, expected "
                         f"{expected!r}, found {found!r}: {hint}. Hint: a released value covers "
                         "the target when the ZIP agrees outside the '*', the age lies in the "
                         "range ('30-39', '< 30', '≥ 60', '3*') and the nationality is equal or "
                         "'*'; match all three quasi-identifiers.", "wrong",
                    right=right, of=len(truth))
    n_dis = sum(t != "none" for t in truth)
    return ok(key, f"all {len(truth)} targets right on 2 held-out releases ({n_dis} disclosed "
                   f"by a homogeneous class, {len(truth) - n_dis} safe in a mixed one).")


# ------------------------------------------------------------------ Tasks 3 and 4: l and t
_FORBIDDEN = ("dpteach.anonymity:l_diversity", "dpteach.anonymity:t_closeness",
              "dpteach.anonymity:emd", "dpteach.anonymity:class_report",
              "dpteach.attacks.anonymity_attacks:homogeneity_attack")


def classed_table(rng, *, ordered=False) -> tuple:
    """(table, quasi_identifiers, sensitive): a held-out generalised table of 3-5
    classes of 3-6 rows. Column names vary between draws. With ``ordered`` the
    sensitive column holds salaries (integer thousands with uneven gaps), otherwise
    diseases; classes range from homogeneous to fully diverse."""
    schema = [(["ZIP Code", "Age"], "Disease" if not ordered else "Salary"),
              (["Zip", "Age group", "Sex"], "Diagnosis" if not ordered else "Income"),
              (["Postcode", "Birth decade"], "Condition" if not ordered else "Wage")]
    qis, sensitive = schema[int(rng.integers(len(schema)))]
    n_classes = int(rng.integers(3, 6))
    if ordered:
        pool = np.sort(rng.choice(np.arange(3, 60), int(rng.integers(6, 10)), replace=False))
    else:
        pool = np.array(["gastritis", "flu", "bronchitis", "pneumonia", "gastric ulcer",
                         "stomach cancer", "asthma"])
    rows, combos = [], set()
    while len(combos) < n_classes:
        combos.add(tuple(f"{q[:1]}{int(rng.integers(1, 9))}{'*' * int(rng.integers(1, 3))}"
                         for q in qis))
    for combo in sorted(combos):
        size = int(rng.integers(3, 7))
        n_distinct = int(rng.integers(1, min(size, 4) + 1))
        vals = rng.choice(pool, n_distinct, replace=False)
        draw = np.concatenate([vals, rng.choice(vals, size - n_distinct)])
        for v in draw:
            rows.append(list(combo) + [v.item() if hasattr(v, "item") else v])
    order = rng.permutation(len(rows))
    table = pd.DataFrame([rows[i] for i in order], columns=qis + [sensitive])
    if ordered:
        table[sensitive] = table[sensitive].astype(int)
    table.index = pd.RangeIndex(1, len(table) + 1)
    return table, qis, sensitive


def _tables_request(rng, n, ordered, measure):
    while True:
        items = [classed_table(rng, ordered=ordered) for _ in range(n)]
        truth = [measure(t, q, s) for t, q, s in items]
        if len(set(truth)) >= 2 or n == 1:
            break
    return {"tables": [{"table": t, "quasi_identifiers": q, "sensitive": s}
                       for t, q, s in items]}, truth


def _collect_tables(answers, request, name):
    return collect_values(answers, name, ((item["table"].copy(), list(item["quasi_identifiers"]),
                                           item["sensitive"]) for item in request["tables"]),
                          forbidden=_FORBIDDEN)


def _judge_numbers(key, data, n, truth, *, signature, what, rel, describe, hint_for):
    """Compare the student's numbers (data["results"][i]["value"]) with ``truth``;
    ``describe(i)`` names held-out input i, ``hint_for(i, found)`` explains a miss."""
    kind, item = first_problem(data, n)
    if kind is not None:
        return problem_feedback(key, kind, item, signature)
    used = field(data, "used", [])
    if isinstance(used, list) and used:
        return fail(key, f"your function called {', '.join(map(str, used))}: this task asks "
                         "you to compute the number yourself with pandas/numpy (the check "
                         "compares with those functions).", "forbidden", used=used)
    for i, (item, expected) in enumerate(zip(data["results"], truth)):
        found = item.get("value")
        if not isinstance(found, float):
            return fail(key, f"{signature} returned {short(field(found, 'repr', found))}; "
                             "expected one number.", "type")
        if not math.isclose(found, expected, rel_tol=rel, abs_tol=1e-9):
            try:
                hint = hint_for(i, found)
            except Exception:                       # a hint must never break the verdict
                hint = ""
            return fail(key, f"{describe(i)}: expected {what} = {g(expected)}, found "
                             f"{g(found)}. {hint}".strip(), "wrong",
                        expected=expected, found=found)
    return ok(key, f"{what} right on all {len(truth)} held-out inputs "
                   f"({', '.join(g(t) for t in truth)}).")


def _describe_table(request):
    def describe(i):
        spec = request["tables"][i]
        return (f"on held-out table {i + 1} (quasi-identifiers {spec['quasi_identifiers']}, "
                f"sensitive {spec['sensitive']!r}, {len(spec['table'])} rows)")
    return describe


def _l_truth(t, q, s):
    return float(an.l_diversity(t, q, s))


def _t3_request(rng):
    return _tables_request(rng, 3, False, _l_truth)


def _t3_collect(answers, request):
    return _collect_tables(answers, request, "distinct_l")


def _t3_judge(data, request, truth):
    def hint(i, found):
        spec = request["tables"][i]
        t, q, sens = spec["table"], spec["quasi_identifiers"], spec["sensitive"]
        if math.isclose(found, an.k_anonymity(t, q)):
            return ("That is k, the smallest class SIZE; ℓ counts DIFFERENT sensitive values "
                    "in a class.")
        if math.isclose(found, an.class_report(t, q, sens)["l_distinct"].max()):
            return "That is the most diverse class; the table's ℓ is its weakest class's."
        return ("Hint: group by the quasi-identifiers, count distinct sensitive values per "
                "class (nunique), take the minimum.")
    return _judge_numbers("Task 3", data, len(field(request, "tables", [])), truth,
                          signature="distinct_l(...)", what="distinct ℓ", rel=1e-9,
                          describe=_describe_table(request), hint_for=hint)


def _t4b_truth(t, q, s):
    return float(an.t_closeness(t, q, s, ordered=True))


def _t4a_request(rng):
    pairs, truth = [], []
    for _ in range(4):
        table, qis, s = classed_table(rng, ordered=True)
        values = table[s].to_numpy()
        cls = rng.choice(values, int(rng.integers(2, 6)), replace=False)
        distinct = np.unique(values)
        p = np.array([np.sum(cls == v) for v in distinct], float)
        q = np.array([np.sum(values == v) for v in distinct], float)
        pairs.append({"class_values": [int(v) for v in cls],
                      "table_values": [int(v) for v in values]})
        truth.append(an.emd(p, q, ordered=True))
    return {"pairs": pairs}, truth


def _t4a_collect(answers, request):
    return collect_values(answers, "ordered_emd",
                          ((list(p["class_values"]), list(p["table_values"]))
                           for p in request["pairs"]), forbidden=_FORBIDDEN)


def _t4a_judge(data, request, truth):
    pairs = field(request, "pairs", [])

    def describe(i):
        p = pairs[i]
        return (f"for the class {p['class_values']} in a table of {len(p['table_values'])} "
                f"values ({len(set(p['table_values']))} distinct)")

    def hint(i, found):
        vals = np.unique(pairs[i]["table_values"])
        cls = np.asarray(pairs[i]["class_values"])
        p = [np.sum(cls == v) for v in vals]
        q = [np.sum(np.asarray(pairs[i]["table_values"]) == v) for v in vals]
        if math.isclose(found, an.emd(p, q, ordered=False), rel_tol=1e-6):
            return ("That is the equal ground distance (half the L1 distance); here values "
                    "are ordered: moving mass from 3K to 4K costs less than to 11K.")
        return ("Hint: over the m distinct values of the whole table in increasing order, add "
                "up |P_i − Q_i| of the two cumulative distributions and divide by m − 1 (the "
                "ground distance uses ranks, not the values themselves).")
    return _judge_numbers("Task 4a", data, len(pairs), truth, signature="ordered_emd(...)",
                          what="ordered EMD", rel=1e-6, describe=describe, hint_for=hint)


def _t4b_request(rng):
    return _tables_request(rng, 3, True, _t4b_truth)


def _t4b_collect(answers, request):
    return _collect_tables(answers, request, "t_ordered")


def _t4b_judge(data, request, truth):
    def hint(i, found):
        spec = request["tables"][i]
        t, q, sens = spec["table"], spec["quasi_identifiers"], spec["sensitive"]
        if math.isclose(found, an.t_closeness(t, q, sens, ordered=False), rel_tol=1e-6):
            return ("That is the equal ground distance's t; salaries are ordered, so use the "
                    "ordered distance |i − j| / (m − 1).")
        return ("Hint: for every class, the ordered EMD between its values and the whole "
                "table's; t is the largest.")
    return _judge_numbers("Task 4b", data, len(field(request, "tables", [])), truth,
                          signature="t_ordered(...)", what="t (ordered)", rel=1e-6,
                          describe=_describe_table(request), hint_for=hint)


TASKS = [
    Task(key="Task 1", points=2, names=("generalise",),
         title="Generalise held-out tables to 4-anonymity", request=_t1_request,
         collect=_t1_collect, judge=_t1_judge),
    Task(key="Task 2", points=2, names=("disclosed",),
         title="The homogeneity attack on held-out releases", request=_t2_request,
         collect=_t2_collect, judge=_t2_judge),
    Task(key="Task 3", points=1, names=("distinct_l",), title="Distinct ℓ-diversity, computed",
         request=_t3_request, collect=_t3_collect, judge=_t3_judge, forbidden=_FORBIDDEN),
    Task(key="Task 4a", points=1, names=("ordered_emd",),
         title="The ordered Earth Mover's Distance", request=_t4a_request,
         collect=_t4a_collect, judge=_t4a_judge, forbidden=_FORBIDDEN),
    Task(key="Task 4b", points=1, names=("t_ordered",),
         title="t-closeness with the ordered distance", request=_t4b_request,
         collect=_t4b_collect, judge=_t4b_judge, forbidden=_FORBIDDEN),
]
