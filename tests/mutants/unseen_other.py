"""Binary RR, k-RAPPOR, estimators, variance claims and adapters written the way outside users write
them (issue 10, "Evidence").

* Binary RR variants take ``(prob, constant_time=False)`` like ``make_randomized_response_bool``.
* k-RAPPOR variants take ``(input_domain, input_metric, epsilon, constant_time=False)`` like
  ``make_k_rappor``.
* Estimators take the arguments of ``debias_randomized_response`` /
  ``debias_randomized_response_bitvec``; variance functions those of
  ``randomized_response_count_variance`` / ``randomized_response_bitvec_count_variance``.
* Adapters (``vetdp verify --adapter FILE.py:ATTR``) are objects with ``construct(params)``,
  ``invoke(mechanism, x)`` and ``privacy_map(mechanism, d_in)`` around plain functions that are
  not vetdp Measurements.

Docstrings start with "Defect:" (a realistic bug ``vetdp verify`` must reject, and on which clause)
or "Sound:" (a correct implementation written differently, which it must accept).
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from vetdp.arith.expr import ONE, var
from vetdp.core.measurement import (
    AtomDomain,
    BitVectorDomain,
    DiscreteDistance,
    MaxDivergence,
    Measurement,
)
from vetdp.impl.k_rappor import k_rappor_flip_probability
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.impl.randomized_response_bitvec import RANDOMIZED_RESPONSE_BITVEC_EPSILON
from vetdp.sampling.primitives import (
    bernoulli_bytes_needed,
    expansion_bits,
    random_bytes,
    sample_bernoulli_float,
    sample_geometric_buffer,
    sample_uniform_int_below,
)

__all__ = [
    # binary RR, wrong
    "bool_reports_truth_with_one_minus_p",
    "bool_coin_from_bytes_off_by_one",
    "bool_coin_from_8bit_threshold",
    "bool_coin_reads_wrong_bit",
    "bool_map_one_and_a_half_epsilon",
    # binary RR, sound
    "bool_coin_from_bytes",
    "bool_coin_from_geometric_buffer",
    "bool_flip_by_xor_int",
    # k-RAPPOR
    "k_rappor_quarter_budget",
    "k_rappor_division_to_nearest",
    "k_rappor_numpy_output",
    # estimators
    "debias_rr_float_textbook",
    "debias_rr_clipped_at_zero",
    "debias_rr_counts_in_plain_dict",
    "debias_bitvec_rearranged",
    "debias_bitvec_numpy_float",
    # variance claims
    "rr_variance_without_lie_term",
    "rr_variance_rearranged",
    "bitvec_variance_with_f_as_flip",
    "bitvec_variance_in_terms_of_f",
    # adapters
    "plain_rr",
    "rappor_mask",
    "rappor_mask_forgets_top_bit",
    "PLAIN_RR_ADAPTER",
    "MASK_RAPPOR_ADAPTER",
    "MASK_RAPPOR_TOP_BIT_ADAPTER",
]


# ------------------------------------------------------------------ binary randomized response

def _validated_bool(prob, constant_time) -> tuple[float, bool]:
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real):
        raise TypeError(f"prob={prob!r} must be a float")
    p = float(prob)
    if not (math.isfinite(p) and 0.5 <= p < 1.0):
        raise ValueError(f"prob={prob!r} must be in [0.5, 1)")
    if not isinstance(constant_time, bool):
        raise TypeError(f"constant_time={constant_time!r} must be a bool")
    return p, constant_time


def _bool_epsilon(p: float) -> float:
    return RANDOMIZED_RESPONSE_EPSILON.to_float({"prob": p, "t": 2})


def _bool_rr(prob, constant_time, coin, name: str, privacy_map=None, truthful=True) -> Measurement:
    """Binary RR whose keep-decision is ``coin(p)`` (``sample_bernoulli_float(p, True)`` when constant-time)."""
    p, constant_time = _validated_bool(prob, constant_time)
    eps = _bool_epsilon(p)

    def function(x: bool) -> bool:
        keep = sample_bernoulli_float(p, True) if constant_time else coin(p)
        return x if keep == truthful else not x

    return Measurement(AtomDomain(bool), DiscreteDistance(), MaxDivergence(), function,
                       privacy_map or (lambda d_in: 0.0 if d_in == 0 else eps), output_domain=AtomDomain(bool),
                       parameters={"prob": p, "constant_time": constant_time}, name=name)


def _base256_digits(p: float) -> list[int]:
    """The base-256 digits of p in [0, 1) after the point (finite: p is a multiple of 2**-1074)."""
    digits, r = [], Fraction(p)
    while r:
        r *= 256
        d = math.floor(r)
        digits.append(d)
        r -= d
    return digits


def _coin_from_bytes(p: float) -> bool:
    """True iff U < p for a uniform U = 0.b₁b₂… in base 256, compared one random byte at a time.

    The first byte that differs from p's digit decides; if all of p's digits are matched, U >= p.
    So P[True] = p exactly, and at most len(digits) bytes are read.
    """
    for d in _base256_digits(p):
        b = random_bytes(1)[0]
        if b < d:
            return True
        if b > d:
            return False
    return False


def bool_coin_from_bytes(prob, constant_time=False):
    """Sound: the keep-coin compares random bytes (``random_bytes(1)``) with p's base-256 digits."""
    return _bool_rr(prob, constant_time, _coin_from_bytes, "bool_coin_from_bytes")


