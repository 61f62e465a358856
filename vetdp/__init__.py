"""vetdp: executable proofs for differential-privacy mechanisms.

The public surface: the measurement core (:mod:`vetdp.core`), directed-rounding
arithmetic (:mod:`vetdp.arith`), the sampler primitives (:mod:`vetdp.sampling`) and the
mechanisms (:mod:`vetdp.impl`). The engine lives in :mod:`vetdp.engine`.
"""

from pathlib import Path as _Path

# In a source checkout the mechanisms and specs live in the top-level impl/ and specs/ folders, which an
# install maps to vetdp.impl and vetdp.specs. When this package is imported from the checkout itself (e.g.
# `python -m pytest` at the repository root while vetdp is installed non-editable), resolve them there too.
_root = _Path(__file__).resolve().parent.parent
if not (_Path(__file__).resolve().parent / "impl").is_dir() and (_root / "impl" / "__init__.py").is_file():
    __path__.append(str(_root))  # noqa: F821 - the package's own __path__

# The public names load on first use (PEP 562): `import vetdp` alone imports nothing else, so that the command line
# (vetdp.cli) starts without NumPy, and `from vetdp import Measurement` loads the light runtime only.
_LAZY = {
    **dict.fromkeys(["AtomDomain", "BitVectorDomain", "DiscreteDistance", "DomainError", "MaxDivergence", "Measurement",
                     "atom_domain", "bitvector_domain", "discrete_distance", "max_divergence"], "vetdp.core"),
    **dict.fromkeys(["SeededSource", "SystemSource", "random_bytes", "sample_bernoulli_float",
                     "sample_geometric_buffer", "sample_uniform_int_below", "use_source"], "vetdp.sampling"),
}
_SUBPACKAGES = ("arith", "core", "sampling", "impl")  # imported by this module before its names became lazy


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"vetdp.{name}")
    else:
        raise AttributeError(f"module 'vetdp' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"

__all__ = [
    "AtomDomain",
    "BitVectorDomain",
    "DiscreteDistance",
    "DomainError",
    "MaxDivergence",
    "Measurement",
    "atom_domain",
    "bitvector_domain",
    "discrete_distance",
    "max_divergence",
    "SeededSource",
    "SystemSource",
    "random_bytes",
    "sample_bernoulli_float",
    "sample_geometric_buffer",
    "sample_uniform_int_below",
    "use_source",
    "__version__",
]
