"""sympy/enumeration lemmas: each listed lemma is checked, and each fails on a wrong impl."""

from __future__ import annotations

from fractions import Fraction

import pytest

from vetdp.arith.expr import ONE, var
from vetdp.impl import k_rappor as KR
from vetdp.impl import randomized_response as RR
from vetdp.impl import randomized_response_bitvec as BV
from vetdp.obligations.lemmas import LEMMAS, run_lemma

REQUIRED = ["rr.case_bounds", "rr.epsilon_is_max_log_ratio", "rr.estimator_unbiased", "rr.variance",
            "bitvec.likelihood_ratio", "bitvec.estimators_unbiased", "bitvec.mse_versions", "rdp.limit_is_rho",
            "k_rappor.rho_in_q", "errata.bernoulli_probability", "errata.make_rappor_d_in"]


def test_every_required_lemma_registered():
    assert set(REQUIRED) <= set(LEMMAS)


@pytest.mark.parametrize("lid", REQUIRED)
def test_lemma_passes(lid):
    r = run_lemma(lid)
    assert r.passed, r.detail
    assert r.status in ("proved", "checked") and r.method


def test_rr_ratio_lemma_refutes_wrong_lie_probability(monkeypatch):
    monkeypatch.setattr(RR, "_lie_probability", lambda p, t: (1 - p) / t)
    assert run_lemma("rr.epsilon_is_max_log_ratio").status == "refuted"


def test_rr_unbiased_lemma_refutes_biased_estimator(monkeypatch):
    real = RR.debias_randomized_response

    def biased(answers, categories, prob, exact=False):
        est = real(answers, categories, prob, exact=True)
        return {c: v + Fraction(1, 100) for c, v in est.items()}

    monkeypatch.setattr(RR, "debias_randomized_response", biased)
    assert run_lemma("rr.estimator_unbiased").status == "refuted"


def test_bitvec_unbiased_lemma_refutes_seed000_typo_estimator(monkeypatch):
    # the frequency estimator without the division by n (what q̂ = E[N̂]/n would compute from counts)
    monkeypatch.setattr(BV, "debias_randomized_response_bitvec_frequencies", BV.debias_randomized_response_bitvec)
    assert run_lemma("bitvec.estimators_unbiased").status == "refuted"


def test_mse_lemma_refutes_swapped_mse(monkeypatch):
    monkeypatch.setattr(BV, "randomized_response_bitvec_count_mse", BV.randomized_response_bitvec_frequency_mse)
    assert run_lemma("bitvec.mse_versions").status == "refuted"


def test_k_rappor_rho_lemma_refutes_wrong_q(monkeypatch):
    epsilon, k = var("epsilon"), var("k", "int")
    wrong = ONE.inf_div(ONE.neg_inf_add(epsilon.neg_inf_div(k).neg_inf_exp()))  # ε/k instead of ε/2k
    monkeypatch.setattr(KR, "K_RAPPOR_FLIP_PROBABILITY", wrong)
    assert run_lemma("k_rappor.rho_in_q").status == "refuted"


def test_bitvec_ratio_lemma_refutes_seed_2m_hamming_bound(monkeypatch):
    real = BV.make_randomized_response_bitvec

    def claims_2m(domain, metric, f, constant_time=False):
        meas = real(domain, metric, f, constant_time)
        env = dict(meas.privacy_constant.env, d=2 * domain.max_weight)
        return type(meas)(**{**meas.__dict__, "privacy_constant": type(meas.privacy_constant)(
            meas.privacy_constant.expr, env)})

    monkeypatch.setattr(BV, "make_randomized_response_bitvec", claims_2m)
    r = run_lemma("bitvec.likelihood_ratio")
    assert r.status == "refuted" and "k=" in r.detail
