"""``vetdp init``: scaffold a project that vets its own mechanism.

Writes the ``[tool.vetdp]`` table (and pytest's ``vetdp = true``), a sample mechanism whose privacy constants are
``Expr`` with directed rounding, its spec, its proof document (pinned by blessing it, which runs its z3
obligations and lemmas) and a GitHub Actions workflow. ``vetdp check`` passes on the result straight away; replace
the sample with your mechanism and follow the failures. Never overwrites a file: an existing one is an error (exit 2)
naming it, except ``pyproject.toml`` without a ``[tool.vetdp]`` table, to which the tables are appended.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from vetdp.cli import ExitCode

__all__ = ["init"]

_TABLE = """
[tool.vetdp]
specs = ["{pkg}.specs"]     # modules or packages defining SPECS
impl = ["{pkg}"]            # the mechanisms; proofs/<stem>.md pin their source
proofs = "proofs"
pythonpath = ["src"]        # so that vetdp imports {pkg} without installing it
register = ["{pkg}.lemmas"]  # imported first: registers the lemmas the proofs rely on

[tool.vetdp.gate]
advisory = []               # globs over "spec::check" whose failures do not fail the gate
deep_only = []              # globs of checks run only with --deep
loose_map = "fail"          # or "warn": a sound but loose privacy map

[tool.pytest.ini_options]
pythonpath = ["src"]
vetdp = true                # pytest collects every spec x clause and proof check
"""

# Production depends on vetdp's runtime (NumPy only); the tests and CI on its harness (the vetdp command, z3, ...).
_PYPROJECT = """[project]
name = "{pkg}"
version = "0.1.0"
requires-python = ">=3.11"
# vetdp is not on the package index: a bare "vetdp" would resolve to whoever registers that name there. These
# requirements name {where} (PEP 508 direct references);
# point them at your copy of vetdp (a wheel built by `pip wheel --no-deps -w dist .` in its checkout, or
# "vetdp @ git+<your vetdp repository URL>@<commit>") when you move the project.
dependencies = ["{runtime}"]  # the runtime: what the mechanisms import in production (NumPy only)

[project.optional-dependencies]
test = ["{harness}", "pytest"]  # what vets them: the vetdp command, its pytest plugin, z3, sympy, ...
"""


def vetdp_reference() -> tuple[str, str]:
    """(URL, what it is) of the vetdp this command runs from, as a PEP 508 direct reference can name it: the
    wheel, checkout or git commit pip recorded when installing it (its ``direct_url.json``), else the source tree
    next to the package; a requirement built on it resolves to this project and nothing else."""
    import importlib.metadata
    import json

    try:
        recorded = json.loads(importlib.metadata.distribution("vetdp").read_text("direct_url.json") or "null")
    except (importlib.metadata.PackageNotFoundError, json.JSONDecodeError):
        recorded = None
    if isinstance(recorded, dict) and isinstance(recorded.get("url"), str):
        url, vcs = recorded["url"], recorded.get("vcs_info")
        if isinstance(vcs, dict) and vcs.get("vcs") and vcs.get("commit_id"):
            return f"{vcs['vcs']}+{url}@{vcs['commit_id']}", f"the {vcs['vcs']} commit vetdp was installed from"
        return url, "the wheel vetdp was installed from" if url.endswith(".whl") else "the vetdp checkout it was " \
            "installed from"
    tree = Path(__file__).resolve().parents[2]
    return tree.as_uri(), "the vetdp source tree this command runs from"


def _pyproject(pkg: str) -> str:
    url, where = vetdp_reference()
    return _PYPROJECT.format(pkg=pkg, where=where, runtime=f"vetdp @ {url}", harness=f"vetdp[harness] @ {url}")

_MECHANISM = '''"""Binary randomized response parameterised by ε: the sample mechanism of `vetdp init`.

