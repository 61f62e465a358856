"""Hoare triple of make_rappor_client_reports (impl/rappor_client.py): the reports of one value by one client over
several runs, each run deriving the permanent response from the client's secret.

Pre: as make_rappor_reports (specs/rappor.py), with f in (0, 1); runs an int >= 1; derivation "vetdp" or
"reference" (k <= 32, f <= 127/128).
Law (stated here from the floats, independently of the implementation): the secret is modelled as a random function
(the PRF assumption), so the permanent response is drawn once per client and shared by every run: each bit flips
with probability r — rappor_flip_probability(f) for "vetdp", ⌈128·f⌉/256 for "reference" (the reference's rule: a
byte's top 7 bits below 128·f) — and each run's report bit is 1 with probability q if the permanent bit is 1, p if
it is 0. Bit i of the runs' reports has the mixture law Σ_b' P[b' | B_i] Π_t P[S_i^t | b'].
Post: map(1) = ε∞ = min(2h, k)·ln((1 − r)/r) >= the exact max-divergence of all the runs' reports together (not
tight). A client whose permanent response is not a function of its secret — drawn again in every run, as a client
that keeps it in memory only does — has another law (function.law) and exceeds ε∞ (privacy.sound).
Search: runs drawn with k <= 3, 2, 1 for 1, 2, 3 runs (4, 3, 2 with --deep), both derivations.

Hoare triple of make_rappor_client_report (spec rappor_client_report): one client as a measurement, one report per
call. Pre: as above without runs. Law of one call: one report with flip r (the first call on x). Memoisation
(declared, checked by state.independent_calls): calls on one Bloom filter share its permanent response, their joint
law that of as many runs; calls on other Bloom filters, and of other clients (measurements), are independent.
Post: map(1) = ε₁ at r, tight.
Proof: proofs/rappor_client.md
"""

import math
from fractions import Fraction

from hypothesis import strategies as st

from vetdp.core.measurement import bitvector_domain, discrete_distance
from vetdp.engine.spec import BadParams, MeasurementSpec, Memoisation
from vetdp.impl.rappor import rappor_flip_probability
from vetdp.specs.randomized_response_bitvec import bits_of, outside, outside_kind
from vetdp.specs.rappor import BAD_COMMON, inputs, probabilities, shared_permanent_law
from vetdp.specs.rappor import edges as rappor_edges

LONGEST_RUNS = {False: {1: 3, 2: 2, 3: 1}, True: {1: 4, 2: 3, 3: 2}}  # as the n-report spec: 2**((n + 1)·k) paths


def build(ctor, p):
    domain = p.get("input_domain") or bitvector_domain(max_weight=p["m"], length=p["k"])
    metric = p.get("input_metric", discrete_distance())
    runs = (p["runs"],) if "runs" in p else ()  # rappor_client_report: one report per call, no runs
    return ctor(domain, metric, p["f"], p["p"], p["q"], *runs, p["derivation"], p["constant_time"])


def flip(p) -> Fraction:
    """The permanent flip probability of the derivation, exactly: r = rappor_flip_probability(f) (f/2 rounded up)
    for "vetdp"; for "reference" the share of the 128 values of a byte's top 7 bits below 128·f, halved."""
    if p["derivation"] == "reference":
        return Fraction(math.ceil(128 * Fraction(p["f"])), 256)
    return Fraction(rappor_flip_probability(p["f"]))


def runs_law(p, x):
    """P[(S^1, ..., S^runs) = ys | B = x]: the runs share one permanent response, flip(p) away from x per bit."""
    return shared_permanent_law(flip(p), Fraction(p["p"]), Fraction(p["q"]), p["runs"], bits_of(x))


def _reference_ok(p) -> bool:
    return p["derivation"] == "vetdp" or math.ceil(128 * Fraction(p["f"])) < 128


def params(deep: bool):
    def for_runs(n: int):
        return st.tuples(st.integers(1, LONGEST_RUNS[deep][n]), st.integers(1, 3), probabilities(False),
                         st.sampled_from(["vetdp", "reference"]), st.booleans()).map(
            lambda t: {"k": t[0], "m": t[1], **t[2], "derivation": t[3], "constant_time": t[4], "runs": n})

    return st.sampled_from([1, 2, 3]).flatmap(for_runs).filter(lambda p: p["f"] > 0 and _reference_ok(p))


def edges(p) -> list[str]:
    out = [e for e in rappor_edges(p) if not e.startswith("reports=")]
    out.append(f"runs={p['runs']}")
    out.append(f"derivation={p['derivation']}")
    if p["derivation"] == "reference" and flip(p) != Fraction(p["f"]) / 2:
        out.append("reference: 128·f not an integer (rounded up)")
    return out


BASE = {"m": 1, "k": 2, "f": 0.5, "p": 0.25, "q": 0.75, "constant_time": False, "runs": 2, "derivation": "vetdp"}


