"""float(), isinstance(x, float), Fraction(x) and comparisons with inf/NaN in code under the universal exploration
(vetdp.engine.float_shims, universal._construct, symbolic.compare)."""

from __future__ import annotations

import math
import operator
import types

import numpy as np
import pytest

from tests.mutants import float_idioms, float_type_idiom
from vetdp.engine import float_shims, universal
from vetdp.engine.float_shims import SymbolicAwareFloat, keeping_symbols
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import find_spec
from vetdp.engine.symbolic import explore_regions


@pytest.mark.parametrize("source", [
    "p = float(prob)\n",
    "def f(x: float) -> float:\n    return float(x) if isinstance(x, (int, float)) else issubclass(type(x), float)\n",
    "y: float = 0.5\n",
    "import numpy as np\nz = np.float64(1.0)\n",  # an attribute named float64 is not the name float
])
def test_a_module_that_only_calls_float_or_tests_against_it_may_be_adopted(source):
    assert float_shims._only_called(source, "float")


@pytest.mark.parametrize("source", [
    "ok = type(x) is float\n",
    "a = np.zeros(3, dtype=float)\n",
    "float = int\n",
    "def float(x):\n    return x\n",
    "def f(float):\n    return float\n",
    "from numpy import float64 as float\n",
    "kinds = {float: 1}\n",
    "def f():\n    global float\n",
])
def test_a_module_that_uses_the_name_float_otherwise_is_never_adopted(source):
    assert not float_shims._only_called(source, "float")


def test_the_shim_converts_as_float_does_and_tests_as_float_does():
    assert SymbolicAwareFloat("1.5") == 1.5 and type(SymbolicAwareFloat("1.5")) is float
    assert type(SymbolicAwareFloat(np.float64(0.25))) is float and SymbolicAwareFloat() == 0.0
    assert isinstance(1.0, SymbolicAwareFloat) and isinstance(np.float64(1.0), SymbolicAwareFloat)
    assert not isinstance(1, SymbolicAwareFloat) and not isinstance("1.0", SymbolicAwareFloat)
    assert issubclass(float, SymbolicAwareFloat) and not issubclass(int, SymbolicAwareFloat)

    def run(p):
        x = p["f"]
        return SymbolicAwareFloat(x) is x, isinstance(x, SymbolicAwareFloat), isinstance(x, float)

    leaves, _ = explore_regions(run, {"f": (0.0, 1.0)})
    assert [leaf.result for leaf in leaves] == [(True, True, False)]  # the built-in float test is unchanged


def test_leaving_the_scope_gives_each_module_back_what_it_had():
    plain = types.ModuleType("plain")
    shadowed = types.ModuleType("shadowed")
    shadowed.float = float
    shadowed.math = math
    with keeping_symbols():
        for module in (plain, shadowed):
            float_shims._bind(float_shims._scope.get(), module.__dict__, "float", SymbolicAwareFloat)
        assert float_shims._adopt_finite_tests(float_shims._scope.get(), shadowed.__dict__)
        assert plain.float is SymbolicAwareFloat and shadowed.math is float_shims.MATH_FOR_SYMBOLS
    assert "float" not in plain.__dict__ and shadowed.float is float and shadowed.math is math
    assert not float_shims.adopt(None)  # no scope open: nothing is adopted


OPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("other", [math.inf, -math.inf, math.nan])
def test_a_comparison_with_an_infinity_or_nan_is_decided_for_the_whole_region(other):
    def run(p):
        x = p["f"]
        return tuple(op(x, other) for op in OPS) + tuple(op(other, x) for op in OPS)

    leaves, unexplored = explore_regions(run, {"f": (-1.0, 1.0)})
    assert not unexplored and len(leaves) == 1
    assert leaves[0].result == tuple(op(0.5, other) for op in OPS) + tuple(op(other, 0.5) for op in OPS)


def test_a_value_compared_with_itself_is_decided_for_the_whole_region():
    leaves, unexplored = explore_regions(lambda p: (p["f"] != p["f"], p["f"] == p["f"], p["f"] < p["f"]),
                                         {"f": (-1.0, 1.0)})
    assert not unexplored and [leaf.result for leaf in leaves] == [(False, True, False)]


def _rows(ctor):
    spec = find_spec("randomized_response_bool")
    return {r.check: r for r in check_measurement_spec(spec, ctor, RunConfig(max_examples=3))}


def test_a_band_behind_float_prob_is_caught_with_a_witness_inside_it():
    universal_row = _rows(float_idioms.float_band)["search.universal"]
    assert universal_row.status == "fail", universal_row.message
    assert float_idioms.FLOAT_BAND[0] < universal_row.witness["prob"] < float_idioms.FLOAT_BAND[1]


