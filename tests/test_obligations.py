"""z3 rounding obligations: our constants are proved; wrongly-directed mutants are refuted
with a concrete witness that mpmath confirms; the seeds' naive arithmetic is refuted."""

from __future__ import annotations

import dataclasses
import math
import time
from fractions import Fraction

import pytest

from vetdp.arith import rounding as R
from vetdp.arith.expr import OPS, Const, Expr, Op, Var
from vetdp.impl.k_rappor import K_RAPPOR_FLIP_PROBABILITY
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.impl.randomized_response_bitvec import RANDOMIZED_RESPONSE_BITVEC_EPSILON
from vetdp.obligations import constants as C
from vetdp.obligations.check import obligation_ids, run_all, run_constant, run_contract, run_spec
from vetdp.obligations.contracts import cast_obligation, op_contract
from vetdp.obligations.witness import check_point


def _mutate(expr: Expr, old: str, new: str) -> Expr:
    """``expr`` with every op named ``old`` renamed ``new`` (a wrongly-directed mutant)."""
    if isinstance(expr, (Var, Const)):
        return expr
    assert isinstance(expr, Op)
    return Op(new if expr.name == old else expr.name, tuple(_mutate(a, old, new) for a in expr.args))


def _by_id(results) -> dict:
    return {r.id: r for r in results}


@pytest.mark.parametrize("cid", sorted(C.CONSTANTS))
def test_our_constant_every_obligation_proved(cid):
    results = run_constant(cid)
    assert [r.id for r in results] == obligation_ids(cid)
    assert {r.id: r.status for r in results if not r.proved} == {}
    assert any(r.id.endswith(".sound") for r in results)


def test_all_default_obligations_fast():
    t0 = time.perf_counter()
    results = run_all(list(C.CONSTANTS))
    assert all(r.proved for r in results), [r.id for r in results if not r.proved]
    assert time.perf_counter() - t0 < 60


def test_seed001_directed_order_proved():
    assert all(r.proved for r in run_constant("seed001.epsilon"))


MUTANTS = [
    ("randomized_response.epsilon", "inf_ln", "neg_inf_ln"),
    ("randomized_response.epsilon", "neg_inf_sub", "inf_sub"),  # denominator 1 - p rounded up
    ("randomized_response.epsilon", "inf_div", "neg_inf_div"),
    ("randomized_response_bitvec.epsilon", "neg_inf_ln", "inf_ln"),
    ("k_rappor.flip_probability", "neg_inf_exp", "inf_exp"),
    ("k_rappor.flip_probability", "inf_div", "neg_inf_div"),
]


@pytest.mark.parametrize(("cid", "old", "new"), MUTANTS, ids=[f"{c}:{o}->{n}" for c, o, n in MUTANTS])
def test_wrongly_directed_mutant_refuted_with_witness(cid, old, new):
    spec = C.constant(cid)
    mutant = dataclasses.replace(spec, id=f"mutant.{cid}", expr=_mutate(spec.expr, old, new))
    assert mutant.expr != spec.expr
    sound = _by_id(run_spec(mutant))[f"mutant.{cid}.sound"]
    assert sound.status == "refuted"
    assert sound.counterexample is not None
    assert sound.confirmed, f"no concrete witness for {old}->{new}"
    env = {k: (float.fromhex(v) if isinstance(v, str) else v) for k, v in sound.witness["inputs"].items()}
    # independent confirmation: the mutant's float is below the truth of OUR definition
    lo, _ = spec.expr.enclose(env, 300)
    assert Fraction(mutant.expr.to_float(env)) < lo
    assert Fraction(spec.expr.to_float(env)) >= lo


def test_cast_beyond_2_53_refuted():
    status, _, _, cex = cast_obligation("t", 2, 2**54)
    assert status == "refuted"
    n = cex["t"]
    assert 2**53 < n <= 2**54 and int(float(n)) != n


@pytest.mark.parametrize(("op", "wrong"), [("inf_ln", R.neg_inf_ln), ("inf_div", R.neg_inf_div),
                                           ("neg_inf_exp", R.inf_exp)])
