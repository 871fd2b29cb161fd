"""Table-driven bad-input tests: every public function, every parameter.

Each row of the table is ``(callable, good_kwargs, param, bad_values)``: the call with
``good_kwargs`` works, and replacing ``param`` by any one of ``bad_values`` must raise
ValueError or TypeError *before any work* (no random number drawn), with a message that
names the parameter. A test is one function's parameter: it tries every bad value and
lists each that slipped through (one test per value would spend most of its time in
pytest's own bookkeeping: there are over ten thousand values).

To cover another module, add a ``Spec`` to ``SPECS`` below (a callable, keyword arguments
that work, and for each parameter the list of bad values -- the shared lists such as
``BAD_EPSILON`` cover the usual suspects), or append raw rows to ``EXTRA_ROWS``.

Below the table: the rows generated from the checks a function declares with
``@checked`` (its ``__checks__``), and the fuzz of dpteach.sparse_vector, dpteach.local,
dpteach.local.protocols and dpteach.pld. The bad-input rows of a module that has its own
test file are in that file (clipping, sparse_vector, beyond_global, synthetic), from the
same lists of tests/_bad_values.py.
"""

import re
from dataclasses import dataclass, field

import numpy as np
import pytest

from dpteach import accounting, bounds, mechanisms
from _bad_values import public_names, swept  # bad rows for a parameter that accepts arrays
# the usual bad values by kind, one table for every bad-input test
from _bad_values import (BAD_BITS, BAD_BOOL_FLAG, BAD_COUNT, BAD_DELTA, BAD_DELTA_REQUIRED,
                         BAD_EPSILON, BAD_REAL, BAD_RNG, BAD_SCALE, BAD_SCORES, BAD_SENSITIVITY,
                         BAD_SENSITIVITY_POSITIVE, BAD_SIZE, INF, NAN, NOT_A_NUMBER)
from _bad_values import BAD_VALUES_NONEMPTY as BAD_VALUES
import inspect
from dpteach._support import validate as v
from dpteach import notebook
from _bad_values import bad_values_for
import math
import time
from _bad_values import check_row, rows
from dpteach import local, pld, sparse_vector as sv
from dpteach.local import protocols as lp


@dataclass
class Spec:
    func: object
    good: dict
    bad: dict = field(default_factory=dict)
    name: str = ""

    def rows(self):
        label = self.name or getattr(self.func, "__name__", repr(self.func))
        for param, values in self.bad.items():
            yield pytest.param(self.func, self.good, param, list(values), id=f"{label}-{param}")


def _short(v):
    text = repr(v)
    return text if len(text) <= 20 else text[:17] + "..."


# ------------------------------------------------------- helpers for methods and classes
def accountant_spend(epsilon, delta=0.0, label=None):
    return accounting.PrivacyAccountant(5.0, 0.5).spend(epsilon, delta, label)


def accountant_can_spend(epsilon, delta=0.0):
    return accounting.PrivacyAccountant(5.0, 0.5).can_spend(epsilon, delta)


def rng_kw():
    return np.random.default_rng(0)


# ------------------------------------------------------------------------------ the table
SPECS = [
    # mechanisms
    Spec(mechanisms.laplace_scale, dict(sensitivity=1.0, epsilon=0.5),
         dict(sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON)),
    Spec(mechanisms.laplace_mechanism, dict(value=[1.0, 2.0], sensitivity=1.0, epsilon=0.5, size=3),
         dict(value=BAD_VALUES, sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON, rng=BAD_RNG,
              size=BAD_SIZE)),
    Spec(mechanisms.clamped_sum, dict(values=[1.0, 7.0, 30.0], lower=0.0, upper=10.0,
                                      epsilon=0.5, size=3),
         dict(values=[v for v in BAD_VALUES if not (isinstance(v, list) and v == [])],
              lower=BAD_REAL + [10.0, 11.0], upper=BAD_REAL + [0.0, -1.0], epsilon=BAD_EPSILON,
              rng=BAD_RNG, size=BAD_SIZE)),
    Spec(mechanisms.gaussian_sigma, dict(l2_sensitivity=1.0, epsilon=0.5, delta=1e-5),
         dict(l2_sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON, delta=BAD_DELTA_REQUIRED,
              analytic=BAD_BOOL_FLAG)),
    Spec(mechanisms.gaussian_sigma, dict(l2_sensitivity=1.0, epsilon=2.0, delta=1e-5, analytic=True),
         dict(l2_sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON, delta=BAD_DELTA_REQUIRED),
         name="gaussian_sigma_analytic"),
    Spec(mechanisms.gaussian_delta, dict(sigma=1.0, l2_sensitivity=1.0, epsilon=0.5),
         dict(sigma=BAD_SCALE, l2_sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON)),
    Spec(mechanisms.gaussian_mechanism,
         dict(value=[1.0, 2.0], l2_sensitivity=1.0, epsilon=0.5, delta=1e-5, size=2),
         dict(value=BAD_VALUES, l2_sensitivity=BAD_SENSITIVITY, epsilon=BAD_EPSILON,
              delta=BAD_DELTA_REQUIRED, analytic=BAD_BOOL_FLAG, rng=BAD_RNG, size=BAD_SIZE)),
    Spec(mechanisms.exponential_probabilities, dict(scores=[1.0, 2.0], sensitivity=1.0, epsilon=0.5),
         dict(scores=BAD_SCORES, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON)),
    Spec(mechanisms.exponential_mechanism,
         dict(candidates=["a", "b"], scores=[1.0, 2.0], sensitivity=1.0, epsilon=0.5, size=4),
         dict(candidates=[[["a", "b"]], "ab", ["a"], ["a", "b", "c"], None],
              scores=BAD_SCORES, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              rng=BAD_RNG, size=BAD_SIZE)),
    Spec(mechanisms.report_noisy_max, dict(scores=[1.0, 2.0], sensitivity=1.0, epsilon=0.5),
         dict(scores=BAD_SCORES, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              monotonic=BAD_BOOL_FLAG, rng=BAD_RNG)),
    Spec(mechanisms.randomized_response, dict(bits=[0, 1, 1], epsilon=1.0),
         dict(bits=BAD_BITS, epsilon=BAD_EPSILON, rng=BAD_RNG)),
    Spec(mechanisms.randomized_response_keep_probability, dict(epsilon=1.0),
         dict(epsilon=BAD_EPSILON)),
    Spec(mechanisms.randomized_response_estimate, dict(reports=[0, 1, 1], epsilon=1.0),
         dict(reports=BAD_BITS, epsilon=BAD_EPSILON)),
    Spec(mechanisms.output_distribution, dict(value=0.0, scale=1.0),
         dict(value=BAD_REAL + [[0.0, 1.0]], scale=BAD_SCALE,
              noise=["cauchy", "Laplace", None, 1, "", np.array(["laplace", "gaussian"])])),
    Spec(mechanisms.privacy_loss, dict(r=[0.0, 1.0], value1=0.0, value2=1.0, scale=1.0),
         dict(r=BAD_VALUES, value1=BAD_REAL, value2=BAD_REAL, scale=BAD_SCALE,
              noise=["cauchy", None, 1, np.array(["laplace", "gaussian"])])),
    # accounting
    Spec(accounting.basic_composition, dict(epsilons=[0.1, 0.2], deltas=[0.0, 1e-6]),
         dict(epsilons=[[0.1, NAN], [0.1, INF], [0.1, 0.0], [0.1, -0.2], [0.1, True], [0.1, "0.2"],
                        [0.1, None], [], "0.1", NAN, 0],
              deltas=[[0.0, NAN], [0.0, 1.0], [0.0, -1e-9], [0.0, True], [0.0, "0"], [0.0, None],
                      [0.0], [0.0, 0.0, 0.0], "00"])),
    # every parameter may be an array (a panel sweeps it): each bad value is refused alone,
    # inside a list and inside an array, naming the parameter
    Spec(accounting.advanced_composition, dict(epsilon=0.1, delta=1e-7, k=10, delta_slack=1e-6),
         dict(epsilon=swept(BAD_EPSILON, 0.1), delta=swept(BAD_DELTA, 1e-7), k=swept(BAD_COUNT, 10),
              delta_slack=swept(BAD_DELTA_REQUIRED, 1e-6))),
    Spec(accounting.PrivacyAccountant, dict(epsilon=1.0, delta=1e-5),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA)),
    Spec(accountant_spend, dict(epsilon=0.1, delta=1e-6, label="q"),
         dict(epsilon=BAD_REAL + [-0.1, -1e-300], delta=BAD_DELTA), name="PrivacyAccountant.spend"),
    Spec(accountant_can_spend, dict(epsilon=0.1, delta=1e-6),
         dict(epsilon=BAD_REAL + [-0.1], delta=BAD_DELTA), name="PrivacyAccountant.can_spend"),
    # bounds
    Spec(bounds.laplace_std, dict(scale=1.0),
         dict(scale=[NAN, -INF, np.float64(NAN), -1.0, -1e-300] + NOT_A_NUMBER)),
    Spec(bounds.laplace_tail, dict(scale=1.0, t=[0.0, 1.0]),
         dict(scale=BAD_SCALE, t=BAD_VALUES + [-1.0, [1.0, -0.5]])),
    Spec(bounds.laplace_accuracy, dict(scale=1.0, beta=0.05),
         dict(scale=BAD_SCALE, beta=BAD_REAL + [0, 1, -0.1, 1.5])),
    Spec(bounds.exponential_utility_threshold,
         dict(opt=10.0, sensitivity=1.0, epsilon=1.0, n_candidates=4, t=3.0, n_optimal=1),
         dict(opt=BAD_REAL, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              n_candidates=BAD_COUNT, t=BAD_REAL + [-1.0, -1e-12], n_optimal=BAD_COUNT + [5])),
]

# raw rows (callable, good_kwargs, param, bad_value) for cases that fit no Spec
EXTRA_ROWS = [
    # a list-valued size must hold non-negative integers too
    pytest.param(mechanisms.laplace_mechanism, dict(value=0.0, sensitivity=1.0, epsilon=1.0),
                 "size", [[2, -3]], id="laplace_mechanism-size-list"),
]

# ------------------------------------------------- the rest of the package, module by module
import pandas as pd  # noqa: E402

import dpteach as dp  # noqa: E402
from dpteach import (anonymity, audit, comparison, datasets, definition, discrete,  # noqa: E402
                     exponential, sensitivity)
from dpteach.attacks import (averaging, differencing, floating_point, query_auditing,  # noqa: E402
                             reconstruction)
from dpteach.panels import choosing as p_choosing  # noqa: E402
from dpteach.panels import reconstruction as p_reconstruction  # noqa: E402,F401 - its builders are listed by module
from dpteach.panels import sensitivity as p_sensitivity  # noqa: E402

BAD_INT0 = [-1, 2.5, NAN, INF, True, "3", None, [3], 1j]            # non-negative integers
BAD_FLAG = ["yes", 1, 0, None]                                      # True / False only
BAD_PROB = BAD_REAL + [-0.1, 1.5]                                   # in [0, 1]
BAD_PROB_OPEN = BAD_PROB + [0, 1]                                   # in (0, 1)
BAD_EPS0 = BAD_REAL + [-1e-9]                                       # epsilon >= 0 allowed
BAD_FRACTION_INPUT = ["1", True, None, [[0.5, 0.5]], [0.5, NAN], [0.5, -0.5], [0.7, 0.7]]
BAD_WEIGHTS = BAD_FRACTION_INPUT[:-1] + [["0.5", "0.5"], [0.0, 0.0]]   # emd normalises weights
BAD_COUNT_VEC = [v for v in BAD_COUNT if v != [3]]      # where arrays of counts are allowed
# where arrays of probabilities are allowed: [1.0] is good there; bad arrays instead
BAD_PROB_VEC = [v for v in BAD_PROB if not (isinstance(v, list) and v == [1.0])] + \
    [[0.5, NAN], [0.5, 1.5], [-0.1]]
BAD_INT0_VEC = [v for v in BAD_INT0 if v != [3]]
NOT_NONE = [v for v in BAD_VALUES if v is not None]     # where None means "the default"
BAD_SENS_OPTIONAL = [v for v in BAD_SENSITIVITY if v is not None]


def _sum(d):
    return float(np.sum(d))


def _laplace_mech(data, size, rng):
    return np.asarray(data, float).sum() + rng.laplace(0.0, 1.0, size)


TABLE = pd.DataFrame({"zip": ["13053", "13068", "13053", "13068"], "age": [28, 29, 21, 23],
                      "disease": ["flu", "cold", "flu", "cancer"], "x": [1.0, 2.0, 3.0, 4.0]})


def curator_count(epsilon, where=None):
    return dp.Curator(TABLE, 5.0, rng=0).count(where, epsilon=epsilon)


def curator_sum(column="x", lower=0.0, upper=5.0, epsilon=0.5):
    return dp.Curator(TABLE, 5.0, rng=0).sum(column, lower=lower, upper=upper, epsilon=epsilon)


def curator_mean(column="x", lower=0.0, upper=5.0, epsilon=0.5):
    return dp.Curator(TABLE, 5.0, rng=0).mean(column, lower=lower, upper=upper, epsilon=epsilon)


def curator_histogram(column="disease", categories=("flu", "cold"), epsilon=0.5):
    return dp.Curator(TABLE, 5.0, rng=0).histogram(column, categories, epsilon=epsilon)


def naive_server_count(scale=1.0, rng=0):
    return averaging.NaiveNoisyServer(TABLE, scale, rng=rng)


def max_auditor_max(where=None):
    return query_auditing.MaxAuditor(TABLE, "x").max(where)


