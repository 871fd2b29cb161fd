"""The local model: each person randomises their own answer before it leaves them.

Randomized response for one bit (notebook 04, :func:`dpteach.randomized_response`) grows
here into two ways of reporting one of k categories, each epsilon-LDP for every person:

- **k-ary randomized response** (k-RR, generalized randomized response): report the true
  category with probability p = e^eps / (e^eps + k - 1), otherwise one of the other k - 1
  uniformly (each with probability q = 1 / (e^eps + k - 1)). For k = 2 it *is* binary
  randomized response.
- **unary encoding**: write the category as a one-hot vector of k bits and randomise each
  bit. Symmetric (SUE, the basic one-time RAPPOR): each bit kept with probability
  e^(eps/2) / (e^(eps/2) + 1), i.e. binary randomized response at eps/2 on every bit.
  Optimized (OUE, Wang et al. 2017): the 1-bit is kept with probability
  p = 1/2 and each 0-bit becomes 1 with probability q = 1 / (e^eps + 1).

Both are estimated by the same unbiased correction of the report counts,
f_hat = (c / n - q) / (p - q), whose variance (Wang, Blocki, Li & Jha, USENIX Security
2017) is

    Var[f_hat_v] = q (1 - q) / (n (p - q)^2) + f_v (1 - p - q) / (n (p - q)).

A central curator adding Laplace noise to the histogram instead has error about
1/(eps n) per frequency, against about 1/(eps sqrt(n)) in the local model. Notebook 17.

Units: values are category indices 0..k-1; frequencies are fractions of the n people;
variances are of those fractions.

One idea per module, every public name reached from here (``dp.local.NAME``):

- :mod:`~dpteach.local.randomizers`: k-RR and unary encoding, their report
  probabilities, the shared correction (:func:`estimate_from_counts`) and
  :func:`local_epsilon`
- :mod:`~dpteach.local.hashing`: optimal local hashing (OLH), a few bits per report
- :mod:`~dpteach.local.variance`: the estimates' variance, local against central
- :mod:`~dpteach.local.simulation`: many people at once, from their report counts
- :mod:`~dpteach.local.protocols`: choosing a protocol (where the variances cross, how
  many bits each sends)
"""

from .hashing import olh_estimate, olh_hash_size, olh_reports, olh_variance
from .protocols import (PROTOCOLS, k_randomized_response_crossover_epsilon, k_randomized_response_crossover_k, protocol_variances,
                        report_bits)
from .randomizers import (MECHANISMS, estimate_from_counts, k_randomized_response,
                          k_randomized_response_estimate, k_randomized_response_keep_probability,
                          k_randomized_response_probabilities, local_epsilon, unary_encoding,
                          unary_encoding_estimate, unary_encoding_output_probabilities,
                          unary_encoding_probabilities)
from .simulation import central_histogram_estimate, example_frequencies, report_counts, true_counts
from .variance import central_variance, k_randomized_response_is_better, local_variance

__all__ = [
    "olh_hash_size",
    "olh_reports",
    "olh_estimate",
    "olh_variance",
    "MECHANISMS",
    "k_randomized_response_keep_probability",
    "k_randomized_response_probabilities",
    "k_randomized_response",
    "k_randomized_response_estimate",
    "unary_encoding_probabilities",
    "unary_encoding",
    "unary_encoding_estimate",
    "unary_encoding_output_probabilities",
    "local_epsilon",
    "local_variance",
    "central_variance",
    "report_counts",
    "estimate_from_counts",
    "central_histogram_estimate",
    "example_frequencies",
    "true_counts",
    "k_randomized_response_is_better",
    "PROTOCOLS",
    "protocol_variances",
    "k_randomized_response_crossover_k",
    "k_randomized_response_crossover_epsilon",
    "report_bits",
]
