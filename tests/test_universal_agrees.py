"""The universal exploration agrees with the concrete run at every pinned case (issue 23): for each bundled spec
with a ``universal`` field and each of its pinned examples that falls on one of its bases, the region that holds the
example gives, evaluated at the example's floats, exactly the law the code has when run concretely there (every
input, exact rationals), and the map's symbolic term evaluates to the concrete map's float."""

from __future__ import annotations

import pytest

from vetdp.engine.enumerate import freeze
from vetdp.engine.polynomial import poly_value
from vetdp.engine.spec import discover_specs, find_spec
from vetdp.engine.symbolic import MAX_FLOAT, SymFloat, evaluate, explore_regions
from vetdp.engine.universal import CLAIM_FORKS, _Claim, _claim_run, _law_run, _Laws, symbolic_law

UNIVERSAL_SPECS = sorted(s.name for s in discover_specs() if getattr(s, "universal", None) is not None)
BUDGET = 200_000


def _on_base(example: dict, fixed: dict, floats: dict) -> bool:
    return (all(k in example and example[k] == v for k, v in fixed.items())
            and all(isinstance(example.get(n), float) for n in floats))


def _has_examples(spec, base: dict) -> bool:
    floats = dict(spec.universal.floats(base))
    fixed = {k: v for k, v in base.items() if k not in floats}
    return any(_on_base(e, fixed, floats) for e in spec.examples)


def test_every_spec_with_a_universal_field_is_compared():
    assert {"randomized_response_bool", "randomized_response", "randomized_response_bitvec", "k_rappor",
            "rappor"} <= set(UNIVERSAL_SPECS)


@pytest.mark.parametrize("name", UNIVERSAL_SPECS)
def test_the_regions_law_and_map_at_every_pinned_example_are_the_concrete_ones(name):
    spec = find_spec(name)
    ctor = spec.load_constructor()

    def build(params):
        return spec.build(ctor, params)

    compared = 0
    bases = [b for b in spec.universal.bases(False) if _has_examples(spec, b)] or spec.universal.bases(True)
    for base in bases:  # the default bases that hold pinned examples, else the --deep ones
        floats = dict(spec.universal.floats(base))
        fixed = {k: v for k, v in base.items() if k not in floats}
        examples = [e for e in spec.examples if _on_base(e, fixed, floats)]
        if not examples:
            continue
        space = {n: (-MAX_FLOAT, MAX_FLOAT) for n in floats}
        laws, _ = explore_regions(_law_run(spec, build, fixed, BUDGET, floats), space)
        for example in examples:
            env = {n: example[n] for n in floats}
            leaf = next((leaf for leaf in laws if leaf.box.contains(env)), None)
            if leaf is None or not isinstance(leaf.result, _Laws):
                continue  # a region left open (sampled) or rejected: nothing symbolic to compare
            measurement = build(example)
            inputs = {freeze(x): x for x in (spec.universal.inputs or spec.inputs)(example)}
            assert set(leaf.result.laws) == set(inputs), example
            for key, law in leaf.result.laws.items():
                symbolic = {y: poly_value(q, env) for y, q in law.items()}
                symbolic = {y: p for y, p in symbolic.items() if p != 0}
                concrete = symbolic_law(lambda x=inputs[key], m=measurement: m(x), BUDGET)
                assert symbolic == concrete, (example, key)
            compared += 1
            claims, _ = explore_regions(_claim_run(spec, build, fixed), leaf.box, forks=CLAIM_FORKS)
            sides = [c for c in claims if c.box.contains(env)]
            if not sides:
                continue  # the map's region is left open here (sampled)
            assert all(isinstance(c.result, _Claim) for c in sides)
            assert len(sides) == 1 or all(c.assumed for c in sides)  # one path, or the forks of one comparison
            values = {evaluate(c.result.claim.term, env) if isinstance(c.result.claim, SymFloat) else c.result.claim
                      for c in sides}
            assert measurement.map(spec.d_in) in values, (example, values)
    print(f"{name}: {compared} pinned example(s) compared")
    assert compared, f"no pinned example of {name} falls on a base's proved region"
