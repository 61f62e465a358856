"""The postcondition clauses of a measurement spec, each decided for one parameter set.

Every function here returns :class:`Finding` values (``ok`` False: a violation, or with
``undecided`` the engine could not decide); :mod:`vetdp.engine.runner` chooses which clauses run
and aggregates them over the parameter search. The clauses compare the code under test with
exact truths: its enumerated output distributions, the spec's stated law, and its privacy map
at every ``d_in`` from 0 to ``spec.max_d_in``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from vetdp.engine.divergence import (
    Verdict,
    compare_claim,
    decide_bracket,
    ln_ratio_bracket,
    max_divergence,
    max_divergence_bracket,
)
from vetdp.engine.enumerate import Raised, ReplayMismatch, enumerate_law, freeze, output_distribution
from vetdp.engine.foreign import watch_foreign_randomness
from vetdp.engine.results import exact_text
from vetdp.engine.spec import MeasurementSpec
from vetdp.sampling.sources import BranchingSource, RandomSource, RecordingSource, SeededSource, use_source

__all__ = [
    "Finding",
    "TIGHTNESS",
    "TIGHTNESS_FLOOR",
    "show",
    "privacy_findings",
    "law_finding",
    "reference_laws",
    "distance_findings",
    "data_independent_errors",
    "state_kept_finding",
    "STATE_KEPT",
    "cryptographic_finding",
    "rejects_outside",
    "deterministic_given_choices",
    "law_with_residual",
    "privacy_with_residual",
    "constant_bytes",
    "pairs_within",
    "tight_holds",
    "spec_law_at",
    "enumerated_laws",
    "accepted_outside",
    "beyond_preconditions_finding",
    "outside_findings",
]

TIGHTNESS = Fraction(1, 2**30)  # privacy.tight: map(d_in) <= L·(1 + 2^-30) + TIGHTNESS_FLOOR for the exact loss L
# the absolute part, for losses near 0: a float map cannot be relatively close there (ln of a float ratio next to 1
# moves in steps of 2^-52, times the coordinates a map adds up), and 2^-40 is 4096 such steps
TIGHTNESS_FLOOR = Fraction(1, 2**40)


@dataclasses.dataclass(frozen=True)
class Finding:
    """A clause's outcome for one parameter set (``ok`` False: a violation)."""

    ok: bool
    message: str = ""
    claimed: float | None = None
    true: float | None = None
    slack: float | None = None
    witness: dict | None = None
    undecided: bool = False
    skipped: bool = False
    stopped: bool = False  # the wall-clock safety limit ended it: no verdict (Status.STOPPED, exit 2)
    error: bool = False  # vetdp's own computation failed: no verdict about the code (Status.ERROR, exit 2)


def _decimal(x: Fraction, digits: int) -> str:
    """``x`` to ``digits`` significant decimal digits (exact rational arithmetic, rounded half-even)."""
    import decimal

    with decimal.localcontext(decimal.Context(prec=digits)):
        return format(decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator), "g") if x else "0"


def apart(a: Any, b: Any) -> tuple[str, str]:
    """Two numbers (floats, ints or Fractions) as decimals with the fewest significant digits (at least 6, at most
    60) at which they read differently, so that two values that differ never print alike (one ulp apart: 17
    digits). A float also shows its exact hexadecimal form."""
    fa, fb = Fraction(a), Fraction(b)
    digits = 6
    while digits < 60 and fa != fb and _decimal(fa, digits) == _decimal(fb, digits):
        digits += 1

    def text(x: Any, f: Fraction) -> str:
        shown = _decimal(f, digits)
        return f"{shown} ({x.hex()})" if isinstance(x, float) and math.isfinite(x) else shown

    return text(a, fa), text(b, fb)


def _rational(x: Fraction, other: Fraction) -> str:
    """An exact probability with a decimal that reads differently from ``other``'s: ``p/q (≈ d)``."""
    return f"{exact_text(x)} (≈{apart(x, other)[0]})"


def show(x: Any) -> Any:
    """A readable form of an input or output for reports (bit vectors as 0/1 strings)."""
    if isinstance(x, Raised):
        return str(x)
    if isinstance(x, tuple) and x and all(isinstance(b, bool) for b in x):
        return "".join("1" if b else "0" for b in x)
    return x


def _claim_of(m: Any, d_in: int) -> tuple[float | None, Finding | None]:
    """map(d_in) as a finite float, or the Finding that says why it is not one."""
    try:
        claim = m.map(d_in)
    except Exception as e:  # noqa: BLE001 - the map's failure is the finding
        return None, Finding(False, f"map({d_in}) raised {type(e).__name__}: {e}")
    if isinstance(claim, bool) or not isinstance(claim, (int, float)) or not math.isfinite(claim):
        return None, Finding(False, f"map({d_in}) returned {claim!r}, not a finite float",
                             claimed=claim if isinstance(claim, float) else None)
    return float(claim), None


def pairs_within(spec: MeasurementSpec, params: dict, keys: list, d: int) -> list[tuple[Any, Any]] | None:
    """Ordered pairs of distinct inputs at distance <= d (None: every ordered pair of distinct inputs)."""
    if spec.distance is not None:
        return [(x, xp) for x in keys for xp in keys if x != xp and spec.distance(params, x, xp) <= d]
    if d < 1:
        return []  # distinct inputs are at distance >= 1 under a metric without a distance function
    if spec.neighbours is not None:
        if d == 1:
            return spec.neighbours(params, keys)
        raise ValueError(f"spec {spec.name!r} defines neighbours but no distance: map({d}) cannot be checked")
    return None


def _worst(dists: dict, pairs, cache: dict | None):
    """max_divergence over ``pairs``, reusing per-pair results across calls that share ``cache``."""
    if cache is None:
        return max_divergence(dists, pairs)
    if pairs is None:
        if "all" not in cache:
            cache["all"] = max_divergence(dists, None)
        return cache["all"]
    best = None
    for pair in pairs:
        if pair not in cache:
            cache[pair] = max_divergence(dists, [pair])
        md = cache[pair]
        if best is None or (best.ratio is not None and (md.ratio is None or md.ratio > best.ratio)):
            best = md
    return best


