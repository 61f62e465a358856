"""The engine's clauses for an *opaque* constructor: one whose randomness vetdp cannot enumerate.

Used by :func:`vetdp.engine.runner.evaluate_params` when ``RunConfig.opaque`` is set (for
compiled or foreign code, e.g. OpenDP's Rust core behind :mod:`vetdp.audit.opendp_adapter`).

* The exact truth is the output distribution of *our* implementation of the spec with the
  same parameters, computed by enumerating its code (that implementation is itself vetted
  by ``vetdp check``); no privacy formula is restated here. ``privacy.sound`` and
  ``privacy.tight`` compare the opaque map with that truth, decided exactly as for ours.
* ``audit.distribution``: the opaque function is sampled on a few inputs and every
  output's count is compared with its exact probability by two-sided Clopper–Pearson
  intervals, Bonferroni-corrected over all cells (each input's support plus one cell for
  "any other output"). A violation is reported only when an exact probability lies outside
  its interval, so a correct implementation is flagged with probability at most β.
* ``errors.data_independent``: one call per input; the raised error (or none) must agree.
  This sees only errors that occur on that call.
* ``randomness.through_primitives`` and ``timing.constant_bytes`` are skipped: they observe
  the bytes drawn from vetdp's sources, which opaque code does not use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from vetdp.audit.blackbox import clopper_pearson_lower, clopper_pearson_upper
from vetdp.engine.enumerate import EnumerationBudgetExceeded, Raised, freeze, output_distribution

__all__ = ["opaque_findings", "distribution_audit", "audited_inputs"]


def audited_inputs(inputs: list) -> list:
    """The inputs whose samples are audited: the first, middle and last of the spec's inputs."""
    picks = [inputs[0], inputs[len(inputs) // 2], inputs[-1]]
    out: list = []
    for x in picks:
        if all(freeze(x) != freeze(y) for y in out):
            out.append(x)
    return out


def _sample(fn: Callable[[Any], Any], x: Any, n: int) -> Counter:
    counts: Counter = Counter()
    for _ in range(n):
        try:
            y = freeze(fn(x))
        except Exception as e:  # noqa: BLE001 - an error is an outcome, as in enumeration
            y = Raised(type(e).__name__, str(e))
        counts[y] += 1
    return counts


def distribution_audit(fn: Callable[[Any], Any], exact: dict[Any, dict[Any, Fraction]], inputs: list, samples: int,
                       beta: float):
    """Whether ``fn``'s samples are consistent with the exact distributions, at confidence 1 − β.

    Returns a runner ``Finding``; ``ok`` is False only when some exact probability lies
    outside its Bonferroni-corrected two-sided Clopper–Pearson interval.
    """
    from vetdp.engine.runner import Finding

    cells = sum(len(exact[freeze(x)]) + 1 for x in inputs)
    alpha = beta / (2 * cells)  # two sides per cell
    worst: tuple[float, dict] | None = None
    for x in inputs:
        dist = exact[freeze(x)]
        counts = _sample(fn, x, samples)
        other = sum(c for y, c in counts.items() if y not in dist)
        rows = [(y, p, counts.get(y, 0)) for y, p in dist.items()]
        rows.append(("<any other output>", Fraction(0), other))
        for y, p, k in rows:
            lo, hi = clopper_pearson_lower(k, samples, alpha), clopper_pearson_upper(k, samples, alpha)
            if Fraction(lo) > p or p > Fraction(hi):  # compared exactly
                miss = float(Fraction(lo) - p) if Fraction(lo) > p else float(p - Fraction(hi))
                shown = y if y != "<any other output>" else sorted(map(repr, (z for z in counts if z not in dist)))
                witness = {"x": repr(x), "y": repr(shown), "observed": k, "samples": samples, "exact": str(p),
                           "interval": [lo, hi]}
                if worst is None or miss > worst[0]:
                    worst = (float(miss), witness)
    summary = (f"{samples} samples on each of {len(inputs)} inputs, {cells} cells, two-sided Clopper–Pearson "
               f"at β={beta:g} (Bonferroni)")
    if worst is not None:
        w = worst[1]
        return Finding(False, f"the opaque sampler's frequencies differ from the exact distribution: "
                              f"P[M({w['x']}) = {w['y']}] = {w['exact']} exactly, observed {w['observed']}/{samples}, "
                              f"outside [{w['interval'][0]:.4g}, {w['interval'][1]:.4g}]; {summary}", witness=w)
    return Finding(True, f"every output frequency consistent with the exact distribution; {summary}")


def _errors_agree(m: Any, inputs: list):
    from vetdp.engine.runner import Finding

    seen: dict[str | None, Any] = {}
    for x in inputs:
        try:
            m(x)
            key = None
        except Exception as e:  # noqa: BLE001
            key = f"{type(e).__name__}: {e}"
        seen.setdefault(key, x)
    if len(seen) > 1:
        return Finding(False, "inputs raise different errors on one call each",
                       witness={str(k): repr(x) for k, x in seen.items()})
    (only,) = seen
    return Finding(True, "one call per input: no errors" if only is None else f"same error on every input: {only}")


def opaque_findings(spec: Any, m: Any, params: dict, inputs: list, cfg: Any) -> dict:
    """The clauses for an opaque measurement ``m`` built with ``params`` (see the module docstring)."""
    from vetdp.engine.runner import Finding, _privacy

    out: dict = {
        "randomness.through_primitives": Finding(True, "opaque implementation: its samples are audited instead "
                                                 "(audit.distribution)", skipped=True),
        "errors.data_independent": _errors_agree(m, inputs),
    }
    if spec.constant_time_param is not None:
        out["timing.constant_bytes"] = Finding(True, "opaque implementation: the bytes it reads cannot be observed",
                                               skipped=True)
    try:
        reference = spec.build(spec.load_constructor(), params)
        exact = {freeze(x): output_distribution(reference, x, budget=cfg.budget) for x in inputs}
    except EnumerationBudgetExceeded as e:
        skip = Finding(True, f"no exact truth: {e}", skipped=True)
        out.update({"privacy.sound": skip, "privacy.tight": skip, "audit.distribution": skip})
        return out
    except Exception as e:  # noqa: BLE001
        bad = Finding(False, f"the reference implementation {spec.impl_ref} could not give the exact truth for these "
                      f"parameters: {type(e).__name__}: {e}")
        out.update({"privacy.sound": bad, "privacy.tight": bad, "audit.distribution": bad})
        return out
    out.update(_privacy(spec, m, exact, params))
    samples = cfg.audit_samples * (10 if cfg.deep else 1)
    out["audit.distribution"] = distribution_audit(m, exact, audited_inputs(inputs), samples, cfg.audit_beta)
    return out
