"""The project vetdp is run in: its ``[tool.vetdp]`` table in ``pyproject.toml``, found upward from a directory.

A project declares where its specs, implementations and proofs are, and the gate's settings::

    [tool.vetdp]
    specs = ["mypkg.specs"]         # modules or packages (every public module in it) that define SPECS
    impl = ["mypkg.mechanisms"]     # where the implementations are (their sources are what the proofs pin)
    proofs = "proofs"               # proof documents <stem>.md, relative to this pyproject.toml
    pythonpath = ["."]              # put on sys.path before importing, relative to this file (default ["."])
    register = ["mypkg.lemmas"]     # imported first: modules that register constants and lemmas
    providers = []                  # further check providers "module:function" that `vetdp check` runs

    [tool.vetdp.gate]               # or: gate = "ci/gate.toml", a file holding a [gate] table
    advisory = []                   # globs over "spec::check": failures reported but not gating
    deep_only = []                  # globs of checks that run only with --deep
    loose_map = "fail"              # "fail" | "warn": how a sound but loose map is reported

Every path is relative to the directory holding ``pyproject.toml``. Unknown keys are rejected by name, so a
misspelling never silently turns a check off. Without any table, the bundled default applies: vetdp's own specs
(``vetdp.specs``), and its proofs when the source tree is next to the package (an editable install).

The *active* project is the one ``--project DIR`` chose (:func:`project_scope`), else the nearest table upward from
the working directory, else the bundled default (:func:`active_project`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import pkgutil
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["Project", "ProjectError", "find_project", "load_project", "bundled_project", "active_project",
           "project_scope", "project_option", "KNOWN_KEYS", "GATE_KEYS", "LOOSE_MAP", "read_gate_file", "validate_gate",
           "WHAT_TO_ADD"]

KNOWN_KEYS = frozenset({"specs", "impl", "proofs", "pythonpath", "register", "providers", "gate"})
GATE_KEYS = ("advisory", "deep_only", "loose_map")
LOOSE_MAP = ("fail", "warn")  # [gate] loose_map: how a sound but loose map (privacy.tight) is reported

WHAT_TO_ADD = """add to pyproject.toml at your project's root (or run `vetdp init`):

[tool.vetdp]
specs = ["mypkg.specs"]    # modules or packages defining SPECS
impl = ["mypkg"]           # where the mechanisms are
proofs = "proofs"          # the proof documents, <stem>.md"""

PROOFS_PROVIDER = "vetdp.obligations.provider:check_proofs"  # run for every project, not a [tool.vetdp] provider
_SOURCE_TREE = Path(__file__).resolve().parents[1]  # the checkout this package was installed from, if any


class ProjectError(ValueError):
    """The ``[tool.vetdp]`` table is malformed (unknown key, wrong type, unreadable TOML) or names something that
    cannot be imported."""


@dataclasses.dataclass(frozen=True)
class Project:
    """A ``pyproject.toml`` with a ``[tool.vetdp]`` table, its paths absolute (see the module docstring).

    ``specs`` None: the table declares no specs (commands that need specs say what to add). ``proofs_dir`` None:
    not declared. ``gate`` is the validated ``[gate]`` table; ``gate_source`` says where it came from.
    """

    root: Path
    pyproject: Path | None  # None: the bundled default
    proofs_dir: Path | None
    specs: tuple[str, ...] | None = None
    impl: tuple[str, ...] = ()
    pythonpath: tuple[Path, ...] = ()
    register: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    gate: dict = dataclasses.field(default_factory=dict)
    gate_source: str = ""

    @property
    def bundled(self) -> bool:
        return self.pyproject is None

    @property
    def label(self) -> str:
        return "the bundled default (vetdp's own specs)" if self.bundled else str(self.pyproject)

    def activate(self) -> None:
        """Put ``pythonpath`` on ``sys.path`` (first, once each) and import the ``register`` modules; raises
        :class:`ProjectError` naming a module that cannot be imported."""
        for entry in reversed(self.pythonpath):
            if str(entry) not in sys.path:
                sys.path.insert(0, str(entry))
        importlib.invalidate_caches()
        for name in self.register:
            _import(name, "register", self)

    def spec_module_names(self) -> list[str]:
        """The spec modules, packages expanded to their public submodules (sorted), in declared order; raises
        :class:`ProjectError` when no specs are declared or a name cannot be imported."""
        if self.specs is None:
            raise ProjectError(f"{self.pyproject}: [tool.vetdp] declares no specs; {WHAT_TO_ADD}")
        self.activate()
        names: list[str] = []
        for entry in self.specs:
            module = _import(entry, "specs", self)
            if hasattr(module, "__path__"):
                names += [f"{entry}.{i.name}" for i in sorted(pkgutil.iter_modules(module.__path__),
                                                               key=lambda i: i.name) if not i.name.startswith("_")]
            else:
                names.append(entry)
        return names

    def spec_stems(self) -> list[str]:
        """The stem of every spec module (its last name): each one pairs with ``<proofs>/<stem>.md``."""
        return sorted({n.rsplit(".", 1)[-1] for n in self.spec_module_names()})