def _rounded_loss(ratio: Fraction | None, cmp: Any) -> tuple[float, float]:
    """(ln(ratio) correctly rounded to a float, claim − ln(ratio) as a float of the right sign) for a decided
    comparison ``cmp``; (inf, −inf) for ratio None. The enclosure is refined until both ends round to the same
    float (at most 16384 bits; beyond, the comparison's own midpoint)."""
    if ratio is None:
        return math.inf, -math.inf
    bracket = ln_ratio_bracket(ratio)
    prec = max(64, cmp.precision)
    while prec <= 1 << 14:
        lo, hi = bracket(prec)
        if float(lo) == float(hi):
            slack = float(Fraction(cmp.claim) - (lo + hi) / 2)
            if (cmp.verdict is Verdict.UNSOUND and slack >= 0) or (cmp.verdict is Verdict.SOUND and slack < 0):
                slack = cmp.slack  # the refined midpoint fell on the other side of the claim: keep the decided sign
            return float(lo), slack
        prec *= 2
    return cmp.truth, cmp.slack


def _loss_finding(claim: float, d_in: int, dists: dict, pairs, cache: dict | None = None,
                  worst: Any = None) -> tuple[Finding, Any]:
    """Whether claim >= the exact worst-case loss over ``pairs`` (no pairs: the loss is 0). ``worst``, when
    given, is that worst case already decided (fields ratio, x, x_prime, y, p, q), e.g. from a product structure."""
    if pairs is not None and not pairs:
        ok = claim >= 0
        return Finding(ok, f"map({d_in}) = {claim!r} " + (">= 0 = the exact loss (no pair of inputs is this close)"
                       if ok else "is below the exact loss 0"), claimed=claim, true=0.0, slack=claim), None
    md = worst if worst is not None else _worst(dists, pairs, cache)
    cmp = compare_claim(claim, None if md.ratio is None else ln_ratio_bracket(md.ratio))
    witness = {"d_in": d_in, "x": show(md.x), "x_prime": show(md.x_prime), "y": show(md.y),
               "P[M(x)=y]": exact_text(md.p), "P[M(x')=y]": exact_text(md.q)}
    truth, slack = _rounded_loss(md.ratio, cmp)
    common = dict(claimed=claim, true=truth, slack=slack, witness=witness)
    if cmp.verdict is Verdict.SOUND:
        return Finding(True, f"map({d_in}) >= exact loss", **common), (md, cmp)
    if cmp.verdict is Verdict.UNSOUND:
        if cmp.truth_lo is None:
            return Finding(False, f"map({d_in}) = {claim!r} but the exact loss is infinite (an output possible under "
                           "x is impossible under x')", **common), (md, cmp)
        short = cmp.truth_lo - Fraction(claim)  # a lower bound on the shortfall, exact
        shown_claim, shown_truth = apart(claim, cmp.truth_lo)
        return Finding(False, f"map({d_in}) = {claim!r} is below the exact loss {truth:.17g} (short by at least "
                       f"{float(short):.3g}); map {shown_claim} against loss > {shown_truth}, at x = {show(md.x)!r}, "
                       f"x' = {show(md.x_prime)!r}, output {show(md.y)!r}", **common), (md, cmp)
    return Finding(False, f"map({d_in}) and the exact loss not separated at 16384 bits", undecided=True,
                   **common), (md, cmp)


def tight_holds(claim: float, ratio: Fraction) -> bool:
    """Whether ``claim`` <= ln(ratio)·(1 + 2**-30) + 2**-40 (the allowance of ``privacy.tight``), decided exactly
    (an enclosure of the logarithm refined until it separates; inseparable at 16384 bits counts as within)."""
    def allowance(prec: int) -> tuple[Fraction, Fraction]:
        lo, hi = ln_ratio_bracket(ratio)(prec)
        return lo + TIGHTNESS * abs(lo) + TIGHTNESS_FLOOR, hi + TIGHTNESS * abs(hi) + TIGHTNESS_FLOOR

    # "sound" against truth + allowance means the claim overshoots by more than the allowance
    return compare_claim(claim, allowance).verdict is not Verdict.SOUND


def privacy_findings(spec: MeasurementSpec, m: Any, dists: dict, params: dict,
                     worst: Any = None) -> dict[str, Finding]:
    """``privacy.sound`` and ``privacy.tight`` at ``spec.d_in`` against the exact distributions ``dists``, or
    against ``worst``, the decided worst case over every pair of distinct inputs (then ``dists`` is unused)."""
    claim, bad = _claim_of(m, spec.d_in)
    if bad is not None:
        return {"privacy.sound": bad, "privacy.tight": bad}
    pairs = None if worst is not None else pairs_within(spec, params, list(dists), spec.d_in)
    sound, decided = _loss_finding(claim, spec.d_in, dists, pairs, worst=worst)
    out = {"privacy.sound": sound}
    common = dict(claimed=sound.claimed, true=sound.true, slack=sound.slack, witness=sound.witness)
    if not spec.tight:
        out["privacy.tight"] = Finding(True, "tightness not required by this spec", skipped=True, **common)
    elif decided is None or decided[0].ratio is None or not sound.ok:
        out["privacy.tight"] = Finding(True, "not applicable: the map is not sound", skipped=True, **common)
    else:
        tight_ok = tight_holds(claim, decided[0].ratio)
        times = f": {float(Fraction(claim) / Fraction(sound.true)):.6g}×" if sound.true else ""
        out["privacy.tight"] = Finding(tight_ok, "map(d_in) <= exact loss·(1 + 2**-30) + 2**-40" if tight_ok else
                                       f"map({spec.d_in}) = {claim!r} exceeds the exact loss {sound.true!r} by more "
                                       f"than 2**-30 relative (+ 2**-40){times}; the pair x = "
                                       f"{show(decided[0].x)!r}, x' = {show(decided[0].x_prime)!r}", **common)
    return out


RDP_ORDERS = (Fraction(3, 2), Fraction(2), Fraction(10))  # the orders privacy.rdp decides (integers: exactly)


