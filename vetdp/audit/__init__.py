"""Audits of mechanisms vetdp cannot look inside: black-box lower bounds on ε, and the OpenDP adapter.

* :mod:`vetdp.audit.blackbox` — the statistics (Clopper–Pearson, event selection on a
  separate split, ε lower bounds valid with confidence 1 − β).
* :mod:`vetdp.audit.driver` — samplers and drawing samples in chunks.
* :mod:`vetdp.audit.opaque` — the engine's clauses for opaque constructors (exact truth
  from our implementation, statistical audit of the opaque samples).
* :mod:`vetdp.audit.opendp_adapter` — OpenDP's constructors with our argument conventions
  (needs the ``opendp`` extra).
"""

from vetdp.audit.blackbox import (
    AuditResult,
    Statistic,
    audit_tallies,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
)
from vetdp.audit.driver import as_sampler, run_audit

__all__ = [
    "AuditResult",
    "Statistic",
    "audit_tallies",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "as_sampler",
    "run_audit",
]
