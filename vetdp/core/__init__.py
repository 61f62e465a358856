"""Measurement, domains, metrics and measures; shared precondition checks."""

from vetdp.core.measurement import (
    AtomDomain,
    BitVectorDomain,
    DiscreteDistance,
    Domain,
    DomainError,
    MaxDivergence,
    Measure,
    Measurement,
    Metric,
    PrivacyConstant,
    atom_domain,
    bitvector_domain,
    discrete_distance,
    max_divergence,
)

__all__ = [
    "AtomDomain",
    "BitVectorDomain",
    "DiscreteDistance",
    "Domain",
    "DomainError",
    "MaxDivergence",
    "Measure",
    "Measurement",
    "Metric",
    "PrivacyConstant",
    "atom_domain",
    "bitvector_domain",
    "discrete_distance",
    "max_divergence",
]