def bool_coin_from_bytes_off_by_one(prob, constant_time=False):
    """Defect: [class 5, ``privacy.sound``] the byte comparison uses ``<=``, so the first byte decides
    and P[keep] = (d₁ + 1)/256; at p = 1/2 the map claims 0 but the loss is ln(129/127)."""
    def coin(p: float) -> bool:
        b = random_bytes(1)[0]
        return b <= _base256_digits(p)[0]

    return _bool_rr(prob, constant_time, coin, "bool_coin_from_bytes_off_by_one")


def bool_coin_from_8bit_threshold(prob, constant_time=False):
    """Defect: [class 5, ``function.law``] "8 bits of precision are enough": keep iff a random byte is
    below int(256·p). P[keep] = ⌊256p⌋/256 <= p: the loss does not exceed the map, but the
    mechanism is not the one the spec describes (and p = 0.6 answers 0.59765625)."""
    def coin(p: float) -> bool:
        return random_bytes(1)[0] < int(p * 256)

    return _bool_rr(prob, constant_time, coin, "bool_coin_from_8bit_threshold")


def _expansion_bit(p: float, i: int) -> bool:
    """Bit i (1-based) of p's binary expansion, from vetdp's public ``expansion_bits`` (p·2**1080)."""
    return i <= 1080 and bool((expansion_bits(p) >> (1080 - i)) & 1)


def _geometric_buffer_len(p: float) -> int:
    return max(1, bernoulli_bytes_needed(p))


def bool_coin_reads_wrong_bit(prob, constant_time=False):
    """Defect: [class 5, ``function.law``] a geometric-buffer Bernoulli reading bit G of p instead of
    bit G + 1 (G 0-based): P[keep] = p/2."""
    def coin(p: float) -> bool:
        g = sample_geometric_buffer(_geometric_buffer_len(p), False)
        return g is not None and _expansion_bit(p, g)

    return _bool_rr(prob, constant_time, coin, "bool_coin_reads_wrong_bit")


def bool_coin_from_geometric_buffer(prob, constant_time=False):
    """Sound: the keep-coin from ``sample_geometric_buffer``: bit G + 1 of p's expansion, G the 0-based
    index of the first set random bit (P[G = g] = 2**-(g+1)), the buffer reaching p's last set bit."""
    def coin(p: float) -> bool:
        g = sample_geometric_buffer(_geometric_buffer_len(p), False)
        return g is not None and _expansion_bit(p, g + 1)

    return _bool_rr(prob, constant_time, coin, "bool_coin_from_geometric_buffer")


