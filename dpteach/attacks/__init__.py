"""Attacks on released statistics and on anonymised tables.

* linkage, homogeneity, background knowledge, skewness and similarity attacks on
  k-anonymous, l-diverse and t-close tables (``anonymity_attacks``, notebook 01);
* differencing, query auditing and averaging (notebook 02);
* Dinur-Nissim reconstruction (notebook 03);
* Mironov's floating-point attack (``floating_point``, notebook 11).

Every attack is reached as ``dp.attacks.<attack>``.
"""

from __future__ import annotations

from .anonymity_attacks import (linkage_attack, homogeneity_attack, background_knowledge_attack,
                                skewness_attack, similarity_attack)
from .differencing import (difference_of_counts, difference_of_means, sickle_cell_queries,
                           exact_count, exact_mean, perturb_records, blood_sugar_differencing,
                           difference_noise_pdf)
from .query_auditing import (max_query, infer_from_max_queries, MaxAuditor, refusal_attack)
from .averaging import (averaging_attack, averaging_error, collect_releases, NaiveNoisyServer,
                        CachingNoisyServer, equivalent_phrasings)
from .reconstruction import (random_subset_queries, answer_queries, noisy_answers, reconstruct_lsq,
                             reconstruct_lp, lp_decode, textbook_lp, subset_sums,
                             bounded_noise_answers, decoy_answers, consistent_candidates,
                             reconstruct_exhaustive, fraction_agree, phase_transition)
from .floating_point import (naive_laplace_mechanism, floating_point_attack)

__all__ = ["CachingNoisyServer", "MaxAuditor", "NaiveNoisyServer", "answer_queries",
           "averaging_attack", "averaging_error", "background_knowledge_attack",
           "blood_sugar_differencing", "bounded_noise_answers", "collect_releases",
           "consistent_candidates", "decoy_answers", "difference_noise_pdf",
           "difference_of_counts", "difference_of_means", "equivalent_phrasings",
           "exact_count", "exact_mean", "floating_point_attack", "fraction_agree",
           "homogeneity_attack", "infer_from_max_queries", "linkage_attack",
           "lp_decode", "max_query", "naive_laplace_mechanism", "noisy_answers",
           "perturb_records", "phase_transition", "random_subset_queries",
           "reconstruct_exhaustive", "reconstruct_lp", "reconstruct_lsq",
           "refusal_attack", "sickle_cell_queries", "similarity_attack",
           "skewness_attack", "subset_sums", "textbook_lp"]