SPECS += [
    # accounting, beyond the contract
    Spec(accounting.advanced_composition_crossover, dict(epsilon=0.1, delta_slack=1e-6),
         dict(epsilon=BAD_EPSILON, delta_slack=BAD_DELTA_REQUIRED)),
    Spec(accounting.advanced_composition_epsilon, dict(epsilon_total=1.0, k=10, delta_slack=1e-6),
         dict(epsilon_total=BAD_EPSILON, k=BAD_COUNT, delta_slack=BAD_DELTA_REQUIRED)),
    Spec(accounting.split_budget, dict(epsilon=1.0, weights=[1.0, 2.0]),
         dict(epsilon=BAD_EPSILON, weights=[3.5, 0, -2, True, NAN, "3", None, [1.0, NAN],
                                            [1.0, 0.0], [1.0, -1.0], [1.0, True], []])),
    Spec(definition.hockey_stick_divergence, dict(p=[0.5, 0.5], q=[0.4, 0.6], epsilon=0.1),
         dict(p=BAD_FRACTION_INPUT, q=BAD_FRACTION_INPUT, epsilon=BAD_EPS0)),
    Spec(definition.smallest_delta, dict(p=[0.5, 0.5], q=[0.4, 0.6], epsilon=0.1),
         dict(p=BAD_FRACTION_INPUT, q=BAD_FRACTION_INPUT, epsilon=BAD_EPS0)),
    Spec(definition.max_probability_ratio, dict(p=[0.5, 0.5], q=[0.4, 0.6]),
         dict(p=BAD_FRACTION_INPUT, q=BAD_FRACTION_INPUT)),
    Spec(definition.privacy_loss_between, dict(p=[0.5, 0.5], q=[0.4, 0.6]),
         dict(p=BAD_FRACTION_INPUT, q=BAD_FRACTION_INPUT)),
    Spec(accounting.joint_privacy_loss,
         dict(r1=0.5, r2=[0.5, 1.0], gap1=1.0, gap2=1.0, scale1=1.0, scale2=1.0),
         dict(r1=BAD_VALUES, r2=BAD_VALUES, gap1=BAD_SENSITIVITY, gap2=BAD_SENSITIVITY,
              scale1=BAD_SCALE, scale2=BAD_SCALE)),
    # curator
    Spec(dp.Curator, dict(table=TABLE, epsilon=1.0, delta=1e-6),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA, rng=BAD_RNG + [-1])),
    Spec(curator_count, dict(epsilon=0.5), dict(epsilon=BAD_EPSILON + [5e-324]),
         name="Curator.count"),
    Spec(curator_sum, dict(epsilon=0.5),
         dict(epsilon=BAD_EPSILON + [5e-324], lower=BAD_REAL + [6.0], upper=BAD_REAL + [-1.0],
              column=["nope", None, "disease"]), name="Curator.sum"),
    Spec(curator_mean, dict(epsilon=0.5),
         dict(epsilon=BAD_EPSILON + [5e-324], lower=BAD_REAL + [6.0], upper=BAD_REAL + [-1.0],
              column=["nope", None, "disease"]), name="Curator.mean"),
    Spec(curator_histogram, dict(epsilon=0.5),
         dict(epsilon=BAD_EPSILON + [5e-324], categories=["flu", [], ["flu", "flu"], None],
              column=["nope", None]), name="Curator.histogram"),
    # sensitivity
    Spec(sensitivity.global_sensitivity, dict(query=_sum, universe=[0, 1], size=3),
         dict(size=BAD_COUNT + [10 ** 400], min_size=BAD_INT0 + [3],
              max_datasets=BAD_COUNT + [10 ** 10], norm=[0, 3, 1.5, "1", None, True],
              neighbours=["swap", None, 1], ordered=BAD_FLAG, batched=BAD_FLAG,
              details=BAD_FLAG, query=[None, 3], universe=[[], None, "ab", [0, 0]])),
    Spec(sensitivity.l1_sensitivity, dict(query=_sum, universe=[0, 1], size=3),
         dict(size=BAD_COUNT + [10 ** 400])),
    Spec(sensitivity.l2_sensitivity, dict(query=_sum, universe=[0, 1], size=3),
         dict(size=BAD_COUNT + [10 ** 400])),
    Spec(sensitivity.local_sensitivity, dict(query=_sum, dataset=[0, 1], universe=[0, 1]),
         dict(norm=[0, 3, "1", None, True], neighbours=["swap", None], batched=BAD_FLAG,
              dataset=[[NAN], None, "01"], universe=[[], None])),
    Spec(sensitivity.count_datasets, dict(universe_size=3, size=2),
         dict(universe_size=BAD_COUNT, size=BAD_INT0, ordered=BAD_FLAG),
         name="count_datasets"),
    Spec(sensitivity.all_datasets, dict(universe=[0, 1], size=2),
         dict(size=BAD_INT0 + [10 ** 400], max_datasets=BAD_COUNT + [10 ** 10],
              ordered=BAD_FLAG, universe=[[], None])),
    Spec(sensitivity.histogram, dict(records=[0, 1, 1], universe=[0, 1]),
         dict(records=[None, [5]], universe=[[], None])),
    Spec(sensitivity.l1_distance, dict(x=[0.0, 1.0], y=[1.0, 1.0]),
         dict(x=BAD_VALUES + [[0.0]], y=BAD_VALUES + [[0.0]])),
    Spec(sensitivity.l2_distance, dict(x=[0.0, 1.0], y=[1.0, 1.0]),
         dict(x=BAD_VALUES + [[0.0]], y=BAD_VALUES + [[0.0]])),
    Spec(sensitivity.are_neighbours, dict(x=[0.0, 1.0], y=[1.0, 1.0]),
         dict(x=BAD_VALUES + [[0.0]], neighbours=["swap", None, 1])),
    # exponential (notebook 09)
    Spec(exponential.log_ratio,
         dict(scores=[1.0, 2.0], neighbour_scores=[1.0, 3.0], sensitivity=1.0, epsilon=1.0),
         dict(scores=BAD_SCORES, neighbour_scores=BAD_SCORES + [[1.0, 2.0, 3.0]],
              sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON, half=BAD_FLAG)),
    Spec(exponential.worst_case_log_ratio, dict(scores=[1.0, 2.0], sensitivity=1.0, epsilon=1.0),
         dict(scores=BAD_SCORES, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              half=BAD_FLAG)),
    Spec(exponential.utility_tail,
         dict(scores=[1.0, 2.0], sensitivity=1.0, epsilon=1.0, t_grid=[0.5, 1.0], n_draws=100),
         dict(scores=BAD_SCORES, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              t_grid=BAD_VALUES + [[-1.0]], n_draws=BAD_COUNT + [10 ** 400], rng=BAD_RNG + [-1])),
    Spec(exponential.tied_scores, dict(n_candidates=4, gap=1.0, opt=0.0),
         dict(n_candidates=BAD_COUNT + [10 ** 400], gap=BAD_REAL, opt=BAD_REAL)),
    Spec(exponential.price_grid, dict(top=5.0),
         dict(top=BAD_REAL + [0, -1.0, 1e308])),
    Spec(exponential.apple_outputs, dict(epsilon=1.0, copies=1),
         dict(epsilon=BAD_EPSILON, copies=BAD_COUNT + [10 ** 400],
              prices=NOT_NONE + [[0.0, 1.0], [[1.0]]])),
    # definition (notebook 04)
    Spec(definition.coin_flip_survey, dict(bits=[0, 1, 1]),
         dict(bits=BAD_BITS, rng=BAD_RNG + [-1])),
    Spec(definition.randomized_response_standard_error, dict(pi=0.3, n=100, epsilon=1.0),
         dict(pi=BAD_PROB, n=[0, 2.5, NAN, INF, True, "3", None, [0]], epsilon=BAD_EPSILON)),
    Spec(definition.posterior_bounds, dict(prior=0.3, epsilon=1.0),
         dict(prior=BAD_VALUES + [-0.1, 1.5, [0.5, 2.0]], epsilon=BAD_EPSILON)),
    Spec(definition.blip_distributions, dict(epsilon=1.0, delta=0.05, gap=1.0),
         dict(epsilon=BAD_EPSILON + [5e-324], delta=BAD_DELTA, gap=BAD_REAL,
              edges=NOT_NONE + [[1.0, 0.0], [0.0]])),
    # comparison (notebooks 08 and 10)
    Spec(comparison.mechanism_table, dict(extended=False), dict(extended=BAD_FLAG)),
    Spec(comparison.noise_std, dict(mechanism="Laplace", epsilon=1.0, l1_sensitivity=1.0),
         dict(mechanism=["laplace", None, 1], epsilon=BAD_EPSILON, l1_sensitivity=BAD_SENSITIVITY,
              l2_sensitivity=BAD_SENS_OPTIONAL, delta=BAD_DELTA,
              analytic=BAD_FLAG),
         name="noise_std_laplace"),
    Spec(comparison.noise_std,
         dict(mechanism="Gaussian", epsilon=1.0, l2_sensitivity=1.0, delta=1e-5),
         dict(epsilon=BAD_EPSILON + [1e308], l2_sensitivity=BAD_SENSITIVITY,
              l1_sensitivity=BAD_SENS_OPTIONAL,
              delta=BAD_DELTA_REQUIRED, analytic=BAD_FLAG),
         name="noise_std_gaussian"),
    Spec(comparison.choose_mechanism,
         dict(output="numeric", epsilon=1.0, l1_sensitivity=1.0, l2_sensitivity=1.0),
         dict(output=["text", None], epsilon=BAD_EPSILON, delta=BAD_DELTA,
              l1_sensitivity=BAD_SENSITIVITY, l2_sensitivity=BAD_SENS_OPTIONAL, local=BAD_FLAG)),
    Spec(comparison.count_release_errors, dict(epsilon=1.0, delta=1e-5, count=50, n_max=100),
         dict(epsilon=BAD_EPSILON + [5e-324, 1e308], delta=BAD_DELTA_REQUIRED,
              count=BAD_INT0 + [101], n_max=BAD_COUNT)),
    Spec(comparison.count_release_error_curves,
         dict(epsilons=[0.5, 1.0], delta=1e-5, count=50, n_max=100),
         dict(epsilons=BAD_VALUES + [[0.0, 1.0], [], [5e-324, 1.0], [1.0, 1e308]],
              delta=BAD_DELTA_REQUIRED, count=BAD_INT0 + [101], n_max=BAD_COUNT)),
    Spec(comparison.noisy_argmax_probabilities, dict(scores=[1.0, 2.0], scale=1.0),
         dict(scores=BAD_SCORES, scale=BAD_SCALE)),
    Spec(comparison.classic_gaussian_epsilon_limit, dict(delta=1e-5),
         dict(delta=BAD_DELTA_REQUIRED)),
    # discrete (notebook 11)
    Spec(discrete.discrete_laplace_mechanism, dict(value=3, sensitivity=1, epsilon=1.0, size=3),
         dict(value=BAD_VALUES + [2.5, 2.0 ** 60], sensitivity=BAD_COUNT + [10 ** 400],
              epsilon=BAD_EPSILON + [5e-324, 1e308], rng=BAD_RNG + [-1], size=BAD_SIZE)),
    Spec(discrete.discrete_laplace_noise, dict(sensitivity=1, epsilon=1.0, size=3),
         dict(sensitivity=BAD_COUNT + [10 ** 400], epsilon=BAD_EPSILON + [5e-324, 1e308],
              rng=BAD_RNG + [-1], size=BAD_SIZE)),
    Spec(discrete.discrete_laplace_pmf, dict(k=[0, 1], sensitivity=1, epsilon=1.0),
         dict(k=BAD_VALUES, sensitivity=BAD_COUNT + [10 ** 400], epsilon=BAD_EPSILON)),
    Spec(discrete.epsilon_as_fraction, dict(epsilon=0.5), dict(epsilon=BAD_EPSILON + [5e-324])),
    Spec(discrete.discrete_gaussian_mechanism, dict(value=3, sigma=1.0, size=3),
         dict(value=BAD_VALUES + [2.5], sigma=BAD_SCALE + [1e308], rng=BAD_RNG + [-1],
              size=BAD_SIZE)),
    Spec(discrete.discrete_gaussian_noise, dict(sigma=1.0, size=3),
         dict(sigma=BAD_SCALE + [1e308], rng=BAD_RNG + [-1], size=BAD_SIZE)),
    Spec(discrete.discrete_gaussian_pmf, dict(k=[0, 1], sigma=1.0),
         dict(k=BAD_VALUES, sigma=BAD_SCALE)),
    # floating point (notebook 11)
    Spec(floating_point.naive_laplace_mechanism, dict(value=0.0, scale=1.0, size=3),
         dict(value=BAD_VALUES, scale=BAD_SCALE + [1e308], rng=BAD_RNG + [-1], size=BAD_SIZE)),
    Spec(floating_point.floating_point_attack, dict(outputs=[0.5], candidates=[0.0, 1.0], scale=1.0),
         dict(outputs=BAD_VALUES, candidates=BAD_VALUES, scale=BAD_SCALE + [1e308],
              sampler=["fast", None, 1])),
    Spec(floating_point.preimages, dict(output=0.5, candidate=0.0, scale=1.0),
         dict(output=BAD_REAL, candidate=BAD_REAL, scale=BAD_SCALE + [1e308],
              sampler=["fast", None], window=BAD_INT0 + [1e308, 10 ** 400])),
    # attacks: averaging, differencing, auditing, reconstruction (notebooks 02 and 03)
    Spec(averaging.averaging_attack, dict(release=lambda: 1.0, k=3),
         dict(release=[None, 3], k=BAD_COUNT)),
    Spec(averaging.collect_releases, dict(release=lambda: 1.0, k=3),
         dict(release=[None, 3], k=BAD_COUNT)),
    Spec(averaging.averaging_error, dict(scale=1.0, k=3),
         dict(scale=BAD_SENSITIVITY, k=BAD_COUNT_VEC)),
    Spec(averaging.NaiveNoisyServer, dict(table=TABLE, scale=1.0),
         dict(scale=BAD_SENSITIVITY, rng=BAD_RNG + [-1], table=[None, [1, 2]])),
    Spec(averaging.CachingNoisyServer, dict(table=TABLE, scale=1.0),
         dict(scale=BAD_SENSITIVITY, rng=BAD_RNG + [-1], table=[None, [1, 2]])),
    Spec(averaging.equivalent_phrasings, dict(column="age", threshold=30, k=3),
         dict(threshold=BAD_REAL, k=BAD_COUNT)),
    Spec(differencing.difference_of_counts, dict(count_all=3, count_without_target=2),
         dict(count_all=BAD_REAL, count_without_target=BAD_REAL)),
    Spec(differencing.difference_of_means, dict(mean_all=2.0, n_all=4, mean_rest=1.5, n_rest=3),
         dict(mean_all=BAD_REAL, n_all=BAD_COUNT, mean_rest=BAD_REAL, n_rest=BAD_COUNT)),
    Spec(differencing.perturb_records, dict(values=[1.0, 2.0], bound=1.0, size=2),
         dict(values=BAD_VALUES, bound=BAD_SENSITIVITY, rng=BAD_RNG + [-1], size=BAD_SIZE)),
    Spec(differencing.blood_sugar_differencing, dict(bound=2.0, size=2),
         dict(bound=BAD_SENSITIVITY, rng=BAD_RNG + [-1], size=BAD_SIZE)),
    Spec(differencing.difference_noise_pdf, dict(z=[0.0, 1.0], scale=1.0),
         dict(z=BAD_VALUES, scale=BAD_SCALE)),
    Spec(query_auditing.MaxAuditor, dict(table=TABLE, column="x"),
         dict(column=["nope", None], simulatable=BAD_FLAG, table=[None, [1]])),
    Spec(reconstruction.random_subset_queries, dict(m=4, n=3),
         dict(m=BAD_COUNT, n=BAD_COUNT, rng=BAD_RNG + [-1])),
    Spec(reconstruction.answer_queries, dict(queries=[[1, 0], [1, 1]], secret=[0, 1]),
         dict(queries=[None, "ab", [[1, 2]], [[NAN, 1]]], secret=BAD_BITS)),
    Spec(reconstruction.noisy_answers, dict(queries=[[1, 0], [1, 1]], secret=[0, 1], scale=1.0),
         dict(scale=BAD_SENSITIVITY, noise=["cauchy", None], rng=BAD_RNG + [-1], secret=BAD_BITS)),
    Spec(reconstruction.fraction_agree, dict(guess=[0, 1], secret=[0, 1]),
         dict(guess=BAD_BITS, secret=BAD_BITS)),
    Spec(reconstruction.reconstruct_lsq, dict(queries=[[1, 0], [1, 1]], answers=[0.0, 1.0]),
         dict(queries=[None, [[1, 2]]], answers=BAD_VALUES)),
    Spec(reconstruction.reconstruct_lp, dict(queries=[[1, 0], [1, 1]], answers=[0.0, 1.0]),
         dict(queries=[None, [[1, 2]]], answers=BAD_VALUES)),
    Spec(reconstruction.textbook_lp, dict(queries=[[1, 0], [1, 1]], answers=[0.0, 1.0]),
         dict(queries=[None, [[1, 2]]], answers=BAD_VALUES)),
    Spec(reconstruction.lp_decode, dict(queries=[[1, 0], [1, 1]], answers=[0.0, 1.0]),
         dict(answers=BAD_VALUES, tol=BAD_SCALE, max_iter=BAD_COUNT)),
    Spec(reconstruction.subset_sums, dict(secret=[0, 1]), dict(secret=BAD_BITS)),
    Spec(reconstruction.bounded_noise_answers, dict(secret=[0, 1], noise_bound=1.0),
         dict(secret=BAD_BITS, noise_bound=BAD_SENSITIVITY, rng=BAD_RNG + [-1])),
    Spec(reconstruction.decoy_answers, dict(secret=[0, 1], noise_bound=1.0),
         dict(secret=BAD_BITS, noise_bound=BAD_SENSITIVITY, rng=BAD_RNG + [-1])),
    Spec(reconstruction.consistent_candidates,
         dict(subset_answers=[0.0, 1.0, 0.0, 1.0], noise_bound=0.5),
         dict(subset_answers=BAD_VALUES + [[0.0, 1.0, 2.0]], noise_bound=BAD_SENSITIVITY)),
    Spec(reconstruction.reconstruct_exhaustive,
         dict(subset_answers=[0.0, 1.0, 0.0, 1.0], noise_bound=0.5),
         dict(subset_answers=BAD_VALUES + [[0.0, 1.0, 2.0]], noise_bound=BAD_SENSITIVITY)),
    Spec(reconstruction.phase_transition, dict(ns=[8], ratios=[1.0], trials=1),
         dict(ns=[None, [0], [2.5], [NAN]], ratios=BAD_VALUES + [[-1.0]],
              queries_per_person=BAD_COUNT, method=["exact", None], trials=BAD_COUNT,
              prevalence=BAD_PROB, rng=BAD_RNG + [-1])),
    # audit (notebook 11)
    Spec(audit.clopper_pearson, dict(count=3, n=10),
         dict(count=BAD_INT0_VEC + [11], n=BAD_COUNT_VEC, alpha=BAD_PROB_OPEN)),
    Spec(audit.epsilon_lower_bound, dict(count_x=30, count_y=10, n=100),
         dict(count_x=BAD_INT0_VEC + [101], count_y=BAD_INT0_VEC + [101], n=BAD_COUNT_VEC,
              alpha=BAD_PROB_OPEN, delta=BAD_DELTA)),
    Spec(audit.epsilon_point_estimate, dict(count_x=30, count_y=10, n=100),
         dict(count_x=BAD_INT0_VEC + [101], count_y=BAD_INT0_VEC + [101], n=BAD_COUNT_VEC, delta=BAD_DELTA)),
    Spec(audit.epsilon_interval, dict(count_x=30, count_y=10, n=100),
         dict(count_x=BAD_INT0_VEC + [101], count_y=BAD_INT0_VEC + [101], n=BAD_COUNT_VEC,
              alpha=BAD_PROB_OPEN, delta=BAD_DELTA)),
    Spec(audit.audit, dict(mechanism=_laplace_mech, x=[0.0], y=[1.0], n=200),
         dict(n=BAD_COUNT, alpha=BAD_PROB_OPEN, delta=BAD_DELTA, rng=BAD_RNG + [-1],
              claimed_epsilon=[v for v in BAD_EPSILON if v is not None],
              select_fraction=BAD_PROB_OPEN,
              mechanism=[None, 3])),
    Spec(dp.audit.audit_zoo, dict(names=["laplace"], n=200, alpha=0.05),
         dict(names=[["nope"], "laplace", 3], n=[v for v in BAD_COUNT if v is not None],
              alpha=[v for v in BAD_PROB_OPEN if v is not None],
              rng=BAD_RNG + [-1], progress=BAD_FLAG)),
    # anonymity (notebook 01): the numeric parameters
    Spec(anonymity.l_diversity, dict(table=TABLE, quasi_identifiers=["zip"], sensitive="disease",
                                     kind="recursive", c=2.0),
         dict(c=BAD_SCALE, kind=["nope", None])),
    Spec(anonymity.mask_zip, dict(values=["13053", "14850"], keep=3),
         dict(keep=BAD_INT0, char=[None, 1, ""])),
    Spec(anonymity.bucket_ages, dict(values=[21, 35], width=10),
         dict(width=BAD_COUNT, values=[None, ["a"], [NAN]])),
    Spec(anonymity.suppress_small_classes, dict(table=TABLE, quasi_identifiers=["zip"], k=2),
         dict(k=BAD_COUNT)),
    Spec(anonymity.emd, dict(p=[0.5, 0.5], q=[0.4, 0.6]),
         dict(p=BAD_WEIGHTS, q=BAD_WEIGHTS, ordered=BAD_FLAG)),
    Spec(anonymity.t_closeness, dict(table=TABLE, quasi_identifiers=["zip"], sensitive="disease"),
         dict(ordered=BAD_FLAG)),
    Spec(anonymity.class_report, dict(table=TABLE, quasi_identifiers=["zip"], sensitive="disease"),
         dict(ordered=BAD_FLAG)),
    # datasets
    Spec(datasets.synthetic_patients, dict(n=10), dict(n=BAD_COUNT + [10 ** 400], rng=BAD_RNG + [-1])),
    Spec(datasets.secret_population, dict(n=10, prevalence=0.3),
         dict(n=BAD_COUNT + [10 ** 400], prevalence=BAD_PROB, rng=BAD_RNG + [-1])),
    Spec(exponential.posted_price_revenue, dict(valuations=[1.0, 2.0], prices=[1.0, 1.5]),
         dict(valuations=BAD_VALUES, prices=BAD_VALUES)),
    Spec(datasets.skewed_table, dict(class_size=50, class_share=0.5, n=1000, positives=10,
                                     other_size=50),
         dict(class_size=BAD_COUNT + [1000], class_share=BAD_PROB, n=BAD_COUNT + [10 ** 400],
              positives=BAD_COUNT + [1001], other_size=BAD_COUNT)),
    # panel helpers (the builders are checked over REGISTRY below)
    Spec(p_choosing.error_curves, dict(epsilons=[0.5, 1.0], delta=1e-5, count=50),
         dict(epsilons=BAD_VALUES + [[0.0, 1.0]], delta=BAD_DELTA_REQUIRED, count=BAD_INT0)),
    Spec(mechanisms.sigma_curves, dict(epsilons=[0.5, 0.9], l2_sensitivity=1.0, delta=1e-5),
         dict(epsilons=BAD_VALUES + [[0.0, 1.0]], l2_sensitivity=BAD_SENSITIVITY_POSITIVE,
              delta=BAD_DELTA_REQUIRED)),
    Spec(comparison.queries_noise, dict(k=[1, 4], epsilon=0.5, delta=1e-5),
         dict(k=BAD_VALUES + [[0, 1]], epsilon=BAD_EPSILON, delta=BAD_DELTA_REQUIRED,
              analytic=BAD_FLAG)),
    Spec(p_sensitivity.two_cluster_dataset, dict(n=11, spread=8.0, split=0.0),
         dict(n=BAD_COUNT, spread=BAD_REAL, split=BAD_REAL)),
]

# ------------------------------------------------- modules other parts of the course own
from dpteach import properties, tradeoff  # noqa: E402
from dpteach.coursework import exercises  # noqa: E402
from dpteach.coursework import grading, student_copies  # noqa: E402,F401 - listed by module
from dpteach.panels import tradeoff as p_tradeoff  # noqa: E402


def _opt(module, name):
    """A function of a module that is still being written: None (no rows) if it is gone;
    the coverage test below still lists whatever the module exports."""
    return getattr(module, name, None)


def _fine_mechanism(value, *, sensitivity, epsilon, rng=None, size=None):
    return dp.laplace_mechanism(value, sensitivity, epsilon, rng=rng, size=size)