def rdp_findings(spec: MeasurementSpec, params: dict, worst_at: Callable[[Fraction, int], Any]) -> dict[str, Finding]:
    """``privacy.rdp``: the spec's claimed RDP curve ε̂(α) >= the exact worst Rényi divergence D_α at every order of
    :data:`RDP_ORDERS`; ``worst_at(α, prec)`` encloses the worst D_α (a :class:`vetdp.engine.structure.RenyiWorst`,
    over the enumerated laws or a product structure). The witness is the order and pair of the first violation."""
    from vetdp.engine.structure import decide_renyi_claim

    if spec.rdp_curve is None:
        return {}
    curve = spec.rdp_curve(params)
    worst_slack: tuple[float, Fraction, float] | None = None
    for alpha in RDP_ORDERS:
        claim = curve(float(alpha))
        cmp, worst = decide_renyi_claim(worst_at, alpha, claim)
        lo, hi = (None, None) if cmp.truth_lo is None else (float(cmp.truth_lo), float(cmp.truth_hi))
        witness = {"alpha": float(alpha), "claimed": claim, "true_lo": lo, "true_hi": hi,
                   "x": show(worst.x), "x_prime": show(worst.x_prime)}
        if cmp.verdict is Verdict.UNSOUND:
            truth = "inf" if hi is None else "> " + apart(claim, cmp.truth_lo)[1]
            return {"privacy.rdp": Finding(False, f"the claimed RDP ε̂({float(alpha):g}) = {apart(claim, 0)[0]} is "
                                           f"below the exact worst D_α {truth} (pair {show(worst.x)!r}, "
                                           f"{show(worst.x_prime)!r})", claimed=claim, true=hi, witness=witness)}
        if cmp.verdict is Verdict.UNDECIDED:
            return {"privacy.rdp": Finding(False, f"undecided: ε̂({float(alpha):g}) = {claim!r} lies in the exact "
                                           f"worst D_α's enclosure [{lo!r}, {hi!r}]", undecided=True,
                                           witness=witness)}
        slack = claim - hi
        if worst_slack is None or slack < worst_slack[0]:
            worst_slack = (slack, alpha, hi)
    assert worst_slack is not None
    slack, alpha, hi = worst_slack
    orders = ", ".join(f"{float(a):g}" for a in RDP_ORDERS)
    return {"privacy.rdp": Finding(True, f"claimed RDP curve >= the exact worst Rényi divergence at α = {orders} "
                                   f"(smallest slack {slack:.3g} at α = {float(alpha):g})",
                                   claimed=curve(float(alpha)), true=hi, slack=slack)}


def pld_findings(spec: MeasurementSpec, m: Any, params: dict,
                 worst_at: Callable[[Fraction], Callable[[int], tuple[Fraction, Fraction]]]) -> dict[str, Finding]:
    """``privacy.pld``: the spec's claimed δ̂(ε) >= the exact worst δ(ε) = max Σ_y max(0, P − e^ε Q) of the code at
    ε = 0, map(1)/4 and map(1)/2; ``worst_at(ε)`` encloses it (over the enumerated laws or a product structure).
    Skipped when map(1) is not a finite positive float (privacy.sound reports that)."""
    if spec.delta_curve is None:
        return {}
    claim_eps, bad = _claim_of(m, 1)
    if bad is not None or not 0 < claim_eps < math.inf:
        return {"privacy.pld": Finding(True, "not checked: map(1) is not a finite positive ε", skipped=True)}
    curve = spec.delta_curve(params)
    worst_slack: tuple[float, float] | None = None
    for eps in (0.0, claim_eps / 4, claim_eps / 2):
        claim = curve(eps)
        cmp = compare_claim(claim, worst_at(Fraction(eps)))
        witness = {"epsilon": eps, "claimed_delta": claim, "true_lo": float(cmp.truth_lo),
                   "true_hi": float(cmp.truth_hi)}
        if cmp.verdict is Verdict.UNSOUND:
            shown_claim, shown_truth = apart(claim, cmp.truth_lo)
            return {"privacy.pld": Finding(False, f"the claimed δ̂({eps!r}) = {shown_claim} is below the exact worst "
                                           f"δ >= {shown_truth}", claimed=claim, true=float(cmp.truth_lo),
                                           witness=witness)}
        if cmp.verdict is Verdict.UNDECIDED:
            return {"privacy.pld": Finding(False, f"undecided: δ̂({eps!r}) = {claim!r} lies in the exact worst δ's "
                                           f"enclosure [{float(cmp.truth_lo)!r}, {float(cmp.truth_hi)!r}]",
                                           undecided=True, witness=witness)}
        slack = claim - float(cmp.truth_hi)
        if worst_slack is None or slack < worst_slack[0]:
            worst_slack = (slack, eps)
    assert worst_slack is not None
    return {"privacy.pld": Finding(True, f"claimed δ̂(ε) >= the exact worst δ(ε) at ε = 0, map(1)/4, map(1)/2 "
                                   f"(smallest slack {worst_slack[0]:.3g} at ε = {worst_slack[1]:.6g})",
                                   slack=worst_slack[0])}


def dominance_findings(spec: MeasurementSpec, params: dict, code_pairs: Callable[[], list]) -> dict[str, Finding]:
    """``privacy.dominated``: every pair of the code's neighbouring laws (``code_pairs()``: (pld, x, x') each, over
    the enumerated laws or a product structure's dominating classes) is a garbling of the spec's accountant pair,
    decided exactly at every kink of the hockey-stick curves (:mod:`vetdp.engine.dominance`). Passing bounds the
    code's whole RDP curve, zCDP ρ, δ(ε) at every ε and every composition by the accountant's."""
    from vetdp.arith.rounding import float_repr, ln_bracket, nearest_float_or_inf
    from vetdp.engine.dominance import decide_domination, pair_enclosure

    if spec.accountant_pair is None:
        return {}
    pair = spec.accountant_pair(params)
    if pair is None:
        return {"privacy.dominated": Finding(True, "not checked: the spec states no accountant pair for these "
                                             "parameters", skipped=True)}
    pair_at = pair_enclosure(pair)
    verdict = decide_domination(code_pairs(), pair_at)
    if verdict.holds:
        return {"privacy.dominated": Finding(
            True, "every pair of neighbouring inputs is a garbling of the accountant's worst pair (hockey-stick "
            f"curves compared exactly at {verdict.points} kinks): every RDP order, zCDP ρ, δ(ε) and composition the "
            "accountant computes from that pair bounds the code's")}
    if verdict.holds is None:
        return {"privacy.dominated": Finding(
            False, f"undecided: the code's pairs lie between the rational enclosures of the accountant's pair at "
            f"{verdict.prec} bits", undecided=True)}
    e, (x, xp) = verdict.excess, verdict.witness
    reverse = 0 < e.threshold < 1  # report e^ε >= 1: the same excess, the two inputs (and the pair's laws) swapped
    if reverse:
        e, x, xp = e.mirrored(), xp, x
    eps = -math.inf if e.threshold == 0 else float(ln_bracket(e.threshold, 80)[1])  # for the message
    # the threshold e^ε is a likelihood ratio of the accountant's pair: beyond the float range at subnormal flips
    # (((1 − q)/q)^2 ~ 2^2148 at q = 2^-1074): then it is reported as a power of two, and exactly as ε = ln of it
    threshold = nearest_float_or_inf(e.threshold)
    code_delta, pair_delta = nearest_float_or_inf(e.code_delta), nearest_float_or_inf(e.bound_delta)
    witness = {"epsilon": eps, "threshold": threshold if math.isfinite(threshold) else float_repr(e.threshold),
               "code_delta": code_delta, "pair_delta": pair_delta, "x": show(x), "x_prime": show(xp)}
    return {"privacy.dominated": Finding(
        False, f"the accountant's worst pair does not dominate the code's pair ({show(x)!r}, {show(xp)!r}): at "
        f"ε = {eps!r} the code's δ(ε) = {apart(e.code_delta, e.bound_delta)[0]} exceeds the pair's"
        f"{' (its laws swapped)' if reverse else ''} {apart(e.code_delta, e.bound_delta)[1]}, so curves and "
        "compositions computed "
        "from that pair under-report the code's loss",
        claimed=pair_delta, true=code_delta, witness=witness)}


