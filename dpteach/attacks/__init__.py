"""Attacks on released statistics: differencing, query auditing, averaging,
Dinur-Nissim reconstruction, and Mironov's floating-point attack. The attacks on
anonymised tables (linkage, homogeneity, background knowledge, skewness, similarity) are
in ``anonymity_attacks`` and reached as ``dp.anonymity.<attack>`` (notebook 01).

Names load on first use (see ``_EXPORTS``), like the top-level package.
"""

from __future__ import annotations

import importlib

# public name -> submodule of dpteach.attacks that defines it
_EXPORTS = {
    # differencing, query auditing, averaging (notebook 02)
    "difference_of_counts": "differencing",
    "difference_of_means": "differencing",
    "sickle_cell_queries": "differencing",
    "exact_count": "differencing",
    "exact_mean": "differencing",
    "perturb_records": "differencing",
    "blood_sugar_differencing": "differencing",
    "difference_noise_pdf": "differencing",
    "max_query": "query_auditing",
    "infer_from_max_queries": "query_auditing",
    "MaxAuditor": "query_auditing",
    "refusal_attack": "query_auditing",
    "averaging_attack": "averaging",
    "averaging_error": "averaging",
    "collect_releases": "averaging",
    "NaiveNoisyServer": "averaging",
    "CachingNoisyServer": "averaging",
    "equivalent_phrasings": "averaging",
    # Dinur-Nissim reconstruction (notebook 03)
    "random_subset_queries": "reconstruction",
    "answer_queries": "reconstruction",
    "noisy_answers": "reconstruction",
    "reconstruct_lsq": "reconstruction",
    "reconstruct_lp": "reconstruction",
    "lp_decode": "reconstruction",
    "textbook_lp": "reconstruction",
    "subset_sums": "reconstruction",
    "bounded_noise_answers": "reconstruction",
    "decoy_answers": "reconstruction",
    "consistent_candidates": "reconstruction",
    "reconstruct_exhaustive": "reconstruction",
    "fraction_agree": "reconstruction",
    "phase_transition": "reconstruction",
    "naive_laplace_mechanism": "floating_point",
    "floating_point_attack": "floating_point",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpteach.attacks' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
