"""Curator: noise distributions (KS at alpha 1e-6, each with a wrong twin), budget
refusals that release nothing, and clear errors that charge nothing."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpteach as dp
from conftest import ALPHA, ks_pvalue


class RecordingGenerator(np.random.Generator):
    """A Generator that records the scale of every Laplace draw."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.scales = []

    def laplace(self, loc=0.0, scale=1.0, size=None):
        self.scales.append(scale)
        return super().laplace(loc, scale, size)


def table(n=200, seed=5):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "income": rng.normal(50, 20, n),
        "group": rng.choice(["a", "b", "c"], n),
    })


def adults(t):
    return t["age"] >= 40


def test_count_noise_is_laplace_one_over_epsilon(rng):
    t = table()
    true = int((t["age"] >= 40).sum())
    eps = 0.5
    cur = dp.Curator(t, epsilon=4000 * eps, rng=rng)
    noise = np.array([cur.count(adults, epsilon=eps) for _ in range(4000)]) - true
    assert ks_pvalue(noise, stats.laplace(scale=1 / eps).cdf) > ALPHA
    # wrong twins: scale 1/(eps/2), and Gaussian noise of the same variance
    assert ks_pvalue(noise, stats.laplace(scale=2 / eps).cdf) < ALPHA
    assert ks_pvalue(noise, stats.norm(scale=np.sqrt(2) / eps).cdf) < ALPHA or \
        ks_pvalue(noise, stats.laplace(scale=1.3 / eps).cdf) < ALPHA


def test_sum_sensitivity_is_max_abs_bound(rng):
    t = table()
    lower, upper, eps = -10.0, 80.0, 1.0
    true = float(np.clip(t["income"], lower, upper).sum())
    cur = dp.Curator(t, epsilon=3000, rng=rng)
    noise = np.array([cur.sum("income", lower=lower, upper=upper, epsilon=eps)
                      for _ in range(3000)]) - true
    assert ks_pvalue(noise, stats.laplace(scale=80.0 / eps).cdf) > ALPHA
    # wrong twin: the range (upper - lower = 90) is the substitute-one sensitivity
    assert ks_pvalue(noise, stats.laplace(scale=90.0 / eps * 1.25).cdf) < ALPHA


def test_sum_clips_values():
    t = pd.DataFrame({"x": [-100.0, 0.5, 100.0]})
    rec = RecordingGenerator(1)
    cur = dp.Curator(t, epsilon=1e7, rng=rec)
    out = [cur.sum("x", lower=0, upper=1, epsilon=1e5) for _ in range(50)]
    assert abs(np.mean(out) - 1.5) < 1e-3          # clipped: 0 + 0.5 + 1
    assert rec.scales == [pytest.approx(1 / 1e5)] * 50


def test_mean_spends_half_on_sum_and_half_on_count():
    t = table()
    rec = RecordingGenerator(3)
    cur = dp.Curator(t, epsilon=1.0, rng=rec)
    out = cur.mean("income", lower=0, upper=100, epsilon=1.0)
    assert rec.scales == [pytest.approx(100 / 0.5), pytest.approx(1 / 0.5)]
    assert 0 <= out <= 100
    assert cur.accountant.spent == (1.0, 0.0)


def test_mean_is_accurate_for_large_tables(rng):
    t = table(n=20000)
    cur = dp.Curator(t, epsilon=10, rng=rng)
    true = float(np.clip(t["income"], 0, 100).mean())
    out = np.array([cur.mean("income", lower=0, upper=100, epsilon=1.0) for _ in range(10)])
    # noisy sum error ~ 200 / 20000 = 0.01, count error relative 1e-4: within 0.2
    assert np.all(np.abs(out - true) < 0.2)


def test_histogram_series_and_noise(rng):
    t = table()
    cats = ["a", "b", "c", "z"]
    cur = dp.Curator(t, epsilon=2000, rng=rng)
    true = t["group"].value_counts().reindex(cats, fill_value=0)
    hists = [cur.histogram("group", cats, epsilon=1.0) for _ in range(800)]
    h = hists[0]
    assert isinstance(h, pd.Series) and list(h.index) == cats
    noise = np.array([x.to_numpy() - true.to_numpy() for x in hists])
    for j in range(len(cats)):
        assert ks_pvalue(noise[:, j], stats.laplace(scale=1.0).cdf) > ALPHA
    # wrong twin: seed 004's substitute-one sensitivity 2 would double the scale
    assert ks_pvalue(noise[:, 0], stats.laplace(scale=2.0).cdf) < ALPHA
    assert cur.accountant.spent[0] == 800


