"""Pin each proof document to the code it proves.

``proofs/<stem>.md`` starts with a front matter block between ``---`` lines::

    proves: [vetdp.impl.randomized_response.make_randomized_response, ...]
    constants: [vetdp.impl.randomized_response.RANDOMIZED_RESPONSE_EPSILON, ...]
    source_digest: sha256:<hex>
    lemmas: [rr.case_bounds, ...]
    vetted: 2026-11-22
    vetted_commit: <git HEAD when blessed, or "none">

The digest is SHA-256 over each named top-level definition's AST (``ast.dump``, so
whitespace and comments do not count; docstrings and code do), in the listed order.

The z3 obligations are not listed: they are derived from ``constants:`` (:mod:`vetdp.obligations.derive`), and
the constants the pinned code uses must all be listed (else the proof is "incomplete"). ``lemmas:`` are listed
(sympy steps of the argument, not derivable from the code). A proof that relies on no obligation and no lemma is
up to date with a warning, never silently.

``bless`` also stores the vetted source text in ``proofs/pinned/<stem>.py.txt`` so that
``diff`` can show what changed since, as the seeds' "see new changes with git diff" does, followed by the
obligation ids derived when it was blessed; a later derivation that differs (an ``Expr`` constant's expression
changed, or its registration) names the new ids and the ones gone, and makes the proof outdated until blessed.
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

from vetdp import fence
from vetdp.obligations.check import run_obligation
from vetdp.obligations.derive import ConstantError, Derivation, derive, merge_obligations
from vetdp.obligations.lemmas import run_lemmas

__all__ = ["ProofDoc", "ProofStatus", "Pinning", "ProofError", "default_proofs_dir", "import_pinned_modules"]

_FIELDS = ["proves", "constants", "source_digest", "lemmas", "vetted", "vetted_commit"]
_LISTS = {"proves", "constants", "lemmas"}
_OBLIGATIONS_MARK = "# ---- obligations derived from constants: when blessed (written by vetdp proofs bless)\n"
_SECTION = re.compile(r"^# ---- (\S+)\n", re.M)


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
    if project.bundled:
        raise ProofError(f"no proofs directory: no pyproject.toml with a [tool.vetdp] table was found from "
                         f"{Path.cwd()} upward, and this vetdp is installed without its source tree, whose proofs/ "
                         f"it would use (run it in the vetdp repository, or in your project); {WHAT_TO_ADD}")
    raise ProofError(f"no proofs directory: {project.pyproject} has no [tool.vetdp] proofs key; {WHAT_TO_ADD}")


def _read(path: Path) -> str:
    """The UTF-8 text of a proof, a snapshot or a pinned module; ProofError naming the file, the place and the rule
    (unreadable, not UTF-8: vetdp.inputs.read_text)."""
    from vetdp.inputs import InputError, read_text

    try:
        return read_text(path, str(path))
    except InputError as e:
        raise ProofError(str(e)) from None


def _parse(source: str, path: Path) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as e:
        raise ProofError(f"{path}: line {e.lineno}: a syntax error: {e.msg}") from None


def import_pinned_modules(names: list[str]) -> None:
    """Import the module of every ``module.name`` pinned by a proof (``proves``/``constants``), so that the
    constants and lemmas those modules register are known before the proof's obligations run; raises
    :class:`ProofError` naming a module that cannot be imported."""
    for qualname in names:
        module = qualname.rpartition(".")[0]
        if not module:
            raise ProofError(f"{qualname!r} must be 'module.name'")
        try:
            fence.import_module(module, f"{qualname}:")
        except ImportError as e:
            raise ProofError(f"{qualname}: module {module!r} cannot be imported: {e}") from None
        except fence.UserCodeError as e:  # the module exits, raises or hangs at import
            raise ProofError(str(e)) from None


@dataclasses.dataclass
class ProofDoc:
    stem: str
    path: Path
    meta: dict
    body: str

    @classmethod
    def load(cls, path: Path) -> ProofDoc:
        text = _read(path)
        m = re.match(r"---\n(.*?)\n---\n", text, re.S)
        if not m:
            raise ProofError(f"{path}: must start with a front matter block between '---' lines")
        meta: dict = {}
        for n, line in enumerate(m.group(1).splitlines(), 2):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key == "obligations":
                raise ProofError(f"{path}:{n}: front matter key 'obligations' is no longer read: vetdp derives a "
                                 f"proof's z3 obligations from its constants: (`vetdp proofs status {path.stem}` "
                                 f"counts them); delete the line")
            if not sep or key not in _FIELDS:
                raise ProofError(f"{path}:{n}: front matter key {key!r} must be one of {_FIELDS}")
            if key in _LISTS:
                if not (value.startswith("[") and value.endswith("]")):
                    raise ProofError(f"{path}:{n}: {key} must be a [comma, separated] list")
                meta[key] = [v.strip() for v in value[1:-1].split(",") if v.strip()]
            else:
                meta[key] = value
        missing = [k for k in ("proves", "source_digest", "lemmas") if k not in meta]
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
    state: str  # "up to date" | "outdated" | "incomplete" | "failing" | "invalid"
    digest_ok: bool
    failing: tuple[str, ...]  # obligation/lemma ids that are not proved/checked
    message: str
    obligations: tuple[str, ...] = ()  # derived from constants:
    missing: tuple[str, ...] = ()  # Expr constants the pinned code uses that constants: does not cover
    warnings: tuple[str, ...] = ()  # e.g. the proof relies on no obligation and no lemma

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
        source = _read(path)
        for node in _parse(source, path).body:
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

    def _snapshot(self, stem: str) -> tuple[str, tuple[str, ...] | None]:
        """(vetted source text, obligation ids recorded when blessed or None) of ``stem``; ('', None) if none."""
        snap = self.snapshot_path(stem)
        text = _read(snap) if snap.is_file() else ""
        source, mark, tail = text.partition(_OBLIGATIONS_MARK)
        if not mark:
            return text, None
        return source, tuple(line[2:].strip() for line in tail.splitlines() if line.startswith("# "))

    def recorded_obligations(self, stem: str) -> tuple[str, ...] | None:
        """The obligation ids derived when ``stem`` was last blessed (None: blessed before they were recorded)."""
        return self._snapshot(stem)[1]

    def changed_names(self, doc: ProofDoc) -> tuple[list[str], list[str]]:
        """(the pinned names whose definition, its AST, differs from the vetted snapshot; the names the snapshot
        does not hold, i.e. pinned since), each in the listed order."""
        sections = _SECTION.split(self._snapshot(doc.stem)[0])
        vetted = dict(zip(sections[1::2], sections[2::2], strict=True))
        changed = []
        for q in doc.pinned_names:
            try:
                old = ast.parse(vetted[q].strip()).body[0]
                same = ast.dump(old, include_attributes=False) == self.definition(q)[0]
            except (KeyError, IndexError, SyntaxError):
                same = False
            if not same and q in vetted:
                changed.append(q)
        return changed, [q for q in doc.pinned_names if q not in vetted]

    def derivation(self, doc: ProofDoc) -> Derivation:
        """The obligations ``doc``'s constants bring and the Expr constants its pinned code uses but does not list
        (:func:`vetdp.obligations.derive.derive`; the modules it pins are imported first). Raises
        :class:`ProofError` for a listed name that cannot be imported or an Expr no known constant covers."""
        import_pinned_modules(doc.pinned_names)
        trees: dict[str, ast.Module] = {}

        def module_ast(module: str) -> ast.Module:
            if module not in trees:
                path = self._module_file(module)
                trees[module] = _parse(_read(path), path)
            return trees[module]

        try:
            return derive(doc.pinned_names, list(doc.meta.get("constants", [])), module_ast)
        except ConstantError as e:
            raise ProofError(f"{doc.path}: {e}") from None

    # ------------------------------------------------------------------ verdicts
    def failing_checks(self, doc: ProofDoc, obligations: tuple[str, ...], deep: bool = False,
                       z3_rlimit: int | None = None) -> list[str]:
        """Ids of the ``obligations`` (derived, :meth:`derivation`) and of the lemmas ``doc`` lists that are not
        proved/checked; z3 within ``z3_rlimit`` resource units per query (default: the deep or default one)."""
        bad = []
        for oid in obligations:
            try:
                if not run_obligation(oid, deep, z3_rlimit).proved:
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

    def freshness(self, doc: ProofDoc, derivation: Derivation) -> tuple[bool, str]:
        """(whether ``doc`` is still about the code, and what changed if not): the digest of the pinned source,
        and the obligations derived now against those recorded when it was blessed."""
        digest_ok = self.digest(doc) == doc.meta["source_digest"]
        recorded = self.recorded_obligations(doc.stem)
        now = derivation.obligations
        new = [o for o in now if recorded is not None and o not in recorded]
        gone = [o for o in (recorded or ()) if o not in now]
        moved = f"new obligations: {', '.join(new) or 'none'}; gone: {', '.join(gone) or 'none'}"
        if digest_ok:
            if not new and not gone:
                return True, f"vetted {doc.meta.get('vetted', '?')}"
            return False, (f"the obligations derived from constants: changed since vetted "
                           f"{doc.meta.get('vetted', '?')} (a constant's registration or vetdp changed): {moved}; "
                           f"check them, then `vetdp proofs bless {doc.stem}`")
        changed, added = self.changed_names(doc)
        names = [*([f"changed {', '.join(changed)}"] if changed else []),
                 *([f"pinned since {', '.join(added)}"] if added else [])]
        parts = [f"source changed since vetted {doc.meta.get('vetted', '?')}: {'; '.join(names) or '?'}"]
        edited = [q for q in changed if derivation.constants.get(q)]
        listed = [q for q in added if derivation.constants.get(q)]
        about = "; ".join([*([f"the expression of Expr constant {', '.join(edited)} changed"] if edited else []),
                           *([f"constants: now lists {', '.join(listed)}"] if listed else [])])
        if recorded is not None and (about or new or gone):
            parts.append(f"{about}: {moved}" if about else moved)
        elif about:  # blessed before the ids were recorded: name every obligation of those constants
            ids = merge_obligations([c for q in edited + listed for c in derivation.constants[q]])
            parts.append(f"{about}: their obligations are now {', '.join(ids)}")
        parts.append(f"see `vetdp proofs diff {doc.stem}`")
        return False, "; ".join(parts)

    def status(self, stem: str, deep: bool = False, z3_rlimit: int | None = None) -> ProofStatus:
        try:
            doc = self.doc(stem)
            digest_ok = self.digest(doc) == doc.meta["source_digest"]
            der = self.derivation(doc)
        except ProofError as e:
            return ProofStatus(stem, "invalid", False, (), str(e))
        failing = tuple(self.failing_checks(doc, der.obligations, deep, z3_rlimit))
        fresh, why = self.freshness(doc, der)
        warnings = () if der.obligations or doc.meta["lemmas"] else (NOTHING_CHECKED,)
        common = {"obligations": der.obligations, "missing": der.missing, "warnings": warnings}
        if der.missing:  # first: blessing it again would be refused
            return ProofStatus(stem, "incomplete", digest_ok, failing, incomplete_message(der.missing)
                               + ("" if fresh else f"; and outdated: {why}"), **common)
        if not fresh:
            return ProofStatus(stem, "outdated", digest_ok, failing, why, **common)
        if failing:
            return ProofStatus(stem, "failing", True, failing, f"{len(failing)} obligation(s)/lemma(s) failing",
                               **common)
        return ProofStatus(stem, "up to date", True, (), why, **common)

    def diff(self, stem: str) -> str:
        """Unified diff from the vetted source snapshot to the current source ('' if unchanged), followed by the
        derived obligations when the snapshot records them."""
        doc = self.doc(stem)
        old = _read(self.snapshot_path(stem)) if self.snapshot_path(stem).is_file() else ""
        new = self.source_text(doc)
        if self.recorded_obligations(stem) is not None:
            new += _obligations_block(self.derivation(doc).obligations)
        return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                            f"vetted/{stem} ({doc.meta.get('vetted', '?')})", f"current/{stem}"))

    def bless(self, stem: str, deep: bool = False, today: datetime.date | None = None,
              z3_rlimit: int | None = None) -> ProofDoc:
        """Re-pin ``stem`` to the current source and record its derived obligations; raises ProofError while the
        pinned code uses a constant the proof does not list, or a check it relies on fails."""
        doc = self.doc(stem)
        der = self.derivation(doc)
        if der.missing:
            raise ProofError(f"refusing to bless {stem}: {incomplete_message(der.missing)}")
        failing = self.failing_checks(doc, der.obligations, deep, z3_rlimit)
        if failing:
            raise ProofError(f"refusing to bless {stem}: failing {failing}")
        doc.meta["source_digest"] = self.digest(doc)
        doc.meta["vetted"] = (today or datetime.date.today()).isoformat()
        doc.meta["vetted_commit"] = _git_head(self.proofs_dir)
        doc.save()
        snap = self.snapshot_path(stem)
        snap.parent.mkdir(parents=True, exist_ok=True)
        snap.write_text(self.source_text(doc) + _obligations_block(der.obligations), encoding="utf-8")
        return doc


NOTHING_CHECKED = ("the proof relies on no z3 obligation and no lemma: beyond its digest nothing checks it (list "
                   "the Expr constants it relies on in constants:, its algebraic steps in lemmas:)")


def incomplete_message(missing: tuple[str, ...]) -> str:
    return f"the pinned code uses Expr constants that constants: does not cover: {'; '.join(missing)}"


def _obligations_block(ids: tuple[str, ...]) -> str:
    return _OBLIGATIONS_MARK + "".join(f"# {oid}\n" for oid in ids)


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
