"""Hoare triple of make_buffling (impl/buffling.py): flip every bit, shuffle the columns.

Pre: n_pub in [1, 16], n_bit in [1, inf), flip_prob a float in (0, 0.5].
Post: map(1) >= the exact max-divergence between matrices that differ in one column
(the shuffle makes the pure bound loose, so tightness is not required); no
input-dependent errors; matrices of the wrong shape or with non-bits rejected.
The (ε, δ) analysis of the shuffled output is checked by the buffling provider.
Proof: proofs/buffling.md
"""

import itertools
import math

from hypothesis import strategies as st

from vetdp.engine.spec import BadParams, MeasurementSpec, floats_in


def build(ctor, p):
    return ctor(p["n_pub"], p["n_bit"], p["flip_prob"])


def params(deep: bool):
    shapes = [(1, 1), (1, 2), (2, 1), (1, 3), (2, 2)] + ([(1, 4), (2, 3), (3, 2)] if deep else [])
    return st.sampled_from(shapes).flatmap(lambda km: st.fixed_dictionaries({
        "n_pub": st.just(km[0]), "n_bit": st.just(km[1]),
        "flip_prob": floats_in(5e-324, 0.5, edges=[5e-324, 1e-9, 0.1, 0.25, math.nextafter(0.5, 0.0), 0.5]),
    }))


def inputs(p):
    k, m = p["n_pub"], p["n_bit"]
    return [tuple(bits[b * m:(b + 1) * m] for b in range(k))
            for bits in itertools.product((False, True), repeat=k * m)]


def one_column_apart(p, frozen_inputs):
    def columns(x):
        return list(zip(*x, strict=True))

    return [(x, y) for x in frozen_inputs for y in frozen_inputs
            if sum(a != b for a, b in zip(columns(x), columns(y), strict=True)) == 1]


def outside(p):
    k, m = p["n_pub"], p["n_bit"]
    return [[[0] * (m + 1)] * k, [[0] * m] * (k + 1), [[2] * m] * k, "0" * m, None]


def _bad(id_, error, names, **kw):
    return BadParams(id_, {"n_pub": 2, "n_bit": 3, "flip_prob": 0.25, **kw}, error, names)


SPECS = [
    MeasurementSpec(
        name="buffling",
        constructor="make_buffling",
        build=build,
        params=params,
        examples=[{"n_pub": 1, "n_bit": 1, "flip_prob": 0.25}, {"n_pub": 2, "n_bit": 2, "flip_prob": 0.1},
                  {"n_pub": 1, "n_bit": 3, "flip_prob": 0.5}, {"n_pub": 2, "n_bit": 1, "flip_prob": 5e-324}],
        bad=[
            _bad("n_pub_zero", ValueError, ("n_pub",), n_pub=0),
            _bad("n_pub_too_many", ValueError, ("n_pub",), n_pub=17),
            _bad("n_bit_zero", ValueError, ("n_bit",), n_bit=0),
            _bad("n_bit_str", TypeError, ("n_bit",), n_bit="3"),
            _bad("flip_prob_zero", ValueError, ("flip_prob",), flip_prob=0.0),
            _bad("flip_prob_above_half", ValueError, ("flip_prob",), flip_prob=math.nextafter(0.5, 1.0)),
            _bad("flip_prob_nan", ValueError, ("flip_prob",), flip_prob=math.nan),
        ],
        inputs=inputs,
        outside=outside,
        neighbours=one_column_apart,
        tight=False,
        describe="shuffled and flipped Bloom filters",
    )
]
