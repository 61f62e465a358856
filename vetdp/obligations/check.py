"""Run proof obligations and report each as proved, refuted (with a counterexample) or unknown.

Obligation ids:

* ``<constant>.cast.<var>``: the int parameter casts to float64 exactly over its range;
* ``<constant>.step<i>.<op>.defined``, ``<constant>.sound``, ``<constant>.range``: see
  :mod:`vetdp.obligations.z3encode`;
* ``contract.<op>``: the primitive ``op`` meets the contract the encoding assumes.

z3 is bounded by a resource limit (``rlimit``: z3's count of its own work), never by time, so an obligation gets
the same verdict on a loaded CI runner and an idle laptop: ``DEFAULT_Z3_RLIMIT`` per query, ``DEEP_Z3_RLIMIT`` with
``--deep``, or what ``--z3-rlimit N`` says (:mod:`vetdp.obligations.limits`). An obligation that spends its limit
is "unknown" with a reason naming the option.

A refuted z3 query comes with z3's model and, when the witness search finds one, a
concrete float input confirmed with mpmath (``confirmed``). For the seeds' naive
constants (``naive.*``) a confirmed refutation is the expected finding.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable

from vetdp.arith.expr import Op, Var
from vetdp.obligations import constants as C
from vetdp.obligations.contracts import cast_obligation, float64_gap_obligation, op_contract
from vetdp.obligations.limits import DEEP_Z3_RLIMIT, DEFAULT_Z3_RLIMIT, z3_rlimit
from vetdp.obligations.witness import find_witness
from vetdp.obligations.z3encode import ConstantSpec, Encoding, run_query

__all__ = ["ObligationResult", "run_constant", "run_contract", "run_obligation", "obligation_ids",
           "run_all", "contract_ops", "run_spec", "constant_obligations", "z3_rlimit", "DEFAULT_Z3_RLIMIT",
           "DEEP_Z3_RLIMIT"]



@dataclasses.dataclass(frozen=True)
class ObligationResult:
    """The verdict on one obligation; ``status`` is "proved", "refuted" or "unknown"."""

    id: str
    status: str
    seconds: float
    statement: str
    reason: str = ""
    counterexample: dict | None = None  # z3's model (rounding-model level), as text
    witness: dict | None = None  # a concrete float input confirmed with mpmath
    confirmed: bool | None = None  # refuted only: was a concrete witness found?
    rlimit_used: int | None = None  # z3 resource units spent (None: not a z3 query, e.g. an mpmath contract)

    @property
    def proved(self) -> bool:
        return self.status == "proved"


def _model_text(model: dict | None) -> dict | None:
    if model is None:
        return None
    return {k: (repr(float(v)) if abs(v) < 2**1023 else str(v)) for k, v in model.items()}


def _statement(spec: ConstantSpec, qid: str) -> str:
    pre = ", ".join(f"{r.name} in [{float(r.lo)!r}, {float(r.hi)!r}]" for r in spec.ranges)
    if spec.relations_text:
        pre += f", {spec.relations_text}"
    if qid == "sound":
        rel = ">=" if spec.bound == "upper" else "<="
        what = f"float({spec.expr}) {rel} its real value"
    elif qid == "range":
        what = f"float({spec.expr}) in [{float(spec.result[0])!r}, {float(spec.result[1])!r}]"
    else:
        what = f"{qid.rsplit('.', 1)[0]}: no overflow, no division by zero, ln/log1p argument in domain"
    return f"for all {pre}: {what}"


def contract_ops(spec: ConstantSpec) -> list[str]:
    return sorted({n.name for n in spec.expr.walk() if isinstance(n, Op)})


@functools.cache
def run_constant(cid: str, rlimit: int = DEFAULT_Z3_RLIMIT) -> tuple[ObligationResult, ...]:
    """Every obligation of the registered constant ``cid`` (casts, steps, sound, range), cached."""
    return run_spec(C.constant(cid), rlimit)


def run_spec(spec: ConstantSpec, rlimit: int = DEFAULT_Z3_RLIMIT) -> tuple[ObligationResult, ...]:
    """Every obligation of ``spec``, each z3 query within ``rlimit`` resource units; a refutation carries z3's
    model and, if found, a confirmed witness."""
    cid = spec.id
    out: list[ObligationResult] = []
    for v in sorted({n for n in spec.expr.walk() if isinstance(n, Var) and n.kind == "int"}, key=str):
        rng = spec.range_of(v.name)
        status, dt, used, detail, cex = cast_obligation(v.name, int(rng.lo), int(rng.hi), rlimit)
        out.append(ObligationResult(f"{cid}.cast.{v.name}", status, dt,
                                    f"every int {v.name} in [{rng.lo}, {rng.hi}] casts to float64 exactly",
                                    detail, {k: str(x) for k, x in cex.items()} if cex else None,
                                    rlimit_used=used))
    enc = Encoding(spec)
    for q in enc.queries():
        o = run_query(q, rlimit)
        witness, confirmed = None, None
        if o.status == "refuted":
            w = find_witness(spec, o.model, prefer_wrong_value=q.id == "sound")
            step_op = q.id.split(".")[1] if q.id.startswith("step") else None
            if w is not None and (q.id == "sound" or (step_op and w.message.startswith(f"{step_op}("))):
                witness, confirmed = w.as_dict(), True
            else:
                confirmed = False
        reason = o.reason if o.status == "unknown" else ""
        out.append(ObligationResult(f"{cid}.{q.id}", o.status, o.seconds, _statement(spec, q.id), reason,
                                    _model_text(o.model), witness, confirmed, o.rlimit_used))
    return tuple(out)


GAP_LEMMA = "float64_gap"  # contract.float64_gap: the rounding model follows from IEEE 754 and this lemma


@functools.cache
def run_contract(op: str, rlimit: int = DEFAULT_Z3_RLIMIT) -> ObligationResult:
    """``contract.<op>``: the float64 gap lemma by z3 (within ``rlimit`` resource units), or a primitive's
    contract on probe points (z3's IEEE semantics and mpmath; no solver search, so ``rlimit`` does not apply)."""
    if op == GAP_LEMMA:
        status, dt, used, detail, cex = float64_gap_obligation(rlimit)
        return ObligationResult(f"contract.{op}", status, dt, "the rounding model of z3encode follows from IEEE 754's "
                                "directed rounding and the float64 gap lemma", detail, cex, rlimit_used=used)
    status, dt, detail, cex = op_contract(op)
    return ObligationResult(f"contract.{op}", status, dt, f"{op} meets its rounding contract", detail, cex)


def obligation_ids(cid: str) -> list[str]:
    """The ids :func:`run_constant` reports for ``cid``, without running anything."""
    spec = C.constant(cid)
    ids = [f"{cid}.cast.{v.name}" for v in sorted({n for n in spec.expr.walk()
                                                   if isinstance(n, Var) and n.kind == "int"}, key=str)]
    ids += [f"{cid}.{q.id}" for q in Encoding(spec).queries()]
    return ids


def constant_obligations(cid: str) -> list[str]:
    """Every obligation id a proof relying on constant ``cid`` lists: :func:`obligation_ids` and the contracts
    of the primitives it uses (``contract.<op>``, ``contract.float64_gap``), without running anything."""
    ops = contract_ops(C.constant(cid))
    return obligation_ids(cid) + [f"contract.{op}" for op in ops] + [f"contract.{GAP_LEMMA}"]


def run_obligation(oid: str, deep: bool = False, rlimit: int | None = None) -> ObligationResult:
    """The result of one obligation by id (runs its constant's obligations, cached), z3 within
    :func:`z3_rlimit` (``deep``, ``rlimit``) resource units per query."""
    limit = z3_rlimit(deep, rlimit)
    if oid.startswith("contract."):
        return run_contract(oid.removeprefix("contract."), limit)
    for cid in C.all_specs():
        if oid.startswith(cid + "."):
            for r in run_constant(cid, limit):
                if r.id == oid:
                    return r
    raise KeyError(f"obligation={oid!r} is not a known obligation id")


def run_all(cids: Iterable[str] | None = None, deep: bool = False, rlimit: int | None = None) -> list[ObligationResult]:
    """All obligations of the given constants (default: every one) plus their op contracts."""
    limit = z3_rlimit(deep, rlimit)
    out: list[ObligationResult] = []
    ops: set[str] = set()
    for cid in (cids if cids is not None else C.all_specs()):
        out.extend(run_constant(cid, limit))
        ops.update(contract_ops(C.constant(cid)))
    out.extend(run_contract(op, limit) for op in sorted(ops | {GAP_LEMMA}))
    return out


