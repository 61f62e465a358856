"""Third-party findings as commands: a registry of known upstream bugs, each reproduced by a ``vetdp`` command.

A project documents what vetdp found in other people's code under ``<proofs>/findings/*.md`` and registers every
finding in ``<proofs>/findings/findings.toml`` (:data:`REGISTRY_NAME`). vetdp's own registry ships with the package
(:func:`bundled_registry`); a project's registry adds to it::

    schema_version = 1

    [[finding]]
    id = "opendp-4"                      # unique: lower-case letters, digits, '.', '_', '-'
    library = "opendp"                   # the distribution name (its installed version is looked up)
    found_in = "0.16.0"                  # the version the finding was made against
    # or, for one finding in several libraries: libraries = { "pure-ldp" = "1.2.0", diffprivlib = "0.6.6" }
    title = "Bit-vector RR's map is not tight when the length is below 2m"
    document = "opendp.md"               # relative to this file
    section = 4                          # its "## 4." heading ("F4" for "## F4."); omit for a one-finding document

    [[finding.command]]                  # one or more commands, each with one or more detectors
    argv = ["verify", "randomized_response_bitvec", "--impl", "opendp", "--params", "{...}"]

    [[finding.command.detect]]           # the command's JSON report shows the finding when SOME item of
    among = "results"                    # its top-level array "results" (verify, check) / "rows" (vet) has
    where = { check = "privacy.tight", status = ["warning", "fail"] }   # these values (a list: one of them)
    matches = { message = "exceeds the exact loss" }                    # and fields matching these regexes

Field names in ``where`` and ``matches`` may be dotted (``"witness.x"``). ``argv`` is a ``vetdp`` command line
without ``--json`` (the runner adds it). A detector must have at least one condition, so it can never match
everything. A finding no command can show has ``no_command = "why"`` instead of commands: it is listed with
that reason, never run.

Verdicts (:class:`Status`): *present* when every detector of every command matches the command's report;
*fixed* when the commands ran and none matches (upstream fixed it in the installed version, or vetdp no longer
detects it); *partly fixed* in between; *library not installed* (nothing run); *command failed* (exit code other
than 0 or 1, a time-out, no JSON report, or a report without the array a detector searches, so that a changed
report format never passes for a fix); *not run* when only listed; *no command*.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.metadata
import json
import re
import shlex
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["REGISTRY_NAME", "SCHEMA_VERSION", "RegistryError", "Detector", "Command", "Finding", "Status", "Outcome",
           "Verdict", "load_registry", "default_registry", "bundled_registry", "registry_root", "unregistered_sections",
           "installed_version", "judge", "evaluate", "verdicts_to_json"]

REGISTRY_NAME = "findings.toml"
SCHEMA_VERSION = 1
_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_SECTION = re.compile(r"^## ([A-Z]{0,3}\d+)\.\s", re.MULTILINE)  # "## 4. ...", "## F4. ..."
_FINDING_KEYS = {"id", "library", "found_in", "libraries", "title", "document", "section", "command", "no_command"}
_COMMAND_KEYS = {"argv", "detect"}
_DETECT_KEYS = {"among", "where", "matches", "description"}


class RegistryError(ValueError):
    """The registry is malformed: the message names the file, the entry, the key, the value and what is allowed."""


def _lookup(item: Any, path: str) -> tuple[bool, Any]:
    """(found, value) of a dotted field path inside a JSON item."""
    for part in path.split("."):
        if not isinstance(item, dict) or part not in item:
            return False, None
        item = item[part]
    return True, item


def _same(value: Any, expected: Any) -> bool:
    """Equal and of the same kind (a number equals a number; True is not 1; "1" is not 1)."""
    def kind(x: Any) -> type:
        return float if isinstance(x, (int, float)) and not isinstance(x, bool) else type(x)

    return kind(value) is kind(expected) and value == expected


@dataclasses.dataclass(frozen=True)
class Detector:
    """A predicate on a command's JSON report: some item of ``doc[among]`` has every ``where`` field equal to one
    of its allowed values and every ``matches`` field matching its regular expression (``re.search``)."""

    among: str
    where: tuple[tuple[str, tuple[Any, ...]], ...]
    matches: tuple[tuple[str, re.Pattern[str]], ...]
    description: str = ""

    def item_matches(self, item: Any) -> bool:
        for path, allowed in self.where:
            found, value = _lookup(item, path)
            if not found or not any(_same(value, a) for a in allowed):
                return False
        for path, pattern in self.matches:
            found, value = _lookup(item, path)
            if not found or value is None or not pattern.search(value if isinstance(value, str) else json.dumps(value)):
                return False
        return True

    def __call__(self, doc: Any) -> bool:
        """True iff the report has an item that satisfies every condition."""
        items = doc.get(self.among) if isinstance(doc, dict) else None
        return isinstance(items, list) and any(self.item_matches(i) for i in items)

    def describe(self) -> str:
        if self.description:
            return self.description
        parts = [f"{p} {'=' if len(v) == 1 else 'in'} {v[0] if len(v) == 1 else list(v)!r}" for p, v in self.where]
        parts += [f"{p} ~ /{r.pattern}/" for p, r in self.matches]
        return f"an item of {self.among!r} with " + ", ".join(parts)


@dataclasses.dataclass(frozen=True)
class Command:
    """One ``vetdp`` command line (without the program name and without ``--json``) and its detectors."""

    argv: tuple[str, ...]
    detectors: tuple[Detector, ...]

    @property
    def text(self) -> str:
        return "vetdp " + shlex.join(self.argv)


@dataclasses.dataclass(frozen=True)
class Finding:
    """One registered finding: where it is documented, against which library version, and the commands that
    reproduce it."""

    id: str
    libraries: tuple[tuple[str, str], ...]  # (distribution, the version the finding was made against)
    title: str
    document: Path
    section: str | None  # the label of its "## <label>." heading; None: the document is this one finding
    commands: tuple[Command, ...]  # empty only with no_command
    registry: Path
    no_command: str = ""  # why no vetdp command reproduces it (then it is listed, never run)

    @property
    def where(self) -> str:
        return f"{self.document.name}" + (f" § {self.section}" if self.section is not None else "")

    @property
    def library(self) -> str:
        return ", ".join(name for name, _ in self.libraries)

    @property
    def found_in(self) -> str:
        return ", ".join(version for _, version in self.libraries)


class Status(enum.StrEnum):
    PRESENT = "present"  # every detector matches: the command reports the finding
    PARTIAL = "partly fixed"  # some detectors match, some do not
    FIXED = "fixed"  # the commands ran and report none of it
    NOT_INSTALLED = "library not installed"  # skipped: nothing could be run
    FAILED = "command failed"  # exit code other than 0/1, a time-out, or no JSON report
    NOT_RUN = "not run"  # listed only
    NO_COMMAND = "no command"  # registered with the reason no vetdp command reproduces it


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What running one command gave: its exit code, its JSON report (None when there is none), an error text."""

    exit_code: int
    doc: Any
    error: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code in (0, 1) and self.doc is not None and not self.error