SPECS += [
    Spec(anonymity.mask_zip, dict(values=["13053", "14850"], keep=3),
         dict(values=[None, 3]), name="mask_zip_values"),
    Spec(definition.gaussian_loss_tail, dict(sigma=1.0, l2_sensitivity=1.0, epsilon=1.0),
         dict(sigma=BAD_SCALE, l2_sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPS0)),
    Spec(_opt(properties, "group_privacy"), dict(epsilon=0.5, delta=1e-6, k=3),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA, k=BAD_COUNT)),
    Spec(_opt(properties, "parallel_composition"), dict(epsilons=[0.1, 0.2], deltas=[0.0, 1e-6]),
         dict(epsilons=[[0.1, NAN], [0.1, 0.0], [0.1, True], [], "0.1", None],
              deltas=[[0.0, NAN], [0.0, 1.0], [0.0, True], [0.0], "00"])),
    Spec(_opt(properties, "postprocess_laplace"), dict(value=0.0, scale=1.0),
         dict(value=BAD_REAL, scale=BAD_SCALE, step=BAD_SCALE, lower=BAD_REAL, upper=BAD_REAL,
              threshold=BAD_REAL, f=["nope", None])),
    Spec(_opt(properties, "max_log_ratio"), dict(value1=0.0, value2=1.0, scale=1.0),
         dict(value1=BAD_REAL, value2=BAD_REAL, scale=BAD_SCALE, step=BAD_SCALE,
              lower=BAD_REAL, upper=BAD_REAL, threshold=BAD_REAL, f=["nope", None])),
    Spec(_opt(tradeoff, "tradeoff_curve"), dict(alpha=[0.1, 0.5], epsilon=1.0, delta=1e-5),
         dict(alpha=BAD_VALUES + [[-0.1], [1.5]], epsilon=BAD_EPS0, delta=BAD_DELTA)),
    Spec(_opt(tradeoff, "gaussian_tradeoff"), dict(alpha=[0.1, 0.5], mu=1.0),
         dict(alpha=BAD_VALUES + [[-0.1], [1.5]], mu=BAD_SENSITIVITY)),
    Spec(_opt(tradeoff, "laplace_tradeoff"), dict(alpha=[0.1, 0.5], epsilon=1.0),
         dict(alpha=BAD_VALUES + [[-0.1], [1.5]], epsilon=BAD_EPS0)),
    Spec(_opt(tradeoff, "privacy_loss_distribution"), dict(mechanism="laplace", epsilon=1.0),
         dict(mechanism=["cauchy", None], epsilon=BAD_EPSILON[:3] + [0, -1],
              sensitivity=BAD_SENSITIVITY_POSITIVE), name="privacy_loss_distribution"),
    Spec(_opt(tradeoff, "privacy_loss_distribution"), dict(mechanism="gaussian", sigma=1.0),
         dict(sigma=BAD_SCALE[:3] + [0, -1], sensitivity=BAD_SENSITIVITY_POSITIVE),
         name="privacy_loss_distribution_gaussian"),
    Spec(_opt(tradeoff, "membership_attack"), dict(epsilon=1.0, n_trials=50),
         dict(epsilon=BAD_EPSILON[:3] + [0, -1], n_trials=BAD_COUNT, count=BAD_INT0,
              noise=["cauchy", None], sensitivity_used=BAD_SENSITIVITY_POSITIVE,
              delta=BAD_DELTA_REQUIRED, rng=BAD_RNG + [-1])),
    Spec(_opt(tradeoff, "outside_region"), dict(alpha=0.1, beta=0.5, n_out=100, n_in=100, epsilon=1.0),
         # alpha and beta are vectorised on purpose (one point per measured test): the
         # list [1.0] is a good input there, so the rows take BAD_PROB_VEC
         dict(alpha=BAD_PROB_VEC, beta=BAD_PROB_VEC, n_out=BAD_COUNT, n_in=BAD_COUNT,
              epsilon=BAD_EPS0, delta=BAD_DELTA, level=BAD_PROB_OPEN)),
    Spec(_opt(properties, "gaussian_group_delta"), dict(epsilon=1.0, delta=1e-5, k=2),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA_REQUIRED, k=BAD_COUNT)),
    Spec(properties.group_curves, dict(epsilon=0.5, delta=1e-6, ks=[1, 2]),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA)),
    Spec(properties.parallel_costs, dict(epsilon=0.5, n_bins=4),
         dict(epsilon=BAD_EPSILON, n_bins=BAD_COUNT)),
    Spec(tradeoff.attack_thresholds, dict(out=[0.0, 1.0], in_=[1.0, 2.0], n=5, count=40),
         dict(n=BAD_COUNT, out=BAD_VALUES, in_=BAD_VALUES, count=BAD_REAL),
         name="tradeoff_attack_thresholds"),
    # computations the panels draw, kept in the modules that teach them
    Spec(dp.attacks.reconstruction.exhaustive_sweep, dict(n=6, grid=[0.0, 1.0]),
         dict(n=BAD_COUNT + [25], grid=BAD_VALUES + [[-1.0]], rng=BAD_RNG)),
    Spec(dp.attacks.reconstruction.RandomQuerySweep,
         dict(n=8, ratios=[0.0, 0.5], per_person=(1, 2)),
         dict(n=BAD_COUNT, ratios=BAD_VALUES + [[-0.5]], per_person=[[0], [2.5], ["1"]],
              rng=BAD_RNG)),
    Spec(dp.attacks.reconstruction.dp_defence_sweep,
         dict(n=8, m=16, trials=1, prevalence=0.5, log_epsilons=[0.0]),
         dict(n=BAD_COUNT, m=BAD_COUNT, trials=BAD_COUNT, prevalence=BAD_PROB,
              log_epsilons=BAD_VALUES, rng=BAD_RNG)),
    Spec(dp.audit.audit_convergence_counts,
         dict(names=["laplace"], grid=[10, 20], n_select=50),
         dict(names=["laplace", ["no such mechanism"]], grid=[[20, 10], [0], [2.5], ["3"]],
              n_select=BAD_COUNT, rng=BAD_RNG)),
    Spec(dp.attacks.floating_point.rule_out_fractions,
         dict(values=[0.0], epsilons=[1.0], n_outputs=5),
         dict(values=BAD_VALUES, epsilons=BAD_VALUES + [[0.0], [-1.0]], n_outputs=BAD_COUNT,
              rng=BAD_RNG)),
    Spec(_opt(p_tradeoff, "advantage_bound"), dict(epsilon=1.0, delta=1e-5),
         dict(epsilon=BAD_EPS0, delta=BAD_DELTA)),
    Spec(_opt(tradeoff, "advantage_bound"), dict(epsilon=1.0, delta=1e-5),
         dict(epsilon=BAD_EPS0, delta=BAD_DELTA), name="tradeoff.advantage_bound"),
    # coursework checks (dpteach/coursework/exercises.py)
    Spec(_opt(exercises, "check_number"), dict(found=1.0, expected=1.0),
         dict(rel=BAD_SENSITIVITY, abs_tol=BAD_SENSITIVITY, expected=BAD_REAL)),
    Spec(_opt(exercises, "check_fraction_at_most"), dict(found=0.1, bound=0.2, n=100),
         dict(bound=BAD_PROB, n=BAD_COUNT, alpha=BAD_PROB_OPEN)),
    Spec(_opt(exercises, "check_k_anonymous"), dict(table=TABLE, quasi_identifiers=["zip"], k=2),
         dict(k=BAD_COUNT, max_suppressed=BAD_INT0)),
    Spec(_opt(exercises, "check_reconstruction"), dict(bits=[0, 1], truth=[0, 1], min_fraction=0.5),
         dict(min_fraction=BAD_PROB, truth=BAD_BITS)),   # bits: the student's answer, graded
    Spec(_opt(exercises, "check_budget_respected"), dict(curator=dp.Curator(TABLE, 1.0), max_epsilon=1.0),
         dict(max_epsilon=BAD_EPSILON)),
    Spec(_opt(exercises, "check_sensitivity"), dict(found=1.0, query=_sum, universe=[0, 1], size=2),
         dict(size=BAD_COUNT, norm=[0, 3, "1", None, True])),
    Spec(_opt(exercises, "check_exponential_probabilities"),
         dict(student_fn=dp.exponential_probabilities, scores=[1.0, 2.0], sensitivity=1.0,
              epsilon=1.0, n_pairs=5),
         dict(scores=BAD_SCORES, sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              n_pairs=BAD_COUNT, rng=BAD_RNG + [-1])),
    Spec(_opt(exercises, "mechanism_request"), dict(rng=np.random.default_rng(0), sensitivity=1.0,
                                           epsilon=1.0),
         dict(sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              value=[v for v in BAD_REAL if v is not None],
              n=[0, 2.5, NAN, True, "3"], alpha=BAD_PROB_OPEN, seconds=BAD_SCALE,
              max_seconds=BAD_SCALE)),
    Spec(_opt(exercises, "check_mechanism"), dict(student_fn=_fine_mechanism, sensitivity=1.0,
                                         epsilon=1.0, n=2000, seconds=0.05, max_seconds=1.0),
         dict(sensitivity=BAD_SENSITIVITY_POSITIVE, epsilon=BAD_EPSILON,
              value=[v for v in BAD_REAL if v is not None], n=[0, 2.5, NAN, True, "3"],
              alpha=BAD_PROB_OPEN, seconds=BAD_SCALE, max_seconds=BAD_SCALE,
              rng=BAD_RNG + [-1])),
    Spec(_opt(grading, "grade"), dict(paths=[]),
         dict(timeout=BAD_SCALE, task_timeout=BAD_SCALE), name="grading.grade"),
    Spec(_opt(grading, "grade_notebook"), dict(path="/nonexistent.ipynb"),
         dict(timeout=BAD_SCALE, task_timeout=BAD_SCALE), name="grading.grade_notebook"),
]

EXEMPT_PARAMS = {
    # grading runs hand-ins in sandboxes: its jobs/repeats are checked by tests/coursework/test_grading.py
    "dpteach.coursework.grading.grade": {"jobs", "repeats"},
    "dpteach.coursework.grading.grade_notebook": {"repeats"},
    "dpteach.attacks.skewness_attack": {"value"},   # a sensitive value: a category label
    "dpteach.coursework.student_copies.blank_source": {"keep"},      # a set of variable names
    "dpteach.coursework.exercises.mechanism_request": {"rng"},   # required Generator, refused by type
}


# notebooks 16 and 17 (dpteach.rdp, dpteach.local)
from dpteach import local as _local, rdp as _rdp  # noqa: E402
from dpteach.local import protocols as _lp  # noqa: E402

BAD_DELTA_OPEN = BAD_DELTA_REQUIRED
BAD_K2 = BAD_COUNT + [1]            # at least two categories

SPECS += [
    Spec(_opt(_local, "k_randomized_response_keep_probability"), dict(k=4, epsilon=1.0),
         dict(k=BAD_K2, epsilon=BAD_EPSILON)),
    Spec(_opt(_local, "k_randomized_response_probabilities"), dict(k=4, epsilon=1.0),
         dict(k=BAD_K2, epsilon=BAD_EPSILON)),
    Spec(_opt(_local, "k_randomized_response"), dict(values=[0, 1, 3], k=4, epsilon=1.0),
         dict(values=[[0, 4], [-1], [0.5], None, "01"], k=BAD_K2, epsilon=BAD_EPSILON,
              rng=BAD_RNG + [-1])),
    Spec(_opt(_local, "k_randomized_response_estimate"), dict(reports=[0, 1, 3], k=4, epsilon=1.0),
         dict(k=BAD_K2, epsilon=BAD_EPSILON)),
    Spec(_opt(_local, "unary_encoding_probabilities"), dict(epsilon=1.0),
         dict(epsilon=BAD_EPSILON, optimized=BAD_FLAG)),
    Spec(_opt(_local, "unary_encoding"), dict(values=[0, 1, 3], k=4, epsilon=1.0),
         dict(values=[[0, 4], [-1], None], k=BAD_K2, epsilon=BAD_EPSILON, optimized=BAD_FLAG,
              rng=BAD_RNG + [-1])),
    Spec(_opt(_local, "unary_encoding_estimate"), dict(reports=[[1, 0], [0, 1]], epsilon=1.0),
         dict(epsilon=BAD_EPSILON, optimized=BAD_FLAG)),
    Spec(_opt(_local, "unary_encoding_output_probabilities"), dict(k=4, epsilon=1.0),
         dict(k=BAD_K2, epsilon=BAD_EPSILON, optimized=BAD_FLAG)),
    Spec(_opt(_local, "local_variance"), dict(n=100, k=4, epsilon=1.0),
         dict(n=BAD_COUNT, k=BAD_K2, epsilon=BAD_EPSILON, mechanism=["nope", None])),
    Spec(_opt(_local, "central_variance"), dict(n=100, epsilon=1.0),
         dict(n=BAD_COUNT, epsilon=BAD_EPSILON, sensitivity=BAD_SENSITIVITY_POSITIVE)),
    Spec(_opt(_local, "report_counts"), dict(counts=[5, 3, 2], epsilon=1.0, size=2),
         dict(counts=[[5, -1], [2.5], None], epsilon=BAD_EPSILON, mechanism=["nope", None],
              rng=BAD_RNG + [-1], size=BAD_SIZE)),
    Spec(_opt(_local, "estimate_from_counts"), dict(counts=[5, 3, 2], n=10, k=3, epsilon=1.0),
         dict(n=swept(BAD_COUNT, 10), k=BAD_K2, epsilon=BAD_EPSILON, mechanism=["nope", None])),
    Spec(_opt(_local, "central_histogram_estimate"), dict(counts=[5, 3, 2], epsilon=1.0, size=2),
         dict(epsilon=BAD_EPSILON, rng=BAD_RNG + [-1], size=BAD_SIZE)),
    Spec(_opt(_local, "example_frequencies"), dict(k=4), dict(k=BAD_K2)),
    Spec(_opt(_local, "true_counts"), dict(n=10, frequencies=[0.5, 0.5]),
         dict(n=BAD_INT0)),
    Spec(_opt(_local, "k_randomized_response_is_better"), dict(k=4, epsilon=1.0),
         dict(k=BAD_K2, epsilon=BAD_EPSILON)),
    Spec(_opt(_rdp, "gaussian_rdp"), dict(order=2.0, sigma=1.0),
         dict(sigma=BAD_SCALE, l2_sensitivity=BAD_SENSITIVITY)),
    Spec(_opt(_rdp, "gaussian_zcdp"), dict(sigma=1.0),
         dict(sigma=BAD_SCALE, l2_sensitivity=BAD_SENSITIVITY)),
    Spec(_opt(_rdp, "rdp_to_dp"), dict(orders=[2.0, 4.0], rdp=[0.1, 0.2], delta=1e-5),
         dict(delta=BAD_DELTA_OPEN, method=["nope", None])),
    Spec(_opt(_rdp, "rdp_to_dp_order"), dict(orders=[2.0, 4.0], rdp=[0.1, 0.2], delta=1e-5),
         dict(delta=BAD_DELTA_OPEN, method=["nope", None])),
    Spec(_opt(_rdp, "zcdp_to_dp"), dict(rho=0.1, delta=1e-5),
         dict(delta=BAD_DELTA_OPEN, method=["nope", None])),
    Spec(_opt(_rdp, "gaussian_epsilon"), dict(sigma=1.0, delta=1e-5, k=2),
         dict(sigma=BAD_SCALE, delta=BAD_DELTA_OPEN, k=BAD_COUNT,
              l2_sensitivity=BAD_SENSITIVITY_POSITIVE)),
    Spec(_opt(_rdp, "subsampled_gaussian_rdp"), dict(q=0.1, sigma=1.0, orders=[2, 4]),
         dict(q=BAD_PROB, sigma=BAD_SCALE)),
    Spec(_opt(_rdp, "composition_epsilons"), dict(sigma=1.0, delta=1e-5, ks=[1, 2]),
         dict(sigma=BAD_SCALE, delta=BAD_DELTA_OPEN, l2_sensitivity=BAD_SENSITIVITY_POSITIVE)),
]


# notebook 18 (dpteach.sgd)
from dpteach import sgd as _sgd  # noqa: E402

_X2, _Y2 = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]), np.array([0, 1, 1, 0])

SPECS += [
    Spec(_opt(_sgd, "dp_sgd"),
         dict(X=_X2, y=_Y2, epochs=1, sampling_rate=0.5, clip=1.0, noise_multiplier=1.0,
              learning_rate=0.1),
         dict(delta=BAD_DELTA_REQUIRED, epochs=BAD_COUNT, sampling_rate=BAD_PROB + [0],
              clip=BAD_SCALE, noise_multiplier=BAD_SCALE[:-4], learning_rate=BAD_SCALE,
              rng=BAD_RNG + [-1], accountant=["rpd", "", True, 1.0, object()])),
    Spec(_opt(_sgd, "calibrate_noise_multiplier"),
         dict(target_epsilon=1.0, delta=1e-5, steps=10, sampling_rate=0.1),
         dict(target_epsilon=BAD_EPSILON, delta=BAD_DELTA_REQUIRED, steps=BAD_COUNT,
              sampling_rate=BAD_PROB + [0], tol=BAD_SCALE)),
    Spec(_opt(_sgd, "make_overfit_data"), dict(n_train=20, n_test=20, d=10),
         dict(n_train=BAD_COUNT, n_test=BAD_COUNT, d=BAD_COUNT, informative=BAD_COUNT,
              signal=BAD_REAL, noise_scale=BAD_SENSITIVITY, rng=BAD_RNG + [-1])),
]


EXTRA_ROWS += [
    pytest.param(curator_count, dict(epsilon=0.5), "where", ["age > 3"], id="Curator.count-where-str"),
]

# notebooks 19 and 20, the full sparse vector technique, local hashing, and the additions
# of notebooks 12-18's new sections
from dpteach import beyond_global as _bg, pld as _pld, sparse_vector as _sv, synthetic as _syn  # noqa: E402

