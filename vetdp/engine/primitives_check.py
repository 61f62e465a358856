"""One level down: the sampler primitives' byte-level algorithms against their specifications.

The engine enumerates mechanisms at the level of the primitives (each primitive states
its outcomes and their exact probabilities). Here the primitives' own byte-level code is
enumerated over every byte value (each 1/256) and the exact probability of each outcome
is compared with the specification by equality.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction

from vetdp.engine.enumerate import enumerate_paths
from vetdp.engine.registry import CheckOptions
from vetdp.engine.results import CheckResult, Status
from vetdp.sampling import primitives as P

__all__ = ["check_primitives", "bernoulli_true_probability", "BERNOULLI_CASES"]

# floats whose binary expansions end early, late (subnormal) or never reach the buffer's end
BERNOULLI_CASES = [0.0, 1.0, 0.5, 0.1, 1 / 3, math.nextafter(1.0, 0.0), 2.0**-60, 5e-324]
DEEP_BERNOULLI_CASES = [0.7, 0.123456789, 1e-300, 2.0**-1000 * 3, math.nextafter(0.5, 0.0),
                        2.2250738585072014e-308, 3.5e-310]


def bernoulli_true_probability(prob: float, budget: int = 400_000) -> Fraction:
    """P[sample_bernoulli_float(prob) is True], exactly, from its byte-level code.

    Enumerates the variable-time form (at most 135·255 + 1 paths). The constant-time form
    reads 135 bytes at once (256**135 paths); it is shown to return the variable-time
    answer on the same bytes in tests/test_sampling.py, so it inherits this exactness.
    """
    total = Fraction(0)
    for out, p in enumerate_paths(lambda: P.sample_bernoulli_float(prob), budget=budget,
                                  branch_bytes=True, catch=False):
        if out is True:
            total += p
    return total


def _distribution(run, budget: int) -> dict:
    dist: dict = defaultdict(Fraction)
    for out, p in enumerate_paths(run, budget=budget, branch_bytes=True, catch=False):
        dist[out] += p
    return dict(dist)


def _result(check: str, subject: str, ok: bool, message: str, t0: float) -> CheckResult:
    return CheckResult("primitives", check, Status.PASS if ok else Status.FAIL, subject=subject, message=message,
                       seconds=time.perf_counter() - t0)


def check_primitives(options: CheckOptions) -> Iterator[CheckResult]:
    cases = BERNOULLI_CASES + (DEEP_BERNOULLI_CASES if options.deep else [])
    if options.selected("primitives::bernoulli.exact"):
        for prob in cases:
            t0 = time.perf_counter()
            got = bernoulli_true_probability(prob)
            ok = got == Fraction(prob)
            yield _result("bernoulli.exact", f"prob={prob!r}", ok,
                          "P[True] == prob exactly" if ok else f"P[True] = {got} != {Fraction(prob)}", t0)
    if options.selected("primitives::uniform.exact"):
        for n in (1, 2, 3, 5, 6, 7, 200, 255, 256, 257) + ((1000, 4097) if options.deep else ()):
            t0 = time.perf_counter()
            width = P.uniform_attempt_bytes(n)
            # one attempt over all its byte strings: every value in [0, n) has the same number
            # of preimages, so conditioned on acceptance (the rejection loop) each has 1/n
            hits: dict = defaultdict(int)
            for v in range(256**width):
                out = P.uniform_attempt(n, v.to_bytes(width, "big")) if width else 0
                hits[out] += 1
            accepted = {k: c for k, c in hits.items() if k is not None}
            ok = sorted(accepted) == list(range(n)) and len(set(accepted.values())) == 1
            yield _result("uniform.exact", f"n={n}", ok, "every value in [0, n) has equally many preimages" if ok
                          else f"preimage counts {dict(sorted(accepted.items()))}", t0)
    if options.selected("primitives::geometric.exact"):
        for buffer_len in (1, 2):
            for constant_time in (False, True):
                t0 = time.perf_counter()
                dist = _distribution(lambda b=buffer_len, c=constant_time: P.sample_geometric_buffer(b, c), 70_000)
                bits = 8 * buffer_len
                want = {i: Fraction(1, 2 ** (i + 1)) for i in range(bits)} | {None: Fraction(1, 2**bits)}
                ok = dist == want
                yield _result("geometric.exact", f"buffer_len={buffer_len} constant_time={constant_time}", ok,
                              "P[first set bit = i] == 2**-(i+1) exactly" if ok else f"got {dist}", t0)
