"""Seed sliders of the attack and reconstruction panels (notebooks 02, 03), the noisy
clamped sum of notebook 06, and the numbers behind notebook 03's lower bound."""

import ipywidgets as widgets
import numpy as np
import pytest

import dpteach as dp
from dpteach import panels
from dpteach.attacks import reconstruction as rec
from dpteach.panels import reconstruction as recpanels

SEEDED = ["attacks_averaging", "attacks_curator_budget", "attacks_differencing",
          "reconstruction_exhaustive", "reconstruction_random_queries",
          "reconstruction_dp_defence"]


@pytest.mark.parametrize("name", SEEDED)
def test_panel_has_a_seed_slider_that_redraws_the_randomness(name):
    panel = panels.REGISTRY[name]()
    seed = panel.controls["seed"]
    assert isinstance(seed, widgets.IntSlider)
    assert (seed.min, seed.max, seed.value) == (0, 20, 0)
    first = (panel.png(), panel.status.value)
    seen = {first}
    for s in range(1, 6):
        seed.value = s
        seen.add((panel.png(), panel.status.value))
    # (two secrets with as many ones can give the exhaustive panel the same picture)
    assert len(seen) >= 4, f"{name}: seeds 0-5 gave only {len(seen)} different pictures"
    seed.value = 0                      # the same seed gives back the very same picture
    assert (panel.png(), panel.status.value) == first
    panel.close()


@pytest.mark.parametrize("name", SEEDED)
def test_seed_is_a_builder_argument(name):
    a = panels.REGISTRY[name](seed=5)
    b = panels.REGISTRY[name]()
    b.controls["seed"].value = 5
    assert a.png() == b.png() and a.status.value == b.status.value
    a.close()
    b.close()


