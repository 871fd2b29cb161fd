"""dpteach: a teaching kit for differential privacy.

``import dpteach as dp`` gives the names of the course's contract (``CONTRACT`` below:
``dp.laplace_mechanism``, ``dp.tradeoff_curve``, ``dp.dp_sgd`` ...) and the lesson modules
(``dp.mechanisms``, ``dp.sparse_vector`` ...). Every other public name is reached through the
module that defines it, ``dp.<lesson>.<name>`` (``dp.mechanisms.privacy_loss``,
``dp.sgd.accuracy``); asked for at the top level, such a name raises an AttributeError that
says where it lives. Modules load on first use, so the import itself is quick (numpy, scipy,
pandas and matplotlib load when needed).

Where things live
-----------------
What a notebook teaches is one module each at the top level, or one package when the
idea has parts (``audit/``, ``local/``: every name reached from the package, a module per
part); read the module a notebook names and you read the code it runs.

- 01 ``anonymity`` (k-anonymity, l-diversity, t-closeness) and ``attacks/`` (linkage,
  homogeneity, differencing, query auditing, averaging, reconstruction, floating point)
- 02-03 ``curator`` (a budgeted server of noisy answers), ``attacks.reconstruction``
- 04 ``definition`` (what the definition promises: probability ratios, the hockey stick)
- 05 ``sensitivity``; 06-09 ``mechanisms``, ``bounds``, ``exponential``;
  10 ``comparison``; 11 ``audit/`` (the bound, the experiment, the zoo of mechanisms),
  ``discrete``
- 07 ``accounting``; 12 ``properties``; 13 ``tradeoff``; 14 ``clipping``;
  15 ``sparse_vector``; 16 ``rdp``, ``pld``; 17 ``local/`` (k-ary randomized response
  and unary encoding, local hashing, the estimates' variance, choosing a protocol);
  18 ``sgd``; 19 ``beyond_global``; 20 ``synthetic``
- the seed tables: ``datasets``

Support the notebooks use: ``panels/`` (the slider panels, one module per topic, loaded
when a panel is first built), ``plots`` and ``style`` (drawing, palette, lecture mode),
``notebook`` (navigation, showing a function's source).

Coursework machinery, kept apart in ``coursework/``: ``exercises`` (the notebooks'
exercise checks, reached as ``dp.exercises``), ``assignments/`` (the graded tasks, reached
as ``dp.assignments``), ``grading`` with its private ``_grade_*`` and ``_sandbox``
modules (``make grade``), ``nbgrader_export`` (``make nbgrader``) and ``student_copies``
(``make exercises``). ``cli`` is the ``dpteach`` command that hands all of it out.

What several modules share and a student need not read is kept apart in the private
package ``_support/``: ``validate`` (every parameter check), ``tables`` (table and column
checks for the anonymity lessons), ``gaussian`` (the exact Gaussian delta),
``audit_outputs``, ``densities`` (the Laplace and normal distribution functions in closed
form, so a first panel does not wait for scipy.stats) and ``lazy`` (scipy.special
imported on first use).
"""

import importlib as _importlib
import re as _re
from pathlib import Path as _Path

__version__ = "0.1.0"

#: the names the course's contract places at the top level, ``dp.NAME``; where each one is
#: defined is read from the lesson modules' ``__all__`` (see :func:`_homes`)
CONTRACT = (
    # mechanisms
    "laplace_scale", "laplace_mechanism", "gaussian_sigma", "gaussian_mechanism",
    "exponential_probabilities", "exponential_mechanism", "report_noisy_max",
    "randomized_response", "randomized_response_estimate",
    # accounting, the curator, sensitivity, exact integer noise
    "basic_composition", "advanced_composition", "PrivacyAccountant", "BudgetExceededError",
    "Curator", "global_sensitivity", "discrete_laplace_mechanism",
    # bounds
    "laplace_tail", "exponential_utility_threshold",
    # the second half of the course (notebooks 12-18)
    "group_privacy", "parallel_composition", "tradeoff_curve", "gaussian_tradeoff",
    "clipped_mean", "above_threshold", "gaussian_rdp", "subsampled_gaussian_rdp", "rdp_to_dp",
    "zcdp_to_dp", "gaussian_epsilon",
    # the third part (notebooks 19-20, the extensions of 15 and 17)
    "local_sensitivity_median", "smooth_sensitivity_median", "ptr_median",
    "sample_and_aggregate", "mwem", "sparse", "numeric_sparse", "olh_estimate",
    # the accountants, smooth sensitivity and PTR, synthetic data, DP-SGD
    "PLDAccountant", "RDPAccountant", "smooth_beta", "smooth_median", "distance_to_instability",
    "ptr_answer_probability", "range_queries", "independent_marginals", "split_budget",
    "dp_sgd",
)

