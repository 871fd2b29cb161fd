"""k-anonymity, l-diversity, t-closeness, generalisation and the attacks, checked
against seed 004's tables, the worked numbers of Li, Li & Venkatasubramanian 2007,
brute-force per-class references and scipy.stats.wasserstein_distance."""

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpteach as dp
from dpteach import anonymity as an
from dpteach import attacks
from dpteach import datasets as ds

VISIT_QI = ["Race", "Birth", "Gender", "ZIP"]
COND_QI = ["Zip Code", "Age", "Nationality"]
SAL_QI = ["ZIP Code", "Age"]


# -- brute-force references: one class at a time, straight from the definitions ---------
def _classes(df, qis, s=None):
    """{QI tuple: list of sensitive values} in plain Python (fast for small tables)."""
    qis = [qis] if isinstance(qis, str) else list(qis)
    keys = list(zip(*(df[q].tolist() for q in qis)))
    vals = df[s].tolist() if s is not None else [None] * len(df)
    out = {}
    for key, v in zip(keys, vals):
        out.setdefault(key, []).append(v)
    return list(out.values())


def ref_k(df, qis):
    return min(len(g) for g in _classes(df, qis))


def ref_l_distinct(df, qis, s):
    return min(len(set(g)) for g in _classes(df, qis, s))


def ref_l_entropy(df, qis, s):
    return math.exp(min(stats.entropy(list(Counter(g).values())) for g in _classes(df, qis, s)))


def ref_l_recursive(df, qis, s, c):
    best = []
    for g in _classes(df, qis, s):
        r = sorted(Counter(g).values(), reverse=True)
        ls = [l for l in range(1, len(r) + 1) if r[0] < c * sum(r[l - 1:])]
        best.append(max(ls, default=0))
    return min(best)


def ref_t(df, qis, s, *, ordered, use_values=False):
    vals = sorted(set(df[s].tolist()))
    n = len(df)
    whole = Counter(df[s].tolist())
    q = np.array([whole[v] / n for v in vals])
    worst = 0.0
    for g in _classes(df, qis, s):
        cnt = Counter(g)
        p = np.array([cnt[v] / len(g) for v in vals])
        if not ordered:
            d = 0.5 * np.abs(p - q).sum()
        elif len(vals) == 1:
            d = 0.0
        elif use_values:  # WRONG twin: ground distance on raw values instead of ranks
            x = np.asarray(vals, float)
            d = stats.wasserstein_distance(x, x, p, q) / (x[-1] - x[0])
        else:
            r = np.arange(len(vals))
            d = stats.wasserstein_distance(r, r, p, q) / (len(vals) - 1)
        worst = max(worst, d)
    return worst


def random_table(rng, n=None, m=None):
    n = int(rng.integers(1, 80)) if n is None else n
    m = int(rng.integers(1, 9)) if m is None else m
    spaced = np.array([1, 2, 4, 7, 11, 16, 22, 29, 37])[:m]  # unevenly spaced values
    return pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.choice(["x", "y"], n),
                         "c": rng.integers(0, 2, n), "s": spaced[rng.integers(0, m, n)]})



# -- the seed tables ------------------------------------------------------------------------
def test_lazy_access():
    assert dp.anonymity.k_anonymity is an.k_anonymity


def test_hospital_visits_classes():
    t = ds.hospital_visits()
    classes = an.equivalence_classes(t, VISIT_QI)
    assert classes["size"].tolist() == [2, 2, 3]
    assert classes["rows"].tolist() == [["t1", "t2"], ["t3", "t4"], ["t5", "t6", "t7"]]
    assert an.equivalence_class_ids(t, VISIT_QI).tolist() == [0, 0, 1, 1, 2, 2, 2]
    assert an.k_anonymity(t, VISIT_QI) == 2
    assert an.l_diversity(t, VISIT_QI, "Problem") == 2
    assert an.l_diversity(t, VISIT_QI, "Problem", kind="entropy") == 2.0
    # overall (chest pain 3/7, obesity 2/7, short breath 2/7); class {t1,t2} is at 2/7
    assert an.t_closeness(t, VISIT_QI, "Problem") == pytest.approx(2 / 7, abs=1e-15)
    # a wrong twin that forgets the 1/2 of total variation is caught
    assert an.t_closeness(t, VISIT_QI, "Problem") != pytest.approx(4 / 7)


