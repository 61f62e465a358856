"""Hoare triple of make_buffling (impl/buffling.py): flip every bit, shuffle the columns.

Pre: n_pub in [1, 16], n_bit in [1, inf), flip_prob a float in (0, 0.5].
Law: every bit flipped independently with probability flip_prob (the float itself, no
rounding), then the columns put in a uniformly random order:
P[Y = y | x] = (1/m!) Σ_σ Π_c P[column c of y | column σ(c) of x], a column of k bits
moving to one at Hamming distance h with probability p^h (1−p)^(k−h).
Post: map(d) >= the exact max-divergence between matrices that differ in at most d columns
(ColumnDistance), for d = 0..3, and monotone (the shuffle makes the pure bound loose, so
tightness is not required); no input-dependent errors; matrices of the wrong shape, with
non-bits or of a float dtype rejected, also as NumPy arrays; NumPy bool and int arrays and
nested lists accepted.
The (ε, δ) analysis of the shuffled output is checked by the buffling provider.
Proof: proofs/buffling.md
"""

import itertools
import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from vetdp.engine.spec import BadParams, MeasurementSpec, floats_in


def build(ctor, p):
    return ctor(p["n_pub"], p["n_bit"], p["flip_prob"])


def params(deep: bool):
    shapes = [(1, 1), (1, 2), (2, 1), (1, 3), (2, 2), (3, 1)] + ([(1, 4), (2, 3), (3, 2)] if deep else [])
    return st.sampled_from(shapes).flatmap(lambda km: st.fixed_dictionaries({
        "n_pub": st.just(km[0]), "n_bit": st.just(km[1]),
        "flip_prob": floats_in(5e-324, 0.5, edges=[5e-324, 1e-9, 0.1, 0.25, math.nextafter(0.5, 0.0), 0.5]),
    }))


def matrices(k: int, m: int) -> list[tuple[tuple[bool, ...], ...]]:
    """Every k × m bit matrix, as a tuple of row tuples."""
    return [tuple(bits[b * m:(b + 1) * m] for b in range(k)) for bits in itertools.product((False, True), repeat=k * m)]


def inputs(p):
    """Every k × m matrix, plus one asymmetric matrix as nested lists and as NumPy bool and int arrays."""
    k, m = p["n_pub"], p["n_bit"]
    every = matrices(k, m)
    corner = tuple(tuple(b == 0 and c == 0 for c in range(m)) for b in range(k))
    return [*every, [list(row) for row in corner], np.array(corner, dtype=bool), np.array(corner, dtype=np.int64)]


def matrix_of(x) -> tuple[tuple[bool, ...], ...]:
    """An in-domain input (nested sequence or 2-D array of bits) as a tuple of row tuples of bools."""
    rows = x.tolist() if isinstance(x, np.ndarray) else x
    return tuple(tuple(bool(b) for b in row) for row in rows)


def column_distance(p, x, y) -> int:
    """The number of columns in which two k × m matrices differ (the input metric, ColumnDistance)."""
    a, b = matrix_of(x), matrix_of(y)
    return sum(ca != cb for ca, cb in zip(zip(*a, strict=True), zip(*b, strict=True), strict=True))


def law(p, x):
    """P[M(x) = y]: the flip-then-shuffle law of the module docstring, exactly."""
    k, m = p["n_pub"], p["n_bit"]
    q = Fraction(p["flip_prob"])
    columns = list(zip(*matrix_of(x), strict=True))
    shapes = list(itertools.product((False, True), repeat=k))
    power = [q**h * (1 - q) ** (k - h) for h in range(k + 1)]
    moves = {(j, z): power[sum(a != b for a, b in zip(col, z, strict=True))]
             for j, col in enumerate(columns) for z in shapes}
    perms = list(itertools.permutations(range(m)))
    dist: dict = defaultdict(Fraction)
    for out in itertools.product(shapes, repeat=m):
        total = Fraction(0)
        for sigma in perms:
            term = Fraction(1)
            for c in range(m):
                term *= moves[(sigma[c], out[c])]
            total += term
        if total:
            dist[tuple(tuple(out[c][b] for c in range(m)) for b in range(k))] += total / len(perms)
    return dict(dist)


def edges(p) -> list[str]:
    """Boundary classes: shape, flip_prob at 1/2, just below it and subnormal, the input containers."""
    k, m, q = p["n_pub"], p["n_bit"], p["flip_prob"]
    out = [f"shape {k}×{m}", "numpy input", "list input", "numpy outside"]
    if m == 1:
        out.append("n_bit=1 (no shuffle)")
    if k >= 2:
        out.append("n_pub>=2")
    if q == 0.5:
        out.append("flip_prob=1/2 (pure noise)")
    elif q == math.nextafter(0.5, 0.0):
        out.append("flip_prob=1/2−2⁻⁵⁴")
    if q < 2.2250738585072014e-308:
        out.append("flip_prob subnormal")
    return out


def one_column_apart(p, frozen_inputs):
    def columns(x):
        return list(zip(*x, strict=True))

    return [(x, y) for x in frozen_inputs for y in frozen_inputs
            if sum(a != b for a, b in zip(columns(x), columns(y), strict=True)) == 1]


def outside(p):
    """Wrong shapes, non-bits, float dtypes, strings — as lists and as NumPy arrays."""
    k, m = p["n_pub"], p["n_bit"]
    return [[[0] * (m + 1)] * k, [[0] * m] * (k + 1), [[2] * m] * k, "0" * m, None, b"\x00" * m,
            np.zeros((k, m + 1), dtype=bool), np.zeros((k + 1, m), dtype=np.int64), np.zeros((k, m), dtype=np.float64),
            np.full((k, m), 2), np.full((k, m), -1), np.zeros(k * m, dtype=bool), np.zeros((1, k, m), dtype=bool),
            [[0.0] * m] * k, [[0] * m] * (k - 1) + [[0] * (m + 1)]]


def _bad(id_, error, names, **kw):
    return BadParams(id_, {"n_pub": 2, "n_bit": 3, "flip_prob": 0.25, **kw}, error, names)


SPECS = [
    MeasurementSpec(
        name="buffling",
        size=lambda p: ("n_bit", 2 ** min(p["n_pub"] * p["n_bit"], 64)),  # every k × m matrix is an input
        constructor="make_buffling",
        build=build,
        params=params,
        examples=[{"n_pub": 1, "n_bit": 1, "flip_prob": 0.25}, {"n_pub": 2, "n_bit": 2, "flip_prob": 0.1},
                  {"n_pub": 1, "n_bit": 3, "flip_prob": 0.5}, {"n_pub": 2, "n_bit": 1, "flip_prob": 5e-324},
                  {"n_pub": 3, "n_bit": 1, "flip_prob": math.nextafter(0.5, 0.0)},
                  {"n_pub": 1, "n_bit": 3, "flip_prob": 0.3}],
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
        law=law,
        distance=column_distance,
        max_d_in=3,
        edges=edges,
    )
]
