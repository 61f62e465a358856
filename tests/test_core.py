"""Domains, metrics, Measurement, and the precondition table of every constructor.

Each precondition row names the call, the exception TYPE it must raise, and the text the
message must contain: the parameter's name and the offending value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from vetdp.core.measurement import (
    AtomDomain,
    BitVectorDomain,
    DiscreteDistance,
    DomainError,
    MaxDivergence,
    atom_domain,
    bitvector_domain,
    discrete_distance,
    max_divergence,
)
from vetdp.impl import (
    make_k_rappor,
    make_randomized_response,
    make_randomized_response_bitvec,
    make_randomized_response_bool,
)

DOMAIN = BitVectorDomain(max_weight=1, length=4)
DD = DiscreteDistance()


# ------------------------------------------------------------------ domains

@pytest.mark.parametrize("x", [1, 0, "True", None, 1.0, np.int64(1)])
def test_atom_domain_bool_rejects_non_bools(x):
    dom = AtomDomain(bool)
    assert not dom.member(x)
    with pytest.raises(TypeError, match="must be of type bool") as info:
        dom.check_member(x)
    assert isinstance(info.value, DomainError)


@pytest.mark.parametrize("x", [True, False])
def test_atom_domain_int_rejects_bools_and_bool_domain_accepts_them(x):
    assert not AtomDomain(int).member(x)
    assert AtomDomain(bool).check_member(x) is x


def test_atom_domain_float_rejects_nan_accepts_inf():
    dom = AtomDomain(float)
    with pytest.raises(DomainError, match="NaN"):
        dom.check_member(math.nan)
    assert dom.member(1.5) and dom.member(math.inf) and not dom.member(1)


def test_atom_domain_helper_requires_a_type():
    assert atom_domain(str) == AtomDomain(str)
    with pytest.raises(TypeError, match="T='str'"):
        atom_domain("str")


@pytest.mark.parametrize("kwargs,exc,text", [
    pytest.param({"max_weight": 0}, ValueError, "max_weight=0", id="max-weight-zero"),
    pytest.param({"max_weight": -2}, ValueError, "max_weight=-2", id="max-weight-negative"),
    pytest.param({"max_weight": 1.5}, TypeError, "max_weight=1.5", id="max-weight-float"),
    pytest.param({"max_weight": True}, TypeError, "max_weight=True", id="max-weight-bool"),
    pytest.param({"length": -1}, ValueError, "length=-1", id="length-negative"),
    pytest.param({"length": 0}, ValueError, "length=0", id="length-zero"),
    pytest.param({"length": 1.5}, TypeError, "length=1.5", id="length-float"),
    pytest.param({"length": "4"}, TypeError, "length='4'", id="length-str"),
])
def test_bitvector_domain_bad_parameters_raise(kwargs, exc, text):
    with pytest.raises(exc) as info:
        BitVectorDomain(**kwargs)
    assert text in str(info.value)
    with pytest.raises(exc):
        bitvector_domain(**kwargs)


@pytest.mark.parametrize("x", [np.True_, np.False_])
def test_atom_domain_bool_accepts_numpy_bools_as_python_bools(x):
    got = AtomDomain(bool).check_member(x)
    assert type(got) is bool and got == bool(x)


@pytest.mark.parametrize("x", [{1, 0}, frozenset({1}), {0: 1, 1: 0, 2: 0}, iter([1, 0, 0]),
                               (b for b in [1, 0, 0])], ids=["set", "frozenset", "dict", "iterator", "generator"])
def test_bitvector_domain_rejects_containers_without_bit_order(x):
    with pytest.raises(TypeError, match="sequence of 0/1 bits"):
        bitvector_domain(max_weight=3, length=3).check_member(x)


def test_bitvector_domain_membership_normalises_to_bool_tuples():
    dom = bitvector_domain(max_weight=2, length=3)
    assert dom == BitVectorDomain(max_weight=2, length=3)
    assert dom.check_member([1, 0, True]) == (True, False, True)
    assert dom.check_member(np.array([0, 1, 0])) == (False, True, False)
    assert dom.check_member((False, False, False)) == (False, False, False)


@pytest.mark.parametrize("x,text", [
    pytest.param([1, 1, 1], "3 set bits", id="too-heavy"),
    pytest.param([1, 0], "length 2", id="too-short"),
    pytest.param([1, 0, 0, 0], "length 4", id="too-long"),
    pytest.param([2, 0, 0], "x[0]=2", id="value-2"),
    pytest.param([0, 0.5, 0], "x[1]=0.5", id="half"),
    pytest.param([0, None, 0], "x[1]=None", id="None-bit"),
    pytest.param(np.zeros((1, 3), int), "one-dimensional", id="2-D"),
    pytest.param("101", "sequence", id="str"),
    pytest.param(5, "sequence", id="int"),
])
def test_bitvector_domain_rejects_non_members_with_reason(x, text):
    dom = BitVectorDomain(max_weight=2, length=3)
    with pytest.raises(DomainError) as info:
        dom.check_member(x)
    assert text in str(info.value)
    assert not dom.member(x)


def test_unbounded_bitvector_domain_accepts_any_bits():
    assert BitVectorDomain().check_member([1] * 10) == (True,) * 10


# ------------------------------------------------------------------ metric, measure, Measurement

def test_discrete_distance_and_max_divergence_helpers():
    assert discrete_distance() == DiscreteDistance()
    assert isinstance(max_divergence(), MaxDivergence)
    assert DD.check_distance(0) == 0 and DD.check_distance(7) == 7


@pytest.mark.parametrize("d_in,exc", [
    pytest.param(-1, ValueError, id="negative"), pytest.param(1.0, TypeError, id="float"),
    pytest.param(0.5, TypeError, id="half"), pytest.param(True, TypeError, id="bool"),
    pytest.param(None, TypeError, id="None"), pytest.param(math.nan, TypeError, id="nan"),
])
@pytest.mark.parametrize("make", [
    pytest.param(lambda: make_randomized_response(["a", "b", "c"], 0.75), id="rr"),
    pytest.param(lambda: make_randomized_response_bool(0.75), id="rr-bool"),
    pytest.param(lambda: make_randomized_response_bitvec(DOMAIN, DD, 0.5), id="bitvec"),
    pytest.param(lambda: make_k_rappor(DOMAIN, DD, 1.0), id="k-rappor"),
])
def test_measurement_map_validates_d_in(make, d_in, exc):
    with pytest.raises(exc) as info:
        make().map(d_in)
    assert f"d_in={d_in!r}" in str(info.value)


@pytest.mark.parametrize("make", [
    pytest.param(lambda: make_randomized_response(["a", "b", "c"], 0.75), id="rr"),
    pytest.param(lambda: make_randomized_response_bool(0.75), id="rr-bool"),
    pytest.param(lambda: make_randomized_response_bitvec(DOMAIN, DD, 0.5), id="bitvec"),
    pytest.param(lambda: make_k_rappor(DOMAIN, DD, 1.0), id="k-rappor"),
])
def test_measurement_check_claimed_bound_passes_and_next_smaller_float_fails(make):
    meas = make()
    eps = meas.map(1)
    assert meas.check(1, eps)
    assert not meas.check(1, math.nextafter(eps, 0))
    assert meas.check(1, math.nextafter(eps, math.inf))
    assert meas.check(0, 0.0) and meas.check(0, 0)


@pytest.mark.parametrize("d_out,exc", [
    pytest.param(math.nan, ValueError, id="nan"), pytest.param(math.inf, ValueError, id="inf"),
    pytest.param(-math.inf, ValueError, id="-inf"), pytest.param(-0.1, ValueError, id="negative"),
    pytest.param("1.0", TypeError, id="str"), pytest.param(True, TypeError, id="bool"),
    pytest.param(None, TypeError, id="None"), pytest.param(2**53 + 1, ValueError, id="inexact-int"),
])
def test_measurement_check_bad_d_out_raises(d_out, exc):
    meas = make_randomized_response(["a", "b", "c"], 0.75)
    with pytest.raises(exc) as info:
        meas.check(1, d_out)
    assert "d_out=" in str(info.value)


def test_measurement_check_compares_exactly_not_as_floats():
    meas = make_randomized_response_bool(0.75)
    eps = meas.map(1)  # ln 3 rounded up
    assert meas.check(1, 2)  # an int d_out compared as a rational
    assert not meas.check(1, 1)
    assert meas.check(1, eps) and not meas.check(1, math.nextafter(eps, 0))


# ------------------------------------------------------------------ the precondition table

NAN, INF = math.nan, math.inf
CATS = ["a", "b", "c"]


def _row(id_, call, exc, *texts):
    return pytest.param(call, exc, texts, id=id_)


PRECONDITIONS = [
    # make_randomized_response_bool
    _row("bool-prob-nan", lambda: make_randomized_response_bool(NAN), ValueError, "prob=nan"),
    _row("bool-prob-inf", lambda: make_randomized_response_bool(INF), ValueError, "prob=inf"),
    _row("bool-prob--inf", lambda: make_randomized_response_bool(-INF), ValueError, "prob=-inf"),
    _row("bool-prob-negative", lambda: make_randomized_response_bool(-0.5), ValueError, "prob=-0.5", "[0.5, 1)"),
    _row("bool-prob-one", lambda: make_randomized_response_bool(1.0), ValueError, "prob=1.0", "[0.5, 1)"),
    _row("bool-prob-above-one", lambda: make_randomized_response_bool(1.5), ValueError, "prob=1.5"),
    _row("bool-prob-below-half", lambda: make_randomized_response_bool(0.49), ValueError, "prob=0.49"),
    _row("bool-prob-just-below-half", lambda: make_randomized_response_bool(math.nextafter(0.5, 0)), ValueError,
         "prob=0.49999999999999994"),
    _row("bool-prob-str", lambda: make_randomized_response_bool("0.75"), TypeError, "prob='0.75'"),
    _row("bool-prob-bool", lambda: make_randomized_response_bool(True), TypeError, "prob=True"),
    _row("bool-prob-None", lambda: make_randomized_response_bool(None), TypeError, "prob=None"),
    _row("bool-constant-time-int", lambda: make_randomized_response_bool(0.75, 1), TypeError, "constant_time=1"),
    _row("bool-constant-time-str", lambda: make_randomized_response_bool(0.75, "yes"), TypeError,
         "constant_time='yes'"),
    # make_randomized_response
    _row("rr-one-category", lambda: make_randomized_response(["a"], 0.75), ValueError, "categories=['a']"),
    _row("rr-no-categories", lambda: make_randomized_response([], 0.75), ValueError, "categories=[]"),
    _row("rr-duplicate-categories", lambda: make_randomized_response(["a", "b", "a"], 0.75), ValueError,
         "categories", "'a'"),
    _row("rr-mixed-type-categories", lambda: make_randomized_response(["a", 1], 0.75), TypeError,
         "categories=['a', 1]"),
    _row("rr-str-categories", lambda: make_randomized_response("abc", 0.75), TypeError, "categories='abc'"),
    _row("rr-None-categories", lambda: make_randomized_response(None, 0.75), TypeError, "categories=None"),
    _row("rr-dict-categories", lambda: make_randomized_response({"a": 1, "b": 2}, 0.75), TypeError, "categories="),
    _row("rr-unhashable-category", lambda: make_randomized_response([[1], [2]], 0.75), TypeError, "categor", "[1]"),
    _row("rr-nan-category", lambda: make_randomized_response([NAN, 1.0], 0.75), ValueError, "categor", "nan"),
    _row("rr-prob-nan", lambda: make_randomized_response(CATS, NAN), ValueError, "prob=nan"),
    _row("rr-prob-inf", lambda: make_randomized_response(CATS, INF), ValueError, "prob=inf"),
    _row("rr-prob--inf", lambda: make_randomized_response(CATS, -INF), ValueError, "prob=-inf"),
    _row("rr-prob-negative", lambda: make_randomized_response(CATS, -0.1), ValueError, "prob=-0.1"),
    _row("rr-prob-one", lambda: make_randomized_response(CATS, 1.0), ValueError, "prob=1.0", "[1/3, 1)"),
    _row("rr-prob-below-one-over-t", lambda: make_randomized_response(CATS, 0.3), ValueError, "prob=0.3", "[1/3, 1)"),
    _row("rr-prob-float-nearest-one-third", lambda: make_randomized_response(CATS, 1 / 3), ValueError,
         "prob=0.3333333333333333"),
    _row("rr-prob-str", lambda: make_randomized_response(CATS, "0.5"), TypeError, "prob='0.5'"),
    _row("rr-prob-bool", lambda: make_randomized_response(CATS, True), TypeError, "prob=True"),
    # make_randomized_response_bitvec
    _row("bitvec-domain-atom", lambda: make_randomized_response_bitvec(AtomDomain(bool), DD, 0.5), TypeError,
         "input_domain=AtomDomain(bool)"),
    _row("bitvec-domain-None", lambda: make_randomized_response_bitvec(None, DD, 0.5), TypeError,
         "input_domain=None"),
    _row("bitvec-metric-str", lambda: make_randomized_response_bitvec(DOMAIN, "discrete", 0.5), TypeError,
         "input_metric='discrete'"),
    _row("bitvec-metric-None", lambda: make_randomized_response_bitvec(DOMAIN, None, 0.5), TypeError,
         "input_metric=None"),
    _row("bitvec-missing-max-weight",
         lambda: make_randomized_response_bitvec(BitVectorDomain(length=4), DD, 0.5), ValueError, "max_weight=None"),
    _row("bitvec-missing-length",
         lambda: make_randomized_response_bitvec(BitVectorDomain(max_weight=1), DD, 0.5), ValueError, "length=None"),
    _row("bitvec-f-zero", lambda: make_randomized_response_bitvec(DOMAIN, DD, 0.0), ValueError, "f=0.0", "(0, 1]"),
    _row("bitvec-f-negative", lambda: make_randomized_response_bitvec(DOMAIN, DD, -0.5), ValueError, "f=-0.5"),
    _row("bitvec-f-above-one", lambda: make_randomized_response_bitvec(DOMAIN, DD, 1.5), ValueError, "f=1.5",
         "(0, 1]"),
    _row("bitvec-f-just-above-one", lambda: make_randomized_response_bitvec(DOMAIN, DD, math.nextafter(1, 2)),
         ValueError, "f=1.0000000000000002"),
    _row("bitvec-f-nan", lambda: make_randomized_response_bitvec(DOMAIN, DD, NAN), ValueError, "f=nan"),
    _row("bitvec-f-inf", lambda: make_randomized_response_bitvec(DOMAIN, DD, INF), ValueError, "f=inf"),
    _row("bitvec-f-str", lambda: make_randomized_response_bitvec(DOMAIN, DD, "0.5"), TypeError, "f='0.5'"),
    _row("bitvec-f-bool", lambda: make_randomized_response_bitvec(DOMAIN, DD, True), TypeError, "f=True"),
    _row("bitvec-constant-time-int", lambda: make_randomized_response_bitvec(DOMAIN, DD, 0.5, 1), TypeError,
         "constant_time=1"),
    # make_k_rappor
    _row("k-rappor-epsilon-zero", lambda: make_k_rappor(DOMAIN, DD, 0.0), ValueError, "epsilon=0.0", "(0, inf)"),
    _row("k-rappor-epsilon-negative", lambda: make_k_rappor(DOMAIN, DD, -1.0), ValueError, "epsilon=-1.0"),
    _row("k-rappor-epsilon-nan", lambda: make_k_rappor(DOMAIN, DD, NAN), ValueError, "epsilon=nan"),
    _row("k-rappor-epsilon-inf", lambda: make_k_rappor(DOMAIN, DD, INF), ValueError, "epsilon=inf"),
    _row("k-rappor-epsilon-str", lambda: make_k_rappor(DOMAIN, DD, "1"), TypeError, "epsilon='1'"),
    _row("k-rappor-epsilon-bool", lambda: make_k_rappor(DOMAIN, DD, True), TypeError, "epsilon=True"),
    _row("k-rappor-domain-atom", lambda: make_k_rappor(AtomDomain(bool), DD, 1.0), TypeError,
         "input_domain=AtomDomain(bool)"),
    _row("k-rappor-metric-str", lambda: make_k_rappor(DOMAIN, "discrete", 1.0), TypeError,
         "input_metric='discrete'"),
    _row("k-rappor-missing-max-weight", lambda: make_k_rappor(BitVectorDomain(length=4), DD, 1.0), ValueError,
         "max_weight=None"),
    _row("k-rappor-missing-length", lambda: make_k_rappor(BitVectorDomain(max_weight=1), DD, 1.0), ValueError,
         "length=None"),
    _row("k-rappor-constant-time-int", lambda: make_k_rappor(DOMAIN, DD, 1.0, 1), TypeError, "constant_time=1"),
]


@pytest.mark.parametrize("call,exc,texts", PRECONDITIONS)
def test_constructor_precondition_raises_naming_parameter_and_value(call, exc, texts):
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    for text in texts:
        assert text in message, f"{text!r} not in {message!r}"


@pytest.mark.parametrize("call", [
    pytest.param(lambda: make_randomized_response_bool(0.5), id="bool-prob-half"),
    pytest.param(lambda: make_randomized_response_bool(math.nextafter(1, 0), constant_time=True), id="bool-high"),
    pytest.param(lambda: make_randomized_response(CATS, math.nextafter(1 / 3, 1)), id="rr-just-above-third"),
    pytest.param(lambda: make_randomized_response(["a", "b", "c", "d"], 0.25), id="rr-prob-exactly-quarter"),
    pytest.param(lambda: make_randomized_response({1, 2}, 0.75), id="rr-set-categories"),
    pytest.param(lambda: make_randomized_response_bitvec(DOMAIN, DD, 1.0), id="bitvec-f-one"),
    pytest.param(lambda: make_randomized_response_bitvec(DOMAIN, DD, 5e-324, True), id="bitvec-f-tiny"),
    pytest.param(lambda: make_k_rappor(DOMAIN, DD, 5e-324), id="k-rappor-tiny-eps"),
    pytest.param(lambda: make_k_rappor(DOMAIN, DD, 1e308), id="k-rappor-huge-eps"),
])
def test_constructor_boundary_parameters_are_accepted(call):
    meas = call()
    assert meas.map(0) == 0.0
    assert math.isfinite(meas.map(1)) and meas.map(1) >= 0.0