def test_twelve_row_table_and_its_4_anonymous_version():
    raw, anon = ds.hospital_conditions(), ds.hospital_conditions_4anonymous()
    assert an.k_anonymity(raw, COND_QI) == 1                # every row is unique
    assert an.k_anonymity(anon, COND_QI) == 4
    assert an.equivalence_classes(anon, COND_QI)["rows"].tolist() == [
        [1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
    assert an.l_diversity(anon, COND_QI, "Condition") == 1  # the 3* class is all Cancer
    assert an.l_diversity(anon, COND_QI, "Condition", kind="entropy") == 1.0
    # class 3*: Cancer 1 against 5/12 overall -> EMD = 7/12
    assert an.t_closeness(anon, COND_QI, "Condition") == pytest.approx(7 / 12, abs=1e-15)
    pd.testing.assert_frame_equal(an.generalize(raw, an.four_anonymous_rules()), anon)
    assert ds.hospital_conditions().equals(raw)             # generalize left its input alone


def test_salary_example_of_li_li_venkatasubramanian():
    t = ds.salary_disease_3diverse()
    rep = an.class_report(t, SAL_QI, "Salary", ordered=True)
    # paper: class {3K, 4K, 5K} at 0.375; {6K, 8K, 11K} at 0.167 (= 1/6)
    assert rep["emd"].iloc[0] == 0.375
    assert rep["emd"].tolist() == pytest.approx([3 / 8, 1 / 6, 17 / 72], abs=1e-15)
    assert an.t_closeness(t, SAL_QI, "Salary", ordered=True) == 0.375
    assert an.emd([1, 1, 1, 0, 0, 0, 0, 0, 0], np.ones(9), ordered=True) == pytest.approx(0.375)
    # wrong twin: with equal ground distance the same class would be at 2/3
    assert an.t_closeness(t, SAL_QI, "Salary", ordered=False) == pytest.approx(2 / 3)
    # the regrouped Table 5 has 0.167-closeness
    assert an.t_closeness(ds.salary_disease_regrouped(), SAL_QI, "Salary", ordered=True) == pytest.approx(1 / 6)


def test_disease_side_of_the_3_diverse_table():
    t = ds.salary_disease_3diverse()
    assert an.l_diversity(t, SAL_QI, "Disease") == 3
    assert an.l_diversity(t, SAL_QI, "Disease", kind="entropy") == 3.0   # exactly, not 2.999...
    assert an.l_diversity(t, SAL_QI, "Disease", kind="recursive", c=2) == 3
    assert an.l_diversity(t, SAL_QI, "Disease", kind="recursive", c=1) == 2
    # equal ground distance: each class moves 4/9 of its mass (derived by hand)
    rep = an.class_report(t, SAL_QI, "Disease")
    assert rep["emd"].tolist() == pytest.approx([4 / 9] * 3, abs=1e-15)
    assert rep["values"].iloc[0] == {"gastric ulcer": 1, "gastritis": 1, "stomach cancer": 1}


# -- agreement with references on random tables -------------------------------------------
@pytest.mark.slow
def test_metrics_match_brute_force_on_random_tables(rng):
    qis = ["a", "b", "c"]
    for _ in range(150):
        df = random_table(rng)
        assert an.k_anonymity(df, qis) == ref_k(df, qis)
        assert an.l_diversity(df, qis, "s") == ref_l_distinct(df, qis, "s")
        assert an.l_diversity(df, qis, "s", kind="entropy") == pytest.approx(
            ref_l_entropy(df, qis, "s"), rel=1e-12)
        for c in (0.5, 1, 2):
            assert an.l_diversity(df, qis, "s", kind="recursive", c=c) == \
                ref_l_recursive(df, qis, "s", c)
        assert an.t_closeness(df, qis, "s") == pytest.approx(
            ref_t(df, qis, "s", ordered=False), abs=1e-12)
        assert an.t_closeness(df, qis, "s", ordered=True) == pytest.approx(
            ref_t(df, qis, "s", ordered=True), abs=1e-12)


def test_ordered_distance_uses_ranks_not_raw_values(rng):
    # the wrong twin (raw-value ground distance) disagrees on unevenly spaced values
    differs = 0
    for _ in range(50):
        df = random_table(rng, n=40, m=6)
        got = an.t_closeness(df, ["a", "b"], "s", ordered=True)
        assert got == pytest.approx(ref_t(df, ["a", "b"], "s", ordered=True), abs=1e-12)
        differs += abs(got - ref_t(df, ["a", "b"], "s", ordered=True, use_values=True)) > 1e-6
    assert differs > 25


def test_m_counts_distinct_values_of_the_whole_table():
    # class values {1, 2}; the table also holds 3 and 4 -> m = 4, not 2
    df = pd.DataFrame({"q": [0, 0, 1, 1], "s": [1, 2, 3, 4]})
    assert an.t_closeness(df, "q", "s", ordered=True) == pytest.approx(
        (0.25 + 0.5 + 0.25) / 3)                           # |P - Q| = 1/4, 1/2, 1/4
    assert an.t_closeness(df, "q", "s", ordered=True) != pytest.approx((0.25 + 0.5 + 0.25) / 1)


def test_ordered_categorical_and_dates():
    levels = ["low", "mid", "high"]
    df = pd.DataFrame({"q": [0, 0, 1, 1], "s": pd.Categorical(
        ["low", "mid", "high", "high"], categories=levels, ordered=True)})
    # ranks low=0, mid=1, high=2: P = (1/2, 1, 1), Q = (1/4, 1/2, 1)
    assert an.t_closeness(df, "q", "s", ordered=True) == pytest.approx((0.25 + 0.5) / 2)
    # alphabetical order (high < low < mid) would give a different answer
    alpha = df.assign(s=df["s"].astype(str))
    with pytest.raises(TypeError, match="'s'"):
        an.t_closeness(alpha, "q", "s", ordered=True)
    dates = df.assign(s=pd.to_datetime(["2020-01-01", "2020-02-01", "2020-03-01", "2020-03-01"]))
    assert an.t_closeness(dates, "q", "s", ordered=True) == pytest.approx(0.375)


def test_single_class_and_single_value():
    df = pd.DataFrame({"q": [1, 1, 1], "s": ["a", "a", "a"]})
    assert an.k_anonymity(df, "q") == 3
    assert an.l_diversity(df, "q", "s") == 1
    assert an.l_diversity(df, "q", "s", kind="entropy") == 1.0
    assert an.l_diversity(df, "q", "s", kind="recursive", c=2) == 1   # 3 < 2 * 3
    assert an.l_diversity(df, "q", "s", kind="recursive", c=1) == 0   # 3 < 1 * 3 fails
    assert an.t_closeness(df, "q", "s") == 0.0
    assert an.t_closeness(df.assign(s=[5, 5, 5]), "q", "s", ordered=True) == 0.0


def test_emd_helper():
    assert an.emd([1, 0], [0, 1]) == 1.0
    assert an.emd([2, 2], [1, 3]) == pytest.approx(0.25)
    assert an.emd([1, 0, 0], [0, 0, 1], ordered=True) == 1.0
    assert an.emd([1, 0, 0], [0, 1, 0], ordered=True) == 0.5
    assert an.emd([1], [3], ordered=True) == 0.0


def test_large_table_against_pandas_groupby():
    df = ds.synthetic_patients(20000, rng=3)
    qis = ["Zip Code", "Age", "Nationality"]
    sizes = df.groupby(qis).size()
    assert an.k_anonymity(df, qis) == sizes.min()
    assert an.l_diversity(df, qis, "Condition") == df.groupby(qis)["Condition"].nunique().min()
    coarse = an.generalize(df, {"Zip Code": ("mask", 2), "Age": ("bucket", 20),
                                "Nationality": "suppress"})
    assert an.k_anonymity(coarse, qis) == coarse.groupby(qis).size().min() > 1
    assert an.t_closeness(coarse, qis, "Salary", ordered=True) == pytest.approx(
        ref_t(coarse, qis, "Salary", ordered=True), abs=1e-12)


# -- generalisation --------------------------------------------------------------------------
def test_mask_zip():
    z = pd.Series(["13053", "02138", "1485"])
    assert an.mask_zip(z, 3).tolist() == ["130**", "021**", "148*"]
    assert an.mask_zip(z, 0).tolist() == ["*****", "*****", "****"]
    assert an.mask_zip(z, 9).tolist() == z.tolist()
    assert an.mask_zip(["13053"], 2, char="#").tolist() == ["13###"]


def test_bucket_ages():
    ages = pd.Series([21, 29, 30, 47, 55])
    assert an.bucket_ages(ages, 10).tolist() == ["20-29", "20-29", "30-39", "40-49", "50-59"]
    assert an.bucket_ages(ages, 1).tolist() == ["21", "29", "30", "47", "55"]
    assert an.bucket_ages(ages, edges=[-np.inf, 30, 40, np.inf],
                          labels=["< 30", "3*", "≥ 40"]).tolist() == \
        ["< 30", "< 30", "3*", "≥ 40", "≥ 40"]
    assert an.bucket_ages([5], edges=[0, 10]).tolist() == ["[0, 10)"]


def test_suppression():
    t = ds.hospital_conditions()
    assert set(an.suppress_column(t, "Nationality")["Nationality"]) == {"*"}
    assert an.suppress_rows(t, [1, 2]).index.tolist() == list(range(3, 13))
    assert an.suppress_rows(t, t["Age"] > 40).index.tolist() == [1, 2, 3, 4, 9, 10, 11, 12]
    g = an.generalize(t, {"Zip Code": ("mask", 3), "Age": ("bucket", 10), "Nationality": "*"})
    # classes: (130**, 20-29) x4, (148**, 50-59) x2, (148**, 40-49) x2, (130**, 30-39) x4
    assert an.k_anonymity(g, COND_QI) == 2
    kept = an.suppress_small_classes(g, COND_QI, 4)
    assert an.k_anonymity(kept, COND_QI) == 4 and len(kept) == 8


def test_generalize_rules():
    t = ds.hospital_conditions()
    g = an.generalize(t, {"Nationality": "drop", "Zip Code": None,
                          "Age": lambda a: np.where(a < 40, "young", "old")})
    assert list(g.columns) == ["Zip Code", "Age", "Condition"]
    assert g["Zip Code"].equals(t["Zip Code"])
    assert g["Age"].tolist()[:5] == ["young"] * 4 + ["old"]
    assert an.generalize(t, {"Age": ("bucket", [0, 40, 100], ["<40", "40+"])})["Age"].iloc[4] == "40+"


def test_coarser_generalisation_never_lowers_k():
    t = ds.synthetic_patients(3000, rng=7)
    for width in (1, 5, 10, 20, 40):
        ks = [an.k_anonymity(an.generalize(t, {"Zip Code": ("mask", keep), "Age": ("bucket", width)}),
                             COND_QI) for keep in (5, 4, 3, 2, 1, 0)]
        assert ks == sorted(ks)


# -- attacks ---------------------------------------------------------------------------------
ATTACKS = ["linkage_attack", "homogeneity_attack", "background_knowledge_attack",
           "skewness_attack", "similarity_attack"]


def test_attacks_live_with_the_attacks_only():
    # one idea per module: the metrics in dpteach.anonymity, the attacks beside the others
    from dpteach.attacks import anonymity_attacks
    for name in ATTACKS:
        fn = getattr(attacks, name)
        assert fn is getattr(anonymity_attacks, name) and name in attacks.__all__
        assert fn.__module__ == "dpteach.attacks.anonymity_attacks"
        assert name not in an.__all__ and not hasattr(an, name)
    assert not any(name.endswith("_attack") for name in vars(an))


def test_linkage_with_voter_list():
    out = attacks.linkage_attack(ds.hospital_visits(), ds.voter_list(), VISIT_QI, "Problem")
    assert out["Name"].tolist() == ["Abe", "Bea", "Cal", "Dee", "Eve"]
    assert out["matches"].tolist() == [2, 2, 3, 0, 0]
    assert out["candidates"].iloc[1] == ("obesity", "chest pain")
    assert not out["reidentified"].any()
    assert out["disclosed"].isna().all()


def test_linkage_raw_and_generalised():
    raw = attacks.linkage_attack(ds.hospital_conditions(), ds.hospital_neighbours(), COND_QI, "Condition")
    assert raw["reidentified"].all()
    assert raw["disclosed"].tolist() == ["Cancer", "Viral Infection"]
    anon = attacks.linkage_attack(ds.hospital_conditions_4anonymous(), ds.hospital_neighbours(),
                             COND_QI, "Condition", rules=an.four_anonymous_rules())
    assert anon["matches"].tolist() == [4, 4]
    assert anon["disclosed"].tolist() == ["Cancer", None]   # Bob by homogeneity; Umeko hidden
    with pytest.raises(ValueError, match="rules"):
        attacks.linkage_attack(ds.hospital_conditions_4anonymous(), ds.hospital_neighbours(),
                          COND_QI, "Condition")


def test_homogeneity_attack():
    hit = attacks.homogeneity_attack(ds.hospital_conditions_4anonymous(), COND_QI, "Condition")
    assert hit.to_dict("records") == [{"Zip Code": "130**", "Age": "3*", "Nationality": "*",
                                       "size": 4, "disclosed": "Cancer"}]
    assert len(attacks.homogeneity_attack(ds.salary_disease_3diverse(), SAL_QI, "Disease")) == 0
    assert len(attacks.homogeneity_attack(ds.hospital_conditions(), COND_QI, "Condition")) == 12


def test_background_knowledge_attack():
    anon = ds.hospital_conditions_4anonymous()
    umeko = {"Zip Code": "130**", "Age": "< 30", "Nationality": "*"}
    prior = attacks.background_knowledge_attack(anon, COND_QI, "Condition", umeko, [])
    assert prior.to_dict() == {"Heart Disease": 0.5, "Viral Infection": 0.5}
    post = attacks.background_knowledge_attack(anon, COND_QI, "Condition", umeko, ["Heart Disease"])
    assert post.iloc[0] == 1.0 and post.index[0] == "Viral Infection"
    soft = attacks.background_knowledge_attack(anon, COND_QI, "Condition", umeko, {"Heart Disease": 0.1})
    assert soft["Viral Infection"] == pytest.approx(2 / 2.2)


def test_skewness_attack():
    # 1% positive overall; one 2-diverse class is half positive
    df = pd.DataFrame({"q": [0] * 10 + [1] * 990,
                       "s": ["pos"] * 5 + ["neg"] * 5 + ["pos"] * 5 + ["neg"] * 985})
    out = attacks.skewness_attack(df, "q", "s", "pos")
    assert out["share"].tolist() == pytest.approx([0.5, 5 / 990])
    assert out["lift"].iloc[0] == pytest.approx(50.0)
    assert out["l_distinct"].tolist() == [2, 2]
    assert an.l_diversity(df, "q", "s") == 2               # l-diversity does not notice...
    assert an.t_closeness(df, "q", "s") == pytest.approx(0.49)   # ...t-closeness does


def test_similarity_attack():
    t = ds.salary_disease_3diverse()
    out = attacks.similarity_attack(t, SAL_QI, "Disease", ds.disease_categories())
    assert out["disclosed"].tolist() == ["stomach disease", None, None]
    assert out["l_distinct"].tolist() == [3, 3, 3]
    low = attacks.similarity_attack(t, SAL_QI, "Salary", lambda s: np.where(s <= 5, "3-5K", "6K+"))
    assert low["disclosed"].tolist() == ["3-5K", "6K+", "6K+"]


# -- bad input -------------------------------------------------------------------------------
T = ds.hospital_conditions()
NAN_QI = T.astype({"Age": float}).assign(Age=[np.nan] + [30.0] * 11)
NAN_S = T.assign(Condition=[None] + ["x"] * 11)
UM = {"Zip Code": "130**", "Age": "< 30", "Nationality": "*"}
A = ds.hospital_conditions_4anonymous()

BAD = [
    (lambda: an.k_anonymity(T.to_numpy(), COND_QI), TypeError, "DataFrame"),
    (lambda: an.k_anonymity(T.iloc[:0], COND_QI), ValueError, "empty"),
    (lambda: an.k_anonymity(T, ["Zip Code", "Salary"]), ValueError, "'Salary'"),
    (lambda: an.k_anonymity(T, []), ValueError, "at least one"),
    (lambda: an.k_anonymity(T, ["Age", "Age"]), ValueError, "'Age'"),
    (lambda: an.k_anonymity(NAN_QI, COND_QI), ValueError, "'Age'"),
    (lambda: an.equivalence_classes(NAN_QI, COND_QI), ValueError, "'Age'"),
    (lambda: an.equivalence_class_ids(T, "nope"), ValueError, "'nope'"),
    (lambda: an.l_diversity(T, COND_QI, "Disease"), ValueError, "'Disease'"),
    (lambda: an.l_diversity(NAN_S, COND_QI, "Condition"), ValueError, "'Condition'"),
    (lambda: an.l_diversity(NAN_QI, COND_QI, "Condition"), ValueError, "'Age'"),
    (lambda: an.l_diversity(T, COND_QI, "Age"), ValueError, "'Age'"),
    (lambda: an.l_diversity(T, COND_QI, ["Condition"]), TypeError, "sensitive"),
    (lambda: an.l_diversity(T, COND_QI, "Condition", kind="Entropy"), ValueError, "kind"),
    (lambda: an.l_diversity(T, COND_QI, "Condition", kind="recursive"), ValueError, "c"),
    (lambda: an.l_diversity(T, COND_QI, "Condition", kind="recursive", c=0), ValueError, "c"),
    (lambda: an.l_diversity(T, COND_QI, "Condition", kind="recursive", c=np.nan), ValueError, "c"),
    (lambda: an.l_diversity(T, COND_QI, "Condition", kind="recursive", c="2"), TypeError, "c"),
    (lambda: an.l_diversity(T, COND_QI, "Condition", c=2), ValueError, "recursive"),
    (lambda: an.t_closeness(T, COND_QI, "Condition", ordered=True), TypeError, "'Condition'"),
    (lambda: an.t_closeness(T, COND_QI, "Condition", ordered="yes"), TypeError, "ordered"),
    (lambda: an.t_closeness(T.iloc[:0], COND_QI, "Condition"), ValueError, "empty"),
    (lambda: an.t_closeness(NAN_S, COND_QI, "Condition"), ValueError, "'Condition'"),
    (lambda: an.t_closeness(T, ["Zip"], "Condition"), ValueError, "'Zip'"),
    (lambda: an.class_report(T, COND_QI, "Cond"), ValueError, "'Cond'"),
    (lambda: an.emd([1, 0], [1, 0, 0]), ValueError, "same length"),
    (lambda: an.emd([1, -1], [1, 0]), ValueError, "p"),
    (lambda: an.emd([1, 0], [np.nan, 1]), ValueError, "q"),
    (lambda: an.emd([], []), ValueError, "p"),
    (lambda: an.mask_zip(T["Zip Code"], -1), ValueError, "keep"),
    (lambda: an.mask_zip(T["Zip Code"], True), TypeError, "keep"),
    (lambda: an.mask_zip(T["Zip Code"], 2.5), ValueError, "keep"),
    (lambda: an.mask_zip("13053", 2), TypeError, "values"),
    (lambda: an.mask_zip(pd.Series(["1", None], name="Zip"), 1), ValueError, "'Zip'"),
    (lambda: an.mask_zip(T["Zip Code"], 2, char="**"), ValueError, "char"),
    (lambda: an.bucket_ages(T["Age"], 0), ValueError, "width"),
    (lambda: an.bucket_ages(T["Age"], np.nan), ValueError, "width"),
    (lambda: an.bucket_ages(T["Age"]), ValueError, "width"),
    (lambda: an.bucket_ages(T["Nationality"], 10), TypeError, "numbers"),
    (lambda: an.bucket_ages(NAN_QI["Age"], 10), ValueError, "'Age'"),
    (lambda: an.bucket_ages(T["Age"], edges=[40, 30]), ValueError, "edges"),
    (lambda: an.bucket_ages(T["Age"], edges=[0, 30, 40]), ValueError, "outside"),
    (lambda: an.bucket_ages(T["Age"], edges=[0, 100], labels=["a", "b"]), ValueError, "labels"),
    (lambda: an.suppress_column(T, "Name"), ValueError, "'Name'"),
    (lambda: an.suppress_rows(T, [13]), ValueError, "13"),
    (lambda: an.suppress_rows(T.iloc[:0], [1]), ValueError, "empty"),
    (lambda: an.suppress_small_classes(T, COND_QI, 0), ValueError, "k"),
    (lambda: an.suppress_small_classes(T, COND_QI, 2), ValueError, "k=2"),
    (lambda: an.generalize(T, {"Zip": ("mask", 3)}), ValueError, "'Zip'"),
    (lambda: an.generalize(T, {"Age": "blur"}), ValueError, "'Age'"),
    (lambda: an.generalize(T, {"Age": ("bucket",)}), ValueError, "'Age'"),
    (lambda: an.generalize(T, {"Age": 3}), ValueError, "'Age'"),
    (lambda: an.generalize(T, [("Age", "*")]), TypeError, "rules"),
    (lambda: an.generalize(T, {"Age": lambda a: a[:3]}), ValueError, "'Age'"),
    (lambda: attacks.linkage_attack(A, ds.voter_list(), COND_QI, "Condition"), ValueError, "'Zip Code'"),
    (lambda: attacks.linkage_attack(A, ds.hospital_neighbours().iloc[:0], COND_QI, "Condition"),
     ValueError, "public"),
    (lambda: attacks.homogeneity_attack(A, COND_QI, "Problem"), ValueError, "'Problem'"),
    (lambda: attacks.background_knowledge_attack(A, COND_QI, "Condition", {"Zip Code": "130**"}, []),
     ValueError, "'Age'"),
    (lambda: attacks.background_knowledge_attack(A, COND_QI, "Condition", dict(UM, Age="9*"), []),
     ValueError, "no released row"),
    (lambda: attacks.background_knowledge_attack(A, COND_QI, "Condition", UM,
                                            ["Heart Disease", "Viral Infection"]),
     ValueError, "every value"),
    (lambda: attacks.background_knowledge_attack(A, COND_QI, "Condition", UM, {"Cancer": -1}),
     ValueError, "Cancer"),
    (lambda: attacks.background_knowledge_attack(A, COND_QI, "Condition", UM, "Cancer"),
     TypeError, "knowledge"),
    (lambda: attacks.skewness_attack(A, COND_QI, "Condition", "Flu"), ValueError, "'Flu'"),
    (lambda: attacks.similarity_attack(ds.salary_disease_3diverse(), SAL_QI, "Disease", {"flu": "r"}),
     ValueError, "categories"),
    (lambda: attacks.similarity_attack(ds.salary_disease_3diverse(), SAL_QI, "Disease", 3),
     TypeError, "categories"),
    (lambda: ds.synthetic_patients(0), ValueError, "n"),
]


@pytest.mark.parametrize("call, exc, text", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input(call, exc, text):
    with pytest.raises(exc, match=text.replace("*", r"\*").replace("(", r"\(")):
        call()


# -- panels (the generic sweep and timing live in tests/panels/test_panels.py) --------------------
def test_generalizer_panel_reproduces_the_seed_table():
    from dpteach import panels

    p = panels.anonymity_generalizer()
    before = p.png()
    p.controls["zip_digits"].value = 3
    p.controls["age_width"].value = "seed"
    p.controls["suppress_nationality"].value = True
    assert "k = 4" in p.status.value and "distinct ℓ = 1" in p.status.value
    assert "t = 0.583" in p.status.value                   # 7/12, the 3* class (all Cancer)
    assert p.png() != before
    p.controls["zip_digits"].value = 5
    p.controls["age_width"].value = 1
    p.controls["suppress_nationality"].value = False
    assert "12 classes · k = 1" in p.status.value          # the raw table
    table = dp.panels.anonymity.generalised_hospital_table(3, "seed", True)
    assert an.k_anonymity(table, COND_QI) == 4


def test_skewness_and_emd_panels():
    from dpteach import panels
    from dpteach.datasets import skewed_table

    table, x = skewed_table(50, 0.5)
    assert x == 25 and (table["test"] == "positive").sum() == 100 and len(table) == 10_000
    assert an.class_report(table, "class", "test")["l_distinct"].iloc[0] == 2   # the class
    p = panels.anonymity_skewness()
    assert "25 of 50 positive" in p.status.value and "EMD to the table = 0.490" in p.status.value
    p.controls["class_share"].value = 0.02
    assert "1 of 50 positive" in p.status.value
    e = panels.anonymity_emd_salary()
    assert "ordered EMD = 0.375" in e.status.value and "t (ordered) = 0.375" in e.status.value
    e.controls["grouping"].value = "regrouped (Li et al.'s Table 5)"
    assert "t (ordered) = 0.1667" in e.status.value


# ------------------------------------------------- one class numbering in notebook 01
# (the salary panel's classes are numbered as an.class_report prints them)
def test_salary_panel_numbers_classes_as_the_printed_report_does():
    from dpteach import panels
    from dpteach.datasets import salary_groupings

    panel = panels.anonymity_emd_salary()
    options = panel.controls["class_index"]._options_full
    for grouping, table in salary_groupings().items():
        report = an.class_report(table, ["ZIP Code", "Age"], "Salary", ordered=True)
        panel.controls["grouping"].value = grouping
        for label, index in options:
            assert label == f"class {report.index[index]}"          # "class 0" is row 0
            panel.controls["class_index"].value = index
            members = sorted(int(s) for s in report["values"].iloc[index])
            assert "{" + ", ".join(f"{s}K" for s in members) + "}" in panel.status.value
    panel.close()
