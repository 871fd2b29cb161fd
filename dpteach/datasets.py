"""The seed tables, with the rows and column names printed in the course sources, and
seeded synthetic populations.

Every function returns a fresh pandas DataFrame, so a notebook may modify its copy.
Seed 004 (Ayday's lecture slides) prints all of these tables.
"""

from __future__ import annotations

import pandas as pd

from ._support.validate import PositiveInt, Probability, Rng, checked

__all__ = ["hospital_visits", "hospital_conditions", "hospital_conditions_4anonymous",
           "salary_disease_3diverse", "salary_disease_regrouped", "sickle_cell", "blood_sugar",
           "phd_students"]


def hospital_visits() -> pd.DataFrame:
    """Seed 004's k-anonymity example, rows t1-t7 (Sweeney 2002's setting): the
    quasi-identifiers Race, Birth, Gender, ZIP and the sensitive Problem. ZIP is a
    string so that leading zeros survive. Notebook 01."""
    rows = [
        ("t1", "Black", 1965, "m", "02141", "short breath"),
        ("t2", "Black", 1965, "m", "02141", "chest pain"),
        ("t3", "Black", 1964, "f", "02138", "obesity"),
        ("t4", "Black", 1964, "f", "02138", "chest pain"),
        ("t5", "White", 1964, "m", "02138", "chest pain"),
        ("t6", "White", 1964, "m", "02138", "obesity"),
        ("t7", "White", 1964, "m", "02138", "short breath"),
    ]
    df = pd.DataFrame(rows, columns=["id", "Race", "Birth", "Gender", "ZIP", "Problem"])
    return df.set_index("id")


def hospital_conditions() -> pd.DataFrame:
    """Seed 004's 12-row hospital records table (a): Zip Code, Age, Nationality and the
    sensitive Condition, indexed 1-12 as printed. Notebook 01."""
    rows = [
        ("13053", 28, "Russian", "Heart Disease"),
        ("13068", 29, "American", "Heart Disease"),
        ("13068", 21, "Japanese", "Viral Infection"),
        ("13053", 23, "American", "Viral Infection"),
        ("14853", 50, "Indian", "Cancer"),
        ("14853", 55, "Russian", "Heart Disease"),
        ("14850", 47, "American", "Viral Infection"),
        ("14850", 49, "American", "Viral Infection"),
        ("13053", 31, "American", "Cancer"),
        ("13053", 37, "Indian", "Cancer"),
        ("13068", 36, "Japanese", "Cancer"),
        ("13068", 35, "American", "Cancer"),
    ]
    df = pd.DataFrame(rows, columns=["Zip Code", "Age", "Nationality", "Condition"])
    df.index = pd.RangeIndex(1, 13)
    return df


def hospital_conditions_4anonymous() -> pd.DataFrame:
    """Seed 004's 4-anonymous version (b) of :func:`hospital_conditions`: ZIP codes
    masked (130**, 1485*), ages bucketed (< 30, >= 40, 3*), nationality suppressed (*).
    Notebook 01."""
    zips = ["130**"] * 4 + ["1485*"] * 4 + ["130**"] * 4
    ages = ["< 30"] * 4 + ["≥ 40"] * 4 + ["3*"] * 4
    cond = hospital_conditions()["Condition"].tolist()
    df = pd.DataFrame({"Zip Code": zips, "Age": ages, "Nationality": ["*"] * 12, "Condition": cond})
    df.index = pd.RangeIndex(1, 13)
    return df


def salary_disease_3diverse() -> pd.DataFrame:
    """Seed 004's 3-diverse table: ZIP Code, Age (generalised), Salary (integer
    thousands: 3 means 3K) and Disease, indexed 1-9. Li, Li & Venkatasubramanian 2007
    use it for t-closeness. Notebook 01."""
    rows = [
        ("476**", "2*", 3, "gastric ulcer"),
        ("476**", "2*", 4, "gastritis"),
        ("476**", "2*", 5, "stomach cancer"),
        ("4790*", "≥ 40", 6, "gastritis"),
        ("4790*", "≥ 40", 11, "flu"),
        ("4790*", "≥ 40", 8, "bronchitis"),
        ("476**", "3*", 7, "bronchitis"),
        ("476**", "3*", 9, "pneumonia"),
        ("476**", "3*", 10, "stomach cancer"),
    ]
    df = pd.DataFrame(rows, columns=["ZIP Code", "Age", "Salary", "Disease"])
    df.index = pd.RangeIndex(1, 10)
    return df


