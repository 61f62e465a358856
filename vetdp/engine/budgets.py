"""The default budgets of every check, in one place (imported by the engine and by the command line, cheaply).

A verdict depends on the code and these budgets only: each is counted in work (paths, random choices, samples,
parameter sets), never in seconds, so a loaded CI runner and an idle laptop give the same verdict. The one
wall-clock limit, :data:`DEFAULT_TIME_LIMIT`, is a safety net for code that hangs without drawing randomness: when
it fires, the check is *stopped* (no verdict, exit 2), never passed, failed or undecided.

The defaults leave a wide margin over what the bundled specs, the examples and the mutants need
(``python benchmarks/bench_work.py`` prints the work each needs against these budgets). z3's budget, its resource
count per obligation query, lives with the obligations (:mod:`vetdp.obligations.limits`).
"""

from __future__ import annotations

__all__ = ["DEFAULT_BUDGET", "DEFAULT_MAX_CHOICES", "BEST_FIRST_MAX_CHOICES", "DEFAULT_MAX_STEPS", "DEFAULT_TIME_LIMIT",
           "CHAIN_WORK", "DEFAULT_MAX_REGIONS", "DISTANCE_SWEEP", "STATE_CALLS",
           "MAX_GRID_BITS", "DEFAULT_EXACT_WORK"]

DEFAULT_BUDGET = 200_000  # runs of the function per input and enumeration pass (--max-paths)
DEFAULT_MAX_CHOICES = 10_000  # choices in one run of the exhaustive pass; deeper trees go best-first
BEST_FIRST_MAX_CHOICES = 100_000  # choices in one run (--max-choices); a deeper run's mass stays residual
# random choices per input over all runs, replayed prefixes included (--max-steps): the enumeration's total work,
# which a deep tree makes quadratic in its depth (a loop of n coins explored best-first: about n²/2)
DEFAULT_MAX_STEPS = 20_000_000
# word operations of one clause's exact rational arithmetic on a product's laws (--exact-work): an operation on
# rationals of n and m 64-bit words counts n·m + 1 (vetdp.engine.structure.exact_work)
DEFAULT_EXACT_WORK = 2 * 10**9
# the buffling category chains' work (--chain-work): multiply-adds of their convolutions and binomial windows over
# all refining passes; a pass that would go past it is abandoned for the bracket already certified. The seed's grid
# needs at most 7.95e9 at a point (k = 6, m = 10^6, p = 0.3; benchmarks/bench_work.py --chains): a margin of 12
CHAIN_WORK = 10**11
# runs of the code on symbolic parameters per pass over one base of a spec's universal exploration (--max-regions):
# each run decides a region of the float parameters or splits it; the bundled specs need at most 4 per base
DEFAULT_MAX_REGIONS = 2_000
# privacy.distance/monotone: the map is evaluated at every d_in up to this (and at 2^j ± 1, 10^j up to 2^64 + 1);
# where its trace allows (vetdp.engine.distances) those values decide every d_in
DISTANCE_SWEEP = 1024
# state.independent_calls: calls made on one measurement (cycling through every input and its first paths), each
# compared path by path with a fresh measurement's first call (vetdp.engine.calls)
STATE_CALLS = 128
# the finest grid of the buffling grid laws (--grid-bits): about 100 bytes of laws and transforms per cell, so 2^23
# cells peak at 0.87 GB (2^24: 1.6 GB; 2^26 failed to allocate under 2 GiB): memory bounded up front
MAX_GRID_BITS = 23
DEFAULT_TIME_LIMIT = 600.0  # seconds of wall clock per clause and parameter set (--time-limit): a safety net only