@pytest.mark.parametrize("seed", [0, 7, 20])
def test_dp_defence_sweep_matches_reconstruct_lsq_answer_by_answer(seed):
    """The panel solves least squares once per population and uses linearity for every ε;
    the result must be reconstruct_lsq's, bit for bit."""
    n, m, trials, prev = 64, 256, 5, 0.3
    frac, d0, shown = recpanels._dp_sweep(n, m, trials, prev, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    ref = np.zeros((len(recpanels._LOG_EPS), trials))
    for t in range(trials):
        d = (rng.random(n) < prev).astype(np.int8)
        q = rec.random_subset_queries(m, n, rng=rng)
        exact = rec.answer_queries(q, d).astype(float)
        z = rng.laplace(size=m)
        for i, le in enumerate(recpanels._LOG_EPS):
            g = rec.reconstruct_lsq(q, exact + (m / 10 ** le) * z)
            ref[i, t] = np.mean(g == d)
            if t == 0:
                np.testing.assert_array_equal(g, shown[i])
        if t == 0:
            np.testing.assert_array_equal(d, d0)
    np.testing.assert_array_equal(frac, ref.mean(axis=1))


def test_random_query_sweep_one_m_over_n_at_a_time_matches_the_full_sweep():
    lazy = recpanels._RandomQuerySweep(64, np.random.default_rng(3))
    frac_i = lazy.fraction(2)                            # m/n = 4 only
    d, full, guesses = recpanels._random_query_sweep(64, np.random.default_rng(3))
    np.testing.assert_array_equal(lazy.d, d)
    for method in ("lp", "lsq"):
        np.testing.assert_array_equal(frac_i[method], full[method][2])
        np.testing.assert_array_equal(lazy.guess(2, method, 3), guesses[method, 2, 3])


@pytest.mark.parametrize("e", [0.5, 1.0, 1.5, 2.0])
def test_decoy_forces_every_attacker_floor_2e_off_not_4e(e):
    """Notebook 03's lower bound: a secret and its decoy, 2*floor(2E) bits apart, share one
    answer vector within E of both; the best of all 2^n guesses is floor(2E) off in the
    worse world (so 4E is the consistent-candidate attack's worst case, not a limit on
    every attacker)."""
    n = 10
    guesses = (np.arange(2 ** n)[:, None] >> np.arange(n)) & 1
    k = int(np.floor(2 * e))
    for seed in range(3):
        rng = np.random.default_rng(seed)
        secret = np.zeros(n, dtype=np.int8)
        secret[rng.permutation(n)[: n // 2]] = 1          # enough ones and zeros to swap
        answers, decoy = rec.decoy_answers(secret, e, rng=rng)
        assert np.max(np.abs(answers - rec.subset_sums(secret))) <= e
        assert np.max(np.abs(answers - rec.subset_sums(decoy))) <= e
        assert int((secret != decoy).sum()) == 2 * k
        worse = np.maximum((guesses != secret).sum(axis=1), (guesses != decoy).sum(axis=1))
        assert worse.min() == k
        assert worse.min() != 2 * k                          # the wrong claim ("4E") fails
        consistent = rec.consistent_candidates(answers, e)
        assert (consistent != secret).sum(axis=1).max() == 2 * k   # the attack can end 4E off


# ----------------------------------------------------------------- clamped sum (notebook 06)
from scipy import stats  # noqa: E402

ALPHA = 1e-6
VALUES = np.array([-7.0, 0.5, 3.0, 12.0, 40.0, 2.5])          # two values outside [-5, 10]


def _ks_pvalue(releases, centre, scale):
    return stats.kstest(releases - centre, stats.laplace(scale=scale).cdf).pvalue


@pytest.mark.parametrize("lower, upper, epsilon", [(-5.0, 10.0, 0.5), (0.0, 10.0, 2.0),
                                                   (-20.0, 3.0, 1.0)])
def test_clamped_sum_is_the_clamped_sum_plus_laplace_of_the_right_scale(lower, upper, epsilon):
    rng = np.random.default_rng(61)
    out = dp.clamped_sum(VALUES, lower, upper, epsilon, rng=rng, size=20_000)
    assert out.shape == (20_000,)
    centre = np.clip(VALUES, lower, upper).sum()
    b = max(abs(lower), abs(upper)) / epsilon
    assert _ks_pvalue(out, centre, b) > ALPHA
    # wrong twins are rejected by the same test: eps/2, the range width, the unclamped sum
    assert _ks_pvalue(out, centre, 2 * b) < ALPHA
    if upper - lower != max(abs(lower), abs(upper)):
        assert _ks_pvalue(out, centre, (upper - lower) / epsilon) < ALPHA
    assert _ks_pvalue(out, VALUES.sum(), b) < ALPHA


def test_a_twin_mechanism_with_half_the_noise_fails_the_check():
    rng = np.random.default_rng(62)
    centre = np.clip(VALUES, 0.0, 10.0).sum()
    twin = centre + rng.laplace(0.0, 10.0 / 2.0 / 2, size=20_000)      # eps doubled
    assert _ks_pvalue(twin, centre, 10.0 / 2.0) < ALPHA


def test_clamped_sum_scalar_and_reproducible():
    a = dp.clamped_sum(VALUES, 0, 10, 1.0, rng=np.random.default_rng(5))
    b = dp.clamped_sum(VALUES, 0, 10, 1.0, rng=np.random.default_rng(5))
    assert isinstance(a, float) and a == b
    c = dp.laplace_mechanism(np.clip(VALUES, 0, 10).sum(), 10, 1.0, rng=np.random.default_rng(5))
    assert a == c                                        # the kit's Laplace mechanism, reused


@pytest.mark.parametrize("kwargs, error, word", [
    (dict(lower=5, upper=5, epsilon=1), ValueError, "lower"),
    (dict(lower=6, upper=5, epsilon=1), ValueError, "lower"),
    (dict(lower=np.nan, upper=5, epsilon=1), ValueError, "lower"),
    (dict(lower=0, upper=np.inf, epsilon=1), ValueError, "upper"),
    (dict(lower=True, upper=5, epsilon=1), TypeError, "lower"),
    (dict(lower=0, upper="5", epsilon=1), TypeError, "upper"),
    (dict(lower=0, upper=5, epsilon=0), ValueError, "epsilon"),
    (dict(lower=0, upper=5, epsilon=np.nan), ValueError, "epsilon"),
    (dict(lower=0, upper=5, epsilon=-1), ValueError, "epsilon"),
])
def test_clamped_sum_rejects_bad_parameters(kwargs, error, word):
    with pytest.raises(error, match=word):
        dp.clamped_sum(VALUES, **kwargs)


def test_clamped_sum_rejects_nan_values():
    with pytest.raises(ValueError, match="values"):
        dp.clamped_sum([1.0, np.nan], 0, 1, 1.0)
    with pytest.raises(TypeError, match="values"):
        dp.clamped_sum([True, False], 0, 1, 1.0)


# ------------------------------------------------- one class numbering in notebook 01
def test_salary_panel_numbers_classes_as_the_printed_report_does():
    from dpteach import anonymity as an
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


# ------------------------------------------- the guide's sentence about seed sliders is true
def _guide_lists():
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "README.md").read_text()
    start = text.index("- In every notebook, each panel whose picture shows a few random draws")
    bullet = text[start:text.index("\n- ", start + 1) if "\n- " in text[start + 1:] else None]
    bullet = bullet.split("\n\n")[0]
    seeded_part, fixed_part = bullet.split("Seeded:")[1].split("Panels whose picture")
    names = lambda part: set(re.findall(r"`([a-z_0-9]+)`", part))
    return names(seeded_part), names(fixed_part)


def _course_panels():
    """The panels the course notebooks display (the guide's sentence is about those)."""
    import pathlib
    import re

    folder = pathlib.Path(__file__).resolve().parents[1] / "notebooks"
    used = set()
    for nb in folder.glob("[0-9][0-9]_*.ipynb"):
        used |= set(re.findall(r"dp\.panels\.([a-z_0-9]+)\(", nb.read_text()))
    return used & set(panels.REGISTRY)


def test_guide_names_exactly_the_panels_with_a_seed_slider():
    seeded, fixed = _guide_lists()
    course = _course_panels()
    assert seeded and fixed and not seeded & fixed
    assert (seeded | fixed) <= course
    with_seed = set()
    for name in sorted(course):
        builder = panels.REGISTRY[name]
        panel = builder()
        control = panel.controls.get("seed")
        if control is not None:
            with_seed.add(name)
            assert isinstance(control, widgets.IntSlider)
            # dp_sgd_attack trains its models when it is built: three seeds, precomputed
            expected = (0, 2) if name == "dp_sgd_attack" else (0, 20)
            assert (control.min, control.max) == expected, name
        panel.close()
    assert with_seed == seeded, "notebooks/README.md must list every panel with a seed slider"


def test_guide_fixed_seed_panels_do_draw_at_random():
    """The panels the guide calls fixed-seed simulate; the other unseeded panels do not
    call a random generator at all (checked on their source)."""
    import inspect

    seeded, fixed = _guide_lists()
    course = {n: panels.REGISTRY[n] for n in _course_panels()}
    for name, builder in course.items():
        source = inspect.getsource(inspect.getmodule(builder))
        if name in fixed:
            assert "default_rng(" in source, name
    for module in {inspect.getmodule(b) for n, b in course.items() if n not in seeded | fixed}:
        names_here = {n for n, b in course.items() if inspect.getmodule(b) is module}
        if names_here & (seeded | fixed):
            continue                  # shares a module with a listed panel: checked by hand
        assert "default_rng(" not in inspect.getsource(module), module.__name__


# ---------------------------------------------------- the corrected statements stay corrected
def _notebook_text(name):
    import json
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / name
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("name, wrong", [
    ("03_reconstruction_attacks.ipynb", "4E is\nthe best possible guarantee"),
    ("03_reconstruction_attacks.ipynb", "4E is the best possible guarantee"),
    ("03_reconstruction_attacks.ipynb", "show with adversarial noise that it is tight"),
    ("03_reconstruction_attacks.ipynb", "tight (decoy noise)"),
    ("01_anonymization_and_its_limits.ipynb", "panel's class 1 of the seed's table"),
    ("05_sensitivity.ipynb", "and divide,\nnotebook 06.)"),
])
def test_corrected_statements_are_gone(name, wrong):
    assert wrong not in _notebook_text(name)


@pytest.mark.parametrize("name, needed", [
    ("03_reconstruction_attacks.ipynb", "at least 2E bits from the truth"),
    ("05_sensitivity.ipynb", "notebook 06, section 6"),
    ("06_laplace_mechanism.ipynb", "## 6. Noisy sums, counts and a mean"),
    ("06_laplace_mechanism.ipynb", "**Note on the source.**"),
    ("06_laplace_mechanism.ipynb", "*Seed 003, eq. 11.*"),
    ("06_laplace_mechanism.ipynb", "*Seed 001*"),
    ("06_laplace_mechanism.ipynb", "*Seed 004, \"Proof (2)\"*"),
])
def test_corrections_are_in_place(name, needed):
    assert needed in _notebook_text(name)
