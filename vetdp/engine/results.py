"""A verdict is a value: every check returns a :class:`CheckResult`.

The terminal table, JSON, JUnit and Markdown reports are renderings of these values
(:mod:`vetdp.engine.report`).
"""

from __future__ import annotations

import dataclasses
import enum
import math
from fractions import Fraction
from typing import Any

__all__ = ["Status", "CheckResult", "exact_text"]

_DECIMAL_BITS = 13_000  # about 3900 decimal digits: below Python's 4300-digit limit on int-to-str conversion


def exact_text(q: Fraction) -> str:
    """``q`` exactly, as ``str(q)`` prints it (``n/d``, or ``n`` for an integer) while the parts have at most about
    3900 digits; past that in hexadecimal (``0x…/0x…``: a product of many subnormal probabilities), which Python
    refuses to print in decimal."""
    n, d = q.numerator, q.denominator
    if max(abs(n).bit_length(), d.bit_length()) <= _DECIMAL_BITS:
        return str(q)  # "n/d", or "n" for an integer, as str(Fraction) prints it
    return hex(n) if d == 1 else f"{hex(n)}/{hex(d)}"


class Status(enum.StrEnum):
    """Only PASS counts as a pass."""

    PASS = "pass"
    FAIL = "fail"  # a violation: the claim is wrong, a precondition is not enforced, ...
    UNDECIDED = "undecided"  # not decided within a work budget (precision, paths, choices), said which
    SKIPPED = "skipped"  # not applicable here (e.g. an optional extra is not installed)
    WARNING = "warning"  # sound but worth a look (e.g. a loose map when vetting others' code); not a failure
    ERROR = "error"  # the check itself could not run
    # the wall-clock safety limit (--time-limit) ended the check before its work budget did: no verdict, and the
    # command exits 2 (a verdict never depends on how fast the machine is; only this status does)
    STOPPED = "stopped"

    @property
    def is_failure(self) -> bool:
        return self in (Status.FAIL, Status.UNDECIDED, Status.ERROR, Status.STOPPED)


def _jsonable(x: Any) -> Any:
    if isinstance(x, Fraction):
        return {"fraction": exact_text(x), "approx": float(x)}
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return repr(x)


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """One check of one clause on one subject.

    ``spec``: which spec/subsystem (e.g. ``randomized_response``); ``check``: which clause
    (e.g. ``privacy.sound``); ``subject``: the parameters checked, as text; ``claimed``:
    the float the code claims (e.g. map(1)); ``true``: the true value (float
    approximation of the exact/enclosed truth); ``slack``: claimed − true; ``witness``:
    inputs/outputs that show a failure; ``repro``: a runnable reproduction.
    """

    spec: str
    check: str
    status: Status
    subject: str = ""
    claimed: float | None = None
    true: float | None = None
    slack: float | None = None
    witness: dict | None = None
    repro: str | None = None
    message: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    def to_json(self) -> dict:
        d = {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}
        d["status"] = self.status.value
        return d
