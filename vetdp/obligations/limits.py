"""How much work z3 may spend on one obligation query: a resource limit, never a time limit.

z3's ``rlimit`` counts its own steps; with each query in a fresh context (:func:`vetdp.obligations.z3encode.solve`)
the count depends only on the query and the z3 version, so an obligation gets the same verdict on a loaded CI
runner and an idle laptop. This module imports nothing heavy: the command line reads it to build its options.
"""

from __future__ import annotations

__all__ = ["DEFAULT_Z3_RLIMIT", "DEEP_Z3_RLIMIT", "RLIMIT_OPTION", "z3_rlimit", "rlimit_spent"]

# The most any bundled, example or `vetdp init` obligation spends is 2,868,864 units (the int cast
# randomized_response.epsilon.cast.t, in z3's bit-precise float theory); a constant's query at most 73,104, the
# float64 gap lemma 58,230 (z3 5.4.1). The default leaves 17x headroom over the largest, --deep 170x
# (benchmarks/bench_z3_rlimit.py prints every figure).
DEFAULT_Z3_RLIMIT = 50_000_000
DEEP_Z3_RLIMIT = 500_000_000
RLIMIT_OPTION = "--z3-rlimit"


def z3_rlimit(deep: bool = False, rlimit: int | None = None) -> int:
    """The z3 resource limit per query: ``rlimit`` when given (a positive int), else the deep or default one."""
    if rlimit is None:
        return DEEP_Z3_RLIMIT if deep else DEFAULT_Z3_RLIMIT
    if isinstance(rlimit, bool) or not isinstance(rlimit, int) or rlimit < 1:
        raise ValueError(f"z3_rlimit={rlimit!r} must be an int in [1, inf)")
    return rlimit


def rlimit_spent(rlimit: int) -> str:
    """The reason an obligation is undecided when z3 spent its whole resource limit, naming how to raise it."""
    return (f"undecided: the z3 resource limit {rlimit} was spent; raise it with {RLIMIT_OPTION} N "
            f"(vetdp check, vetdp proofs status/bless/render; pytest --vetdp-z3-rlimit N)")