_V5 = [1.0, 2.0, 3.0, 4.0, 5.0]
BAD_LOWER_UPPER = BAD_REAL
BAD_DATA = [v for v in BAD_VALUES]
SPECS += [
    Spec(_bg.local_sensitivity_median, dict(values=_V5, lower=0, upper=10),
         dict(values=BAD_DATA + [[1.0, 2.0]], lower=BAD_LOWER_UPPER + [20], upper=BAD_LOWER_UPPER + [-5],
              distance=[-1, 2.5, True, "1", NAN, None])),
    Spec(_bg.median_sensitivity_window, dict(values=_V5, lower=0, upper=10, distance=1),
         dict(values=BAD_DATA, lower=BAD_LOWER_UPPER + [20], upper=BAD_LOWER_UPPER + [-5],
              distance=[-1, 2.5, True, "1", NAN, None])),
    Spec(_bg.smooth_sensitivity_median, dict(values=_V5, lower=0, upper=10, beta=0.1),
         dict(values=BAD_DATA, lower=BAD_LOWER_UPPER, upper=BAD_LOWER_UPPER, beta=BAD_EPSILON)),
    Spec(_bg.distance_to_instability, dict(values=_V5, lower=0, upper=10, bound=1.0),
         dict(values=BAD_DATA, lower=BAD_LOWER_UPPER, upper=BAD_LOWER_UPPER,
              bound=BAD_REAL + [-1.0])),
    Spec(_bg.ptr_median, dict(values=_V5, lower=0, upper=10, epsilon=1.0, delta=1e-3, proposed_bound=1.0),
         dict(values=BAD_DATA, lower=BAD_LOWER_UPPER, upper=BAD_LOWER_UPPER, epsilon=BAD_EPSILON,
              delta=BAD_DELTA_REQUIRED, proposed_bound=BAD_SCALE, rng=BAD_RNG,
              size=[0, -1, 2.5, True, "5", NAN, 10 ** 12])),
    Spec(_bg.ptr_answer_probability, dict(values=_V5, lower=0, upper=10, epsilon=1.0, delta=1e-3,
                                          proposed_bound=1.0),
         dict(values=BAD_DATA, lower=BAD_LOWER_UPPER, upper=BAD_LOWER_UPPER, epsilon=BAD_EPSILON,
              delta=BAD_DELTA_REQUIRED, proposed_bound=BAD_SCALE)),
    Spec(_bg.smooth_beta, dict(epsilon=1.0, delta=1e-6),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA_REQUIRED)),
    Spec(_bg.smooth_median, dict(values=_V5, lower=0, upper=10, epsilon=1.0, delta=1e-6),
         dict(values=BAD_DATA, lower=BAD_LOWER_UPPER, upper=BAD_LOWER_UPPER, epsilon=BAD_EPSILON,
              delta=BAD_DELTA_REQUIRED, size=[0, -1, 2.5, True, "5", NAN, 10 ** 12], rng=BAD_RNG)),
    Spec(_bg.sample_and_aggregate, dict(values=_V5, statistic=np.mean, lower=0, upper=10, epsilon=1.0,
                                        blocks=2),
         dict(values=BAD_DATA, statistic=["mean", None, 3], lower=BAD_LOWER_UPPER, upper=BAD_LOWER_UPPER,
              epsilon=BAD_EPSILON, blocks=BAD_COUNT + [6], rng=BAD_RNG)),
    Spec(_bg.ptr_threshold, dict(epsilon=1.0, delta=1e-6),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA_REQUIRED, exact_delta=BAD_FLAG)),
    Spec(_bg.ptr_pass_probability, dict(distance=[0.0, 30.0], epsilon=1.0, delta=1e-6),
         dict(distance=[NAN, -1.0, [0.0, NAN], [-1.0], "1", None, [True]], epsilon=BAD_EPSILON,
              delta=BAD_DELTA_REQUIRED, exact_delta=BAD_FLAG)),
    Spec(_bg.local_sensitivity_mean, dict(values=_V5, lower=0, upper=10),
         dict(values=BAD_DATA, lower=BAD_LOWER_UPPER + [20], upper=BAD_LOWER_UPPER + [-5],
              distance=[-1, 2.5, True, "1", NAN, None])),
    Spec(_bg.distance_to_instability_mean, dict(values=_V5, lower=0, upper=10, bound=1.0),
         dict(values=BAD_DATA, lower=BAD_LOWER_UPPER, upper=BAD_LOWER_UPPER, bound=BAD_REAL + [-1.0])),
    Spec(_bg.ptr_mean, dict(values=_V5, lower=0, upper=10, epsilon=1.0, delta=1e-3, proposed_bound=1.0),
         dict(values=BAD_DATA, lower=BAD_LOWER_UPPER, upper=BAD_LOWER_UPPER, epsilon=BAD_EPSILON,
              delta=BAD_DELTA_REQUIRED, proposed_bound=BAD_SCALE, exact_delta=BAD_FLAG, rng=BAD_RNG,
              size=[0, -1, 2.5, True, "5", NAN, 10 ** 12])),
    Spec(_syn.mwem, dict(histogram=[3.0, 1.0, 2.0], queries=np.eye(3), epsilon=1.0, iterations=2),
         dict(histogram=BAD_DATA + [[-1.0, 1.0, 1.0], [0.0, 0.0, 0.0]], queries=[np.eye(2), 0.5 * np.eye(3), "q"],
              epsilon=BAD_EPSILON, iterations=BAD_COUNT, passes=BAD_COUNT, rng=BAD_RNG)),
    Spec(_syn.mwem_rounds, dict(histogram=[3.0, 1.0, 2.0], queries=np.eye(3), epsilon=1.0, iterations=2),
         dict(epsilon=BAD_EPSILON, iterations=BAD_COUNT, passes=BAD_COUNT, rng=BAD_RNG)),
    Spec(_syn.mwem_selection_probabilities, dict(histogram=[3.0, 1.0, 2.0], synthetic=[2.0, 2.0, 2.0],
                                                 queries=np.eye(3), epsilon_round=0.5),
         dict(epsilon_round=BAD_EPSILON, synthetic=BAD_DATA)),
    Spec(_syn.multiplicative_weights_update, dict(synthetic=[2.0, 2.0, 2.0], query=[1, 0, 0], measurement=3.0),
         dict(synthetic=BAD_DATA + [[-1.0, 2.0, 2.0]], measurement=BAD_REAL,
              total=[v for v in BAD_EPSILON if v is not None])),
    Spec(_syn.range_queries, dict(domain_size=4), dict(domain_size=BAD_COUNT + [10 ** 6])),
    Spec(_syn.table_workload, dict(n_rows=3, n_cols=2), dict(n_rows=BAD_COUNT, n_cols=BAD_COUNT)),
    Spec(_syn.independent_marginals, dict(table=[[3.0, 1.0], [2.0, 2.0]], epsilon=1.0),
         dict(table=BAD_DATA + [[1.0, 2.0]], epsilon=BAD_EPSILON, rng=BAD_RNG)),
    Spec(_syn.example_table, dict(seed=20), dict(seed=[-1, 1.5, "x", True, None])),
    Spec(_sv.sparse, dict(query_answers=[1.0, 5.0, 9.0], threshold=4.0, epsilon=1.0, c=2),
         dict(query_answers=BAD_SCORES, threshold=BAD_REAL, epsilon=BAD_EPSILON, c=BAD_COUNT + [4],
              sensitivity=BAD_SENSITIVITY_POSITIVE, rng=BAD_RNG)),
    Spec(_sv.numeric_sparse, dict(query_answers=[1.0, 5.0, 9.0], threshold=4.0, epsilon=1.0, c=2),
         dict(query_answers=BAD_SCORES, threshold=BAD_REAL, epsilon=BAD_EPSILON, c=BAD_COUNT + [4],
              sensitivity=BAD_SENSITIVITY_POSITIVE, rng=BAD_RNG)),
    Spec(_local.olh_estimate, dict(values=[0, 1, 2], k=4, epsilon=1.0),
         dict(values=[[0, 5], [0.5], "0", None, [True]], k=BAD_COUNT + [1], epsilon=BAD_EPSILON + [100.0],
              rng=BAD_RNG)),
    Spec(_local.olh_reports, dict(values=[0, 1, 2], k=4, epsilon=1.0),
         dict(values=[[0, 5], [0.5], "0", None], k=BAD_COUNT + [1], epsilon=BAD_EPSILON + [100.0],
              rng=BAD_RNG)),
    Spec(_local.olh_hash_size, dict(epsilon=1.0), dict(epsilon=BAD_EPSILON + [100.0])),
    Spec(_local.olh_variance, dict(n=100, epsilon=1.0),
         dict(n=BAD_COUNT, epsilon=BAD_EPSILON, g=[v for v in BAD_REAL if v is not None] + [1.0])),
    Spec(_local.central_histogram_estimate, dict(counts=[3, 4], epsilon=1.0),
         dict(sensitivity=BAD_SENSITIVITY_POSITIVE)),
    Spec(_sv.sparse_scales, dict(epsilon=1.0, c=2),
         dict(epsilon=BAD_EPSILON, c=BAD_COUNT, sensitivity=BAD_SENSITIVITY_POSITIVE)),
    Spec(_sv.sparse_draws, dict(query_answers=[1.0, 5.0, 9.0], threshold=4.0, epsilon=1.0, c=2, size=3),
         dict(query_answers=BAD_SCORES, threshold=BAD_REAL, epsilon=BAD_EPSILON, c=BAD_COUNT + [4],
              size=BAD_COUNT, sensitivity=BAD_SENSITIVITY_POSITIVE, rng=BAD_RNG)),
    Spec(_sv.sparse_run_error, dict(query_answers=[1.0, 5.0, 9.0], threshold=4.0,
                                    answered=[False, True, True], c=2),
         dict(query_answers=BAD_SCORES, threshold=BAD_REAL, answered=[[1, 0, 1], [True], None, "x"],
              c=BAD_COUNT + [4])),
    Spec(_sv.sparse_accuracy_bound, dict(k=10, epsilon=1.0, beta=0.05, c=2),
         dict(k=BAD_COUNT, epsilon=BAD_EPSILON, beta=BAD_REAL + [0.0, 1.0, -0.5], c=BAD_COUNT,
              sensitivity=BAD_SENSITIVITY_POSITIVE)),
    Spec(_sv.noisy_top_c, dict(query_answers=[1.0, 5.0, 9.0], epsilon=1.0, c=2),
         dict(query_answers=BAD_SCORES, epsilon=BAD_EPSILON, c=BAD_COUNT + [4],
              sensitivity=BAD_SENSITIVITY_POSITIVE, rng=BAD_RNG)),
    Spec(_lp.protocol_variances, dict(k=[2, 64], epsilon=1.0),
         dict(k=[[2, 2.5], [1], [NAN], "8", None, [True]],
              epsilon=[v for v in BAD_EPSILON if not isinstance(v, list)],
              protocols=[["nope"], [None], 3])),
    Spec(_lp.k_randomized_response_crossover_k, dict(epsilon=1.0),
         dict(epsilon=BAD_EPSILON + [100.0], against=["krr", "nope", None])),
    Spec(_lp.k_randomized_response_crossover_epsilon, dict(k=64),
         dict(k=BAD_COUNT, against=["krr", "nope", None], low=BAD_EPSILON + [100.0],
              high=BAD_EPSILON + [100.0, 1e-3])),
    Spec(_lp.report_bits, dict(k=64, epsilon=1.0, protocol="olh"),
         dict(k=BAD_K2, epsilon=BAD_EPSILON + [100.0], protocol=["nope", None, 3],
              seed_bits=BAD_COUNT)),
    Spec(properties.group_privacy_chain, dict(epsilon=0.5, delta=1e-6, k=3),
         dict(epsilon=BAD_EPSILON, delta=BAD_DELTA, k=BAD_COUNT)),
    Spec(tradeoff.gdp_delta, dict(epsilon=1.0, mu=1.0),
         dict(epsilon=[v for v in BAD_REAL if not isinstance(v, list)] + [-1.0], mu=BAD_REAL + [-1.0])),
    Spec(tradeoff.gdp_clt_mu, dict(loss_mean=0.01, loss_variance=0.02, k=100),
         dict(k=BAD_COUNT)),
    Spec(_pld.PLDAccountant, dict(interval=1e-3), dict(interval=BAD_SCALE)),
]

SPECS = [spec for spec in SPECS if spec.func is not None]
ROWS = [row for spec in SPECS for row in spec.rows()] + EXTRA_ROWS
PUBLIC = {spec.func for spec in SPECS}


def _mentions(message, param):
    return re.search(rf"(?<![\w]){re.escape(param)}(?![\w])", message) is not None


# ---------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name or s.func.__name__)
def test_good_arguments_work(spec):
    """The baseline of every row is valid, so each bad-input row tests exactly one parameter."""
    kwargs = dict(spec.good)
    if "rng" in spec.bad:
        kwargs["rng"] = rng_kw()
    spec.func(**kwargs)


def _refusal_problem(func, good, param, bad, uses_rng):
    """None when ``func`` refuses ``param=bad`` by name before any work, else what went
    wrong."""
    kwargs = dict(good)
    rng = rng_kw()
    if uses_rng and param != "rng":
        kwargs["rng"] = rng
    before = rng.bit_generator.state
    kwargs[param] = bad
    try:
        func(**kwargs)
    except (ValueError, TypeError) as err:
        message = str(err)
    except Exception as err:                           # noqa: BLE001 - reported, not hidden
        return f"{param}={_short(bad)}: raised {type(err).__name__}: {err}"
    else:
        return f"{param}={_short(bad)}: accepted"
    if param == "candidates" and "entries" in message:
        named = _mentions(message, "candidates")         # a length mismatch names both
    else:
        named = _mentions(message, param)
    if not named:
        return f"{param}={_short(bad)}: the message does not name {param!r}: {message}"
    # refused before any work: not one random number drawn
    if rng.bit_generator.state != before:
        return f"{param}={_short(bad)}: a random number was drawn before the check"
    return None


@pytest.mark.parametrize("func,good,param,bads", ROWS)
def test_bad_input_is_refused_naming_the_parameter(func, good, param, bads):
    uses_rng = "rng" in {k for s in SPECS if s.func is func for k in s.bad}
    problems = [_refusal_problem(func, good, param, bad, uses_rng) for bad in bads]
    problems = [p for p in problems if p]
    assert not problems, "\n".join(problems)


# the package core: every public name of mechanisms and bounds, and the accounting
# contract (functions appended to accounting.py later bring their own rows)
CORE = {
    mechanisms: set(mechanisms.__all__),
    bounds: set(bounds.__all__),
    accounting: {"basic_composition", "advanced_composition", "PrivacyAccountant",
                 "BudgetExceededError"},
}


def test_every_public_function_of_the_core_is_in_the_table():
    listed = {f.__name__ for f in PUBLIC} | {"BudgetExceededError"}   # an exception class
    for module, names in CORE.items():
        assert names <= set(module.__all__)
        for name in sorted(names):
            assert name in listed, f"{module.__name__}.{name} has no bad-input rows"


# ------------------------------------------------- a NaN epsilon never releases the answer
NAN_EPSILONS = [float("nan"), np.float64("nan"), np.float32("nan"), np.array(np.nan)]
RELEASES = {
    # sensitivity 0 would otherwise release the true answer exactly
    "laplace_mechanism": lambda e, rng: mechanisms.laplace_mechanism(42.0, 0.0, e, rng=rng),
    "laplace_mechanism vector": lambda e, rng: mechanisms.laplace_mechanism([42.0, 7.0], 1.0, e,
                                                                            rng=rng, size=3),
    "clamped_sum": lambda e, rng: mechanisms.clamped_sum([1.0, 2.0], 0.0, 5.0, e, rng=rng),
    "gaussian_mechanism": lambda e, rng: mechanisms.gaussian_mechanism(42.0, 0.0, e, 1e-5, rng=rng),
    "gaussian_mechanism analytic": lambda e, rng: mechanisms.gaussian_mechanism(
        42.0, 1.0, e, 1e-5, analytic=True, rng=rng),
    "exponential_mechanism": lambda e, rng: mechanisms.exponential_mechanism(
        ["secret", "other"], [1e9, 0.0], 1.0, e, rng=rng),
    "report_noisy_max": lambda e, rng: mechanisms.report_noisy_max([1e9, 0.0], 1.0, e, rng=rng),
    "randomized_response": lambda e, rng: mechanisms.randomized_response([1, 0, 1], e, rng=rng),
    "PrivacyAccountant": lambda e, rng: accounting.PrivacyAccountant(e),
    "PrivacyAccountant.spend": lambda e, rng: accounting.PrivacyAccountant(1.0).spend(e),
}


@pytest.mark.parametrize("nan", NAN_EPSILONS, ids=repr)
@pytest.mark.parametrize("name", sorted(RELEASES))
def test_a_nan_epsilon_never_releases_the_true_answer(name, nan):
    rng = rng_kw()
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match="epsilon must be a number, got NaN"):
        RELEASES[name](nan, rng)
    assert rng.bit_generator.state == before


def test_nan_epsilon_does_not_slip_through_comparisons():
    # NaN compares False with everything, so a check written as `if epsilon <= 0: raise`
    # would let it through; make sure the accountant does not count it as a free spend
    acc = accounting.PrivacyAccountant(1.0)
    with pytest.raises(ValueError):
        acc.spend(float("nan"))
    with pytest.raises(ValueError):
        acc.can_spend(float("nan"))
    assert acc.history == [] and acc.spent == (0.0, 0.0)


# ------------------------------------- every public callable of the package is in the table
# A parameter is numeric when its default is a number or its name is one of these. A public
# callable with a numeric parameter needs a bad-input row for it (above), or an entry in
# EXEMPT saying why not; a new public function cannot skip the table.
NUMERIC_NAMES = {
    "epsilon", "epsilons", "delta", "deltas", "delta_slack", "epsilon_total", "k", "weights",
    "sensitivity", "l1_sensitivity", "l2_sensitivity", "scale", "scale1", "scale2", "sigma",
    "gap", "gap1", "gap2", "r", "r1", "r2", "value", "value1", "value2", "values", "t",
    "t_grid", "beta", "opt", "n_candidates", "n", "m", "size", "universe_size", "count",
    "count_x", "count_y", "count_all", "count_without_target", "mean_all", "n_all",
    "mean_rest", "n_rest", "bound", "noise_bound", "z", "pi", "prior", "keep", "threshold",
    "min_fraction", "max_epsilon", "top", "copies", "window", "epsilons", "k_grid", "ratio",
    "ratios", "ns", "alpha", "lower", "upper", "output", "candidate", "outputs", "p", "q",
    "spread", "split", "prevalence", "timeout", "task_timeout", "points", "max_points",
}

# callables that take numbers but need no rows here, and why
EXEMPT = {
    # plain records: built by the package from checked values, read back by the student
    "dpteach.sensitivity.SensitivityResult": "record returned by global_sensitivity",
    "dpteach.audit.Event": "record describing an audit's event, built by audit()",
    "dpteach.audit.AuditResult": "record returned by audit()",
    "dpteach.audit.ZooEntry": "record of the audit zoo, built at import",
    "dpteach.attacks.reconstruction.LPResult": "record returned by lp_decode",
    "dpteach.comparison.MechanismCard": "record of the mechanism table, built at import",
    "dpteach.comparison.Recommendation": "record returned by choose_mechanism",
    "dpteach.coursework.exercises.Feedback": "record returned by every check",
    "dpteach.coursework.grading.Row": "record of a grading report",
    "dpteach.sgd.DPSGDResult": "record returned by dp_sgd",
    "dpteach.coursework.assignments.Task": "record describing an assignment task, built at import",
    # drawing primitives: they take an Axes and the arrays a panel computed (already
    # checked by the panel's compute function); matplotlib validates styling numbers
    **{f"dpteach.plots.{name}": "drawing primitive (see comment above)"
       for name in ("new_figure", "band", "bars", "vline", "hline",
                    "density_line", "set_band", "note", "label_axes")},
    # the panel builders: every REGISTRY builder and every numeric parameter is checked by
    # test_panel_builders_refuse_bad_initial_values below
    "dpteach.panels.Panel": "the panel container; its controls are built by the builders",
}


# modules whose own test file runs the same table over every public function
EXEMPT_MODULES = {
    "dpteach.clipping": "bad-input rows in tests/lessons/test_clipping.py (lists of tests/_bad_values.py)",
    "dpteach.sparse_vector": "bad-input rows in tests/lessons/test_sparse_vector.py (same lists)",
    "dpteach.synthetic": "bad-input and edge rows in tests/lessons/test_synthetic.py (same lists)",
}


