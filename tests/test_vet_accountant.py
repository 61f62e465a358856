"""``vetdp vet accountant``: exact brackets (mixed PLD) against brute force, verdicts, user accountants, reports."""

from __future__ import annotations

import itertools
import json
import math
import textwrap
import xml.etree.ElementTree as ET
from fractions import Fraction

import mpmath
import pytest
from click.testing import CliRunner

from vetdp.accounting.accountants import AccountantLoadError, RREvent, load_accountant
from vetdp.accounting.battery import ExactOracle, Question, judge, quick_battery, run_battery
from vetdp.accounting.curves import bit_flip_curve, randomized_response_curve, rappor_curve
from vetdp.accounting.mixed_pld import MixedPLD
from vetdp.accounting.pld import ExactPLD
from vetdp.cli.vet import vet

# ---------------------------------------------------------------------- brute force (independent of the PLD code)


def _coordinate(family):
    """(t, p, r) of one coordinate as exact rationals (families built from a probability have a rational ratio)."""
    t, ratio = family.categories, family.ratio
    r = 1 / (ratio + t - 1)
    return t, ratio * r, r


def _brute_delta(parts, epsilon: float) -> mpmath.mpf:
    """δ(ε) = Σ_outcomes (P − e^ε Q)₊ over every joint outcome of every coordinate, P = RR(0), Q = RR(1)."""
    coords = []
    for family, count in parts:
        coords += [_coordinate(family)] * (family.coordinates * count)
    with mpmath.workdps(60):
        e = mpmath.exp(mpmath.mpf(Fraction(epsilon).numerator) / Fraction(epsilon).denominator)
        total = mpmath.mpf(0)
        for outcome in itertools.product(*[range(t) for t, _, _ in coords]):
            P = Q = Fraction(1)
            for o, (_, p, r) in zip(outcome, coords, strict=True):
                P *= p if o == 0 else r
                Q *= p if o == 1 else r
            term = mpmath.mpf(P.numerator) / P.denominator - e * mpmath.mpf(Q.numerator) / Q.denominator
            total += max(term, 0)
        return total


TINY = [
    [(randomized_response_curve(prob=0.75), 2), (randomized_response_curve(prob=0.5, categories=3), 2)],
    [(bit_flip_curve(0.25, 2), 1), (randomized_response_curve(prob=0.625), 3)],
    [(randomized_response_curve(prob=0.5, categories=4), 3)],
]


@pytest.mark.parametrize("parts", TINY, ids=["rr+cat3", "bits+rr", "cat4"])
def test_mixed_pld_delta_brackets_brute_force(parts):
    pld = MixedPLD(parts)
    for eps in [0.0, 0.3, 1.0, 1.7, 2.5]:
        lo, hi = pld.delta_bounds(eps)
        truth = _brute_delta(parts, eps)
        assert lo <= truth <= hi, (eps, lo, truth, hi)
        assert hi - lo <= 1e-15 * max(hi, 1e-300) + 1e-30


@pytest.mark.parametrize("parts", TINY, ids=["rr+cat3", "bits+rr", "cat4"])
def test_mixed_pld_epsilon_brackets_brute_force(parts):
    pld = MixedPLD(parts)
    for delta in [1e-3, 0.05]:
        r = pld.epsilon(delta)
        assert _brute_delta(parts, r.epsilon) <= delta  # the upper end works
        if r.epsilon_lower > 0:
            assert _brute_delta(parts, r.epsilon_lower) > delta  # nothing below the lower end works
        assert 0 <= r.epsilon - r.epsilon_lower <= 1e-9 * max(r.epsilon, 1)


@pytest.mark.parametrize("family,n", [(randomized_response_curve(1.0), 10), (rappor_curve(1.0), 100),
                                      (randomized_response_curve(2.0, categories=4), 50),
                                      (rappor_curve(0.5, k=2), 30)], ids=["rr", "rappor", "cat4", "k2"])
def test_mixed_pld_single_part_agrees_with_exact_pld(family, n):
    mixed, exact = MixedPLD([(family, n)]), ExactPLD(family, n)
    for delta in [1e-3, 1e-9]:
        a, b = mixed.epsilon(delta), exact.epsilon(delta)
        assert max(a.epsilon_lower, b.epsilon_lower) <= min(a.epsilon, b.epsilon)  # the brackets overlap
    for eps in [0.5, 3.0]:
        (a_lo, a_hi), (b_lo, b_hi) = mixed.delta_bounds(eps), exact.delta_bounds(eps)
        assert max(a_lo, b_lo) <= min(a_hi, b_hi)