def test_contract_of_wrong_primitive_refuted(monkeypatch, op, wrong):
    assert op_contract(op)[0] == "proved"
    monkeypatch.setitem(OPS, op, dataclasses.replace(OPS[op], rounded=wrong))
    assert op_contract(op)[0] == "refuted"


def test_contracts_of_used_ops_proved():
    for op in ("inf_add", "inf_sub", "neg_inf_sub", "inf_mul", "inf_div", "neg_inf_div", "inf_ln",
               "neg_inf_ln", "neg_inf_exp", "neg_inf_add"):
        assert run_contract(op).proved


OURS = {"naive.randomized_response.epsilon": (RANDOMIZED_RESPONSE_EPSILON, lambda e: e),
        "naive.randomized_response_bitvec.epsilon": (
            RANDOMIZED_RESPONSE_BITVEC_EPSILON,
            lambda e: {"q": R.inf_div(e["f"], 2), "d": 2 * e["m"]}),
        "naive.k_rappor.flip_probability": (K_RAPPOR_FLIP_PROBABILITY, lambda e: e)}


@pytest.mark.parametrize("cid", sorted(OURS))
def test_naive_seed_constant_under_reports_confirmed(cid):
    sound = _by_id(run_constant(cid))[f"{cid}.sound"]
    assert sound.status == "refuted" and sound.confirmed
    assert sound.witness["kind"] == "under-reports"
    env = {k: (float.fromhex(v) if isinstance(v, str) else v) for k, v in sound.witness["inputs"].items()}
    naive_value = C.constant(cid).expr.to_float(env)
    ours, translate = OURS[cid]
    ours_env = translate(env)
    lo, _ = ours.enclose(ours_env, 300)  # the truth, from our one definition
    assert Fraction(naive_value) < lo
    assert Fraction(ours.to_float(ours_env)) >= lo  # our constant is sound at the same point


def test_naive_bitvec_overflows_for_tiny_f():
    r = _by_id(run_constant("naive.randomized_response_bitvec.epsilon"))
    step = r["naive.randomized_response_bitvec.epsilon.step2.near_div.defined"]
    assert step.status == "refuted" and step.confirmed
    f = float.fromhex(step.witness["inputs"]["f"])
    assert f < 2.3e-308 and math.isinf(2.0 / f)


def test_naive_flip_probability_rounds_min_subnormal_to_zero():
    r = _by_id(run_constant("naive.randomized_response_bitvec.flip_probability"))
    w = r["naive.randomized_response_bitvec.flip_probability.sound"].witness
    assert w["inputs"]["f"] == (5e-324).hex() and 5e-324 / 2 == 0.0


def test_check_point_accepts_sound_value():
    spec = C.constant("randomized_response.epsilon")
    assert check_point(spec, {"prob": 0.75, "t": 2}) is None


QUOTED = [("naive.randomized_response.epsilon", {"prob": float.fromhex("0x1.0000000000001p-2"), "t": 10}),
          ("naive.randomized_response_bitvec.epsilon", {"f": 0.26251833548202747, "m": 8}),
          ("naive.k_rappor.flip_probability", {"epsilon": 5.900987898278626e-06, "k": 7})]


@pytest.mark.parametrize(("cid", "env"), QUOTED, ids=[c for c, _ in QUOTED])
def test_witnesses_quoted_in_proofs_under_report(cid, env):
    w = check_point(C.constant(cid), env)
    assert w is not None and w.kind == "under-reports"
    proofs = (C.__file__.rsplit("/vetdp/", 1)[0]) + "/proofs/"
    text = "".join(open(proofs + s + ".md").read() for s in ("randomized_response", "randomized_response_bitvec",
                                                               "k_rappor"))
    assert repr(w.computed) in text


def test_float64_gap_lemma_proved_and_a_tighter_false_one_refuted():
    import math

    from vetdp.obligations.contracts import float64_gap_obligation

    status, seconds, _, _ = float64_gap_obligation()
    assert status == "proved" and seconds < 10
    status, _, _, cex = float64_gap_obligation(rel_bits=53)
    assert status == "refuted"
    a = cex["a"]  # z3's counterexample, confirmed with exact rationals
    gap = Fraction(math.nextafter(a, math.inf)) - Fraction(a)
    assert gap > Fraction(a) / 2**53 + Fraction(1, 2**1074)
