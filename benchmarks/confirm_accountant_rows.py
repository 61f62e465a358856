"""Hand-check the violation and translation rows of a `vetdp vet accountant` report with mpmath, independently of
vetdp's exact PLDs (vetdp.accounting.pld, mixed_pld).

    vetdp vet accountant autodp --json out/autodp.json
    python benchmarks/confirm_accountant_rows.py out/autodp.json            # every violation and translation row
    python benchmarks/confirm_accountant_rows.py out/autodp.json --limit 20 --status violation

For each row the composition the question asks about and the one the library was handed (the adapter's
``given``) are rebuilt, and δ(ε) = Σ P(L)·(1 − e^{ε−L})₊ is summed directly at 40 digits: for each group of
i.i.d. steps (t-ary RR, log-ratio a, m steps) the probability of i "+a" and j "−a" steps is the multinomial
m!/(i! j! (m−i−j)!)·p^i·r^j·λ^(m−i−j) (p = e^a/(e^a+t−1), r = 1/(e^a+t−1), λ = (t−2)r), walked by term ratios
from its peak until terms fall below e^-80 of it. An ε-at-δ answer x is confirmed wrong when δ(x) > δ (the answer
admits more than the target), a δ-at-ε answer when it is below δ(ε). The script prints, per row, the hand value(s)
and whether they confirm the row's status; it exits 1 when a row is not confirmed.
"""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction

import mpmath

mpmath.mp.dps = 40
_CUT = 80  # nats below a group's peak term at which its walk stops (dropped mass < m^2·e^-80 relative)


def _binomial_walk(n: int, q, log_scale, floor, law: dict, shift: int) -> None:
    """Add e^log_scale·C(n, i)·q^i·(1−q)^(n−i) to law[2i − n + shift] for the i within e^-_CUT of the peak term (and
    above e^floor), walking term ratios (n − i)/(i + 1)·q/(1 − q) outward from the peak."""
    i0 = min(n, max(0, int(float(q) * (n + 1))))
    log_peak = (log_scale + mpmath.loggamma(n + 1) - mpmath.loggamma(i0 + 1) - mpmath.loggamma(n - i0 + 1)
                + (i0 * mpmath.log(q) if i0 else 0) + ((n - i0) * mpmath.log1p(-q) if n - i0 else 0))
    if log_peak < floor:
        return
    peak = mpmath.exp(log_peak)
    odds = q / (1 - q)
    stop = peak * mpmath.exp(-_CUT)
    law[2 * i0 - n + shift] = law.get(2 * i0 - n + shift, 0) + peak
    term, i = peak, i0
    while i < n:  # upward: term(i+1) = term(i)·(n − i)/(i + 1)·odds
        term = term * (n - i) / (i + 1) * odds
        i += 1
        if term < stop:
            break
        law[2 * i - n + shift] = law.get(2 * i - n + shift, 0) + term
    term, i = peak, i0
    while i > 0:  # downward: term(i−1) = term(i)·i/(n − i + 1)/odds
        term = term * i / (n - i + 1) / odds
        i -= 1
        if term < stop:
            break
        law[2 * i - n + shift] = law.get(2 * i - n + shift, 0) + term


_LAWS: dict = {}  # (t, a, m) -> law: a composition is asked of every entry point in both directions


def _group_law(t: int, a, m: int) -> dict[int, mpmath.mpf]:
    key = (t, mpmath.nstr(a, 40), m)
    if key not in _LAWS:
        if len(_LAWS) >= 8:  # the few laws of the composition at hand (rows are grouped by question below)
            del _LAWS[next(iter(_LAWS))]
        _LAWS[key] = _group_law_of(t, a, m)
    return _LAWS[key]


def _group_law_of(t: int, a, m: int) -> dict[int, mpmath.mpf]:
    """s -> P(net s "+a" steps among m): for t = 2 a binomial in the "+a" count; for t > 2 the number n of non-zero
    steps is binomial(m, p + r) and, given n, the "+a" count is binomial(n, p/(p + r))."""
    ea = mpmath.exp(a)
    p, r = ea / (ea + t - 1), 1 / (ea + t - 1)
    law: dict[int, mpmath.mpf] = {}
    if t == 2:
        _binomial_walk(m, p, mpmath.mpf(0), -mpmath.inf, law, 0)
        return law
    nz, q = p + r, p / (p + r)
    n0 = min(m, max(0, int(float(nz) * (m + 1))))

    def log_pn(n: int):
        return (mpmath.loggamma(m + 1) - mpmath.loggamma(n + 1) - mpmath.loggamma(m - n + 1)
                + (n * mpmath.log(nz) if n else 0) + ((m - n) * mpmath.log1p(-nz) if m - n else 0))

    top = log_pn(n0)
    for step in (1, -1):
        n = n0 if step == 1 else n0 - 1
        while 0 <= n <= m:
            lp = log_pn(n)
            if lp < top - _CUT:
                break
            _binomial_walk(n, q, lp, top - 2 * _CUT, law, 0)
            n += step
    return law


