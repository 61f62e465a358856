"""Proof obligations, machine-checked (issue 4).

* :mod:`.z3encode` — privacy-constant expressions to z3; per-step and soundness queries;
* :mod:`.constants` — the constants under proof (from impl/) and the seeds' naive forms;
* :mod:`.contracts` — the facts the encoding assumes, checked (casts by z3, primitives by mpmath);
* :mod:`.witness` — concrete float witnesses for refutations, confirmed with mpmath;
* :mod:`.check` — run obligations, results as :class:`ObligationResult`;
* :mod:`.lemmas` — the proofs' algebraic steps as named sympy lemmas;
* :mod:`.pinning` — proofs/<stem>.md front matter, digests, status, diff, bless;
* :mod:`.render` — proofs to HTML with MathML; :mod:`.provider` — checks for ``vetdp check``.
"""