def test_where_filters_rows():
    t = table()
    cur = dp.Curator(t, epsilon=1e7, rng=0)
    got = cur.count(lambda d: d["group"] == "a", epsilon=1e6)
    assert abs(got - (t["group"] == "a").sum()) < 1e-3
    h = cur.histogram("group", ["a", "b"], epsilon=1e6, where=lambda d: d["age"] < 30)
    exp = t.loc[t["age"] < 30, "group"].value_counts()
    assert abs(h["a"] - exp.get("a", 0)) < 1e-3 and abs(h["b"] - exp.get("b", 0)) < 1e-3
    s = cur.sum("age", lower=0, upper=100, epsilon=1e6, where=lambda d: d["group"] == "b")
    assert abs(s - t.loc[t["group"] == "b", "age"].sum()) < 1e-3


def test_budget_refusal_releases_nothing():
    t = table()
    rec = RecordingGenerator(2)
    cur = dp.Curator(t, epsilon=1.0, rng=rec)
    for _ in range(10):
        cur.count(adults, epsilon=0.1)             # ten spends of 0.1 fit exactly
    assert cur.accountant.remaining[0] == 0.0
    state = rec.bit_generator.state
    n_calls = len(rec.scales)
    for query in (lambda: cur.count(adults, epsilon=1e-9),
                  lambda: cur.sum("age", lower=0, upper=100, epsilon=0.1),
                  lambda: cur.mean("age", lower=0, upper=100, epsilon=0.1),
                  lambda: cur.histogram("group", ["a"], epsilon=0.1)):
        with pytest.raises(dp.BudgetExceededError):
            query()
    assert rec.bit_generator.state == state and len(rec.scales) == n_calls
    assert cur.accountant.spent == (1.0, 0.0) and len(cur.accountant.history) == 10


def test_averaging_against_curator_is_stopped():
    t = table()
    cur = dp.Curator(t, epsilon=1.0, rng=0)
    answers, refused = dp.attacks.collect_releases(lambda: cur.count(adults, epsilon=0.1), 50)
    assert answers.size == 10 and refused == 40
    with pytest.raises(dp.BudgetExceededError):
        dp.attacks.averaging_attack(lambda: cur.count(adults, epsilon=0.1), 2)


def test_table_is_private_copy():
    t = table()
    cur = dp.Curator(t, epsilon=10, rng=0)
    t.loc[:, "age"] = 0
    assert cur.count(adults, epsilon=5) > 20
    cur.count(lambda d: d.assign(age=0)["age"] >= 0, epsilon=1)  # where may not mutate
    assert "age" in cur.columns


@pytest.mark.parametrize("call, exc, words", [
    (lambda c: c.count(adults, epsilon=0), ValueError, "epsilon"),
    (lambda c: c.count(adults, epsilon=-1), ValueError, "epsilon"),
    (lambda c: c.count(adults, epsilon=float("nan")), ValueError, "epsilon"),
    (lambda c: c.count(adults, epsilon=float("inf")), ValueError, "epsilon"),
    (lambda c: c.count(adults, epsilon=True), TypeError, "epsilon"),
    (lambda c: c.count(adults, epsilon="1"), TypeError, "epsilon"),
    (lambda c: c.count("age > 3", epsilon=1), TypeError, "where"),
    (lambda c: c.count(None, epsilon=5e-324), ValueError, "epsilon"),
    (lambda c: c.mean("age", lower=0, upper=1, epsilon=5e-324), ValueError, "epsilon"),
    (lambda c: c.sum("age", lower=-1e308, upper=1e308, epsilon=0.5), ValueError, "epsilon"),
    (lambda c: c.histogram("group", ["a"], epsilon=1e-320), ValueError, "epsilon"),
    (lambda c: c.histogram("group", [["a"]], epsilon=1), TypeError, "categories"),
    (lambda c: c.sum(["age"], lower=0, upper=1, epsilon=1), ValueError, "column"),
    (lambda c: c.sum("nope", lower=0, upper=1, epsilon=1), ValueError, "column"),
    (lambda c: c.sum("age", lower=5, upper=5, epsilon=1), ValueError, "lower must be < upper"),
    (lambda c: c.sum("age", lower=6, upper=5, epsilon=1), ValueError, "lower must be < upper"),
    (lambda c: c.sum("age", lower=float("nan"), upper=5, epsilon=1), ValueError, "lower"),
    (lambda c: c.sum("age", lower=0, upper=float("inf"), epsilon=1), ValueError, "upper"),
    (lambda c: c.sum("group", lower=0, upper=1, epsilon=1), TypeError, "numeric"),
    (lambda c: c.mean("nope", lower=0, upper=1, epsilon=1), ValueError, "column"),
    (lambda c: c.mean("age", lower=1, upper=0, epsilon=1), ValueError, "lower must be < upper"),
    (lambda c: c.mean("age", lower=0, upper=1, epsilon=0), ValueError, "epsilon"),
    (lambda c: c.histogram("nope", ["a"], epsilon=1), ValueError, "column"),
    (lambda c: c.histogram("group", [], epsilon=1), ValueError, "empty"),
    (lambda c: c.histogram("group", ["a", "a"], epsilon=1), ValueError, "distinct"),
    (lambda c: c.histogram("group", "abc", epsilon=1), TypeError, "categories"),
    (lambda c: c.histogram("group", ["a"], epsilon=-0.5), ValueError, "epsilon"),
])
def test_bad_arguments_charge_nothing(call, exc, words):
    cur = dp.Curator(table(), epsilon=1.0, rng=0)
    with pytest.raises(exc, match=words):
        call(cur)
    assert cur.accountant.spent == (0.0, 0.0) and cur.charges == ()


