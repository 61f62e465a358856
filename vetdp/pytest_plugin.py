"""The vetdp pytest plugin (entry point ``pytest11: vetdp``): every check of ``vetdp check`` as a pytest item.

Opt in with ``vetdp = true`` under ``[tool.pytest.ini_options]`` (or ``--vetdp``). In a project with a
``[tool.vetdp]`` table (found upward from pytest's rootdir, or ``--vetdp-project DIR``), pytest then collects one
item per ``spec::check`` name that ``vetdp check`` reports, as ``pyproject.toml::<spec>::<check>``:

* every clause of every spec (``privacy.sound``, ``function.law``, ...) and one ``precondition[<id>]`` per bad
  parameter row;
* every proof's ``proof.up_to_date``, ``proof.coverage``, ``obligation.<id>`` (derived from its constants) and
  ``lemma.<id>`` (``proof.exists`` for a spec module without one), and one item per further provider of the project.

Collecting runs nothing but imports. Each spec (and each proof) is run once per process, on first use, and its
results cached, so items are independent: ``-k``, ``-x``, ``--junitxml`` and pytest-xdist work. A failing item
prints vetdp's report (parameters, witness, claimed versus true, reproduction). Only PASS passes; WARNING passes
with a pytest warning; SKIPPED skips; FAIL, UNDECIDED, ERROR and STOPPED (the time limit fired: no verdict) fail; a
clause that reported nothing fails.
The items are added when pytest runs without file arguments (its ``testpaths`` or rootdir), when an argument is the
project's folder or its ``pyproject.toml``, or always with ``--vetdp``.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["VetdpProject", "VetdpGroup", "VetdpItem", "VetdpFailure", "VetdpWarning"]

_RESULTS: dict[tuple, list] = {}  # (project file, kind, name, deep, seed, z3 rlimit) -> results, once per process


class VetdpFailure(Exception):
    """A vetdp check did not pass; ``results`` are the failing values."""

    def __init__(self, results: list):
        super().__init__(f"{len(results)} failing vetdp result(s)")
        self.results = results


class VetdpWarning(UserWarning):
    """A vetdp check passed with a warning (e.g. a sound but loose map under loose_map = "warn")."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vetdp", "vetdp: executable proofs of differential-privacy mechanisms")
    group.addoption("--vetdp", action="store_true", default=False,
                    help="collect every vetdp spec x clause and proof check of the [tool.vetdp] project")
    group.addoption("--vetdp-deep", action="store_true", default=False,
                    help="explore further (as vetdp check --deep)")
    group.addoption("--vetdp-seed", type=int, default=0, help="seed of the reproducible parts (vetdp check --seed)")
    group.addoption("--vetdp-z3-rlimit", type=int, default=None, metavar="N",
                    help="z3 resource units per obligation query (vetdp check --z3-rlimit)")
    group.addoption("--vetdp-project", default=None, metavar="DIR",
                    help="the project directory (default: the nearest [tool.vetdp] table upward from the rootdir)")
    parser.addini("vetdp", type="bool", default=False,
                  help="collect vetdp's checks as test items (see vetdp.pytest_plugin)")


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("vetdp") or config.getini("vetdp"))


def _project(config: pytest.Config):
    from vetdp.project import WHAT_TO_ADD, find_project, load_project

    chosen = config.getoption("vetdp_project")
    if chosen:
        path = Path(chosen)
        pyproject = path / "pyproject.toml" if path.is_dir() else path
        project = load_project(pyproject) if pyproject.is_file() else None
        if project is None:
            raise pytest.UsageError(f"--vetdp-project={chosen!r}: no pyproject.toml with a [tool.vetdp] table; "
                                    f"{WHAT_TO_ADD}")
        return project
    project = find_project(config.rootpath)
    if project is None:
        raise pytest.UsageError(f"vetdp is enabled but no pyproject.toml with a [tool.vetdp] table was found from "
                                f"{config.rootpath} upward; {WHAT_TO_ADD}")
    return project


