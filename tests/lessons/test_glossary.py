"""The naming glossary (CONTRIBUTING.md, "The naming glossary"), held by the signatures.

Every public callable of the lesson modules (and the public methods of their public
classes) is read with ``inspect.signature`` and held to the glossary's rules:

* ``rng`` is keyword-only with default None;
* ``size`` is the output shape: keyword-only, default None, after ``rng``;
* the sensitivities, epsilon and delta come in that order;
* no parameter called ``q`` or ``batch_rate`` (``sampling_rate`` or ``quantile``), none abbreviating epsilon
  (``eps``, ``eps_grid``), no function name abbreviating randomized response (``rr_``,
  ``krr_``).

Where the code departs from a rule on purpose (a name of the design contract, a textbook's
notation), :data:`DEPARTURES` says so with the reason; a departure that no longer departs
must leave the table, so the table stays true.
"""

import importlib
import inspect
import pkgutil

import pytest

import dpteach

#: namespaces that are not lessons: the course helpers and the machinery
NOT_LESSONS = {"notebook", "plots", "style", "panels", "coursework", "datasets"}

ORDER = ("sensitivity", "l1_sensitivity", "l2_sensitivity", "epsilon", "delta")

#: function (qualified name without its module) -> {rule: why it departs}
CONTRACT_Q = "the design contract names the sampling rate q (compose_gaussian(sigma, *, q=1.0, steps=1))"
SVT_SENSITIVITY = ("the design contract's above_threshold(query_answers, threshold, epsilon, *, "
                   "sensitivity=1.0): the sparse vector family keeps its keyword-only sensitivity")
TWO_DISTRIBUTIONS = "p and q name two distributions, the textbooks' notation"
RECORD_COUNT = ("size is a record count here, in the design contract's "
                "global_sensitivity(query, universe, size)")
DEPARTURES = {
    "CompositionAccountant.compose_gaussian": {"q": CONTRACT_Q},
    "ExactGaussianAccountant.compose_gaussian": {"q": CONTRACT_Q},
    "PLDAccountant.compose_gaussian": {"q": CONTRACT_Q},
    "RDPAccountant.compose_gaussian": {"q": CONTRACT_Q},
    "subsampled_gaussian_rdp": {"q": "the design contract's subsampled_gaussian_rdp(q, sigma, orders)"},
    "LPResult": {"q": "a linear program's result: q is its query matrix, not a rate"},
    "emd": {"q": TWO_DISTRIBUTIONS},
    "hockey_stick_divergence": {"q": TWO_DISTRIBUTIONS},
    "max_probability_ratio": {"q": TWO_DISTRIBUTIONS},
    "privacy_loss_between": {"q": TWO_DISTRIBUTIONS},
    "smallest_delta": {"q": TWO_DISTRIBUTIONS},
    "above_threshold": {"order": SVT_SENSITIVITY},
    "above_threshold_probabilities": {"order": SVT_SENSITIVITY},
    "above_threshold_scales": {"order": SVT_SENSITIVITY},
    "no_stop_pattern_probability": {"order": SVT_SENSITIVITY},
    "noisy_top_c": {"order": SVT_SENSITIVITY},
    "numeric_sparse": {"order": SVT_SENSITIVITY},
    "sparse": {"order": SVT_SENSITIVITY},
    "sparse_accuracy_bound": {"order": SVT_SENSITIVITY},
    "sparse_scales": {"order": SVT_SENSITIVITY},
    "above_threshold_draws": {"order": SVT_SENSITIVITY,
                              "size": "size is a number of runs (an int, before rng)"},
    "sparse_draws": {"order": SVT_SENSITIVITY,
                     "size": "size is a number of runs (an int, before rng)"},
    "global_sensitivity": {"size": RECORD_COUNT},
    "l1_sensitivity": {"size": RECORD_COUNT},
    "l2_sensitivity": {"size": RECORD_COUNT},
    "all_datasets": {"size": RECORD_COUNT},
    "count_datasets": {"size": RECORD_COUNT},
    "gaussian_epsilon": {"order": ("the design contract's gaussian_epsilon(sigma, delta, *, k=1, "
                                   "l2_sensitivity=1.0)")},
    "accuracy_bound": {"order": "the error bound's parameters (beta, epsilon) before the sensitivity"},
    "central_variance": {"order": "epsilon first, the sensitivity keyword-only"},
    "central_histogram_estimate": {"order": "epsilon first, the sensitivity keyword-only"},
    "choose_mechanism": {"order": "epsilon before the two sensitivities it compares"},
    "noise_std": {"order": "epsilon before the two sensitivities it compares"},
    "composition_epsilons": {"order": "the per-step epsilon and delta before the totals' slack"},
    "privacy_loss_distribution": {"order": "a mechanism's name and its own parameters, keyword-only"},
    "variant_mechanism": {"order": "a variant's name and its own parameters"},
    "variant_probabilities": {"order": "a variant's name and its own parameters"},
}


