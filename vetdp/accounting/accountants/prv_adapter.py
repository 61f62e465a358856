"""prv_accountant adapter: ``PRVAccountant`` over ``PureDPMechanism``, its only mechanism that fits RR.

``PureDPMechanism(a)`` is the privacy random variable of binary randomized response with
log-ratio a, so binary RR and (k-)RAPPOR are expressed exactly (one per coordinate) and
categorical RR is expressed by the binary RR that dominates it (sound, not tight). The
answer taken is the upper bound of ``compute_epsilon``/``compute_delta`` (the library's
guarantee); its estimate is not a bound and is not judged. Accuracy: ``eps_error=0.01``
and ``delta_error`` = δ/1000 (ε at δ) or 1e-15 (δ at ε). Compositions of more than
:data:`STEP_LIMIT` single events are not asked (time), and say so.
"""

from __future__ import annotations

import importlib.metadata
import warnings
from collections.abc import Sequence

from vetdp.accounting.accountants.protocol import AccountantSuite, FunctionEntryPoint, RREvent, given_pure_epsilon

__all__ = ["prv_suite", "EPS_ERROR", "STEP_LIMIT"]

EPS_ERROR = 0.01
_DELTA_ERROR_AT_EPS = 1e-15
STEP_LIMIT = 2_000  # measured: 10^4 compositions take up to 46 s per question and the battery peaked at 7.3 GB


def _supports(events, direction):
    total = sum(e.steps for e in events)
    return None if total <= STEP_LIMIT else f"{total} compositions exceed the step limit {STEP_LIMIT} (time)"


def _accountant(events: Sequence[RREvent], delta_error: float):
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PureDPMechanism

    return PRVAccountant(prvs=[PureDPMechanism(e.step_epsilon) for e in events], eps_error=EPS_ERROR,
                         delta_error=delta_error, max_self_compositions=[e.steps for e in events])


def _eps(events, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(_accountant(events, delta / 1000).compute_epsilon(delta, [e.steps for e in events])[2])


def _delta(events, epsilon):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = _accountant(events, _DELTA_ERROR_AT_EPS)
        return float(acc.compute_delta(epsilon, [e.steps for e in events])[2])


def _repro(events, direction, target):
    steps = [e.steps for e in events]
    prvs = ", ".join(f"PureDPMechanism({e.step_epsilon!r})" for e in events)
    de = target / 1000 if direction == "epsilon" else _DELTA_ERROR_AT_EPS
    call = "compute_epsilon" if direction == "epsilon" else "compute_delta"
    return ("from prv_accountant import PRVAccountant\n"
            "from prv_accountant.privacy_random_variables import PureDPMechanism\n"
            f"a = PRVAccountant(prvs=[{prvs}], eps_error={EPS_ERROR!r}, delta_error={de!r}, "
            f"max_self_compositions={steps!r})\n"
            f"print(a.{call}({target!r}, {steps!r}))  # (lower, estimate, upper): the upper is judged")


def prv_suite() -> AccountantSuite:
    """The prv_accountant entry point (ImportError when prv_accountant is not installed)."""
    import prv_accountant  # noqa: F401

    return AccountantSuite("prv_accountant", importlib.metadata.version("prv-accountant"), [
        FunctionEntryPoint("PRVAccountant(PureDPMechanism).upper", _eps, _delta, _supports, _repro,
                           lambda e: given_pure_epsilon(e, e.step_epsilon)),
    ])
