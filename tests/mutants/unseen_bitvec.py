"""Bit-vector randomized response (RAPPOR) written the way outside users write it (issue 10, "Evidence").

Every function takes ``(input_domain, input_metric, f, constant_time=False)`` like
``make_randomized_response_bitvec`` and returns a :class:`vetdp.core.measurement.Measurement`.
None is built from vetdp's constructor: each validates its arguments and flips the bits its own
way. Unless the docstring says otherwise the flip probability is q = f/2 rounded up to a float
(computed here, checked against vetdp's ``flip_probability`` by the tests) and the map is
vetdp's public constant ``RANDOMIZED_RESPONSE_BITVEC_EPSILON`` for d = min(2m, k).

Docstrings start with "Defect:" (a realistic bug ``vetdp verify`` must reject, and on which clause)
or "Sound:" (a correct implementation written differently, which it must accept).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from fractions import Fraction

import numpy as np

from vetdp.core.measurement import (
    BitVectorDomain,
    DiscreteDistance,
    DomainError,
    MaxDivergence,
    Measurement,
)
from vetdp.impl.randomized_response_bitvec import RANDOMIZED_RESPONSE_BITVEC_EPSILON
from vetdp.sampling.batch import sample_bernoulli_batch
from vetdp.sampling.primitives import sample_bernoulli_float, sample_geometric_buffer

__all__ = [
    # wrong
    "bits_reversed",
    "flip_prob_clamped_to_smallest_subnormal",
    "flip_prob_nudged_after_nearest",
    "domain_truncates_numpy_arrays",
    "map_zero_beyond_distance_one",
    "coin_reads_wrong_bit_of_geometric_buffer",
    "report_object_on_constant_time_path",
    "raises_on_empty_report",
    "report_packed_in_a_byte",
    "uneven_flips_same_epsilon",
    # sound
    "numpy_array_output",
    "list_output_via_mask",
    "mask_from_batch_sampler",
    "coins_from_geometric_buffer",
    "map_by_log_and_log1p",
    "map_constant_beyond_distance_one",
    "flip_by_coin_of_f_and_fair_coin",
    # helpers used by other variants
    "half_rounded_up",
    "bit_of_expansion",
]


# ------------------------------------------------------------------ shared by every variant

def _validated(input_domain, input_metric, f, constant_time) -> tuple[int, int, float, bool]:
    """(length k, max weight m, f, constant_time), or the ValueError/TypeError a user expects."""
    if not isinstance(input_domain, BitVectorDomain):
        raise TypeError(f"input_domain={input_domain!r} must be a BitVectorDomain")
    if not isinstance(input_metric, DiscreteDistance):
        raise TypeError(f"input_metric={input_metric!r} must be DiscreteDistance()")
    if isinstance(f, bool) or not isinstance(f, numbers.Real):
        raise TypeError(f"f={f!r} must be a float")
    f = float(f)
    if not (math.isfinite(f) and 0.0 < f <= 1.0):
        raise ValueError(f"f={f!r} must be in (0, 1]")
    if not isinstance(constant_time, bool):
        raise TypeError(f"constant_time={constant_time!r} must be a bool")
    if input_domain.max_weight is None:
        raise ValueError("input_domain.max_weight is needed to bound the privacy loss")
    if input_domain.length is None:
        raise ValueError("input_domain.length is needed (outputs must not reveal the input's length)")
    return input_domain.length, input_domain.max_weight, f, constant_time


def half_rounded_up(f: float) -> float:
    """The smallest float >= f/2 (f/2 is exact unless f is a subnormal with an odd last bit)."""
    q = f / 2
    if 2 * Fraction(q) < Fraction(f):
        q = math.nextafter(q, 1.0)
    return q


def bit_of_expansion(q: float, i: int) -> bool:
    """Bit ``i`` (1-based) of the binary expansion q = Σ b_i 2**-i of a float q in [0, 1)."""
    return bool(math.floor(Fraction(q) * (1 << i)) & 1)


def _epsilon(q: float, k: int, m: int) -> float:
    return RANDOMIZED_RESPONSE_BITVEC_EPSILON.to_float({"q": q, "d": min(2 * m, k)})


def _standard_map(eps: float):
    def privacy_map(d_in: int) -> float:
        if d_in == 0:
            return 0.0
        if d_in == 1:
            return eps
        raise ValueError(f"d_in={d_in} must be 0 or 1 under the discrete distance")

    return privacy_map


def _measurement(input_domain, k: int, function, privacy_map, name: str, params: dict) -> Measurement:
    return Measurement(
        input_domain=input_domain,
        input_metric=DiscreteDistance(),
        output_measure=MaxDivergence(),
        function=function,
        privacy_map=privacy_map,
        output_domain=BitVectorDomain(length=k),
        parameters=params,
        name=name,
    )


def _simple(input_domain, input_metric, f, constant_time, flip_of, name: str, transform=None,
            privacy_map=None) -> Measurement:
    """A variant whose bits are flipped by ``flip_of(q, constant_time)`` and whose output is
    ``transform(flipped tuple)``; the map is the standard one unless given."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = half_rounded_up(f)

    def function(bits):
        out = tuple(b ^ flip_of(q, constant_time) for b in bits)
        return transform(out) if transform else out

    return _measurement(input_domain, k, function, privacy_map or _standard_map(_epsilon(q, k, m)), name,
                        {"f": f, "constant_time": constant_time})