def _wanted(config: pytest.Config, project) -> bool:
    if config.getoption("vetdp"):
        return True
    source = getattr(config, "args_source", None)
    if source is not None and source != pytest.Config.ArgsSource.ARGS:
        return True  # no file arguments: testpaths or the working directory
    for arg in config.args:
        path = Path(arg.split("::")[0]).resolve()
        if path in (project.root, project.pyproject):
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    """Append the vetdp items before -k/-m deselect (so selection applies to them as to any test)."""
    if not _enabled(config):
        return
    from vetdp.launch import missing_harness_message, missing_harness_module
    from vetdp.project import ProjectError

    try:
        project = _project(config)
        if not _wanted(config, project):
            return
        missing = missing_harness_module()  # the runtime alone is installed: say so, not a collection traceback
        if missing is not None:
            raise pytest.UsageError(missing_harness_message(missing))
        node = VetdpProject.from_parent(session, path=project.pyproject)
        node.project = project
        items.extend(session.genitems(node))
    except ProjectError as e:
        raise pytest.UsageError(str(e)) from None


class VetdpProject(pytest.File):
    """The project's ``pyproject.toml``: one :class:`VetdpGroup` per spec or proof name."""

    project = None

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        from vetdp.engine.spec import discover_specs
        from vetdp.engine.specs_provider import spec_check_names
        from vetdp.fence import UserCodeError
        from vetdp.project import PROOFS_PROVIDER, project_scope

        with project_scope(self.project.root):
            groups: dict[str, list[tuple[str, str]]] = {}
            try:
                specs = discover_specs(self.project)
            except UserCodeError as e:  # a spec module that exits, raises or hangs at import: its one line
                raise self.CollectError(str(e)) from None
            for spec in specs:
                never = _never_reported(spec)
                for name in spec_check_names(spec):
                    check = name.split("::", 1)[1]
                    if check not in never:
                        groups.setdefault(spec.name, []).append((check, "spec"))
            for owner, check in _proof_names():
                groups.setdefault(owner, []).append((check, "proof"))
            for ref in self.project.providers:
                if ref != PROOFS_PROVIDER:
                    groups.setdefault("providers", []).append((ref, "provider"))
        for name, checks in groups.items():
            group = VetdpGroup.from_parent(self, name=name)
            group.checks = checks
            yield group


def _never_reported(spec) -> set[str]:
    """Clause names a passing run of ``spec`` does not report (reported only when something breaks, or in modes the
    gate does not use), and estimator claims the spec does not make."""
    from vetdp.engine.spec import EstimatorSpec

    skip = {"construct", "engine", "audit.distribution"}
    if getattr(spec, "constant_time_param", None) is None:
        skip.add("timing.constant_bytes")
    if getattr(spec, "rdp_curve", None) is None:
        skip.add("privacy.rdp")
    if getattr(spec, "delta_curve", None) is None:
        skip.add("privacy.pld")
    if getattr(spec, "accountant_pair", None) is None:
        skip.add("privacy.dominated")
    if isinstance(spec, EstimatorSpec):
        try:
            claims = spec.claims(spec.examples[0]) if spec.examples else {}
        except Exception:  # noqa: BLE001 - the run will report it; collect both claims
            claims = {"variance": None, "mse": None}
        skip |= {c for c in ("estimator.variance", "estimator.mse") if c.split(".")[1] not in claims}
        skip.add("search.coverage")
    return skip


def _proof_names() -> list[tuple[str, str]]:
    """(owner, check) of every proof check ``vetdp check`` reports, read from the proofs' front matter."""
    from vetdp.obligations.pinning import Pinning, ProofError
    from vetdp.obligations.provider import spec_modules

    try:
        pin = Pinning()
        modules = spec_modules()
        stems = pin.require_proofs(modules)
    except ProofError:
        return [("proofs", "proofs.found")]
    out = [(m, "proof.exists") for m in modules if m not in stems]
    for stem in stems:
        out += [(stem, "proof.up_to_date"), (stem, "proof.coverage")]
        try:
            doc = pin.doc(stem)
            obligations = pin.derivation(doc).obligations  # imports and reads code, runs nothing
        except ProofError:
            continue
        out += [(stem, f"obligation.{oid}") for oid in obligations]
        out += [(stem, f"lemma.{lid}") for lid in doc.meta["lemmas"]]
    return out


class VetdpGroup(pytest.Collector):
    """One spec, proof or the project's providers: its checks as items."""

    checks: list[tuple[str, str]] = []

    def collect(self) -> Iterator[pytest.Item]:
        for check, kind in self.checks:
            yield VetdpItem.from_parent(self, name=check, kind=kind)


