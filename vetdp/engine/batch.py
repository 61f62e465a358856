"""``function.batch``: a measurement's batch path (``Measurement.batch``) has the law of independent calls.

A mechanism may offer a vectorised path beside its function (``batch(rows)``: one output per row, drawn at once);
production code and ``vetdp audit`` use it. Its law must be that of calling the function on every row
independently: the product of the rows' exact laws. This is decided exactly, as the function's own law is: the
batch is enumerated under the branching source (vetdp's batch samplers draw every cell through the scalar
primitive, so their laws are the same) on a list of two copies of one input (a coin shared by the rows shows there)
and on a list of two different inputs (rows mixed up show there), and its law is compared with the product of the
function's laws, output by output. Lists whose enumeration would exceed :data:`BATCH_PATHS` paths (the product of
the rows' path counts) are not checked at that parameter set, which the finding says.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from vetdp.engine.clauses import Finding, show
from vetdp.engine.enumerate import (
    EnumerationBudgetExceeded,
    Law,
    Raised,
    ReplayMismatch,
    enumerate_law,
    freeze,
    independent_law,
)

__all__ = ["BATCH_PATHS", "batch_finding"]

BATCH_PATHS = 256  # paths of one batch enumeration at most (the product of its rows' path counts)
BATCH_STEPS = 100_000  # random choices one batch enumeration may make in all


def _row_lists(keys: list) -> list[tuple]:
    """Two copies of the first input, and the first with the last (when they differ)."""
    if not keys:
        return []
    lists = [(keys[0], keys[0])]
    if len(keys) > 1 and keys[-1] != keys[0]:
        lists.append((keys[0], keys[-1]))
    return lists


def batch_finding(measurement: Any, laws: Mapping[Any, Law], raw: Mapping[Any, Any],
                  budgets: Mapping[str, int]) -> Finding:
    """``function.batch`` for ``measurement`` from the function's exact ``laws`` (by frozen input; ``raw`` the
    inputs as given; ``budgets`` the run's enumeration budgets, of which only ``max_depth`` bounds this one, below
    :data:`BATCH_PATHS` and :data:`BATCH_STEPS`): pass, fail with the row list and an output whose probabilities
    differ, or skipped (no batch path, or too many paths at this size)."""
    batch: Callable[[Any], Any] | None = getattr(measurement, "batch", None)
    if batch is None:
        return Finding(True, "the measurement has no batch path", skipped=True)
    keys = [k for k in laws if laws[k].complete and not any(isinstance(y, Raised) for y in laws[k].dist)]
    checked: list[str] = []
    for rows in _row_lists(keys):
        if math.prod(max(1, laws[k].paths) for k in rows) > BATCH_PATHS:
            continue
        inputs = [raw[k] for k in rows]
        try:
            # a small budget of its own: a batch whose tree is larger than its rows' (rejection loops drawn per
            # cell) is not checked here, never explored at length
            got = enumerate_law(lambda xs: freeze(batch(list(xs))), tuple(inputs), budget=4 * BATCH_PATHS,
                                renewal=False, max_depth=min(budgets.get("max_depth", 256), 256),
                                max_steps=BATCH_STEPS)
        except EnumerationBudgetExceeded:
            continue
        except ReplayMismatch as e:
            return Finding(False, f"batch({show(inputs)!r}) keeps state between its cells or calls: {e}",
                           witness={"rows": show(inputs)})
        shown = show(inputs)
        if not got.complete:
            continue
        expected = independent_law([laws[k].dist for k in rows])
        for y in sorted(set(got.dist) | set(expected), key=repr):
            a, b = got.dist.get(y, 0), expected.get(y, 0)
            if a != b:
                return Finding(False, f"batch({shown!r}) returns {y!r} with probability {a}, but independent calls "
                                      f"of the function on those rows return it with probability {b}: the batch "
                                      "path does not have the function's law",
                               witness={"rows": shown, "y": repr(y), "P[batch = y]": str(a),
                                        "P[independent calls = y]": str(b)})
        checked.append(repr(shown))
    if not checked:
        return Finding(True, f"not checked at this size: every list of two rows needs more than {BATCH_PATHS} paths "
                             "(or its law is not complete); checked at the smaller sizes", skipped=True)
    return Finding(True, f"batch has the law of independent calls of the function on {', '.join(checked)} "
                         "(exact, output by output)")
