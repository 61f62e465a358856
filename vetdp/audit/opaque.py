"""The engine's clauses for an *opaque* constructor: one whose randomness vetdp cannot enumerate.

Used by :func:`vetdp.engine.runner.evaluate_params` for compiled code (e.g. OpenDP's Rust
core behind :mod:`vetdp.audit.opendp_adapter`) and for code found to draw randomness outside
vetdp's primitives (:mod:`vetdp.engine.foreign`).

* The exact truth is the spec's stated law (``spec.law``) when it states one, else the
  output distribution of *our* implementation with the same parameters, enumerated from
  its code. ``privacy.sound`` and ``privacy.tight`` compare the opaque map with that truth,
  decided exactly as for our own code.
* ``audit.distribution``: the opaque function is sampled ``samples`` times on each audited
  input (every input when the spec has at most 8, else 8 spread over them), and every
  *cell* is compared with its exact probability by a two-sided Clopper–Pearson interval,
  Bonferroni-corrected over all cells. The cells of an input are each output of its exact
  law, one cell "any other output", and, when the outputs are tuples of one length, each
  coordinate's value (a bit's flip rate is seen far sooner than one of 2^k vectors).
  A flagged pass is confirmed on a fresh sample four times as large before the clause fails,
  so a correct implementation fails with probability at most β² (and is flagged, then
  cleared, with probability at most β).
* The audit states what it can see: for each cell, the deviation of the observed frequency
  from the exact probability at which the cell is flagged (the half-width of the
  Clopper–Pearson interval at the expected count); the largest of these over cells is the
  *detectable deviation* D. A sampler whose true probabilities are off by D in some cell
  is flagged about half the time, off by 1.5·D almost always. D shrinks as 1/√samples.
* Samples are drawn one call at a time, or through ``m.draws(x, n)`` where the measurement offers it (None: not
  for this function): the outcomes of ``n`` calls (an output, or the exception raised), each exactly what ``m(x)``
  gives (:class:`vetdp.audit.opendp_adapter.OpenDPMeasurement`, whose calls cost OpenDP's FFI call only).
* ``errors.data_independent``: one call per input; the raised error (or none) must agree.
  This sees only errors that occur on that call.
* ``randomness.through_primitives`` and ``timing.constant_bytes`` are skipped: they observe
  the bytes drawn from vetdp's sources, which opaque code does not use.
"""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from scipy.stats import beta as beta_dist

from vetdp.audit.blackbox import clopper_pearson_lower, clopper_pearson_upper
from vetdp.core.validation import check_float, check_int
from vetdp.engine.clauses import Finding, privacy_findings, reference_laws
from vetdp.engine.enumerate import EnumerationBudgetExceeded, Raised, freeze

__all__ = ["opaque_findings", "opaque_audit", "distribution_audit", "audited_inputs", "detectable_deviation",
           "MAX_AUDITED_INPUTS"]

MAX_AUDITED_INPUTS = 8  # every input is audited up to this many; beyond, this many spread over them
OTHER = "<any other output>"


def audited_inputs(inputs: list, limit: int = MAX_AUDITED_INPUTS) -> list:
    """The inputs whose samples are audited: all distinct ones when at most ``limit``, else ``limit``
    spread evenly over the list (the first and the last included)."""
    distinct: list = []
    keys: set = set()
    for x in inputs:
        key = freeze(x)
        if key not in keys:
            keys.add(key)
            distinct.append(x)
    if len(distinct) <= limit:
        return distinct
    last = len(distinct) - 1
    picks = sorted({round(i * last / (limit - 1)) for i in range(limit)})
    return [distinct[i] for i in picks]