class VetdpItem(pytest.Item):
    """One ``spec::check`` of vetdp; passes only when every result of that check is PASS (or WARNING)."""

    def __init__(self, *, kind: str, **kwargs):
        super().__init__(**kwargs)
        self.kind = kind
        self.owner = self.parent.name

    @property
    def project(self):
        return self.parent.parent.project

    def _results(self) -> list:
        config = self.config
        deep, seed = config.getoption("vetdp_deep"), config.getoption("vetdp_seed")
        rlimit = config.getoption("vetdp_z3_rlimit")
        key = (str(self.project.pyproject), self.kind, self.owner if self.kind != "provider" else self.name, deep,
               seed, rlimit)
        if key not in _RESULTS:
            _RESULTS[key] = _run(self.project, self.kind, key[2], deep, seed, rlimit)
        return _RESULTS[key]

    def runtest(self) -> None:
        from vetdp.engine.registry import glob_matches
        from vetdp.engine.results import Status

        gate, full = self.project.gate, f"{self.owner}::{self.name}"
        if not self.config.getoption("vetdp_deep") and any(glob_matches(g, full) for g in gate.get("deep_only", ())):
            pytest.skip(f"{full} runs only with --vetdp-deep ([gate] deep_only)")
        results = self._results()
        if self.kind == "provider":
            mine = results
        else:
            mine = [r for r in results if r.spec == self.owner and r.check == self.name]
            broken = [r for r in results if r.spec == self.owner and r.check in ("construct", "engine")
                      and r.status.is_failure]
            if broken and not mine:
                raise VetdpFailure(broken)
        if not mine:
            from vetdp.engine.results import CheckResult

            raise VetdpFailure([CheckResult(self.owner, self.name, Status.ERROR,
                                            message="the run reported no result for this check")])
        failing = [r for r in mine if r.status.is_failure]
        if failing and any(glob_matches(g, full) for g in gate.get("advisory", ())):
            pytest.xfail(f"advisory ([gate] advisory): {failing[0].status.value}: {failing[0].message}")
        if failing:
            raise VetdpFailure(failing)
        for r in mine:
            if r.status is Status.WARNING:
                warnings.warn(VetdpWarning(f"{r.spec}::{r.check}: {r.message}"), stacklevel=1)
        if all(r.status is Status.SKIPPED for r in mine):
            pytest.skip("; ".join(sorted({r.message for r in mine})) or "not applicable")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, VetdpFailure):
            from rich.console import Console

            from vetdp.engine import report

            buffer = io.StringIO()
            console = Console(file=buffer, width=120, force_terminal=False, color_system=None, highlight=False)
            report.render_failures(excinfo.value.results, console)
            first = excinfo.value.results[0]
            head = f"vetdp {first.spec}::{first.check} {first.status.value}: {first.message}".splitlines()[0]
            return head + "\n" + buffer.getvalue().rstrip()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.project.pyproject, None, f"vetdp {self.owner}::{self.name}"


def _run(project, kind: str, name: str, deep: bool, seed: int, z3_rlimit: int | None = None) -> list:
    """Every result of the spec, proof or provider ``name`` of ``project`` (an engine failure is an ERROR result)."""
    from vetdp.engine.registry import CheckOptions
    from vetdp.engine.results import CheckResult, Status
    from vetdp.project import project_scope

    gate = project.gate
    options = CheckOptions(deep=deep, seed=seed, deep_only=tuple(gate.get("deep_only", ())),
                           loose_map_warns=gate.get("loose_map", "fail") == "warn", z3_rlimit=z3_rlimit)
    from vetdp import fence

    try:
        with fence.guarded(), project_scope(project.root):  # os._exit in the code under test: a result, not the end
            if kind == "spec":
                from vetdp.engine.spec import find_spec
                from vetdp.engine.specs_provider import check_specs

                return list(check_specs(options, [find_spec(name, project)]))
            if kind == "proof":
                from vetdp.obligations.provider import check_proofs

                scoped = CheckOptions(deep=deep, seed=seed, pattern=f"{name}::*", deep_only=options.deep_only,
                                      z3_rlimit=z3_rlimit)
                return list(check_proofs(scoped))
            from vetdp.engine.registry import run_provider

            return list(run_provider(name, fence.load(name, f"[tool.vetdp] providers {name!r}:"), options))
    except Exception as e:  # noqa: BLE001 - an engine failure is a result
        from vetdp.fence import UserCodeError

        message = str(e) if isinstance(e, UserCodeError) else f"{type(e).__name__}: {e}"
        return [CheckResult(name, "engine", Status.STOPPED if getattr(e, "stopped", False) else Status.ERROR,
                            message=message)]