def _largest_distance(spec: MeasurementSpec, params: dict, keys: list, worst: Any) -> tuple[int, dict | None]:
    """(D, the distance of every ordered pair of distinct inputs) with D the largest distance between two of
    ``keys`` (the loss is constant from D on); under the discrete metric, a neighbour relation or a decided
    ``worst`` pair, D = 1 and no table."""
    if worst is not None or spec.distance is None:
        return 1, None
    apart = {(x, xp): spec.distance(params, x, xp) for x in keys for xp in keys if x != xp}
    return max(apart.values(), default=0), apart


def _pairs_at(spec: MeasurementSpec, params: dict, keys: list, apart: dict | None, d: int) -> list | None:
    """The ordered pairs of distinct inputs at distance <= d (None: all of them), from the table ``apart`` when
    there is one; beyond distance 1, a neighbour relation without a distance gives its neighbours (a lower
    bound of the loss there, the only one it defines)."""
    if apart is not None:
        return [pair for pair, dd in apart.items() if dd <= d]
    if spec.neighbours is not None and spec.distance is None and d >= 1:
        return spec.neighbours(params, keys)
    return pairs_within(spec, params, keys, d)


def _map_survey(spec: MeasurementSpec, m: Any, top: int) -> Any:
    """The map over every d_in (:func:`vetdp.engine.distances.survey_map`): evaluated through ``m.map``, traced
    through it too (a vetdp Measurement hands the traced d_in to its privacy map unchanged)."""
    from vetdp.engine.distances import survey_map

    return survey_map(m.map, m.map, max(top, spec.max_d_in))


def _refusal_note(refused: list[int], universal: bool) -> str:
    if not refused:
        return ""
    if universal:
        return f"refused (raises ValueError/TypeError) where the regions say so, first at d = {min(refused)}"
    return f"refused (raises ValueError/TypeError) at {len(refused)} evaluated d_in, first at d = {min(refused)}"


def distance_findings(spec: MeasurementSpec, m: Any, dists: dict, params: dict,
                      worst: Any = None) -> dict[str, Finding]:
    """``privacy.distance`` (map(d) sound at every d_in other than ``spec.d_in``, or refused for d >= 2 by raising
    ValueError/TypeError) and ``privacy.monotone`` (map non-decreasing over the defined d), at every d_in the map
    is evaluated on and, where its trace allows, at every d_in >= 0 (:mod:`vetdp.engine.distances`; the message
    says which). The truth at d is the exact loss over pairs at distance <= min(d, D), D the largest distance
    between two inputs. With ``worst`` (the decided worst case over every pair of distinct inputs, under the
    discrete metric), every d >= 1 is judged against it and d = 0 against the loss 0."""
    keys = list(dists)
    top, apart = _largest_distance(spec, params, keys, worst)
    survey = _map_survey(spec, m, top)
    claims: dict[int, float] = {}
    refused: list[int] = []
    decided: dict[tuple[int, float], Finding] = {}  # (min(d, D), claim) -> its finding: one comparison each
    sound_from: dict[int, float] = {}  # min(d, D) -> the smallest claim decided sound there
    cache: dict = {}  # per-pair worst ratios, shared by every d
    for d, claim in sorted(survey.points.items()):
        if isinstance(claim, (ValueError, TypeError)) and d >= 2:
            refused.append(d)
            continue
        if isinstance(claim, BaseException):
            only = "; only d_in >= 2 may be refused" if isinstance(claim, (ValueError, TypeError)) else ""
            return _both(Finding(False, f"map({d}) raised {type(claim).__name__}: {claim}{only}",
                                 witness={"d_in": d}))
        if isinstance(claim, bool) or not isinstance(claim, (int, float)) or not math.isfinite(claim):
            return _both(Finding(False, f"map({d}) returned {claim!r}, not a finite float", witness={"d_in": d}))
        claims[d] = float(claim)
        if d == spec.d_in:  # privacy.sound decides d_in itself
            continue
        near = min(d, top)
        key = (near, float(claim))
        floor = sound_from.get(near)
        if floor is not None and float(claim) >= floor:
            continue  # at least a claim already decided sound against the same loss: sound too
        if key not in decided:
            if worst is not None:
                decided[key] = _loss_finding(float(claim), d, dists, [] if d == 0 else None, worst=worst)[0]
            else:
                decided[key] = _loss_finding(float(claim), d, dists, _pairs_at(spec, params, keys, apart, near),
                                             cache)[0]
            found = decided[key]
            if found.ok and (floor is None or float(claim) < floor):
                sound_from[near] = float(claim)
    findings = list(decided.values())
    note = "; ".join(part for part in (survey.how, _refusal_note(refused, survey.universal)) if part)
    failing = [f for f in findings if not f.ok]

    def slack(f: Finding) -> float:
        return -math.inf if f.slack is None else f.slack

    if failing:
        distance = min(failing, key=lambda f: (f.undecided, (f.witness or {}).get("d_in", 0)))  # the first d
        distance = dataclasses.replace(distance, message=f"{distance.message} ({survey.how})")
    elif findings:  # the row shows the least slack at a distance >= 1 (at d = 0 the loss is 0, known in advance)
        least = min([f for f in findings if (f.witness or {}).get("d_in", 0)] or findings, key=slack)
        d = (least.witness or {}).get("d_in", 0)
        distance = dataclasses.replace(least, message=f"map(d) >= the exact loss at every evaluated d_in other than "
                                       f"{spec.d_in} (least slack at d = {d}: map({d}) = {least.claimed!r} against the "
                                       f"loss {least.true!r}); {note}")
    else:
        distance = Finding(True, f"no d_in other than {spec.d_in} is defined; {note}")
    return {"privacy.distance": distance, "privacy.monotone": monotone_finding(claims, survey.how)}