def _public_callables():
    import inspect

    found = {}
    for module, name, obj in public_names():
        if not callable(obj) or (inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        found.setdefault(obj, f"{module}.{name}")
    return found


def _numeric_parameters(obj):
    import inspect
    import numbers

    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return set()
    out = set()
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        numeric_default = (isinstance(p.default, numbers.Real)
                           and not isinstance(p.default, (bool, np.bool_)))
        if numeric_default or p.name in NUMERIC_NAMES:
            out.add(p.name)
    return out


def _panel_builders():
    from dpteach.panels import REGISTRY
    return set(REGISTRY.values())


def test_every_public_callable_with_a_numeric_parameter_has_bad_input_rows():
    covered = {}
    for spec in SPECS:
        covered.setdefault(spec.func, set()).update(spec.bad)
    builders = _panel_builders()
    missing = []
    for obj, name in sorted(_public_callables().items(), key=lambda kv: kv[1]):
        numeric = _numeric_parameters(obj)
        if not numeric or obj in builders or name in EXEMPT or \
                name.rsplit(".", 1)[0] in EXEMPT_MODULES:
            continue
        gaps = numeric - covered.get(obj, set()) - EXEMPT_PARAMS.get(name, set())
        if gaps:
            missing.append(f"{name}: {sorted(gaps)}")
    assert not missing, "public callables without bad-input rows:\n" + "\n".join(missing)



# ------------------------------------------ panel builders check their arguments, generically
def _panel_cases():
    import inspect
    import numbers

    from dpteach.panels import REGISTRY

    for name, builder in sorted(REGISTRY.items()):
        for p in inspect.signature(builder).parameters.values():
            d = p.default
            if isinstance(d, (bool, np.bool_)):
                values = ["yes", 1]
            elif isinstance(d, numbers.Real):
                # None is left out: several builders document None as "the default"
                values = [NAN, INF, -1e308, "1", True]
            elif isinstance(d, str):
                values = ["no such option", 3]
            else:
                continue
            yield pytest.param(builder, p.name, values, id=f"{name}-{p.name}")


@pytest.mark.parametrize("builder,param,bads", list(_panel_cases()))
def test_panel_builders_refuse_bad_initial_values(builder, param, bads):
    """A NaN, an out-of-range number, a string or a bool never reaches a slider: the
    control factories of dpteach/panels/_controls.py refuse it before any widget exists and
    the REGISTRY wrapper names the builder's parameter."""
    problems = []
    for bad in bads:
        try:
            builder(**{param: bad})
        except (ValueError, TypeError) as err:
            if not _mentions(str(err), param):
                problems.append(f"{param}={_short(bad)}: the message does not name it: {err}")
        else:
            problems.append(f"{param}={_short(bad)}: accepted")
    assert not problems, "\n".join(problems)


def test_every_registry_builder_is_wrapped():
    from dpteach.panels import REGISTRY
    assert all(hasattr(b, "__wrapped__") for b in REGISTRY.values())


# ============================================================== numbers at the edges (issue 19)
# Every public callable of the newer modules, and every closure one returns, with each
# numeric parameter set to 1e-320, 1e308, 10**400 and -1e-320 (sizes and counts also to
# 10**12): the call is refused with ValueError/TypeError naming the parameter, before any
# random number is drawn, or it returns finite numbers. Sizes are checked against an upper
# limit before anything is allocated, so a refusal is instant; the alarm below is only a
# guard against a hang (a failing test instead of a stuck run), never a speed assertion.
import os  # noqa: E402
import signal  # noqa: E402

from _bad_values import EXTREME, EXTREME_SIZES, is_finite_answer  # noqa: E402

from dpteach import clipping as _clipping, sparse_vector as _sv  # noqa: E402


@dataclass
class EdgeSpec:
    func: object
    good: dict
    reals: tuple = ()        # real parameters: EXTREME
    sizes: tuple = ()        # counts and sizes: EXTREME_SIZES
    arrays: tuple = ()       # array parameters: first entry replaced by each EXTREME value
    name: str = ""
    infinite_ok: tuple = ()  # parameters whose extreme values may give a documented inf

    @property
    def label(self):
        return self.name or getattr(self.func, "__name__", repr(self.func))

    def rows(self):
        for kind, params, values in (("real", self.reals, EXTREME), ("size", self.sizes, EXTREME_SIZES),
                                     ("array", self.arrays, EXTREME)):
            for param in params:
                yield pytest.param(self, param, kind, list(values), id=f"{self.label}-{param}")


def _first_entry(good, v):
    out = [list(row) if isinstance(row, (list, tuple, np.ndarray)) else row
           for row in np.asarray(good, dtype=object).tolist()]
    if isinstance(out[0], list):
        out[0][0] = v
    else:
        out[0] = v
    return out


def _pld_method(mechanism, method, **params):
    def call(epsilon=None, delta=None):
        law = tradeoff.privacy_loss_distribution(mechanism, **params)
        return getattr(law, method)(delta if method == "epsilon" else epsilon)
    call.__name__ = f"LossDistribution[{mechanism}].{method}"
    return call


def _accountant_compose(sigma=1.0, q=0.1, steps=3):
    return _rdp.RDPAccountant().compose_gaussian(sigma, q=q, steps=steps).epsilon(1e-5)


def _accountant_epsilon(delta=1e-5):
    return _rdp.RDPAccountant().compose_gaussian(1.0, q=0.1, steps=3).epsilon(delta)


def _variant_closure(name):
    def call(data=(10.0, 30.0, 60.0), size=5, threshold=40.0, epsilon=1.0, sensitivity=1.0,
             rng=None):
        mech = _sv.variant_mechanism(name, threshold, epsilon, sensitivity=sensitivity)
        return mech(data, size, np.random.default_rng(0) if rng is None else rng)
    call.__name__ = f"variant_mechanism[{name}]-closure"
    return call


def _dpsgd_result_epsilon(delta=1e-5):
    res = _sgd.dp_sgd(_X2, _Y2, epochs=1, sampling_rate=0.5, clip=1.0, noise_multiplier=1.0,
                         learning_rate=0.1, delta=delta, rng=np.random.default_rng(0))
    return res.epsilon


_ANS = [10.0, 30.0, 60.0]
_SGD = dict(X=_X2, y=_Y2, epochs=1, sampling_rate=0.5, clip=1.0, noise_multiplier=1.0,
            learning_rate=0.1)
_W = [0.1, -0.2]

EDGE_SPECS = [
    # properties
    EdgeSpec(properties.group_privacy, dict(epsilon=0.5, delta=1e-6, k=3), ("epsilon", "delta"), ("k",)),
    EdgeSpec(properties.gaussian_group_delta, dict(epsilon=1.0, delta=1e-5, k=2),
             ("epsilon", "delta"), ("k",)),
    EdgeSpec(properties.parallel_composition, dict(epsilons=[0.1, 0.2], deltas=[0.0, 1e-6]),
             arrays=("epsilons", "deltas")),
    EdgeSpec(properties.postprocess_laplace, dict(value=0.0, scale=1.0),
             ("value", "scale", "step", "lower", "upper", "threshold")),
    EdgeSpec(properties.postprocess_laplace, dict(value=0.0, scale=1.0, f="round"), ("step",),
             name="postprocess_laplace_round"),
    EdgeSpec(properties.postprocess_laplace, dict(value=0.0, scale=1.0, f="clamp"),
             ("value", "scale", "lower", "upper"), name="postprocess_laplace_clamp"),
    EdgeSpec(properties.max_log_ratio, dict(value1=0.0, value2=1.0, scale=1.0),
             ("value1", "value2", "scale", "step", "lower", "upper", "threshold")),
    EdgeSpec(properties.max_log_ratio, dict(value1=0.0, value2=1.0, scale=1.0, f="round"),
             ("value1", "scale", "step"), name="max_log_ratio_round"),
    EdgeSpec(properties.group_curves, dict(epsilon=0.5, delta=1e-6, ks=[1, 2]),
             ("epsilon", "delta"), arrays=("ks",)),
    EdgeSpec(properties.parallel_costs, dict(epsilon=0.5, n_bins=4), ("epsilon",), ("n_bins",)),
    # tradeoff
    EdgeSpec(tradeoff.tradeoff_curve, dict(alpha=[0.1, 0.5], epsilon=1.0, delta=1e-5),
             ("epsilon", "delta"), arrays=("alpha",)),
    EdgeSpec(tradeoff.gaussian_tradeoff, dict(alpha=[0.1, 0.5], mu=1.0), ("mu",), arrays=("alpha",)),
    EdgeSpec(tradeoff.laplace_tradeoff, dict(alpha=[0.1, 0.5], epsilon=1.0), ("epsilon",),
             arrays=("alpha",)),
    EdgeSpec(tradeoff.privacy_loss_distribution, dict(mechanism="laplace", epsilon=1.0),
             ("epsilon", "sensitivity"), name="pld_laplace"),
    EdgeSpec(tradeoff.privacy_loss_distribution, dict(mechanism="gaussian", sigma=1.0),
             ("sigma", "sensitivity"), name="pld_gaussian"),
    EdgeSpec(tradeoff.privacy_loss_distribution, dict(mechanism="randomized_response", epsilon=1.0),
             ("epsilon",), name="pld_rr"),
    *[EdgeSpec(_pld_method(m, meth, **kw), {arg: x}, (arg,))
      for m, kw in (("laplace", dict(epsilon=1.0)), ("gaussian", dict(sigma=1.0)),
                    ("randomized_response", dict(epsilon=1.0)))
      for meth, arg, x in (("delta", "epsilon", 0.5), ("tail", "epsilon", 0.5),
                           ("epsilon", "delta", 1e-5))],
    EdgeSpec(tradeoff.membership_attack, dict(epsilon=1.0, n_trials=50, rng=0),
             ("epsilon", "sensitivity_used", "delta"), ("n_trials", "count")),
    EdgeSpec(tradeoff.membership_attack, dict(epsilon=1.0, n_trials=50, noise="gaussian", rng=0),
             ("epsilon", "delta"), name="membership_attack_gaussian"),
    EdgeSpec(tradeoff.empirical_tradeoff, dict(out=[0.0, 1.0], in_=[1.0, 2.0], thresholds=[0.5]),
             arrays=("out", "in_", "thresholds")),
    EdgeSpec(tradeoff.outside_region, dict(alpha=0.1, beta=0.5, n_out=100, n_in=100, epsilon=1.0),
             ("epsilon", "delta", "level"), ("n_out", "n_in")),
    EdgeSpec(tradeoff.advantage_bound, dict(epsilon=1.0, delta=1e-5), ("epsilon", "delta"),
             name="tradeoff.advantage_bound"),
    EdgeSpec(tradeoff.attack_thresholds, dict(out=[0.0, 1.0], in_=[1.0, 2.0], n=5, count=40),
             ("count",), ("n",), arrays=("out", "in_"), name="tradeoff.attack_thresholds"),
    # clipping
    EdgeSpec(_clipping.clip_range, dict(lower=0.0, upper=1.0), ("lower", "upper")),
    EdgeSpec(_clipping.clipped_mean_noise_scales, dict(lower=0.0, upper=1.0, epsilon=1.0),
             ("lower", "upper", "epsilon")),
    EdgeSpec(_clipping.noisy_sum_and_count, dict(values=[0.2, 0.5], lower=0.0, upper=1.0, epsilon=1.0,
                                                 rng=0),
             ("lower", "upper", "epsilon"), ("size",), arrays=("values",)),
    EdgeSpec(_clipping.clipped_mean, dict(values=[0.2, 0.5], lower=0.0, upper=1.0, epsilon=1.0, rng=0),
             ("lower", "upper", "epsilon"), ("size",), arrays=("values",)),
    EdgeSpec(_clipping.clipped_mean_error, dict(values=[0.2, 0.5], lower=0.0, upper=1.0, epsilon=1.0),
             ("lower", "upper", "epsilon"), arrays=("values",)),
    EdgeSpec(_clipping.clipped_mean_releases, dict(values=[0.2, 0.5], lower=0.0, upper=1.0, epsilon=1.0,
                                                   unit_noise=[[0.1, -0.3], [0.2, 1.0]]),
             ("lower", "upper", "epsilon"), arrays=("values", "unit_noise")),
    EdgeSpec(_clipping.clipped_mean_ratio, dict(noisy_sum=[0.3, 4.0], noisy_count=[2.0, -1.0], lower=0.0,
                                                upper=1.0),
             ("lower", "upper"), arrays=("noisy_sum", "noisy_count")),
    EdgeSpec(_clipping.quantile_interval_probabilities,
             dict(values=[0.2, 0.5], quantile=0.5, lower=0.0, upper=1.0, epsilon=1.0),
             ("quantile", "lower", "upper", "epsilon"), arrays=("values",)),
    EdgeSpec(_clipping.private_quantile,
             dict(values=[0.2, 0.5], quantile=0.5, lower=0.0, upper=1.0, epsilon=1.0, rng=0),
             ("quantile", "lower", "upper", "epsilon"), ("size",), arrays=("values",)),
    EdgeSpec(_clipping.example_incomes, dict(n=10), sizes=("n", "seed")),
    # sparse vector
    EdgeSpec(_sv.above_threshold, dict(query_answers=_ANS, threshold=40.0, epsilon=1.0, rng=0),
             ("threshold", "epsilon", "sensitivity"), arrays=("query_answers",)),
    EdgeSpec(_sv.above_threshold_draws,
             dict(query_answers=_ANS, threshold=40.0, epsilon=1.0, size=5, rng=0),
             ("threshold", "epsilon", "sensitivity"), ("size",), arrays=("query_answers",)),
    EdgeSpec(_sv.above_threshold_probabilities, dict(query_answers=_ANS, threshold=40.0, epsilon=1.0),
             ("threshold", "epsilon", "sensitivity"), arrays=("query_answers",)),
    EdgeSpec(_sv.above_threshold_scales, dict(epsilon=1.0), ("epsilon", "sensitivity")),
    EdgeSpec(definition.privacy_loss_between, dict(p=[0.5, 0.5], q=[0.4, 0.6]), arrays=("p", "q"),
             infinite_ok=("p", "q")),   # inf when one is 0 where the other is not (docstring)
    *[EdgeSpec(_sv.variant_mechanism, dict(name=n, threshold=40.0, epsilon=1.0),
               ("threshold", "epsilon", "sensitivity"), name=f"variant_mechanism[{n}]")
      for n in _sv.VARIANTS],
    *[EdgeSpec(_variant_closure(n), dict(rng=np.random.default_rng(0)),
               ("threshold", "epsilon", "sensitivity"), ("size",), arrays=("data",))
      for n in _sv.VARIANTS],
    *[EdgeSpec(_sv.variant_probabilities,
               dict(name=n, query_answers=_ANS, threshold=40.0, epsilon=1.0),
               ("threshold", "epsilon", "sensitivity"), arrays=("query_answers",),
               name=f"variant_probabilities[{n}]")
      for n in ("above_threshold", "no_query_noise", "fresh_threshold_noise")],
    EdgeSpec(_sv.no_stop_pattern_probability,
             dict(query_answers=_ANS, pattern=[False, True, True], threshold=40.0, epsilon=1.0),
             ("threshold", "epsilon", "sensitivity"), arrays=("query_answers",)),
    EdgeSpec(_sv.accuracy_bound, dict(k=10, epsilon=1.0, beta=0.05), ("epsilon", "beta"), ("k",)),
    EdgeSpec(_sv.run_error, dict(query_answers=_ANS, threshold=40.0, index=1), ("threshold",),
             ("index",), arrays=("query_answers",)),
    EdgeSpec(_sv.example_answers, dict(k=10), sizes=("k", "seed")),
    # rdp
    EdgeSpec(_rdp.gaussian_rdp, dict(order=2.0, sigma=1.0), ("order", "sigma", "l2_sensitivity")),
    EdgeSpec(_rdp.gaussian_zcdp, dict(sigma=1.0), ("sigma", "l2_sensitivity"),
             infinite_ok=("sigma", "l2_sensitivity")),   # rho = inf: no privacy (docstring)
    EdgeSpec(_rdp.rdp_to_dp, dict(orders=[2.0, 4.0], rdp=[0.1, 0.2], delta=1e-5), ("delta",),
             arrays=("orders", "rdp")),
    EdgeSpec(_rdp.rdp_to_dp_order, dict(orders=[2.0, 4.0], rdp=[0.1, 0.2], delta=1e-5), ("delta",),
             arrays=("orders", "rdp")),
    EdgeSpec(_rdp.zcdp_to_dp, dict(rho=0.1, delta=1e-5), ("rho", "delta")),
    EdgeSpec(_rdp.zcdp_to_dp, dict(rho=0.5, delta=1e-5, method="classic"), ("rho", "delta"),
             name="zcdp_to_dp_classic"),
    EdgeSpec(_rdp.gaussian_epsilon, dict(sigma=1.0, delta=1e-5, k=2),
             ("sigma", "delta", "l2_sensitivity"), ("k",)),
    EdgeSpec(_rdp.subsampled_gaussian_rdp, dict(q=0.1, sigma=1.0, orders=[2, 4]), ("q", "sigma"),
             arrays=("orders",)),
    EdgeSpec(_rdp.RDPAccountant, dict(orders=[2.0, 4.0]), arrays=("orders",)),
    EdgeSpec(_accountant_compose, dict(sigma=1.0, q=0.1, steps=3), ("sigma", "q"), ("steps",),
             name="RDPAccountant.compose_gaussian"),
    EdgeSpec(_accountant_epsilon, dict(delta=1e-5), ("delta",), name="RDPAccountant.epsilon"),
    EdgeSpec(_rdp.composition_epsilons, dict(sigma=1.0, delta=1e-5, ks=[1, 2]),
             ("sigma", "delta", "l2_sensitivity"), arrays=("ks",)),
    # local
    EdgeSpec(_local.k_randomized_response_keep_probability, dict(k=4, epsilon=1.0), ("epsilon",), ("k",)),
    EdgeSpec(_local.k_randomized_response_probabilities, dict(k=4, epsilon=1.0), ("epsilon",), ("k",)),
    EdgeSpec(_local.k_randomized_response, dict(values=[0, 1, 3], k=4, epsilon=1.0, rng=0),
             ("epsilon",), ("k",)),
    EdgeSpec(_local.k_randomized_response_estimate, dict(reports=[0, 1, 3], k=4, epsilon=1.0),
             ("epsilon",), ("k",)),
    EdgeSpec(_local.unary_encoding_probabilities, dict(epsilon=1.0), ("epsilon",)),
    EdgeSpec(_local.unary_encoding, dict(values=[0, 1, 3], k=4, epsilon=1.0, rng=0), ("epsilon",),
             ("k",)),
    EdgeSpec(_local.unary_encoding_estimate, dict(reports=[[1, 0], [0, 1]], epsilon=1.0), ("epsilon",)),
    EdgeSpec(_local.unary_encoding_output_probabilities, dict(k=4, epsilon=1.0), ("epsilon",), ("k",)),
    EdgeSpec(_local.local_epsilon, dict(probabilities=[[0.7, 0.3], [0.3, 0.7]]),
             arrays=("probabilities",)),
    EdgeSpec(_local.local_variance, dict(n=100, k=4, epsilon=1.0), ("epsilon",), ("n", "k")),
    EdgeSpec(_local.local_variance, dict(n=100, k=4, epsilon=1.0, frequency=0.3), ("epsilon",),
             arrays=(), name="local_variance_frequency"),
    EdgeSpec(_local.central_variance, dict(n=100, epsilon=1.0), ("epsilon", "sensitivity"), ("n",)),
    EdgeSpec(_local.report_counts, dict(counts=[5, 3, 2], epsilon=1.0, rng=0), ("epsilon",), ("size",),
             arrays=("counts",)),
    EdgeSpec(_local.estimate_from_counts, dict(counts=[5, 3, 2], n=10, k=3, epsilon=1.0), ("epsilon",),
             ("n", "k"), arrays=("counts",)),
    EdgeSpec(_local.central_histogram_estimate, dict(counts=[5, 3, 2], epsilon=1.0, rng=0),
             ("epsilon",), ("size",), arrays=("counts",)),
    EdgeSpec(_local.example_frequencies, dict(k=4), sizes=("k",)),
    EdgeSpec(_local.true_counts, dict(n=10, frequencies=[0.5, 0.5]), sizes=("n",)),
    EdgeSpec(_local.k_randomized_response_is_better, dict(k=4, epsilon=1.0), ("epsilon",), ("k",)),
    # dp_sgd
    EdgeSpec(_sgd.clip_gradients, dict(per_example_grads=[[3.0, 4.0], [0.1, 0.2]], clip=1.0),
             ("clip",), arrays=("per_example_grads",)),
    EdgeSpec(_sgd.noisy_gradient_sum,
             dict(per_example_grads=[[3.0, 4.0], [0.1, 0.2]], clip=1.0, noise_multiplier=1.0, rng=0),
             ("clip", "noise_multiplier"), arrays=("per_example_grads",)),
    EdgeSpec(_sgd.per_example_gradients, dict(w=_W, X=_X2, y=_Y2), arrays=("w", "X")),
    EdgeSpec(_sgd.logistic_loss, dict(w=_W, X=_X2, y=_Y2), arrays=("w", "X")),
    EdgeSpec(_sgd.predict, dict(w=_W, X=_X2), arrays=("w", "X")),
    EdgeSpec(_sgd.accuracy, dict(w=_W, X=_X2, y=_Y2), arrays=("w", "X")),
    EdgeSpec(_sgd.dp_sgd, dict(_SGD, rng=0),
             ("sampling_rate", "clip", "noise_multiplier", "learning_rate", "delta"), ("epochs",),
             arrays=("X", "w0")),
    EdgeSpec(_dpsgd_result_epsilon, dict(delta=1e-5), ("delta",), name="DPSGDResult.epsilon"),
    EdgeSpec(_sgd.membership_inference, dict(member_losses=[0.1, 0.2], nonmember_losses=[0.5, 0.9]),
             arrays=("member_losses", "nonmember_losses"),
             infinite_ok=("member_losses", "nonmember_losses")),   # thresholds -inf, +inf (docstring)
    EdgeSpec(_sgd.make_overfit_data, dict(n_train=5, n_test=5, d=6, rng=0),
             ("signal", "noise_scale"), ("n_train", "n_test", "d", "informative")),
    EdgeSpec(_sgd.membership_game, dict(X=_X2, y=_Y2, epochs=1, sampling_rate=0.5, clip=1.0,
                                           noise_multiplier=1.0, learning_rate=0.1, rng=0),
             ("sampling_rate", "clip", "noise_multiplier", "learning_rate"), ("epochs",), arrays=("X",)),
    EdgeSpec(properties.group_privacy_chain, dict(epsilon=0.5, delta=1e-6, k=3), ("epsilon", "delta"), ("k",),
             infinite_ok=("epsilon", "k")),
    EdgeSpec(tradeoff.gdp_delta, dict(epsilon=1.0, mu=1.0), ("epsilon", "mu")),
    EdgeSpec(tradeoff.gdp_compose, dict(mus=[0.5, 1.0]), arrays=("mus",), infinite_ok=("mus",)),
    EdgeSpec(tradeoff.gdp_clt_mu, dict(loss_mean=0.01, loss_variance=0.02, k=100),
             ("loss_mean", "loss_variance"), ("k",), infinite_ok=("loss_mean", "loss_variance", "k")),
    EdgeSpec(_clipping.centred_clipped_mean, dict(values=[1.0, 2.0, 3.0], lower=0.0, upper=4.0, epsilon=1.0,
                                                  rng=0),
             ("lower", "upper", "epsilon"), ("size",), arrays=("values",)),
    EdgeSpec(_clipping.known_n_mean, dict(values=[1.0, 2.0, 3.0], lower=0.0, upper=4.0, epsilon=1.0, rng=0),
             ("lower", "upper", "epsilon"), ("size",), arrays=("values",)),
    EdgeSpec(_sv.sparse, dict(query_answers=_ANS, threshold=40.0, epsilon=1.0, c=2, rng=0),
             ("threshold", "epsilon", "sensitivity"), ("c",), arrays=("query_answers",)),
    EdgeSpec(_sv.numeric_sparse, dict(query_answers=_ANS, threshold=40.0, epsilon=1.0, c=2, rng=0),
             ("threshold", "epsilon", "sensitivity"), ("c",), arrays=("query_answers",)),
    EdgeSpec(_local.olh_hash_size, dict(epsilon=1.0), ("epsilon",)),
    EdgeSpec(_local.olh_reports, dict(values=[0, 1, 3], k=4, epsilon=1.0, rng=0), ("epsilon",), ("k",)),
    EdgeSpec(_local.olh_estimate, dict(values=[0, 1, 3], k=4, epsilon=1.0, rng=0), ("epsilon",), ("k",)),
    EdgeSpec(_local.olh_variance, dict(n=100, epsilon=1.0), ("epsilon", "g"), ("n",)),
    EdgeSpec(_sv.sparse_scales, dict(epsilon=1.0, c=2), ("epsilon", "sensitivity"), ("c",)),
    EdgeSpec(_sv.sparse_draws, dict(query_answers=_ANS, threshold=40.0, epsilon=1.0, c=2, size=3, rng=0),
             ("threshold", "epsilon", "sensitivity"), ("c", "size"), arrays=("query_answers",)),
    EdgeSpec(_sv.sparse_run_error, dict(query_answers=_ANS, threshold=40.0, answered=[False, True, True],
                                        c=2), ("threshold",), ("c",), arrays=("query_answers",)),
    EdgeSpec(_sv.sparse_accuracy_bound, dict(k=10, epsilon=1.0, beta=0.05, c=2),
             ("epsilon", "beta", "sensitivity"), ("k", "c")),
    EdgeSpec(_sv.noisy_top_c, dict(query_answers=_ANS, epsilon=1.0, c=2, rng=0),
             ("epsilon", "sensitivity"), ("c",), arrays=("query_answers",)),
    EdgeSpec(_lp.protocol_variances, dict(k=[2, 64], epsilon=1.0), ("epsilon",), arrays=("k",)),
    EdgeSpec(_lp.k_randomized_response_crossover_k, dict(epsilon=1.0), ("epsilon",)),
    EdgeSpec(_lp.k_randomized_response_crossover_epsilon, dict(k=64), ("low", "high"), ("k",)),
    EdgeSpec(_lp.report_bits, dict(k=64, epsilon=1.0, protocol="olh"), ("epsilon",), ("k", "seed_bits")),
]
_EDGE_ROWS = [row for spec in EDGE_SPECS for row in spec.rows()]


def _alarm(signum, frame):
    raise TimeoutError("hang guard: the call ran for over 120 s")


@pytest.mark.parametrize("spec,param,kind,values", _EDGE_ROWS)
def test_extreme_values_are_refused_by_name_or_give_finite_answers(spec, param, kind, values):
    problems = [_edge_problem(spec, param, kind, value) for value in values]
    problems = [p for p in problems if p]
    assert not problems, "\n".join(problems)


def _edge_problem(spec, param, kind, value):
    """None when ``spec.func`` refuses the extreme ``value`` of ``param`` by name before
    any work, or answers finitely (or with a documented infinity, never NaN); else what
    went wrong."""
    kwargs = dict(spec.good)
    rng = np.random.default_rng(0)
    if "rng" in kwargs:
        kwargs["rng"] = rng
    before = rng.bit_generator.state
    if kind == "array":
        base = kwargs.get(param)
        if base is None:                        # an optional array such as w0
            base = [0.0] * _X2.shape[1]
        kwargs[param] = _first_entry(base, value)
    else:
        kwargs[param] = value
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(os.environ.get("DPTEACH_HANG_GUARD", "120")))
    where = f"{spec.label}({param}={_short(value)})"
    try:
        out = spec.func(**kwargs)
    except (ValueError, TypeError) as err:
        if not _mentions(str(err), param):
            return f"{where}: the message does not name {param!r}: {err}"
        if rng.bit_generator.state != before:
            return f"{where}: a random number was drawn before the check"
        return None
    except Exception as err:                    # noqa: BLE001 - reported, not hidden
        return f"{where}: raised {type(err).__name__}: {err}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if callable(out) and not isinstance(out, type):
        return None                             # a closure: its own rows call it
    if param not in spec.infinite_ok:
        if not is_finite_answer(out):
            return f"{where} returned {out!r}"
    elif np.isnan(np.asarray(out, dtype=object).astype(float)).any():
        return f"{where} returned NaN: {out!r}"     # a documented inf, but never NaN
    return None