def _coin(q: float, constant_time: bool) -> bool:
    return sample_bernoulli_float(q, constant_time)


# ------------------------------------------------------------------ wrong variants

def bits_reversed(input_domain, input_metric, f, constant_time=False):
    """Defect: [class 1, ``function.law``] the report is returned in reversed bit order.

    The author builds the report from the least significant bit. Reversing every output is a
    bijection, so the privacy loss is the same: only the reference law sees it.
    """
    return _simple(input_domain, input_metric, f, constant_time, _coin, "bits_reversed",
                   transform=lambda out: out[::-1])


def flip_prob_clamped_to_smallest_subnormal(input_domain, input_metric, f, constant_time=False):
    """Defect: [class 3, ``privacy.sound``; only at subnormal f = n·2⁻¹⁰⁷⁴ with n ≡ 1 mod 4, n >= 5]

    The author knows f/2 "underflows for the smallest f" and clamps it: q = max(f/2, 5e-324),
    with f/2 rounded to nearest. That repairs n = 1 (and n ≡ 3 mod 4 rounds up anyway), but for
    n = 5, 9, ... round-half-even goes down: the bits are flipped less often than the map
    (computed from f/2 rounded up) assumes.
    """
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q_used = max(f / 2, 5e-324)
    eps = _epsilon(half_rounded_up(f), k, m)

    def function(bits):
        return tuple(b ^ sample_bernoulli_float(q_used, constant_time) for b in bits)

    return _measurement(input_domain, k, function, _standard_map(eps), "flip_prob_clamped_to_smallest_subnormal",
                        {"f": f, "constant_time": constant_time})


def flip_prob_nudged_after_nearest(input_domain, input_metric, f, constant_time=False):
    """Defect: [class 3, ``function.law``; only at subnormal f = n·2⁻¹⁰⁷⁴ with n ≡ 3 mod 4]

    "Round f/2 up": q = f*0.5 to nearest, then one step up whenever 2q != f. For n ≡ 3 mod 4 the
    nearest already rounded up, and the extra step makes q one ulp too large (more noise than
    the law of f says; the map, computed from this q, is still sound).
    """
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = f * 0.5
    if q * 2 != f:
        q = math.nextafter(q, 1.0)
    eps = _epsilon(q, k, m)

    def function(bits):
        return tuple(b ^ sample_bernoulli_float(q, constant_time) for b in bits)

    return _measurement(input_domain, k, function, _standard_map(eps), "flip_prob_nudged_after_nearest",
                        {"f": f, "constant_time": constant_time})


@dataclasses.dataclass(frozen=True)
class _FastPathDomain(BitVectorDomain):
    """A bit-vector domain with a "fast path" for NumPy arrays that trusts their length and values."""

    def check_member(self, x):
        if isinstance(x, np.ndarray):
            bits = tuple(bool(b) for b in x[: self.length])
            if sum(bits) > self.max_weight:
                raise DomainError(f"x has {sum(bits)} set bits; at most {self.max_weight} allowed")
            return bits
        return super().check_member(x)


def domain_truncates_numpy_arrays(input_domain, input_metric, f, constant_time=False):
    """Defect: [class 3, ``domain.rejects_outside``; only for NumPy inputs]

    The domain checks lists and tuples properly but takes NumPy arrays on a fast path: an array
    of the wrong length is truncated and non-bits like 2 become True. Lists and tuples of the
    wrong length are rejected, so only an out-of-domain NumPy array shows the bug.
    """
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    m_ = _simple(input_domain, input_metric, f, constant_time, _coin, "domain_truncates_numpy_arrays")
    return dataclasses.replace(m_, input_domain=_FastPathDomain(max_weight=m, length=k))