def salary_disease_regrouped() -> pd.DataFrame:
    """The same nine people as :func:`salary_disease_3diverse`, regrouped as in Li, Li &
    Venkatasubramanian 2007 (their Table 5) so that the table is 0.167-close with respect
    to Salary (integer thousands). Notebook 01."""
    rows = [("4767*", "≤ 40", 3, "gastric ulcer"), ("4767*", "≤ 40", 5, "stomach cancer"),
            ("4767*", "≤ 40", 9, "pneumonia"), ("4790*", "≥ 40", 6, "gastritis"),
            ("4790*", "≥ 40", 11, "flu"), ("4790*", "≥ 40", 8, "bronchitis"),
            ("4760*", "≤ 40", 4, "gastritis"), ("4760*", "≤ 40", 7, "bronchitis"),
            ("4760*", "≤ 40", 10, "stomach cancer")]
    return pd.DataFrame(rows, columns=["ZIP Code", "Age", "Salary", "Disease"])


def sickle_cell() -> pd.DataFrame:
    """Seed 004's differencing example: Name and whether each person has the sickle
    cell trait (True/False for the printed Yes/No). Notebook 02."""
    names = ["A", "B", "C", "D", "X", "Y", "Z"]
    trait = [True, True, False, False, False, True, False]
    return pd.DataFrame({"Name": names, "Sickle cell trait": trait})


def blood_sugar() -> pd.DataFrame:
    """Seed 004's blood-sugar example: Name, Gender and blood sugar level (mmol/L).
    The group average is 5.58 and the female average 5.50, so Bob's value is
    5 * 5.58 - 4 * 5.50 = 5.9. Notebook 02."""
    return pd.DataFrame({
        "Name": ["Alice", "Bob", "Cathy", "Diana", "Ellen"],
        "Gender": ["F", "M", "F", "F", "F"],
        "Blood sugar": [4.2, 5.9, 5.2, 6.9, 5.7],
    })


def phd_students() -> pd.DataFrame:
    """Seed 004's query-auditing example: Name, whether a 1st-year PhD student, Gender
    and a sensitive value. Xi is the only female first-year student. Notebook 02."""
    rows = [
        ("Ben", "Y", "M", 1), ("Bha", "N", "M", 1), ("Ios", "Y", "M", 1),
        ("Jan", "N", "M", 2), ("Jian", "Y", "M", 2), ("Jie", "N", "M", 1),
        ("Joe", "N", "M", 2), ("Moh", "N", "M", 1), ("Son", "N", "F", 1),
        ("Xi", "Y", "F", 3), ("Yao", "N", "M", 2),
    ]
    return pd.DataFrame(rows, columns=["Name", "1st year PhD", "Gender", "Sensitive value"])


# -- the apple-pricing example (notebook 09) ---------------------------------------------
__all__ += ["apple_buyers"]   # the revenue they pay: dpteach.exponential.posted_price_revenue


def apple_buyers() -> pd.DataFrame:
    """Four buyers consistent with seed 004's "Apples for Sale" slide (after Dwork & Roth
    2014, 3.4): three value an apple at $1.00 and one at $4.01, each buying one apple if
    the price is at most their value. Then the revenue is $4.00 at $1.00, $4.01 at $4.01
    (the best price), $0 at $4.02 and $1.01 at $1.01, the four numbers the slide prints
    (see :func:`dpteach.exponential.posted_price_revenue`). Notebook 09."""
    return pd.DataFrame({"Buyer": ["A", "B", "C", "D"],
                         "Valuation ($)": [1.00, 1.00, 1.00, 4.01]})


# -- linkage, similarity and skewness material (notebook 01) -----------------------------
__all__ += ["skewed_table", "salary_groupings"]


