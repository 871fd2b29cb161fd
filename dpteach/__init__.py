"""dpteach: a teaching kit for differential privacy.

``import dpteach as dp`` gives the public API below (``dp.laplace_mechanism``,
``dp.tradeoff_curve``, ``dp.dp_sgd`` ...). Submodules load on first use, so the import
itself is quick (numpy, scipy, pandas and matplotlib load when needed).

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

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> submodule that defines it
_EXPORTS = {
    # mechanisms (notebooks 04, 06, 08, 09)
    "laplace_scale": "mechanisms",
    "laplace_mechanism": "mechanisms",
    "clamped_sum": "mechanisms",
    "gaussian_sigma": "mechanisms",
    "gaussian_delta": "mechanisms",
    "sigma_curves": "mechanisms",
    "gaussian_mechanism": "mechanisms",
    "exponential_probabilities": "mechanisms",
    "exponential_mechanism": "mechanisms",
    "report_noisy_max": "mechanisms",
    "randomized_response": "mechanisms",
    "randomized_response_keep_probability": "mechanisms",
    "randomized_response_estimate": "mechanisms",
    "output_distribution": "mechanisms",
    "privacy_loss": "mechanisms",
    # exact integer noise (notebook 11)
    "discrete_laplace_mechanism": "discrete",
    "discrete_gaussian_mechanism": "discrete",
    "discrete_laplace_pmf": "discrete",
    "discrete_gaussian_pmf": "discrete",
    # accounting (notebook 07)
    "basic_composition": "accounting",
    "advanced_composition": "accounting",
    "PrivacyAccountant": "accounting",
    "BudgetExceededError": "accounting",
    "advanced_composition_crossover": "accounting",
    "advanced_composition_epsilon": "accounting",
    "split_budget": "accounting",
    "joint_privacy_loss": "accounting",
    # the definition on two output distributions (notebook 04)
    "hockey_stick_divergence": "definition",
    "smallest_delta": "definition",
    "max_probability_ratio": "definition",
    "blip_distributions": "definition",
    "coin_flip_survey": "definition",
    "gaussian_loss_tail": "definition",
    "posterior_bounds": "definition",
    "rr_standard_error": "definition",
    # curator (notebooks 02, 03)
    "Curator": "curator",
    # sensitivity (notebook 05)
    "global_sensitivity": "sensitivity",
    "local_sensitivity": "sensitivity",
    "all_datasets": "sensitivity",
    "count_datasets": "sensitivity",
    "l1_distance": "sensitivity",
    "l2_distance": "sensitivity",
    # bounds (notebooks 06, 09)
    "laplace_std": "bounds",
    "laplace_tail": "bounds",
    "laplace_accuracy": "bounds",
    "exponential_utility_threshold": "bounds",
    # style
    "lecture_mode": "style",
    "PALETTE": "style",
    # properties (notebook 12)
    "group_privacy": "properties",
    "parallel_composition": "properties",
    # privacy as a hypothesis test (notebook 13)
    "tradeoff_curve": "tradeoff",
    "gaussian_tradeoff": "tradeoff",
    "laplace_tradeoff": "tradeoff",
    "privacy_loss_distribution": "tradeoff",
    # comparison (notebook 10)
    "mechanism_table": "comparison",
    "choose_mechanism": "comparison",
    "MECHANISMS": "comparison",
    "count_release_errors": "comparison",
    "noisy_argmax_probabilities": "comparison",
    # clipping and private quantiles (notebook 14)
    "clipped_mean": "clipping",
    "private_quantile": "clipping",
    # the sparse vector technique (notebook 15)
    "above_threshold": "sparse_vector",
    # modern accounting: Renyi DP, zCDP, the exact Gaussian (notebook 16)
    "gaussian_rdp": "rdp",
    "gaussian_zcdp": "rdp",
    "rdp_to_dp": "rdp",
    "zcdp_to_dp": "rdp",
    "gaussian_epsilon": "rdp",
    "subsampled_gaussian_rdp": "rdp",
    "RDPAccountant": "rdp",
    "PLDAccountant": "pld",
    # the local model (notebook 17)
    "k_randomized_response": "local",
    "k_randomized_response_estimate": "local",
    "unary_encoding": "local",
    "unary_encoding_estimate": "local",
    "local_variance": "local",
    # DP-SGD (notebook 18; the module is dpteach.sgd)
    "dp_sgd": "sgd",
    "clip_gradients": "sgd",
    "noisy_gradient_sum": "sgd",
    "membership_inference": "sgd",
    # the rest of the public names of notebooks 12-18's modules (issue 19); left out because
    # the name clashes: MECHANISMS (comparison, tradeoff, local). clopper_pearson has one home, audit (notebooks 11 and 13, A7)
    "clopper_pearson": "audit",
    "gaussian_group_delta": "properties",
    "postprocess_laplace": "properties",
    "max_log_ratio": "properties",
    "OutputLaw": "properties",
    "POSTPROCESSINGS": "properties",
    "group_curves": "properties",
    "parallel_costs": "properties",
    "LossDistribution": "tradeoff",
    "membership_attack": "tradeoff",
    "empirical_tradeoff": "tradeoff",
    "outside_region": "tradeoff",
    "advantage_bound": "tradeoff",
    "attack_thresholds": "tradeoff",
    "clip_range": "clipping",
    "clipped_mean_noise_scales": "clipping",
    "noisy_sum_and_count": "clipping",
    "clipped_mean_error": "clipping",
    "clipped_mean_ratio": "clipping",
    "clipped_mean_releases": "clipping",
    "ClippedMeanError": "clipping",
    "quantile_interval_probabilities": "clipping",
    "example_incomes": "clipping",
    "above_threshold_draws": "sparse_vector",
    "above_threshold_probabilities": "sparse_vector",
    "above_threshold_scales": "sparse_vector",
    "privacy_loss_between": "definition",
    "VARIANTS": "sparse_vector",
    "variant_mechanism": "sparse_vector",
    "variant_probabilities": "sparse_vector",
    "no_stop_pattern_probability": "sparse_vector",
    "accuracy_bound": "sparse_vector",
    "run_error": "sparse_vector",
    "example_answers": "sparse_vector",
    "sparse_scales": "sparse_vector",
    "sparse_draws": "sparse_vector",
    "SparseRuns": "sparse_vector",
    "sparse_run_error": "sparse_vector",
    "sparse_accuracy_bound": "sparse_vector",
    "noisy_top_c": "sparse_vector",
    "rdp_to_dp_order": "rdp",
    "DEFAULT_ORDERS": "rdp",
    "composition_epsilons": "rdp",
    "k_randomized_response_keep_probability": "local",
    "k_randomized_response_probabilities": "local",
    "unary_encoding_probabilities": "local",
    "unary_encoding_output_probabilities": "local",
    "local_epsilon": "local",
    "central_variance": "local",
    "report_counts": "local",
    "estimate_from_counts": "local",
    "central_histogram_estimate": "local",
    "example_frequencies": "local",
    "true_counts": "local",
    "krr_is_better": "local",
    "PROTOCOLS": "local",
    "protocol_variances": "local",
    "krr_crossover_k": "local",
    "krr_crossover_epsilon": "local",
    "report_bits": "local",
    "per_example_gradients": "sgd",
    "logistic_loss": "sgd",
    "predict": "sgd",
    "accuracy": "sgd",
    "DPSGDResult": "sgd",
    "make_overfit_data": "sgd",
    "EXAMPLE": "sgd",
    # beyond global sensitivity (notebook 19)
    "local_sensitivity_median": "beyond_global",
    "median_sensitivity_window": "beyond_global",
    "smooth_sensitivity_median": "beyond_global",
    "distance_to_instability": "beyond_global",
    "ptr_median": "beyond_global",
    "ptr_answer_probability": "beyond_global",
    "smooth_median": "beyond_global",
    "smooth_beta": "beyond_global",
    "sample_and_aggregate": "beyond_global",
    # synthetic data (notebook 20)
    "mwem": "synthetic",
    "mwem_rounds": "synthetic",
    "multiplicative_weights_update": "synthetic",
    "mwem_selection_probabilities": "synthetic",
    "range_queries": "synthetic",
    "workload_error": "synthetic",
    "independent_marginals": "synthetic",
    "noisy_histogram": "synthetic",
    "example_table": "synthetic",
    "table_workload": "synthetic",
    # added with notebooks 12-14's new sections
    "group_privacy_chain": "properties",
    "gdp_delta": "tradeoff",
    "gdp_compose": "tradeoff",
    "gdp_clt_mu": "tradeoff",
    "centred_clipped_mean": "clipping",
    "known_n_mean": "clipping",
    # the sparse vector technique in full (notebook 15) and local hashing (notebook 17)
    "sparse": "sparse_vector",
    "numeric_sparse": "sparse_vector",
    "olh_estimate": "local",
    "olh_hash_size": "local",
    "olh_reports": "local",
    "olh_variance": "local",
    "membership_game": "sgd",
}

#: submodules reachable as ``dp.NAME`` (loaded on first use): the lessons by their own
#: name; what a notebook calls of the coursework wing (``dp.exercises.check_*``,
#: ``dp.assignments.check``) from where it lives, dpteach/coursework/
_SUBMODULES = {name: name for name in (
    "mechanisms", "accounting", "bounds", "curator", "sensitivity", "anonymity", "attacks",
    "audit", "datasets", "plots", "panels", "style", "discrete", "notebook",
    "comparison", "definition", "exponential", "properties", "tradeoff", "clipping",
    "sparse_vector", "rdp", "pld", "local", "sgd", "beyond_global",
    "synthetic", "coursework")}
_SUBMODULES.update(exercises="coursework.exercises", assignments="coursework.assignments")

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    if name in _EXPORTS:
        module = importlib.import_module(f".{_EXPORTS[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        module = importlib.import_module(f".{_SUBMODULES[name]}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'dpteach' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS) | set(_SUBMODULES))
