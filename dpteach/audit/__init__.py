"""Empirical privacy auditing: a statistically sound lower bound on epsilon (notebook 11).

A mechanism M is (epsilon, delta)-DP when, for every pair of neighbouring inputs x, y and
every set of outputs E, P[M(x) in E] <= e^epsilon * P[M(y) in E] + delta. Run M many
times on x and on y, count how often E happens, bound the two probabilities with exact
(Clopper-Pearson) confidence limits, and epsilon >= ln((P[M(x) in E] - delta) / P[M(y) in E])
becomes a number below the true epsilon with probability at least 1 - alpha. An audit
can catch a broken mechanism, never certify a correct one.

Three modules, one idea each:

- :mod:`~dpteach.audit.bounds`: the bound from two counts (:func:`clopper_pearson`,
  :func:`epsilon_lower_bound`, :func:`epsilon_point_estimate`, :func:`epsilon_interval`)
- :mod:`~dpteach.audit.experiment`: running the mechanism and choosing the event
  (:func:`audit`, which returns an :class:`AuditResult` whose ``.event`` is an
  :class:`Event`; :func:`per_call_mechanism`)
- :mod:`~dpteach.audit.zoo`: correct and broken mechanisms to audit (:data:`ZOO`,
  :class:`ZooEntry`, :func:`audit_zoo`, :func:`audit_convergence_counts`)

Every name is reached from here: ``dp.audit.audit``, ``dp.audit.ZOO``, ...
"""

from .bounds import clopper_pearson, epsilon_interval, epsilon_lower_bound, epsilon_point_estimate
from .experiment import AuditResult, Event, audit, per_call_mechanism
from .zoo import ZOO, ZooEntry, audit_convergence_counts, audit_zoo

__all__ = [
    "epsilon_lower_bound",
    "epsilon_point_estimate",
    "epsilon_interval",
    "clopper_pearson",
    "audit",
    "Event",
    "AuditResult",
    "per_call_mechanism",
    "ZooEntry",
    "ZOO",
    "audit_zoo",
    "audit_convergence_counts"]