def detectable_deviation(p: Fraction | float, samples: int, alpha: float) -> float:
    """The deviation |observed frequency − p| at which a cell of exact probability ``p`` is flagged.

    It is the larger half-width of the two-sided Clopper–Pearson interval (level ``alpha``
    per side) at the expected count ``samples·p``: about z·√(p(1−p)/samples) for a normal
    quantile z, and about ln(1/alpha)/samples for p = 0 or 1.
    """
    n = check_int("samples", samples, lo=1)
    a = check_float("alpha", alpha)
    if not 0 < a < 1:
        raise ValueError(f"alpha={alpha!r} must be in (0, 1)")
    q = float(p)
    if not 0 <= q <= 1:
        raise ValueError(f"p={p!r} must be in [0, 1]")
    k = n * q  # the expected count; the beta quantiles accept it unrounded
    # a subnormal shape parameter overflows boost's beta function (e.g. p = 5e-324): the quantile is then
    # at the end of [0, 1] to the last bit (taking the end only widens the stated deviation)
    lo = 0.0 if k < sys.float_info.min else float(beta_dist.ppf(a, k, n - k + 1))
    hi = 1.0 if n - k < sys.float_info.min else float(beta_dist.ppf(1 - a, k + 1, n - k))
    return max(q - lo, hi - q)


@dataclasses.dataclass(frozen=True)
class _Cell:
    label: Any  # what the report shows
    p: Fraction
    member: Callable[[Any], bool] | None  # None: count of this exact output


def _cells(dist: dict[Any, Fraction]) -> list[_Cell]:
    cells = [_Cell(y, p, None) for y, p in dist.items()]
    cells.append(_Cell(OTHER, Fraction(0), None))
    outputs = [y for y in dist if not isinstance(y, Raised)]
    lengths = {len(y) if isinstance(y, tuple) else None for y in outputs}
    if outputs and len(lengths) == 1 and None not in lengths and len(dist) > 2:
        (length,) = lengths
        for j in range(length):
            values = sorted({y[j] for y in outputs}, key=repr)
            if len(values) == 2:  # one value decides the other: test one of them
                values = values[1:]
            for v in values:
                pv = sum((p for y, p in dist.items() if not isinstance(y, Raised) and y[j] == v), Fraction(0))
                cells.append(_Cell(f"coordinate {j} = {v!r}", pv,
                                   lambda y, j=j, v=v: isinstance(y, tuple) and len(y) > j and y[j] == v))
    return cells


def _sample(fn: Callable[[Any], Any], x: Any, n: int) -> Counter:
    counts: Counter = Counter()
    draws = getattr(fn, "draws", None)  # n calls' outcomes at once (OpenDP's adapter: the FFI call's cost only)
    outcomes = draws(x, n) if callable(draws) else None
    if outcomes is not None:
        for y in outcomes:
            counts[Raised(type(y).__name__, str(y)) if isinstance(y, Exception) else freeze(y)] += 1
        return counts
    for _ in range(n):
        try:
            y = freeze(fn(x))
        except Exception as e:  # noqa: BLE001 - an error is an outcome, as in enumeration
            y = Raised(type(e).__name__, str(e))
        counts[y] += 1
    return counts


CONFIRM_FACTOR = 4  # a flagged audit is re-drawn with this many times the samples before it fails


def _worst_cell(fn: Callable[[Any], Any], plan: list, exact: dict, n: int, alpha: float) -> tuple[float, dict] | None:
    """One pass of ``n`` fresh samples per input: the cell farthest outside its interval, or None."""
    worst: tuple[float, dict] | None = None
    intervals: dict[int, tuple[float, float]] = {}  # count -> its Clopper–Pearson interval (n, alpha fixed)
    for x, cells in plan:
        dist = exact[freeze(x)]
        counts = _sample(fn, x, n)
        for cell in cells:
            if cell.member is not None:
                k = sum(c for y, c in counts.items() if cell.member(y))
            elif cell.label == OTHER:
                k = sum(c for y, c in counts.items() if y not in dist)
            else:
                k = counts.get(cell.label, 0)
            if k not in intervals:
                intervals[k] = clopper_pearson_lower(k, n, alpha), clopper_pearson_upper(k, n, alpha)
            lo, hi = intervals[k]
            if Fraction(lo) > cell.p or cell.p > Fraction(hi):  # compared exactly
                miss = float(Fraction(lo) - cell.p) if Fraction(lo) > cell.p else float(cell.p - Fraction(hi))
                shown = (sorted(map(repr, (z for z in counts if z not in dist))) if cell.label == OTHER
                         else cell.label)
                witness = {"x": repr(x), "y": repr(shown), "observed": k, "out_of": n, "exact": str(cell.p),
                           "interval": [lo, hi]}
                if worst is None or miss > worst[0]:
                    worst = (miss, witness)
    return worst