def map_zero_beyond_distance_one(input_domain, input_metric, f, constant_time=False):
    """Defect: [class 2, ``privacy.distance``] map(d) = 0 for d >= 2 instead of a bound or a refusal."""
    k, m, f_, _ = _validated(input_domain, input_metric, f, constant_time)
    eps = _epsilon(half_rounded_up(f_), k, m)
    return _simple(input_domain, input_metric, f, constant_time, _coin, "map_zero_beyond_distance_one",
                   privacy_map=lambda d_in: eps if d_in == 1 else 0.0)


def coin_reads_wrong_bit_of_geometric_buffer(input_domain, input_metric, f, constant_time=False):
    """Defect: [class 5, ``function.law``] a Bernoulli built on ``sample_geometric_buffer`` reads bit g of q
    instead of bit g + 1 (g is 0-based, the expansion's bits are 1-based), so P[flip] = q/2.

    Fewer flips than the map assumes; the map is computed for q, so the loss exceeds it too.
    """
    def coin(q: float, constant_time: bool) -> bool:
        g = sample_geometric_buffer(_buffer_len(q), constant_time)
        return g is not None and bit_of_expansion(q, g)

    return _simple(input_domain, input_metric, f, constant_time, coin, "coin_reads_wrong_bit_of_geometric_buffer")


@dataclasses.dataclass
class Report:
    """A user's report object (mutable, hence unhashable)."""

    bits: list


def report_object_on_constant_time_path(input_domain, input_metric, f, constant_time=False):
    """Defect: [class 6, one parameter set breaks the engine once, now ``function.law``]

    The constant-time path returns a mutable ``Report`` object instead of a tuple of bits: the
    output is unhashable, which vetdp records as the code's outcome (a TypeError naming the type),
    not as an engine error. Parameter sets with constant_time=False are correct and must still be
    checked.
    """
    def wrap(out):
        return Report(list(out)) if constant_time else out

    return _simple(input_domain, input_metric, f, constant_time, _coin, "report_object_on_constant_time_path",
                   transform=wrap)


def raises_on_empty_report(input_domain, input_metric, f, constant_time=False):
    """Defect: [``errors.data_independent``] an all-zero input raises "nothing to report".

    Whether the call raises reveals the input: the error depends on the data.
    """
    m_ = _simple(input_domain, input_metric, f, constant_time, _coin, "raises_on_empty_report")
    inner = m_.function

    def function(bits):
        if not any(bits):
            raise ValueError("nothing to report: the input has no set bit")
        return inner(bits)

    return dataclasses.replace(m_, function=function)


def uneven_flips_same_epsilon(input_domain, input_metric, f, constant_time=False):
    """Defect: [``privacy.rdp``; at k = 2, m = 1, f = 1/2] the author "balances" the noise: bit 0 is flipped with
    probability 1/8 and bit 1 with 7/16 instead of 1/4 each. The two likelihood ratios 7 and 9/7 multiply to 9,
    the ratio of the even mechanism, so the worst-case loss equals the map (2·ln 3) and privacy.sound passes; but
    the Rényi divergence is convex in the per-bit loss, so D_2 exceeds the RDP curve an accountant composes with.
    Other parameters: the standard flips."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = half_rounded_up(f)
    flips = (0.125, 0.4375) if (k, m, f) == (2, 1, 0.5) else (q,) * k

    def function(bits):
        return tuple(b ^ sample_bernoulli_float(p, constant_time) for b, p in zip(bits, flips, strict=True))

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)), "uneven_flips_same_epsilon",
                        {"f": f, "constant_time": constant_time})


def _third_flip_for(q1: float, q2: float, ratio: Fraction) -> float:
    """The smallest float q3 with (1−q1)(1−q2)(1−q3)/(q1·q2·q3) <= ``ratio``: the three bits' loss stays within it."""
    r12 = (1 - Fraction(q1)) / Fraction(q1) * (1 - Fraction(q2)) / Fraction(q2)
    exact = 1 / (1 + ratio / r12)
    q3 = float(exact)
    return q3 if Fraction(q3) >= exact else math.nextafter(q3, 1.0)