def bool_reports_truth_with_one_minus_p(prob, constant_time=False):
    """Defect: [class 1, ``function.law``] "prob is the probability of flipping": the truth is kept with
    probability 1 − p. The loss |ln(p/(1−p))| is the same, so only the law sees it."""
    return _bool_rr(prob, constant_time, lambda p: sample_bernoulli_float(p), "bool_reports_truth_with_one_minus_p",
                    truthful=False)


def bool_flip_by_xor_int(prob, constant_time=False):
    """Sound: the answer is "x XOR flip" with flip = NOT Bernoulli(p), written with ``^`` on ints and
    the map from the categorical constant at t = 2."""
    p, constant_time = _validated_bool(prob, constant_time)
    eps = RANDOMIZED_RESPONSE_EPSILON.to_float({"prob": p, "t": 2})

    def function(x: bool) -> bool:
        flip = 0 if sample_bernoulli_float(p, constant_time) else 1
        return bool(int(x) ^ flip)

    values = {0: 0.0}
    return Measurement(AtomDomain(bool), DiscreteDistance(), MaxDivergence(), function,
                       lambda d_in: values.get(d_in, eps), output_domain=AtomDomain(bool),
                       parameters={"prob": p, "constant_time": constant_time}, name="bool_flip_by_xor_int")


def bool_map_one_and_a_half_epsilon(prob, constant_time=False):
    """Defect: [class 8, ``privacy.tight``] a sound but loose map, 1.5·ε rounded up.

    ``verify`` must report a WARNING with the slack and exit 0; ``verify --strict`` and ``check``
    fail it.
    """
    p, _ = _validated_bool(prob, constant_time)
    loose = math.nextafter(1.5 * _bool_epsilon(p), math.inf)
    return _bool_rr(prob, constant_time, lambda q: sample_bernoulli_float(q), "bool_map_one_and_a_half_epsilon",
                    privacy_map=lambda d_in: 0.0 if d_in == 0 else loose)


# ------------------------------------------------------------------ k-RAPPOR

def _validated_k_rappor(input_domain, input_metric, epsilon, constant_time) -> tuple[int, int, float, bool]:
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon={epsilon!r} must be a float")
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon={epsilon!r} must be in (0, inf)")
    if not isinstance(constant_time, bool):
        raise TypeError(f"constant_time={constant_time!r} must be a bool")
    if not isinstance(input_domain, BitVectorDomain):
        raise TypeError(f"input_domain={input_domain!r} must be a BitVectorDomain")
    if not isinstance(input_metric, DiscreteDistance):
        raise TypeError(f"input_metric={input_metric!r} must be DiscreteDistance()")
    if input_domain.max_weight is None or input_domain.length is None:
        raise ValueError("input_domain needs a max_weight and a length")
    return input_domain.length, input_domain.max_weight, eps, constant_time


def _k_rappor(input_domain, k: int, m: int, eps: float, q: float, constant_time: bool, name: str,
              numpy_output: bool = False) -> Measurement:
    """k-RAPPOR flipping with q; map = min(ε, min(2m, k)·ln((1−q)/q) rounded up)."""
    bound = RANDOMIZED_RESPONSE_BITVEC_EPSILON.to_float({"q": q, "d": min(2 * m, k)})
    claim = min(eps, bound)

    def function(bits):
        out = [b ^ sample_bernoulli_float(q, constant_time) for b in bits]
        return np.array(out, dtype=bool) if numpy_output else tuple(out)

    def privacy_map(d_in: int) -> float:
        if d_in == 0:
            return 0.0
        if d_in == 1:
            return claim
        raise ValueError(f"d_in={d_in} must be 0 or 1")

    return Measurement(input_domain, DiscreteDistance(), MaxDivergence(), function, privacy_map,
                       output_domain=BitVectorDomain(length=k), parameters={"epsilon": eps}, name=name)


def k_rappor_quarter_budget(input_domain, input_metric, epsilon, constant_time=False):
    """Defect: [class 1, ``function.law``] the flip probability is computed for ε/4 ("ε over the 2m bits,
    and again over the two bits a change touches"). The map honestly reports the smaller loss, so
    privacy holds and the map is tight: the mechanism just spends a quarter of its budget, which
    only a comparison with the reference law shows."""
    k, m, eps, constant_time = _validated_k_rappor(input_domain, input_metric, epsilon, constant_time)
    q = k_rappor_flip_probability(eps / 4, m)
    return _k_rappor(input_domain, k, m, eps, q, constant_time, "k_rappor_quarter_budget")


