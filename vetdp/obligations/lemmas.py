"""The algebraic steps of the proofs as named, checked lemmas.

Each lemma compares a *seed's* claim (typed here: it is the claim under test) with *our*
definition, taken from impl/ (``Expr.to_sympy()``, the estimator and variance functions
themselves), or checks an identity between two seed claims. Methods, in order of strength:

* ``sympy``: the difference simplifies to 0, or the sign is decided under the assumptions;
* ``exact enumeration``: every output of a small instance, with exact rational
  probabilities, is summed (expectations, variances), on a grid of parameters;
* ``mpmath grid``: where sympy cannot close a step, interval arithmetic at 200 bits on a
  dense grid (the report says so).

A lemma's status is "proved" (sympy), "checked" (enumeration or grid, all points) or
"refuted" (a point or a non-zero difference, given in ``detail``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import time
from collections.abc import Callable
from fractions import Fraction

import mpmath
import sympy as sp

from vetdp.impl import k_rappor as KR
from vetdp.impl import randomized_response as RR
from vetdp.impl import randomized_response_bitvec as BV

__all__ = ["LemmaResult", "LEMMAS", "run_lemma", "run_lemmas", "lemma"]


@dataclasses.dataclass(frozen=True)
class LemmaResult:
    id: str
    status: str  # "proved" | "checked" | "refuted"
    method: str
    statement: str
    detail: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.status in ("proved", "checked")


LEMMAS: dict[str, tuple[str, Callable[[], tuple[str, str, str]]]] = {}
_CACHE: dict[str, LemmaResult] = {}  # results per process (run_lemmas)


def lemma(lid: str, statement: str):
    """Decorator registering ``fn() -> (status, method, detail)`` as lemma ``lid``, so that a proof document can
    rely on it by id; ``status`` is "proved" (symbolic), "checked" (exhaustive or grid) or "refuted". A user's
    module registers its own lemmas the same way. Preconditions: ``lid`` dotted identifiers, ``statement`` a
    non-empty string; registering another function under an existing id is a ValueError (the same function,
    e.g. on a module reload, is accepted)."""
    if not isinstance(lid, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", lid):
        raise ValueError(f"lid={lid!r} must be dotted identifiers, e.g. 'mymech.likelihood_ratio'")
    if not isinstance(statement, str) or not statement.strip():
        raise ValueError(f"statement={statement!r} must be a non-empty string saying what the lemma claims")

    def register(fn: Callable[[], tuple[str, str, str]]):
        if not callable(fn):
            raise TypeError(f"lemma {lid!r}: {fn!r} is not callable")
        old = LEMMAS.get(lid)
        if old is not None and (old[1].__module__, old[1].__qualname__) != (fn.__module__, fn.__qualname__):
            raise ValueError(f"lid={lid!r} is already registered by {old[1].__module__}.{old[1].__qualname__}")
        LEMMAS[lid] = (statement, fn)
        _CACHE.pop(lid, None)
        return fn
    return register


def _zero(expr) -> bool:
    return sp.simplify(sp.expand_log(sp.simplify(expr), force=True)) == 0


def _sym(name: str) -> sp.Symbol:
    return sp.Symbol(name, positive=True)


# ---------------------------------------------------------------- randomized response (seed 001)

@lemma("rr.case_bounds", "(1−p)/(t−1) <= 1/t <= p for t >= 2 and p >= 1/t (seed 001, Lemma 2.2)")
def _rr_case_bounds():
    t, p = sp.Symbol("t", real=True), sp.Symbol("p", real=True)
    u, s = sp.Symbol("u", nonnegative=True), sp.Symbol("s", nonnegative=True)
    lie = RR._lie_probability(p, t)  # our lie probability, from the impl
    at = {t: 2 + u, p: 1 / (2 + u) + s}
    gaps = [sp.simplify((1 / t - lie).subs(at)), sp.simplify((p - 1 / t).subs(at))]
    ok = all(g.is_nonnegative for g in gaps)
    return ("proved" if ok else "refuted", "sympy", f"with t = 2+u, p = 1/t + s (u, s >= 0): gaps {gaps}")


@lemma("rr.epsilon_is_max_log_ratio",
       "exp(ε) = max(p/r, r/p, 1) = p(t−1)/(1−p) for p >= 1/t, r the lie probability (seed 001 eqs. 5-6)")
def _rr_max_ratio():
    p, t = sp.Symbol("p", positive=True), sp.Symbol("t", integer=True, positive=True)
    lie = RR._lie_probability(p, t)
    eps = RR.RANDOMIZED_RESPONSE_EPSILON.to_sympy().subs({sp.Symbol("prob", real=True): p,
                                                          sp.Symbol("t", integer=True, positive=True): t})
    same = _zero(sp.exp(eps) - p / lie)
    u, v = sp.Symbol("u", nonnegative=True), sp.Symbol("v", nonnegative=True)
    # t = 2 + u and 1/t <= p < 1, i.e. p = 1/t + (1 − 1/t)·v/(1 + v) with v >= 0
    at = {t: 2 + u, p: 1 / (2 + u) + (1 - 1 / (2 + u)) * v / (1 + v)}
    dominate = [sp.factor(sp.simplify((p / lie - lie / p).subs(at))), sp.factor(sp.simplify((p / lie - 1).subs(at)))]
    ok = same and all(sp.simplify(d).is_nonnegative for d in dominate)
    return ("proved" if ok else "refuted", "sympy",
            f"exp(our ε) − p/r = 0: {same}; with t = 2+u, p = 1/t + (1−1/t)v/(1+v) (u, v >= 0): "
            f"p/r − r/p = {dominate[0]}, p/r − 1 = {dominate[1]}, both >= 0: {ok}")


def _rr_outcomes(p: Fraction, cats: list, inputs: list):
    r = RR._lie_probability(p, len(cats))
    for answers in itertools.product(cats, repeat=len(inputs)):
        pr = Fraction(1)
        for x, y in zip(inputs, answers, strict=True):
            pr *= p if x == y else r
        yield answers, pr


@lemma("rr.estimator_unbiased", "E[N̂_y] = N_y for debias_randomized_response (every input in categories)")
def _rr_unbiased():
    cats, pts = ["a", "b", "c"], 0
    for prob in (0.4, 0.5, 0.75, 0.9):
        for inputs in (["a", "a"], ["a", "b"], ["c", "a", "b"]):
            mean = dict.fromkeys(cats, Fraction(0))
            for answers, pr in _rr_outcomes(Fraction(prob), cats, inputs):
                est = RR.debias_randomized_response(list(answers), cats, prob, exact=True)
                for c in cats:
                    mean[c] += pr * est[c]
            want = {c: inputs.count(c) for c in cats}
            if mean != want:
                return "refuted", "exact enumeration", f"prob={prob}, inputs={inputs}: E = {mean}, N = {want}"
            pts += 1
    return "checked", "exact enumeration", f"{pts} instances (t = 3, n = 2..3), exact"


@lemma("rr.variance", "Var(N̂_y) equals randomized_response_count_variance (exact enumeration)")
def _rr_variance():
    cats, pts = ["a", "b", "c"], 0
    for prob in (0.4, 0.75):
        for inputs in (["a", "b"], ["c", "a", "b"]):
            for c in cats:
                m1 = m2 = Fraction(0)
                for answers, pr in _rr_outcomes(Fraction(prob), cats, inputs):
                    e = RR.debias_randomized_response(list(answers), cats, prob, exact=True)[c]
                    m1, m2 = m1 + pr * e, m2 + pr * e * e
                claimed = RR.randomized_response_count_variance(len(inputs), inputs.count(c), prob, 3, exact=True)
                if m2 - m1 * m1 != claimed:
                    return "refuted", "exact enumeration", f"prob={prob}, inputs={inputs}, category {c}"
                pts += 1
    return "checked", "exact enumeration", f"{pts} cases, exact"


# ---------------------------------------------------------------- bit vectors (seeds 000, 003)

@lemma("bitvec.likelihood_ratio",
       "max over outputs of P[y|x]/P[y|x'] = ((1−q)/q)^d with d = min(2m, k); = ((2−f)/f)^(2m) when q = f/2, "
       "2m <= k (seeds 000/003 Theorem 3.2); our ε is d·ln((2−f)/f)")
def _bitvec_ratio():
    f, d = sp.Symbol("f", positive=True), sp.Symbol("d", integer=True, positive=True)
    q = BV.FLIP_PROBABILITY.to_sympy().subs(sp.Symbol("f", real=True), f)
    eps = BV.RANDOMIZED_RESPONSE_BITVEC_EPSILON.to_sympy().subs(
        {sp.Symbol("q", real=True): q, sp.Symbol("d", integer=True, positive=True): d})
    symbolic = sp.simplify(sp.exp(eps / d) - (2 - f) / f) == 0
    checked = 0
    for k, m in [(1, 1), (2, 1), (3, 1), (4, 2), (5, 2), (3, 2), (4, 1)]:
        for fv in (0.25, 0.5, 1.0):
            meas = BV.make_randomized_response_bitvec(BV.BitVectorDomain(max_weight=m, length=k),
                                                      BV.DiscreteDistance(), fv)
            qv = Fraction(BV.flip_probability(fv))
            inputs = [x for x in itertools.product((0, 1), repeat=k) if sum(x) <= m]
            best = Fraction(0)
            for x, x2 in itertools.product(inputs, repeat=2):
                for y in itertools.product((0, 1), repeat=k):
                    a = b = Fraction(1)
                    for xi, x2i, yi in zip(x, x2, y, strict=True):
                        a *= (1 - qv) if xi == yi else qv
                        b *= (1 - qv) if x2i == yi else qv
                    best = max(best, a / b)
            dd = meas.privacy_constant.env["d"]
            if dd != min(2 * m, k) or best != ((1 - qv) / qv) ** dd:
                return "refuted", "exact enumeration", f"k={k}, m={m}, f={fv}: max ratio {best}, d={dd}"
            checked += 1
    ok = "proved" if symbolic else "refuted"
    return ok, "sympy + exact enumeration", (f"exp(ε(q = f/2)/d) − (2−f)/f = 0: {symbolic}; max ratio attained and "
                                             f"= ((1−q)/q)^min(2m,k) on {checked} (k, m, f), incl. k = 2m and k < 2m")


def _bitvec_moments(inputs: list[tuple[int, ...]], fv: float, freq: bool) -> tuple[list[Fraction], Fraction]:
    """(E[estimate], E‖estimate − truth‖²) by enumerating every output, exactly."""
    qv = Fraction(BV.flip_probability(fv))
    n, k = len(inputs), len(inputs[0])
    truth = [Fraction(sum(x[j] for x in inputs), n if freq else 1) for j in range(k)]
    mean, mse = [Fraction(0)] * k, Fraction(0)
    est_fn = BV.debias_randomized_response_bitvec_frequencies if freq else BV.debias_randomized_response_bitvec
    for flips in itertools.product((0, 1), repeat=n * k):
        pr = Fraction(1)
        for b in flips:
            pr *= qv if b else 1 - qv
        answers = [tuple(x[j] ^ flips[i * k + j] for j in range(k)) for i, x in enumerate(inputs)]
        est = est_fn(answers, fv, exact=True)
        mean = [m + pr * e for m, e in zip(mean, est, strict=True)]
        mse += pr * sum((e - t) ** 2 for e, t in zip(est, truth, strict=True))
    return [m - t for m, t in zip(mean, truth, strict=True)], mse


_BV_CASES = [([(1, 0), (0, 0)], 0.5), ([(1, 1), (0, 1), (1, 0)], 0.25), ([(1, 0, 0), (0, 1, 0)], 0.75)]


def _seed003_mse(n: int, k: int, f: Fraction) -> Fraction:
    return n * k * (f - f * f / 2) / (2 * (1 - f) ** 2)


def _seed000_mse(n: int, k: int, f: Fraction) -> Fraction:
    return k * (f - f * f / 2) / (2 * n * (1 - f) ** 2)


@lemma("bitvec.estimators_unbiased", "both debias_randomized_response_bitvec estimators are unbiased")
def _bitvec_unbiased():
    for inputs, fv in _BV_CASES:
        for freq in (False, True):
            bias, _ = _bitvec_moments(inputs, fv, freq)
            if any(bias):
                return "refuted", "exact enumeration", f"inputs={inputs}, f={fv}, frequencies={freq}: bias {bias}"
    return "checked", "exact enumeration", f"{len(_BV_CASES)} instances × (counts, frequencies), exact"


@lemma("bitvec.mse_versions",
       "seed 003's nk(f−f²/2)/(2(1−f)²) is the MSE of the count estimator; seed 000's k(f−f²/2)/(2n(1−f)²) is "
       "the MSE of the frequency estimator; neither is right for the other estimator when n >= 2")
def _bitvec_mse():
    lines = []
    for inputs, fv in _BV_CASES:
        n, k, fq = len(inputs), len(inputs[0]), Fraction(fv)
        _, count_mse = _bitvec_moments(inputs, fv, False)
        _, freq_mse = _bitvec_moments(inputs, fv, True)
        checks = {"seed003 = count MSE": count_mse == _seed003_mse(n, k, fq),
                  "seed000 = frequency MSE": freq_mse == _seed000_mse(n, k, fq),
                  "impl count_mse": count_mse == BV.randomized_response_bitvec_count_mse(n, k, fv, exact=True),
                  "impl frequency_mse": freq_mse == BV.randomized_response_bitvec_frequency_mse(n, k, fv, exact=True),
                  "seed003 != frequency MSE": freq_mse != _seed003_mse(n, k, fq),
                  "seed000 != count MSE": count_mse != _seed000_mse(n, k, fq)}
        bad = [c for c, ok in checks.items() if not ok]
        if bad:
            return "refuted", "exact enumeration", f"inputs={inputs}, f={fv}: {bad}"
        lines.append(f"n={n},k={k},f={fv}")
    return "checked", "exact enumeration", "all six identities hold on " + "; ".join(lines)


# ---------------------------------------------------------------- RDP / zCDP (seed 002)

def _rappor_rdp(alpha, eps):  # seed 002 Theorem 1
    return 2 / (alpha - 1) * sp.log((sp.exp(alpha * eps / 2) + sp.exp((1 - alpha) * eps / 2)) / (sp.exp(eps / 2) + 1))


def _rappor_rho(eps):  # seed 002 Theorem 4
    return (sp.exp(eps / 2) - 1) / (sp.exp(eps / 2) + 1) * eps


@lemma("rdp.limit_is_rho", "lim_{α→1} of RAPPOR's RDP curve equals ρ = (e^{ε/2}−1)/(e^{ε/2}+1)·ε (seed 002 Thm 4), "
                           "and equals the accounting module's KL of two flipped bits")
def _rdp_limit():
    alpha, eps = sp.Symbol("alpha", positive=True), _sym("epsilon")
    lim = sp.limit(_rappor_rdp(alpha, eps), alpha, 1)
    symbolic = _zero(lim - _rappor_rho(eps))
    from vetdp.accounting import curves  # ours: the accounting module's one definition of KL

    with mpmath.workprec(200):  # never the process-wide precision: other computations read it
        worst = mpmath.mpf(0)
        for e in [mpmath.mpf(i) / 8 for i in range(1, 81)]:
            ours = 2 * curves._kl(e / 2, 2, mpmath)
            seed = (mpmath.exp(e / 2) - 1) / (mpmath.exp(e / 2) + 1) * e
            worst = max(worst, abs(ours - seed))
        grid_ok = worst < mpmath.mpf(2) ** -180
    status = "proved" if symbolic and grid_ok else "refuted"
    return status, "sympy limit + mpmath grid", (f"sympy: limit − ρ = 0: {symbolic}; 2·KL(ε/2) vs ρ on 80 ε in (0, 10] "
                                                 f"at 200 bits: max |diff| = {mpmath.nstr(worst, 3)}")


@lemma("k_rappor.rho_in_q", "ρ = (1−2q)·2k·ln((1−q)/q) for k-RAPPOR with our q = 1/(1+e^{ε/2k}) (seed 002), "
                            "and 2k·ln((1−q)/q) = ε")
def _k_rappor_rho():
    eps, k = _sym("epsilon"), sp.Symbol("k", integer=True, positive=True)
    q = KR.K_RAPPOR_FLIP_PROBABILITY.to_sympy().subs(
        {sp.Symbol("epsilon", real=True): eps, sp.Symbol("k", integer=True, positive=True): k})
    rho_eps = (sp.exp(eps / (2 * k)) - 1) / (sp.exp(eps / (2 * k)) + 1) * eps
    rho_q = (1 - 2 * q) * 2 * k * sp.log((1 - q) / q)
    a = _zero(rho_q - rho_eps)
    b = _zero(2 * k * sp.log((1 - q) / q) - eps)
    c = _zero(((1 - q) / q) ** (2 * k) - sp.exp(eps))
    ok = a and b and c
    return ("proved" if ok else "refuted", "sympy",
            f"ρ(q) − ρ(ε) = 0: {a}; 2k·ln((1−q)/q) − ε = 0: {b}; ((1−q)/q)^(2k) − e^ε = 0: {c}")


# ---------------------------------------------------------------- errata checks

@lemma("errata.bernoulli_probability", "the per-bit flip probability is f/2, not `prob` (seeds 000/003 Lemma 3.1)")
def _bernoulli():
    f = sp.Symbol("f", real=True)
    ideal = BV.FLIP_PROBABILITY.to_sympy()
    # f/2 is a float for every f >= 2**-1021; below, f = n·2**-1074 halves exactly iff n is even (the
    # smallest normal binade too), and otherwise rounds up by 2**-1075
    low = [2.0**-1022, math.nextafter(2.0**-1022, 1), math.nextafter(2.0**-1021, 0), 3 * 2.0**-1074, 4 * 2.0**-1074]
    exact_above = all(Fraction(BV.flip_probability(fv)) == Fraction(fv) / 2
                      for fv in (1.0, 0.5, 0.1, 2.0**-1021, math.nextafter(2.0**-1021, 1)))
    exact_below = all(Fraction(BV.flip_probability(fv)) - Fraction(fv) / 2
                      == (Fraction(1, 2**1075) if (Fraction(fv) * 2**1074).numerator % 2 else 0) for fv in low)
    ok = sp.simplify(ideal - f / 2) == 0 and exact_above and exact_below
    detail = (f"FLIP_PROBABILITY = {ideal}; f/2 exact for f >= 2**-1021: {exact_above}; below, exact iff the "
              f"last bit is even, else 2**-1075 above: {exact_below}")
    return "proved" if ok else "refuted", "sympy + exact", detail


@lemma("errata.make_rappor_d_in", "make_rappor's map rejects d_in > 1 (the 2024 map ignored d_in)")
def _rappor_d_in():
    meas = BV.make_rappor(BV.BitVectorDomain(max_weight=1, length=4), BV.DiscreteDistance(), 0.5)
    try:
        meas.map(2)
    except ValueError as e:
        return "proved", "execution", f"map(2) raises: {e}; map(1) = {meas.map(1)!r}, map(0) = {meas.map(0)!r}"
    return "refuted", "execution", "map(2) returned instead of raising"


# ---------------------------------------------------------------- running

def run_lemma(lid: str) -> LemmaResult:
    """Check lemma ``lid``; an exception inside a check is reported as refuted with its message."""
    if lid not in LEMMAS:
        raise KeyError(f"lemma={lid!r} must be one of {sorted(LEMMAS)}")
    statement, fn = LEMMAS[lid]
    t0 = time.perf_counter()
    try:
        status, method, detail = fn()
    except Exception as e:  # noqa: BLE001 - a crashing check is a failed check, reported
        status, method, detail = "refuted", "error", f"{type(e).__name__}: {e}"
    return LemmaResult(lid, status, method, statement, detail, time.perf_counter() - t0)




def run_lemmas(ids: list[str] | None = None) -> list[LemmaResult]:
    """Results of the given lemmas (default: all), cached per process."""
    out = []
    for lid in ids if ids is not None else list(LEMMAS):
        if lid not in _CACHE:
            _CACHE[lid] = run_lemma(lid)
        out.append(_CACHE[lid])
    return out


# the hashing mechanisms' lemmas (olh.*, hadamard.*, cms.*, uniform.*) register themselves on import
from vetdp.obligations import hashing_lemmas  # noqa: E402, F401