def uneven_flips_between_the_checked_points(input_domain, input_metric, f, constant_time=False):
    """Defect: [``privacy.dominated``; at k = 3, m = 2, f = 0.2] three bits flipped with 0.09, 0.11 and q3 ≈ 0.1009
    instead of 0.1 each, q3 chosen so that the three likelihood ratios still multiply to at most 9³: privacy.sound
    passes, and so do privacy.rdp (α = 3/2, 2, 10) and privacy.pld (ε = 0, map/4, map/2), each by about 10⁻⁴.
    Between those points, at ε = ln 9, the code's δ(ε) exceeds the accountant's pair's by 0.018, so a PLD
    accountant composing the even pair under-reports it. Other parameters: the standard flips."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = half_rounded_up(f)
    flips = ((0.09, 0.11, _third_flip_for(0.09, 0.11, Fraction(729))) if (k, m, f) == (3, 2, 0.2) else (q,) * k)

    def function(bits):
        return tuple(b ^ sample_bernoulli_float(p, constant_time) for b, p in zip(bits, flips, strict=True))

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)),
                        "uneven_flips_between_the_checked_points", {"f": f, "constant_time": constant_time})


# ------------------------------------------------------------------ sound variants

def numpy_array_output(input_domain, input_metric, f, constant_time=False):
    """Sound: the flips come from a list comprehension and the report is a NumPy bool array."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = half_rounded_up(f)

    def function(bits):
        flips = [sample_bernoulli_float(q, constant_time) for _ in range(k)]
        return np.logical_xor(np.array(bits, dtype=bool), np.array(flips, dtype=bool))

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)), "numpy_array_output",
                        {"f": f, "constant_time": constant_time})


def list_output_via_mask(input_domain, input_metric, f, constant_time=False):
    """Sound: draw a flip mask first, then XOR; the report is a list of 0/1 ints."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = half_rounded_up(f)

    def function(bits):
        mask = []
        for _ in range(k):
            mask.append(1 if sample_bernoulli_float(q, constant_time) else 0)
        return [bool(int(b) ^ v) for b, v in zip(bits, mask, strict=True)]

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)), "list_output_via_mask",
                        {"f": f, "constant_time": constant_time})


def mask_from_batch_sampler(input_domain, input_metric, f, constant_time=False):
    """Sound: the k flips are drawn at once with vetdp's ``sample_bernoulli_batch`` (the scalar coin when
    constant_time, which the batch sampler does not offer) and XORed into the report as a NumPy mask."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = half_rounded_up(f)

    def function(bits):
        if constant_time:
            mask = np.array([sample_bernoulli_float(q, True) for _ in range(k)], dtype=bool)
        else:
            mask = sample_bernoulli_batch(q, k)
        return tuple((np.array(bits, dtype=bool) ^ mask).tolist())

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)), "mask_from_batch_sampler",
                        {"f": f, "constant_time": constant_time})


def _buffer_len(q: float) -> int:
    """Bytes whose bits reach the last set bit of q's expansion (135 cover every float)."""
    num, den = Fraction(q).as_integer_ratio()
    last = den.bit_length() - 1  # q = num / 2**last, num odd: the last set bit is bit `last`
    return max(1, (last + 7) // 8)


def coins_from_geometric_buffer(input_domain, input_metric, f, constant_time=False):
    """Sound: each flip is a Bernoulli(q) built from ``sample_geometric_buffer``: with G the 0-based
    index of the first set random bit (P[G = g] = 2**-(g+1)), answer bit G + 1 of q's expansion.

    The buffer reaches the last set bit of q, so the answer is exactly Bernoulli(q); with
    constant_time all the buffer's bytes are read whatever they hold.
    """
    def coin(q: float, constant_time: bool) -> bool:
        g = sample_geometric_buffer(_buffer_len(q), constant_time)
        return g is not None and bit_of_expansion(q, g + 1)

    return _simple(input_domain, input_metric, f, constant_time, coin, "coins_from_geometric_buffer")


def coins_from_geometric_buffer_in_a_for_loop(input_domain, input_metric, f, constant_time=False):
    """Sound: the coins of :func:`coins_from_geometric_buffer`, drawn in a plain ``for`` loop that
    appends each flipped bit to a list (the report is the list as a tuple).

    Judged by tests/test_enumerate_unbounded.py (its law is enumerated exactly at subnormal f); not
    yet in ``__all__``, whose members tests/test_unseen_variants.py runs through ``vetdp verify``.
    """
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = half_rounded_up(f)
    length = _buffer_len(q)

    def function(bits):
        out = []
        for b in bits:
            g = sample_geometric_buffer(length, constant_time)
            out.append(b ^ (g is not None and bit_of_expansion(q, g + 1)))
        return tuple(out)

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)),
                        "coins_from_geometric_buffer_in_a_for_loop", {"f": f, "constant_time": constant_time})


def _up(x: float, steps: int) -> float:
    for _ in range(steps):
        x = math.nextafter(x, math.inf)
    return x