def _bad(id_, error, names, **kw):
    return BadParams(id_, {**BASE, **kw}, error, names)


CLIENT = MeasurementSpec(
    name="rappor_client",
    constructor="make_rappor_client_reports",
    build=build,
    params=params,
    examples=[
        {**BASE, "runs": 3, "p": 0.5},  # the paper's f, p, q over three runs
        {**BASE, "k": 3, "f": 0.25, "p": 0.0, "q": 1.0},  # p = 0, q = 1: the runs' loss nears ε∞
        {**BASE, "f": 0.45, "p": 0.0, "q": 1.0, "derivation": "reference"},  # 128·f = 57.6: r = 58/256 > f/2
        {**BASE, "f": 0.5, "derivation": "reference", "runs": 3, "k": 1},  # 128·f an integer: r = f/2
        {**BASE, "m": 2, "constant_time": True},  # 2h > k
        {**BASE, "runs": 1, "k": 3, "m": 3, "f": 0.75, "p": 0.125, "q": 0.875},  # one run: one report
    ],
    bad=[*[BadParams(b.id, {**b.params, "k": 2, "runs": 2, "derivation": "vetdp"}, b.error, b.names)
           for b in BAD_COMMON],
         _bad("f_zero", ValueError, ("f",), f=0.0),
         _bad("runs_zero", ValueError, ("runs",), runs=0),
         _bad("runs_float", TypeError, ("runs",), runs=2.0),
         _bad("derivation_unknown", ValueError, ("derivation",), derivation="md5"),
         _bad("reference_f_rounds_to_one", ValueError, ("f", "reference"), f=0.995, derivation="reference")],
    inputs=inputs,
    outside=outside,
    tight=False,  # ε∞ bounds any number of runs; finitely many stay strictly below it
    constant_time_param="constant_time",
    describe="RAPPOR client, one report per run, the permanent response derived from the client's secret",
    law=runs_law,
    outside_kind=outside_kind,
    max_d_in=3,
    edges=edges,
)



def repeats_law(p, x, n):
    """P[the reports of n calls on x = ys]: the client's calls on one Bloom filter share its permanent response."""
    return runs_law({**p, "runs": n}, x)


def report_law(p, x):
    """P[one call's report = y | B = x]: the first call on x, one run."""
    return {ys[0]: prob for ys, prob in repeats_law(p, x, 1).items()}


def report_params(deep: bool):
    return st.tuples(st.integers(1, 3 if deep else 2), st.integers(1, 3), probabilities(False),
                     st.sampled_from(["vetdp", "reference"]), st.booleans()).map(
        lambda t: {"k": t[0], "m": t[1], **t[2], "derivation": t[3], "constant_time": t[4]}).filter(
        lambda p: p["f"] > 0 and _reference_ok(p))


REPORT_BASE = {key: value for key, value in BASE.items() if key != "runs"}

CLIENT_REPORT = MeasurementSpec(
    name="rappor_client_report",
    constructor="make_rappor_client_report",
    constructor_ref="vetdp.impl.rappor_client:make_rappor_client_report",
    build=build,
    params=report_params,
    examples=[
        {**REPORT_BASE, "p": 0.5},  # the paper's f, p, q
        {**REPORT_BASE, "f": 0.25, "p": 0.0, "q": 1.0},  # p = 0, q = 1: ε₁ = ε∞
        {**REPORT_BASE, "f": 0.45, "p": 0.0, "q": 1.0, "derivation": "reference"},  # r = 58/256 > f/2
        {**REPORT_BASE, "m": 2, "constant_time": True},  # 2h > k
        {**REPORT_BASE, "k": 3, "m": 3, "f": 0.75, "p": 0.125, "q": 0.875},
    ],
    bad=[*[BadParams(b.id, {**b.params, "k": 2, "derivation": "vetdp"}, b.error, b.names) for b in BAD_COMMON],
         BadParams("f_zero", {**REPORT_BASE, "f": 0.0}, ValueError, ("f",)),
         BadParams("derivation_unknown", {**REPORT_BASE, "derivation": "md5"}, ValueError, ("derivation",)),
         BadParams("reference_f_rounds_to_one", {**REPORT_BASE, "f": 0.995, "derivation": "reference"}, ValueError,
                   ("f", "reference"))],
    inputs=inputs,
    outside=outside,
    constant_time_param="constant_time",
    describe="RAPPOR client, one report per call, the permanent response of each Bloom filter kept across calls",
    law=report_law,
    outside_kind=outside_kind,
    max_d_in=3,
    edges=lambda p: [e for e in edges({**p, "runs": 1}) if e != "runs=1"],
    # the measurement is one client: calls on one Bloom filter share its permanent response, whose law is the n
    # runs' law; calls on other Bloom filters, and other clients (measurements), draw their own
    memoised=Memoisation(key=lambda p, x: bits_of(x), repeats=repeats_law),
)

SPECS = [CLIENT, CLIENT_REPORT]
