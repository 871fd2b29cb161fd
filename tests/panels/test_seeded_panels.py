"""Seed sliders: in every panel whose builder takes a seed, the seed slider redraws the
randomness and the seed is a builder argument; the guide lists exactly the seeded panels;
and the numbers behind the attack and reconstruction panels (notebooks 02, 03: the
DP-defence and random-query sweeps, notebook 03's decoy lower bound) agree with the lesson
functions."""

import inspect

import ipywidgets as widgets
import numpy as np
import pytest

from dpteach import panels
from dpteach.attacks import reconstruction as rec
from dpteach.panels import reconstruction as recpanels

#: every panel whose builder takes a seed (read from the registry, not listed by hand)
SEEDED = sorted(name for name, builder in panels.REGISTRY.items()
                if "seed" in inspect.signature(builder).parameters)
#: seed sliders that do not run over 0-20: dp_sgd_attack trains its models when it is
#: built, for three seeds
SEED_RANGES = {"dp_sgd_attack": (0, 2)}


def test_the_seeded_panels_include_the_attacks_and_reconstructions():
    assert len(SEEDED) >= 15
    for name, module in panels.REGISTRY.found.items():
        if module.endswith((".attacks", ".reconstruction")):
            assert name in SEEDED, name


@pytest.mark.parametrize("name", SEEDED)
def test_panel_has_a_seed_slider_that_redraws_the_randomness(name):
    panel = panels.REGISTRY[name]()
    seed = panel.controls["seed"]
    assert isinstance(seed, widgets.IntSlider)
    assert (seed.min, seed.max, seed.value) == (*SEED_RANGES.get(name, (0, 20)), 0)
    first = (panel.png(), panel.status.value)
    seen = {first}
    seeds = range(1, min(seed.max, 5) + 1)
    for s in seeds:
        seed.value = s
        seen.add((panel.png(), panel.status.value))
    # (two secrets with as many ones can give the exhaustive panel the same picture)
    least = min(4, len(seeds) + 1)
    assert len(seen) >= least, f"{name}: seeds 0-{seeds[-1]} gave only {len(seen)} pictures"
    seed.value = 0                      # the same seed gives back the very same picture
    assert (panel.png(), panel.status.value) == first
    panel.close()


@pytest.mark.parametrize("name", SEEDED)
def test_seed_is_a_builder_argument(name):
    chosen = min(5, SEED_RANGES.get(name, (0, 20))[1])
    a = panels.REGISTRY[name](seed=chosen)
    b = panels.REGISTRY[name]()
    b.controls["seed"].value = chosen
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


# ------------------------------------------- the guide's sentence about seed sliders is true
def _guide_lists():
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[2] / "notebooks" / "README.md").read_text()
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

    folder = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
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
            assert (control.min, control.max) == SEED_RANGES.get(name, (0, 20)), name
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
