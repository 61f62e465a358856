"""The algebraic steps of the hashing mechanisms' proofs (proofs/olh.md, hadamard_response.md, count_mean_sketch.md,
hadamard_count_mean_sketch.md) and of the constant-time uniform sampler, as checked lemmas.

Constants come from impl/ (``Expr.to_sympy()``); the published formulas under test are typed here, as the claims.
"""

from __future__ import annotations

import itertools

import sympy as sp

from vetdp.impl import count_mean_sketch as CMS
from vetdp.impl import hadamard_response as HR
from vetdp.impl import olh as OLH
from vetdp.impl.randomized_response import RANDOMIZED_RESPONSE_EPSILON
from vetdp.obligations.lemmas import lemma

_eps = sp.Symbol("epsilon", positive=True)
_g = sp.Symbol("g", positive=True, integer=True)
# the symbols Expr.to_sympy() uses: float variables real, int variables positive integers
_EPS, _PROB, _T, _F = (sp.Symbol(n, real=True) for n in ("epsilon", "prob", "t", "f"))
_T_INT = sp.Symbol("t", integer=True, positive=True)


def _simplified(expr) -> sp.Expr:
    return sp.simplify(sp.expand_log(sp.simplify(expr.subs(_EPS, _eps)), force=True))


def _rr_loss(prob, t) -> sp.Expr:
    return RANDOMIZED_RESPONSE_EPSILON.to_sympy().subs({_PROB: prob, _T_INT: t})


@lemma("olh.keep_probability_gives_epsilon",
       "with p = e^ε/(e^ε + g − 1): the loss of randomized response over g buckets, ln(p(g−1)/(1−p)), is ε "
       "(Wang et al. 2017, §4.4); OLH's map is RANDOMIZED_RESPONSE_EPSILON at t = g")
def _olh_keep():
    p = OLH.OLH_KEEP_PROBABILITY.to_sympy()
    loss = _rr_loss(p, _g)
    diff = _simplified(loss - _eps)
    return ("proved" if diff == 0 else "refuted", "sympy", f"ln(p(g−1)/(1−p)) − ε = {diff}")


@lemma("olh.support_probability",
       "a report of a value x != v supports v (y = H_s(v)) with probability exactly 1/g when H_s is uniform: "
       "p/g + (1−p)/(g−1)·(g−1)/g")
def _olh_support():
    p = sp.Symbol("p", positive=True)
    q = (1 - p) / (_g - 1)
    diff = sp.simplify(p / _g + q * (_g - 1) / _g - 1 / _g)
    return ("proved" if diff == 0 else "refuted", "sympy", f"P[support] − 1/g = {diff}")


@lemma("olh.wang_variance_is_an_approximation",
       "Wang et al.'s OLH variance n·4e^ε/(e^ε−1)² is n(1/g)(1−1/g)/(p−1/g)² at the real g = e^ε + 1; the exact "
       "variance adds c_v(p(1−p) − (1/g)(1−1/g))/(p−1/g)² (> 0) and the seed-collision covariance")
def _wang():
    g = sp.exp(_eps) + 1
    p = sp.exp(_eps) / (sp.exp(_eps) + g - 1)
    q = 1 / g
    ideal = _simplified(q * (1 - q) / (p - q) ** 2 - 4 * sp.exp(_eps) / (sp.exp(_eps) - 1) ** 2)
    # the c_v term is positive for every integer g >= 2 and p in (1/g, 1): p(1−p) > q(1−q) iff p + q < 1
    pp = sp.Symbol("p", positive=True)
    gap = sp.factor(pp * (1 - pp) - (1 / _g) * (1 - 1 / _g))
    ok = ideal == 0 and sp.simplify(gap - (pp - 1 / _g) * (1 - pp - 1 / _g)) == 0
    return ("proved" if ok else "refuted", "sympy",
            f"published − exact-at-real-g = {ideal}; p(1−p) − q(1−q) = (p − q)(1 − p − q)")


@lemma("hadamard.rows_split_evenly",
       "for K = 2^b (b <= 11) any two distinct nonzero rows of the Sylvester–Hadamard matrix agree on exactly K/2 "
       "columns, and every nonzero row has K/2 entries +1 (so C_x has K/2 outputs and two values' halves differ)")
