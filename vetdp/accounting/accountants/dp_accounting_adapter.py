"""dp_accounting (Google) adapter: one entry point per way the library composes randomized response.

Every event becomes ``RandomizedResponseDpEvent(noise_parameter, num_buckets)`` for one
coordinate (RAPPOR: 2k of them per run), with the REPLACE_ONE relation and the default
value discretisation interval 1e-4 (pessimistic). Answers are judged against the exact truth of the float
noise parameter the library received (ratio t/ν − (t − 1) exactly), not of the ε it was computed from. The
entry points:

- ``PLDAccountant.compose(event, count)``
- ``PLDAccountant.compose(SelfComposedDpEvent)``
- ``PLDAccountant.compose(ComposedDpEvent)`` -- one ComposedDpEvent of a SelfComposedDpEvent per part
- ``PLDAccountant.compose(event) loop`` -- one compose per single event (at most 1000 events: time)
- ``from_randomized_response().self_compose`` -- the PLD API, parts joined by ``compose``
- ``RdpAccountant.compose(event, count)``
"""

from __future__ import annotations

import importlib.metadata
import warnings
from collections.abc import Sequence

from vetdp.accounting.accountants.protocol import (
    AccountantSuite,
    FunctionEntryPoint,
    RREvent,
    given_noise_parameter,
    reuse_last,
)

__all__ = ["dp_accounting_suite", "INTERVAL", "LOOP_LIMIT"]

INTERVAL = 1e-4
LOOP_LIMIT = 1000

_HEAD = ("import dp_accounting as dpa\nfrom dp_accounting.pld import pld_privacy_accountant as pa\n"
         "from dp_accounting.pld import privacy_loss_distribution as pld\n"
         "from dp_accounting.rdp import rdp_privacy_accountant as ra\n")


def _given(e: RREvent):
    """What the library is handed for ``e``: the float noise parameter, taken exactly."""
    return given_noise_parameter(e, e.noise_parameter)


def _ev_src(e: RREvent) -> str:
    return f"dpa.RandomizedResponseDpEvent(noise_parameter={e.noise_parameter!r}, num_buckets={e.buckets})"


def _ev(e: RREvent):
    import dp_accounting as dpa

    return dpa.RandomizedResponseDpEvent(noise_parameter=e.noise_parameter, num_buckets=e.buckets)


def _ask(acc, direction: str, target: float) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(acc.get_epsilon(target) if direction == "epsilon" else acc.get_delta(target))


def _query_src(direction: str, target: float, obj: str = "a") -> str:
    return f"print({obj}.get_epsilon({target!r}))" if direction == "epsilon" else f"print({obj}.get_delta({target!r}))"


def _pld_acc():
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    return pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE,
                                                value_discretization_interval=INTERVAL)


_NEW_PLD = f"a = pa.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE, value_discretization_interval={INTERVAL!r})\n"


def _entry(name: str, build, src_lines, supports=None) -> FunctionEntryPoint:
    """An entry point answering both directions from the accountant ``build(events)`` returns (built once for both:
    its queries do not change it)."""
    build = reuse_last(build)

    def eps(events: Sequence[RREvent], delta: float) -> float:
        return _ask(build(events), "epsilon", delta)

    def dlt(events: Sequence[RREvent], epsilon: float) -> float:
        return _ask(build(events), "delta", epsilon)

    def repro(events: Sequence[RREvent], direction: str, target: float) -> str:
        return _HEAD + src_lines(events) + _query_src(direction, target)

    return FunctionEntryPoint(name, eps, dlt, supports, repro, _given)


# ---------------------------------------------------------------- PLDAccountant

def _compose_count(events):
    acc = _pld_acc()
    for e in events:
        acc.compose(_ev(e), e.steps)
    return acc


def _compose_count_src(events):
    return _NEW_PLD + "".join(f"a.compose({_ev_src(e)}, {e.steps})\n" for e in events)


def _self_composed(events):
    import dp_accounting as dpa

    acc = _pld_acc()
    for e in events:
        acc.compose(dpa.SelfComposedDpEvent(_ev(e), e.steps))
    return acc


def _self_composed_src(events):
    return _NEW_PLD + "".join(f"a.compose(dpa.SelfComposedDpEvent({_ev_src(e)}, {e.steps}))\n" for e in events)


def _composed(events):
    import dp_accounting as dpa

    acc = _pld_acc()
    acc.compose(dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(_ev(e), e.steps) for e in events]))
    return acc


def _composed_src(events):
    inner = ", ".join(f"dpa.SelfComposedDpEvent({_ev_src(e)}, {e.steps})" for e in events)
    return _NEW_PLD + f"a.compose(dpa.ComposedDpEvent([{inner}]))\n"


def _loop(events):
    acc = _pld_acc()
    for e in events:
        ev = _ev(e)
        for _ in range(e.steps):
            acc.compose(ev)
    return acc


def _loop_src(events):
    return _NEW_PLD + "".join(f"for _ in range({e.steps}):\n    a.compose({_ev_src(e)})\n" for e in events)


def _loop_supports(events, direction):
    total = sum(e.steps for e in events)
    return None if total <= LOOP_LIMIT else f"{total} single compositions exceed the loop limit {LOOP_LIMIT} (time)"


# ---------------------------------------------------------------- PLD API

class _PldAsAccountant:
    def __init__(self, pld):
        self.pld = pld

    def get_epsilon(self, delta):
        return self.pld.get_epsilon_for_delta(delta)

    def get_delta(self, epsilon):
        return self.pld.get_delta_for_epsilon(epsilon)


def _pld_api(events):
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = None
    for e in events:
        one = pld.from_randomized_response(e.noise_parameter, e.buckets,
                                           value_discretization_interval=INTERVAL).self_compose(e.steps)
        total = one if total is None else total.compose(one)
    return _PldAsAccountant(total)


def _pld_api_src(events):
    parts = [f"pld.from_randomized_response({e.noise_parameter!r}, {e.buckets}, "
             f"value_discretization_interval={INTERVAL!r}).self_compose({e.steps})" for e in events]
    src = f"p = {parts[0]}\n" + "".join(f"p = p.compose({x})\n" for x in parts[1:])
    return src + "class _A:\n    get_epsilon = staticmethod(p.get_epsilon_for_delta)\n" \
                 "    get_delta = staticmethod(p.get_delta_for_epsilon)\na = _A()\n"


# ---------------------------------------------------------------- RdpAccountant

def _rdp(events):
    import dp_accounting as dpa
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = rdp_privacy_accountant.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    for e in events:
        acc.compose(_ev(e), e.steps)
    return acc


def _rdp_src(events):
    return ("a = ra.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)\n"
            + "".join(f"a.compose({_ev_src(e)}, {e.steps})\n" for e in events))


def dp_accounting_suite() -> AccountantSuite:
    """The dp_accounting entry points (ImportError when the ``accounting`` extra is not installed)."""
    import dp_accounting  # noqa: F401 - fail early and clearly when missing

    return AccountantSuite("dp_accounting", importlib.metadata.version("dp-accounting"), [
        _entry("PLDAccountant.compose(event, count)", _compose_count, _compose_count_src),
        _entry("PLDAccountant.compose(SelfComposedDpEvent)", _self_composed, _self_composed_src),
        _entry("PLDAccountant.compose(ComposedDpEvent)", _composed, _composed_src),
        _entry("PLDAccountant.compose(event) loop", _loop, _loop_src, _loop_supports),
        _entry("from_randomized_response().self_compose", _pld_api, _pld_api_src),
        _entry("RdpAccountant.compose(event, count)", _rdp, _rdp_src),
    ])