Spec: src/{pkg}/specs/{stem}.py · Proof: proofs/{stem}.md
"""

from __future__ import annotations

from vetdp.api import (
    ONE,
    ZERO,
    AtomDomain,
    DiscreteDistance,
    MaxDivergence,
    Measurement,
    PrivacyConstant,
    check_float,
    check_interval,
    register_constant,
    sample_bernoulli_float,
    var,
)

MAX_EPSILON = 700.0
epsilon, p = var("epsilon"), var("p")

# p = 1/(1 + e^-ε), the probability of telling the truth. e^-ε and the sum are rounded up, the reciprocal down,
# so p_float <= p: never more truthful than ε allows.
KEEP_PROBABILITY = register_constant(
    "{stem}.keep_probability", ONE.neg_inf_div(ONE.inf_add(ZERO.inf_sub(epsilon).inf_exp())),
    ranges={{"epsilon": (5e-324, MAX_EPSILON)}}, bound="lower", result=(0.5, 1))

P_MAX = KEEP_PROBABILITY.to_float({{"epsilon": MAX_EPSILON}})  # p_float grows with ε: its largest value

# The loss of the p actually used: ln(p/(1 − p)); 1 − p rounded down, the quotient and ln up: an upper bound.
LOSS = register_constant("{stem}.epsilon", p.inf_div(ONE.neg_inf_sub(p)).inf_ln(),
                         ranges={{"p": (0.5, P_MAX)}}, bound="upper", result=(0, 711))


def make_{stem}(epsilon: float) -> Measurement:
    """ε-DP randomized response on a bool: the truth with probability p = 1/(1 + e^-ε) (rounded down).

    Preconditions: ``epsilon`` a float in (0, 700].
    Privacy: map(0) = 0; map(d_in >= 1) = ln(p/(1 − p)) rounded up, for the p used (at most ε).
    Proof: proofs/{stem}.md
    """
    eps = check_float("epsilon", epsilon)
    check_interval("epsilon", eps, 0, MAX_EPSILON, lo_closed=False, hi_closed=True)
    keep = KEEP_PROBABILITY.to_float({{"epsilon": eps}})
    constant = PrivacyConstant(LOSS, {{"p": keep}})
    loss = constant.value

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else loss

    def function(truth: bool) -> bool:
        return truth if sample_bernoulli_float(keep) else not truth

    return Measurement(input_domain=AtomDomain(bool), input_metric=DiscreteDistance(), output_measure=MaxDivergence(),
                       function=function, privacy_map=privacy_map, privacy_constant=constant,
                       parameters={{"epsilon": eps}}, name="make_{stem}")
'''

_SPEC = '''"""Hoare triple of make_{stem} (src/{pkg}/{stem}.py).