def _rows():
    for b in range(1, 12):
        size = 1 << b
        rows = [[HR.hadamard_entry(r, c) for c in range(size)] for r in range(1, size)] if b <= 7 else None
        if rows is not None:
            if any(sum(1 for v in row if v == 1) != size // 2 for row in rows):
                return "refuted", "exhaustive", f"a row of K={size} is not balanced"
            for a, c in itertools.combinations(range(len(rows)), 2):
                if sum(1 for u, v in zip(rows[a], rows[c], strict=True) if u == v) != size // 2:
                    return "refuted", "exhaustive", f"rows {a + 1}, {c + 1} of K={size} agree elsewhere than on half"
        else:  # larger K: the product of two rows is row r ^ r' (nonzero), balanced: check every row's balance
            for r in range(1, size):
                if sum(1 for c in range(size) if HR.hadamard_entry(r, c) == 1) != size // 2:
                    return "refuted", "exhaustive", f"row {r} of K={size} is not balanced"
    return ("checked", "exhaustive", "K = 2..128: every pair of nonzero rows; K = 256..2048: every nonzero row "
            "balanced (H[r]·H[r'] = H[r ^ r'] entrywise)")


@lemma("hadamard.keep_probability_gives_epsilon",
       "with p = e^ε/(e^ε + 1), ln(p/(1−p)) = ε (Hadamard response and HCMS: RANDOMIZED_RESPONSE_EPSILON at t = 2)")
def _hadamard_keep():
    p = HR.HADAMARD_KEEP_PROBABILITY.to_sympy()
    loss = _rr_loss(p, 2)
    diff = _simplified(loss - _eps)
    return ("proved" if diff == 0 else "refuted", "sympy", f"ln(p/(1−p)) − ε = {diff}")


@lemma("cms.epsilon_split",
       "with f = 1/(1 + e^{ε/2}): two coordinates flipped with probability f give 2·ln((1−f)/f) = ε (Apple 2017: ε "
       "split over the two coordinates where two values' vectors differ)")
def _cms_split():
    f = CMS.CMS_FLIP_PROBABILITY.to_sympy()
    loss = CMS.CMS_EPSILON.to_sympy().subs(_F, f)
    diff = _simplified(loss - _eps)
    return ("proved" if diff == 0 else "refuted", "sympy", f"2 ln((1−f)/f) − ε = {diff}")


@lemma("uniform.constant_time_exact",
       "an attempt of uniform_attempt_constant_time over w bytes gives each value in [0, n) for exactly "
       "(2^(8w) − 2^(8w) mod n)/n byte strings and rejects fewer than n: checked over every byte string for "
       "n <= 257 with 0 and 1 extra bytes, and by z3 for every n < 2^32 at the production width")
def _uniform_ct():
    from vetdp.sampling import primitives as P

    for n in (1, 2, 3, 5, 6, 7, 200, 255, 256, 257):
        for extra in (0, 1) if n <= 256 else (0,):
            width = P.uniform_attempt_constant_time_bytes(n, extra)
            hits: dict = {}
            for v in range(256**width):
                out = P.uniform_attempt_constant_time(n, v.to_bytes(width, "big"))
                hits[out] = hits.get(out, 0) + 1
            total = 256**width
            accepted = {k: c for k, c in hits.items() if k is not None}
            if sorted(accepted) != list(range(n)) or set(accepted.values()) != {(total - total % n) // n}:
                return "refuted", "exhaustive", f"n={n}, extra={extra}: preimage counts {accepted}"
            if hits.get(None, 0) != total % n:
                return "refuted", "exhaustive", f"n={n}: {hits.get(None, 0)} rejected, expected {total % n}"
    ok, detail = _z3_wide_attempt()
    return ("proved" if ok else "refuted", "exhaustive + z3", f"small n exhaustively; {detail}")


def _z3_wide_attempt() -> tuple[bool, str]:
    """z3 (integer arithmetic with its div/mod semantics): for every n in [1, 2^32) and T = 2^(8w) at the
    production width (w = 4 + 16 bytes), the limit T − T mod n is a multiple of n and at least T − n + 1, so an
    attempt is rejected with probability below n/T <= 2^-128 and accepted values are exactly uniform."""
    import z3

    from vetdp.obligations.limits import z3_rlimit
    from vetdp.sampling import primitives as P

    bits = 8 * P.uniform_attempt_constant_time_bytes(2**32 - 1)
    total = 1 << bits
    n = z3.Int("n")
    limit = total - total % n
    solver = z3.Solver()
    solver.set("rlimit", z3_rlimit())
    solver.add(n >= 1, n < 2**32)
    solver.add(z3.Or(limit % n != 0, limit <= total - n))
    verdict = solver.check()
    return verdict == z3.unsat, f"z3 for n < 2^32 at {bits}-bit attempts: {verdict} (unsat: proved)"
