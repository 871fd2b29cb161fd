"""The seed tables, with the rows and column names printed in the course sources, and
seeded synthetic populations.

Every function returns a fresh pandas DataFrame, so a notebook may modify its copy.
Seed 004 (Ayday's lecture slides) prints all of these tables.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["hospital_visits", "hospital_conditions", "hospital_conditions_4anonymous",
           "salary_disease_3diverse", "sickle_cell", "blood_sugar", "phd_students"]


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
