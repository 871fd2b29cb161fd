"""Slider panels, one module per notebook topic.

Every builder is listed in :data:`REGISTRY` (name -> builder) and is an attribute of
this package, so a notebook writes ``dp.panels.laplace_privacy_loss()``. A panel's
module (and what it imports: scipy, pandas, ...) is loaded only when that panel is first
looked up, so the first panel of a notebook does not wait for the other twenty modules.
``_MODULES`` below says where each builder lives (``tests/test_layout.py`` holds it to
what the modules register); a panel module added later without an entry here is still
found: looking up an unknown name loads every panel module once.
"""

import importlib

from ._base import REGISTRY, Panel, register

#: panel module -> the builders it defines (each registers itself with @register)
_MODULES = {
    "anonymity": ("anonymity_emd_salary", "anonymity_generalizer", "anonymity_skewness"),
    "attacks": ("attacks_averaging", "attacks_curator_budget", "attacks_differencing"),
    "audit": ("audit_convergence", "fp_attack_fraction"),
    "beyond_global": ("median_local_sensitivity", "ptr_answer_rate", "smooth_vs_global_error"),
    "choosing": ("choosing_count_error",),
    "clipping": ("clipping_tradeoff",),
    "composition": ("composition_advanced", "composition_budget_split", "composition_two_queries"),
    "dp_definition": ("dp_delta_blip", "dp_prior_posterior", "dp_randomized_response"),
    "dp_sgd": ("dp_sgd_attack",),
    "exponential": ("exponential_apples", "exponential_half_ratio", "exponential_selection",
                    "exponential_utility"),
    "first_taste": ("first_taste_count",),
    "gaussian": ("gaussian_privacy_loss", "gaussian_sigma_vs_epsilon",
                 "gaussian_vs_laplace_queries"),
    "laplace": ("laplace_density", "laplace_histogram", "laplace_privacy_loss",
                "laplace_tail_vs_samples"),
    "local": ("local_protocols_variance", "local_vs_central"),
    "modern_accounting": ("accounting_five_ways", "accounting_subsampling"),
    "properties": ("group_privacy_loss", "parallel_histogram", "postprocessing"),
    "reconstruction": ("reconstruction_dp_defence", "reconstruction_exhaustive",
                       "reconstruction_random_queries"),
    "sensitivity": ("sensitivity_local_global",),
    "sparse_vector": ("sparse_answers", "sparse_vector_queries"),
    "synthetic": ("mwem_synthetic",),
    "tradeoff": ("loss_distribution", "tradeoff_attack", "tradeoff_curves"),
}
REGISTRY.declare(__name__, _MODULES)


def __getattr__(name):
    """``dp.panels.NAME``: a builder (its module loads now) or a panel module."""
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if not name.startswith("_"):
        try:
            return REGISTRY[name]
        except KeyError:
            pass
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(REGISTRY) | set(_MODULES))


__all__ = ["REGISTRY", "Panel", "register", *sorted(REGISTRY)]
