"""Vet analysis code a user brings against vetdp's certified one-filter and many-filter values (seed 004).

Three kinds of user function, each called with plain Python ints and floats:

* ``ratio(y_d, y_x, p, m) -> R(y_x | y_d) = f(y_x | y_d + 1) / f(y_x | y_d)`` — the seed's ratio function
  (``ratio_of_hypergeometric_mgf`` times ``p/q``), for 0 <= y_d <= m − 1, 0 <= y_x <= m;
* ``pmf(y_x, y_d, p, m) -> f(y_x | y_d) = Pr[Bin(y_d, q) + Bin(m − y_d, p) = y_x]`` — the probability of
  ``y_x`` output ones given ``y_d`` input ones (arguments in the order of the seed's ``f(y_x | y_d)``);
* ``epsilon(k, m, p, delta) -> ε`` — the many-filter ε(δ) of k filters of m bits (Part III).

Ratios and pmfs are judged against :mod:`vetdp.buffling.certified` enclosures ``[lo, hi]`` of the truth: a value
fails when it lies outside ``[lo·(1 − tol), hi·(1 + tol)]`` (decided on exact rationals), and a raised
exception, a NaN, an infinity or a non-number is a failure of its own. A pmf point whose true value is below
2^−1022 (not representable as a normal float64) is skipped and counted. ε is judged against the certified
bracket of :mod:`vetdp.buffling.many_bf` / :mod:`vetdp.buffling.bounds` the same way; that bracket can be wide, so a
pass there means "not refuted", and the report gives the bracket.

The grid covers the whole (y_d, y_x) square at each m: its corners and edges, the diagonal, the bulk
(the mean of y_x and ±1σ) and the tails (±3σ, ±10σ, ±30σ) where ratios are most extreme.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

from vetdp.buffling.certified import Enclosure, pmf_enclosure, ratio_enclosure
from vetdp.engine.results import CheckResult, Status

__all__ = ["SEED_SCALES", "QUICK_SCALES", "DEFAULT_TOLERANCE", "DEFAULT_FLIP_PROBS", "QUICK_FLIP_PROBS",
           "DEFAULT_N_PUBS", "PointVerdict", "y_x_values", "ratio_points", "pmf_points", "as_fraction", "judge",
           "vet_ratio", "vet_pmf", "vet_epsilon", "SPEC"]

SPEC = "buffling.vet"
SEED_SCALES = (10, 100, 1000, 10**4, 10**5, 10**6)  # the seed's m, from 10 to 10⁶
QUICK_SCALES = (10, 1000, 10**5)
DEFAULT_FLIP_PROBS = (0.1, 0.3)
QUICK_FLIP_PROBS = (0.1,)
DEFAULT_N_PUBS = (1, 3, 6)
DEFAULT_TOLERANCE = 1e-9
_FLOAT_NORMAL_MIN = Fraction(1, 1 << 1022)
_SIGMAS = (1, 3, 10, 30)


def _y_d_values(m: int, top: int, quick: bool) -> list[int]:
    """Input counts 0..top spread over the axis: both ends, next to both ends, a tenth in, the middle."""
    if quick:
        wanted = [0, top // 2, top]
    else:
        wanted = [0, 1, top // 10, top // 2, top - top // 10, top - 1, top]
    return sorted({y for y in wanted if 0 <= y <= top})


def y_x_values(m: int, y_d: int, p: float, quick: bool) -> list[tuple[int, str]]:
    """(y_x, region) along one row of the square: edges, diagonal, bulk and tails of y_x given y_d."""
    q = 1 - p
    mean = y_d * q + (m - y_d) * p
    sd = math.sqrt(m * p * q)
    out: list[tuple[int, str]] = [(0, "edge y_x=0"), (m, "edge y_x=m"), (y_d, "diagonal"),
                                  (round(mean), "bulk (mean)")]
    if not quick:
        out += [(1, "edge y_x=1"), (m - 1, "edge y_x=m-1"), (y_d + 1, "diagonal+1")]
    for s in (_SIGMAS[1:3] if quick else _SIGMAS):
        label = "bulk" if s == 1 else "tail"
        out += [(math.floor(mean - s * sd), f"{label} mean-{s}σ"), (math.ceil(mean + s * sd), f"{label} mean+{s}σ")]
    return [(y, r) for y, r in out if 0 <= y <= m]


def _points(m: int, p: float, quick: bool, top: int) -> list[tuple[int, int, str]]:
    seen: dict[tuple[int, int], str] = {}
    for y_d in _y_d_values(m, top, quick):
        corner = "corner" if y_d in (0, top) else None
        for y_x, region in y_x_values(m, y_d, p, quick):
            label = f"corner (y_d={y_d}, y_x={y_x})" if corner and y_x in (0, m) else region
            seen.setdefault((y_d, y_x), label)
    return [(y_d, y_x, label) for (y_d, y_x), label in seen.items()]


def ratio_points(m: int, p: float, quick: bool = False) -> list[tuple[int, int, str]]:
    """(y_d, y_x, region) covering the square [0, m − 1] × [0, m] of the ratio function."""
    return _points(m, p, quick, m - 1)


def pmf_points(m: int, p: float, quick: bool = False) -> list[tuple[int, int, str]]:
    """(y_d, y_x, region) covering the square [0, m] × [0, m] of the pmf."""
    return _points(m, p, quick, m)


def as_fraction(value: Any) -> Fraction:
    """The exact rational value of a number a user function returned (int, float, Fraction, Decimal, mpf, NumPy
    scalar). TypeError for anything else; ValueError for NaN or an infinity (the message says which)."""
    if isinstance(value, bool):
        raise TypeError(f"returned a bool ({value!r}), not a number")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"returned {type(value).__name__} {value!r}, not a number")
    try:
        import mpmath

        if isinstance(value, mpmath.mpf):
            if not mpmath.isfinite(value):
                raise ValueError(f"returned {value}")
            man, exp = value.man_exp
            return Fraction(int(man)) * Fraction(2) ** int(exp)
    except ImportError:  # pragma: no cover - mpmath is a dependency
        pass
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"returned {type(value).__name__} {value!r}, not a number") from None
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"returned {x}")
    try:
        return Fraction(value)  # exact for Decimal and float subclasses
    except (TypeError, ValueError):
        return Fraction(x)


@dataclasses.dataclass(frozen=True)
class PointVerdict:
    """One grid point: the user's value, the certified truth, the relative error, and what is wrong (if anything)."""

    y_d: int
    y_x: int
    region: str
    value: float | None  # the returned value as a float (None when it was not a finite number)
    truth_lo: float
    truth_hi: float
    rel_error: float | None  # |value − mid| / mid of the enclosure; None when there is no finite value
    problem: str | None  # None: within tolerance

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def judge(returned: Any, truth: Enclosure, tol: Fraction) -> tuple[float | None, float | None, str | None]:
    """(value, relative error, problem) of one returned value against an enclosure of the truth.

    ``problem`` is None exactly when the value lies in [lo·(1 − tol), hi·(1 + tol)] (decided on exact rationals).
    """
    try:
        v = as_fraction(returned)
    except (TypeError, ValueError) as e:
        return None, None, str(e)
    mid = truth.mid
    rel = float(abs(v - mid) / mid)
    if v < truth.lo * (1 - tol):
        return float(v), rel, "below the certified value by more than the tolerance"
    if v > truth.hi * (1 + tol):
        return float(v), rel, "above the certified value by more than the tolerance"
    return float(v), rel, None