@checked(n=PositiveInt(maximum=10 ** 7), class_share=Probability())
def skewed_table(class_size=50, class_share=0.5, *, n=10_000, positives=100, other_size=50):
    """A table of ``n`` test results (``positives`` of them positive, 1%) in classes:
    one class of ``class_size`` rows with about ``class_share`` positive, the rest in
    classes of ``other_size`` with the remaining positives spread as evenly as possible.
    The table behind notebook 01's skewness attack and its panel. Returns (table,
    positives in the class)."""
    import math

    import numpy as np

    from ._support.validate import valid_positive_int

    class_size = valid_positive_int(class_size, "class_size", maximum=n - 1 if n > 1 else 1)
    positives = valid_positive_int(positives, "positives", maximum=n)
    other_size = valid_positive_int(other_size, "other_size", maximum=n)
    if n - class_size < 1:
        raise ValueError(f"class_size must be smaller than n = {n}, got {class_size}")
    x = int(min(round(class_share * class_size), positives))
    rest = n - class_size
    n_other = math.ceil(rest / other_size)
    cls = np.r_[np.zeros(class_size, int), 1 + np.arange(rest) // other_size]
    result = np.zeros(n, bool)
    result[:x] = True
    # the other positives: one per class, round-robin over the other classes
    others = class_size + (np.arange(positives - x) % n_other) * other_size \
        + np.arange(positives - x) // n_other
    result[others] = True
    table = pd.DataFrame({"class": cls, "test": np.where(result, "positive", "negative")})
    return table, x


def salary_groupings():
    """The two groupings of the 9 salaries in Li, Li & Venkatasubramanian 2007: the
    seed's 3-diverse table (their Table 4) and their 0.167-close Table 5 (notebook 01)."""
    return {"seed's 3-diverse table": salary_disease_3diverse(),
            "regrouped (Li et al.'s Table 5)": salary_disease_regrouped()}


__all__ += ["voter_list", "hospital_neighbours", "disease_categories", "synthetic_patients"]


def voter_list() -> pd.DataFrame:
    """A fictional public voter list for seed 004's linkage setting (Sweeney 2002): Name
    with the quasi-identifiers of :func:`hospital_visits` (Race, Birth, Gender, ZIP).
    Abe, Bea and Cal share a class with hospital rows; Dee and Eve match no one.
    Notebook 01."""
    rows = [
        ("Abe", "Black", 1965, "m", "02141"),
        ("Bea", "Black", 1964, "f", "02138"),
        ("Cal", "White", 1964, "m", "02138"),
        ("Dee", "White", 1965, "f", "02139"),
        ("Eve", "Black", 1964, "f", "02141"),
    ]
    return pd.DataFrame(rows, columns=["Name", "Race", "Birth", "Gender", "ZIP"])


def hospital_neighbours() -> pd.DataFrame:
    """What neighbours know about two patients of :func:`hospital_conditions`
    (Machanavajjhala et al. 2007's story): Bob, a 31-year-old American in ZIP 13053,
    and Umeko, a 21-year-old Japanese woman in ZIP 13068. Notebook 01."""
    rows = [("Bob", "13053", 31, "American"), ("Umeko", "13068", 21, "Japanese")]
    return pd.DataFrame(rows, columns=["Name", "Zip Code", "Age", "Nationality"])


def disease_categories() -> dict:
    """Disease -> body system for :func:`salary_disease_3diverse`, following the disease
    hierarchy of Li, Li & Venkatasubramanian 2007 (stomach diseases; respiratory
    infections). Used for the similarity attack in notebook 01."""
    return {"gastric ulcer": "stomach disease", "gastritis": "stomach disease",
            "stomach cancer": "stomach disease", "flu": "respiratory infection",
            "bronchitis": "respiratory infection", "pneumonia": "respiratory infection"}


@checked(n=PositiveInt(maximum=10 ** 7), rng=Rng())
def synthetic_patients(n: int = 1000, *, rng=None) -> pd.DataFrame:
    """A seeded synthetic hospital table of ``n`` rows shaped like
    :func:`hospital_conditions`: Zip Code (5-digit strings in 20 areas), Age (18-90),
    Nationality (6 values), Condition (6 values, Cancer rarest at about 2%) and Salary
    (integer thousands, 20-120). For benchmarks and the skewness demonstration."""
    import numpy as np

    areas = np.array([f"{z:05d}" for z in rng.choice(np.arange(10000, 99999), 20, replace=False)])
    zips = areas[rng.integers(0, 20, n)].astype(object)
    last = rng.integers(0, 10, n).astype(str).astype(object)
    zips = (pd.Series(zips).str[:4] + pd.Series(last)).to_numpy()
    nat = np.array(["American", "Indian", "Japanese", "Russian", "Brazilian", "Nigerian"])
    cond = np.array(["Flu", "Heart Disease", "Viral Infection", "Asthma", "Diabetes", "Cancer"])
    p_cond = np.array([0.35, 0.15, 0.25, 0.13, 0.10, 0.02])
    return pd.DataFrame({
        "Zip Code": zips,
        "Age": rng.integers(18, 91, n),
        "Nationality": nat[rng.choice(6, n, p=[0.4, 0.15, 0.1, 0.1, 0.15, 0.1])],
        "Condition": cond[rng.choice(6, n, p=p_cond)],
        "Salary": rng.integers(20, 121, n),
    })


# --- notebooks 02 and 03: the seed's noisy blood-sugar tables, a population with secrets
__all__ += ["blood_sugar_noisy", "secret_population"]


def blood_sugar_noisy() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 004's two perturbed blood-sugar tables, values as printed: each record
    plus its own U(-2, 2) noise, drawn afresh for the group query (Alice 4.5, Bob 5.1,
    Cathy 4.41, Diana 6.2, Ellen 5.7; printed average 5.23) and for the female query
    (Alice 3.0, Cathy 3.7, Diana 7.5, Ellen 7.5; printed average 5.46). Note that the
    printed averages do not match the printed rows (5.182 and 5.425): notebook 02
    recomputes them. Returns (everyone, females)."""
    everyone = pd.DataFrame({"Name": ["Alice", "Bob", "Cathy", "Diana", "Ellen"],
                             "Gender": ["F", "M", "F", "F", "F"],
                             "Blood sugar": [4.5, 5.1, 4.41, 6.2, 5.7]})
    females = pd.DataFrame({"Name": ["Alice", "Cathy", "Diana", "Ellen"],
                            "Gender": ["F", "F", "F", "F"],
                            "Blood sugar": [3.0, 3.7, 7.5, 7.5]})
    return everyone, females


@checked(n=PositiveInt(maximum=10 ** 7), prevalence=Probability(), rng=Rng())
def secret_population(n=100, *, prevalence=0.3, rng=None) -> pd.DataFrame:
    """A synthetic population for reconstruction attacks (notebook 03): ``n`` people,
    each with an id, an age (18-90) and one secret bit (1 with probability
    ``prevalence``, e.g. "has condition X"). Seeded through ``rng``: the same seed
    gives the same population."""
    import numpy as np

    return pd.DataFrame({
        "id": np.arange(n),
        "Age": rng.integers(18, 91, n),
        "Secret": (rng.random(n) < prevalence).astype(np.int8),
    })


# -- seed 004's "most common ...?" questions (notebooks 09, 10) ----------------------------
__all__ += ["nationality_counts", "eye_colour_counts"]


def nationality_counts() -> pd.Series:
    """Seed 004's "most common nationality" question, R = {Chinese, Indian, American,
    Greek} (|R| = 4). The slide gives no data; these counts are an invented room of 30,
    the score u(D, r) of the exponential mechanism (Delta_u = 1). Notebooks 09 and 10."""
    return pd.Series({"Chinese": 11, "Indian": 9, "American": 7, "Greek": 3},
                     name="people", dtype="int64")


def eye_colour_counts() -> pd.Series:
    """Seed 004's "most common eye colour" question, R = {Red, Blue, Green, Brown, Purple}
    (|R| = 5); an invented room of 30 in which nobody has red or purple eyes. Notebook 09."""
    return pd.Series({"Red": 0, "Blue": 9, "Green": 4, "Brown": 17, "Purple": 0},
                     name="people", dtype="int64")