def monotone_finding(claims: dict[int, float], how: str = "") -> Finding:
    """``privacy.monotone``: the map's values at the evaluated d_in never decrease as d_in grows (``how``: which
    d_in were evaluated, and whether they decide every d_in)."""
    ds = sorted(claims)
    top = None  # the d_in with the largest value so far
    for d in ds:
        if top is not None and claims[d] < claims[top]:
            a, b = top, d
            return Finding(False, f"map({b}) = {claims[b]!r} < map({a}) = {claims[a]!r}: the map must not decrease "
                           "as d_in grows", claimed=claims[b], true=claims[a], slack=claims[b] - claims[a],
                           witness={"d_in": a, "d_in'": b, f"map({a})": claims[a], f"map({b})": claims[b]})
        if top is None or claims[d] > claims[top]:
            top = d
    where = how or f"d = {ds}"
    return Finding(True, f"map non-decreasing over the defined d_in; {where}" if ds else "no d_in is defined")


def _both(f: Finding) -> dict[str, Finding]:
    return {"privacy.distance": f, "privacy.monotone": f}


def reference_laws(spec: MeasurementSpec, params: dict, inputs: list, budget: int) -> tuple[dict, str]:
    """The exact law of every input (frozen input -> {frozen output: Fraction}) and where it came from:
    the spec's stated law (checked to be a distribution), else the enumerated law of vetdp's implementation."""
    if spec.law is not None:
        laws = {}
        for x in inputs:
            dist = {freeze(y): Fraction(p) for y, p in spec.law(params, x).items() if p != 0}
            total = sum(dist.values(), Fraction(0))
            if total != 1 or any(p < 0 for p in dist.values()):
                raise ValueError(f"the spec's law for x={x!r} is not a distribution: probabilities sum to {total}")
            laws[freeze(x)] = dist
        return laws, "the spec's law"
    reference = spec.build(spec.load_constructor(), params)
    return ({freeze(x): output_distribution(reference, x, budget=budget) for x in inputs},
            f"the law of {spec.impl_ref}")


def law_finding(dists: dict[Any, dict], law: Callable[[Any], dict], source: str) -> Finding:
    """``function.law``: every input's exact output distribution equals the reference ``law(x)``.

    ``dists`` maps each (frozen) input to its exact distribution; ``source`` says where the law
    comes from (the spec, or vetdp's implementation). The witness is the (x, y) with the largest
    difference, with both probabilities.
    """
    worst: tuple[Fraction, Any, Any, Fraction, Fraction] | None = None
    for x, dist in dists.items():
        expected = {freeze(y): Fraction(p) for y, p in law(x).items() if p != 0}
        for y in set(dist) | set(expected):
            got, want = dist.get(y, Fraction(0)), expected.get(y, Fraction(0))
            if got != want and (worst is None or abs(got - want) > worst[0]):
                worst = (abs(got - want), x, y, got, want)
    if worst is None:
        return Finding(True, f"the exact output distribution equals {source} on all {len(dists)} inputs")
    _, x, y, got, want = worst
    return Finding(False, f"the output distribution differs from {source}: P[M({show(x)!r}) = {show(y)!r}] is "
                   f"{_rational(got, want)}, the law says {_rational(want, got)}",
                   witness={"x": show(x), "y": show(y), "P[M(x)=y]": exact_text(got), "law P[y|x]": exact_text(want)})


def data_independent_errors(dists: dict) -> Finding:
    """Every input raises the same errors with the same probabilities."""
    raised = {x: {y: p for y, p in d.items() if isinstance(y, Raised)} for x, d in dists.items()}
    reference_x, reference = next(iter(raised.items()))
    for x, r in raised.items():
        if r != reference:
            def errors(found: dict) -> dict:
                return {str(k): str(v) for k, v in found.items()}

            return Finding(False, f"inputs raise different errors (or with different probabilities): M("
                           f"{show(reference_x)!r}) raises {errors(reference) or 'nothing'}, M({show(x)!r}) raises "
                           f"{errors(r) or 'nothing'}",
                           witness={"x": show(reference_x), "errors(x)": errors(reference),
                                    "x_prime": show(x), "errors(x')": errors(r)})
    return Finding(True, "no input-dependent errors" if not reference else f"same errors on every input: {reference}")


def rejects_outside(spec: MeasurementSpec, m: Any, params: dict) -> Finding:
    """Every out-of-domain input raises ValueError/TypeError before any random choice."""
    for x in spec.outside(params):
        source = BranchingSource()
        try:
            with use_source(source):
                y = m(x)
        except (ValueError, TypeError):
            if source.trail:
                return Finding(False, f"randomness drawn before rejecting the out-of-domain input {x!r} "
                               f"({len(source.trail)} random choices)",
                               witness={"x": repr(x), "choices": len(source.trail)})
            continue
        except Exception as e:  # noqa: BLE001
            return Finding(False, f"the out-of-domain input {x!r} raised {type(e).__name__}, not "
                           f"ValueError/TypeError: {e}", witness={"x": repr(x)})
        return Finding(False, f"the out-of-domain input {x!r} was accepted (output {y!r})",
                       witness={"x": repr(x), "output": repr(y)})
    return Finding(True, "every out-of-domain input rejected before randomness")