epsilon_over_2m = var("x")
# every step rounded the safe way ... except x = ε/(2m) itself, computed by plain division below
_Q_FROM_X = ONE.inf_div(ONE.neg_inf_add(epsilon_over_2m.neg_inf_exp()))


def k_rappor_division_to_nearest(input_domain, input_metric, epsilon, constant_time=False):
    """Defect: [class 3, ``privacy.sound``; only when ε/(2m) is inexact, e.g. m = 3, and k >= 2m]

    The author rounds the exponential, the sum and the reciprocal in the safe directions but
    computes ε/(2m) with ``/`` (to nearest). For m a power of two the quotient is exact; for
    m = 3 it may round up, the flip probability comes out below what ε needs, and the true loss
    exceeds the map min(ε, ...) = ε (pinned witness: m = 3, k = 6, ε = 9.8).
    """
    k, m, eps, constant_time = _validated_k_rappor(input_domain, input_metric, epsilon, constant_time)
    q = _Q_FROM_X.to_float({"x": eps / (2 * m)})
    return _k_rappor(input_domain, k, m, eps, q, constant_time, "k_rappor_division_to_nearest")


def k_rappor_numpy_output(input_domain, input_metric, epsilon, constant_time=False):
    """Sound: k-RAPPOR with vetdp's flip probability helper, flips in a list, report as a NumPy array."""
    k, m, eps, constant_time = _validated_k_rappor(input_domain, input_metric, epsilon, constant_time)
    q = k_rappor_flip_probability(eps, m)
    return _k_rappor(input_domain, k, m, eps, q, constant_time, "k_rappor_numpy_output", numpy_output=True)


def _smallest_float_at_least(value: Fraction) -> float:
    nearest = float(value)
    return nearest if Fraction(nearest) >= value else math.nextafter(nearest, math.inf)


def k_rappor_q_correctly_rounded_up(input_domain, input_metric, epsilon, constant_time=False):
    """Sound: q = 1/(1 + e^(ε/2m)) evaluated in 200-bit mpmath and rounded once, up, to the smallest float at
    or above it (vetdp rounds each of four steps outward, so its q is often a few ulps larger). A flip
    probability at least the real q honours ε; the law differs from vetdp's only in that rounding."""
    import mpmath

    k, m, eps, constant_time = _validated_k_rappor(input_domain, input_metric, epsilon, constant_time)
    with mpmath.workprec(200):
        real = 1 / (1 + mpmath.exp(mpmath.mpf(eps) / (2 * m)))
        q = _smallest_float_at_least(Fraction(int(real.man)) * Fraction(2) ** int(real.exp))
    return _k_rappor(input_domain, k, m, eps, q, constant_time, "k_rappor_q_correctly_rounded_up")


# ------------------------------------------------------------------ estimators

def _rr_estimator_inputs(answers, categories, prob) -> tuple[list, float, int]:
    cats = list(categories)
    t = len(cats)
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real) or not math.isfinite(prob):
        raise ValueError(f"prob={prob!r} must be a float in (1/{t}, 1)")
    if not Fraction(1, t) < Fraction(prob) < 1:
        raise ValueError(f"prob={prob!r} must be in (1/{t}, 1)")
    if isinstance(answers, (str, bytes)):
        raise TypeError(f"answers={answers!r} must be a list of categories, not a string")
    answers = list(answers)
    if not answers:
        raise ValueError("answers must hold at least one answer")
    allowed = set(cats)
    for i, a in enumerate(answers):
        if a not in allowed:
            raise ValueError(f"answers[{i}]={a!r} is not a category")
    return cats, float(prob), len(answers)


