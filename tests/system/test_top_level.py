"""The package's top level holds the course's contract names and the lesson modules, and
nothing else: ``dp.laplace_mechanism``, ``dp.sparse_vector``; every other public name is
``dp.<lesson>.<name>``. Where a contract name is defined is read from the lessons'
``__all__``, and an old top-level spelling says where the name lives now."""

import importlib
import subprocess
import sys

import pytest

import dpteach as dp

#: the names the design's contract places at the top level (its sections "Public API
#: contract" for dpteach itself, "The second half of the course", "The third part of the
#: course" and "Names the turn-4 issues rely on"), copied here so that the package's
#: ``CONTRACT`` is held to the list it was written from
DESIGN_CONTRACT = {
    "mechanisms": ["laplace_scale", "laplace_mechanism", "gaussian_sigma", "gaussian_mechanism",
                   "exponential_probabilities", "exponential_mechanism", "report_noisy_max",
                   "randomized_response", "randomized_response_estimate"],
    "accounting": ["basic_composition", "advanced_composition", "PrivacyAccountant",
                   "BudgetExceededError", "Curator", "global_sensitivity",
                   "discrete_laplace_mechanism"],
    "bounds": ["laplace_tail", "exponential_utility_threshold"],
    "second half": ["group_privacy", "parallel_composition", "tradeoff_curve",
                    "gaussian_tradeoff", "clipped_mean", "above_threshold", "gaussian_rdp",
                    "subsampled_gaussian_rdp", "rdp_to_dp", "zcdp_to_dp", "gaussian_epsilon"],
    "third part": ["local_sensitivity_median", "smooth_sensitivity_median", "ptr_median",
                   "sample_and_aggregate", "mwem", "sparse", "numeric_sparse", "olh_estimate"],
    "turn 4": ["PLDAccountant", "RDPAccountant", "smooth_beta", "smooth_median",
               "distance_to_instability", "ptr_answer_probability", "range_queries",
               "independent_marginals", "split_budget", "dp_sgd"],
}
#: what the package itself defines at the top level besides the contract and the modules
PACKAGE_ATTRIBUTES = {"CONTRACT"}


def _lesson(name):
    return importlib.import_module(f"dpteach.{dp._SUBMODULES[name]}")


def test_the_contract_is_the_designs_list():
    design = [name for names in DESIGN_CONTRACT.values() for name in names]
    assert len(dp.CONTRACT) == len(set(dp.CONTRACT)), "a name written twice in CONTRACT"
    assert sorted(dp.CONTRACT) == sorted(design)


def test_the_top_level_is_the_contract_and_the_lessons():
    public = {name for name in dir(dp) if not name.startswith("_")}
    assert public == set(dp.CONTRACT) | set(dp._SUBMODULES) | PACKAGE_ATTRIBUTES
    assert "__version__" in dir(dp)
    assert dp.__all__ == sorted(dp.CONTRACT) + ["__version__"]


