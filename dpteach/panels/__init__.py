"""Slider panels, one module per notebook topic.

Every builder is registered in :data:`REGISTRY` (name -> builder) by the module that
defines it, and is an attribute of this package, so a notebook writes
``dp.panels.laplace_privacy_loss()``. The builders are imported by name below (so "go
to definition" lands on the builder); any panel module added later is imported by the
loop at the end and registers itself too.
"""

import importlib
import pkgutil

from ._base import REGISTRY, Panel, register
# the builders, by name (each is also in REGISTRY and __all__)
from .anonymity import anonymity_emd_salary, anonymity_generalizer, anonymity_skewness
from .attacks import attacks_averaging, attacks_curator_budget, attacks_differencing
from .audit import audit_convergence, fp_attack_fraction
from .beyond_global import median_local_sensitivity, ptr_answer_rate, smooth_vs_global_error
from .choosing import choosing_count_error
from .clipping import clipping_tradeoff
from .composition import composition_advanced, composition_budget_split, composition_two_queries
from .dp_definition import dp_delta_blip, dp_prior_posterior, dp_randomized_response
from .exponential import (exponential_apples, exponential_half_ratio, exponential_selection,
                          exponential_utility)
from .first_taste import first_taste_count
from .gaussian import (gaussian_privacy_loss, gaussian_sigma_vs_epsilon,
                       gaussian_vs_laplace_queries)
from .dp_sgd import dp_sgd_attack
from .laplace import (laplace_density, laplace_histogram, laplace_privacy_loss,
                      laplace_tail_vs_samples)
from .local import local_vs_central
from .modern_accounting import accounting_five_ways, accounting_subsampling
from .properties import group_privacy_loss, parallel_histogram, postprocessing
from .reconstruction import (reconstruction_dp_defence, reconstruction_exhaustive,
                             reconstruction_random_queries)
from .sensitivity import sensitivity_local_global
from .sparse_vector import sparse_vector_queries
from .tradeoff import loss_distribution, tradeoff_attack, tradeoff_curves

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

globals().update(REGISTRY)
# former names of renamed panels (they clashed with core functions): one release
globals().update({old: REGISTRY[new] for old, new in REGISTRY.old_names.items()})
__all__ = ["REGISTRY", "Panel", "register", *sorted(REGISTRY)]