def test_every_public_callable_of_the_newer_modules_has_edge_rows():
    import inspect
    covered = {spec.func for spec in EDGE_SPECS}
    labels = {spec.label for spec in EDGE_SPECS}
    missing = []
    for module in (properties, tradeoff, _clipping, _sv, _rdp, _local, _sgd):
        for name in module.__all__:
            obj = getattr(module, name)
            if not callable(obj) or (inspect.isclass(obj) and issubclass(obj, BaseException)):
                continue
            if obj in covered or name in _EDGE_EXEMPT:
                continue
            missing.append(f"{module.__name__}.{name}")
    assert not missing, "no edge rows for: " + ", ".join(missing)
    # every closure a public function returns, and every method that takes numbers
    for label in ["variant_mechanism[%s]-closure" % n for n in _sv.VARIANTS] + [
            "RDPAccountant.compose_gaussian", "RDPAccountant.epsilon", "DPSGDResult.epsilon",
            "LossDistribution[gaussian].epsilon", "LossDistribution[laplace].delta"]:
        assert label in labels, label


# records built by the package from checked values (no numeric parameter of their own to refuse)
_EDGE_EXEMPT = {
    "SparseRuns": "record returned by sparse_draws",
    "OutputLaw": "record returned by postprocess_laplace",
    "LossDistribution": "record returned by privacy_loss_distribution (its methods have rows)",
    "ClippedMeanError": "record returned by clipped_mean_error",
    "DPSGDResult": "record returned by dp_sgd (its epsilon property has rows)",
}


# ------------------------------------------------------------------
# The parameter checks declared with ``@checked`` (dpteach/_support/validate.py).
#
# Every public lesson function that declares its checks stores them as ``__checks__``; the
# bad-input rows here are generated from those stored constraints and the one table of bad
# values by kind (tests/_bad_values.py, :func:`bad_values_for`): every bad value of every
# declared parameter must be refused with ValueError or TypeError naming the parameter,
# before a random number is drawn. The decorator must also keep what a reader and the tools
# see of the function: its name, docstring, signature and source.


def _declared():
    """Every public callable of the lesson modules that declares its checks, and the
    methods of their public classes that do: {qualified name: function}."""
    found = {}
    for _, _, obj in public_names():
        members = vars(obj).items() if inspect.isclass(obj) else [(None, obj)]
        for attr, fn in members:
            if callable(fn) and hasattr(fn, "__checks__"):
                label = f"{fn.__module__}.{fn.__qualname__}"
                found.setdefault(label, fn)
    return found


DECLARED = _declared()

_LAPLACE_LOSS = tradeoff.privacy_loss_distribution("laplace", epsilon=1.0)

#: calls that work, where the declared kinds alone cannot make one (a module's own
#: validator, arguments that must agree with each other, a method): the callable and
#: its keyword arguments; every other function is called with GOOD values by kind
CALLS = {
    "dpteach.mechanisms.clamped_sum": (None, dict(values=[1.0, 7.0, 30.0], lower=0.0,
                                                  upper=10.0, epsilon=0.5, size=3)),
    "dpteach.mechanisms.sigma_curves": (None, dict(epsilons=[0.5, 1.0], l2_sensitivity=1.0,
                                                   delta=1e-5)),
    "dpteach.mechanisms.exponential_mechanism": (None, dict(candidates=["a", "b"],
                                                            scores=[1.0, 2.0], sensitivity=1.0,
                                                            epsilon=0.5, size=4)),
    "dpteach.tradeoff.tradeoff_curve": (None, dict(alpha=0.1, epsilon=1.0)),
    "dpteach.tradeoff.gaussian_tradeoff": (None, dict(alpha=0.1, mu=1.0)),
    "dpteach.tradeoff.laplace_tradeoff": (None, dict(alpha=0.1, epsilon=1.0)),
    "dpteach.tradeoff.gdp_delta": (None, dict(epsilon=1.0, mu=1.0)),
    "dpteach.tradeoff.gdp_compose": (None, dict(mus=[0.5, 1.0])),
    "dpteach.tradeoff.privacy_loss_distribution": (None, dict(mechanism="laplace",
                                                              epsilon=1.0)),
    "dpteach.tradeoff.membership_attack": (None, dict(epsilon=1.0, n_trials=10)),
    "dpteach.tradeoff.outside_region": (None, dict(alpha=[0.1], beta=[0.5], n_out=100,
                                                   n_in=100, epsilon=1.0)),
    "dpteach.sparse_vector.above_threshold": (None, dict(query_answers=[1.0, 5.0, 2.0],
                                                         threshold=4.0, epsilon=1.0)),
    "dpteach.sparse_vector.sparse": (None, dict(query_answers=[1.0, 5.0, 2.0], threshold=4.0,
                                                epsilon=1.0, c=2)),
    "dpteach.sparse_vector.numeric_sparse": (None, dict(query_answers=[1.0, 5.0, 2.0],
                                                        threshold=4.0, epsilon=1.0, c=2)),
    "dpteach.sparse_vector.noisy_top_c": (None, dict(query_answers=[1.0, 5.0, 2.0],
                                                     epsilon=1.0, c=2)),
    "dpteach.beyond_global.ptr_median": (None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0],
                                                    lower=0.0, upper=10.0, epsilon=1.0,
                                                    delta=1e-5, proposed_bound=1.0)),
    "dpteach.clipping.quantile_interval_probabilities": (None, dict(values=[1.0, 7.0, 30.0],
                                                                     quantile=0.5, lower=0.0,
                                                                     upper=10.0, epsilon=1.0)),
    "dpteach.local.randomizers.k_randomized_response": (None, dict(values=[0, 1, 2], k=3, epsilon=1.0)),
    "dpteach.local.randomizers.unary_encoding": (None, dict(values=[0, 1, 2], k=3, epsilon=1.0)),
    "dpteach.local.hashing.olh_estimate": (None, dict(values=[0, 1, 2], k=3, epsilon=1.0)),
    "dpteach.sgd.clip_gradients": (None, dict(per_example_grads=[[3.0, 4.0], [0.1, 0.2]],
                                              clip=1.0)),
    "dpteach.attacks.reconstruction.lp_decode": (None, dict(queries=[[1, 0], [0, 1], [1, 1]],
                                                            answers=[1.0, 0.0, 1.0])),
    "dpteach.tradeoff.LossDistribution.tail": (_LAPLACE_LOSS.tail, dict(epsilon=0.5)),
    "dpteach.tradeoff.LossDistribution.delta": (_LAPLACE_LOSS.delta, dict(epsilon=0.5)),
    "dpteach.tradeoff.LossDistribution.epsilon": (_LAPLACE_LOSS.epsilon, dict(delta=0.01)),
}

# good calls of lessons of part I: sensitivity, exponential, properties, definition, discrete, curator, bounds
CALLS.update({
    "dpteach.sensitivity.all_datasets": (None, dict(universe=[0, 1, 2], size=2)),
    "dpteach.sensitivity.global_sensitivity": (None, dict(query=_sum, universe=[0, 1, 2], size=2)),
    "dpteach.sensitivity.local_sensitivity": (None, dict(query=_sum, dataset=[0, 1],
                                                         universe=[0, 1, 2])),
    "dpteach.sensitivity.histogram": (None, dict(records=[0, 1, 1], universe=[0, 1, 2])),
    "dpteach.sensitivity.l1_distance": (None, dict(x=[0.0, 1.0], y=[1.0, 1.0])),
    "dpteach.sensitivity.l2_distance": (None, dict(x=[0.0, 1.0], y=[1.0, 1.0])),
    "dpteach.sensitivity.are_neighbours": (None, dict(x=[1.0, 1.0], y=[1.0, 2.0])),
    "dpteach.exponential.log_ratio": (None, dict(scores=[1.0, 2.0], neighbour_scores=[2.0, 1.0],
                                                 sensitivity=1.0, epsilon=0.5)),
    "dpteach.exponential.utility_tail": (None, dict(scores=[1.0, 2.0], sensitivity=1.0,
                                                    epsilon=0.5, t_grid=[0.5, 1.0],
                                                    n_draws=100)),
    "dpteach.exponential.posted_price_revenue": (None, dict(valuations=[1.0, 2.5],
                                                            prices=[1.0, 2.0])),
    "dpteach.exponential.apple_outputs": (None, dict(epsilon=0.5, prices=[0.5, 1.0, 2.0])),
    "dpteach.properties.gaussian_group_delta": (None, dict(epsilon=0.5, delta=1e-5, k=3)),
    "dpteach.properties.parallel_composition": (None, dict(epsilons=[0.5, 1.0],
                                                           deltas=[0.0, 1e-5])),
    "dpteach.properties.postprocess_laplace": (None, dict(value=0.0, scale=1.0, f="clamp")),
    "dpteach.properties.max_log_ratio": (None, dict(value1=0.0, value2=1.0, scale=1.0,
                                                    f="clamp")),
    "dpteach.properties.group_curves": (None, dict(epsilon=0.5, delta=1e-5, ks=[1, 2])),
    "dpteach.definition.randomized_response_standard_error": (None, dict(pi=0.3, n=100,
                                                                         epsilon=1.0)),
    "dpteach.definition.posterior_bounds": (None, dict(prior=0.3, epsilon=1.0)),
    "dpteach.definition.blip_distributions": (None, dict(epsilon=1.0, delta=0.01)),
    "dpteach.definition.hockey_stick_divergence": (None, dict(p=[0.5, 0.5], q=[0.4, 0.6],
                                                              epsilon=0.1)),
    "dpteach.definition.privacy_loss_between": (None, dict(p=[0.5, 0.5], q=[0.4, 0.6])),
    "dpteach.definition.max_probability_ratio": (None, dict(p=[0.5, 0.5], q=[0.4, 0.6])),
    "dpteach.discrete.epsilon_as_fraction": (None, dict(epsilon=0.5)),
    "dpteach.discrete.discrete_laplace_noise": (None, dict(sensitivity=1, epsilon=0.5, size=3)),
    "dpteach.discrete.discrete_laplace_mechanism": (None, dict(value=5, sensitivity=1,
                                                               epsilon=0.5, size=3)),
    "dpteach.discrete.discrete_gaussian_noise": (None, dict(sigma=1.5, size=3)),
    "dpteach.discrete.discrete_gaussian_mechanism": (None, dict(value=5, sigma=1.5, size=3)),
    "dpteach.curator.Curator.count": (dp.Curator(TABLE, 100.0, rng=0).count, dict(epsilon=0.5)),
    "dpteach.curator.Curator.sum": (dp.Curator(TABLE, 100.0, rng=0).sum,
                                    dict(column="x", lower=0.0, upper=5.0, epsilon=0.5)),
    "dpteach.curator.Curator.mean": (dp.Curator(TABLE, 100.0, rng=0).mean,
                                     dict(column="x", lower=0.0, upper=5.0, epsilon=0.5)),
    "dpteach.curator.Curator.histogram": (dp.Curator(TABLE, 100.0, rng=0).histogram,
                                          dict(column="disease", categories=["flu", "cold"],
                                               epsilon=0.5)),
    "dpteach.bounds.laplace_tail": (None, dict(scale=1.0, t=[0.5, 1.0])),
})
#
#
#

