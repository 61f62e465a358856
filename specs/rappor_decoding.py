"""Hoare triples of RAPPOR decoding (impl/rappor_decoding.py): the bit-count estimator exactly, the pipeline by a
seeded simulation with a stated confidence.

Estimator (spec "rappor_bit_counts", decided by the engine's estimator clauses): for independent reports of the real
``make_rappor_report`` (impl/rappor.py, enumerated exactly on every Bloom vector of a small dataset, k <= 3, one
cohort), ``estimate_bit_counts(..., exact=True)`` is exactly unbiased for the number of inputs with bit i set, and its
variance is exactly ``bit_count_variance(T_i, n, f, p, q)``.

Checks run by :func:`check_rappor_decoding` (spec "rappor_decoding", a check provider):

* ``bit_counts.stated_law``: the same two facts against the law the proof states (c = Bin(T, q*) + Bin(N − T, p*)),
  enumerated exactly over every count c, for several cohorts at once, independently of the mechanism's code.
* ``pipeline.coverage``: encode → randomize → decode on seeded populations (:data:`PIPELINES`: :data:`PIPELINE`
  and :data:`CROWDED`, more reported strings than the regression has rows; with --deep also
  :data:`DEEP_PIPELINE`); pooled over them, among the selected candidates, the number whose 1 − alpha interval holds
  the true count must not fall in the lower ``CONFIDENCE_BETA`` tail of Binomial(selected, 1 − alpha) — the law of
  that number if every interval had its nominal coverage independently (the claim of proofs/rappor_decoding.md,
  postcondition 3: coverage given the screened set, which the sample split makes true). A correct decoder under the
  model fails it with probability <= beta (0.001). (The former decoder, which screened and fitted on the same
  cohorts, passes these small instances: its shortfall — 179 of 203 at 95% — shows only pooled over the 10**5–10**6
  report grid of docs/rappor.md, minutes of work, not a default check.)
* ``pipeline.false_discoveries``: significant decoys (true count 0) must not exceed the least b with
  P[Binomial(tested decoys, alpha/S) > b] <= beta, summed over the runs: a decoy is tested only when it is in the
  fitted model (S candidates), and then its one-sided p-value is uniform under the model, so it is below the
  Bonferroni cut alpha/S with probability alpha/S.
* ``pipeline.low_noise``: with almost no randomization (f = 0, p = 1 − q = 2**-10) and counts spread exactly
  evenly over the cohorts, every count is recovered within 2% + 10, every reported candidate is significant and no
  decoy is.

Proof: proofs/rappor_decoding.md
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from vetdp.core.measurement import bitvector_domain, discrete_distance
from vetdp.engine.registry import CheckOptions
from vetdp.engine.results import CheckResult, Status
from vetdp.engine.spec import EstimatorSpec, MeasurementSpec, floats_in

__all__ = ["ESTIMATOR", "MECHANISM", "PIPELINE", "CROWDED", "PIPELINES", "DEEP_PIPELINE", "CONFIDENCE_BETA",
           "check_rappor_decoding", "stated_law_check", "low_noise_check", "pipeline_checks", "binomial_lower_bound",
           "binomial_upper_bound", "SPECS"]

SPEC = "rappor_decoding"
CONFIDENCE_BETA = Fraction(1, 1000)  # a correct decoder fails a statistical clause with probability <= this


def _build(ctor, p):
    domain = bitvector_domain(max_weight=p["h"], length=p["k"])
    return ctor(domain, discrete_distance(), p["f"], p["p"], p["q"])


def _vectors(p) -> list[tuple[bool, ...]]:
    import itertools

    return [v for v in itertools.product((False, True), repeat=p["k"]) if sum(v) <= p["h"]]


# The mechanism whose reports the estimator debiases (vetdp.impl.rappor:make_rappor_report); its own Hoare triple
# is specs/rappor.py. Only ``build`` and the constructor are used here: it is not listed in SPECS.
MECHANISM = MeasurementSpec(
    name="rappor",
    constructor="make_rappor_report",
    build=_build,
    params=lambda deep: st.just({"k": 2, "h": 1, "f": 0.5, "p": 0.25, "q": 0.75}),
    examples=[{"k": 2, "h": 1, "f": 0.5, "p": 0.25, "q": 0.75}],
    bad=[],
    inputs=_vectors,
    outside=lambda p: [],
    describe="one RAPPOR report (as the decoder's input)",
)

F_EDGES = [0.0, 0.5, 0.25, 0.875, 2.0**-20, math.nextafter(1.0, 0.0)]


def estimator_params(deep: bool):
    def for_shape(kh: tuple[int, int]):
        k, h = kh
        vec = st.lists(st.booleans(), min_size=k, max_size=k).filter(lambda v: sum(v) <= h).map(tuple)
        return st.fixed_dictionaries({
            "k": st.just(k), "h": st.just(h),
            "f": floats_in(0.0, math.nextafter(1.0, 0.0), edges=F_EDGES),
            "p": floats_in(2.0**-20, 0.5, edges=[0.5, 0.25, 2.0**-20]),
            "q": floats_in(math.nextafter(0.5, 1.0), math.nextafter(1.0, 0.0),
                           edges=[0.75, math.nextafter(0.5, 1.0), math.nextafter(1.0, 0.0)]),
            "dataset": st.lists(vec, min_size=1, max_size=3 if k <= 2 else 2),
        })

    shapes = [(1, 1), (2, 1), (2, 2), (3, 1), (3, 2)]
    return st.sampled_from(shapes).flatmap(for_shape)


def _estimate(est: Callable, answers: list, p) -> list[Fraction]:
    rows = np.array([list(a) for a in answers], dtype=bool).reshape(len(answers), p["k"])
    t_hat, sizes = est(rows, np.zeros(len(answers), dtype=np.int64), 1, p["f"], p["p"], p["q"], exact=True)
    if int(sizes[0]) != len(answers):
        raise ValueError(f"the estimator counted {int(sizes[0])} reports, not {len(answers)}")
    return list(t_hat[0])


def _truth(p) -> list[Fraction]:
    return [Fraction(sum(bool(row[i]) for row in p["dataset"])) for i in range(p["k"])]


def _variance_call(fn: Callable, p) -> list:
    n = len(p["dataset"])
    return [fn(int(t), n, p["f"], p["p"], p["q"], exact=True) for t in _truth(p)]


def _claims(p) -> dict:
    from vetdp.impl.rappor_decoding import bit_count_variance

    return {"variance": _variance_call(bit_count_variance, p)}


def _call(e, reports, cohorts=(0,), num_cohorts=1, f=0.5, p=0.25, q=0.75):
    return e(np.asarray(reports), np.asarray(cohorts), num_cohorts, f, p, q)


ESTIMATOR_BAD = [
    ("f_one", lambda e: _call(e, [[1, 0]], f=1.0), ValueError, ("f",)),
    ("f_nan", lambda e: _call(e, [[1, 0]], f=math.nan), ValueError, ("f",)),
    ("p_equals_q", lambda e: _call(e, [[1, 0]], p=0.5, q=0.5), ValueError, ("p", "q")),
    ("q_above_one", lambda e: _call(e, [[1, 0]], q=1.5), ValueError, ("q",)),
    ("reports_1d", lambda e: _call(e, [1, 0]), ValueError, ("reports",)),
    ("reports_not_bits", lambda e: _call(e, [[1, 2]]), ValueError, ("reports",)),
    ("reports_str", lambda e: e("0101", [0], 1, 0.5, 0.25, 0.75), TypeError, ("reports",)),
    ("cohort_out_of_range", lambda e: _call(e, [[1, 0]], cohorts=(1,)), ValueError, ("cohorts", "num_cohorts")),
    ("cohort_negative", lambda e: _call(e, [[1, 0]], cohorts=(-1,)), ValueError, ("cohorts",)),
    ("cohorts_wrong_length", lambda e: _call(e, [[1, 0]], cohorts=(0, 0)), ValueError, ("cohorts",)),
    ("cohorts_float", lambda e: _call(e, [[1, 0]], cohorts=(0.0,)), TypeError, ("cohorts",)),
    ("num_cohorts_zero", lambda e: _call(e, [[1, 0]], num_cohorts=0), ValueError, ("num_cohorts",)),
]

ESTIMATOR = EstimatorSpec(
    name="rappor_bit_counts",
    module="rappor_decoding",
    estimator="estimate_bit_counts",
    mechanism=MECHANISM,
    params=estimator_params,
    examples=[
        {"k": 2, "h": 1, "f": 0.5, "p": 0.5, "q": 0.75, "dataset": [(True, False), (False, True), (False, False)]},
        {"k": 1, "h": 1, "f": 0.0, "p": 0.25, "q": 0.75, "dataset": [(True,), (True,), (False,)]},
        {"k": 3, "h": 2, "f": 0.875, "p": 0.25, "q": math.nextafter(1.0, 0.0),
         "dataset": [(True, True, False), (False, False, True)]},
    ],
    estimate=_estimate,
    truth=_truth,
    claims=_claims,
    claim_calls={"variance": _variance_call},
    bad=ESTIMATOR_BAD,
    describe="RAPPOR per-cohort bit-count estimator t̂",
)

SPECS = [ESTIMATOR]


# ------------------------------------------------------------------ the stated law, exactly

def _binomial_law(n: int, prob: Fraction) -> list[Fraction]:
    return [math.comb(n, c) * prob**c * (1 - prob) ** (n - c) for c in range(n + 1)]


def _convolve(a: list[Fraction], b: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


STATED_LAW_CASES = [  # (f, p, q, [(N_j, T_j) per cohort])
    (0.5, 0.5, 0.75, [(3, 1), (2, 2), (4, 0)]),
    (0.0, 0.25, 0.75, [(5, 3)]),
    (0.875, 0.125, 0.875, [(1, 0), (1, 1), (6, 2)]),
    (2.0**-20, 2.0**-20, math.nextafter(1.0, 0.0), [(3, 2), (2, 1)]),
]


def stated_law_check(estimator: Callable | None = None, variance: Callable | None = None,
                     cases=STATED_LAW_CASES) -> tuple[bool, str]:
    """Whether, for every case, E[t̂_j] = T_j and Var[t̂_j] = variance(T_j, N_j) exactly, the count c_j of cohort j
    following Bin(T_j, q*) + Bin(N_j − T_j, p*) (the proof's law) and t̂ computed by ``estimator`` (default
    ``estimate_bit_counts``) from reports with c_j ones in one bit; (q*, p*) from the float flip probability r."""
    from vetdp.impl.rappor import rappor_flip_probability
    from vetdp.impl.rappor_decoding import bit_count_variance, estimate_bit_counts

    estimator = estimator or estimate_bit_counts
    variance = variance or bit_count_variance
    checked = 0
    for f, p, q, cohorts in cases:
        r, fp, fq = Fraction(rappor_flip_probability(f)), Fraction(p), Fraction(q)
        q_star, p_star = fq - r * (fq - fp), fp + r * (fq - fp)
        for j, (n, t) in enumerate(cohorts):
            law = _convolve(_binomial_law(t, q_star), _binomial_law(n - t, p_star))
            mean = second = Fraction(0)
            for c, prob in enumerate(law):
                reports, labels = [], []
                for jj, (nn, _) in enumerate(cohorts):  # cohort j carries c ones; the others all zeros
                    ones = c if jj == j else 0
                    reports += [[True]] * ones + [[False]] * (nn - ones)
                    labels += [jj] * nn
                t_hat, sizes = estimator(np.array(reports, dtype=bool), np.array(labels, dtype=np.int64),
                                         len(cohorts), f, p, q, exact=True)
                if [int(s) for s in sizes] != [nn for nn, _ in cohorts]:
                    return False, f"f={f} p={p} q={q}: cohort sizes {list(sizes)} != {[nn for nn, _ in cohorts]}"
                value = Fraction(t_hat[j][0])
                mean += prob * value
                second += prob * value * value
            var = second - mean * mean
            claimed = Fraction(variance(t, n, f, p, q, exact=True))
            if mean != t:
                return False, f"f={f} p={p} q={q} cohort {j} (N={n}, T={t}): E[t̂] = {mean} != T = {t}"
            if var != claimed:
                return False, f"f={f} p={p} q={q} cohort {j} (N={n}, T={t}): Var[t̂] = {var} != claimed {claimed}"
            checked += 1
    if checked == 0:
        return False, "no cohort was checked (no cases given)"
    return True, f"E[t̂] = T and Var[t̂] = bit_count_variance exactly on {checked} cohorts of {len(cases)} cases"


# ------------------------------------------------------------------ the pipeline, by a seeded simulation

PIPELINE = {"num_candidates": 60, "num_decoys": 30, "num_reports": 50_000, "num_cohorts": 16, "k": 32, "h": 2,
            "f": 0.25, "p": 0.25, "q": 0.75, "zipf_exponent": 0.5, "seed": 15, "alpha": 0.05}
# more reported strings (200, Zipf 1) than a half's rows (8 cohorts × 16 bits): most of them are left out of the
# model, so the fit's intervals must hold despite omitted strings colliding with the selected ones
CROWDED = {"num_candidates": 400, "num_decoys": 200, "num_reports": 100_000, "num_cohorts": 16, "k": 16, "h": 2,
           "f": 0.5, "p": 0.5, "q": 0.75, "zipf_exponent": 1.0, "seed": 1, "alpha": 0.05}
PIPELINES = (PIPELINE, CROWDED)
# with --deep: 1000 candidates (500 decoys), 3·10**5 reports, Zipf exponent 1, 64 cohorts, k = 64
DEEP_PIPELINE = {"num_candidates": 1_000, "num_decoys": 500, "num_reports": 300_000, "num_cohorts": 64, "k": 64,
                 "h": 2, "f": 0.25, "p": 0.25, "q": 0.75, "zipf_exponent": 1.0, "seed": 7, "alpha": 0.05}


def binomial_lower_bound(n: int, prob: Fraction, beta: Fraction) -> int:
    """The largest c with P[Binomial(n, prob) < c] <= beta (exact)."""
    law = _binomial_law(n, prob)
    below, c = Fraction(0), 0
    while c <= n and below + law[c] <= beta:
        below += law[c]
        c += 1
    return c


def binomial_upper_bound(n: int, prob: Fraction, beta: Fraction) -> int:
    """The least b with P[Binomial(n, prob) > b] <= beta (exact)."""
    law = _binomial_law(n, prob)
    above, b = Fraction(1) - law[0], 0
    while above > beta:
        b += 1
        above -= law[b]
    return b


def pipeline_checks(config: dict | tuple | list | None = None,
                    decoder: Callable | None = None) -> dict[str, tuple[bool, str]]:
    """{clause: (ok, message)} for pipeline.coverage and pipeline.false_discoveries on the seeded simulations
    ``config`` (one config dict or a sequence of them, pooled; default :data:`PIPELINES`), decoded by ``decoder``
    (default ``decode``). The pooled coverage count is compared with Binomial(selected, 1 − alpha) and each run's
    false discoveries are added up against Binomial(tested decoys, alpha/S) per run (all runs share one alpha)."""
    from vetdp.impl.rappor_decoding import decode, score_decode, simulate_population

    configs = [PIPELINES] if config is None else [config]
    configs = list(configs[0]) if isinstance(configs[0], (tuple, list)) else configs
    if not configs:
        raise ValueError("config is empty; give at least one simulation")
    decoder = decoder or decode
    alphas = {c["alpha"] for c in configs}
    if len(alphas) != 1:
        raise ValueError(f"config: the simulations use different alphas {sorted(alphas)}; pool only equal ones")
    alpha = alphas.pop()
    selected = covered = 0
    absent = false = 0
    fd_law = [Fraction(1)]  # the law of the summed false discoveries, if each tested decoy's test had level alpha/S
    parts = []
    for one in configs:
        cfg = dict(one)
        cfg.pop("alpha")
        sim = simulate_population(**cfg)
        shape = {key: cfg[key] for key in ("k", "h", "f", "p", "q", "num_cohorts")}
        result = decoder(sim.reports, sim.cohorts, sim.candidates, alpha=alpha, **shape)
        score = score_decode(result, sim)
        selected += score.selected
        covered += score.covered
        absent += score.absent
        false += score.false_discoveries
        # a decoy is tested only if it is in the fitted model, then at level alpha/S (S the candidates tested)
        tested_decoys = int((np.asarray(result.selected) & (sim.true_counts == 0)).sum())
        level = Fraction(alpha) / max(int(np.sum(result.selected)), 1)
        fd_law = _convolve(fd_law, _binomial_law(tested_decoys, level))
        parts.append(f"[{len(sim.candidates)} candidates, {sim.num_reports} reports, {cfg['num_cohorts']} cohorts, "
                     f"seed {cfg['seed']}: covered {score.covered}/{score.selected}, recall "
                     f"{score.found}/{score.present}, false {score.false_discoveries}/{score.absent}]")
    summary = " ".join(parts)
    level = 1 - Fraction(alpha)
    out = {}
    if selected == 0:
        out["pipeline.coverage"] = (False, f"no candidate was selected, so no interval was checked ({summary})")
    else:
        need = binomial_lower_bound(selected, level, CONFIDENCE_BETA)
        ok = covered >= need
        out["pipeline.coverage"] = (ok, f"{covered}/{selected} intervals at level {float(level):g} hold "
                                        f"the truth; {'>=' if ok else '<'} {need}, the {float(CONFIDENCE_BETA):g} "
                                        f"lower tail of Binomial({selected}, {float(level):g}) ({summary})")
    if absent == 0:
        out["pipeline.false_discoveries"] = (False, f"the simulations have no decoys to test ({summary})")
    else:
        above, bound = Fraction(1) - fd_law[0], 0
        while above > CONFIDENCE_BETA:
            bound += 1
            above -= fd_law[bound]
        ok = false <= bound
        out["pipeline.false_discoveries"] = (ok, f"{false} of {absent} decoys significant at alpha/S "
                                                 f"(alpha = {alpha}); {'<=' if ok else '>'} {bound}, the "
                                                 f"{float(CONFIDENCE_BETA):g} upper tail ({summary})")
    return out


LOW_NOISE = {"k": 32, "h": 2, "num_cohorts": 4, "f": 0.0, "p": 2.0**-10, "q": 1 - 2.0**-10}


def low_noise_check(decoder: Callable | None = None) -> tuple[bool, str]:
    """Nearly noiseless reports (f = 0, p = 2**-10, q = 1 − 2**-10) of 24 candidates with known counts spread
    exactly evenly over 4 cohorts, plus 12 decoys: every count within 2% + 10 of the truth, every reported candidate
    significant, no decoy significant. The reports are randomized by vetdp.impl.rappor under a fixed seed."""
    from vetdp.impl.rappor import bloom_filter_matrix, rappor_instantaneous_batch, rappor_permanent_batch
    from vetdp.impl.rappor_decoding import decode
    from vetdp.sampling.sources import SeededSource, use_source

    decoder = decoder or decode
    cfg = LOW_NOISE
    candidates = [f"word-{i}" for i in range(36)]
    counts = [4 * (50 + 10 * i) if i < 24 else 0 for i in range(36)]
    values = [c for c, n in zip(candidates, counts, strict=True) for _ in range(n)]
    cohorts = np.array([rep % cfg["num_cohorts"] for n in counts for rep in range(n)], dtype=np.int64)
    bloom = bloom_filter_matrix(values, cohorts, cfg["k"], cfg["h"])
    with use_source(SeededSource(b"vetdp-rappor-decoding-low-noise")):
        reports = rappor_instantaneous_batch(rappor_permanent_batch(bloom, cfg["f"]), cfg["p"], cfg["q"])
    result = decoder(reports, cohorts, candidates, **cfg)
    truth = np.array(counts, dtype=float)
    err = np.abs(np.asarray(result.estimates) - truth)
    far = [c for c, e, n in zip(candidates, err, truth, strict=True) if e > 0.02 * n + 10]
    missed = [c for c, n, s in zip(candidates, counts, result.significant, strict=True) if n and not s]
    false = [c for c, n, s in zip(candidates, counts, result.significant, strict=True) if not n and s]
    ok = not far and not missed and not false
    return ok, (f"largest |estimate − count| = {float(err.max()):.3g}; beyond 2% + 10: {far or 'none'}; "
                f"not significant: {missed or 'none'}; decoys significant: {false or 'none'}")


def _result(check: str, fn: Callable[[], tuple[bool, str]]) -> CheckResult:
    start = time.perf_counter()
    try:
        ok, msg = fn()
        status = Status.PASS if ok else Status.FAIL
    except Exception as e:  # noqa: BLE001 - a check never raises: it reports an ERROR
        status, msg = Status.ERROR, f"{type(e).__name__}: {e}"
    return CheckResult(SPEC, check, status, message=msg, seconds=time.perf_counter() - start,
                       repro=f"vetdp check -k '{SPEC}::{check}'")


CHECKS = ("bit_counts.stated_law", "pipeline.low_noise", "pipeline.coverage", "pipeline.false_discoveries")


def check_rappor_decoding(options: CheckOptions) -> Iterator[CheckResult]:
    """The check provider: yields the selected results of :data:`CHECKS` (never raises)."""
    def selected(name: str) -> bool:
        return options.selected(f"{SPEC}::{name}")

    if selected("bit_counts.stated_law"):
        yield _result("bit_counts.stated_law", stated_law_check)
    if selected("pipeline.low_noise"):
        yield _result("pipeline.low_noise", low_noise_check)
    wanted = [c for c in ("pipeline.coverage", "pipeline.false_discoveries") if selected(c)]
    if wanted:
        start = time.perf_counter()
        try:
            outcomes = pipeline_checks((*PIPELINES, DEEP_PIPELINE) if options.deep else PIPELINES)
        except Exception as e:  # noqa: BLE001
            outcomes = {c: None for c in wanted}
            error = f"{type(e).__name__}: {e}"
        elapsed = (time.perf_counter() - start) / len(wanted)
        for c in wanted:
            got = outcomes[c]
            if got is None:
                yield CheckResult(SPEC, c, Status.ERROR, message=error, seconds=elapsed)
            else:
                yield CheckResult(SPEC, c, Status.PASS if got[0] else Status.FAIL, message=got[1], seconds=elapsed,
                                  subject=str([*PIPELINES, DEEP_PIPELINE] if options.deep else
                                              list(PIPELINES)),
                                  repro=f"vetdp check {'--deep ' if options.deep else ''}-k '{SPEC}::{c}'")