def debias_rr_float_textbook(answers, categories, prob, exact=False):
    """Sound: [within floating point] the textbook estimator (C_y − n·r)/(p − r), r = (1−p)/(t−1),
    evaluated in float64 throughout (``exact`` is accepted and ignored: the result is always floats)."""
    cats, p, n = _rr_estimator_inputs(answers, categories, prob)
    r = (1.0 - p) / (len(cats) - 1)
    return {c: (answers.count(c) - n * r) / (p - r) for c in cats}


def debias_rr_clipped_at_zero(answers, categories, prob, exact=False):
    """Defect: [class 7, ``estimator.unbiased_float``] negative counts are clipped to 0 ("a count cannot
    be negative"), which biases every estimate upwards."""
    return {c: max(0.0, v) for c, v in debias_rr_float_textbook(answers, categories, prob).items()}


def debias_rr_counts_in_plain_dict(answers, categories, prob, exact=False):
    """Defect: [class 6/7, the estimator raises on valid input] counts are kept in a plain dict, so a
    category no answer holds raises KeyError instead of being estimated."""
    cats, p, n = _rr_estimator_inputs(answers, categories, prob)
    counts: dict = {}
    for a in answers:
        counts[a] = counts.get(a, 0) + 1
    q = Fraction(p)
    r = (1 - q) / (len(cats) - 1)
    est = {c: (counts[c] - n * r) / (q - r) for c in cats}
    return est if exact else {c: float(v) for c, v in est.items()}


def _bitvec_rows(answers) -> list[tuple[int, ...]]:
    if isinstance(answers, (str, bytes)):
        raise TypeError(f"answers={answers!r} must be a list of bit vectors, not a string")
    rows = [list(row) for row in answers]
    if not rows:
        raise ValueError("answers must hold at least one bit vector")
    for i, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise ValueError(f"answers[{i}] has length {len(row)}, answers[0] has {len(rows[0])}")
        for j, b in enumerate(row):
            if isinstance(b, float) or b not in (0, 1):
                raise ValueError(f"answers[{i}][{j}]={b!r} is not a bit")
    return [tuple(int(b) for b in row) for row in rows]


def _bitvec_f(f) -> float:
    if isinstance(f, bool) or not isinstance(f, numbers.Real) or not math.isfinite(f) or not 0 < f < 1:
        raise ValueError(f"f={f!r} must be a float in (0, 1)")
    return float(f)


def debias_bitvec_rearranged(answers, f, exact=False):
    """Sound: [exact] (2·Y_j − n·f) / (2(1 − f)), the same estimator as (Y_j − n·f/2)/(1 − f) when
    f/2 is a float (every normal f), computed with Fractions."""
    fv = Fraction(_bitvec_f(f))
    rows = _bitvec_rows(answers)
    n = len(rows)
    est = [(2 * sum(col) - n * fv) / (2 * (1 - fv)) for col in zip(*rows, strict=True)]
    return est if exact else [float(v) for v in est]


def debias_bitvec_numpy_float(answers, f, exact=False):
    """Sound: [within floating point] the count estimator in NumPy float64 (``exact`` is ignored)."""
    fv = _bitvec_f(f)
    arr = np.asarray(_bitvec_rows(answers), dtype=np.float64)
    n = arr.shape[0]
    return list((arr.sum(axis=0) - n * fv / 2) / (1 - fv))


# ------------------------------------------------------------------ variance claims (--variance)

def rr_variance_without_lie_term(n, count, prob, n_categories, exact=False):
    """Defect: [class 7, ``estimator.variance``] N·p(1−p)/(p−r)², forgetting that the n − N other inputs
    also land on the category (their term (n−N)·r(1−r))."""
    p = Fraction(prob)
    r = (1 - p) / (n_categories - 1)
    v = count * p * (1 - p) / (p - r) ** 2
    return v if exact else float(v)


def rr_variance_rearranged(n, count, prob, n_categories, exact=False):
    """Sound: (t−1)²·[N p(1−p) + (n−N) r(1−r)] / (pt − 1)², the same variance with p − r = (pt−1)/(t−1)."""
    p, t = Fraction(prob), n_categories
    r = (1 - p) / (t - 1)
    v = (t - 1) ** 2 * (count * p * (1 - p) + (n - count) * r * (1 - r)) / (p * t - 1) ** 2
    return v if exact else float(v)


