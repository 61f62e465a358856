"""z3 rounding obligations: our constants are proved; wrongly-directed mutants are refuted
with a concrete witness that mpmath confirms; the seeds' naive arithmetic is refuted."""

from __future__ import annotations

import dataclasses
import math
import re
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
from vetdp.obligations.limits import DEFAULT_Z3_RLIMIT
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


def test_all_default_obligations_proved_with_tenfold_rlimit_headroom():
    results = run_all(list(C.CONSTANTS))
    assert all(r.proved for r in results), [r.id for r in results if not r.proved]
    spent = {r.id: r.rlimit_used for r in results if r.rlimit_used is not None}
    assert spent and max(spent.values()) * 10 <= DEFAULT_Z3_RLIMIT, max(spent.items(), key=lambda kv: kv[1])


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
    status, _, _, _, cex = cast_obligation("t", 2, 2**54, DEFAULT_Z3_RLIMIT)
    assert status == "refuted"
    n = cex["t"]
    assert 2**53 < n <= 2**54 and int(float(n)) != n


@pytest.mark.parametrize(("op", "wrong"), [("inf_ln", R.neg_inf_ln), ("inf_div", R.neg_inf_div),
                                           ("neg_inf_exp", R.inf_exp)])
def test_contract_of_wrong_primitive_refuted(monkeypatch, op, wrong):
    assert op_contract(op)[0] == "proved"
    monkeypatch.setitem(OPS, op, dataclasses.replace(OPS[op], rounded=wrong))
    assert op_contract(op)[0] == "refuted"


@pytest.mark.parametrize(("op", "series"), [("inf_ln", "_atanh_fixed"), ("inf_exp", "_exp_fixed")])
def test_contract_sees_a_bug_shared_by_the_primitive_and_ln_bracket(monkeypatch, op, series):
    """The contract's truth is mpmath's, not vetdp's own ln_bracket/exp_bracket: a series that drops its error budget
    (which the primitive and the brackets share) is refuted."""
    real = getattr(R, series)
    monkeypatch.setattr(R, series, lambda *a: (real(*a)[0], real(*a)[0]))
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

    status, _, used, _, _ = float64_gap_obligation(DEFAULT_Z3_RLIMIT)
    assert status == "proved" and used * 10 <= DEFAULT_Z3_RLIMIT
    status, _, _, _, cex = float64_gap_obligation(DEFAULT_Z3_RLIMIT, rel_bits=53)
    assert status == "refuted"
    a = cex["a"]  # z3's counterexample, confirmed with exact rationals
    gap = Fraction(math.nextafter(a, math.inf)) - Fraction(a)
    assert gap > Fraction(a) / 2**53 + Fraction(1, 2**1074)


# ------------------------------------------------------------------ z3 by resource limit, never by time


def test_obligation_run_twice_gives_the_same_verdict_and_the_same_rlimit_count():
    spec = C.constant("randomized_response.epsilon")
    first, second = run_spec(spec, DEFAULT_Z3_RLIMIT), run_spec(spec, DEFAULT_Z3_RLIMIT)
    assert [(r.id, r.status, r.rlimit_used) for r in first] == [(r.id, r.status, r.rlimit_used) for r in second]
    assert all(r.rlimit_used and r.rlimit_used > 0 for r in first)


def test_rlimit_count_does_not_depend_on_what_ran_before():
    """Each query runs in a fresh z3 context: its count is the same first thing in a process or after others."""
    from vetdp.obligations.z3encode import Encoding, run_query

    query = Encoding(C.constant("k_rappor.flip_probability")).queries()[-2]  # sound
    alone = run_query(query, DEFAULT_Z3_RLIMIT).rlimit_used
    run_spec(C.constant("randomized_response.epsilon"), DEFAULT_Z3_RLIMIT)
    assert run_query(query, DEFAULT_Z3_RLIMIT).rlimit_used == alone


def test_tiny_rlimit_is_undecided_naming_the_option():
    results = run_spec(C.constant("randomized_response.epsilon"), 1000)
    sound = _by_id(results)["randomized_response.epsilon.sound"]
    assert sound.status == "unknown"
    assert "z3 resource limit 1000 was spent" in sound.reason and "--z3-rlimit" in sound.reason
    assert "timeout" not in sound.reason and not re.search(r"\d s\b", sound.reason)  # no seconds
    cast = _by_id(results)["randomized_response.epsilon.cast.t"]
    assert cast.status == "unknown" and "--z3-rlimit" in cast.reason
    assert run_contract("float64_gap", 1000).status == "unknown"


def test_check_reports_a_spent_rlimit_as_undecided_naming_the_option():
    from vetdp.engine.registry import CheckOptions
    from vetdp.engine.results import Status
    from vetdp.obligations.provider import check_proofs

    options = CheckOptions(pattern="randomized_response::obligation.randomized_response.epsilon.sound", z3_rlimit=999)
    [r] = list(check_proofs(options))
    assert r.status is Status.UNDECIDED and "resource limit 999" in r.message and "--z3-rlimit" in r.message


def test_every_z3_solver_is_bounded_by_rlimit_and_never_by_time(monkeypatch):
    """A z3 solver in vetdp gets an rlimit and never a timeout: every parameter set on a solver (or globally) while
    the obligations of a constant, the casts and the gap lemma run is recorded."""
    import z3

    params: list[str] = []
    set_solver, set_param = z3.Solver.set, z3.set_param

    def record_solver(self, *args, **kwargs):
        params.extend([str(a) for a in args[::2]] + list(kwargs))
        return set_solver(self, *args, **kwargs)

    def record_global(*args, **kwargs):
        params.extend([str(a) for a in args[::2]] + list(kwargs))
        return set_param(*args, **kwargs)

    monkeypatch.setattr(z3.Solver, "set", record_solver)
    monkeypatch.setattr(z3, "set_param", record_global)
    run_spec(C.constant("k_rappor.flip_probability"), DEFAULT_Z3_RLIMIT)
    run_contract.__wrapped__("float64_gap", DEFAULT_Z3_RLIMIT)
    assert "rlimit" in params and not [p for p in params if "timeout" in p.lower()], params


def test_no_z3_timeout_in_the_package_source():
    """No module of vetdp sets a z3 timeout (the API check above covers the calls that run; this one the rest)."""
    from pathlib import Path

    import vetdp

    z3_timeout = re.compile(r"""\.set\(\s*["'](soft_)?timeout|set_param\(\s*["'][\w.]*timeout""")
    offenders = []
    for path in Path(vetdp.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "z3" in text and z3_timeout.search(text):
            offenders.append(str(path))
    assert offenders == []
