"""The algebraic steps of proofs/oue.md as checked lemmas, registered with vetdp (``[tool.vetdp] register``).

Each lemma takes the constants from the implementation (``Expr.to_sympy()``), never a retyped formula.
"""

import sympy as sp

from oue_example.oue import KEEP, OUE_EPSILON, OUE_FLIP_PROBABILITY
from vetdp.api import lemma

_eps, _q = sp.Symbol("epsilon", real=True), sp.Symbol("q", real=True)


@lemma("oue.likelihood_ratio",
       "with p = 1/2 and q = 1/(e^ε + 1): p(1−q)/((1−p)q) = e^ε, and OUE_EPSILON at that q is ε (Wang et al. §4.4)")
def _likelihood_ratio():
    q = OUE_FLIP_PROBABILITY.to_sympy()
    p = sp.nsimplify(KEEP)
    ratio = sp.simplify(p * (1 - q) / ((1 - p) * q))
    loss = sp.simplify(sp.expand_log(OUE_EPSILON.to_sympy().subs(_q, q), force=True))
    ok = sp.simplify(ratio - sp.exp(_eps)) == 0 and sp.simplify(loss - _eps) == 0
    return ("proved" if ok else "refuted", "sympy", f"ratio = {ratio}, loss at q = {loss}")


@lemma("oue.estimator_unbiased",
       "E[(C(i) − n q)/(p − q)] = c_i when C(i) counts c_i bits kept with probability p and n − c_i set with q")
def _unbiased():
    n, c = sp.symbols("n c", nonnegative=True)
    p = sp.nsimplify(KEEP)
    expected = (c * p + (n - c) * _q - n * _q) / (p - _q)
    diff = sp.simplify(expected - c)
    return ("proved" if diff == 0 else "refuted", "sympy", f"E[ĉ] − c = {diff}")