def _call(fn: Callable, args: tuple) -> tuple[Any, str | None]:
    """The user's answer, or what the code did instead (raised, called sys.exit): a finding at its point."""
    from vetdp.fence import outcome

    return outcome(fn, *args)


def _result(check: str, subject: str, verdicts: list[PointVerdict], skipped: int, tol: float, repro: str,
            seconds: float, what: str) -> CheckResult:
    if not verdicts:
        return CheckResult(SPEC, check, Status.ERROR, subject, message="no grid point was checked", repro=repro,
                           seconds=seconds)
    outside = [v for v in verdicts if v.problem is not None]
    finite = [v for v in verdicts if v.rel_error is not None]
    worst = max(finite, key=lambda v: v.rel_error) if finite else None
    worst_text = (f"worst relative error {worst.rel_error:.3g} at (y_d={worst.y_d}, y_x={worst.y_x}, {worst.region})"
                  if worst else "no finite value returned")
    skip_text = f"; {skipped} points skipped (true {what} below 2^-1022)" if skipped else ""
    if outside:
        first = outside[0]
        message = (f"{len(outside)} of {len(verdicts)} points outside tolerance {tol:g}; first at y_d={first.y_d}, "
                   f"y_x={first.y_x} ({first.region}): {first.problem}; {worst_text}{skip_text}")
    else:
        message = f"{len(verdicts)} points within tolerance {tol:g}; {worst_text}{skip_text}"
    witness = {"points": len(verdicts), "skipped": skipped, "tolerance": tol,
               "worst": worst.to_json() if worst else None, "outside": [v.to_json() for v in outside]}
    truth = None if worst is None else (worst.truth_lo + worst.truth_hi) / 2
    claimed = None if worst is None else worst.value
    slack = None if worst is None else claimed - truth
    return CheckResult(SPEC, check, Status.FAIL if outside else Status.PASS, subject, claimed=claimed, true=truth,
                       slack=slack, witness=witness, repro=repro, message=message, seconds=seconds)


def _vet_grid(fn: Callable, points: Iterable[tuple[int, int, str]], truth: Callable[[int, int], Enclosure],
              args: Callable[[int, int], tuple], tol: Fraction, skip_tiny: bool) -> tuple[list[PointVerdict], int]:
    verdicts, skipped = [], 0
    for y_d, y_x, region in points:
        enc = truth(y_d, y_x)
        if skip_tiny and enc.hi < _FLOAT_NORMAL_MIN:
            skipped += 1
            continue
        returned, err = _call(fn, args(y_d, y_x))
        value, rel, problem = (None, None, err) if err else judge(returned, enc, tol)
        verdicts.append(PointVerdict(y_d, y_x, region, value, float(enc.lo), float(enc.hi), rel, problem))
    return verdicts, skipped