def test_mixed_pld_merges_equal_steps_and_sums_heterogeneous():
    merged = MixedPLD([(randomized_response_curve(0.5), 20), (rappor_curve(1.0), 20)])  # 20 + 40 steps of a = 0.5
    assert merged.atoms == 1
    one = ExactPLD(randomized_response_curve(0.5), 60)
    assert merged.delta_bounds(5.0)[0] <= one.delta_bounds(5.0)[1] and one.delta_bounds(5.0)[0] <= \
        merged.delta_bounds(5.0)[1]
    mixed = MixedPLD([(randomized_response_curve(1.0), 3), (randomized_response_curve(0.25), 4)])
    assert mixed.atoms > 1
    # more runs never give less loss: δ(ε) of the mixture lies above each part's
    assert mixed.delta_bounds(1.0)[0] > ExactPLD(randomized_response_curve(1.0), 3).delta_bounds(1.0)[1]


@pytest.mark.parametrize("parts,exc", [([], ValueError), ([(rappor_curve(1.0), 0)], ValueError),
                                       ([("rr", 3)], TypeError), ([rappor_curve(1.0)], TypeError)])
def test_mixed_pld_bad_parts_raise(parts, exc):
    with pytest.raises(exc, match="parts"):
        MixedPLD(parts)


def test_mixed_pld_too_many_atoms_is_refused():
    parts = [(randomized_response_curve(0.1 * (i + 1)), 400) for i in range(4)]  # 201³ joint outcomes
    with pytest.raises(ValueError, match="joint outcomes"):
        MixedPLD(parts)


# ---------------------------------------------------------------------- events and verdicts

def test_rr_event_parameters():
    e = RREvent("k_rappor", 1.0, 10, k=2)
    assert (e.coordinates, e.steps, e.step_epsilon, e.buckets) == (4, 40, 0.25, 2)
    c = RREvent("categorical_rr", 2.0, 3, categories=4)
    # noise = t/(e^a + t − 1): keep = 1 − noise + noise/t = e^a/(e^a + t − 1)
    assert c.noise_parameter == pytest.approx(4 / (math.exp(2) + 3), rel=1e-15)
    assert c.keep_probability == pytest.approx(math.exp(2) / (math.exp(2) + 3), rel=1e-15)


@pytest.mark.parametrize("kwargs,match", [
    (dict(kind="laplace", epsilon=1.0, count=1), "kind"), (dict(kind="rr", epsilon=0.0, count=1), "epsilon"),
    (dict(kind="rr", epsilon=1.0, count=0), "count"), (dict(kind="rr", epsilon=1.0, count=1, categories=3), "categ"),
    (dict(kind="rappor", epsilon=1.0, count=1, k=2), "k="), (dict(kind="rr", epsilon=math.nan, count=1), "epsilon")])
