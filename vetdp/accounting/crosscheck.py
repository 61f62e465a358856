"""Cross-checks of other accountants against our exact numbers: a thin library view of ``vetdp vet accountant``.

For RR, categorical RR, RAPPOR or k-RAPPOR (an :class:`~vetdp.accounting.curves.RRFamily`
built from ε) composed n times, every entry point of a library's adapter
(:mod:`vetdp.accounting.accountants`) is asked ε at δ and judged against the certified exact
PLD bracket by :func:`vetdp.accounting.battery.judge`. ``finding`` is empty when the answer is
sound and within ``tight`` of the exact ε; otherwise it carries the battery's status and
message ("violation: ..." when the library claims more privacy than the mechanism has).
The command line runs the whole battery: ``vetdp vet accountant dp_accounting``.
"""

from __future__ import annotations

import dataclasses
import math

from vetdp.accounting.accountants import RREvent, load_accountant
from vetdp.accounting.battery import run_battery
from vetdp.accounting.curves import RRFamily

__all__ = ["CrossCheck", "event_for_family", "library_rows", "dp_accounting_rows", "autodp_rows", "crosscheck"]


@dataclasses.dataclass(frozen=True)
class CrossCheck:
    library: str
    entry_point: str
    event: str
    ours: float  # our certified exact ε (upper end)
    ours_lower: float
    theirs: float | None
    status: str  # "ok", "loose", "violation" or "error"
    finding: str  # "" when ok
    repro: str

    @property
    def ok(self) -> bool:
        return not self.finding


def event_for_family(family: RRFamily, n: int) -> RREvent:
    """The :class:`RREvent` of ``n`` runs of ``family`` (a family built from ε by randomized_response_curve or
    rappor_curve); a family built from a probability has no ε and raises ValueError."""
    if family.epsilon is None:
        raise ValueError(f"family={family.describe()} is built from a probability; the adapters take ε")
    eps = float(family.epsilon)
    if family.coordinates == 1 and family.divisor == 1:
        kind = "rr" if family.categories == 2 else "categorical_rr"
        return RREvent(kind, eps, n, categories=family.categories)
    if family.categories == 2 and family.divisor == family.coordinates and family.coordinates % 2 == 0:
        k = family.coordinates // 2
        return RREvent("rappor" if k == 1 else "k_rappor", eps, n, k=k)
    raise ValueError(f"family={family.describe()} is not RR, categorical RR, RAPPOR or k-RAPPOR built from ε")


def library_rows(library: str, family: RRFamily, n: int, delta: float, tight: float = math.inf) -> list[CrossCheck]:
    """Every entry point of ``library`` (a built-in adapter name) asked ε at ``delta`` for n runs of ``family``."""
    event = event_for_family(family, n)
    result = run_battery(load_accountant(library), [((event,), delta)], tight=tight)
    out = []
    for r in result.rows:
        if r.direction != "epsilon":
            continue
        finding = "" if r.status in ("ok", "translation") else f"{r.status}: {r.message}"
        out.append(CrossCheck(library, r.entry_point, event.describe(), r.exact_upper, r.exact_lower, r.answer,
                              r.status, finding, r.repro))
    return out


def dp_accounting_rows(family: RRFamily, n: int, delta: float) -> list[CrossCheck]:
    """dp_accounting's entry points (soundness only: looseness is not a finding here)."""
    return library_rows("dp_accounting", family, n, delta)


def autodp_rows(family: RRFamily, n: int, delta: float) -> list[CrossCheck]:
    """autodp's entry points (its RR mechanism is binary only; the pure-DP one takes any t)."""
    return library_rows("autodp", family, n, delta)


def crosscheck(family: RRFamily, n: int, delta: float) -> list[CrossCheck]:
    """Every installed library's rows (a library that is not installed is skipped)."""
    from vetdp.accounting.accountants import AccountantLoadError

    rows: list[CrossCheck] = []
    for lib in ("dp_accounting", "autodp", "prv_accountant"):
        try:
            rows.extend(library_rows(lib, family, n, delta))
        except AccountantLoadError:
            continue
    return rows