#: modules reachable as ``dp.NAME`` (loaded on first use): the lessons by their own name;
#: what a notebook calls of the coursework wing (``dp.exercises.check_*``,
#: ``dp.assignments.check``) from where it lives, dpteach/coursework/
_SUBMODULES = {name: name for name in (
    "mechanisms", "accounting", "bounds", "curator", "sensitivity", "anonymity", "attacks",
    "audit", "datasets", "plots", "panels", "style", "discrete", "notebook",
    "comparison", "definition", "exponential", "properties", "tradeoff", "clipping",
    "sparse_vector", "rdp", "pld", "local", "sgd", "beyond_global",
    "synthetic", "coursework")}
_SUBMODULES.update(exercises="coursework.exercises", assignments="coursework.assignments")

__all__ = sorted(CONTRACT) + ["__version__"]

#: ``__all__ =`` or ``__all__ +=`` at the left margin of a module's source
_ALL = _re.compile(r"^__all__[ \t]*\+?=[ \t]*", _re.M)
#: (names read from the sources only, names with those of the lessons imported to read them)
_HOMES = {}


def _declared_names(module: str, *, importing: bool) -> list:
    """The names of a lesson's ``__all__`` (``module``: its path under dpteach, dotted),
    read from its source (``NAME.py``, or ``NAME/__init__.py`` for a package) without
    importing it. A lesson whose ``__all__`` holds more than strings (``*sorted(REGISTRY)``),
    or whose source is not there, is imported to read it if ``importing``, else gives what
    its source spells out."""
    base = _Path(__file__).parent.joinpath(*module.split("."))
    path = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
    names, complete = ([], False) if path is None else _names_in(path.read_text(encoding="utf-8"))
    if complete or not importing:
        return names
    return list(getattr(_importlib.import_module(f".{module}", __name__), "__all__", ()))


def _names_in(source: str):
    """The strings of every top-level ``__all__ = [...]`` and ``__all__ += [...]`` of a
    module's source, and whether that is all of it (False when a list holds more than
    strings, or ``__all__`` is computed: ``__all__ = base.__all__ + [...]``)."""
    names, complete = [], True
    for match in _ALL.finditer(source):
        if source[match.end():match.end() + 1] not in ("[", "("):
            complete = False
            continue
        text, depth = [], 0
        for line in source[match.end():].splitlines():
            line = line.split("#", 1)[0]
            text.append(line)
            depth += sum(map(line.count, "[({")) - sum(map(line.count, "])}"))
            if depth <= 0:
                break
        strings, whole = _strings("\n".join(text))
        names += strings
        complete = complete and whole
    return names, complete


def _strings(text: str):
    """The string items of a list or tuple display, and whether it holds nothing else."""
    import ast

    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return [], False
    items = node.elts if isinstance(node, (ast.List, ast.Tuple)) else []
    strings = [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return strings, bool(items) and len(strings) == len(items)


def _homes(*, importing: bool = False) -> dict:
    """public name -> the lessons whose ``__all__`` lists it (``"k_randomized_response_is_better"`` ->
    ``("local",)``), over every module of ``_SUBMODULES``, read once on first use. Without
    ``importing``, from the sources alone (the contract's names are spelled out there);
    with it, a lesson whose ``__all__`` is computed is imported to read it."""
    if importing not in _HOMES:
        homes = {}
        for lesson, module in _SUBMODULES.items():
            for name in _declared_names(module, importing=importing):
                homes.setdefault(name, [])
                if lesson not in homes[name]:
                    homes[name].append(lesson)
        _HOMES[importing] = {name: tuple(lessons) for name, lessons in homes.items()}
    return _HOMES[importing]


def __getattr__(name):
    if name in _SUBMODULES:
        module = _importlib.import_module(f".{_SUBMODULES[name]}", __name__)
        globals()[name] = module
        return module
    if name in CONTRACT:
        # a lesson whose __all__ is computed (a package gathering its modules' lists)
        # is imported to read it only when the sources alone do not place the name
        lessons = _homes().get(name) or _homes(importing=True).get(name, ())
        if len(lessons) != 1:
            raise AttributeError(f"the contract name {name!r} should be in the __all__ of "
                                 f"exactly one lesson module, not {list(lessons)}")
        value = getattr(__getattr__(lessons[0]), name)
        globals()[name] = value
        return value
    lessons = () if name.startswith("_") else _homes(importing=True).get(name, ())
    if lessons:
        where = " or ".join(f"dp.{lesson}.{name}" for lesson in lessons)
        raise AttributeError(f"module 'dpteach' has no attribute {name!r}: the top level holds "
                             f"the course's contract names only; this one lives in its lesson "
                             f"module, {where}")
    raise AttributeError(f"module 'dpteach' has no attribute {name!r}")


def __dir__():
    return sorted({n for n in globals() if n.startswith("_")} | {"CONTRACT"} | set(CONTRACT)
                  | set(_SUBMODULES))
