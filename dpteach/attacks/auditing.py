"""Moved to :mod:`dpteach.attacks.query_auditing` (query auditing: refusing disclosive
queries; not :mod:`dpteach.audit`, the empirical epsilon audit). This alias is the same
module object and goes away in the next release."""
import sys

from . import query_auditing

sys.modules[__name__] = query_auditing
