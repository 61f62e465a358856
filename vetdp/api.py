"""The stable public API for vetting your own mechanism (see docs/vet-your-own-mechanism.md).

Everything a project outside vetdp needs to write a mechanism, its spec and the facts its proof relies on is
importable from here, and only from here is it promised to stay: a name listed in ``__all__`` keeps its meaning and
its signature within a major version (new optional keyword arguments may be added); anything imported from other
vetdp modules may move. A test (``tests/test_project_config.py``) checks that ``__all__`` is exactly the public names
of this module and that each resolves.

* **Specs** — :class:`MeasurementSpec` (a constructor's Hoare triple: preconditions as :class:`BadParams` rows,
  parameter strategies, inputs, the stated law), :class:`EstimatorSpec` (unbiasedness, variance and MSE claims).
  A spec outside vetdp names its code with ``constructor_ref="pkg.module:make_x"`` / ``estimator_ref``;
  :func:`pld_of_laws` gives the privacy-loss distribution of an accountant's worst pair (``accountant_pair``).
* **Boundary-aware strategies** — :func:`floats_in` (edge floats first), :func:`at_least` (a rational rounded up
  to a float), :func:`boundary_probabilities`, :func:`tiny_float` / :func:`tiny_floats` (where halving rounds),
  :func:`seeded_permutation`, :func:`spread`.
* **Constants with directed rounding** — :func:`var`, :data:`ONE`, :data:`ZERO`, :data:`TWO`, :func:`const`,
  and the ``Expr`` methods ``inf_add``/``neg_inf_add``, ``inf_div``, ``inf_ln``, ``neg_inf_exp``, ...;
  :func:`register_constant` gives a constant its z3 obligations (casts, definedness, soundness, range), listed by
  :func:`constant_obligations`; :func:`lemma` registers a checked algebraic step. A proof document names the
  constant in ``constants:`` (its obligations are derived from it) and the lemma by id in ``lemmas:``.
* **Mechanism building blocks** — :class:`Measurement`, :class:`PrivacyConstant`, domains, metrics, measures,
  the validation helpers (messages ``name=value must be in ...``) and the sampling primitives, through which all
  randomness must go so that the engine can enumerate it.
* **Checks** — :class:`CheckResult`, :class:`Status`, :class:`CheckOptions` for a project's own providers
  (``[tool.vetdp] providers``).

Importing this module loads the light runtime only (NumPy and vetdp's own modules): the constants, mechanism building
blocks and randomness above are what a production module needs. Specs, strategies, obligations, lemmas and checks
load on first use and need the harness extra (``pip install 'vetdp[harness]'``).
"""

from __future__ import annotations

import typing as _typing

from vetdp.arith.constants import register_constant
from vetdp.arith.expr import ONE, TWO, ZERO, Expr, const, var
from vetdp.core.measurement import (
    AtomDomain,
    BitVectorDomain,
    DiscreteDistance,
    Domain,
    DomainError,
    DomainTypeError,
    MaxDivergence,
    Measurement,
    PrivacyConstant,
    as_bit_tuple,
    atom_domain,
    bitvector_domain,
    discrete_distance,
    max_divergence,
)
from vetdp.core.validation import check_bool, check_float, check_int, check_interval
from vetdp.sampling import (
    SeededSource,
    random_bytes,
    sample_bernoulli_float,
    sample_uniform_int_below,
    use_source,
)
from vetdp.sampling.public import hash_bucket, keyed_encoding, sample_public_uniform_int_below, sample_uniform_member

# What a mechanism module imports (above) is the light runtime: NumPy and vetdp's own modules. The names for specs,
# obligations, lemmas and checks need the harness extra and load on first use (PEP 562), so that a production module
# written against this API imports none of z3, sympy, hypothesis, scipy.
_HARNESS = {
    **dict.fromkeys(["MeasurementSpec", "EstimatorSpec", "BadParams", "floats_in", "at_least", "boundary_probabilities",
                     "MIN_SUBNORMAL", "tiny_float", "tiny_floats", "tiny_numerator", "seeded_permutation", "spread"],
                    "vetdp.engine.spec"),
    "pld_of_laws": "vetdp.engine.dominance",
    "ConditionalLaw": "vetdp.engine.public",
    "PublicSlot": "vetdp.engine.public",
    "constant_obligations": "vetdp.obligations.check",
    "lemma": "vetdp.obligations.lemmas",
    "CheckResult": "vetdp.engine.results",
    "Status": "vetdp.engine.results",
    "CheckOptions": "vetdp.engine.registry",
    "Project": "vetdp.project",
    "ProjectError": "vetdp.project",
    "find_project": "vetdp.project",
}

if _typing.TYPE_CHECKING:
    from vetdp.engine.dominance import pld_of_laws
    from vetdp.engine.public import ConditionalLaw, PublicSlot
    from vetdp.engine.registry import CheckOptions
    from vetdp.engine.results import CheckResult, Status
    from vetdp.engine.spec import (
        MIN_SUBNORMAL,
        BadParams,
        EstimatorSpec,
        MeasurementSpec,
        at_least,
        boundary_probabilities,
        floats_in,
        seeded_permutation,
        spread,
        tiny_float,
        tiny_floats,
        tiny_numerator,
    )
    from vetdp.obligations.check import constant_obligations
    from vetdp.obligations.lemmas import lemma
    from vetdp.project import Project, ProjectError, find_project


def __getattr__(name: str):
    import importlib

    if name not in _HARNESS:
        raise AttributeError(f"module 'vetdp.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HARNESS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HARNESS})


__all__ = [
    # specs
    "MeasurementSpec",
    "EstimatorSpec",
    "BadParams",
    "pld_of_laws",
    # boundary-aware strategies
    "floats_in",
    "at_least",
    "boundary_probabilities",
    "MIN_SUBNORMAL",
    "tiny_float",
    "tiny_floats",
    "tiny_numerator",
    "seeded_permutation",
    "spread",
    # constants with directed rounding, their obligations, lemmas
    "Expr",
    "var",
    "const",
    "ZERO",
    "ONE",
    "TWO",
    "register_constant",
    "constant_obligations",
    "lemma",
    # mechanisms
    "Measurement",
    "PrivacyConstant",
    "Domain",
    "DomainError",
    "DomainTypeError",
    "AtomDomain",
    "BitVectorDomain",
    "atom_domain",
    "bitvector_domain",
    "as_bit_tuple",
    "DiscreteDistance",
    "discrete_distance",
    "MaxDivergence",
    "max_divergence",
    "check_bool",
    "check_float",
    "check_int",
    "check_interval",
    # randomness
    "sample_bernoulli_float",
    "sample_uniform_int_below",
    "random_bytes",
    "use_source",
    "SeededSource",
    # public randomness and keyed encodings (hashing mechanisms)
    "sample_public_uniform_int_below",
    "hash_bucket",
    "keyed_encoding",
    "sample_uniform_member",
    "ConditionalLaw",
    "PublicSlot",
    # checks and projects
    "CheckResult",
    "Status",
    "CheckOptions",
    "Project",
    "ProjectError",
    "find_project",
]