def distribution_audit(fn: Callable[[Any], Any], exact: dict[Any, dict[Any, Fraction]], inputs: list, samples: int,
                       beta: float, confirm: int = CONFIRM_FACTOR) -> Finding:
    """Whether ``fn``'s samples are consistent with the exact distributions.

    ``exact`` maps each frozen input to its exact law. A pass draws ``samples`` per input and
    compares every cell with its Bonferroni-corrected two-sided Clopper–Pearson interval (at
    most ``beta`` to flag a correct ``fn``). A flagged pass is then *confirmed*: a fresh pass
    of ``confirm`` × ``samples`` per input, at the same level, must flag too before the finding
    fails. The two passes are independent, so a correct ``fn`` fails with probability at most
    ``beta``², while a deviation the first pass can see is seen by the larger second one almost
    surely. ``confirm=0`` fails on the first pass (probability at most ``beta``).

    The witness (pass or fail) holds ``detectable_deviation``: the largest over cells of
    :func:`detectable_deviation` at the first pass's size, the smallest deviation of an output
    probability the audit can see.
    """
    n = check_int("samples", samples, lo=1)
    b = check_float("beta", beta)
    if not 0 < b < 1:
        raise ValueError(f"beta={beta!r} must be in (0, 1)")
    factor = check_int("confirm", confirm, lo=0)
    if not inputs:
        raise ValueError("inputs=[] must hold at least one input to audit")
    plan = [(x, _cells(exact[freeze(x)])) for x in inputs]
    n_cells = sum(len(cells) for _, cells in plan)
    alpha = b / (2 * n_cells)  # two sides per cell
    # once per distinct probability (the cells of a categorical law share a few)
    seeing = max(detectable_deviation(p, n, alpha) for p in {cell.p for _, cells in plan for cell in cells})
    summary = (f"{n} samples on each of {len(inputs)} inputs, {n_cells} cells, two-sided Clopper–Pearson "
               f"at β={b:g} (Bonferroni); the audit detects a deviation of about {seeing:.3g} or more in any "
               "output probability")
    facts = {"detectable_deviation": seeing, "samples": n, "inputs": len(inputs), "cells": n_cells, "beta": b}
    worst = _worst_cell(fn, plan, exact, n, alpha)
    first = worst
    if worst is not None and factor:
        worst = _worst_cell(fn, plan, exact, n * factor, alpha)
        facts["confirmation_samples"] = n * factor
        if worst is None:
            w = first[1]
            return Finding(True, f"every output frequency consistent with the exact distribution; {summary}; a first "
                                 f"pass flagged P[M({w['x']}) = {w['y']}] ({w['observed']}/{n} against {w['exact']}) "
                                 f"and a fresh pass of {n * factor} samples per input did not confirm it (a correct "
                                 f"sampler fails both with probability at most β² = {b * b:.3g})",
                           witness={**facts, "unconfirmed": w})
        summary += f"; confirmed by a fresh pass of {n * factor} samples per input (false alarm at most β²)"
    if worst is not None:
        w = {**worst[1], **facts}
        return Finding(False, f"the opaque sampler's frequencies differ from the exact distribution: "
                              f"P[M({w['x']}) = {w['y']}] = {w['exact']} exactly, observed {w['observed']}/"
                              f"{w['out_of']}, outside [{w['interval'][0]:.4g}, {w['interval'][1]:.4g}]; {summary}",
                       witness=w)
    return Finding(True, f"every output frequency consistent with the exact distribution; {summary}", witness=facts)


