"""vetdp: executable proofs for differential-privacy mechanisms.

The public surface: the measurement core (:mod:`vetdp.core`), directed-rounding
arithmetic (:mod:`vetdp.arith`), the sampler primitives (:mod:`vetdp.sampling`) and the
mechanisms (:mod:`vetdp.impl`). The engine lives in :mod:`vetdp.engine`.
"""

from vetdp.core import (
    AtomDomain,
    BitVectorDomain,
    DiscreteDistance,
    DomainError,
    MaxDivergence,
    Measurement,
    atom_domain,
    bitvector_domain,
    discrete_distance,
    max_divergence,
)
from vetdp.sampling import (
    SeededSource,
    SystemSource,
    random_bytes,
    sample_bernoulli_float,
    sample_geometric_buffer,
    sample_uniform_int_below,
    use_source,
)

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
