"""The project vetdp is run in: its ``[tool.vetdp]`` table in ``pyproject.toml``, found upward from a directory.

A project declares where its proof documents live::

    [tool.vetdp]
    proofs = "proofs"          # relative to the directory holding pyproject.toml

so that an installed (non-editable) vetdp run at the project root finds the same proofs, and therefore the same z3
obligations and lemmas, as an editable install does. Unknown keys are rejected by name, so a misspelling never
silently turns a check off.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

__all__ = ["Project", "ProjectError", "find_project", "KNOWN_KEYS"]

KNOWN_KEYS = frozenset({"proofs"})


class ProjectError(ValueError):
    """The ``[tool.vetdp]`` table is malformed (unknown key, wrong type, unreadable TOML)."""


@dataclasses.dataclass(frozen=True)
class Project:
    """A ``pyproject.toml`` with a ``[tool.vetdp]`` table. ``proofs_dir`` is absolute, or None when not declared."""

    root: Path
    pyproject: Path
    proofs_dir: Path | None


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


def find_project(start: Path | None = None) -> Project | None:
    """The nearest ``pyproject.toml`` with a ``[tool.vetdp]`` table in ``start`` (default: the working directory)
    or one of its parents; None when there is none. Raises :class:`ProjectError` for an unknown key or a value of
    the wrong type, naming the key and the file."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        pyproject = directory / "pyproject.toml"
        if not pyproject.is_file():
            continue
        table = _load_table(pyproject)
        if table is None:
            continue
        unknown = sorted(set(table) - KNOWN_KEYS)
        if unknown:
            raise ProjectError(f"{pyproject}: [tool.vetdp] key {unknown[0]!r} is unknown; known keys: "
                               f"{sorted(KNOWN_KEYS)}")
        proofs = table.get("proofs")
        if proofs is not None and (not isinstance(proofs, str) or not proofs):
            raise ProjectError(f"{pyproject}: [tool.vetdp] proofs={proofs!r} must be a non-empty path string")
        return Project(directory, pyproject, (directory / proofs).resolve() if proofs else None)
    return None
