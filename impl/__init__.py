"""The mechanisms vetdp vets: each module pairs with specs/<name>.py and proofs/<name>.md."""

from vetdp.impl.k_rappor import make_k_rappor
from vetdp.impl.randomized_response import (
    debias_randomized_response,
    make_randomized_response,
    randomized_response_count_variance,
)
from vetdp.impl.randomized_response_bitvec import (
    debias_randomized_response_bitvec,
    debias_randomized_response_bitvec_frequencies,
    make_randomized_response_bitvec,
    make_rappor,
    randomized_response_bitvec_count_mse,
    randomized_response_bitvec_count_variance,
    randomized_response_bitvec_frequency_mse,
)
from vetdp.impl.randomized_response_bool import make_randomized_response_bool

__all__ = [
    "make_randomized_response_bool",
    "make_randomized_response",
    "debias_randomized_response",
    "randomized_response_count_variance",
    "make_randomized_response_bitvec",
    "make_rappor",
    "debias_randomized_response_bitvec",
    "debias_randomized_response_bitvec_frequencies",
    "randomized_response_bitvec_count_variance",
    "randomized_response_bitvec_count_mse",
    "randomized_response_bitvec_frequency_mse",
    "make_k_rappor",
]