def test_rr_event_bad_parameters_raise(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        RREvent(**kwargs)


@pytest.mark.parametrize("answer,status", [(0.9, "violation"), (1.0, "ok"), (1.005, "ok"), (1.5, "loose"),
                                           (math.inf, "loose"), (math.nan, "error"), ("1.0", "error")])
def test_judge_statuses(answer, status):
    got, ratio, message = judge("epsilon", answer, 0.999, 1.0)
    assert got == status, message
    if status == "loose" and math.isfinite(answer):
        assert ratio == pytest.approx(1.5)


def test_judge_just_below_lower_is_a_violation():
    lower = 2.0
    assert judge("delta", math.nextafter(lower, 0), lower, 2.5)[0] == "violation"
    assert judge("delta", lower, lower, 2.5)[0] == "ok"


# ---------------------------------------------------------------------- user accountants through the CLI

_USER = '''
import math
from vetdp.accounting.pld import ExactPLD

def _pure(events):
    return sum(e.count * e.epsilon for e in events)

class IgnoresCount:
    """Wrong: the exact ε of ONE run of each event, summed."""
    name = "ignores-count"
    def epsilon(self, events, delta):
        return sum(ExactPLD(e.family(), 1).epsilon(delta).epsilon for e in events)

class NaiveMinus1pct:
    """Wrong: basic composition minus 1%."""
    name = "naive-minus-1pct"
    def epsilon(self, events, delta):
        return 0.99 * _pure(events)

class Basic:
    """Sound and loose: basic (pure-DP) composition in both directions."""
    name = "basic"
    def epsilon(self, events, delta):
        return _pure(events)
    def delta(self, events, epsilon):
        return 0.0 if epsilon >= _pure(events) else 1.0

class Raises:
    name = "raises"
    def epsilon(self, events, delta):
        raise RuntimeError("boom")

class RaisesOnMixtures(Basic):
    name = "basic-but-raises-on-mixtures"
    def epsilon(self, events, delta):
        if len(events) > 1:
            raise RuntimeError("heterogeneous compositions are not supported")
        return _pure(events)

class Suite:
    library = "mine"
    version = "0.1"
    entry_points = [Basic(), NaiveMinus1pct()]

not_an_accountant = 42
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "h1_user_accountants.py").write_text(textwrap.dedent(_USER))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "h1_user_accountants"


def _run(*args):
    return CliRunner().invoke(vet, ["accountant", *args], catch_exceptions=False)


def _json(path):
    return json.loads(path.read_text())


def test_vet_ignores_count_is_a_violation(user_module, tmp_path):
    out = tmp_path / "r.json"
    res = _run(f"{user_module}:IgnoresCount", "--quick", "--json", str(out))
    assert res.exit_code == 1, res.output
    doc = _json(out)
    bad = [r for r in doc["rows"] if r["status"] == "violation"]
    assert bad and all(r["question"]["events"][0]["count"] > 1 or len(r["question"]["events"]) > 1 for r in bad)
    row = next(r for r in bad if r["question"]["id"].startswith("rr(ε=1.0)×10 ε@δ=1e-06"))
    assert row["answer"] < row["exact_lower"] <= row["exact_upper"]
    assert row["exact_lower"] == pytest.approx(9.999977065820731, rel=1e-12)
    assert doc["summary"]["violation"] == len(bad)


def test_vet_naive_minus_one_percent_is_a_violation(user_module):
    res = _run(f"{user_module}:NaiveMinus1pct", "--quick")
    assert res.exit_code == 1, res.output
    assert "violation" in res.stdout and "rr(ε=20.0)×1" in res.stdout  # the report, not a progress line


def test_vet_basic_composition_is_loose_not_violation(user_module, tmp_path):
    out = tmp_path / "r.json"
    res = _run(f"{user_module}:Basic", "--quick", "--json", str(out))
    assert res.exit_code == 0, res.output
    doc = _json(out)
    assert doc["summary"]["violation"] == 0 and doc["summary"]["error"] == 0
    loose = [r for r in doc["rows"] if r["status"] == "loose"]
    assert len(loose) >= 5
    assert all(r["ratio"] is None or r["ratio"] > 1.01 for r in loose)
    both = {r["direction"] for r in doc["rows"]}
    assert both == {"epsilon", "delta"}
    # rr(0.01)×300 at δ = 1e-3: basic composition says 3.0; the exact ε is far smaller
    row = next(r for r in loose if r["question"]["id"] == "rr(ε=0.01)×300 ε@δ=0.001")
    assert row["ratio"] == pytest.approx(3.0 / row["exact_upper"])


def test_vet_library_exception_is_an_error_row(user_module, tmp_path):
    out = tmp_path / "r.json"
    res = _run(f"{user_module}:RaisesOnMixtures", "--quick", "--json", str(out))
    assert res.exit_code == 0, res.output
    doc = _json(out)
    errors = [r for r in doc["rows"] if r["status"] == "error"]
    assert errors and all(r["question"]["heterogeneous"] and "RuntimeError: heterogeneous" in r["message"]
                          for r in errors)
    assert doc["summary"]["error"] == len(errors)


def test_vet_accountant_that_always_raises_checks_nothing_exit_2(user_module):
    res = _run(f"{user_module}:Raises", "--quick")
    assert res.exit_code == 2
    assert "error" in res.output and "boom" in res.output


def test_vet_suite_object_runs_every_entry_point(user_module, tmp_path):
    out = tmp_path / "r.json"
    res = _run(f"{user_module}:Suite", "--quick", "--json", str(out))
    assert res.exit_code == 1
    doc = _json(out)
    assert (doc["library"], doc["version"]) == ("mine", "0.1")
    assert {r["entry_point"] for r in doc["rows"]} == {"basic", "naive-minus-1pct"}
    assert {r["entry_point"] for r in doc["rows"] if r["status"] == "violation"} == {"naive-minus-1pct"}
    res = _run(f"{user_module}:Suite", "--quick", "--entry-point", "basic")
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("ref,match", [("no_such_library", "must be one of dp_accounting"),
                                       ("no_such_module_h1:X", "cannot be loaded"),
                                       ("h1_user_accountants:missing", "cannot be loaded"),
                                       ("h1_user_accountants:not_an_accountant", "needs a str 'name'")])
def test_vet_bad_name_exit_2(user_module, ref, match):
    res = CliRunner().invoke(vet, ["accountant", ref, "--quick"])
    assert res.exit_code == 2
    assert match in res.output
    with pytest.raises(AccountantLoadError, match=match):
        load_accountant(ref)


def test_vet_entry_point_selecting_nothing_exit_2(user_module):
    res = CliRunner().invoke(vet, ["accountant", f"{user_module}:Suite", "--quick", "--entry-point", "zzz*"])
    assert res.exit_code == 2 and "selects no entry point" in res.output


def test_vet_composition_selects_the_questions_asked(user_module, tmp_path):
    none = CliRunner().invoke(vet, ["accountant", f"{user_module}:Suite", "--quick", "--composition", "zzz*"])
    assert none.exit_code == 2 and "selects no composition" in none.output
    out = tmp_path / "r.json"
    res = _run(f"{user_module}:Suite", "--quick", "--composition", "rappor(ε=1", "--json", str(out))
    ids = {r["question"]["id"] for r in json.loads(out.read_text())["rows"]}
    assert ids and all(i.startswith("rappor(ε=1") for i in ids), (res.output, ids)
    assert {i.split(" ")[-1].split("@")[0] for i in ids} == {"ε", "δ"}  # both directions of what was selected


def test_vet_reports_json_junit_markdown(user_module, tmp_path):
    j, x, m = tmp_path / "a" / "r.json", tmp_path / "r.xml", tmp_path / "r.md"
    res = _run(f"{user_module}:Suite", "--quick", "--json", str(j), "--junit", str(x), "--markdown", str(m))
    assert res.exit_code == 1
    doc = _json(j)
    assert set(doc) >= {"library", "version", "rows", "summary"}
    keys = {"question", "entry_point", "direction", "answer", "exact_lower", "exact_upper", "status", "ratio",
            "message", "repro"}
    assert all(keys <= set(r) for r in doc["rows"])
    assert doc["summary"] == {s: sum(r["status"] == s for r in doc["rows"]) for s in ("violation", "translation",
                                                                                       "loose", "ok", "error")}
    root = ET.fromstring(x.read_text())
    failures = sum(int(s.get("failures")) for s in root.iter("testsuite"))
    assert failures == doc["summary"]["violation"] > 0
    assert sum(int(s.get("tests")) for s in root.iter("testsuite")) == len(doc["rows"])
    md = m.read_text()
    assert "## Violations" in md and "naive-minus-1pct" in md and "| basic |" in md


def test_run_battery_counts_unsupported_and_never_drops_silently():
    class OnlyEpsilon:
        name = "only-eps"

        def epsilon(self, events, delta):
            return sum(e.count * e.epsilon for e in events)

        def supports(self, events, direction):
            return "no mixtures" if len(events) > 1 else None

    from vetdp.accounting.accountants import AccountantSuite

    res = run_battery(AccountantSuite("x", "0", [OnlyEpsilon()]), quick_battery())
    n = len(quick_battery())
    assert len(res.rows) == n - 1  # one ε question per single-event spec
    assert res.unsupported["only-eps"]["count"] == n + 1  # n δ questions (no method) + 1 mixture ε question


def test_oracle_delta_question_uses_certified_bounds():
    oracle = ExactOracle()
    q = Question((RREvent("rr", 1.0, 10),), "delta", 5.0)
    lo, hi = oracle.bracket(q)
    assert (lo, hi) == ExactPLD(randomized_response_curve(1.0), 10).delta_bounds(5.0)


def test_oracle_computes_each_bracket_once(monkeypatch):
    # a question is asked of every entry point (and again for a violation's rounding label): one certified search each
    searches = []
    real = ExactPLD.epsilon

    def counted(self, delta):
        searches.append((self.family, self.compositions, delta))
        return real(self, delta)

    monkeypatch.setattr(ExactPLD, "epsilon", counted)
    oracle = ExactOracle()
    q = Question((RREvent("rr", 1.0, 10),), "epsilon", 1e-6)
    first = oracle.bracket(q)
    assert oracle.bracket(Question((RREvent("rr", 1.0, 10),), "epsilon", 1e-6)) == first and len(searches) == 1
    assert first == (lambda r: (r.epsilon_lower, r.epsilon))(real(ExactPLD(randomized_response_curve(1.0), 10), 1e-6))
    oracle.bracket(Question((RREvent("rr", 1.0, 10),), "epsilon", 1e-9))
    assert len(searches) == 2


def test_reuse_last_builds_once_per_composition_and_never_keeps_a_failure():
    from vetdp.accounting.accountants.protocol import reuse_last

    built = []

    def build(events):
        built.append(events)
        if events[0].count == 13:
            raise RuntimeError("no")
        return object()

    get = reuse_last(build)
    a, b = (RREvent("rr", 1.0, 10),), (RREvent("rr", 1.0, 11),)
    assert get(a) is get(tuple(a)) and len(built) == 1  # ε at δ, then δ at ε of one composition
    assert get(b) is not None and len(built) == 2
    first_a = len(built)
    get(a)
    assert len(built) == first_a + 1  # only the last composition is kept
    bad = (RREvent("rr", 1.0, 13),)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            get(bad)
    assert len(built) == first_a + 3


# ---------------------------------------------------------------------- built-in adapters (extras)

@pytest.mark.extras
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # autodp's optimiser warns while the reproduction runs
@pytest.mark.parametrize("lib", ["dp_accounting", "autodp", "prv_accountant"])
def test_builtin_adapters_quick_run_and_repro_runs(lib, tmp_path):
    pytest.importorskip(lib)
    out = tmp_path / "r.json"
    res = _run(lib, "--quick", "--json", str(out))
    doc = _json(out)
    assert res.exit_code == (1 if doc["summary"]["violation"] else 0), res.output
    assert doc["library"] == lib and doc["version"]
    answered = [r for r in doc["rows"] if r["status"] != "error" and r["answer"] is not None]
    assert answered
    # a reproduction prints the very answer the row judged, with the library alone
    row = answered[0]
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(row["repro"], "<repro>", "exec"), {})  # noqa: S102 - the repro is our own generated source
    printed = buf.getvalue().strip().splitlines()[-1]
    value = float(printed.strip("()").split(",")[-1]) if printed.startswith("(") else float(printed)
    assert value == row["answer"]


@pytest.mark.deep
@pytest.mark.extras
def test_full_battery_dp_accounting(tmp_path):
    pytest.importorskip("dp_accounting")
    out = tmp_path / "r.json"
    res = _run("dp_accounting", "--json", str(out))
    doc = _json(out)
    assert res.exit_code == 1  # the count bug (see tests/test_accounting_crosscheck.py)
    assert len(doc["rows"]) > 1000
    bad = {r["entry_point"] for r in doc["rows"] if r["status"] == "violation"}
    assert "PLDAccountant.compose(event, count)" in bad


@pytest.mark.parametrize("name", ["vetdp.accounting.battery", "vetdp.accounting.mixed_pld",
                                  "vetdp.accounting.accountants", "vetdp.accounting.accountants.protocol",
                                  "vetdp.accounting.accountants.report", "vetdp.accounting.crosscheck",
                                  "vetdp.cli.vet"])
def test_public_names_exist(name):
    import importlib

    module = importlib.import_module(name)
    assert module.__all__ and all(hasattr(module, n) for n in module.__all__)


@pytest.mark.extras
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("lib", ["dp_accounting", "autodp"])
def test_builtin_answers_are_those_of_a_freshly_built_accountant(lib):
    # each composition is built once for both directions (reuse_last): the second answer must be the fresh one
    pytest.importorskip(lib)
    events = (RREvent("rr", 1.0, 10), RREvent("rappor", 2.0, 5))
    reused = load_accountant(lib).entry_points
    fresh = [load_accountant(lib).entry_points for _ in range(2)]
    for i, ep in enumerate(reused):
        if ep.supports(events, "epsilon"):
            continue
        assert ep.epsilon(events, 1e-6) == fresh[0][i].epsilon(events, 1e-6), ep.name
        assert ep.delta(events, 9.5) == fresh[1][i].delta(events, 9.5), ep.name


# ---------------------------------------------------------------------- what the library was handed (issue 25)

def test_given_families_are_exactly_what_was_handed():
    from vetdp.accounting.accountants.protocol import given_keep_probability, given_noise_parameter, given_pure_epsilon

    e = RREvent("rappor", 2.0, 3)
    fam, n = given_keep_probability(e, e.keep_probability)
    p = Fraction(e.keep_probability)
    assert fam.ratio == p / (1 - p) and n == 6 and fam.coordinates == 1
    c = RREvent("categorical_rr", 0.5, 7, categories=4)
    fam, n = given_noise_parameter(c, c.noise_parameter)
    nu = Fraction(c.noise_parameter)  # keep 1 − ν + ν/4, each other ν/4
    assert fam.ratio == (1 - nu + nu / 4) / (nu / 4) and fam.categories == 4 and n == 7
    fam, n = given_pure_epsilon(c, c.step_epsilon)  # the a-DP worst case: binary RR of log-ratio a
    assert fam.categories == 2 and fam.epsilon == Fraction(0.5) and n == 7
    with pytest.raises(ValueError, match="noise_parameter=0.0"):
        given_noise_parameter(c, 0.0)


@pytest.mark.parametrize("answer,lower,upper,given,status", [
    (0.9, 1.0, 1.1, (0.85, 0.95, True), "translation"),   # below the question's, not below the handed one's
    (0.9, 0.8, 1.1, (0.95, 1.0, True), "translation"),    # below the handed one's only (a rounding): not blamed
    (0.9, 0.8, 1.1, (0.95, 1.0, False), "violation"),     # a substitute (dominating pair) is judged alone
    (0.9, 1.0, 1.1, (0.95, 1.0, True), "violation"),      # below both
    (0.95, 1.0, 1.1, (0.95, 0.96, True), "violation"),    # ε = the handed lower end: certainly below (lower, upper]
    (0.0, 0.0, 0.0, (0.0, 0.0, True), "ok"),              # the exact ε is 0: an answer 0 is exact
    (1.05, 1.0, 1.1, (0.99, 1.0, True), "ok"),
])
def test_judge_against_what_the_library_was_handed(answer, lower, upper, given, status):
    from vetdp.accounting.battery import Given

    g = Given("the handed composition", given[0], given[1], given[2])
    got, _, message = judge("epsilon", answer, lower, upper, given=g)
    assert got == status, message
    if status == "translation":
        assert "rounding of vetdp's translation" in message and "not a finding" in message
    if status == "violation":
        assert "what the library was handed, the handed composition" in message


def test_translation_rows_do_not_fail_the_command_and_are_counted_apart(tmp_path):
    from vetdp.accounting.accountants import AccountantSuite, FunctionEntryPoint
    from vetdp.accounting.accountants.protocol import given_keep_probability
    from vetdp.accounting.battery import parts_of

    events = (RREvent("rr", 20.0, 1),)
    oracle = ExactOracle()
    handed = (given_keep_probability(events[0], events[0].keep_probability),)
    lo_asked = oracle.bracket_of(parts_of(events), "epsilon", 1e-12)[0]
    lo_handed, hi_handed = oracle.bracket_of(handed, "epsilon", 1e-12)
    assert lo_handed < lo_asked * (1 - 1e-9)  # p = fl(e^20/(1+e^20)) moves the exact ε by 1.8e-9 relative
    exact_for_p = FunctionEntryPoint("exact for p", lambda ev, d: hi_handed, None, None, None,
                                     lambda e: given_keep_probability(e, e.keep_probability))
    result = run_battery(AccountantSuite("lib", "1", [exact_for_p]), [(events, 1e-12)], oracle=oracle)
    row = next(r for r in result.rows if r.direction == "epsilon")
    assert row.status == "translation" and row.given_kind == "rounding" and result.summary()["violation"] == 0
    assert row.given_lower == lo_handed and row.shortfall == pytest.approx(1.79e-9, rel=0.01)
    assert "p=0.9999999979388463" in row.given and "vetdp exact for what the library was handed" in row.repro