Pre: epsilon a float in (0, 700].
Law: P[y = x] = p, P[y = not x] = 1 − p, p = KEEP_PROBABILITY(epsilon).
Post: map(0) = 0, map(d_in >= 1) >= the exact max-divergence (tight within 2**-30).
Proof: proofs/{stem}.md
"""

import math
from fractions import Fraction

from hypothesis import strategies as st

from {pkg}.{stem} import KEEP_PROBABILITY, MAX_EPSILON
from vetdp.api import BadParams, MeasurementSpec, floats_in


def law(params, x):
    keep = Fraction(KEEP_PROBABILITY.to_float({{"epsilon": params["epsilon"]}}))
    return {{x: keep, not x: 1 - keep}}


def _bad(id_, error, **kw):
    return BadParams(id_, {{"epsilon": 1.0, **kw}}, error, ("epsilon",))


SPECS = [
    MeasurementSpec(
        name="{stem}",
        constructor="make_{stem}",
        constructor_ref="{pkg}.{stem}:make_{stem}",
        build=lambda ctor, params: ctor(params["epsilon"]),
        params=lambda deep: st.fixed_dictionaries(
            {{"epsilon": floats_in(5e-324, MAX_EPSILON, edges=[5e-324, 0.5, 1.0, 40.0, MAX_EPSILON])}}),
        examples=[{{"epsilon": 1.0}}, {{"epsilon": 5e-324}}, {{"epsilon": MAX_EPSILON}}],
        bad=[
            _bad("epsilon_zero", ValueError, epsilon=0.0),
            _bad("epsilon_above_700", ValueError, epsilon=math.nextafter(MAX_EPSILON, math.inf)),
            _bad("epsilon_nan", ValueError, epsilon=math.nan),
            _bad("epsilon_str", TypeError, epsilon="1"),
        ],
        inputs=lambda params: [True, False],
        outside=lambda params: [1, 0, None, "True"],
        law=law,
        describe="binary randomized response (the vetdp init sample)",
    )
]
'''

_LEMMAS = '''"""The algebraic steps of the proofs as lemmas vetdp checks (registered through [tool.vetdp] register)."""

import sympy as sp

from {pkg}.{stem} import KEEP_PROBABILITY, LOSS
from vetdp.api import lemma


@lemma("{stem}.loss_is_epsilon", "ln(p/(1 − p)) = ε for p = 1/(1 + e^-ε)")
def _loss_is_epsilon():
    keep = KEEP_PROBABILITY.to_sympy()
    loss = LOSS.to_sympy().subs(sp.Symbol("p", real=True), keep)
    diff = sp.simplify(sp.expand_log(sp.simplify(loss), force=True) - sp.Symbol("epsilon", real=True))
    return ("proved" if diff == 0 else "refuted", "sympy", f"ln(p/(1−p)) − ε = {{diff}}")
'''

_PROOF = """---
proves: [{pkg}.{stem}.make_{stem}]
constants: [{pkg}.{stem}.KEEP_PROBABILITY, {pkg}.{stem}.LOSS]
source_digest: sha256:unset
lemmas: [{stem}.loss_is_epsilon]
vetted: never
vetted_commit: none
---
# `make_{stem}`

Impl: `src/{pkg}/{stem}.py` · Spec: `src/{pkg}/specs/{stem}.py` · Status: `vetdp proofs status {stem}`.

## Preconditions

`epsilon` a float64 in $(0, 700]$; anything else raises naming it.

## Pseudocode

```
1  def make_{stem}(epsilon):
2      check 0 < epsilon <= 700
3      p = KEEP_PROBABILITY(epsilon)           # 1/(1 + e^-ε), rounded down
4      eps = LOSS(p)                           # ln(p/(1 − p)), rounded up
5      function(x) = x with probability p, else not x
6      privacy_map(d_in) = 0 if d_in == 0 else eps
```

## Postcondition

For all $x \\ne x'$: $D_\\infty(M(x) \\,\\|\\, M(x')) \\le \\mathrm{{map}}(1)$,
and $\\mathrm{{map}}(1) \\le \\varepsilon$.

## Proof

The output equals the input with probability exactly the float $p \\ge \\tfrac12$, so the largest likelihood
ratio is $p/(1-p)$ and the loss is $\\ln\\frac{{p}}{{1-p}}$. Obligations `{stem}.epsilon.*` (z3) prove that line 4
never overflows and that its float is $\\ge$ that loss; obligations `{stem}.keep_probability.*` that the float $p$
is $\\le 1/(1+e^{{-\\varepsilon}})$ and in $[\\tfrac12, 1]$, so the loss is at most $\\varepsilon$ (lemma
`{stem}.loss_is_epsilon`). $\\square$
"""

_WORKFLOW = """# vetdp: the merge gate runs every spec, proof and z3 obligation of this project;
# a nightly run goes deeper.
name: vetdp
on:
  push:
  pull_request:
  schedule:
    - cron: "17 3 * * *"

jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      # vetdp is not on PyPI: set the repository variable VETDP_SOURCE, e.g.
      # "vetdp[harness] @ git+https://github.com/OWNER/vetdp.git@TAG" or a wheel's URL followed by [harness]:
      # CI needs the harness extra (the vetdp command, z3, ...); production needs only the runtime, vetdp.
      - run: pip install "${{{{ vars.VETDP_SOURCE }}}}" pytest
      - run: vetdp check --junit vetdp.xml
      - run: vetdp proofs status
      - if: always()
        uses: actions/upload-artifact@v4
        with:
          name: vetdp-report
          path: vetdp.xml

  deep:
    if: github.event_name == 'schedule'
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - run: pip install "${{{{ vars.VETDP_SOURCE }}}}" pytest
      - run: vetdp check --deep --markdown vetdp-deep.md
"""


_RESERVED_STEMS = ("specs", "lemmas")  # the package's own modules: a mechanism of that name would overwrite one


def _identifier(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """A lower-case Python identifier that is not a keyword; the package must not shadow a standard-library module
    or vetdp, the mechanism not one of the package's own modules."""
    import keyword

    name = param.opts[0]
    if not value.isidentifier() or not value.islower() or keyword.iskeyword(value) or keyword.issoftkeyword(value):
        raise click.BadParameter(f"{name}={value!r} must be a lower-case Python identifier that is not a keyword, "
                                 "e.g. mydp", ctx=ctx, param=param)
    if name == "--package" and (value in sys.stdlib_module_names or value == "vetdp"):
        raise click.BadParameter(f"{name}={value!r} would shadow the module {value!r} of "
                                 f"{'vetdp' if value == 'vetdp' else 'the standard library'}; choose another name",
                                 ctx=ctx, param=param)
    if name == "--mechanism" and value in _RESERVED_STEMS:
        raise click.BadParameter(f"{name}={value!r} is a module the scaffold writes itself "
                                 f"({', '.join(_RESERVED_STEMS)}); choose another name", ctx=ctx, param=param)
    return value


def _target(directory: str) -> Path:
    """The project folder, checked before anything is written: its nearest existing folder (itself or a parent)
    must be a folder that can be written; exit 2 naming it otherwise (under a regular file, read-only, ...)."""
    import tempfile

    root = Path(directory).resolve()
    base = next(p for p in (root, *root.parents) if p.exists())
    if not base.is_dir():
        raise click.BadParameter(f"{directory!r}: {str(base)!r} is a file, not a folder", param_hint="DIRECTORY")
    try:
        with tempfile.TemporaryFile(dir=base):
            pass
    except OSError as e:
        raise click.BadParameter(f"{directory!r}: {str(base)!r} cannot be written: {e.strerror or e}",
                                 param_hint="DIRECTORY") from None
    return root


class _Scaffold:
    """What ``vetdp init`` writes, undone as a whole when any step fails (nothing half-written is left behind):
    files it created are removed, folders it created are removed with what is in them (caches of the imports),
    ``pyproject.toml`` gets its former text back."""

    def __init__(self, root: Path, pyproject: Path):
        self.root, self.pyproject = root, pyproject
        self.files: list[Path] = []
        self.folders: list[Path] = []
        self.pyproject_before = pyproject.read_bytes() if pyproject.is_file() else None

    def folder(self, path: Path) -> None:
        missing = [p for p in (path, *path.parents) if not p.exists()]
        for p in reversed(missing):
            p.mkdir()
            self.folders.append(p)

    def write(self, path: Path, text: str) -> None:
        self.folder(path.parent)
        if path != self.pyproject:
            self.files.append(path)
        path.write_text(text, encoding="utf-8")

    def undo(self) -> None:
        import contextlib
        import shutil

        for path in self.files:
            with contextlib.suppress(OSError):
                path.unlink()
                for cache in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
                    cache.unlink()
        with contextlib.suppress(OSError):
            if self.pyproject_before is None:
                self.pyproject.unlink(missing_ok=True)
            else:
                self.pyproject.write_bytes(self.pyproject_before)
        for folder in reversed(self.folders):
            shutil.rmtree(folder, ignore_errors=True)