@dataclasses.dataclass(frozen=True)
class Verdict:
    finding: Finding
    status: Status
    installed: tuple[str | None, ...]  # per library of the finding: its installed version, None if missing
    matched: tuple[tuple[bool, ...], ...] = ()  # per command, per detector (empty when not evaluated)
    detail: str = ""
    seconds: float = 0.0


# ------------------------------------------------------------------ loading


def _fail(where: str, text: str) -> RegistryError:
    return RegistryError(f"{where}: {text}")


def _keys(table: Any, allowed: set[str], required: set[str], where: str) -> dict:
    if not isinstance(table, dict):
        raise _fail(where, f"must be a table, got {type(table).__name__} {table!r}")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise _fail(where, f"unknown key(s) {unknown}; allowed: {sorted(allowed)}")
    missing = sorted(required - set(table))
    if missing:
        raise _fail(where, f"missing key(s) {missing}")
    return table


def _text(table: dict, key: str, where: str) -> str:
    value = table[key]
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, f"{key}={value!r} must be a non-empty string")
    return value


def _detector(raw: Any, where: str) -> Detector:
    t = _keys(raw, _DETECT_KEYS, {"among"}, where)
    among = _text(t, "among", where)
    where_t, matches_t = t.get("where", {}), t.get("matches", {})
    for key, value in (("where", where_t), ("matches", matches_t)):
        if not isinstance(value, dict):
            raise _fail(where, f"{key}={value!r} must be a table of field = value")
    if not where_t and not matches_t:
        raise _fail(where, "a detector needs at least one condition in 'where' or 'matches' (one without any "
                           "would match every report)")
    conditions = []
    for path, value in where_t.items():
        allowed = tuple(value) if isinstance(value, list) else (value,)
        if not allowed or any(isinstance(a, (dict, list)) for a in allowed):
            raise _fail(where, f"where.{path}={value!r} must be a value or a non-empty list of values")
        conditions.append((path, allowed))
    patterns = []
    for path, text in matches_t.items():
        if not isinstance(text, str) or not text:
            raise _fail(where, f"matches.{path}={text!r} must be a non-empty regular expression")
        try:
            patterns.append((path, re.compile(text)))
        except re.error as e:
            raise _fail(where, f"matches.{path}={text!r} is not a regular expression: {e}") from None
    description = t.get("description", "")
    if not isinstance(description, str):
        raise _fail(where, f"description={description!r} must be a string")
    return Detector(among, tuple(conditions), tuple(patterns), description)


