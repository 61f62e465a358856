"""The proofs provider of ``vetdp check``: pinned proofs, their obligations and lemmas.

It first requires a proofs directory that exists and holds a proof of a spec'd module (else one ERROR result
``proofs::proofs.found``: a gate that found no proofs must not pass), and yields ``<stem>::proof.exists`` FAIL for
every spec module of the active project (``[tool.vetdp] specs``) that has no proof document. For each
``proofs/<stem>.md`` it yields ``proof.up_to_date`` (FAIL when the pinned source or the obligations derived from
its constants changed since it was blessed, ERROR when the document is invalid), ``proof.coverage`` (FAIL when the
pinned code uses an Expr constant that ``constants:`` does not cover, WARNING when the proof relies on no obligation
and no lemma), then ``obligation.<id>`` (PASS proved, FAIL refuted, UNDECIDED unknown, e.g. the z3 resource limit
spent) for every obligation derived from its constants and ``lemma.<id>`` (PASS proved/checked, FAIL refuted) for
every lemma it lists.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from vetdp.engine.registry import CheckOptions
from vetdp.engine.results import CheckResult, Status
from vetdp.obligations.check import run_obligation
from vetdp.obligations.derive import Derivation
from vetdp.obligations.lemmas import LEMMAS, run_lemma
from vetdp.obligations.pinning import NOTHING_CHECKED, Pinning, ProofError, incomplete_message

__all__ = ["check_proofs"]

_OBLIGATION_STATUS = {"proved": Status.PASS, "refuted": Status.FAIL, "unknown": Status.UNDECIDED}


def spec_modules() -> list[str]:
    """The stems of the active project's spec modules (each one is a spec'd module that needs a proof
    ``<stem>.md``); raises :class:`ProofError` when the project's specs cannot be listed, saying why."""
    from vetdp.project import ProjectError, active_project

    try:
        return active_project().spec_stems()
    except ProjectError as e:
        raise ProofError(str(e)) from None


def check_proofs(options: CheckOptions, pinning: Pinning | None = None) -> Iterator[CheckResult]:
    """Yield one result per proof freshness, obligation and lemma (see module docstring); never raises."""
    try:
        pin = pinning or Pinning()
        modules = spec_modules()
        stems = pin.require_proofs(modules)
    except ProofError as e:
        if options.selected("proofs::proofs.found"):
            yield CheckResult("proofs", "proofs.found", Status.ERROR, message=str(e))
        return
    for stem in modules:
        if stem not in stems and options.selected(f"{stem}::proof.exists"):
            yield CheckResult(stem, "proof.exists", Status.FAIL, subject=str(pin.proofs_dir),
                              message=f"spec'd module {stem!r} has no proof {stem}.md in {pin.proofs_dir}")
    for stem in stems:
        t0 = time.perf_counter()
        try:
            doc = pin.doc(stem)
            current = pin.digest(doc)
        except ProofError as e:
            if options.selected(f"{stem}::proof.up_to_date"):
                yield CheckResult(stem, "proof.up_to_date", Status.ERROR, message=str(e),
                                  seconds=time.perf_counter() - t0)
            continue
        try:
            der = pin.derivation(doc)  # imports what the proof pins: the constants and lemmas they register
        except ProofError as e:
            for check in ("proof.up_to_date", "proof.coverage"):
                if options.selected(f"{stem}::{check}"):
                    yield CheckResult(stem, check, Status.ERROR, message=str(e))
            continue
        if options.selected(f"{stem}::proof.up_to_date"):
            fresh, why = pin.freshness(doc, der)
            if not fresh and current != doc.meta["source_digest"]:
                why += f" (source digest {current} != pinned {doc.meta['source_digest']})"
            yield CheckResult(stem, "proof.up_to_date", Status.PASS if fresh else Status.FAIL, subject=str(doc.path),
                              message=why if fresh else f"outdated: {why}",
                              repro=None if fresh else f"vetdp proofs diff {stem}", seconds=time.perf_counter() - t0)
        if options.selected(f"{stem}::proof.coverage"):
            yield _coverage(stem, doc.meta["lemmas"], der)
        for oid in der.obligations:
            if options.selected(f"{stem}::obligation.{oid}"):
                yield _obligation(stem, oid, options.deep, options.z3_rlimit)
        for lid in doc.meta["lemmas"]:
            if options.selected(f"{stem}::lemma.{lid}"):
                yield _lemma(stem, lid)


def _coverage(stem: str, lemmas: list[str], der: Derivation) -> CheckResult:
    if der.missing:
        return CheckResult(stem, "proof.coverage", Status.FAIL, message=incomplete_message(der.missing),
                           witness={"missing": list(der.missing)}, repro=f"vetdp proofs status {stem}")
    if not der.obligations and not lemmas:
        return CheckResult(stem, "proof.coverage", Status.WARNING, message=NOTHING_CHECKED)
    relied = [q for q, ids in der.constants.items() if ids]
    return CheckResult(stem, "proof.coverage", Status.PASS, subject=", ".join(relied),
                       message=f"{len(der.obligations)} obligation(s) derived from constants: {', '.join(relied)}; "
                               f"every Expr constant the pinned code uses is covered" if relied else
                               "the pinned code uses no Expr constant; the proof relies on its lemmas")


def _obligation(stem: str, oid: str, deep: bool, z3_rlimit: int | None) -> CheckResult:
    try:
        r = run_obligation(oid, deep, z3_rlimit)
    except (KeyError, ValueError) as e:
        return CheckResult(stem, f"obligation.{oid}", Status.ERROR, message=str(e))
    msg = r.statement if r.proved else (r.reason or r.statement)
    return CheckResult(stem, f"obligation.{oid}", _OBLIGATION_STATUS[r.status], subject=r.statement,
                       witness=r.witness or r.counterexample, message=msg, seconds=r.seconds,
                       repro=f"vetdp proofs status {stem}")


def _lemma(stem: str, lid: str) -> CheckResult:
    if lid not in LEMMAS:
        return CheckResult(stem, f"lemma.{lid}", Status.ERROR, message=f"lemma={lid!r} is not a known lemma")
    r = run_lemma(lid)
    return CheckResult(stem, f"lemma.{lid}", Status.PASS if r.passed else Status.FAIL, subject=r.statement,
                       message=f"{r.method}: {r.detail}", seconds=r.seconds)