@click.command()
@click.argument("directory", type=click.Path(), default=".")
@click.option("--package", "pkg", default="mydp", show_default=True, callback=_identifier,
              help="The Python package to create under src/.")
@click.option("--mechanism", "stem", default="coin", show_default=True, callback=_identifier,
              help="The sample mechanism's stem (module, spec and proof are paired by it).")
def init(directory: str, pkg: str, stem: str) -> None:
    """Scaffold a project that vets its own mechanism: [tool.vetdp], a sample mechanism, its spec, its pinned
    proof and a CI workflow; `vetdp check` passes on it straight away. Exit 2 if a file it would write exists, or
    if any step fails (then nothing is left written)."""
    root = _target(directory)
    pyproject = root / "pyproject.toml"
    files = {
        root / "src" / pkg / "__init__.py": f'"""{pkg}: differential-privacy mechanisms vetted with vetdp."""\n',
        root / "src" / pkg / f"{stem}.py": _MECHANISM.format(pkg=pkg, stem=stem),
        root / "src" / pkg / "lemmas.py": _LEMMAS.format(pkg=pkg, stem=stem),
        root / "src" / pkg / "specs" / "__init__.py": f'"""The specs of {pkg}, one module per mechanism."""\n',
        root / "src" / pkg / "specs" / f"{stem}.py": _SPEC.format(pkg=pkg, stem=stem),
        root / ".github" / "workflows" / "vetdp.yml": _WORKFLOW.format(),
    }
    proof = root / "proofs" / f"{stem}.md"
    existing = [str(p) for p in [*files, proof, root / "proofs" / "pinned" / f"{stem}.py.txt"] if p.exists()]
    if pyproject.is_file() and "[tool.vetdp]" in pyproject.read_text(encoding="utf-8", errors="replace"):
        existing.insert(0, f"{pyproject} (already has a [tool.vetdp] table)")
    if existing:
        click.echo(f"error: vetdp init never overwrites; already there: {', '.join(existing)}", err=True)
        sys.exit(int(ExitCode.ERROR))
    scaffold = _Scaffold(root, pyproject)
    try:
        scaffold.folder(root)
        for path, text in files.items():
            scaffold.write(path, text)
        head = pyproject.read_text(encoding="utf-8") if pyproject.is_file() else _pyproject(pkg)
        scaffold.write(pyproject, head.rstrip("\n") + "\n" + _TABLE.format(pkg=pkg))
        scaffold.write(proof, _PROOF.format(pkg=pkg, stem=stem))
        scaffold.files.append(root / "proofs" / "pinned" / f"{stem}.py.txt")  # written by bless
        error = _bless(root, stem)
    except BaseException as e:
        scaffold.undo()
        if isinstance(e, OSError):
            click.echo(f"error: vetdp init could not write the scaffold ({e.strerror or e}); nothing was left "
                       "written", err=True)
            sys.exit(int(ExitCode.ERROR))
        raise
    if error is not None:
        scaffold.undo()
        click.echo(f"error: the scaffold's proof could not be blessed ({error}); nothing was left written", err=True)
        sys.exit(int(ExitCode.ERROR))
    for path in [pyproject, *files, proof]:
        click.echo(f"wrote {path.relative_to(root)}")
    click.echo(f"next: cd {root} && vetdp check   (then replace src/{pkg}/{stem}.py with your mechanism)")
    sys.exit(int(ExitCode.OK))


def _bless(root: Path, stem: str) -> str | None:
    """Bless proofs/<stem>.md: its obligations are derived from its constants: (z3 and sympy run now). None when
    done, else why not."""
    from vetdp.fence import UserCodeError
    from vetdp.obligations.pinning import Pinning, ProofError
    from vetdp.project import ProjectError, project_scope

    try:
        with project_scope(root) as project:
            project.spec_module_names()  # imports the package, which registers its constants and lemmas
            Pinning(project.proofs_dir).bless(stem)
    except (ProjectError, ProofError, UserCodeError, KeyError) as e:
        return str(e)
    return None