def hand_delta(groups: list[tuple[int, object, int]], eps: float) -> mpmath.mpf:
    """δ(ε) of the composition of ``groups`` = [(t, a as mpf, steps)], summed directly (see the module docstring)."""
    e = mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator
    joint: dict = {mpmath.mpf(0): mpmath.mpf(1)}  # total loss -> probability
    for t, a, m in groups:
        law = _group_law(t, a, m)
        nxt: dict = {}
        for loss, pr in joint.items():
            for s, ps in law.items():
                key = loss + s * a
                nxt[key] = nxt.get(key, 0) + pr * ps
        joint = nxt
    return mpmath.fsum(pr * -mpmath.expm1(e - loss) for loss, pr in joint.items() if loss > e)


def hand_epsilon(groups, delta: float, top: float) -> mpmath.mpf:
    """The smallest ε with δ(ε) <= delta, by bisection on hand_delta (to about 1e-25 relative)."""
    lo, hi = mpmath.mpf(0), mpmath.mpf(top)
    target = mpmath.mpf(delta)
    if hand_delta(groups, 0.0) <= target:
        return lo
    for _ in range(90):
        mid = (lo + hi) / 2
        if hand_delta(groups, float(mid)) > target:
            lo = mid
        else:
            hi = mid
    return hi


def _groups(parts) -> list[tuple[int, object, int]]:
    """(t, a, steps) per part: a = ln(ratio) exactly for a family from a probability, else ε/divisor."""
    out = []
    for family, count in parts:
        if family.ratio is not None:
            a = mpmath.log(mpmath.mpf(family.ratio.numerator) / family.ratio.denominator)
        else:
            a = mpmath.mpf(family.epsilon.numerator) / family.epsilon.denominator / family.divisor
        out.append((family.categories, a, count * family.coordinates))
    merged: dict = {}
    for t, a, m in out:  # equal steps merge (RAPPOR(ε) and RR(ε/2))
        key = (t, mpmath.nstr(a, 35))
        merged[key] = (t, a, merged.get(key, (t, a, 0))[2] + m)
    return list(merged.values())


def confirm(row: dict, suite) -> tuple[bool, str]:
    from vetdp.accounting.accountants import RREvent
    from vetdp.accounting.battery import parts_of

    events = tuple(RREvent(e["kind"], e["epsilon"], e["count"], categories=e["categories"], k=e["k"])
                   for e in row["question"]["events"])
    ep = next(e for e in suite.entry_points if e.name == row["entry_point"])
    asked = _groups(parts_of(events))
    handed = _groups(tuple(ep.given(e) for e in events)) if hasattr(ep, "given") else asked
    target, x = row["question"]["target"], row["answer"]
    # ε* by bisection where the answer is close to it (a large shortfall is shown by δ(answer) alone)
    small = sum(m for _, _, m in handed) <= 2000 and (row["shortfall"] or 0) < 1e-6
    out = []
    verdict = {}
    for name, groups in (("asked", asked), ("handed", handed)):
        if name == "handed" and row.get("given") is None:
            continue
        if row["direction"] == "epsilon":
            d = hand_delta(groups, x)
            wrong = d > target  # the answer admits more than δ
            text = f"{name}: δ(answer) = {mpmath.nstr(d, 17)} {'>' if wrong else '<='} δ = {target!r}"
            if small:
                top = float(sum(a * m for _, a, m in groups))
                text += f", ε* = {mpmath.nstr(hand_epsilon(groups, target, top), 20)}"
        else:
            d = hand_delta(groups, target)
            wrong = x < d
            text = f"{name}: δ(ε) = {mpmath.nstr(d, 20)} {'>' if wrong else '<='} answer {x!r}"
        verdict[name] = wrong
        out.append(text)
    if row["status"] == "violation":
        need = ["handed"] if row.get("given_kind") == "substitute" else list(verdict)
        ok = all(verdict[n] for n in need)
    else:  # translation: wrong for exactly one of the two
        ok = len(verdict) == 2 and verdict["asked"] != verdict["handed"]
    return ok, "; ".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report")
    parser.add_argument("--status", nargs="+", default=["violation", "translation"])
    parser.add_argument("--limit", type=int, default=None, help="at most this many rows per status")
    parser.add_argument("--entry-point", default=None, help="only rows of this entry point")
    args = parser.parse_args()
    from vetdp.accounting.accountants import load_accountant

    doc = json.loads(open(args.report, encoding="utf-8").read())
    suite = load_accountant(doc["library"])
    bad = 0
    for status in args.status:
        rows = [r for r in doc["rows"] if r["status"] == status
                and (args.entry_point is None or r["entry_point"] == args.entry_point)]
        rows.sort(key=lambda r: -(r["shortfall"] or 0))
        rows = rows[:args.limit]
        rows.sort(key=lambda r: r["question"]["id"])  # rows of one composition together: its laws are reused
        for r in rows:
            ok, text = confirm(r, suite)
            bad += not ok
            short = r["shortfall"]
            print(f"{'confirmed' if ok else 'NOT CONFIRMED'} {status} {r['entry_point']}: {r['question']['id']}: "
                  f"answer {r['answer']!r} (shortfall {short if short is None else f'{short:.3g}'}): {text}")
            sys.stdout.flush()
    print(f"{bad} row(s) not confirmed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