# good calls of sparse_vector, synthetic, comparison
CALLS.update({
    "dpteach.sparse_vector.sparse_draws": (None, dict(query_answers=[1.0, 5.0, 2.0],
                                                      threshold=4.0, epsilon=1.0, c=2, size=3)),
    "dpteach.sparse_vector.sparse_run_error": (None, dict(query_answers=[1.0, 5.0, 2.0],
                                                          threshold=4.0,
                                                          answered=[False, True, False], c=1)),
    "dpteach.sparse_vector.sparse_accuracy_bound": (None, dict(k=10, epsilon=1.0, beta=0.05,
                                                               c=2)),
    "dpteach.sparse_vector.above_threshold_draws": (None, dict(query_answers=[1.0, 5.0, 2.0],
                                                               threshold=4.0, epsilon=1.0,
                                                               size=3)),
    "dpteach.sparse_vector.above_threshold_probabilities": (None, dict(
        query_answers=[1.0, 5.0, 2.0], threshold=4.0, epsilon=1.0)),
    "dpteach.sparse_vector.variant_mechanism": (None, dict(name="no_stop", threshold=4.0,
                                                           epsilon=1.0)),
    "dpteach.sparse_vector.variant_probabilities": (None, dict(
        name="fresh_threshold_noise", query_answers=[1.0, 5.0, 2.0], threshold=4.0,
        epsilon=1.0)),
    "dpteach.sparse_vector.no_stop_pattern_probability": (None, dict(
        query_answers=[1.0, 5.0, 2.0], pattern=[False, True, False], threshold=4.0,
        epsilon=1.0)),
    "dpteach.sparse_vector.run_error": (None, dict(query_answers=[1.0, 5.0, 2.0], threshold=4.0,
                                                   index=1)),
    "dpteach.synthetic.range_queries": (None, dict(domain_size=4)),
    "dpteach.synthetic.marginal_queries": (None, dict(shape=(2, 3), order=2)),
    "dpteach.synthetic.workload_error": (None, dict(histogram=[1.0, 2.0], synthetic=[1.5, 1.5],
                                                    queries=[[1, 0], [1, 1]])),
    "dpteach.synthetic.marginals_scale": (None, dict(n_marginals=2, epsilon=0.5,
                                                     neighbours="add_remove")),
    "dpteach.synthetic.noisy_histogram": (None, dict(histogram=[3.0, 1.0, 0.0], epsilon=0.5)),
    "dpteach.synthetic.noisy_marginals": (None, dict(table=[[3.0, 1.0], [0.0, 2.0]],
                                                     epsilon=0.5)),
    "dpteach.synthetic.independent_marginals": (None, dict(table=[[3.0, 1.0], [0.0, 2.0]],
                                                           epsilon=0.5)),
    "dpteach.synthetic.sample_records": (None, dict(synthetic=[[3.0, 1.0], [0.0, 2.0]],
                                                    n_records=5)),
    "dpteach.synthetic.mwem_selection_probabilities": (None, dict(
        histogram=[3.0, 1.0], synthetic=[2.0, 2.0], queries=[[1, 0], [1, 1]],
        epsilon_round=0.5)),
    "dpteach.synthetic.multiplicative_weights_update": (None, dict(
        synthetic=[2.0, 2.0], query=[1, 0], measurement=3.0, total=4.0)),
    "dpteach.synthetic.mwem_rounds": (None, dict(histogram=[3.0, 1.0], queries=[[1, 0], [1, 1]],
                                                 epsilon=1.0, iterations=2)),
    "dpteach.synthetic.mwem": (None, dict(histogram=[3.0, 1.0], queries=[[1, 0], [1, 1]],
                                          epsilon=1.0, iterations=2, release="average")),
    "dpteach.synthetic.mwem_error_bound": (None, dict(n=1000.0, domain_size=16, n_queries=10,
                                                      epsilon=1.0, iterations=[1, 4])),
    "dpteach.comparison.noise_std": (None, dict(mechanism="Laplace", epsilon=0.5,
                                                l1_sensitivity=1.0, l2_sensitivity=1.0)),
    "dpteach.comparison.choose_mechanism": (None, dict(output="numeric", epsilon=0.5,
                                                       delta=1e-5, l1_sensitivity=1.0,
                                                       l2_sensitivity=1.0)),
    "dpteach.comparison.count_release_errors": (None, dict(epsilon=0.5, count=5, n_max=10)),
    "dpteach.comparison.count_release_error_curves": (None, dict(epsilons=[0.5, 1.0], count=5,
                                                                 n_max=10)),
    "dpteach.comparison.queries_noise": (None, dict(k=[1, 50], epsilon=0.5, delta=1e-5)),
})
#
#
#

# good calls of dpteach/attacks/ and anonymity
CALLS.update({
    "dpteach.attacks.differencing.difference_of_means": (None, dict(mean_all=2.0, n_all=4,
                                                                    mean_rest=1.5, n_rest=3)),
    "dpteach.attacks.averaging.averaging_attack": (None, dict(release=lambda: 1.0, k=3)),
    "dpteach.attacks.averaging.collect_releases": (None, dict(release=lambda: 1.0, k=3)),
    "dpteach.attacks.averaging.averaging_error": (None, dict(scale=1.0, k=3)),
    "dpteach.attacks.averaging.NaiveNoisyServer.count": (
        averaging.NaiveNoisyServer(TABLE, 1.0).count, dict(where=lambda t: t["x"] > 1.0)),
    "dpteach.attacks.averaging.CachingNoisyServer.count": (
        averaging.CachingNoisyServer(TABLE, 1.0).count, dict(expression="x > 1")),
    "dpteach.attacks.averaging.equivalent_phrasings": (None, dict(column="age", threshold=30,
                                                                  k=3)),
    "dpteach.attacks.query_auditing.max_query": (None, dict(table=TABLE, column="x")),
    "dpteach.attacks.query_auditing.refusal_attack": (None, dict(
        auditor=query_auditing.MaxAuditor(TABLE, "x"), group=lambda t: t["x"] > 0.0,
        target=lambda t: t["x"] == 4.0)),
    "dpteach.attacks.floating_point.rule_out_fractions": (None, dict(values=[0.0],
                                                                     epsilons=[1.0],
                                                                     n_outputs=5)),
    "dpteach.attacks.reconstruction.answer_queries": (None, dict(queries=[[1, 0], [1, 1]],
                                                                 secret=[0, 1])),
    "dpteach.attacks.reconstruction.noisy_answers": (None, dict(queries=[[1, 0], [1, 1]],
                                                                secret=[0, 1], scale=1.0)),
    "dpteach.attacks.reconstruction.reconstruct_lsq": (None, dict(queries=[[1, 0], [1, 1]],
                                                                  answers=[0.0, 1.0])),
    "dpteach.attacks.reconstruction.textbook_lp": (None, dict(queries=[[1, 0], [1, 1]],
                                                              answers=[0.0, 1.0])),
    "dpteach.attacks.reconstruction.subset_sums": (None, dict(secret=[0, 1])),
    "dpteach.attacks.reconstruction.bounded_noise_answers": (None, dict(secret=[0, 1],
                                                                        noise_bound=1.0)),
    "dpteach.attacks.reconstruction.consistent_candidates": (None, dict(
        subset_answers=[0.0, 1.0, 0.0, 1.0], noise_bound=0.5)),
    "dpteach.attacks.reconstruction.reconstruct_exhaustive": (None, dict(
        subset_answers=[0.0, 1.0, 0.0, 1.0], noise_bound=0.5)),
    "dpteach.attacks.reconstruction.phase_transition": (None, dict(ns=[8], ratios=[1.0],
                                                                   trials=1)),
    "dpteach.attacks.reconstruction.exhaustive_sweep": (None, dict(n=6, grid=[0.0, 1.0])),
    "dpteach.attacks.reconstruction.dp_defence_sweep": (None, dict(n=8, m=16, trials=1,
                                                                   prevalence=0.5,
                                                                   log_epsilons=[0.0])),
    "dpteach.attacks.anonymity_attacks.linkage_attack": (None, dict(
        released=TABLE, public=TABLE[["zip", "age"]], quasi_identifiers=["zip", "age"],
        sensitive="disease")),
    "dpteach.attacks.anonymity_attacks.background_knowledge_attack": (None, dict(
        table=TABLE, quasi_identifiers=["zip"], sensitive="disease", target={"zip": "13053"},
        knowledge=["cold"])),
    "dpteach.attacks.anonymity_attacks.similarity_attack": (None, dict(
        table=TABLE, quasi_identifiers=["zip"], sensitive="disease",
        categories={"flu": "respiratory", "cold": "respiratory", "cancer": "cancer"})),
    "dpteach.anonymity.l_diversity": (None, dict(table=TABLE, quasi_identifiers=["zip"],
                                                 sensitive="disease", kind="recursive", c=2.0)),
    "dpteach.anonymity.t_closeness": (None, dict(table=TABLE, quasi_identifiers=["zip"],
                                                 sensitive="disease")),
    "dpteach.anonymity.class_report": (None, dict(table=TABLE, quasi_identifiers=["zip"],
                                                  sensitive="disease")),
    "dpteach.anonymity.emd": (None, dict(p=[0.5, 0.5], q=[0.4, 0.6])),
    "dpteach.anonymity.mask_zip": (None, dict(values=["13053", "14850"], keep=3)),
    "dpteach.anonymity.bucket_ages": (None, dict(values=[21, 35], width=10)),
    "dpteach.anonymity.suppress_column": (None, dict(table=TABLE, column="zip")),
    "dpteach.anonymity.suppress_rows": (None, dict(table=TABLE, rows=[0])),
    "dpteach.anonymity.suppress_small_classes": (None, dict(table=TABLE,
                                                            quasi_identifiers=["zip"], k=2)),
    "dpteach.anonymity.generalize": (None, dict(table=TABLE, rules={"zip": ("mask", 3)})),
})
#
#
#

# good calls of accounting, rdp, pld, clipping, sgd, beyond_global, datasets
CALLS.update({
    "dpteach.accounting.basic_composition": (None, dict(epsilons=[0.5, 1.0], deltas=[0.0, 1e-5])),
    "dpteach.accounting.split_budget": (None, dict(epsilon=1.0, weights=[1.0, 2.0])),
    "dpteach.accounting.PrivacyAccountant.can_spend": (accounting.PrivacyAccountant(10.0).can_spend,
                                                       dict(epsilon=0.1, delta=0.0)),
    "dpteach.accounting.PrivacyAccountant.spend": (accounting.PrivacyAccountant(10.0).spend,
                                                   dict(epsilon=0.1, delta=0.0)),
    "dpteach.accounting.ExactGaussianAccountant.compose_gaussian": (
        accounting.ExactGaussianAccountant().compose_gaussian, dict(sigma=1.0, q=1.0, steps=2)),
    "dpteach.accounting.ExactGaussianAccountant.epsilon": (
        accounting.ExactGaussianAccountant().compose_gaussian(1.0).epsilon, dict(delta=1e-5)),
    "dpteach.accounting.ExactGaussianAccountant.delta": (
        accounting.ExactGaussianAccountant().compose_gaussian(1.0).delta, dict(epsilon=1.0)),
    "dpteach.rdp.gaussian_rdp": (None, dict(order=[2.0, 3.0], sigma=1.0, l2_sensitivity=1.0)),
    "dpteach.rdp.rdp_to_dp_order": (None, dict(orders=[2.0, 3.0], rdp=[0.1, 0.2], delta=1e-5,
                                               method="improved")),
    "dpteach.rdp.zcdp_to_dp": (None, dict(rho=0.1, delta=1e-5, method="improved")),
    "dpteach.rdp.subsampled_gaussian_rdp": (None, dict(q=0.1, sigma=1.0, orders=[2.0, 3.0])),
    "dpteach.rdp.composition_epsilons": (None, dict(sigma=1.0, delta=1e-5, ks=[1, 10],
                                                    l2_sensitivity=1.0, orders=[2.0, 3.0])),
    "dpteach.rdp.RDPAccountant.compose_gaussian": (
        __import__("dpteach").RDPAccountant().compose_gaussian, dict(sigma=1.0, q=0.1, steps=2)),
    "dpteach.rdp.RDPAccountant.delta": (
        __import__("dpteach").RDPAccountant().compose_gaussian(1.0).delta,
        dict(epsilon=1.0, method="improved")),
    "dpteach.pld.PLDAccountant.compose_gaussian": (pld.PLDAccountant(interval=1e-2).compose_gaussian,
                                                   dict(sigma=1.0, q=0.1, steps=2)),
    "dpteach.pld.PLDAccountant.delta": (
        pld.PLDAccountant(interval=1e-2).compose_gaussian(1.0).delta, dict(epsilon=1.0)),
    "dpteach.pld.PLDAccountant.epsilon": (
        pld.PLDAccountant(interval=1e-2).compose_gaussian(1.0).epsilon, dict(delta=1e-5)),
    "dpteach.clipping.clipped_mean_noise_scales": (None, dict(lower=0.0, upper=10.0, epsilon=1.0)),
    "dpteach.clipping.noisy_sum_and_count": (None, dict(values=[1.0, 7.0, 30.0], lower=0.0,
                                                        upper=10.0, epsilon=1.0, size=3)),
    "dpteach.clipping.clipped_mean_ratio": (None, dict(noisy_sum=12.0, noisy_count=3.0, lower=0.0,
                                                       upper=10.0)),
    "dpteach.clipping.clipped_mean_releases": (None, dict(values=[1.0, 7.0, 30.0], lower=0.0,
                                                          upper=10.0, epsilon=1.0,
                                                          unit_noise=[[0.1, -0.5], [0.3, 1.0]])),
    "dpteach.clipping.centred_clipped_mean": (None, dict(values=[1.0, 7.0, 30.0], lower=0.0,
                                                         upper=10.0, epsilon=1.0, size=3)),
    "dpteach.clipping.known_n_mean": (None, dict(values=[1.0, 7.0, 30.0], lower=0.0, upper=10.0,
                                                 epsilon=1.0, size=3)),
    "dpteach.clipping.clipped_mean_error": (None, dict(values=[1.0, 7.0, 30.0], lower=0.0,
                                                       upper=10.0, epsilon=1.0)),
    "dpteach.clipping.private_quantile": (None, dict(values=[1.0, 7.0, 30.0], quantile=0.5,
                                                     lower=0.0, upper=10.0, epsilon=1.0, size=3)),
    "dpteach.sgd.predict": (None, dict(w=[1.0, -1.0], X=[[1.0, 2.0], [3.0, 1.0]])),
    "dpteach.sgd.noisy_gradient_sum": (None, dict(per_example_grads=[[3.0, 4.0], [0.1, 0.2]],
                                                  clip=1.0, noise_multiplier=1.0)),
    "dpteach.sgd.membership_inference": (None, dict(member_losses=[0.1, 0.2],
                                                    nonmember_losses=[0.5, 0.3],
                                                    thresholds=[0.15, 0.4])),
    "dpteach.sgd.make_overfit_data": (None, dict(n_train=10, n_test=10, d=20)),
    "dpteach.beyond_global.median_sensitivity_window": (
        None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0], lower=0.0, upper=10.0, distance=1)),
    "dpteach.beyond_global.smooth_sensitivity_median": (
        None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0], lower=0.0, upper=10.0, beta=0.1)),
    "dpteach.beyond_global.distance_to_instability": (
        None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0], lower=0.0, upper=10.0, bound=1.0)),
    "dpteach.beyond_global.ptr_pass_probability": (None, dict(distance=[0.0, 3.0], epsilon=1.0,
                                                              delta=1e-5)),
    "dpteach.beyond_global.ptr_answer_probability": (
        None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0], lower=0.0, upper=10.0, epsilon=1.0,
                   delta=1e-5, proposed_bound=1.0)),
    "dpteach.beyond_global.smooth_median": (
        None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0], lower=0.0, upper=10.0, epsilon=1.0, delta=1e-5,
                   size=3)),
    "dpteach.beyond_global.sample_and_aggregate": (
        None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0], lower=0.0, upper=10.0, statistic=np.mean,
                   epsilon=1.0, blocks=2)),
    "dpteach.beyond_global.distance_to_instability_mean": (
        None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0], lower=0.0, upper=10.0, bound=1.0)),
    "dpteach.beyond_global.ptr_mean": (
        None, dict(values=[1.0, 2.0, 3.0, 5.0, 5.0], lower=0.0, upper=10.0, epsilon=1.0, delta=1e-5,
                   proposed_bound=1.0, size=3)),
})
#
#
#