def _command(raw: Any, where: str) -> Command:
    t = _keys(raw, _COMMAND_KEYS, {"argv", "detect"}, where)
    argv = t["argv"]
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
        raise _fail(where, f"argv={argv!r} must be a non-empty list of non-empty strings (a vetdp command line "
                           "without 'vetdp')")
    if argv[0] == "vetdp":
        raise _fail(where, f"argv={argv!r} must not start with 'vetdp' (it is implied)")
    if any(a == "--json" or a.startswith("--json=") for a in argv):
        raise _fail(where, f"argv={argv!r} must not contain --json (the runner adds it)")
    detect = t["detect"]
    if not isinstance(detect, list) or not detect:
        raise _fail(where, f"detect={detect!r} must be a non-empty array of tables ([[finding.command.detect]])")
    return Command(tuple(argv), tuple(_detector(d, f"{where}, detect[{i}]") for i, d in enumerate(detect)))


def _sections(document: Path) -> list[str]:
    return _SECTION.findall(document.read_text(encoding="utf-8"))


def _libraries(t: dict, where: str) -> tuple[tuple[str, str], ...]:
    """``library`` + ``found_in``, or ``libraries = { dist = "version", ... }`` for a finding in several."""
    if "libraries" in t:
        if "library" in t or "found_in" in t:
            raise _fail(where, "give either library and found_in, or libraries, not both")
        libs = t["libraries"]
        if not isinstance(libs, dict) or not libs or not all(
                isinstance(k, str) and k and isinstance(v, str) and v for k, v in libs.items()):
            raise _fail(where, f"libraries={libs!r} must be a non-empty table of distribution = \"version\"")
        return tuple(libs.items())
    missing = sorted({"library", "found_in"} - set(t))
    if missing:
        raise _fail(where, f"missing key(s) {missing} (or give libraries = {{ distribution = \"version\" }})")
    return ((_text(t, "library", where), _text(t, "found_in", where)),)


def _finding(raw: Any, index: int, registry: Path) -> Finding:
    where = f"{registry}: finding[{index}]"
    t = _keys(raw, _FINDING_KEYS, {"id", "title", "document"}, where)
    fid = _text(t, "id", where)
    if not _ID.match(fid):
        raise _fail(where, f"id={fid!r} must match {_ID.pattern} (lower-case letters, digits, '.', '_', '-')")
    where = f"{registry}: finding {fid!r}"
    libraries, title = _libraries(t, where), _text(t, "title", where)
    document = (registry.parent / _text(t, "document", where)).resolve()
    if not document.is_file():
        raise _fail(where, f"document={t['document']!r}: no such file {str(document)!r}")
    section = t.get("section")
    sections = _sections(document)
    if section is None:
        if sections:
            raise _fail(where, f"section is missing: {t['document']} has numbered sections {sections}; give one")
    elif isinstance(section, bool) or not isinstance(section, (int, str)) or str(section) not in sections:
        raise _fail(where, f"section={section!r} must be one of the numbered sections of {t['document']}: "
                           f"{sections}")
    if ("command" in t) == ("no_command" in t):
        raise _fail(where, "give either command ([[finding.command]]) or no_command (why no vetdp command "
                           "reproduces it), exactly one")
    if "no_command" in t:
        return Finding(fid, libraries, title, document, None if section is None else str(section), (), registry,
                       _text(t, "no_command", where))
    commands = t["command"]
    if not isinstance(commands, list) or not commands:
        raise _fail(where, f"command={commands!r} must be a non-empty array of tables ([[finding.command]])")
    return Finding(fid, libraries, title, document, None if section is None else str(section),
                   tuple(_command(c, f"{where}, command[{i}]") for i, c in enumerate(commands)), registry)