def _repro(option: str, ref: str, m: int, p: float, tol: float, quick: bool, extra: str = "") -> str:
    return (f"vetdp buffling vet {option} {ref} --scales {m} --flip-prob {p!r} --tolerance {tol!r}{extra}"
            + (" --quick" if quick else ""))


def vet_ratio(fn: Callable, m: int, p: float, tol: float = DEFAULT_TOLERANCE, quick: bool = False,
              ref: str = "MODULE:ATTR") -> CheckResult:
    """Check ``fn(y_d, y_x, p, m)`` against certified R(y_x | y_d) over :func:`ratio_points`; FAIL names every
    point outside the tolerance (witness ``outside``) and the worst relative error."""
    t0 = time.perf_counter()
    verdicts, skipped = _vet_grid(fn, ratio_points(m, p, quick), lambda d, x: ratio_enclosure(d, x, p, m),
                                  lambda d, x: (d, x, p, m), Fraction(tol), skip_tiny=False)
    return _result("ratio", f"m={m} p={p!r}", verdicts, skipped, tol, _repro("--impl", ref, m, p, tol, quick),
                   time.perf_counter() - t0, "ratio")


def vet_pmf(fn: Callable, m: int, p: float, tol: float = DEFAULT_TOLERANCE, quick: bool = False,
            ref: str = "MODULE:ATTR") -> CheckResult:
    """Check ``fn(y_x, y_d, p, m)`` against certified f(y_x | y_d) over :func:`pmf_points` (points whose truth is
    below 2^−1022 are skipped and counted)."""
    t0 = time.perf_counter()
    verdicts, skipped = _vet_grid(fn, pmf_points(m, p, quick), lambda d, x: pmf_enclosure(x, d, p, m),
                                  lambda d, x: (x, d, p, m), Fraction(tol), skip_tiny=True)
    return _result("pmf", f"m={m} p={p!r}", verdicts, skipped, tol, _repro("--pmf", ref, m, p, tol, quick),
                   time.perf_counter() - t0, "pmf")


def vet_epsilon(fn: Callable, k: int, m: int, p: float, delta: float, tol: float = DEFAULT_TOLERANCE,
                kind: str = "hockey", ref: str = "MODULE:ATTR") -> CheckResult:
    """Check ``fn(k, m, p, delta)`` against the certified many-filter bracket of ε(δ): ``kind`` 'hockey' (the
    tight ε with both hockey-stick divergences <= δ) or 'quantile' (the seed's quantile rule, both losses)."""
    from vetdp.buffling.bounds import many_bf_epsilon
    from vetdp.buffling.many_bf import many_bf_distribution

    if kind not in ("hockey", "quantile"):
        raise ValueError(f"kind={kind!r} must be one of 'hockey', 'quantile'")
    t0 = time.perf_counter()
    e = many_bf_epsilon(many_bf_distribution(k, m, p), delta)
    lo, hi = (e.hockey_lower, e.hockey_upper) if kind == "hockey" else (e.quantile_lower, e.quantile_upper)
    subject = f"k={k} m={m} p={p!r} δ={delta!r}"
    repro = (f"vetdp buffling vet --epsilon {ref} --n-pub {k} --scales {m} --flip-prob {p!r} --delta {delta!r} "
             f"--epsilon-kind {kind} --tolerance {tol!r}")
    returned, err = _call(fn, (k, m, p, delta))
    bracket = Enclosure(Fraction(lo), Fraction(hi))
    if err:
        value, rel, problem = None, None, err
    elif bracket.lo == 0:  # ε = 0 exactly possible: judge absolutely at the bracket's ends
        try:
            v = as_fraction(returned)
            value, rel = float(v), None
            problem = None if -Fraction(tol) * bracket.hi <= v <= bracket.hi * (1 + Fraction(tol)) else \
                "outside the certified bracket"
        except (TypeError, ValueError) as ex:
            value, rel, problem = None, None, str(ex)
    else:
        value, rel, problem = judge(returned, bracket, Fraction(tol))
        if rel is not None:  # distance to the bracket, relative to its nearer end (0 inside)
            v = Fraction(value)
            rel = 0.0 if lo <= v <= hi else float(min(abs(v - bracket.lo), abs(v - bracket.hi)) / bracket.lo)
    width = f"bracket [{lo:.10g}, {hi:.10g}] (relative width {(hi - lo) / hi if hi else 0:.2g})"
    message = (f"ε={value!r} within the certified {kind} {width}: not refuted" if problem is None else
               f"ε: {problem} — certified {kind} {width}")
    return CheckResult(SPEC, f"epsilon.{kind}", Status.FAIL if problem else Status.PASS, subject, claimed=value,
                       true=(lo + hi) / 2, slack=None if value is None else value - (lo + hi) / 2,
                       witness={"bracket": [lo, hi], "distance_relative": rel, "problem": problem}, repro=repro,
                       message=message, seconds=time.perf_counter() - t0)