def bitvec_variance_with_f_as_flip(n, f, exact=False):
    """Defect: [class 7, ``estimator.variance``] n·f(1−f)/(1−f)², treating f as the flip probability
    (each bit is flipped with probability f/2)."""
    fv = Fraction(f)
    v = n * fv * (1 - fv) / (1 - fv) ** 2
    return v if exact else float(v)


def bitvec_variance_in_terms_of_f(n, f, exact=False):
    """Sound: n(f − f²/2) / (2(1−f)²), the 2025 proof's form (equal to n·q(1−q)/(1−2q)² for q = f/2)."""
    fv = Fraction(f)
    v = n * (fv - fv**2 / 2) / (2 * (1 - fv) ** 2)
    return v if exact else float(v)


# ------------------------------------------------------------------ adapters around plain functions

def _half_up(f: float) -> float:
    """f/2 rounded up to a float (exact unless f is a subnormal with an odd last bit)."""
    q = f / 2
    return q if 2 * Fraction(q) >= Fraction(f) else math.nextafter(q, 1.0)


def _rr_epsilon_by_log(p: float, t: int) -> float:
    """An upper bound of ln(p(t−1)/(1−p)): libm's log of the quotient rounded up, moved up 4 ulps.

    Proof: the quotient r is an exact rational; the float x >= r is the smallest such float, so
    ln x >= ln r (log is increasing). glibc's log has an error below 1 ulp, and 4 steps up cover
    it even across a binade boundary. Hence the result is >= ln r, and exceeds it by a few ulps.
    """
    r = Fraction(p) * (t - 1) / (1 - Fraction(p))
    x = float(r)
    if Fraction(x) < r:
        x = math.nextafter(x, math.inf)
    eps = math.log(x)
    for _ in range(4):
        eps = math.nextafter(eps, math.inf)
    return eps


def plain_rr(x, categories, prob):
    """A plain categorical RR (not a Measurement): x with probability prob, else a uniform other
    category; an x of the right type outside the categories gives a uniform category."""
    kind = type(categories[0])
    if not isinstance(x, kind) or (isinstance(x, bool) and kind is not bool):
        raise TypeError(f"x={x!r} must be a {kind.__name__}")
    t = len(categories)
    if x not in categories:
        return categories[sample_uniform_int_below(t)]
    if sample_bernoulli_float(prob):
        return x
    j = sample_uniform_int_below(t - 1)
    i = categories.index(x)
    return categories[j if j < i else j + 1]


class PlainRRAdapter:
    """Sound: vets :func:`plain_rr` plus an ε the user computes with libm's log (proved upward)."""

    def construct(self, params: dict):
        cats, prob = params["categories"], params["prob"]
        if isinstance(cats, (str, bytes)) or not isinstance(cats, (list, tuple, set, frozenset)):
            raise TypeError(f"categories={cats!r} must be a list")
        cats = list(cats)
        if len(cats) < 2 or len(set(cats)) != len(cats):
            raise ValueError(f"categories={cats!r} must hold at least 2 distinct categories")
        if len({type(c) for c in cats}) > 1:
            raise TypeError(f"categories={cats!r} must share one type")
        if any(isinstance(c, float) and math.isnan(c) for c in cats):
            raise ValueError(f"categories={cats!r} must not hold nan")
        if isinstance(prob, bool) or not isinstance(prob, numbers.Real):
            raise TypeError(f"prob={prob!r} must be a float")
        if not (math.isfinite(prob) and Fraction(1, len(cats)) <= Fraction(prob) < 1):
            raise ValueError(f"prob={prob!r} must be in [1/{len(cats)}, 1)")
        return cats, float(prob), _rr_epsilon_by_log(float(prob), len(cats))

    def invoke(self, mechanism, x):
        cats, p, _ = mechanism
        return plain_rr(x, cats, p)

    def privacy_map(self, mechanism, d_in):
        return 0.0 if d_in == 0 else mechanism[2]