def load_registry(path: Path | str) -> list[Finding]:
    """Every finding of the registry file, validated: raises :class:`RegistryError` naming the file, the entry, the
    key and the bad value (unknown key, missing key, wrong type, duplicate id or section, missing document or
    section, a detector without conditions, a bad regular expression)."""
    from vetdp.inputs import InputError, read_text

    registry = Path(path).resolve()
    try:
        data = tomllib.loads(read_text(registry, str(registry)))
    except InputError as e:
        raise RegistryError(str(e)) from None
    except tomllib.TOMLDecodeError as e:
        raise RegistryError(f"{registry}: not valid TOML: {e}") from None
    _keys(data, {"schema_version", "finding"}, {"schema_version", "finding"}, str(registry))
    if data["schema_version"] != SCHEMA_VERSION:
        raise _fail(str(registry), f"schema_version={data['schema_version']!r}; this vetdp reads {SCHEMA_VERSION}")
    raw = data["finding"]
    if not isinstance(raw, list) or not raw:
        raise _fail(str(registry), "finding must be a non-empty array of tables ([[finding]])")
    findings = [_finding(f, i, registry) for i, f in enumerate(raw)]
    seen: dict[Any, str] = {}
    for f in findings:
        for key in (("id", f.id), ("section", f.document, f.section)):
            if key in seen:
                what = f"id {f.id!r}" if key[0] == "id" else f"{f.where}"
                raise _fail(str(registry), f"{what} is registered twice (findings {seen[key]!r} and {f.id!r})")
            seen[key] = f.id
    return findings


def bundled_registry() -> Path | None:
    """vetdp's own registry, shipped with the package: ``vetdp/_registry/proofs/findings/findings.toml`` of an
    installed copy (package data, with the documents and the example project its commands name), else
    ``proofs/findings/findings.toml`` of the source tree an editable install runs from; None when neither exists."""
    package = Path(__file__).resolve().parent
    for root in (package / "_registry", package.parent):
        path = root / "proofs" / "findings" / REGISTRY_NAME
        if path.is_file():
            return path
    return None


def registry_root(registry: Path) -> Path:
    """The folder ``<root>/<proofs>/findings/findings.toml``'s commands are run in: ``<root>``, whose
    ``pyproject.toml`` is the project they run in (the bundled registry's is vetdp's own)."""
    return Path(registry).resolve().parents[2]


def default_registry(proofs_dir: Path | None) -> Path | None:
    """``<proofs>/findings/findings.toml`` of a project, when it exists."""
    if proofs_dir is None:
        return None
    path = Path(proofs_dir) / "findings" / REGISTRY_NAME
    return path if path.is_file() else None


def unregistered_sections(findings: Sequence[Finding], folder: Path) -> list[str]:
    """Findings documented in ``folder/*.md`` that have no registry entry: each numbered section ("## N.") of a
    document, or a whole document without numbered sections. Empty when the registry is complete."""
    registered = {(f.document.resolve(), f.section) for f in findings}
    missing = []
    for document in sorted(Path(folder).glob("*.md")):
        sections = _sections(document) or [None]
        missing += [f"{document.name}" + (f" § {s}" if s is not None else "") for s in sections
                    if (document.resolve(), s) not in registered]
    return missing


# ------------------------------------------------------------------ running and judging


