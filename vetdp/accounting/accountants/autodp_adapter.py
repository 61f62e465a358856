"""autodp adapter: its randomized-response mechanism and its generic pure-DP mechanism, composed.

- ``Composition(RandresponseMechanism)``: ``RandresponseMechanism(p=keep)`` per binary
  coordinate, ``Composition()([m₁, m₂, ...], [steps₁, steps₂, ...])``; ε at δ by
  ``get_approxDP(delta)``, δ at ε by ``get_approx_delta(epsilon)``. autodp has no
  categorical RR: questions with a categorical event are unsupported here.
- ``Composition(PureDP_Mechanism)``: ``PureDP_Mechanism(eps=a)`` per coordinate (any t;
  sound for every ε-DP mechanism, not tight).

Each answer is judged against the exact truth of what autodp was handed: binary RR keeping the
truth with the float p exactly (p = fl(e^a/(1 + e^a)) is not e^a/(1 + e^a), so autodp accounts a
log-ratio a few ulps of p away from a), resp. binary RR of the float a (the worst a-DP pair).
"""

from __future__ import annotations

import importlib.metadata
import warnings
from collections.abc import Sequence

from vetdp.accounting.accountants.protocol import (
    AccountantSuite,
    FunctionEntryPoint,
    RREvent,
    given_keep_probability,
    given_pure_epsilon,
    reuse_last,
)

__all__ = ["autodp_suite"]

_HEAD = ("from autodp.mechanism_zoo import RandresponseMechanism, PureDP_Mechanism\n"
         "from autodp.transformer_zoo import Composition\n")


def _rr_mech(e: RREvent):
    from autodp.mechanism_zoo import RandresponseMechanism

    return RandresponseMechanism(p=e.keep_probability)


def _pure_mech(e: RREvent):
    from autodp.mechanism_zoo import PureDP_Mechanism

    return PureDP_Mechanism(eps=e.step_epsilon)


def _entry(name: str, mech, mech_src, given, supports=None) -> FunctionEntryPoint:
    @reuse_last  # one composition answers both directions (its queries do not change it)
    def build(events: Sequence[RREvent]):
        from autodp.transformer_zoo import Composition

        return Composition()([mech(e) for e in events], [e.steps for e in events])

    def eps(events, delta):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(build(events).get_approxDP(delta))

    def dlt(events, epsilon):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(build(events).get_approx_delta(epsilon))

    def repro(events, direction, target):
        mechs = ", ".join(mech_src(e) for e in events)
        call = f"get_approxDP({target!r})" if direction == "epsilon" else f"get_approx_delta({target!r})"
        return _HEAD + f"print(Composition()([{mechs}], {[e.steps for e in events]!r}).{call})"

    return FunctionEntryPoint(name, eps, dlt, supports, repro, given)


def _binary_only(events, direction):
    bad = [e.describe() for e in events if e.buckets != 2]
    return f"autodp has no categorical randomized response ({', '.join(bad)})" if bad else None


def autodp_suite() -> AccountantSuite:
    """The autodp entry points (ImportError when autodp is not installed)."""
    import autodp  # noqa: F401

    return AccountantSuite("autodp", importlib.metadata.version("autodp"), [
        _entry("Composition(RandresponseMechanism)", _rr_mech,
               lambda e: f"RandresponseMechanism(p={e.keep_probability!r})",
               lambda e: given_keep_probability(e, e.keep_probability), _binary_only),
        _entry("Composition(PureDP_Mechanism)", _pure_mech, lambda e: f"PureDP_Mechanism(eps={e.step_epsilon!r})",
               lambda e: given_pure_epsilon(e, e.step_epsilon)),
    ])
