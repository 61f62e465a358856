"""The clauses of a mechanism with public randomness, keyed encodings or member draws (:mod:`vetdp.engine.public`).

:func:`decide_public` is the runner's hook: None when the code uses none of the primitives of
:mod:`vetdp.sampling.public` (the ordinary enumeration applies), else the findings of ``function.law``,
``privacy.sound``, ``privacy.tight``, ``privacy.distance``, ``privacy.monotone``, ``errors.data_independent`` and
``randomness.through_primitives``, each privacy finding carrying the coverage argument it rests on.

**Keyed shape.** For public values s and inputs x, x', the report's law given s is the world law L_w at the
encodings' values w = (fn_i(key_i(s), x))_i. Every (s, x, x') therefore falls in a class (w, w') of world pairs;
the worst class's ratio bounds the loss for all of them (upper bound, every class decided exactly), and a public
value found by search that puts two examined inputs in a worst class makes the bound the exact loss.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from vetdp.engine.clauses import Finding, distance_findings, privacy_findings, show
from vetdp.engine.divergence import MaxDivergenceResult
from vetdp.engine.enumerate import Raised, freeze, independent_law
from vetdp.engine.foreign import watch_foreign_randomness
from vetdp.engine.public import (
    MemberSlot,
    NotEstablished,
    ProductLaw,
    PublicSlot,
    TooManyPaths,
    WorldLaws,
    keyed_world_laws,
    member_laws,
    probe,
    uses_public,
)

__all__ = ["decide_public", "PUBLIC_SEARCH", "PUBLIC_CLAUSES", "world_ratio", "worst_worlds", "realize"]

PUBLIC_SEARCH = 100_000  # public values tried when seeking two examined inputs in a worst class of worlds
PUBLIC_CLAUSES = ("function.law", "privacy.sound", "privacy.tight", "privacy.distance", "privacy.monotone",
                  "errors.data_independent", "randomness.through_primitives")

Ratio = Fraction | None  # None: +inf


def _bigger(a: Ratio, b: Ratio) -> bool:
    return b is not None and (a is None or a > b)


def _dict_ratio(p: dict, q: dict) -> tuple[Ratio, Any]:
    best: Ratio = Fraction(0)
    arg = None
    for y, py in p.items():
        qy = q.get(y, Fraction(0))
        r = None if qy == 0 else py / qy
        if arg is None or _bigger(r, best):
            best, arg = r, y
            if r is None:
                break
    return best, arg


def _law_ratio(p: tuple, q: tuple) -> tuple[Ratio, Any]:
    return _dict_ratio(dict(p), dict(q))


def world_ratio(a: Any, b: Any) -> tuple[Ratio, Any]:
    """max_y L_a(y)/L_b(y) of two world laws (dicts, or :class:`ProductLaw` coordinate by coordinate) and an
    output attaining it (for a product, the leaves' values)."""
    if isinstance(a, dict):
        return _dict_ratio(a, b)
    ratio: Ratio = Fraction(1)
    leaves: dict[int, Any] = dict(a.fixed)
    if dict(a.fixed) != dict(b.fixed):
        return None, None
    for (i, la), (_, lb) in zip(a.coordinates, b.coordinates, strict=True):
        if la == lb:
            leaves[i] = la[0][0]
            continue
        r, y = _law_ratio(la, lb)
        leaves[i] = y
        if r is None:
            return None, _output(a, leaves)
        ratio *= r
    return ratio, _output(a, leaves)


def _output(law: ProductLaw, leaves: dict[int, Any]) -> Any:
    flat = [leaves.get(i) for i in range(law.length)]
    out, k = [], 0
    for n in law.nested:
        if n == 0:
            out.append(flat[k])
            k += 1
        else:
            out.append(tuple(flat[k:k + n]))
            k += n
    return tuple(out)


def worst_worlds(wl: WorldLaws) -> tuple[Ratio, tuple[int, int] | None, Callable[[int, int], bool]]:
    """The worst ratio over ordered pairs of distinct worlds, one pair attaining it, and a test of whether a pair
    attains it.

    Product laws are compared through each coordinate's most common law: a coordinate whose law is the common one
    in both worlds contributes 1, so a pair's ratio is the product over the coordinates where either world is an
    exception. Pairs whose exceptions are disjoint have ratio A(w)·B(w') (A: w's exceptions against the common
    laws, B: the common laws against w''s), so their maximum comes from the worlds sorted by A and by B; pairs that
    share an exception coordinate are compared one by one."""
    laws = wl.laws
    n = len(laws)
    if n < 2:
        return (Fraction(1) if n else None), None, lambda a, b: False
    if isinstance(laws[0], dict):
        ratios = {}
        for i, j in itertools.permutations(range(n), 2):
            ratios[(i, j)] = world_ratio(laws[i], laws[j])[0]
        best = _max_ratio(ratios.values())
        pair = next(k for k, r in ratios.items() if r == best)
        return best, pair, lambda a, b: ratios.get((a, b), Fraction(0)) == best
    intern: dict[tuple, int] = {}
    ids = [[intern.setdefault(law, len(intern)) for _, law in w.coordinates] for w in laws]
    by_id = {v: k for k, v in intern.items()}
    coords = len(ids[0])
    common = []
    for c in range(coords):
        counts: dict[int, int] = {}
        for w in range(n):
            counts[ids[w][c]] = counts.get(ids[w][c], 0) + 1
        common.append(max(counts, key=counts.__getitem__))
    exceptions = [[c for c in range(coords) if ids[w][c] != common[c]] for w in range(n)]
    if any(dict(laws[w].fixed) != dict(laws[0].fixed) for w in range(n)):
        raise NotEstablished("the worlds' fixed output leaves differ")
    cache: dict[tuple[int, int], Ratio] = {}

    def r(a: int, b: int) -> Ratio:
        if (a, b) not in cache:
            cache[(a, b)] = Fraction(1) if a == b else _law_ratio(by_id[a], by_id[b])[0]
        return cache[(a, b)]

    def pair_ratio(a: int, b: int) -> Ratio:
        out: Ratio = Fraction(1)
        for c in sorted(set(exceptions[a]) | set(exceptions[b])):
            f = r(ids[a][c], ids[b][c])
            if f is None:
                return None
            out *= f
        return out

    def one_side(w: int, forward: bool) -> Ratio:
        out: Ratio = Fraction(1)
        for c in exceptions[w]:
            f = r(ids[w][c], common[c]) if forward else r(common[c], ids[w][c])
            if f is None:
                return None
            out *= f
        return out

    a_side = sorted(range(n), key=lambda w: _key(one_side(w, True)), reverse=True)
    b_side = sorted(range(n), key=lambda w: _key(one_side(w, False)), reverse=True)
    best: Ratio = Fraction(0)
    pair: tuple[int, int] | None = None
    # disjoint pairs: the best product comes early in both orders
    for a in a_side[:64]:
        for b in b_side[:64]:
            if a != b and not set(exceptions[a]) & set(exceptions[b]):
                value = pair_ratio(a, b)
                if pair is None or _bigger(value, best):
                    best, pair = value, (a, b)
                break
    # pairs sharing an exception coordinate
    holders: dict[int, list[int]] = {}
    for w in range(n):
        for c in exceptions[w]:
            holders.setdefault(c, []).append(w)
    for group in holders.values():
        for a, b in itertools.permutations(group, 2):
            value = pair_ratio(a, b)
            if pair is None or _bigger(value, best):
                best, pair = value, (a, b)
    if pair is None:  # every world equal to the common laws
        return Fraction(1), None, lambda a, b: False
    return best, pair, lambda a, b: a != b and pair_ratio(a, b) == best


def _key(r: Ratio) -> tuple[int, Fraction]:
    return (1, Fraction(0)) if r is None else (0, r)


def _max_ratio(values: Any) -> Ratio:
    best: Ratio = Fraction(0)
    for v in values:
        if _bigger(v, best):
            best = v
    return best


def _candidates(sizes: Sequence[int], limit: int) -> Any:
    """Public values to try: every combination when there are at most ``limit``, else ``limit`` of them fixed by
    SHA-256 (a reproducible spread, not a randomness source)."""
    total = math.prod(sizes)
    if total <= limit:
        yield from itertools.product(*(range(n) for n in sizes))
        return
    for t in range(limit):
        digest = hashlib.sha256(b"vetdp-public-search" + t.to_bytes(8, "big")).digest()
        word = int.from_bytes(digest, "big")
        values = []
        for n in sizes:
            values.append(word % n)
            word //= n
        yield tuple(values)


def realize(wl: WorldLaws, target: Callable[[int, int], bool], inputs: Sequence[Any],
            limit: int = PUBLIC_SEARCH) -> tuple[tuple[int, ...], Any, Any, tuple[int, int], int] | None:
    """A public value and two inputs whose worlds (indices into ``wl.worlds``) form a pair for which ``target``
    holds, with the number of public values tried; None when none of ``limit`` public values does."""
    index = {w: i for i, w in enumerate(wl.worlds)}
    tried = 0
    for public in _candidates(wl.shape.public, limit):
        tried += 1
        found: dict[int, Any] = {}
        for x in inputs:
            w = index.get(tuple(call.evaluate(public, x) for call in wl.shape.calls))
            if w is not None and w not in found:
                found[w] = x
        for a, b in itertools.permutations(found, 2):
            if target(a, b):
                return public, found[a], found[b], (a, b), tried
    return None


def _released(wl: WorldLaws) -> list[int]:
    """The public draws some non-error output does not contain."""
    missing: set[int] = set()
    for law in wl.laws:
        outs = [y for y in law if not isinstance(y, Raised)] if isinstance(law, dict) else [dict(law.fixed)]
        for y in outs:
            found = {s.index for s in _slots(y)}
            missing |= set(range(len(wl.shape.public))) - found
    return sorted(missing)


def _slots(y: Any) -> list:
    if isinstance(y, PublicSlot):
        return [y]
    if isinstance(y, dict):
        return [s for v in y.values() for s in _slots(v)]
    if isinstance(y, (tuple, list)):
        return [s for v in y for s in _slots(v)]
    return []


def _concrete(y: Any, public: Sequence[int]) -> Any:
    if isinstance(y, PublicSlot):
        return public[y.index]
    if isinstance(y, tuple):
        return tuple(_concrete(v, public) for v in y)
    return y


def _errors(wl: WorldLaws) -> Finding:
    masses = []
    for law in wl.laws:
        raised = {y: p for y, p in law.items() if isinstance(y, Raised)} if isinstance(law, dict) else {}
        masses.append(raised)
    for w, m in zip(wl.worlds, masses, strict=True):
        if m != masses[0]:
            return Finding(False, "the errors raised depend on the encodings' values (the input)",
                           witness={"world": list(wl.worlds[0]),
                                    "errors": {str(k): str(v) for k, v in masses[0].items()},
                                    "world'": list(w), "errors'": {str(k): str(v) for k, v in m.items()}})
    return Finding(True, "no input-dependent errors: every world raises the same errors" if masses[0] else
                   "no errors in any world")


def _sizes_text(sizes: Sequence[int]) -> str:
    return " × ".join(f"2^{n.bit_length() - 1}" if n > 4096 and n & (n - 1) == 0 else str(n) for n in sizes)


def _keyed(spec: Any, m: Any, params: dict, inputs: list, function: Callable) -> dict[str, Finding]:
    watched = "every run"
    try:
        with watch_foreign_randomness(getattr(m, "inner", m), scan_heap=False) as foreign:
            wl = keyed_world_laws(function, symbolic=False)
    except TooManyPaths:  # a product read from one symbolic run: one concrete run is watched
        with watch_foreign_randomness(getattr(m, "inner", m), scan_heap=False) as foreign:
            probe(function)
        wl = keyed_world_laws(function)
        watched = "one concrete run"
    if foreign.used:
        return {name: Finding(False, f"the function draws randomness outside vetdp's primitives "
                              f"({', '.join(foreign.sources)}), so its laws are not exact", undecided=True)
                for name in PUBLIC_CLAUSES}
    out: dict[str, Finding] = {}
    shape = wl.shape
    sizes = [c.size for c in shape.calls]
    public_text = (f"{len(shape.public)} public draw(s) of {_sizes_text(shape.public)} values" if shape.public
                   else "no public draw")
    how = ("enumerated path by path" if wl.how == "enumerated" else
           "read from one symbolic run as a product of coordinates")
    out["randomness.through_primitives"] = Finding(
        True, f"all randomness flows through vetdp's primitives: {public_text}, the input read only through "
        f"{len(shape.calls)} keyed encoding(s) of {sizes} values (a sealed input raises on any other use), the "
        f"secret draws {how} in each of the {len(wl.worlds)} worlds; foreign randomness watched on {watched}")
    out["errors.data_independent"] = _errors(wl)
    missing = _released(wl)
    law = _law_finding(spec, params, wl, inputs)
    if law is not None:
        out["function.law"] = law
    frozen = [x for x in inputs]
    best, pair, target = worst_worlds(wl)
    coverage_head = (f"the law given the public draws depends on the input only through the encodings' values "
                     f"({len(wl.worlds)} worlds, each decided exactly), so every public value and every pair of inputs "
                     f"falls in one of {len(wl.worlds)}² world pairs")
    if missing:
        out["function.law"] = Finding(False, f"public draw(s) {missing} are not in the output: a public draw must be "
                                      "released (conditioning on a secret draw bounds the loss but is not exact)",
                                      witness={"not released": missing})
        worst = MaxDivergenceResult(best, "?", "?", None, Fraction(0), Fraction(0))
        found = privacy_findings(spec, m, {}, params, worst=worst)
        sound = found["privacy.sound"]
        if not sound.ok and best is not None:
            sound = Finding(False, f"undecided: the map is below the worst conditional loss, but public draw(s) "
                            f"{missing} are secret, so the loss of their mixture is not decided", undecided=True)
        out["privacy.sound"] = _noted(sound, f"{coverage_head}; an upper bound only, the public draw(s) {missing} "
                                      "not being released")
        out["privacy.tight"] = Finding(False, "undecided: the exact loss of a mixture over unreleased public draws is "
                                       "not decided", undecided=True)
        return out
    if best == Fraction(1) or pair is None:
        worst = MaxDivergenceResult(Fraction(1), show(frozen[0]), show(frozen[-1]), None, Fraction(1), Fraction(1))
        note = f"{coverage_head}; every world has the same law: the loss is 0 for every public value"
        out.update(_noted_all(privacy_findings(spec, m, {}, params, worst=worst), note))
        out.update(_noted_all(distance_findings(spec, m, {}, params, worst=worst), note))
        return out
    found = realize(wl, target, frozen)
    if found is None:
        upper = MaxDivergenceResult(best, "(no pair found)", "", None, Fraction(0), Fraction(0))
        note = (f"{coverage_head}; no public value among {PUBLIC_SEARCH} tried put two of the {len(frozen)} examined "
                "inputs in a worst world pair: the loss is at most this bound, not shown to reach it")
        sound = privacy_findings(spec, m, {}, params, worst=upper)["privacy.sound"]
        if not sound.ok:
            sound = Finding(False, f"undecided: the map is below the worst world pair's loss, which no examined "
                            f"input pair was shown to reach ({sound.message})", undecided=True)
        out["privacy.sound"] = _noted(sound, note)
        out["privacy.tight"] = Finding(False, f"undecided: {note}", undecided=True)
        return out
    public, x, x2, (a, b), tried = found
    y = world_ratio(wl.laws[a], wl.laws[b])[1]
    p, q = _probs(wl.laws[a], wl.laws[b], y)
    shown_public = {f"public[{i}]": v for i, v in enumerate(public)}
    worst = MaxDivergenceResult(best, show(x), show(x2), show(_concrete(y, public)), p, q)
    note = (f"{coverage_head}; the worst pair (worlds {list(wl.worlds[a])}, {list(wl.worlds[b])}) is reached at "
            f"public value {list(public)} by inputs {show(x)!r}, {show(x2)!r} (found after {tried} public value(s)), "
            f"so the worst loss over all {_sizes_text(shape.public) or '1'} public values and all inputs is exactly "
            f"that pair's")
    found_privacy = privacy_findings(spec, m, {}, params, worst=worst)
    for f in found_privacy.values():
        if f.witness is not None:
            f.witness.update(shown_public)
    out.update(_noted_all(found_privacy, note))
    out.update(_noted_all(distance_findings(spec, m, {}, params, worst=worst), note))
    return out


def _probs(a: Any, b: Any, y: Any) -> tuple[Fraction, Fraction]:
    if isinstance(a, dict):
        return a.get(y, Fraction(0)), b.get(y, Fraction(0))
    return Fraction(0), Fraction(0)


def _noted(f: Finding, note: str) -> Finding:
    import dataclasses

    return dataclasses.replace(f, message=f"{f.message}; {note}")


def _noted_all(findings: dict[str, Finding], note: str) -> dict[str, Finding]:
    return {k: _noted(f, note) for k, f in findings.items()}


def _law_finding(spec: Any, params: dict, wl: WorldLaws, inputs: list) -> Finding | None:
    """``function.law`` against the spec's conditional law (:attr:`MeasurementSpec.conditional_law`)."""
    stated = getattr(spec, "conditional_law", None)
    if stated is None:
        return Finding(True, "not checked: the spec states no conditional law", skipped=True)
    ref = stated(params)
    if tuple(ref.public) != wl.shape.public:
        return Finding(False, f"the code makes public draws of sizes {list(wl.shape.public)}; the law releases "
                       f"{list(ref.public)}", witness={"code": list(wl.shape.public), "law": list(ref.public)})
    if [c.size for c in wl.shape.calls] != [n for _, n in ref.encodings]:
        return Finding(False, f"the code's encodings of the input take {[c.size for c in wl.shape.calls]} values; "
                       f"the law's {[n for _, n in ref.encodings]}",
                       witness={"code": [c.size for c in wl.shape.calls], "law": [n for _, n in ref.encodings]})
    for public in itertools.islice(_candidates(wl.shape.public, 64), 64):
        for x in inputs[:64]:
            for k, (call, (fn, _)) in enumerate(zip(wl.shape.calls, ref.encodings, strict=True)):
                got, want = call.evaluate(public, x), fn(public, x)
                if got != want:
                    return Finding(False, f"encoding {k} of input {show(x)!r} at public value {list(public)} is {got};"
                                   f" the law's is {want}", witness={"x": show(x), "public": list(public),
                                                                    "code": got, "law": want})
    for w, law in zip(wl.worlds, wl.laws, strict=True):
        want = ref.given(w)
        got = law if isinstance(law, dict) else _leaf_laws(law)
        if isinstance(want, dict):
            want = {freeze(y): Fraction(p) for y, p in want.items() if p}
        else:
            want = [{freeze(y): Fraction(p) for y, p in leaf.items() if p} for leaf in want]
            if isinstance(got, dict):  # a product stated leaf by leaf, enumerated output by output
                got, want = _flat(got), independent_law(want)
        if got != want:
            why = _diff(got, want)
            return Finding(False, f"in world {list(w)} (encodings' values) the code's conditional law differs from "
                           f"the spec's: {why}", witness={"world": list(w), "difference": why})
    return Finding(True, f"the exact conditional law equals the spec's in all {len(wl.worlds)} worlds, public draws "
                   f"of sizes {list(wl.shape.public)} released, encodings equal to the spec's on "
                   f"{min(64, math.prod(wl.shape.public) or 1)} public values × {min(64, len(inputs))} inputs")


def _flat(law: dict) -> dict:
    out: dict = {}
    for y, p in law.items():
        key = tuple(_leaves(y)) if not isinstance(y, Raised) else y
        out[key] = out.get(key, Fraction(0)) + p
    return out


def _leaves(y: Any) -> list:
    return [leaf for part in y for leaf in _leaves(part)] if isinstance(y, tuple) else [y]


def _leaf_laws(law: ProductLaw) -> list[dict]:
    leaves: list[dict] = [dict() for _ in range(law.length)]
    for i, v in law.fixed:
        leaves[i] = {v: Fraction(1)}
    for i, dist in law.coordinates:
        leaves[i] = dict(dist)
    return leaves


def _diff(got: Any, want: Any) -> str:
    if isinstance(got, dict) and isinstance(want, dict):
        for y in sorted(set(got) | set(want), key=repr):
            if got.get(y, 0) != want.get(y, 0):
                return f"P[{y!r}] is {got.get(y, 0)}, the law says {want.get(y, 0)}"
    if isinstance(got, list) and isinstance(want, list):
        if len(got) != len(want):
            return f"{len(got)} output leaves, the law {len(want)}"
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            if a != b:
                return f"leaf {i}: {_diff(a, b)}"
    return f"{got!r} against {want!r}"[:300]


# ------------------------------------------------------------------ member shape

def _member(spec: Any, m: Any, params: dict, inputs: list, function: Callable) -> dict[str, Finding]:
    with watch_foreign_randomness(getattr(m, "inner", m), scan_heap=False) as foreign:
        ml = member_laws(function, inputs)
    if foreign.used:
        return {name: Finding(False, f"the function draws randomness outside vetdp's primitives "
                              f"({', '.join(foreign.sources)})", undecided=True) for name in PUBLIC_CLAUSES}
    out: dict[str, Finding] = {}
    # each input's law as classes: probability per element of a class of outputs
    classes: dict[Any, list[tuple[Fraction, frozenset]]] = {}
    raised: dict[Any, dict] = {}
    for x, law in ml.laws.items():
        parts: list[tuple[Fraction, frozenset]] = []
        raised[x] = {y: p for y, p in law.items() if isinstance(y, Raised)}
        for y, p in law.items():
            if isinstance(y, Raised):
                continue
            if not isinstance(y, MemberSlot):
                raise NotEstablished("an output other than one member draw (e.g. a tuple around it) is not decided")
            members = ml.classes[x][y.cls]
            if not members:
                return {"errors.data_independent": Finding(False, f"input {show(x)!r}: its class {y.cls!r} is empty, "
                                                           "so the member draw cannot be made (production would not "
                                                           "end)", witness={"x": show(x), "class": repr(y.cls)})}
            parts.append((p / len(members), members))
        classes[x] = parts
    first = next(iter(raised.values()))
    diff = next((x for x, r in raised.items() if r != first), None)
    out["errors.data_independent"] = (Finding(True, "no input-dependent errors") if diff is None else Finding(
        False, "inputs raise different errors", witness={"x": show(next(iter(raised))), "x_prime": show(diff)}))
    out["randomness.through_primitives"] = Finding(
        True, f"all randomness flows through vetdp's primitives: each of the {len(ml.laws)} inputs enumerated with "
        f"its member draws conditioned, each class's size counted over all {ml.size} outputs")
    law = _member_law_finding(spec, params, classes, inputs)
    if law is not None:
        out["function.law"] = law
    worst, how = _member_worst(classes, ml.size)
    note = (f"decided over all {len(classes)} inputs the spec lists ({how}); each input's law in classes of equal "
            f"probability read from its conditioned runs and its class sizes")
    out.update(_noted_all(privacy_findings(spec, m, {}, params, worst=worst), note))
    out.update(_noted_all(distance_findings(spec, m, {}, params, worst=worst), note))
    return out


def _member_worst(classes: dict[Any, list[tuple[Fraction, frozenset]]], size: int) -> tuple[MaxDivergenceResult, str]:
    supports = {x: frozenset().union(*(s for _, s in parts)) for x, parts in classes.items()}
    union = frozenset().union(*supports.values())
    for x, s in supports.items():
        if s != union:
            other = next(x2 for x2, s2 in supports.items() if not s2 <= s)
            y = next(iter(supports[other] - s))
            p = sum((q for q, members in classes[other] if y in members), Fraction(0))
            return MaxDivergenceResult(None, show(other), show(x), y, p, Fraction(0)), "supports differ"

    def prob(x: Any, y: int) -> Fraction:
        return sum((q for q, members in classes[x] if y in members), Fraction(0))

    top = max(q for parts in classes.values() for q, _ in parts)
    low = min(q for parts in classes.values() for q, _ in parts)
    highs = [x for x, parts in classes.items() if any(q == top for q, _ in parts)]
    lows = [x for x, parts in classes.items() if any(q == low for q, _ in parts)]
    for x in highs[:64]:
        a = frozenset().union(*(s for q, s in classes[x] if q == top))
        for x2 in lows[:64]:
            if x2 == x:
                continue
            b = frozenset().union(*(s for q, s in classes[x2] if q == low))
            common = a & b
            if common:
                y = min(common)
                return (MaxDivergenceResult(top / low, show(x), show(x2), y, prob(x, y), prob(x2, y)),
                        f"the largest class probability over the smallest, reached by inputs {show(x)!r}, "
                        f"{show(x2)!r} at output {y}")
    best: MaxDivergenceResult | None = None
    keys = list(classes)
    for x, x2 in itertools.permutations(keys, 2):
        for y in range(size):
            p, q = prob(x, y), prob(x2, y)
            if p and (best is None or p / q > best.ratio):
                best = MaxDivergenceResult(p / q, show(x), show(x2), y, p, q)
    assert best is not None
    return best, "every pair compared output by output"


def _member_law_finding(spec: Any, params: dict, classes: dict, inputs: list) -> Finding | None:
    """``function.law``: each input's law, compared with the spec's as classes {probability: outputs}."""
    if spec.law is None:
        return Finding(True, "not checked: the spec states no law", skipped=True)
    for x in inputs:
        key = freeze(x)
        want: dict[Fraction, set] = {}
        for y, p in spec.law(params, x).items():
            if p:
                want.setdefault(p if type(p) is Fraction else Fraction(p), set()).add(freeze(y))
        got: dict[Fraction, set] = {}
        for p, members in classes[key]:
            got.setdefault(p, set()).update(members)
        if sum(len(ys) for ys in got.values()) != len(set().union(*got.values())) or got != want:
            return _member_law_pointwise(x, classes[key], want)
    return Finding(True, f"the exact output distribution equals the spec's on all {len(inputs)} inputs")


def _member_law_pointwise(x: Any, parts: list, want_classes: dict) -> Finding:
    got: dict = {}
    for p, members in parts:
        for y in members:
            got[y] = got.get(y, Fraction(0)) + p
    want = {y: p for p, ys in want_classes.items() for y in ys}
    y = next(y for y in sorted(set(got) | set(want), key=repr) if got.get(y, 0) != want.get(y, 0))
    return Finding(False, f"P[M({show(x)!r}) = {y!r}] is {got.get(y, 0)}, the law says {want.get(y, 0)}",
                   witness={"x": show(x), "y": show(y), "P[M(x)=y]": str(got.get(y, 0)),
                            "law P[y|x]": str(want.get(y, 0))})


# ------------------------------------------------------------------ the runner's hook

def decide_public(spec: Any, m: Any, params: dict, inputs: list) -> dict[str, Finding] | None:
    """The public-randomness clauses for one parameter set, or None when the code uses no public primitive."""
    inner = getattr(m, "inner", m)
    function = getattr(inner, "function", None)
    if not callable(function) or not inputs:
        return None
    try:
        checked = inner.input_domain.check_member(inputs[0])
    except Exception:  # noqa: BLE001 - the ordinary path reports the input
        return None
    if not uses_public(function, checked):
        return None
    try:
        try:
            return _keyed(spec, m, params, inputs, function)
        except NotEstablished as keyed_cause:
            try:
                return _member(spec, m, params, [inner.input_domain.check_member(x) for x in inputs], function)
            except NotEstablished:
                raise keyed_cause from None
    except NotEstablished as e:
        f = Finding(False, f"undecided: the code draws public randomness or encodes its input, but its runs do not "
                    f"show the keyed shape: {e}", undecided=True)
        return dict.fromkeys(PUBLIC_CLAUSES, f)
