"""Cross-checks of other accountants (dp_accounting, autodp) against our exact numbers.

For RR (and RAPPOR = 2 RR(ε/2) coordinates, k-RAPPOR = 2k) composed n times, every entry
point each library offers for the event is queried for ε at δ and set beside our exact PLD
ε, whose optimum is certified to lie in (ε_lower, ε]. A library's ε below ε_lower claims
more privacy than the mechanism has: a **finding** ("UNSOUND", or "rounding" when it is
below by float error only, at most 1e-12 relative). A PLD-based ε above ours by
more than its documented discretisation (n·interval for the pessimistic PLD, plus 1e-9
relative) is also reported; RDP-based values are only required to be sound.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

from vetdp.accounting.curves import RRFamily
from vetdp.accounting.pld import ExactPLD

__all__ = ["CrossCheck", "dp_accounting_rows", "autodp_rows", "crosscheck"]


@dataclasses.dataclass(frozen=True)
class CrossCheck:
    library: str
    entry_point: str
    event: str
    ours: float  # our certified exact ε (upper end)
    ours_lower: float
    theirs: float
    finding: str  # "" when consistent
    repro: str

    @property
    def ok(self) -> bool:
        return not self.finding


def _rr_noise(family: RRFamily) -> tuple[float, int, float]:
    """(dp_accounting noise parameter, buckets, autodp keep probability) of one coordinate."""
    t, a = family.categories, family.log_ratio
    r = math.exp(-a) / (1 + (t - 1) * math.exp(-a))  # probability of each other bucket
    return t * r, t, 1 - (t - 1) * r


def _judge(theirs: float, exact, slack: float) -> str:
    if not math.isfinite(theirs):
        return f"non-finite ε={theirs!r}"
    if theirs < exact.epsilon_lower:
        if theirs >= exact.epsilon_lower * (1 - 1e-12):
            return f"rounding: ε={theirs!r} is below the exact optimum (> {exact.epsilon_lower!r}) by float error"
        return f"UNSOUND: ε={theirs!r} is below the exact optimum (> {exact.epsilon_lower!r})"
    if slack >= 0 and theirs > exact.epsilon + slack:
        return f"looser than documented: ε={theirs!r} exceeds exact {exact.epsilon!r} by more than {slack:g}"
    return ""


def dp_accounting_rows(family: RRFamily, n: int, delta: float, interval: float = 1e-4) -> list[CrossCheck]:
    """dp_accounting: PLDAccountant (compose with count, SelfComposedDpEvent, repeated compose),
    PrivacyLossDistribution.from_randomized_response().self_compose, RdpAccountant."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant, privacy_loss_distribution
    from dp_accounting.rdp import rdp_privacy_accountant

    noise, buckets, _ = _rr_noise(family)
    steps = n * family.coordinates
    exact = ExactPLD(family, n).epsilon(delta)
    rel = dpa.NeighboringRelation.REPLACE_ONE
    event = dpa.RandomizedResponseDpEvent(noise_parameter=noise, num_buckets=buckets)
    ev_text = f"RandomizedResponseDpEvent(noise_parameter={noise!r}, num_buckets={buckets})"
    head = ("import dp_accounting as dpa; from dp_accounting.pld import pld_privacy_accountant as pa; "
            f"ev = dpa.{ev_text}; ")
    slack = steps * interval + 1e-9 * exact.epsilon
    rows = []

    def add(entry: str, theirs: float, repro: str, pld_based: bool) -> None:
        rows.append(CrossCheck("dp_accounting", entry, f"{ev_text} × {steps}", exact.epsilon, exact.epsilon_lower,
                               theirs, _judge(theirs, exact, slack if pld_based else -1), repro))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = pld_privacy_accountant.PLDAccountant(rel, value_discretization_interval=interval)
        acc.compose(event, steps)
        add("PLDAccountant.compose(event, count)", acc.get_epsilon(delta),
            head + f"a = pa.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE, {interval}); a.compose(ev, {steps}); "
            f"print(a.get_epsilon({delta}))", True)
        acc = pld_privacy_accountant.PLDAccountant(rel, value_discretization_interval=interval)
        acc.compose(dpa.SelfComposedDpEvent(event, steps))
        add("PLDAccountant.compose(SelfComposedDpEvent)", acc.get_epsilon(delta),
            head + f"a = pa.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE, {interval}); "
            f"a.compose(dpa.SelfComposedDpEvent(ev, {steps})); print(a.get_epsilon({delta}))", True)
        if steps <= 2000:
            acc = pld_privacy_accountant.PLDAccountant(rel, value_discretization_interval=interval)
            for _ in range(steps):
                acc.compose(event)
            add("PLDAccountant.compose(event) × count", acc.get_epsilon(delta), "(loop of compose(ev))", True)
        pld = privacy_loss_distribution.from_randomized_response(noise, buckets, value_discretization_interval=interval)
        add("from_randomized_response().self_compose(count)", pld.self_compose(steps).get_epsilon_for_delta(delta),
            f"from dp_accounting.pld import privacy_loss_distribution as P; print(P.from_randomized_response("
            f"{noise!r}, {buckets}, value_discretization_interval={interval}).self_compose({steps})"
            f".get_epsilon_for_delta({delta}))", True)
        acc = rdp_privacy_accountant.RdpAccountant(neighboring_relation=rel)
        acc.compose(event, steps)
        add("RdpAccountant.compose(event, count)", acc.get_epsilon(delta),
            f"from dp_accounting.rdp import rdp_privacy_accountant as ra; import dp_accounting as dpa; "
            f"a = ra.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE); "
            f"a.compose(dpa.{ev_text}, {steps}); print(a.get_epsilon({delta}))", False)
    return rows


def autodp_rows(family: RRFamily, n: int, delta: float) -> list[CrossCheck]:
    """autodp: RandresponseMechanism (binary only) single and Composition([m], [count])."""
    if family.categories != 2:
        return []
    from autodp.mechanism_zoo import RandresponseMechanism
    from autodp.transformer_zoo import Composition

    _, _, keep = _rr_noise(family)
    steps = n * family.coordinates
    exact = ExactPLD(family, n).epsilon(delta)
    mech = RandresponseMechanism(p=keep)
    theirs = float(Composition()([mech], [steps]).get_approxDP(delta))
    repro = ("from autodp.mechanism_zoo import RandresponseMechanism; from autodp.transformer_zoo import "
             f"Composition; print(Composition()([RandresponseMechanism(p={keep!r})], [{steps}]).get_approxDP({delta}))")
    return [CrossCheck("autodp", "Composition([RandresponseMechanism], [count]).get_approxDP",
                       f"RandresponseMechanism(p={keep!r}) × {steps}", exact.epsilon, exact.epsilon_lower, theirs,
                       _judge(theirs, exact, -1), repro)]


def crosscheck(family: RRFamily, n: int, delta: float) -> list[CrossCheck]:
    """Every available library's rows (a library that is not installed is skipped)."""
    rows: list[CrossCheck] = []
    for fn in (dp_accounting_rows, autodp_rows):
        try:
            rows.extend(fn(family, n, delta))
        except ImportError:
            continue
    return rows