def _errors_agree(m: Any, inputs: list) -> Finding:
    seen: dict[str | None, Any] = {}
    for x in inputs:
        try:
            m(x)
            key = None
        except Exception as e:  # noqa: BLE001
            key = f"{type(e).__name__}: {e}"
        seen.setdefault(key, x)
    if len(seen) > 1:
        return Finding(False, "inputs raise different errors on one call each",
                       witness={str(k): repr(x) for k, x in seen.items()})
    (only,) = seen
    return Finding(True, "one call per input: no errors" if only is None else f"same error on every input: {only}")


def opaque_findings(spec: Any, m: Any, params: dict, inputs: list, cfg: Any, beta: float | None = None,
                    audit: bool = True) -> dict:
    """The clauses for an opaque measurement ``m`` built with ``params`` (see the module docstring).

    ``beta`` is this parameter set's false-alarm budget for ``audit.distribution`` (default
    ``cfg.audit_beta``); ``cfg.audit_samples`` samples are drawn per audited input, ten times
    as many with ``cfg.deep``: the audit's budget is that count of samples, never seconds. ``audit=False`` leaves
    ``audit.distribution`` out (the engine runs it as a clause of its own, so that slow sampling under the time
    limit never leaves the map's clauses without a verdict: :func:`opaque_audit`).
    """
    out: dict = {
        "randomness.through_primitives": Finding(True, "opaque implementation: its samples are audited instead "
                                                 "(audit.distribution)", skipped=True),
        "errors.data_independent": _errors_agree(m, inputs),
    }
    if spec.constant_time_param is not None:
        out["timing.constant_bytes"] = Finding(True, "opaque implementation: the bytes it reads cannot be observed",
                                               skipped=True)
    truth = _truth(spec, params, inputs, cfg)
    if isinstance(truth, Finding):
        out.update(dict.fromkeys(("privacy.sound", "privacy.tight") + (("audit.distribution",) if audit else ()),
                                 truth))
        return out
    exact, source = truth
    # the map is judged against the exact law the code should have; whether the code has it is audit.distribution's
    # question, and a rare event (a lie of probability 2**-53 never told) is beyond what samples can see
    privacy = privacy_findings(spec, m, exact, params)
    for name in ("privacy.sound", "privacy.tight"):
        if name in privacy and privacy[name].ok and not privacy[name].skipped:
            note = (f"the map against {source}, the law opaque code should have (its own loss is not observable; "
                    "audit.distribution checks its samples against that law)")
            privacy[name] = dataclasses.replace(privacy[name], message=f"{privacy[name].message}; {note}"
                                                if privacy[name].message else note)
    out.update(privacy)
    if audit:
        out.update(opaque_audit(spec, m, params, inputs, cfg, beta, truth))
    return out


def _truth(spec: Any, params: dict, inputs: list, cfg: Any) -> tuple[dict, str] | Finding:
    """The exact laws opaque code should have, with where they come from; or the finding that says why not."""
    try:
        return reference_laws(spec, params, inputs, cfg.budget)
    except EnumerationBudgetExceeded as e:
        return Finding(True, f"no exact truth: {e}", skipped=True)
    except Exception as e:  # noqa: BLE001
        where = "the spec's law" if spec.law is not None else f"the reference implementation {spec.impl_ref}"
        return Finding(False, f"{where} could not give the exact truth for these parameters: {type(e).__name__}: {e}")


def opaque_audit(spec: Any, m: Any, params: dict, inputs: list, cfg: Any, beta: float | None = None,
                 truth: tuple[dict, str] | Finding | None = None) -> dict:
    """``audit.distribution`` for opaque ``m``: its samples against the exact law (see :func:`opaque_findings`)."""
    truth = _truth(spec, params, inputs, cfg) if truth is None else truth
    if isinstance(truth, Finding):
        return {"audit.distribution": truth}
    exact, source = truth
    samples = cfg.audit_samples * (10 if cfg.deep else 1)
    found = distribution_audit(m, exact, audited_inputs(inputs), samples, cfg.audit_beta if beta is None else beta)
    return {"audit.distribution": dataclasses.replace(found, message=f"{found.message} (against {source})")}