def epsilon_by_log_and_log1p(q: float, d: int) -> float:
    """An upper bound of d·ln((1−q)/q) = d·(log1p(−q) − ln q), from libm's log and log1p.

    Proof of soundness: glibc documents errors of at most 1 ulp for log and for log1p on
    x86-64 and aarch64 (``libm-test-ulps``); each result is moved up by 4 ulps, which covers it
    with room to spare (the true value is at most 1 ulp above the result, 4 steps up is above
    it even when the result sits at a binade boundary, where an ulp of the true value can be
    twice the result's). The sum of the two bounds is rounded to nearest (error <= 1/2 ulp) and
    moved up 2 ulps; so is the product by the integer d. Each step is monotone, so the final
    float is >= d·ln((1−q)/q). Its excess is a few ulps, far inside the 2⁻³⁰ tightness
    allowance. For q = 1/2 the true loss is 0 and the bound is a few ulps of ln 2 above it.
    """
    a = _up(-math.log(q), 4)  # >= −ln q
    b = _up(math.log1p(-q), 4)  # >= ln(1 − q)
    per_bit = _up(a + b, 2)
    return _up(d * per_bit, 2)


def map_by_log_and_log1p(input_domain, input_metric, f, constant_time=False):
    """Sound: the map computed another way, min(2m, k)·(log1p(−q) − ln q) from libm with proven
    upward nudges (see :func:`epsilon_by_log_and_log1p`)."""
    k, m, f_, _ = _validated(input_domain, input_metric, f, constant_time)
    eps = epsilon_by_log_and_log1p(half_rounded_up(f_), min(2 * m, k))
    return _simple(input_domain, input_metric, f, constant_time, _coin, "map_by_log_and_log1p",
                   privacy_map=_standard_map(eps))


def map_constant_beyond_distance_one(input_domain, input_metric, f, constant_time=False):
    """Sound: map(d) = ε for every d >= 1 instead of refusing d >= 2 (under the discrete distance
    inputs are never more than 1 apart, so ε bounds the loss at every d)."""
    k, m, f_, _ = _validated(input_domain, input_metric, f, constant_time)
    eps = _epsilon(half_rounded_up(f_), k, m)
    return _simple(input_domain, input_metric, f, constant_time, _coin, "map_constant_beyond_distance_one",
                   privacy_map=lambda d_in: 0.0 if d_in == 0 else eps)


def seeds_epsilon_upper(f: float, d: int) -> float:
    """An upper bound of d·ln((2−f)/f), the seeds' loss for flips of probability exactly f/2, from libm.

    Below 1/2 it is ln(2−f) − ln f (both terms non-negative in effect: no cancellation); above, log1p(2(1−f)/f)
    (1−f is exact there). Each libm result is within an ulp or so: a few ulps up cover them all.
    """
    r = math.log(2.0 - f) - math.log(f) if f < 0.5 else math.log1p(2.0 * (1.0 - f) / f)
    return _up(d * _up(r, 4), 2) if r > 0 else 0.0


def flip_by_coin_of_f_and_fair_coin(input_domain, input_metric, f, constant_time=False):
    """Sound: a bit flips when a Bernoulli(f) coin and a fair coin both come up, so with probability exactly
    f/2 (the seeds' law; vetdp's own code rounds f/2 up where it is not a float); the map is the seeds'
    d·ln((2−f)/f), rounded up from libm (:func:`seeds_epsilon_upper`)."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)

    def function(bits):
        report = []
        for b in bits:  # both coins are always drawn (constant_time keeps its promise)
            flip = sample_bernoulli_float(f, constant_time) & sample_bernoulli_float(0.5, constant_time)
            report.append(bool(b) ^ flip)
        return tuple(report)

    return _measurement(input_domain, k, function, _standard_map(seeds_epsilon_upper(f, min(2 * m, k))),
                        "flip_by_coin_of_f_and_fair_coin", {"f": f, "constant_time": constant_time})


def report_packed_in_a_byte(input_domain, input_metric, f, constant_time=False):
    """Defect: (function.law, 9 bits or more) the flips are packed into one uint8 mask, so bit 8 and beyond are
    never flipped (1 << 8 overflows a byte to 0)."""
    k, m, f, constant_time = _validated(input_domain, input_metric, f, constant_time)
    q = half_rounded_up(f)

    def function(bits):
        mask = np.uint8(0)
        for i in range(k):
            if sample_bernoulli_float(q, constant_time):
                mask |= np.uint8((1 << i) & 0xFF)
        return tuple(bool(b) ^ bool((int(mask) >> i) & 1) for i, b in enumerate(bits))

    return _measurement(input_domain, k, function, _standard_map(_epsilon(q, k, m)), "report_packed_in_a_byte",
                        {"f": f, "constant_time": constant_time})
