"""function.batch: a measurement's batch path has the law of independent calls of its function (exact)."""

from __future__ import annotations

import pytest

from tests.mutants import batch_variants
from vetdp.engine.batch import BATCH_PATHS, batch_finding
from vetdp.engine.enumerate import enumerate_law, freeze
from vetdp.engine.results import Status
from vetdp.engine.runner import RunConfig, check_measurement_spec
from vetdp.engine.spec import find_spec

VERIFY = RunConfig(max_examples=3, impl_ref="tests.mutants", strict_messages=False)
BOOL = {"prob": 0.75, "constant_time": False}
RAPPOR = {"k": 2, "m": 1, "f": 0.5, "p": 0.0, "q": 1.0, "constant_time": False}


def _row(spec: str, variant, params: dict):
    rows = [r for r in check_measurement_spec(find_spec(spec), ctor=variant, cfg=VERIFY, only_params=params)
            if r.check == "function.batch"]
    assert len(rows) == 1, rows
    return rows[0]


@pytest.mark.parametrize(("spec", "variant", "params", "says"), [
    ("randomized_response_bool", batch_variants.bool_batch_one_coin, BOOL, "batch([True, True]) returns"),
    ("randomized_response_bool", batch_variants.bool_batch_seeded, BOOL, "independent calls"),
    ("rappor", batch_variants.rappor_batch_without_permanent, RAPPOR, "does not have the function's law"),
])
def test_a_batch_path_with_another_law_than_independent_calls_fails(spec, variant, params, says):
    row = _row(spec, variant, params)
    assert row.status is Status.FAIL and says in row.message, row.message


@pytest.mark.parametrize(("spec", "variant", "params"), [
    ("randomized_response_bool", None, BOOL),
    ("randomized_response_bool", batch_variants.bool_batch_row_by_row, BOOL),
    ("rappor", None, RAPPOR),
])
def test_vetdps_batch_and_a_row_by_row_batch_pass(spec, variant, params):
    row = _row(spec, variant, params)
    assert row.status is Status.PASS, row.message  # checked (a set where it was skipped only reads SKIPPED)


def test_too_many_paths_or_no_batch_path_is_skipped_with_the_reason():
    from vetdp.impl.randomized_response_bool import make_randomized_response_bool

    m = make_randomized_response_bool(0.75)
    laws = {x: enumerate_law(m, x) for x in (False, True)}
    assert batch_finding(m, laws, {False: False, True: True}, {"budget": 1000}).ok
    import dataclasses

    assert batch_finding(dataclasses.replace(m, batch=None), laws, {False: False, True: True},
                         {"budget": 1000}).skipped
    many = {x: dataclasses.replace(law, paths=BATCH_PATHS) for x, law in laws.items()}
    skipped = batch_finding(m, many, {False: False, True: True}, {"budget": 1000})
    assert skipped.skipped and f"more than {BATCH_PATHS} paths" in skipped.message
    assert freeze(m.batch([True, False])) in {(a, b) for a in (False, True) for b in (False, True)}
