"""k-RAPPOR parameterised by ε (the 2024 blog post): the flip probability that reaches ε.

Spec: specs/k_rappor.py · Proof: proofs/k_rappor.md
"""

from __future__ import annotations

from vetdp.arith.expr import ONE, TWO, var
from vetdp.core.measurement import BitVectorDomain, DiscreteDistance, Measurement, PrivacyConstant
from vetdp.core.validation import check_bool, check_float, check_interval
from vetdp.impl.randomized_response_bitvec import make_randomized_response_bitvec

__all__ = ["K_RAPPOR_FLIP_PROBABILITY", "make_k_rappor", "k_rappor_flip_probability"]

epsilon, k = var("epsilon"), var("k", "int")

# q = 1/(1 + exp(ε/(2k))) is decreasing in ε/(2k): rounding ε/(2k), the exponential and the
# sum down, then the reciprocal up, gives q_float >= q, i.e. at least the noise ε asks for.
K_RAPPOR_FLIP_PROBABILITY = ONE.inf_div(ONE.neg_inf_add(epsilon.neg_inf_div(TWO.inf_mul(k)).neg_inf_exp()))


def k_rappor_flip_probability(epsilon_value: float, max_weight: int) -> float:
    """The per-bit flip probability for ε-DP k-RAPPOR with at most ``max_weight`` set bits."""
    return K_RAPPOR_FLIP_PROBABILITY.to_float({"epsilon": epsilon_value, "k": max_weight})


def make_k_rappor(input_domain: BitVectorDomain, input_metric: DiscreteDistance, epsilon: float,
                  constant_time: bool = False) -> Measurement:
    """ε-DP k-RAPPOR: bit-vector randomized response with flip probability q = 1/(1 + e^(ε/2k)).

    Preconditions: ``input_domain`` a BitVectorDomain with max_weight k and a length;
    ``epsilon`` a float in (0, inf).

    Privacy: the flip probability is rounded up (:data:`K_RAPPOR_FLIP_PROBABILITY`), so the
    true loss is at most ε; the map returns the smaller of ε and the bit-vector bound for
    the f = 2q actually used (both are upper bounds, the latter is smaller when the
    length is below 2k).

    Proof: proofs/k_rappor.md
    """
    eps = check_float("epsilon", epsilon)
    check_interval("epsilon", eps, 0, None, lo_closed=False, hi_closed=False)
    check_bool("constant_time", constant_time)
    if not isinstance(input_domain, BitVectorDomain):
        raise TypeError(f"input_domain={input_domain!r} must be a BitVectorDomain")
    if input_domain.max_weight is None:
        raise ValueError("input_domain.max_weight=None: make_k_rappor requires a max_weight in [1, inf)")
    flip = k_rappor_flip_probability(eps, input_domain.max_weight)
    inner = make_randomized_response_bitvec(input_domain, input_metric, 2 * flip, constant_time)

    def privacy_map(d_in: int) -> float:
        return min(eps, inner.map(d_in))

    return Measurement(
        input_domain=inner.input_domain,
        input_metric=inner.input_metric,
        output_measure=inner.output_measure,
        function=inner.function,
        privacy_map=privacy_map,
        output_domain=inner.output_domain,
        privacy_constant=PrivacyConstant(K_RAPPOR_FLIP_PROBABILITY, {"epsilon": eps, "k": input_domain.max_weight}),
        parameters={"input_domain": input_domain, "input_metric": input_metric, "epsilon": eps,
                    "constant_time": constant_time},
        batch=inner.batch,
        name="make_k_rappor",
    )