STATE_KEPT = "state kept between calls"  # how state_kept_finding's message starts


def state_kept_finding(x: Any, e: ReplayMismatch) -> Finding:
    """The finding for code whose paths did not add up when enumerating ``M(x)`` (:class:`ReplayMismatch`)."""
    if e.why:
        return Finding(False, f"{STATE_KEPT}: {e.why.replace('M(x)', f'M({show(x)!r})')}, so the output is not a "
                       "function of the input and the primitives' choices: a memo, a call counter or other state that "
                       "outlives a call", witness={"x": show(x), "replay": e.why})
    return Finding(False, f"{STATE_KEPT}: replaying the same choices gave other paths (enumerating "
                   f"M({show(x)!r}), the probabilities of {e.paths} paths sum to {e.total}, not 1), so the output "
                   "is not a function of the input and the primitives' choices: a memo, a call counter or other "
                   "state that outlives a call", witness={"x": show(x), "sum of path probabilities": str(e.total)})


def deterministic_given_choices(m: Any, inputs: list, laws: dict, budgets: dict) -> Finding:
    """A second enumeration of the first inputs agrees with the first (a necessary condition only).

    Laws known up to a residual agree when every output's two enclosures overlap. Paths that do not add up on the
    second enumeration (state kept between calls) fail with :func:`state_kept_finding`. ``budgets``: the keyword
    arguments of :func:`enumerate_law` that bound its work.
    """
    for x in inputs[:3]:
        try:
            again = enumerate_law(m, x, **budgets)
        except ReplayMismatch as e:
            return state_kept_finding(x, e)
        first = laws[freeze(x)]
        if first.complete and again.complete:
            same = first.dist == again.dist
        else:
            same = all(max(first.bounds(y)[0], again.bounds(y)[0]) <= min(first.bounds(y)[1], again.bounds(y)[1])
                       for y in set(first.dist) | set(again.dist))
        if not same:
            return Finding(False, f"the function's output is not determined by the primitives' choices: enumerating "
                           f"M({show(x)!r}) twice gave two laws, so it draws randomness elsewhere and exact "
                           "enumeration does not apply", witness={"x": show(x)})
    return Finding(True, "all randomness flows through vetdp's primitives")


def cryptographic_finding(sources: list[str], unexplained: bool = False) -> Finding:
    """``randomness.cryptographic``: every source of randomness the code drew from (``sources``, the labels of
    :func:`vetdp.engine.foreign.watch_foreign_randomness`; none: vetdp's primitives only, which read ``os.urandom``)
    is the operating system's CSPRNG. A non-cryptographic generator fails with its name, whatever its
    frequencies; ``unexplained`` (the output is not determined by the primitives' choices, yet no known source was
    seen: a clock, another thread, compiled code) leaves it undecided."""
    from vetdp.engine.foreign import non_cryptographic

    weak = non_cryptographic(sources)
    if weak:
        return Finding(False, "draws from a non-cryptographic generator: " + ", ".join(weak) + "; its outputs are "
                       "predictable from its seed or from earlier outputs (Mersenne Twister, PCG64), whatever their "
                       "frequencies: draw through vetdp's primitives (os.urandom) instead", witness={"sources": weak})
    if sources:
        return Finding(True, "draws from the operating system's CSPRNG only (" + ", ".join(sources) + "); its law is "
                       "judged by the audit (audit.distribution)")
    if unexplained:
        return Finding(False, "undecided: the output is not determined by vetdp's primitives' choices, yet no known "
                       "source of randomness was seen (a clock, another thread, compiled code): whether it is "
                       "cryptographic cannot be told", undecided=True)
    return Finding(True, "no source of randomness but vetdp's primitives (which read os.urandom) on any enumerated "
                   "path")


def law_with_residual(laws: dict, law: Callable[[Any], dict], source: str) -> Finding:
    """``function.law`` when some laws are known only up to a residual: a violation when an explored mass
    exceeds the law or falls short of it by more than the residual; else undecided (residual stated)."""
    worst_residual = Fraction(0)
    for x, known in laws.items():
        expected = {freeze(y): Fraction(p) for y, p in law(x).items() if p != 0}
        if known.stop_reason == "diverges":
            return Finding(False, f"M({show(x)!r}) runs forever with probability {known.residual} "
                           f"(~{float(known.residual):.3g})",
                           witness={"x": show(x), "P[no output]": str(known.residual)})
        for y in set(known.dist) | set(expected):
            lo, hi = known.bounds(y)
            want = expected.get(y, Fraction(0))
            if not lo <= want <= hi:
                return Finding(False, f"the output distribution differs from {source}: P[M({show(x)!r}) = "
                               f"{show(y)!r}] lies in [{float(lo):.6g}, {float(hi):.6g}] (unexplored mass "
                               f"{float(known.residual):.3g}), the law says {exact_text(want)}",
                               witness={"x": show(x), "y": show(y), "P[M(x)=y] >=": exact_text(lo),
                                        "P[M(x)=y] <=": exact_text(hi), "law P[y|x]": exact_text(want)})
        worst_residual = max(worst_residual, known.residual)
    if worst_residual == 0:
        return law_finding({x: k.dist for x, k in laws.items()}, law, source)
    return Finding(False, f"undecided: consistent with {source} up to the unexplored mass {worst_residual} "
                   f"(~{float(worst_residual):.3g})", undecided=True)


def _residual_verdict(claim: float, d: int, bracket: Any) -> Finding | None:
    """map(d) = ``claim`` against the loss's bracket (None: no pair this close, the loss is 0): the failing or
    undecided Finding, or None when sound."""
    if bracket is None:
        return None if claim >= 0 else Finding(False, f"map({d}) = {claim!r} is below the exact loss 0",
                                                claimed=claim, witness={"d_in": d})
    verdict = decide_bracket(claim, bracket)
    if verdict.verdict is Verdict.UNSOUND:
        return Finding(False, f"map({d}) = {claim!r}: {verdict.message}", claimed=claim, witness={"d_in": d})
    if verdict.verdict is Verdict.UNDECIDED:
        return Finding(False, f"map({d}): {verdict.message}", claimed=claim, undecided=True, witness={"d_in": d})
    return None