@pytest.mark.parametrize("call, exc, words", [
    (lambda c: c.count(lambda t: t["age"], epsilon=0.25), ValueError, "boolean mask"),
    (lambda c: c.count(lambda t: np.ones(3, bool), epsilon=0.25), ValueError, "one entry per row"),
    (lambda c: c.count(lambda t: t["nope"] > 1, epsilon=0.25), KeyError, "nope"),
    (lambda c: c.sum("age", lower=0, upper=1, epsilon=0.25, where=lambda t: 1 / 0),
     ZeroDivisionError, "division"),
    (lambda c: c.histogram("group", ["a"], epsilon=0.25, where=lambda t: None),
     ValueError, "boolean mask"),
])
def test_a_where_that_fails_after_seeing_the_data_is_charged(call, exc, words):
    # the failure depends on the data, so the refusal is itself an answer: it is paid for
    cur = dp.Curator(table(), epsilon=1.0, rng=0)
    with pytest.raises(exc, match=words) as info:
        call(cur)
    assert "stays charged" in "".join([str(info.value)] + getattr(info.value, "__notes__", []))
    assert cur.accountant.spent == (0.25, 0.0) and len(cur.charges) == 1


@pytest.mark.parametrize("args, kwargs, exc", [
    (([1, 2], 1.0), {}, TypeError),
    ((None, 1.0), {}, TypeError),
    ((pd.DataFrame({"a": [1]}), 0.0), {}, ValueError),
    ((pd.DataFrame({"a": [1]}), float("nan")), {}, ValueError),
    ((pd.DataFrame({"a": [1]}), 1.0, 1.0), {}, ValueError),
    ((pd.DataFrame({"a": [1]}), 1.0, -0.1), {}, ValueError),
    ((pd.DataFrame({"a": [1]}), 1.0), {"rng": "seed"}, TypeError),
])
def test_bad_constructor(args, kwargs, exc):
    with pytest.raises(exc):
        dp.Curator(*args, **kwargs)


def test_repr_and_columns():
    cur = dp.Curator(table(), epsilon=2.0, rng=0)
    cur.count(None, epsilon=0.5)
    assert "0.5 of 2" in repr(cur)
    assert cur.columns == ["age", "income", "group"]


def test_mean_post_processes_with_notebook_14s_step(monkeypatch):
    """Curator.mean's ratio is clipping.clipped_mean_ratio (the formula written once)."""
    import pandas as pd
    from dpteach import curator as cur

    calls = []
    real = cur.clipped_mean_ratio
    monkeypatch.setattr(cur, "clipped_mean_ratio", lambda *a: calls.append(a) or real(*a))
    c = dp.Curator(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), 10.0, rng=0)
    out = c.mean("x", lower=0, upper=5, epsilon=1.0)
    assert len(calls) == 1 and out == real(*calls[0]) and isinstance(out, float)