def test_a_fresh_import_defines_no_public_name_but_the_contract_tuple():
    code = ("import dpteach, sys\n"
            "print(sorted(n for n in vars(dpteach) if not n.startswith('_')))\n"
            "print(sorted(m for m in sys.modules if m.startswith('dpteach')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == [str(sorted(PACKAGE_ATTRIBUTES)), "['dpteach']"]


@pytest.mark.parametrize("name", sorted(dp.CONTRACT))
def test_every_contract_name_resolves_from_its_lessons_all(name):
    lessons = dp._homes()[name]
    assert len(lessons) == 1, f"{name} is in the __all__ of {lessons}: one home only"
    module = _lesson(lessons[0])
    assert name in module.__all__
    assert getattr(dp, name) is getattr(module, name)


@pytest.mark.parametrize("lesson", sorted(dp._SUBMODULES))
def test_every_name_of_a_lesson_is_reached_through_it(lesson):
    module = getattr(dp, lesson)
    assert module is _lesson(lesson)
    missing = [name for name in getattr(module, "__all__", ()) if not hasattr(module, name)]
    assert not missing, f"dp.{lesson} lacks names of its __all__: {missing}"


@pytest.mark.parametrize("lesson", sorted(dp._SUBMODULES))
def test_the_source_reading_finds_each_lessons_all(lesson):
    """What :func:`dpteach._homes` reads from a lesson's source (a module, or a package's
    ``__init__.py``: attacks, assignments) is its ``__all__``, or it says it cannot."""
    names, complete = dp._names_in(_source(lesson))
    imported = list(getattr(_lesson(lesson), "__all__", ()))
    if complete:
        assert names == imported
    assert dp._declared_names(dp._SUBMODULES[lesson], importing=True) == imported


def _source(lesson):
    module = _lesson(lesson)
    return importlib.util.find_spec(module.__name__).loader.get_source(module.__name__)


def test_the_source_reading_sees_what_it_cannot_read():
    source = ('__all__ = ["a",  # a comment with ] in it\n    "b"]\n__all__ += ("c",)\n'
              'def f():\n    __all__ = ["not this one"]\n')
    assert dp._names_in(source) == (["a", "b", "c"], True)
    assert dp._names_in('__all__ = ["a", *sorted(REGISTRY)]\n') == (["a"], False)
    assert dp._names_in('__all__ = base.__all__ + ["a"]\n') == ([], False)
    assert dp._names_in("x = 1\n") == ([], True)


@pytest.mark.parametrize("name, spelling", [
    ("k_randomized_response_is_better", "dp.local.k_randomized_response_is_better"),
    ("privacy_loss", "dp.mechanisms.privacy_loss"),
    ("run_error", "dp.sparse_vector.run_error"),
    ("lecture_mode", "dp.style.lecture_mode"),
    ("first_taste_count", "dp.panels.first_taste_count"),
])
def test_an_old_top_level_name_says_where_it_lives(name, spelling):
    with pytest.raises(AttributeError, match=rf"lives in its lesson module, {spelling}\b"):
        getattr(dp, name)


def test_every_lesson_name_off_the_top_names_its_spelling():
    for name, lessons in dp._homes(importing=True).items():
        if name in dp.CONTRACT or name in dp._SUBMODULES:   # dp.audit is the module
            continue
        with pytest.raises(AttributeError) as caught:
            getattr(dp, name)
        for lesson in lessons:
            assert f"dp.{lesson}.{name}" in str(caught.value)


def test_a_name_nowhere_is_a_plain_attribute_error():
    assert not hasattr(dp, "no_such_name")
    with pytest.raises(AttributeError, match=r"^module 'dpteach' has no attribute 'no_such_name'$"):
        dp.no_such_name
    with pytest.raises(AttributeError, match=r"has no attribute '_private'$"):
        dp._private


def test_reading_the_homes_imports_no_lesson():
    code = ("import dpteach, sys\n"
            "assert dpteach._homes()['k_randomized_response_is_better'] == ('local',)\n"
            "print(sorted(m for m in sys.modules if m.startswith('dpteach')), "
            "'numpy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "['dpteach'] False"


def test_every_kit_function_the_coursework_names_resolves():
    """A task's forbidden or allowed function is written ``"dpteach.<lesson>:name"`` (or
    ``"dpteach:name"`` for a contract name); the grader skips one it cannot find, so a
    spelling left behind by a move would silently lift a ban."""
    from dpteach.coursework import _grade_run, assignments

    targets = []
    for key in assignments.ASSIGNMENTS:
        tasks = assignments.tasks(key)
        targets += _grade_run.forbidden_targets(tasks) + _grade_run.allowed_targets(key)
        targets += [t for task in tasks for t in task.needs]
    assert targets
    lost = [t for t in targets if not hasattr(importlib.import_module(t.split(":")[0]),
                                              t.split(":")[1])]
    assert not lost, f"coursework targets that name nothing: {lost}"


def test_a_contract_name_in_a_computed_all_is_found_by_importing(monkeypatch):
    """A lesson that is a package may build its ``__all__`` from its modules' lists; the
    source reading cannot place its names, so the lesson is imported to read them."""
    monkeypatch.setitem(dp._HOMES, False, {})
    monkeypatch.delitem(vars(dp), "olh_estimate", raising=False)
    assert dp.olh_estimate is dp.local.olh_estimate