# good calls of dpteach/local/ and dpteach/audit/
CALLS.update({
    "dpteach.local.randomizers.k_randomized_response_keep_probability":
        (None, dict(k=3, epsilon=1.0)),
    "dpteach.local.randomizers.k_randomized_response_probabilities":
        (None, dict(k=3, epsilon=1.0)),
    "dpteach.local.randomizers.k_randomized_response_estimate":
        (None, dict(reports=[0, 1, 2, 1], k=3, epsilon=1.0)),
    "dpteach.local.randomizers.unary_encoding_probabilities": (None, dict(epsilon=1.0)),
    "dpteach.local.randomizers.unary_encoding_estimate":
        (None, dict(reports=[[0, 1], [1, 0], [1, 1]], epsilon=1.0)),
    "dpteach.local.randomizers.unary_encoding_output_probabilities":
        (None, dict(k=3, epsilon=1.0)),
    "dpteach.local.randomizers.local_epsilon":
        (None, dict(probabilities=[[0.75, 0.25], [0.25, 0.75]])),
    "dpteach.local.randomizers.estimate_from_counts":
        (None, dict(counts=[10, 20, 30], n=60, k=3, epsilon=1.0)),
    "dpteach.local.hashing.olh_reports": (None, dict(values=[0, 1, 2], k=3, epsilon=1.0)),
    "dpteach.local.variance.local_variance": (None, dict(n=100, k=3, epsilon=1.0)),
    "dpteach.local.variance.central_variance": (None, dict(n=100, epsilon=1.0)),
    "dpteach.local.variance.k_randomized_response_is_better": (None, dict(k=3, epsilon=1.0)),
    "dpteach.local.simulation.example_frequencies": (None, dict(k=3)),
    "dpteach.local.simulation.true_counts": (None, dict(n=10, frequencies=[0.5, 0.5])),
    "dpteach.local.simulation.report_counts":
        (None, dict(counts=[5, 3, 2], epsilon=1.0, size=2)),
    "dpteach.local.simulation.central_histogram_estimate":
        (None, dict(counts=[5, 3, 2], epsilon=1.0, size=2)),
    "dpteach.local.protocols.protocol_variances": (None, dict(k=[2, 8], epsilon=1.0)),
    "dpteach.local.protocols.k_randomized_response_crossover_k": (None, dict(epsilon=1.0)),
    "dpteach.local.protocols.k_randomized_response_crossover_epsilon": (None, dict(k=30)),
    "dpteach.local.protocols.report_bits": (None, dict(k=8, epsilon=1.0, protocol="olh")),
    "dpteach.audit.bounds.clopper_pearson": (None, dict(count=3, n=10)),
    "dpteach.audit.bounds.epsilon_lower_bound": (None, dict(count_x=3, count_y=1, n=10)),
    "dpteach.audit.bounds.epsilon_point_estimate": (None, dict(count_x=3, count_y=1, n=10)),
    "dpteach.audit.bounds.epsilon_interval": (None, dict(count_x=3, count_y=1, n=10)),
    "dpteach.audit.experiment.audit": (None, dict(mechanism=_laplace_mech, x=0.0, y=1.0,
                                                  n=200)),
    "dpteach.audit.experiment.per_call_mechanism":
        (None, dict(release=mechanisms.laplace_mechanism)),
    "dpteach.audit.zoo.audit_zoo": (None, dict(names=["laplace"], n=400)),
    "dpteach.audit.zoo.audit_convergence_counts":
        (None, dict(names=["laplace"], grid=[50, 100], n_select=50)),
})
#
#
#

#: a good value of each kind, for the functions not in CALLS
GOOD = {v.Real: 0.5, v.Reals: 0.5, v.Probability: 0.5, v.Epsilon: 0.5, v.Delta: 1e-5,
        v.Sensitivity: 1.0, v.PositiveInt: 3, v.NonnegativeInt: 3, v.PositiveInts: 3,
        v.Count: 3, v.Values: [1.0, 2.0], v.Scores: [1.0, 2.0], v.Bits: [0, 1, 1],
        v.Flag: False, v.Rng: 0, v.Size: 2}


def _good_call(label, fn):
    if label in CALLS:
        call, kwargs = CALLS[label]
        return call or fn, dict(kwargs)
    params = inspect.signature(fn).parameters
    return fn, {name: GOOD[type(check)] for name, check in fn.__checks__.items()
                if params[name].default is inspect.Parameter.empty}


def _rows():
    for label, fn in sorted(DECLARED.items()):
        for param, check in fn.__checks__.items():
            yield pytest.param(label, param, bad_values_for(check), id=f"{label}-{param}")


def test_the_lesson_modules_declare_their_checks():
    """The modules below declare the checks of every public function (of the others, the
    functions left undeclared have no check of one parameter: they delegate, or relate
    several arguments); each stored constraint is one of the kinds the bad-value table
    knows."""
    import importlib
    names = ("mechanisms tradeoff exponential properties discrete bounds comparison "
             "sparse_vector synthetic accounting pld attacks.averaging attacks.query_auditing "
             "attacks.floating_point local.randomizers local.hashing local.variance "
             "local.simulation local.protocols audit.bounds audit.experiment audit.zoo")
    for module in (importlib.import_module(f"dpteach.{name}") for name in names.split()):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                assert hasattr(obj, "__checks__"), f"{module.__name__}.{name}"
    for label, fn in DECLARED.items():
        for param, check in fn.__checks__.items():
            assert bad_values_for(check), (label, param, check)
    assert len(DECLARED) >= 250


@pytest.mark.parametrize("label", sorted(DECLARED))
def test_the_good_call_works(label):
    call, kwargs = _good_call(label, DECLARED[label])
    call(**kwargs)


@pytest.mark.parametrize("label,param,bads", list(_rows()))
def test_every_declared_parameter_refuses_its_bad_values(label, param, bads):
    call, good = _good_call(label, DECLARED[label])
    slipped = []
    for bad in bads:
        kwargs = dict(good)
        rng = np.random.default_rng(0)
        if "rng" in inspect.signature(call).parameters and param != "rng":
            kwargs["rng"] = rng
        state = rng.bit_generator.state
        kwargs[param] = bad
        try:
            call(**kwargs)
        except (ValueError, TypeError) as err:
            if param not in str(err):
                slipped.append(f"{bad!r}: the message does not name {param}: {err}")
            elif rng.bit_generator.state != state:
                slipped.append(f"{bad!r}: a random number was drawn before the check")
        else:
            slipped.append(f"{bad!r}: accepted")
    assert not slipped, "\n".join(slipped)


def test_a_constraint_that_lets_bad_values_through_is_caught():
    """The wrong twin: an epsilon declared with a kind that accepts whatever it is given
    leaves the generated bad rows accepted, so the rows test the declaration."""
    class LaxEpsilon(v.Epsilon):
        validator = staticmethod(lambda value, name: value)

    @v.checked(epsilon=LaxEpsilon())
    def scale(epsilon):
        return 1.0 / epsilon if epsilon else 0.0

    accepted = []
    for bad in bad_values_for(scale.__checks__["epsilon"]):
        try:
            scale(epsilon=bad)
        except (ValueError, TypeError, ZeroDivisionError):
            continue
        accepted.append(bad)
    assert len(accepted) >= 5


@pytest.mark.parametrize("label", sorted(DECLARED))
def test_the_decorator_keeps_name_docstring_signature_and_source(label):
    fn = DECLARED[label]
    inner = inspect.unwrap(fn)
    assert inner is not fn and fn.__wrapped__ is inner
    assert (fn.__name__, fn.__qualname__, fn.__doc__, fn.__module__) == \
        (inner.__name__, inner.__qualname__, inner.__doc__, inner.__module__)
    assert inspect.signature(fn) == inspect.signature(inner)
    assert fn.__doc__ and "@checked(" not in fn.__doc__
    source = inspect.getsource(fn)
    assert source.lstrip().startswith("@checked(") and f"def {fn.__name__}(" in source
    assert set(fn.__checks__) <= set(inspect.signature(fn).parameters)


def test_show_source_shows_the_declaration_one_parameter_per_line_at_most():
    shown = notebook.show_source(mechanisms.laplace_mechanism).data
    lines = shown.splitlines()
    assert lines[1].startswith("@checked(value=Values(), sensitivity=Sensitivity()")
    assert "def laplace_mechanism(value, sensitivity, epsilon, *, rng=None, size=None):" in shown
    assert "valid_" not in shown.split('"""')[-1]        # the body is the mathematics
    for label, fn in DECLARED.items():
        source = inspect.getsource(fn)
        declaration = source[:source.index(f"def {fn.__name__}(")]
        assert declaration.count("\n") <= len(fn.__checks__), label


def test_checks_run_in_the_declared_order_on_given_and_default_values():
    seen = []

    class Note(v.Constraint):
        validator = staticmethod(lambda value, name: seen.append(name) or value)

    @v.checked(b=Note(), a=Note(), rng=v.Rng())
    def f(a, b=2, *, rng=None):
        return a, b, rng

    a, b, rng = f(1)
    assert seen == ["b", "a"] and (a, b) == (1, 2)
    assert isinstance(rng, np.random.Generator)           # the default went through Rng
    assert f(1, rng=7)[2].random() == np.random.default_rng(7).random()
    assert f.__checks__["rng"].options == {} and repr(f.__checks__["a"]) == "Note()"


def test_a_call_that_does_not_fit_gets_python_s_own_type_error():
    plain = mechanisms.laplace_mechanism.__wrapped__
    for args, kwargs in [((1.0, 1.0), {}), ((1.0, 1.0, 0.5, 4), {}),
                         ((1.0, 1.0, float("nan")), {"value": 1.0}),
                         ((1.0, 1.0, 0.5), {"seed": 3})]:
        with pytest.raises(TypeError) as wrapped:
            mechanisms.laplace_mechanism(*args, **kwargs)
        with pytest.raises(TypeError) as bare:
            plain(*args, **kwargs)
        assert str(wrapped.value) == str(bare.value)


def test_a_declaration_that_names_no_parameter_or_refuses_its_default_is_refused():
    with pytest.raises(TypeError, match="no parameter 'eps'"):
        v.checked(eps=v.Epsilon())(lambda epsilon: epsilon)
    with pytest.raises(TypeError, match="must be a Constraint"):
        v.checked(epsilon=v.valid_epsilon)(lambda epsilon: epsilon)
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        v.checked(epsilon=v.Epsilon())(lambda epsilon=None: epsilon)


# ------------------------------------------------------------------
# Issue 31: the edges and the fuzz of dpteach.sparse_vector, dpteach.local,
# dpteach.local.protocols and dpteach.pld.
#
# A fuzz over every public function of the four modules (NaN, infinities, 0, negatives, 1e-320,
# 1e308, 10**400, booleans, strings, empty and ragged arrays, huge sizes; each probe in a forked
# child with time and memory limits) found inputs that were silently accepted, that crashed with
# an exception other than ValueError/TypeError, that ran for minutes or that were refused with a
# message not naming the parameter. Each row below is one of them: before the fix it failed;
# now the input is answered finitely and quickly, or refused (ValueError/TypeError) naming the
# parameter before any random number is drawn. The rows follow tests/_bad_values.py's house
# style (``check_row``: the good call works, the bad one is refused by name).


NAN, INF = float("nan"), float("inf")
ANS = [10.0, 30.0, 60.0]
RAGGED = [[1.0, 2.0], [3.0]]


def pld_delta(epsilon=1.0):
    return pld.PLDAccountant(interval=1e-2).compose_gaussian(1.0, q=0.5, steps=3).delta(epsilon)


# ------------------------------------------------------------------ refused by name
_TABLE = [
    # a flag that took any truthy value (NaN, "1", 1j, None) as True or False
    (sv.sparse_scales, dict(epsilon=1.0, c=2), dict(numeric=[NAN, INF, "1", 1j, None, 1, 0.0])),
    (sv.sparse_draws, dict(query_answers=ANS, threshold=40.0, epsilon=1.0, c=2, size=3),
     dict(numeric=[NAN, "1", 1j, None, 1])),
    # c restarts at a tiny epsilon: every scale 4c Δ/ε (9c Δ/ε for values) overflowed to inf
    (sv.sparse, dict(query_answers=np.zeros(1000), threshold=0.0, epsilon=1.0, c=1000),
     dict(epsilon=[5e-305, 1e-306])),
    (sv.numeric_sparse, dict(query_answers=np.zeros(1000), threshold=0.0, epsilon=1.0, c=1000),
     dict(epsilon=[5e-305, 1e-306])),
    (sv.sparse_draws, dict(query_answers=np.zeros(1000), threshold=0.0, epsilon=1.0, c=1000, size=2),
     dict(epsilon=[5e-305])),
    (sv.noisy_top_c, dict(query_answers=np.zeros(1000), epsilon=1.0, c=1000), dict(epsilon=[1e-303])),
    # ragged booleans: numpy's "inhomogeneous shape" message, naming nothing
    (sv.sparse_run_error, dict(query_answers=ANS, threshold=40.0, answered=[False, True, True], c=2),
     dict(answered=[RAGGED, [[True, False], [True]], "abc", [1, 0, 1]])),
    (sv.no_stop_pattern_probability, dict(query_answers=ANS, pattern=[True, False, True],
                                          threshold=40.0, epsilon=1.0),
     dict(pattern=[RAGGED, [[True], [True, False]], "abc", [True, False]])),
    # errors a_i - T beyond the float range: inf
    (sv.run_error, dict(query_answers=[1e308, -1e308], threshold=0.0, index=1), dict(threshold=[-1e308, 1e308])),
    (sv.sparse_run_error, dict(query_answers=[1e308, -1e308], threshold=0.0, answered=[False, True], c=1),
     dict(threshold=[-1e308, 1e308])),
    # exact distributions of long streams (quadrature, k^2 work): minutes at k = 10^5
    (sv.above_threshold_probabilities, dict(query_answers=np.zeros(10), threshold=1.0, epsilon=1.0),
     dict(query_answers=[np.zeros(sv.MAX_EXACT_QUERIES + 1), np.zeros(10**5)])),
    (sv.no_stop_pattern_probability, dict(query_answers=np.zeros(3), pattern=[True, False, True],
                                          threshold=1.0, epsilon=1.0),
     dict(query_answers=[np.zeros(10**5)])),
    (sv.example_answers, dict(k=60), dict(k=[10**7, 10**8])),
    # the accuracy bound's overflow named epsilon only
    (sv.accuracy_bound, dict(k=10, epsilon=1.0, beta=0.05), dict(sensitivity=[1e308])),
    # OLH at n = 10^5, k = 10^6: 10^11 hash evaluations (about 2 hours)
    (local.olh_estimate, dict(values=[0, 1, 3], k=10**6, epsilon=1.0),
     dict(values=[np.zeros(10**5, dtype=int), np.zeros(1000, dtype=int)])),
    (local.olh_estimate, dict(values=np.zeros(10**5, dtype=int), k=4, epsilon=1.0),
     dict(k=[10**6, 2000])),
    # a person's one-hot vector of k bits, for n people: a 93 GiB MemoryError
    (local.unary_encoding, dict(values=np.zeros(10**5, dtype=int), k=4, epsilon=1.0), dict(k=[10**6])),
    (local.k_randomized_response_probabilities, dict(k=4, epsilon=1.0), dict(k=[5000, 10**4])),
    (local.unary_encoding_estimate, dict(reports=[[1, 0], [0, 1]], epsilon=1.0), dict(reports=[RAGGED])),
    # Laplace noise of scale 1e308: counts of -inf
    (local.central_histogram_estimate, dict(counts=[5, 3, 2], epsilon=1.0),
     dict(sensitivity=[1e308, 1e306], epsilon=[1e-306])),
    # (1e100 / 1e-100)^2: OverflowError
    (local.central_variance, dict(n=1, epsilon=1.0, sensitivity=1e100), dict(epsilon=[1e-100, 1e-60])),
    # 10^8 binomial draws: over a minute
    (local.report_counts, dict(counts=np.ones(10**6), epsilon=1.0), dict(size=[100, 10**4])),
    # a Python loop over a million (k, epsilon) points
    (lp.protocol_variances, dict(k=64, epsilon=1.0),
     dict(epsilon=[np.linspace(0.1, 5.0, 10**6)], k=[np.arange(2, 10**6)])),
]


@pytest.mark.parametrize("func, good, param, bad", rows(_TABLE))
def test_fuzz_findings_are_refused_by_name(func, good, param, bad):
    check_row(func, good, param, bad)


# ------------------------------------------------------------------ answered finitely
@pytest.mark.parametrize("call", [
    # OLH at a tiny epsilon: p - q = 0 in floating point, estimates of +-inf
    lambda: local.olh_estimate([0, 1, 3], 4, 1e-20, rng=0),
    # ZeroDivisionError from the same cancellation
    lambda: local.olh_variance(100, 1e-20),
    lambda: local.olh_variance(10**15, 1e-100, g=1e12),
    # OverflowError: cannot convert float infinity to integer
    lambda: pld_delta(1e308),
    lambda: pld.PLDAccountant(interval=1e-4).compose_gaussian(1.0).delta(1e300),
    # 2-D values: "operands could not be broadcast together"
    lambda: local.olh_estimate([[0, 1], [3, 2]], 4, 1.0, rng=0),
], ids=["olh_estimate-1e-20", "olh_variance-1e-20", "olh_variance-g-1e12", "pld-delta-1e308",
        "pld-delta-1e300-fine-grid", "olh_estimate-2d"])
def test_fuzz_findings_are_answered_finitely(call):
    assert is_finite_answer(call())


def test_olh_at_tiny_epsilon_is_unbiased_in_expectation_formula():
    """p - q without cancellation: at epsilon = 1e-20, (g - 1)(e^eps - 1)/(g(e^eps + g - 1))
    = 1e-20 / 4 for g = 2, and the variance n q (1 - q)/(p - q)^2 = n * 4e40."""
    assert local.olh_variance(1, 1e-20) == pytest.approx(0.25 / (1e-20 / 4) ** 2, rel=1e-12)
    est = local.olh_estimate([0, 1, 3], 4, 1e-20, rng=np.random.default_rng(0))
    assert np.isfinite(est).all() and np.abs(est).max() < 1e21


def test_olh_estimate_refuses_the_two_hour_case_at_once_and_stays_fast_below_the_limit():
    values = np.random.default_rng(1).integers(0, 10**6, size=10**5)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="values and k"):
        local.olh_estimate(values, 10**6, 1.0, rng=0)
    assert time.perf_counter() - t0 < 1.0
    # 2 * 10^6 pairs (the issue's 10^11 took about 2 h at the old rate of ~1.3e7 pairs/s)
    t0 = time.perf_counter()
    local.olh_estimate(values[:2000] % 1000, 1000, 1.0, rng=0)
    assert time.perf_counter() - t0 < 2.0


def test_pld_refuses_a_composition_sure_to_outgrow_the_grid_before_convolving():
    """interval 1e-5, σ = 1, q = 1e-3, 10^7 steps needs about 9e6 points: it was refused
    only after seconds of convolutions; the width estimate refuses it at once. Neighbouring
    compositions that fit are still computed (and stay upper bounds: tests/lessons/test_pld.py)."""
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"\bsteps\b"):
        pld.PLDAccountant(interval=1e-5).compose_gaussian(1.0, q=1e-3, steps=10**7)
    assert time.perf_counter() - t0 < 3.0


def test_pld_width_estimate_never_refuses_what_fits():
    """The early refusal allows twice the limit: a composition that fits (about 1e6 points)
    is computed, and agrees with the same composition done in two halves."""
    one = pld.PLDAccountant(interval=1e-3).compose_gaussian(1.0, q=0.01, steps=10**5)
    two = pld.PLDAccountant(interval=1e-3).compose_gaussian(1.0, q=0.01, steps=5 * 10**4) \
        .compose_gaussian(1.0, q=0.01, steps=5 * 10**4)
    assert math.isfinite(one.epsilon(1e-5))
    assert one.epsilon(1e-5) == pytest.approx(two.epsilon(1e-5), abs=0.05)


def test_extreme_epsilons_of_sparse_are_refused_or_finite():
    """The fuzz's extreme values for every real parameter of Sparse, NumericSparse and the
    peeled exponential mechanism: refused by name or finite, never inf or NaN."""
    calls = {
        "epsilon": lambda v: sv.numeric_sparse(np.zeros(50), 0.0, v, 50, rng=0),
        "sensitivity": lambda v: sv.numeric_sparse(np.zeros(50), 0.0, 1.0, 50, sensitivity=v, rng=0),
        "threshold": lambda v: sv.numeric_sparse(np.zeros(50), v, 1.0, 50, rng=0),
    }
    for name, call in calls.items():
        for v in (1e-320, 1e-300, 1e-250, 1e250, 1e308, 10**400, -1e308):  # noqa: F402
            try:
                out = call(v)
            except (ValueError, TypeError) as err:
                assert name in str(err), (name, v, err)
            else:
                assert is_finite_answer(out), (name, v, out)
