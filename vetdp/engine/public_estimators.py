"""Exact moments of estimators of hashing mechanisms, with hash_bucket as a random function (random-oracle model).

A hashing estimator (OLH's support counts, a sketch's debiased rows) is unbiased only on average over the hash
functions: its answers and the server's hash evaluations must be enumerated together. :func:`oracle_moments` runs the
whole pipeline — every client of the dataset, then the estimator — as one enumerated function under a source that

* gives every distinct (key, value) of :func:`~vetdp.sampling.public.hash_bucket` its own bucket, uniform on the
  range and drawn at its first use (so the client's H_s(x) and the server's H_s(v) agree when (s, x) = (s, v) and are
  independent otherwise); other keyed encodings are evaluated, their inner hash_bucket calls drawn so;
* draws a public value over at most :data:`CONCRETE_PUBLIC` values exactly (every value enumerated), and a larger
  one (a 2**32 seed) as a label: a new label with probability (n − L)/n, else one of the L labels drawn before with
  1/n each — exact when the estimator uses such values only as hash keys, as a seed is used.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from vetdp.engine.enumerate import EnumerationBudgetExceeded, _next_prefix, freeze
from vetdp.engine.public import uses_public
from vetdp.sampling.public import hash_bucket_fn
from vetdp.sampling.sources import BranchingSource, use_source

__all__ = ["oracle_moments", "CONCRETE_PUBLIC", "OracleSource"]

CONCRETE_PUBLIC = 4096


class OracleSource(BranchingSource):
    """Enumerates a pipeline with hash_bucket as a lazily drawn random function (see the module docstring)."""

    def __init__(self, prefix: list[int]):
        super().__init__(prefix)
        self.memo: dict[tuple, int] = {}
        self.labels: dict[int, int] = {}

    def condition_public(self, n: int) -> int:
        if n <= CONCRETE_PUBLIC:
            return self.branch_uniform(n)
        seen = self.labels.get(n, 0)
        outcomes = [("new", Fraction(n - seen, n))] + [(i, Fraction(1, n)) for i in range(seen)]
        label = self.branch(outcomes)
        if label == "new":
            label = seen
            self.labels[n] = seen + 1
        return label

    def condition_encoding(self, fn: Callable, key: Any, value: Any, size: int) -> int:
        if getattr(fn, "func", None) is hash_bucket_fn:
            memo_key = (size, freeze(key), freeze(value))
            if memo_key not in self.memo:
                self.memo[memo_key] = self.branch_uniform(size)
            return self.memo[memo_key]
        return fn(key, value)


def oracle_moments(spec: Any, params: dict, measurement: Any, estimator: Callable, budget: int,
                   raised: Callable[[list, Exception], Exception] | None = None
                   ) -> tuple[list[Fraction], list[Fraction], list[Fraction], bool, list[Fraction]] | None:
    """(E[estimate], E[(estimate − truth)²], truth, floats?, E|estimate|) per coordinate, exactly, over the
    dataset's clients and the hash functions; None when the mechanism uses no public primitive. An exception of
    the estimator is re-raised as ``raised(answers, error)`` when given."""
    dataset = params["dataset"]
    function = getattr(measurement, "function", None)
    if not dataset or function is None:
        return None
    if not uses_public(function, measurement.input_domain.check_member(dataset[0])):
        return None
    truth = [Fraction(v) for v in spec.truth(params)]

    def pipeline() -> tuple:
        answers = [measurement(x) for x in dataset]
        try:
            return tuple(spec.estimate(estimator, answers, params))
        except Exception as e:  # noqa: BLE001 - the estimator raising on valid answers is a finding
            if raised is None:
                raise
            raise raised(answers, e) from e

    mean = [Fraction(0)] * len(truth)
    second = [Fraction(0)] * len(truth)
    absolute = [Fraction(0)] * len(truth)
    floats = False
    prefix: list[int] | None = []
    for paths in itertools.count(1):
        if prefix is None:
            break
        if paths > budget:
            raise EnumerationBudgetExceeded(f"the pipeline of {len(dataset)} clients and the estimator needs more "
                                            f"than {budget} paths; use a smaller dataset or domain")
        source = OracleSource(prefix)
        with use_source(source):
            raw = pipeline()
        prob = source.probability
        floats = floats or any(isinstance(v, float) for v in raw)
        est = [Fraction(v) for v in raw]
        if len(est) != len(truth):
            raise ValueError(f"the estimator returned {len(est)} estimates for {len(truth)} quantities")
        for j, (e, t) in enumerate(zip(est, truth, strict=True)):
            mean[j] += prob * e
            second[j] += prob * (e - t) ** 2
            absolute[j] += prob * abs(e)
        prefix = _next_prefix(source.trail)
    return mean, second, truth, floats, absolute