def test_without_adoption_the_band_behind_float_prob_is_only_a_warning(monkeypatch):
    monkeypatch.setattr(float_shims, "adopt", lambda frame, calling=True: False)
    monkeypatch.setattr(universal, "adopt", lambda frame, calling=True: False)
    universal_row = _rows(float_idioms.float_band)["search.universal"]
    assert universal_row.status == "warning" and "float()" in universal_row.message


@pytest.mark.parametrize("variant", [float_idioms.isinstance_checked, float_idioms.fraction_checked])
def test_an_isinstance_float_check_and_exact_fraction_comparisons_are_proved_for_every_prob(variant):
    universal_row = _rows(variant)["search.universal"]
    assert universal_row.status == "pass", universal_row.message


def test_a_constructor_that_raises_only_on_symbolic_values_leaves_the_region_open_never_fails_it():
    universal_row = _rows(float_idioms.decimal_checked)["search.universal"]
    assert universal_row.status == "warning", universal_row.message
    assert "raised TypeError with symbolic parameters only" in universal_row.message


def test_a_band_behind_fraction_comparisons_is_caught_with_a_witness_inside_it():
    universal_row = _rows(float_idioms.fraction_band)["search.universal"]
    assert universal_row.status == "fail", universal_row.message
    assert float_idioms.FLOAT_BAND[0] < universal_row.witness["prob"] < float_idioms.FLOAT_BAND[1]


def test_an_exact_value_compares_exactly_without_pinning_and_pins_for_anything_else():
    from fractions import Fraction

    from vetdp.engine.float_shims import ExactValue, SymbolicAwareFraction

    def run(p):
        x = SymbolicAwareFraction(p["f"])
        assert isinstance(x, ExactValue) and isinstance(x, SymbolicAwareFraction)
        third = SymbolicAwareFraction(1, 3)
        assert type(third) is Fraction and isinstance(third, SymbolicAwareFraction)
        return (Fraction(1, 3) <= x, x < 1, x == Fraction(1, 3), x > 0.25, x >= SymbolicAwareFraction(p["f"]))

    leaves, unexplored = explore_regions(run, {"f": (0.25, 0.5)})
    third = Fraction(1, 3)
    assert not unexplored and all(leaf.result == (Fraction(lo) >= third, True, False, lo > 0.25, True)
                                  for leaf in leaves for lo, _ in [leaf.box["f"]])
    assert len(leaves) == 3  # split at 1/3 (exactly: no float equals it) and at 0.25
    leaves, _ = explore_regions(lambda p: SymbolicAwareFraction(p["f"]) * 3, {"f": (0.25, 0.5)})
    assert leaves[0].box.size() == 1 and leaves[0].escapes[0].what.startswith("Fraction(x).__mul__")
    assert leaves[0].result == Fraction(leaves[0].box["f"][0]) * 3


def test_a_module_testing_type_is_float_is_not_adopted_and_its_line_stays_open():
    universal_row = _rows(float_type_idiom.type_checked_band)["search.universal"]
    assert universal_row.status == "warning" and "float() at" in universal_row.message


def test_the_finite_tests_answer_for_a_symbolic_value_and_call_math_for_anything_else():
    assert float_shims.MATH_FOR_SYMBOLS.log is math.log and float_shims.MATH_FOR_SYMBOLS.pi == math.pi
    isfinite, isnan = float_shims.MATH_FOR_SYMBOLS.isfinite, float_shims.MATH_FOR_SYMBOLS.isnan
    assert isfinite(1.0) and not isfinite(math.inf) and isnan(math.nan) and not isnan(1.0)
    leaves, _ = explore_regions(lambda p: (isfinite(p["f"]), isnan(p["f"]), float_shims.MATH_FOR_SYMBOLS.isinf(p["f"])),
                                {"f": (-1.0, 1.0)})
    assert [leaf.result for leaf in leaves] == [(True, False, False)]


def test_a_band_behind_isnan_and_math_isfinite_is_caught_with_a_witness_inside_it():
    universal_row = _rows(float_idioms.finite_checked_band)["search.universal"]
    assert universal_row.status == "fail", universal_row.message
    assert float_idioms.FLOAT_BAND[0] < universal_row.witness["prob"] < float_idioms.FLOAT_BAND[1]


def test_code_drawing_outside_the_primitives_is_not_explored_symbolically():
    from vetdp.engine.runner import RunConfig, check_measurement_spec

    spec = find_spec("randomized_response_bool")
    rows = {r.check: r for r in check_measurement_spec(spec, float_idioms.secrets_exact,
                                                       RunConfig(max_examples=3, fallback_opaque=True))}
    universal_row = rows["search.universal"]
    assert universal_row.status == "warning" and "outside vetdp's primitives" in universal_row.message
    assert "secrets.randbelow" in universal_row.message