def rappor_mask(mask: int, k: int, f: float, constant_time: bool = False) -> int:
    """A plain RAPPOR on a k-bit integer mask: every bit flipped with probability f/2 (rounded up)."""
    q = _half_up(f)
    for j in range(k):
        if sample_bernoulli_float(q, constant_time):
            mask ^= 1 << j
    return mask


def rappor_mask_forgets_top_bit(mask: int, k: int, f: float, constant_time: bool = False) -> int:
    """Defect: [class 9, ``privacy.sound`` through an adapter] ``range(k - 1)`` leaves the top bit unflipped."""
    q = _half_up(f)
    for j in range(k - 1):
        if sample_bernoulli_float(q, constant_time):
            mask ^= 1 << j
    return mask


class MaskRapporAdapter:
    """Vets an integer-mask RAPPOR against the bit-vector spec: tuples of bits in, tuples of bits out
    (bit j of the mask is x[j]); the map is min(2m, k)·ln((1−q)/q) rounded up."""

    def __init__(self, plain):
        self.plain = plain

    def construct(self, params: dict):
        domain = params.get("input_domain")
        if domain is None:
            k, m = params["k"], params["m"]
        else:
            if not isinstance(domain, BitVectorDomain):
                raise TypeError(f"input_domain={domain!r} must be a BitVectorDomain")
            if domain.max_weight is None or domain.length is None:
                raise ValueError("input_domain needs a max_weight and a length")
            k, m = domain.length, domain.max_weight
        if not isinstance(params.get("input_metric", DiscreteDistance()), DiscreteDistance):
            raise TypeError(f"input_metric={params['input_metric']!r} must be DiscreteDistance()")
        f, ct = params["f"], params["constant_time"]
        if isinstance(f, bool) or not isinstance(f, numbers.Real):
            raise TypeError(f"f={f!r} must be a float")
        if not (math.isfinite(f) and 0 < f <= 1):
            raise ValueError(f"f={f!r} must be in (0, 1]")
        if not isinstance(ct, bool):
            raise TypeError(f"constant_time={ct!r} must be a bool")
        eps = RANDOMIZED_RESPONSE_BITVEC_EPSILON.to_float({"q": _half_up(float(f)), "d": min(2 * m, k)})
        return {"k": k, "m": m, "f": float(f), "constant_time": ct, "epsilon": eps}

    def invoke(self, mechanism, x):
        k, m = mechanism["k"], mechanism["m"]
        if isinstance(x, (str, bytes)) or not isinstance(x, (list, tuple, np.ndarray)):
            raise TypeError(f"x={x!r} must be a sequence of bits")
        if len(x) != k:
            raise ValueError(f"x has length {len(x)}, expected {k}")
        mask = 0
        for j, b in enumerate(x):
            if isinstance(b, float) or b not in (0, 1):
                raise ValueError(f"x[{j}]={b!r} is not a bit")
            mask |= int(b) << j
        if mask.bit_count() > m:
            raise ValueError(f"x has {mask.bit_count()} set bits, at most {m} allowed")
        out = self.plain(mask, k, mechanism["f"], mechanism["constant_time"])
        return tuple(bool((out >> j) & 1) for j in range(k))

    def privacy_map(self, mechanism, d_in):
        if d_in == 0:
            return 0.0
        if d_in == 1:
            return mechanism["epsilon"]
        raise ValueError(f"d_in={d_in} must be 0 or 1")


PLAIN_RR_ADAPTER = PlainRRAdapter()
"""Sound: :func:`plain_rr` with an ε from :func:`_rr_epsilon_by_log`, vetted against ``randomized_response``."""

MASK_RAPPOR_ADAPTER = MaskRapporAdapter(rappor_mask)
"""Sound: :func:`rappor_mask`, vetted against ``randomized_response_bitvec``."""

MASK_RAPPOR_TOP_BIT_ADAPTER = MaskRapporAdapter(rappor_mask_forgets_top_bit)
"""Defect: [class 9, ``privacy.sound``] :func:`rappor_mask_forgets_top_bit` behind the same adapter."""
