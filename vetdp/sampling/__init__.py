"""Randomness: context-local sources and the sampler primitives that read them."""

from vetdp.sampling.batch import sample_bernoulli_batch, sample_uniform_int_below_batch
from vetdp.sampling.primitives import (
    random_bytes,
    sample_bernoulli_float,
    sample_geometric_buffer,
    sample_uniform_int_below,
)
from vetdp.sampling.sources import (
    BranchingSource,
    RandomSource,
    SeededSource,
    SystemSource,
    current_source,
    use_source,
)

__all__ = [
    "random_bytes",
    "sample_bernoulli_float",
    "sample_geometric_buffer",
    "sample_uniform_int_below",
    "sample_bernoulli_batch",
    "sample_uniform_int_below_batch",
    "RandomSource",
    "SystemSource",
    "SeededSource",
    "BranchingSource",
    "current_source",
    "use_source",
]