def _import(name: str, key: str, project: Project) -> Any:
    """The module ``name`` of ``[tool.vetdp] key``, imported fenced (:mod:`vetdp.fence`): :class:`ProjectError` when
    it cannot be found, :class:`vetdp.fence.UserCodeError` when its code fails (exits, raises, hangs)."""
    from vetdp import fence

    try:
        return fence.import_module(name, f"{project.label}: [tool.vetdp] {key}:")
    except ModuleNotFoundError as e:
        where = project.label
        path = ", ".join(str(p) for p in project.pythonpath) or "(none)"
        raise ProjectError(f"{where}: [tool.vetdp] {key} names {name!r}, which cannot be imported: {e} "
                           f"(pythonpath: {path})") from None


def _load_table(pyproject: Path) -> dict | None:
    try:
        doc = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ProjectError(f"{pyproject}: cannot be read as TOML: {e}") from e
    tool = doc.get("tool", {})
    table = tool.get("vetdp") if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ProjectError(f"{pyproject}: [tool.vetdp] must be a table, got {type(table).__name__}")
    return table


def _names(pyproject: Path, key: str, value: Any, *, refs: bool = False) -> tuple[str, ...]:
    """A list of non-empty dotted names (``refs``: ``module:function``), or a single such string."""
    items = [value] if isinstance(value, str) else value
    example = '["mypkg.checks:check_more"]' if refs else '["mypkg.specs"]'
    if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
        raise ProjectError(f"{pyproject}: [tool.vetdp] {key}={value!r} must be a list of non-empty names, "
                           f"e.g. {key} = {example}")
    for v in items:
        module, sep, attr = v.partition(":")
        ok = all(part.isidentifier() for part in module.split(".")) and (attr.isidentifier() if refs else not sep)
        if not ok:
            raise ProjectError(f"{pyproject}: [tool.vetdp] {key} entry {v!r} must be "
                               f"{'MODULE:FUNCTION' if refs else 'a dotted module name'}, e.g. {key} = {example}")
    return tuple(items)


def validate_gate(gate: Any, where: str) -> dict:
    """The ``[gate]`` table checked: known keys only, globs as lists of non-empty strings, ``loose_map`` one of
    :data:`LOOSE_MAP`; raises :class:`ProjectError` naming ``where``, the key and the value."""
    if not isinstance(gate, dict):
        raise ProjectError(f"{where}: gate must be a table [gate], got {type(gate).__name__}")
    for key, value in gate.items():
        if key not in GATE_KEYS:
            raise ProjectError(f"{where}: [gate] key {key!r} is unknown; known keys: {list(GATE_KEYS)}")
        if key == "loose_map":
            if value not in LOOSE_MAP:
                raise ProjectError(f"{where}: [gate] loose_map={value!r} must be one of {list(LOOSE_MAP)}")
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ProjectError(f"{where}: [gate] {key}={value!r} must be a list of non-empty glob strings, "
                               f"e.g. {key} = [\"randomized_response::privacy.tight\"]")
    return dict(gate)


def read_gate_file(path: Path, where: str | None = None) -> dict:
    """The validated ``[gate]`` table of a gate file such as ``ci/gate.toml`` (no other section allowed)."""
    where = where or f"--config={str(path)!r}"
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ProjectError(f"{where} is not valid TOML: {e}") from None
    unknown = [k for k in doc if k != "gate"]
    if unknown:
        raise ProjectError(f"{where}: section or key {unknown[0]!r} is unknown; the only section is [gate]")
    return validate_gate(doc.get("gate", {}), where)