def _public_callables():
    """{qualified name without module: signature} over the lesson modules' __all__."""
    found = {}
    for info in pkgutil.walk_packages(dpteach.__path__, "dpteach."):
        parts = info.name.split(".")[1:]
        if parts[0] in NOT_LESSONS or any(p.startswith("_") for p in parts):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            members = [(name, obj)]
            if inspect.isclass(obj):
                members += [(f"{name}.{k}", v) for k, v in vars(obj).items()
                            if inspect.isfunction(v) and not k.startswith("_")]
            for qual, fn in members:
                if not callable(fn):
                    continue
                try:
                    found[qual] = inspect.signature(fn)
                except (TypeError, ValueError):
                    continue
    return found


def departures(qual, signature):
    """The glossary rules ``signature`` breaks: {"rng", "size", "order", "q", "eps", "rr"}."""
    ps = signature.parameters
    names = list(ps)
    out = set()
    if "rng" in ps and (ps["rng"].kind is not inspect.Parameter.KEYWORD_ONLY
                        or ps["rng"].default is not None):
        out.add("rng")
    if "size" in ps and (ps["size"].kind is not inspect.Parameter.KEYWORD_ONLY
                         or ps["size"].default is not None
                         or ("rng" in ps and names.index("size") < names.index("rng"))):
        out.add("size")
    positions = [names.index(n) for n in ORDER if n in ps]
    if positions != sorted(positions):
        out.add("order")
    if "q" in ps or "batch_rate" in ps:
        out.add("q")
    if any(n == "eps" or n.startswith("eps_") for n in names):
        out.add("eps")
    last = qual.split(".")[-1]
    if last.startswith(("rr_", "krr_")) or "_rr_" in last or "_krr_" in last:
        out.add("rr")
    return out


CALLABLES = _public_callables()


def test_the_walk_reaches_the_lessons():
    assert {"laplace_mechanism", "above_threshold", "olh_estimate", "mwem", "dp_sgd",
            "RDPAccountant.compose_gaussian", "private_quantile"} <= set(CALLABLES)
    assert len(CALLABLES) > 250


@pytest.mark.parametrize("qual", sorted(CALLABLES))
def test_a_signature_follows_the_glossary(qual):
    broken = departures(qual, CALLABLES[qual])
    allowed = set(DEPARTURES.get(qual, {}))
    assert broken <= allowed, (f"{qual}{CALLABLES[qual]} breaks the naming glossary "
                               f"(CONTRIBUTING.md): {sorted(broken - allowed)}")
    assert allowed <= broken, (f"{qual} no longer departs from the glossary in "
                               f"{sorted(allowed - broken)}: remove it from DEPARTURES")


def test_every_departure_names_a_function_that_exists():
    assert set(DEPARTURES) <= set(CALLABLES)


def _sig(text):
    namespace = {}
    exec(f"def f{text}: pass", namespace)
    return inspect.signature(namespace["f"])


@pytest.mark.parametrize("text, rule", [
    ("(value, sensitivity, epsilon, rng=None)", "rng"),
    ("(value, sensitivity, epsilon, *, size=None, rng=None)", "size"),
    ("(value, epsilon, sensitivity)", "order"),
    ("(values, q, epsilon)", "q"),
    ("(value, sensitivity, eps)", "eps"),
])
def test_the_rules_catch_a_wrong_twin(text, rule):
    assert rule in departures("f", _sig(text))
    assert departures("f", _sig("(value, sensitivity, epsilon, delta, *, rng=None, size=None)")) == set()
    assert "rr" in departures("krr_is_better", _sig("()"))
