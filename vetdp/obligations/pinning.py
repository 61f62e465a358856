"""Pin each proof document to the code it proves.

``proofs/<stem>.md`` starts with a front matter block between ``---`` lines::

    proves: [vetdp.impl.randomized_response.make_randomized_response, ...]
    constants: [vetdp.impl.randomized_response.RANDOMIZED_RESPONSE_EPSILON]
    source_digest: sha256:<hex>
    obligations: [randomized_response.epsilon.sound, contract.inf_ln, ...]
    lemmas: [rr.case_bounds, ...]
    vetted: 2026-11-22
    vetted_commit: <git HEAD when blessed, or "none">

The digest is SHA-256 over each named top-level definition's AST (``ast.dump``, so
whitespace and comments do not count; docstrings and code do), in the listed order.
``bless`` also stores the vetted source text in ``proofs/pinned/<stem>.py.txt`` so that
``diff`` can show what changed since, as the seeds' "see new changes with git diff" does.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import difflib
import hashlib
import importlib
import importlib.util
import os
import re
import subprocess
from pathlib import Path

from vetdp.obligations.check import run_obligation
from vetdp.obligations.lemmas import run_lemmas

__all__ = ["ProofDoc", "ProofStatus", "Pinning", "ProofError", "default_proofs_dir", "import_pinned_modules"]

_FIELDS = ["proves", "constants", "source_digest", "obligations", "lemmas", "vetted", "vetted_commit"]
_LISTS = {"proves", "constants", "obligations", "lemmas"}


class ProofError(ValueError):
    """A proof document or a name in it is malformed or cannot be found."""


def default_proofs_dir() -> Path:
    """Where the proofs are when nobody says: ``[tool.vetdp] proofs`` of the active project (``--project DIR``, else
    the nearest ``pyproject.toml`` with a table upward from the working directory), else ``proofs/`` of the source
    tree this package was installed from (an editable install). The directory may not exist:
    :meth:`Pinning.require_proofs` says so. Raises :class:`ProofError` for a malformed ``[tool.vetdp]``, and when
    there is neither a declared nor a bundled proofs directory, saying what to add."""
    from vetdp.project import WHAT_TO_ADD, ProjectError, active_project

    try:
        project = active_project()
    except ProjectError as e:
        raise ProofError(str(e)) from None
    if project.proofs_dir is not None:
        return project.proofs_dir
    where = "vetdp is installed without its source tree" if project.bundled else f"{project.pyproject}"
    raise ProofError(f"no proofs directory: {where} declares none, and no pyproject.toml with a [tool.vetdp] table "
                     f"was found from {Path.cwd()} upward; {WHAT_TO_ADD}")


def import_pinned_modules(names: list[str]) -> None:
    """Import the module of every ``module.name`` pinned by a proof (``proves``/``constants``), so that the
    constants and lemmas those modules register are known before the proof's obligations run; raises
    :class:`ProofError` naming a module that cannot be imported."""
    for qualname in names:
        module = qualname.rpartition(".")[0]
        if not module:
            raise ProofError(f"{qualname!r} must be 'module.name'")
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise ProofError(f"{qualname}: module {module!r} cannot be imported: {e}") from None


@dataclasses.dataclass
class ProofDoc:
    stem: str
    path: Path
    meta: dict
    body: str

    @classmethod
    def load(cls, path: Path) -> ProofDoc:
        text = path.read_text(encoding="utf-8")
        m = re.match(r"---\n(.*?)\n---\n", text, re.S)
        if not m:
            raise ProofError(f"{path}: must start with a front matter block between '---' lines")
        meta: dict = {}
        for n, line in enumerate(m.group(1).splitlines(), 2):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if not sep or key not in _FIELDS:
                raise ProofError(f"{path}:{n}: front matter key {key!r} must be one of {_FIELDS}")
            if key in _LISTS:
                if not (value.startswith("[") and value.endswith("]")):
                    raise ProofError(f"{path}:{n}: {key} must be a [comma, separated] list")
                meta[key] = [v.strip() for v in value[1:-1].split(",") if v.strip()]
            else:
                meta[key] = value
        missing = [k for k in ("proves", "source_digest", "obligations", "lemmas") if k not in meta]
        if missing:
            raise ProofError(f"{path}: front matter lacks {missing}")
        return cls(path.stem, path, meta, text[m.end():])

    def front_matter(self) -> str:
        lines = []
        for k in _FIELDS:
            if k in self.meta:
                v = self.meta[k]
                lines.append(f"{k}: [{', '.join(v)}]" if k in _LISTS else f"{k}: {v}")
        return "---\n" + "\n".join(lines) + "\n---\n"

    def save(self) -> None:
        self.path.write_text(self.front_matter() + self.body, encoding="utf-8")

    @property
    def pinned_names(self) -> list[str]:
        return list(self.meta["proves"]) + list(self.meta.get("constants", []))


@dataclasses.dataclass(frozen=True)
class ProofStatus:
    stem: str
    state: str  # "up to date" | "outdated" | "failing" | "invalid"
    digest_ok: bool
    failing: tuple[str, ...]  # obligation/lemma ids that are not proved/checked
    message: str

    @property
    def ok(self) -> bool:
        return self.state == "up to date"


class Pinning:
    """Proof documents under ``proofs_dir``; sources resolved by import, or under ``package_dirs``
    (package prefix -> directory, e.g. ``{"vetdp.impl": tmp/"impl"}``) for a copy of the tree.

    Defaults come from the environment when set: ``VETDP_PROOFS_DIR`` and ``VETDP_IMPL_DIR``
    (so ``vetdp check`` can vet a copy of the tree)."""

    def __init__(self, proofs_dir: Path | None = None, package_dirs: dict[str, Path] | None = None):
        env_proofs, env_impl = os.environ.get("VETDP_PROOFS_DIR"), os.environ.get("VETDP_IMPL_DIR")
        if proofs_dir is None:
            proofs_dir = Path(env_proofs) if env_proofs else default_proofs_dir()
        if package_dirs is None and env_impl:
            package_dirs = {"vetdp.impl": Path(env_impl)}
        self.proofs_dir = Path(proofs_dir)
        self.package_dirs = {k: Path(v) for k, v in (package_dirs or {}).items()}

    # ------------------------------------------------------------------ documents
    def require_proofs(self, spec_modules: list[str] | None = None, label: str | None = None) -> list[str]:
        """The proof stems, after checking that there is something to check: raises :class:`ProofError` when the
        directory is missing, holds no proof document, or (given the spec'd module stems) holds no proof of any
        of them, naming the directory and how it was chosen (or ``label``, e.g. the option that chose it)."""
        where = f"{label}={str(self.proofs_dir)!r}" if label else (
            f"proofs directory {str(self.proofs_dir)!r} (set it with --proofs-dir, VETDP_PROOFS_DIR or "
            f"[tool.vetdp] proofs = \"...\" in pyproject.toml)")
        if not self.proofs_dir.is_dir():
            raise ProofError(f"{where} does not exist")
        stems = self.stems()
        if not stems:
            raise ProofError(f"{where} holds no proof document (*.md)")
        if spec_modules and not set(stems) & set(spec_modules):
            raise ProofError(f"{where} holds no proof of a spec'd module {sorted(spec_modules)}; it holds {stems}")
        return stems

    def stems(self) -> list[str]:
        return sorted(p.stem for p in self.proofs_dir.glob("*.md"))

    def doc(self, stem: str) -> ProofDoc:
        path = self.proofs_dir / f"{stem}.md"
        if not path.is_file():
            raise ProofError(f"name={stem!r} must be one of the proofs {self.stems()} in {self.proofs_dir}")
        return ProofDoc.load(path)

    # ------------------------------------------------------------------ sources
    def _module_file(self, module: str) -> Path:
        for prefix, directory in self.package_dirs.items():
            if module.startswith(prefix + "."):
                return directory / (module[len(prefix) + 1:].replace(".", "/") + ".py")
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise ProofError(f"module {module!r} cannot be found")
        return Path(spec.origin)

    def definition(self, qualname: str) -> tuple[str, str]:
        """(normalised AST dump, source text) of the top-level definition ``module.name``."""
        module, _, name = qualname.rpartition(".")
        path = self._module_file(module)
        source = path.read_text(encoding="utf-8")
        for node in ast.parse(source).body:
            names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else \
                [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
            if name in names:
                return ast.dump(node, include_attributes=False), ast.get_source_segment(source, node) or ""
        raise ProofError(f"{qualname}: no top-level definition {name!r} in {path}")

    def digest(self, doc: ProofDoc) -> str:
        h = hashlib.sha256()
        for q in doc.pinned_names:
            h.update(q.encode() + b"\n" + self.definition(q)[0].encode() + b"\n")
        return "sha256:" + h.hexdigest()

    def source_text(self, doc: ProofDoc) -> str:
        return "".join(f"# ---- {q}\n{self.definition(q)[1]}\n\n" for q in doc.pinned_names)

    def snapshot_path(self, stem: str) -> Path:
        return self.proofs_dir / "pinned" / f"{stem}.py.txt"

    # ------------------------------------------------------------------ verdicts
    def failing_checks(self, doc: ProofDoc, deep: bool = False) -> list[str]:
        """Ids of the obligations and lemmas ``doc`` relies on that are not proved/checked (the modules it pins are
        imported first, so that what they register is known)."""
        import_pinned_modules(doc.pinned_names)
        bad = []
        for oid in doc.meta["obligations"]:
            try:
                if not run_obligation(oid, deep).proved:
                    bad.append(oid)
            except (KeyError, ValueError):
                bad.append(f"{oid} (unknown id)")
        known = {r.id: r for r in run_lemmas([lid for lid in doc.meta["lemmas"] if _known_lemma(lid)])}
        for lid in doc.meta["lemmas"]:
            if lid not in known:
                bad.append(f"{lid} (unknown id)")
            elif not known[lid].passed:
                bad.append(lid)
        return bad

    def status(self, stem: str, deep: bool = False) -> ProofStatus:
        try:
            doc = self.doc(stem)
            digest_ok = self.digest(doc) == doc.meta["source_digest"]
        except ProofError as e:
            return ProofStatus(stem, "invalid", False, (), str(e))
        failing = tuple(self.failing_checks(doc, deep))
        if not digest_ok:
            return ProofStatus(stem, "outdated", False, failing,
                               f"source changed since vetted {doc.meta.get('vetted', '?')}; "
                               f"see `vetdp proofs diff {stem}`")
        if failing:
            return ProofStatus(stem, "failing", True, failing, f"{len(failing)} obligation(s)/lemma(s) failing")
        return ProofStatus(stem, "up to date", True, (), f"vetted {doc.meta.get('vetted', '?')}")

    def diff(self, stem: str) -> str:
        """Unified diff from the vetted source snapshot to the current source ('' if unchanged)."""
        doc = self.doc(stem)
        snap = self.snapshot_path(stem)
        old = snap.read_text(encoding="utf-8") if snap.is_file() else ""
        new = self.source_text(doc)
        return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                            f"vetted/{stem} ({doc.meta.get('vetted', '?')})", f"current/{stem}"))

    def bless(self, stem: str, deep: bool = False, today: datetime.date | None = None) -> ProofDoc:
        """Re-pin ``stem`` to the current source; raises ProofError while a check it relies on fails."""
        doc = self.doc(stem)
        failing = self.failing_checks(doc, deep)
        if failing:
            raise ProofError(f"refusing to bless {stem}: failing {failing}")
        doc.meta["source_digest"] = self.digest(doc)
        doc.meta["vetted"] = (today or datetime.date.today()).isoformat()
        doc.meta["vetted_commit"] = _git_head(self.proofs_dir)
        doc.save()
        snap = self.snapshot_path(stem)
        snap.parent.mkdir(parents=True, exist_ok=True)
        snap.write_text(self.source_text(doc), encoding="utf-8")
        return doc


def _known_lemma(lid: str) -> bool:
    from vetdp.obligations.lemmas import LEMMAS

    return lid in LEMMAS


def _git_head(where: Path) -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=where, capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "none"
    return out.stdout.strip() if out.returncode == 0 else "none"