def installed_version(distribution: str) -> str | None:
    """The installed version of a distribution, None when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def judge(finding: Finding, outcomes: Sequence[Outcome], installed: Sequence[str | None]) -> Verdict:
    """The verdict on a finding from the outcomes of its commands (in order); ``installed``: the installed version
    of each of its libraries."""
    installed = tuple(installed)
    seconds = sum(o.seconds for o in outcomes)
    for command, outcome in zip(finding.commands, outcomes, strict=True):
        if not outcome.ok:
            return Verdict(finding, Status.FAILED, installed, (), f"{command.text}: {outcome.error}", seconds)
        for d in command.detectors:  # a report without the array is a registry/command mismatch, not a fix
            if not isinstance(outcome.doc, dict) or not isinstance(outcome.doc.get(d.among), list):
                keys = sorted(outcome.doc) if isinstance(outcome.doc, dict) else type(outcome.doc).__name__
                return Verdict(finding, Status.FAILED, installed, (), f"{command.text}: its report has no array "
                               f"{d.among!r} for the detector to search (report keys: {keys})", seconds)
    matched = tuple(tuple(d(o.doc) for d in c.detectors) for c, o in zip(finding.commands, outcomes, strict=True))
    flat = [m for ms in matched for m in ms]
    if all(flat):
        status, detail = Status.PRESENT, "reported by the command"
    elif not any(flat):
        status, detail = Status.FIXED, "the command no longer reports it"
    else:
        status = Status.PARTIAL
        gone = [d.describe() for c, ms in zip(finding.commands, matched, strict=True)
                for d, m in zip(c.detectors, ms, strict=True) if not m]
        detail = "no longer reported: " + "; ".join(gone)
    changed = [f"{name} found in {version}, installed {now}"
               for (name, version), now in zip(finding.libraries, installed, strict=True) if now != version]
    if status is not Status.PRESENT and changed:
        detail += f" ({'; '.join(changed)})"
    return Verdict(finding, status, installed, matched, detail, seconds)


Runner = Callable[[tuple[str, ...]], Outcome]


def evaluate(findings: Sequence[Finding], runner: Runner | None = None) -> list[Verdict]:
    """Run every finding's commands (each distinct command line once) and judge it; a finding with a library that
    is not installed is skipped. Without ``runner`` nothing is run: every finding is listed as *not run*."""
    cache: dict[tuple[str, ...], Outcome] = {}
    verdicts = []
    for f in findings:
        installed = tuple(installed_version(name) for name, _ in f.libraries)
        missing = [name for (name, _), v in zip(f.libraries, installed, strict=True) if v is None]
        if missing:
            verdicts.append(Verdict(f, Status.NOT_INSTALLED, installed, (),
                                    f"{', '.join(missing)} not installed: skipped"))
        elif f.no_command:
            verdicts.append(Verdict(f, Status.NO_COMMAND, installed, (), f"no vetdp command: {f.no_command}"))
        elif runner is None:
            verdicts.append(Verdict(f, Status.NOT_RUN, installed))
        else:
            outcomes = []
            for c in f.commands:
                if c.argv not in cache:
                    cache[c.argv] = runner(c.argv)
                outcomes.append(cache[c.argv])
            verdicts.append(judge(f, outcomes, installed))
    return verdicts


def verdicts_to_json(verdicts: Sequence[Verdict], command: str, unregistered: Sequence[str] = ()) -> str:
    """The JSON report of ``vetdp findings`` (schema_version 1)."""
    from vetdp import __version__

    rows = [{"id": v.finding.id, "libraries": [{"name": name, "found_in": version, "installed": now} for
                                                (name, version), now in zip(v.finding.libraries, v.installed,
                                                                            strict=True)],
             "title": v.finding.title, "document": str(v.finding.document),
             "section": v.finding.section, "commands": [c.text for c in v.finding.commands],
             "status": v.status.value, "detail": v.detail, "seconds": round(v.seconds, 3),
             "detectors": [{"command": c.text, "detector": d.describe(), "matched": v.matched[i][j]}
                           for i, c in enumerate(v.finding.commands) for j, d in enumerate(c.detectors)]
             if v.matched else []} for v in verdicts]
    summary = {s.value: sum(v.status is s for v in verdicts) for s in Status}
    return json.dumps({"schema_version": SCHEMA_VERSION, "tool": "vetdp", "version": __version__, "command": command,
                       "summary": summary, "unregistered": list(unregistered), "findings": rows}, indent=2)