def privacy_with_residual(spec: MeasurementSpec, m: Any, laws: dict, params: dict) -> dict[str, Finding]:
    """``privacy.sound``, ``privacy.distance`` and ``privacy.monotone`` decided on brackets when some laws carry a
    residual, at every d_in :func:`distance_findings` evaluates."""
    keys = list(laws)
    top, apart = _largest_distance(spec, params, keys, None)
    brackets: dict[int, Any] = {}

    def bracket(near: int) -> Any:
        if near not in brackets:
            pairs = _pairs_at(spec, params, keys, apart, near)
            brackets[near] = None if pairs is not None and not pairs else max_divergence_bracket(laws, pairs)
        return brackets[near]

    out: dict[str, Finding] = {}
    claim, bad = _claim_of(m, spec.d_in)
    out["privacy.sound"] = bad or _residual_verdict(claim, spec.d_in, bracket(min(spec.d_in, top))) or Finding(
        True, "map >= the loss's upper bound")
    survey = _map_survey(spec, m, top)
    claims: dict[int, float] = {}
    refused: list[int] = []
    decided: dict[tuple[int, float], Finding | None] = {}
    distance: Finding | None = None
    for d, value in sorted(survey.points.items()):
        if isinstance(value, (ValueError, TypeError)) and d >= 2:
            refused.append(d)
            continue
        if isinstance(value, BaseException) or isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            said = f"raised {type(value).__name__}: {value}" if isinstance(value, BaseException) else \
                f"returned {value!r}, not a finite float"
            out["privacy.distance"] = out["privacy.monotone"] = Finding(False, f"map({d}) {said}",
                                                                        witness={"d_in": d})
            break
        claims[d] = float(value)
        if d == spec.d_in:
            continue
        key = (min(d, top), float(value))
        if key not in decided:
            decided[key] = _residual_verdict(float(value), d, bracket(key[0]))
        found = decided[key]
        if found is not None and (distance is None or (distance.undecided and not found.undecided)):
            distance = found
    else:
        note = "; ".join(part for part in (survey.how, _refusal_note(refused, survey.universal)) if part)
        out["privacy.distance"] = distance or Finding(True, f"map(d) >= the loss's upper bound at every evaluated "
                                                            f"d_in; {note}")
        out["privacy.monotone"] = monotone_finding(claims, survey.how)
    out["privacy.tight"] = Finding(True, "not applicable: the law is known only up to a residual", skipped=True)
    return out


# ------------------------------------------------------------------ the truth where the spec's preconditions refuse

def _display(x: Any) -> str:
    """An input as reports show it: bit vectors as 0/1 strings, anything else by its repr."""
    return repr(show(x)) if isinstance(x, tuple) else repr(x)


def spec_law_at(spec: MeasurementSpec, params: dict, x: Any) -> tuple[dict | None, str]:
    """The spec's law at ``(params, x)`` as {frozen output: Fraction}, checked to be a distribution, and its
    source; or None and why it is not defined there (no law, the law raises, or it is not a distribution).

    Used beyond the spec's preconditions (parameters it rejects, inputs outside its domain): where the
    mathematics is defined the law still gives the exact truth, whatever the spec's constructor accepts.
    """
    if spec.law is None:
        return None, "the spec states no law"
    try:
        dist = {freeze(y): Fraction(p) for y, p in spec.law(params, x).items() if p != 0}
    except Exception as e:  # noqa: BLE001 - a law undefined here is a reason, not an engine error
        return None, f"the spec's law is not defined at x={_display(x)}: {type(e).__name__}: {e}"
    total = sum(dist.values(), Fraction(0))
    if total != 1 or any(p < 0 for p in dist.values()):
        return None, f"the spec's law at x={_display(x)} is not a distribution (probabilities sum to {total})"
    return dist, "the spec's law"


def enumerated_laws(m: Any, inputs: list, budgets: dict) -> dict | None:
    """The exact enumerated law of every input of ``m`` (frozen input -> {frozen output: Fraction}), or None when
    some law is not complete or ``m`` draws randomness outside vetdp's primitives (enumeration does not apply).
    ``budgets``: the keyword arguments of :func:`enumerate_law` that bound its work."""
    laws: dict = {}
    try:
        with watch_foreign_randomness(m) as use:
            for x in inputs:
                law = enumerate_law(m, x, **budgets)
                if not law.complete:
                    return None
                laws[freeze(x)] = law.dist
    except Exception:  # noqa: BLE001 - budget, state kept between calls, ...: no exact law from the code
        return None
    return None if use.sources else laws


def _claim_beyond(m: Any, d_in: int) -> tuple[float | None, Finding | None]:
    """map(d_in) as a finite float; or the Finding when it raises, is not a number, or is +inf (which bounds
    every loss, so that Finding passes)."""
    try:
        claim = m.map(d_in)
    except Exception as e:  # noqa: BLE001 - the map's failure is the finding
        return None, Finding(False, f"map({d_in}) raised {type(e).__name__}: {e}")
    if isinstance(claim, bool) or not isinstance(claim, (int, float)) or math.isnan(claim) or claim == -math.inf:
        return None, Finding(False, f"map({d_in}) returned {claim!r}, not a number >= 0")
    if claim == math.inf:
        return None, Finding(True, f"map({d_in}) = inf, which bounds every loss")
    return float(claim), None


def beyond_preconditions_finding(spec: MeasurementSpec, m: Any, params: dict, dists: dict | None,
                                 source: str) -> Finding:
    """Whether map(d_in) of ``m``, built from ``params`` the spec rejects, bounds the exact loss there.

    ``dists`` (frozen input -> exact law over the spec's inputs at ``params``; None: no exact truth, ``source``
    says why) is the truth: the enumerated law of the code, or the spec's law where it is defined. The
    finding fails, with the witness pair and output, exactly when the map is below the exact loss (decided by
    interval arithmetic); it is skipped when no truth exists.
    """
    if dists is None:
        return Finding(True, f"no exact truth at these parameters: {source}", skipped=True)
    if len(dists) < 2:
        return Finding(True, "no exact truth at these parameters: fewer than two distinct inputs", skipped=True)
    claim, done = _claim_beyond(m, spec.d_in)
    if done is not None:
        return done
    try:
        pairs = pairs_within(spec, params, list(dists), spec.d_in)
    except Exception as e:  # noqa: BLE001
        return Finding(True, f"no neighbouring inputs at these parameters: {type(e).__name__}: {e}", skipped=True)
    found, _ = _loss_finding(claim, spec.d_in, dists, pairs)
    verdict = "unsound" if not found.ok and not found.undecided else "sound" if found.ok else "undecided"
    return dataclasses.replace(found, message=f"accepted although the spec rejects these parameters; {found.message} "
                               f"({verdict}; exact truth: {source})")