def load_project(pyproject: Path) -> Project | None:
    """The project of ``pyproject`` (None when it has no ``[tool.vetdp]`` table), every key validated."""
    pyproject = pyproject.resolve()
    table = _load_table(pyproject)
    if table is None:
        return None
    root = pyproject.parent
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ProjectError(f"{pyproject}: [tool.vetdp] key {unknown[0]!r} is unknown; known keys: "
                           f"{sorted(KNOWN_KEYS)}")
    proofs = table.get("proofs")
    if proofs is not None and (not isinstance(proofs, str) or not proofs):
        raise ProjectError(f"{pyproject}: [tool.vetdp] proofs={proofs!r} must be a non-empty path string")
    paths = table.get("pythonpath", ["."])
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        raise ProjectError(f"{pyproject}: [tool.vetdp] pythonpath={paths!r} must be a list of directories "
                           f"relative to this file, e.g. pythonpath = [\"src\"]")
    pythonpath = tuple((root / p).resolve() for p in paths)
    missing = [str(p) for p in pythonpath if not p.is_dir()]
    if missing:
        raise ProjectError(f"{pyproject}: [tool.vetdp] pythonpath entry {missing[0]!r} is not a directory")
    gate_value = table.get("gate", {})
    if isinstance(gate_value, str) and gate_value:
        gate_file = root / gate_value
        if not gate_file.is_file():
            raise ProjectError(f"{pyproject}: [tool.vetdp] gate={gate_value!r}: no such file {gate_file}")
        gate, gate_source = read_gate_file(gate_file, f"{gate_file} (gate of {pyproject})"), str(gate_file)
    else:
        gate = validate_gate(gate_value, f"{pyproject}: [tool.vetdp.gate]")
        gate_source = f"{pyproject} [tool.vetdp.gate]" if "gate" in table else ""
    return Project(
        root=root, pyproject=pyproject, proofs_dir=(root / proofs).resolve() if proofs else None,
        specs=_names(pyproject, "specs", table["specs"]) if "specs" in table else None,
        impl=_names(pyproject, "impl", table.get("impl", [])),
        pythonpath=pythonpath,
        register=_names(pyproject, "register", table.get("register", [])),
        providers=_names(pyproject, "providers", table.get("providers", []), refs=True),
        gate=gate, gate_source=gate_source,
    )


def find_project(start: Path | None = None) -> Project | None:
    """The nearest ``pyproject.toml`` with a ``[tool.vetdp]`` table in ``start`` (default: the working directory)
    or one of its parents; None when there is none. Raises :class:`ProjectError` for an unknown key or a value of
    the wrong type, naming the key and the file; TypeError when ``start`` is not a path."""
    if start is not None and not isinstance(start, (str, os.PathLike)):
        raise TypeError(f"start={start!r} must be a directory (a str or os.PathLike) or None for the working "
                        "directory")
    here = (Path(start) if start is not None else Path.cwd()).resolve()
    for directory in (here, *here.parents):
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            project = load_project(pyproject)
            if project is not None:
                return project
    return None


def bundled_project() -> Project:
    """The default without any table: vetdp's own specs and providers; the proofs (and ci/gate.toml) of the
    source tree next to the package when there is one (an editable install), else a proofs directory that does
    not exist, which the proofs commands report with what to add."""
    from vetdp.engine.registry import PROVIDERS

    tree = (_SOURCE_TREE / "pyproject.toml").is_file()
    gate_file = _SOURCE_TREE / "ci" / "gate.toml"
    gate = read_gate_file(gate_file, str(gate_file)) if tree and gate_file.is_file() else {}
    return Project(root=_SOURCE_TREE, pyproject=None, proofs_dir=_SOURCE_TREE / "proofs" if tree else None,
                   specs=("vetdp.specs",),
                   impl=("vetdp.impl",), providers=tuple(p for p in PROVIDERS if p != PROOFS_PROVIDER), gate=gate,
                   gate_source=str(gate_file) if tree and gate_file.is_file() else "")


_CHOSEN: list[Project] = []  # the stack of projects chosen by --project (innermost last)


def active_project(start: Path | None = None) -> Project:
    """The project commands use: the one chosen by :func:`project_scope`, else the nearest ``[tool.vetdp]``
    table upward from ``start`` (default: the working directory), else :func:`bundled_project`."""
    if _CHOSEN and start is None:
        return _CHOSEN[-1]
    found = find_project(start)
    return found if found is not None else bundled_project()


def project_option() -> str:
    """`` --project DIR`` when the active project was chosen (``--project``, or a command's own scope) and is not
    the working directory's (DIR relative to the working directory when it lies below it), else ``""``: what a
    printed reproduction needs to run in the same project."""
    if not _CHOSEN:
        return ""
    import os
    import shlex

    root = _CHOSEN[-1].root
    try:
        here = find_project()
    except ProjectError:
        here = None
    if here is not None and here.root == root:  # the working directory's own project: nothing to name
        return ""
    try:
        shown = root.relative_to(Path.cwd().resolve())
    except ValueError:
        shown = root
    return f" --project {shlex.quote(os.fspath(shown) or '.')}"


@contextlib.contextmanager
def project_scope(directory: Path | str | None) -> Iterator[Project]:
    """Within the block, :func:`active_project` is the project of ``directory`` (``--project DIR``): its
    ``pyproject.toml`` must have a ``[tool.vetdp]`` table. ``None``: the usual lookup, unchanged."""
    if directory is None:
        yield active_project()
        return
    path = Path(directory)
    pyproject = path / "pyproject.toml" if path.is_dir() else path
    if not pyproject.is_file():
        raise ProjectError(f"--project={str(directory)!r}: no pyproject.toml there; {WHAT_TO_ADD}")
    project = load_project(pyproject)
    if project is None:
        raise ProjectError(f"--project={str(directory)!r}: {pyproject} has no [tool.vetdp] table; {WHAT_TO_ADD}")
    _CHOSEN.append(project)
    try:
        yield project
    finally:
        _CHOSEN.remove(project)