def _shown(x: Any) -> Any:
    """:func:`show`, with a tuple of 0/1 ints (an out-of-domain bit vector) also as a 0/1 string."""
    if isinstance(x, tuple) and x and all(type(b) is int and b in (0, 1) for b in x):
        return "".join(str(b) for b in x)
    return show(x)


def accepted_outside(spec: MeasurementSpec, m: Any, params: dict) -> list:
    """The spec's out-of-domain inputs at ``params`` that ``m`` accepts (returns an output for, on one call)."""
    found = []
    for x in spec.outside(params):
        try:
            with use_source(BranchingSource()):
                m(x)
        except Exception:  # noqa: BLE001 - any error is a rejection here (domain.rejects_outside judges its type)
            continue
        found.append(x)
    return found


def outside_findings(spec: MeasurementSpec, m: Any, params: dict, accepted: list, dists: dict,
                     law_of: Callable[[Any], tuple[dict | None, str]]) -> dict[str, Finding]:
    """``privacy.outside[<kind>]``: for each kind of accepted out-of-domain input (``spec.outside_kind``; one
    kind "input" without it), whether map(d_in) bounds the exact loss between such an input and the in-domain
    inputs ``dists`` (frozen input -> exact law). ``law_of(x)`` is the exact law of an accepted input and its
    source, or None and why there is none. Under the discrete distance an accepted input neighbours every member; with a
    ``spec.distance`` only the pairs it measures within d_in count. Kinds are reported separately, so one kind
    of defect never masks another; an output possible under one input and impossible under the other (e.g.
    outputs of another length) is an infinite loss.
    """
    groups: dict[str, list[tuple[Any, str]]] = {}
    for x in accepted:
        kind, what = spec.outside_kind(params, x) if spec.outside_kind is not None else ("input", "out of the domain")
        groups.setdefault(kind, []).append((x, what))
    out: dict[str, Finding] = {}
    claim, done = _claim_beyond(m, spec.d_in)
    for kind, members in groups.items():
        name = f"privacy.outside[{kind}]"
        laws, described, reasons, sources = dict(dists), {}, [], set()
        for x, what in members:
            key = freeze(x)
            if key in dists:
                reasons.append(f"x={show(key)!r} equals an in-domain input")
                continue
            law, why = law_of(x)
            if law is None:
                reasons.append(why)
                continue
            laws[key], described[key] = law, (x, what)
            sources.add(why)
        pairs: list[tuple[Any, Any]] = []
        for key, (x, _) in described.items():
            for inside in dists:
                try:
                    near = spec.distance is None or spec.distance(params, x, inside) <= spec.d_in
                except Exception:  # noqa: BLE001 - the metric does not measure this pair
                    near = False
                if near:
                    pairs += [(key, inside), (inside, key)]
        if not pairs:
            why = "; ".join(sorted(set(reasons))) or "no in-domain input neighbours them"
            out[name] = Finding(True, f"{len(members)} accepted out-of-domain input(s) of kind {kind!r}; no exact "
                                f"loss: {why}", skipped=True)
            continue
        if done is not None:
            out[name] = done
            continue
        found, decided = _loss_finding(claim, spec.d_in, laws, pairs)
        md = decided[0]
        witness = {**(found.witness or {}), "x": _shown(md.x), "x_prime": _shown(md.x_prime)}
        outer = md.x if md.x in described else md.x_prime
        what = described[outer][1]
        witness.update({"outside": _shown(outer), "kind": kind, "why outside": what, "accepted": len(members)})
        out[name] = dataclasses.replace(found, witness=witness, message=f"the out-of-domain input {_shown(outer)!r} "
                                        f"({what}) is accepted; {found.message} (exact truth at it: "
                                        f"{', '.join(sorted(sources))})")
    return out


class _RepeatedByte(RandomSource):
    """Every byte the same value: 0x00 drives variable-time samplers to their longest reads, 0x80 to their
    shortest (both give value 0 in rejection samplers, so nothing loops)."""

    def __init__(self, byte: int):
        self.byte = byte

    def random_bytes(self, n: int) -> bytes:
        return bytes([self.byte]) * n


def constant_bytes(spec: MeasurementSpec, m: Any, params: dict, inputs: list, seed: int) -> Finding:
    """With the constant-time parameter set, the bytes read never depend on the input or the outcome.

    Each input runs on three seeded byte streams and on the two extreme streams (all 0x00, all 0x80),
    which make a variable-time sampler read its most and its fewest bytes.
    """
    if not params.get(spec.constant_time_param):
        return Finding(True, "no constant-time promise for these parameters", skipped=True)
    counts: dict[int, tuple[Any, str, Any]] = {}  # bytes read -> the first (input, byte stream, output) reading them
    for i, x in enumerate(inputs):
        sources = [(f"seeded stream {seed}/{i}/{rep}", SeededSource(f"{seed}/{i}/{rep}")) for rep in range(3)]
        sources += [("all-0x00 stream", _RepeatedByte(0x00)), ("all-0x80 stream", _RepeatedByte(0x80))]
        for label, inner in sources:
            rec = RecordingSource(inner)
            with use_source(rec):
                y = m(x)
            counts.setdefault(rec.bytes_read, (x, label, y))
    if len(counts) > 1:
        (n1, (x1, s1, y1)), (n2, (x2, s2, y2)) = sorted(counts.items())[:2]
        on = "the random outcome" if freeze(x1) == freeze(x2) else "the input"
        return Finding(False, f"bytes read depend on {on}: M({show(x1)!r}) read {n1} bytes on the {s1} and output "
                       f"{show(y1)!r}, but M({show(x2)!r}) read {n2} bytes on the {s2} and output {show(y2)!r}",
                       witness={f"{n} bytes": f"M({show(x)!r}) = {show(y)!r} on the {label}"
                                for n, (x, label, y) in counts.items()})
    return Finding(True, f"{next(iter(counts))} bytes read for every input and outcome (seeded and extreme "
                   "byte streams)")
