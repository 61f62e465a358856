"""``vetdp rappor encode | simulate | decode``: files, JSON shapes, plots, exit codes, heavy hitters found."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from vetdp.cli.rappor import rappor
from vetdp.impl.rappor import assign_cohort, bloom_filter

SMALL = ["--k", "16", "--h", "2", "--num-cohorts", "4"]


def run(*args: str):
    return CliRunner().invoke(rappor, [str(a) for a in args])


def _error(r) -> str:
    """The error text of a refused run (click's usage errors and this command's own both go to the output)."""
    return r.output


@pytest.fixture
def values_file(tmp_path):
    path = tmp_path / "values.txt"
    path.write_text("apple\nbanana\napple\ncherry\napple\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------ encode

def test_encode_bloom_filters_json_are_the_library_filters(tmp_path, values_file):
    out = tmp_path / "bloom.json"
    r = run("encode", "--values", values_file, *SMALL, "--output", out)
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1 and doc["command"] == "rappor encode"
    assert doc["parameters"]["k"] == 16 and doc["parameters"]["randomized"] is False
    assert "reports" not in doc and "f" not in doc["parameters"]
    values = values_file.read_text().splitlines()
    # default: row i is client i, cohort assign_cohort(i)
    assert doc["cohorts"] == [assign_cohort(i, 4) for i in range(5)]
    for v, c, bits in zip(values, doc["cohorts"], doc["bloom_filters"], strict=True):
        assert bits == "".join("1" if b else "0" for b in bloom_filter(v, c, 16, 2))


def test_encode_randomized_memoizes_per_client_and_value(tmp_path, values_file):
    """--clients: a client re-reporting a value reuses its permanent response. With p = 0 and q = 1 a report IS its
    permanent response, so u1's two reports of 'apple' (rows 0 and 2) are equal and the other rows' are not all."""
    clients = tmp_path / "clients.txt"
    clients.write_text("u1\nu2\nu1\nu3\nu4\n", encoding="utf-8")
    out = tmp_path / "rep.json"
    r = run("encode", "--values", values_file, "--clients", clients, *SMALL, "--f", "0.5", "--p", "0", "--q", "1",
            "--keep-bloom", "--seed", "7", "--output", out)
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["parameters"] | {"f": 0.5, "p": 0.0, "q": 1.0, "derivation": "vetdp", "secret": "seed"} == \
        doc["parameters"]
    assert doc["cohorts"] == [assign_cohort(c, 4) for c in ["u1", "u2", "u1", "u3", "u4"]]
    assert "4 distinct client-value pairs" in r.output and "ε∞" in r.output
    reports = doc["reports"]
    assert reports[0] == reports[2]
    assert doc["bloom_filters"][0] == doc["bloom_filters"][2]
    # the same seed gives the same reports
    again = tmp_path / "again.json"
    assert run("encode", "--values", values_file, "--clients", clients, *SMALL, "--f", "0.5", "--p", "0", "--q",
               "1", "--keep-bloom", "--seed", "7", "--output", again).exit_code == 0
    assert json.loads(again.read_text())["reports"] == reports


def test_encode_refuses_infinite_loss_parameters_before_work(tmp_path, values_file):
    """f = 0 with q = 1: a report's privacy loss is infinite; the mechanism refuses it, the command exits 2."""
    out = tmp_path / "rep.json"
    r = run("encode", "--values", values_file, *SMALL, "--f", "0", "--p", "0.25", "--q", "1", "--output", out)
    assert r.exit_code == 2 and "--f=0.0" in _error(r) and "infinite" in _error(r)
    assert not out.exists()


def test_encode_permanent_response_is_shared_by_repeated_reports(tmp_path):
    """With q = 1 and p = 0 the report IS the permanent response: one client's 40 reports of one value must all be
    equal (memoized), while 40 clients' reports of it differ (f = 0.5 flips bits independently per client)."""
    values = tmp_path / "v.txt"
    values.write_text("x\n" * 40, encoding="utf-8")
    same = tmp_path / "same.txt"
    same.write_text("alice\n" * 40, encoding="utf-8")
    out1, out2 = tmp_path / "one.json", tmp_path / "many.json"
    common = ["--k", "32", "--h", "2", "--num-cohorts", "1", "--f", "0.5", "--p", "0", "--q", "1", "--seed", "3"]
    r1 = run("encode", "--values", values, "--clients", same, *common, "--output", out1)
    r2 = run("encode", "--values", values, *common, "--output", out2)
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output
    assert len(set(json.loads(out1.read_text())["reports"])) == 1
    assert len(set(json.loads(out2.read_text())["reports"])) > 1


@pytest.mark.parametrize("suffix", [".npz", ".csv", ".json"])
def test_encode_formats_round_trip_through_decode_reader(tmp_path, values_file, suffix):
    from vetdp.cli.rappor import read_reports

    out = tmp_path / f"rep{suffix}"
    r = run("encode", "--values", values_file, *SMALL, "--randomize", "--seed", "1", "--output", out)
    assert r.exit_code == 0, r.output
    params, cohorts, reports = read_reports("--reports", str(out))
    assert params == {"k": 16, "h": 2, "num_cohorts": 4, "f": 0.5, "p": 0.5, "q": 0.75, "hash": "sha256",
                      "bit_order": "vetdp"}
    assert reports.shape == (5, 16) and reports.dtype == bool and cohorts.tolist() == [
        assign_cohort(i, 4) for i in range(5)]
    ref = tmp_path / "ref.json"
    assert run("encode", "--values", values_file, *SMALL, "--randomize", "--seed", "1", "--output", ref).exit_code == 0
    strings = json.loads(ref.read_text())["reports"]
    assert ["".join("1" if b else "0" for b in row) for row in reports] == strings


def test_encode_without_randomize_writes_no_reports_and_decode_refuses_it(tmp_path, values_file):
    out = tmp_path / "bloom.npz"
    assert run("encode", "--values", values_file, *SMALL, "--output", out).exit_code == 0
    cands = tmp_path / "c.txt"
    cands.write_text("apple\nbanana\n")
    r = run("decode", "--reports", out, "--candidates", cands)
    assert r.exit_code == 2 and "holds no randomized reports" in _error(r) and "--randomize" in _error(r)


@pytest.mark.parametrize("args, message", [
    (["--k", "16", "--h", "17"], "--h=17 must be in [1, 16]"),
    (["--p", "0.9", "--q", "0.2"], "--p=0.9 must be < --q=0.2"),
    (["--f", "1"], "'--f': 1.0 must be in [0, 1)"),
    (["--q", "1.5"], "'--q': 1.5 must be in [0, 1]"),
    (["--k", "0"], "'--k': 0 must be in [1, 4096]"),
    (["--num-cohorts", "0"], "'--num-cohorts': 0 must be in [1, 100000]"),
    (["--keep-bloom"], "--keep-bloom applies with --randomize"),
    (["--seed", "1"], "--seed applies with --randomize"),
], ids=["h>k", "p>=q", "f=1", "q>1", "k=0", "cohorts=0", "keep-bloom-alone", "seed-alone"])
def test_encode_bad_parameters_exit_2_naming_them(tmp_path, values_file, args, message):
    r = run("encode", "--values", values_file, *args, "--output", tmp_path / "x.json")
    assert r.exit_code == 2, r.output
    assert message in _error(r)
    assert not (tmp_path / "x.json").exists()


def test_encode_bad_input_files_exit_2(tmp_path, values_file):
    clients = tmp_path / "clients.txt"
    clients.write_text("a\nb\n")
    r = run("encode", "--values", values_file, "--clients", clients, "--output", tmp_path / "x.json")
    assert r.exit_code == 2 and "holds 2 ids for 5 values" in _error(r)
    cohorts = tmp_path / "cohorts.txt"
    cohorts.write_text("0\n1\n2\n3\n4\n")
    r = run("encode", "--values", values_file, "--cohorts", cohorts, "--num-cohorts", "4", "--output",
            tmp_path / "x.json")
    assert r.exit_code == 2 and "entry 4 = '4' must be an integer in [0, 3]" in _error(r)
    bad_json = tmp_path / "v.json"
    bad_json.write_text('{"values": [1, 2]}')
    r = run("encode", "--values", bad_json, "--output", tmp_path / "x.json")
    assert r.exit_code == 2 and "expected a JSON list of strings" in _error(r)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    r = run("encode", "--values", empty, "--output", tmp_path / "x.json")
    assert r.exit_code == 2 and "holds no values" in _error(r)
    r = run("encode", "--values", tmp_path / "missing.txt", "--output", tmp_path / "x.json")
    assert r.exit_code == 2 and "does not exist" in _error(r)


def test_encode_json_values_and_cohorts_files(tmp_path):
    values = tmp_path / "v.json"
    values.write_text(json.dumps({"values": ["é", "b"]}))
    cohorts = tmp_path / "c.json"
    cohorts.write_text("[3, 0]")
    out = tmp_path / "o.json"
    r = run("encode", "--values", values, "--cohorts", cohorts, *SMALL, "--output", out)
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["cohorts"] == [3, 0]
    assert doc["bloom_filters"][0] == "".join("1" if b else "0" for b in bloom_filter("é".encode(), 3, 16, 2))


# ------------------------------------------------------------------ simulate and decode

SIM = ["--num-candidates", "20", "--num-reports", "20000", "--k", "32", "--num-cohorts", "8", "--seed", "5",
       "--num-decoys", "10"]


def _heavy(truth: dict, n: int) -> set[str]:
    return {v for v, c in sorted(truth.items(), key=lambda kv: -kv[1])[:n]}


def test_simulate_writes_reports_and_truth_then_decode_finds_heavy_hitters(tmp_path):
    rep, truth_path, dec = tmp_path / "r.npz", tmp_path / "t.json", tmp_path / "d.json"
    r = run("simulate", *SIM, "--output", rep, "--truth", truth_path)
    assert r.exit_code == 0, r.output
    assert "simulated 20000 reports in 8 cohorts" in r.output and "ε∞" in r.output
    truth = json.loads(truth_path.read_text())
    assert truth["parameters"]["seed"] == 5 and len(truth["candidates"]) == 20
    assert sum(truth["true_counts"].values()) == 20000
    assert sum(1 for c in truth["candidates"] if truth["true_counts"][c] == 0) >= 10  # the decoys
    r = run("decode", "--reports", rep, "--candidates", truth_path, "--truth", truth_path, "--json", dec)
    assert r.exit_code == 0, r.output
    doc = json.loads(dec.read_text())
    assert doc["schema_version"] == 1 and doc["command"] == "rappor decode"
    assert doc["num_reports"] == 20000 and doc["num_candidates"] == 20
    assert doc["parameters"] == {"k": 32, "h": 2, "num_cohorts": 8, "f": 0.5, "p": 0.5, "q": 0.75, "hash": "sha256",
                                 "bit_order": "vetdp", "alpha": 0.05}
    assert doc["method"] == "all"  # 20 candidates in 8 × 32 rows: every candidate in the model
    assert doc["threshold"] == pytest.approx(0.05 / 20)
    row_keys = {"value", "estimate", "std_error", "interval", "p_value", "selected", "significant", "true_count"}
    assert all(set(c) == row_keys for c in doc["candidates"])
    found = {c["value"] for c in doc["candidates"] if c["significant"]}
    # the two heaviest values (Zipf(1) over 10 reported: about 34% and 17% of the reports) are found, no decoy is
    assert _heavy(truth["true_counts"], 2) <= found
    assert all(truth["true_counts"][v] > 0 for v in found)
    for c in doc["candidates"]:
        if c["significant"]:
            assert c["interval"][0] <= c["estimate"] <= c["interval"][1] and c["p_value"] < doc["threshold"]
    assert doc["score"]["found"] == len(found) and doc["score"]["false_discoveries"] == 0


def test_simulate_decode_in_one_go_json_and_plots(tmp_path):
    dec, plot = tmp_path / "d.json", tmp_path / "pics" / "fig.png"
    r = run("simulate", *SIM, "--decode", "--json", dec, "--plot", plot)
    assert r.exit_code == 0, r.output
    doc = json.loads(dec.read_text())
    assert doc["command"] == "rappor simulate --decode"
    assert set(doc["score"]) >= {"recall", "false_discoveries", "coverage", "found", "present", "selected"}
    assert doc["score"]["recall"] == doc["score"]["found"] / doc["score"]["present"]
    png, svg = plot, plot.with_suffix(".svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import xml.etree.ElementTree as ET

    assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"


def test_decode_plot_without_truth_and_svg_path(tmp_path):
    rep, truth_path = tmp_path / "r.json", tmp_path / "t.json"
    assert run("simulate", *SIM, "--output", rep, "--truth", truth_path).exit_code == 0
    cands = tmp_path / "cands.txt"
    cands.write_text("\n".join(json.loads(truth_path.read_text())["candidates"]) + "\n")
    r = run("decode", "--reports", rep, "--candidates", cands, "--plot", tmp_path / "est.svg", "--json", "-")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "est.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "est.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    assert '"command": "rappor decode"' in r.output


def test_decode_json_matches_the_library_decode(tmp_path):
    """The CLI renders the library's result: same estimates, intervals, significance, in candidate order."""
    from vetdp.cli.rappor import read_reports
    from vetdp.impl.rappor_decoding import decode

    rep, truth_path, dec = tmp_path / "r.npz", tmp_path / "t.json", tmp_path / "d.json"
    assert run("simulate", *SIM, "--output", rep, "--truth", truth_path).exit_code == 0
    assert run("decode", "--reports", rep, "--candidates", truth_path, "--alpha", "0.1", "--json",
               dec).exit_code == 0
    doc = json.loads(dec.read_text())
    _, cohorts, reports = read_reports("--reports", str(rep))
    cands = json.loads(truth_path.read_text())["candidates"]
    res = decode(reports, cohorts, cands, k=32, h=2, f=0.5, p=0.5, q=0.75, num_cohorts=8, alpha=0.1)
    assert [c["value"] for c in doc["candidates"]] == cands
    assert [c["estimate"] for c in doc["candidates"]] == res.estimates.tolist()
    assert [c["significant"] for c in doc["candidates"]] == res.significant.tolist()
    sel = res.selected
    assert np.array([c["interval"] for c in doc["candidates"]])[sel].tolist() == \
        res.confidence_intervals[sel].tolist()
    assert all(c["interval"] == [None, None] and c["std_error"] is None
               for c, s in zip(doc["candidates"], sel, strict=True) if not s)


def test_simulate_is_reproducible_by_seed(tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    for path, seed in ((a, "5"), (b, "5"), (c, "6")):
        args = [*SIM[:-4], "--seed", seed, "--num-decoys", "10", "--output", path]
        assert run("simulate", *args).exit_code == 0
    assert json.loads(a.read_text())["reports"] == json.loads(b.read_text())["reports"]
    assert json.loads(a.read_text())["reports"] != json.loads(c.read_text())["reports"]


@pytest.mark.parametrize("args, message", [
    (["--num-reports", "0"], "'--num-reports': 0 must be in [1, 10000000]"),
    (["--num-candidates", "4", "--num-decoys", "4"], "--num-decoys=4"),
    (["--zipf-exponent", "nan"], "'--zipf-exponent': nan must be in [0, 10]"),
    (["--json", "x.json"], "--json applies with --decode"),
    (["--decode", "--alpha", "1"], "'--alpha': 1.0 must be in (0, 1)"),
    (["--decode", "--plot", "x.pdf"], "must end in .png, .svg or have no suffix"),
    (["--num-reports", "10000000", "--k", "4096"], "reports × k <= 1073741824"),
], ids=["reports=0", "all-decoys", "zipf-nan", "json-without-decode", "alpha=1", "plot-pdf", "memory"])
def test_simulate_bad_parameters_exit_2_naming_them(tmp_path, args, message):
    r = CliRunner().invoke(rappor, ["simulate", *args], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert message in _error(r)


def test_decode_refuses_disagreeing_parameters_and_bad_files(tmp_path):
    rep, truth_path = tmp_path / "r.npz", tmp_path / "t.json"
    assert run("simulate", *SIM, "--output", rep, "--truth", truth_path).exit_code == 0
    r = run("decode", "--reports", rep, "--candidates", truth_path, "--f", "0.25")
    assert r.exit_code == 2 and "--f=0.25 disagrees with --reports=" in _error(r) and "f=0.5" in _error(r)
    dup = tmp_path / "dup.txt"
    dup.write_text("a\nb\na\n")
    r = run("decode", "--reports", rep, "--candidates", dup)
    assert r.exit_code == 2 and "candidate 2 = 'a' appears twice" in _error(r)
    garbage = tmp_path / "g.json"
    garbage.write_text('{"cohorts": [0], "reports": ["01x"], "parameters": {"k": 3}}')
    r = run("decode", "--reports", garbage, "--candidates", dup)
    assert r.exit_code == 2 and "must hold only '0' and '1'" in _error(r)
    short = tmp_path / "s.json"
    short.write_text('{"cohorts": [0, 1], "reports": ["010", "11"], "parameters": {"k": 3}}')
    r = run("decode", "--reports", short, "--candidates", dup)
    assert r.exit_code == 2 and "line 2: report '11' has 2 characters" in _error(r) and "k=3" in _error(r)
    csv = tmp_path / "own.csv"
    csv.write_text("cohort,reports\n0,0101\n9,1100\n")
    r = run("decode", "--reports", csv, "--candidates", truth_path, "--k", "4", "--num-cohorts", "4")
    assert r.exit_code == 2 and "report 1 has cohort 9" in _error(r) and "[0, 3]" in _error(r)
    r = run("decode", "--reports", csv, "--candidates", truth_path, "--k", "5")
    assert r.exit_code == 2 and "line 2: report '0101' has 4 characters" in _error(r) and "--k=5" in _error(r)
    bad_truth = tmp_path / "bt.json"
    bad_truth.write_text('{"true_counts": {"a": -1}}')
    r = run("decode", "--reports", rep, "--candidates", truth_path, "--truth", bad_truth)
    assert r.exit_code == 2 and "'true_counts'" in _error(r)


def test_decode_own_csv_without_parameters_takes_the_options(tmp_path):
    """A CSV of one's own (no parameter line) is decoded with the options given (k = 8, h = 1, 2 cohorts), which the
    JSON then records."""
    csv = tmp_path / "own.csv"
    rows = ["cohort,reports"] + [f"{i % 2},{(i * 37) % 256:08b}" for i in range(60)]
    csv.write_text("\n".join(rows) + "\n")
    cands = tmp_path / "c.txt"
    cands.write_text("a\nb\nc\n")
    out = tmp_path / "d.json"
    r = run("decode", "--reports", csv, "--candidates", cands, "--k", "8", "--h", "1", "--num-cohorts", "2",
            "--json", out)
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["parameters"]["k"] == 8 and doc["parameters"]["h"] == 1 and doc["num_reports"] == 60


def test_group_help_lists_the_three_commands_and_main_registers_this_group():
    """The group's help lists encode, simulate, decode; once the lead registers it in vetdp.cli.main, the command
    named 'rappor' there is this group (not another object)."""
    from vetdp.cli import main

    r = CliRunner().invoke(rappor, ["--help"])
    assert r.exit_code == 0 and all(cmd in r.output for cmd in ("encode", "simulate", "decode"))
    assert main.get_command(None, "rappor") is rappor


def test_progress_bars_only_on_a_terminal(tmp_path, values_file):
    """The bar is drawn on a terminal and disabled otherwise; a run under CliRunner (no TTY) prints none."""
    import io

    from rich.console import Console

    from vetdp.cli.rappor import _progress

    assert not _progress(Console(file=io.StringIO(), force_terminal=True)).disable
    assert _progress(Console(file=io.StringIO(), force_terminal=False)).disable
    r = run("encode", "--values", values_file, *SMALL, "--randomize", "--seed", "1", "--output", tmp_path / "r.json")
    assert r.exit_code == 0 and "instantaneous randomized response" not in r.output


def test_encode_to_standard_output_is_one_json_document(values_file):
    r = CliRunner().invoke(rappor, ["encode", "--values", str(values_file), *SMALL, "--output", "-"])
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert len(doc["bloom_filters"]) == 5 and all(len(b) == 16 for b in doc["bloom_filters"])


def test_encode_summary_states_the_mechanism_epsilons(tmp_path, values_file):
    """The summary's ε₁ and ε∞ are the privacy maps of make_rappor_report / make_rappor_reports; with f = 0 there is
    no permanent response and ε∞ is infinite (stated, not refused: one report is still ε₁-private)."""
    from vetdp.core.measurement import BitVectorDomain, DiscreteDistance
    from vetdp.impl.rappor import make_rappor_report, make_rappor_reports

    dom = BitVectorDomain(max_weight=2, length=16)
    r = run("encode", "--values", values_file, *SMALL, "--randomize", "--secret", tmp_path / "k", "--output",
            tmp_path / "a.json")
    eps1 = make_rappor_report(dom, DiscreteDistance(), 0.5, 0.5, 0.75).map(1)
    eps_inf = make_rappor_reports(dom, DiscreteDistance(), 0.5, 0.5, 0.75, 3).map(1)
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and f"ε₁ = {eps1:.6g}" in text and f"ε∞ = {eps_inf:.6g}" in text
    r = run("encode", "--values", values_file, *SMALL, "--f", "0", "--p", "0.25", "--q", "0.75", "--secret",
            tmp_path / "k", "--output", tmp_path / "b.json")
    text = " ".join(r.output.split())
    eps1 = make_rappor_report(dom, DiscreteDistance(), 0.0, 0.25, 0.75).map(1)
    assert r.exit_code == 0 and f"ε₁ = {eps1:.6g}" in text and "ε∞ = inf" in text


# ------------------------------------------------------------------ a permanent response that lasts across runs

def test_two_encode_runs_with_one_secret_share_every_permanent_response(tmp_path):
    """The issue's finding: two runs for the same client and value shared 5 of their 24 and 28 one-bits. With a
    secret, p = 0 and q = 1 (a report is its permanent response), two runs give the same reports; another secret
    gives other ones. The secret file is made on first use, 32 bytes as hex, readable by its owner only."""
    values, clients = tmp_path / "v.txt", tmp_path / "c.txt"
    values.write_text("apple\nbanana\napple\n" * 4)
    clients.write_text("u1\nu1\nu2\n" * 4)
    key, other = tmp_path / "client.key", tmp_path / "other.key"
    common = ["--values", values, "--clients", clients, "--k", "64", "--num-cohorts", "4", "--f", "0.5", "--p", "0",
              "--q", "1"]
    outs = [tmp_path / f"run{i}.json" for i in range(3)]
    r = run("encode", *common, "--secret", key, "--output", outs[0])
    assert r.exit_code == 0, r.output
    assert "created the secret file" in r.output and (key.stat().st_mode & 0o777) == 0o600
    assert len(bytes.fromhex(key.read_text().strip())) == 32
    assert run("encode", *common, "--secret", key, "--output", outs[1]).exit_code == 0
    assert run("encode", *common, "--secret", other, "--output", outs[2]).exit_code == 0
    first, second, third = (json.loads(o.read_text())["reports"] for o in outs)
    assert first == second and first != third
    assert first[0] == first[3] and first[0] != first[2]  # u1's apple in every row; u2's apple is its own


def test_randomizing_needs_a_secret_or_a_seed(tmp_path, values_file):
    r = run("encode", "--values", values_file, *SMALL, "--randomize", "--output", tmp_path / "r.json")
    assert r.exit_code == 2 and "--randomize needs --secret FILE" in r.output and not (tmp_path / "r.json").exists()
    short = tmp_path / "short.key"
    short.write_text("abcd\n")
    r = run("encode", "--values", values_file, *SMALL, "--randomize", "--secret", short, "--output",
            tmp_path / "r.json")
    assert r.exit_code == 2 and "2 bytes; it needs at least 16" in r.output


def test_summary_states_epsilon_infinity_over_every_run_with_the_secret(tmp_path, values_file):
    r = run("encode", "--values", values_file, *SMALL, "--randomize", "--secret", tmp_path / "k", "--output",
            tmp_path / "r.json")
    text = " ".join(r.output.split())
    assert "per report" in text and "over all reports of one value by one client, in every run with the secret" in text
    r = run("encode", "--values", values_file, "--k", "16", "--h", "2", "--num-cohorts", "4", "--f", "0.45",
            "--derivation", "reference", "--secret", tmp_path / "k", "--output", tmp_path / "r.json")
    import math

    assert r.exit_code == 0 and f"ε∞ = {4 * math.log(198 / 58):.6g}" in " ".join(r.output.split())


# ------------------------------------------------------------------ the reference simulator's laws and parameter sets

@pytest.mark.parametrize("dist", ["exponential", "normal", "uniform", "zipf"])
def test_simulate_offers_the_reference_laws(tmp_path, dist):
    truth = tmp_path / "t.json"
    r = run("simulate", "--num-candidates", "20", "--num-decoys", "0", "--num-reports", "4000", "--k", "16",
            "--num-cohorts", "4", "--distribution", dist, "--truth", truth)
    assert r.exit_code == 0, r.output
    doc = json.loads(truth.read_text())
    counts = sorted(doc["true_counts"].values(), reverse=True)
    assert doc["parameters"]["distribution"] == dist and sum(counts) == 4000
    share = counts[0] / 4000
    assert {"zipf": 0.2 < share < 0.4, "exponential": 0.15 < share < 0.3, "normal": 0.05 < share < 0.15,
            "uniform": share < 0.1}[dist], share


def test_simulate_presets_are_the_reference_test_cases(tmp_path):
    truth = tmp_path / "t.json"
    r = run("simulate", "--preset", "exp-tiny-typical", "--truth", truth)
    assert r.exit_code == 0, r.output
    p = json.loads(truth.read_text())["parameters"]
    assert (p["k"], p["h"], p["num_cohorts"], p["p"], p["q"], p["f"]) == (8, 2, 128, 0.39, 0.61, 0.45)
    assert (p["num_reports"], p["num_candidates"], p["num_decoys"], p["num_extra"]) == (1000, 110, 20, 10)
    assert p["distribution"] == "exponential" and p["preset"] == "exp-tiny-typical"
    r = run("simulate", "--preset", "demo3", "--num-reports", "5000", "--truth", truth)
    assert r.exit_code == 0, r.output
    p = json.loads(truth.read_text())["parameters"]
    assert (p["k"], p["h"], p["num_cohorts"], p["reports_per_client"], p["num_reports"]) == (32, 1, 64, 10, 5000)
    r = run("simulate", "--preset", "exp-large-typical")
    assert r.exit_code == 2 and "--num-reports=100000000 must be in [1, 10^7]" in r.output
    r = run("simulate", "--preset", "pareto")
    assert r.exit_code == 2 and "--preset='pareto' must be demo1" in r.output


# ------------------------------------------------------------------ bad input: one line, exit 2

def test_corrupt_or_short_npz_is_one_line_exit_2(tmp_path):
    cands = tmp_path / "c.txt"
    cands.write_text("a\nb\n")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip at all")
    r = run("decode", "--reports", bad, "--candidates", cands)
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "not a readable NPZ" in r.output
    narrow = tmp_path / "narrow.npz"  # rows of 8 bits under k = 16: unpacking would pad them with zeros
    np.savez(narrow, cohorts=np.array([0, 1]), reports=np.packbits(np.ones((2, 8), dtype=bool), axis=1),
             parameters=np.array(json.dumps({"k": 16, "h": 2, "num_cohorts": 2})))
    r = run("decode", "--reports", narrow, "--candidates", cands)
    assert r.exit_code == 2 and "rows of k=16 bits pack into 2 bytes" in r.output.replace("--k=", "k=")


@pytest.mark.parametrize("option", ["--values", "--clients"])
def test_a_blank_line_in_a_values_or_clients_file_is_an_error(tmp_path, values_file, option):
    blank = tmp_path / "blank.txt"
    blank.write_text("a\n\nb\nc\nd\n")
    args = ["--values", blank] if option == "--values" else ["--values", values_file, "--clients", blank]
    r = run("encode", *args, *SMALL, "--output", tmp_path / "o.json")
    assert r.exit_code == 2 and "line 2 is blank" in r.output


def test_a_blank_candidate_is_an_error(tmp_path):
    rep = tmp_path / "r.npz"
    assert run("simulate", *SIM, "--output", rep).exit_code == 0
    for name, text in (("c.txt", "a\n \nb\n"), ("c.json", '["a", ""]')):
        path = tmp_path / name
        path.write_text(text)
        r = run("decode", "--reports", rep, "--candidates", path)
        assert r.exit_code == 2 and "blank" in r.output, r.output


@pytest.mark.parametrize("command,args", [
    ("encode", ["--values", "VALUES"]),
    ("simulate", ["--num-reports", "100"]),
    ("sum-bits", ["--reports", "REPORTS"]),
], ids=["encode", "simulate", "sum-bits"])
def test_an_output_suffix_that_names_no_format_is_refused(tmp_path, values_file, command, args):
    rep = tmp_path / "r.csv"
    assert run("encode", "--values", values_file, *SMALL, "--hash", "md5", "--seed", "1", "--randomize", "--output",
               rep).exit_code == 0
    args = [str(values_file) if a == "VALUES" else str(rep) if a == "REPORTS" else a for a in args]
    r = run(command, *args, "--output", tmp_path / "o.txt")
    assert r.exit_code == 2 and "must end in" in r.output and "o.txt" in r.output
    assert not (tmp_path / "o.txt").exists()


def test_a_piped_table_keeps_every_column(tmp_path):
    """CliRunner's output is not a terminal: the table is laid out wide instead of dropping or folding columns."""
    truth = tmp_path / "t.json"
    rep = tmp_path / "r.npz"
    assert run("simulate", *SIM, "--output", rep, "--truth", truth).exit_code == 0
    r = run("decode", "--reports", rep, "--candidates", truth, "--truth", truth)
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if "candidate" in line and "estimate" in line)
    assert all(col in header for col in ("candidate", "estimate", "s.e.", "95% interval", "p-value", "share", "true"))
    rows = [line for line in r.output.splitlines() if "cand-" in line]
    assert rows and all("…" not in line and line.count("│") >= 8 for line in rows)


def test_clients_with_cohorts_as_the_reference_input_one_cohort_per_client(tmp_path, values_file):
    clients, cohorts = tmp_path / "c.txt", tmp_path / "h.txt"
    clients.write_text("c1\nc2\nc1\nc3\nc1\n")
    cohorts.write_text("1\n2\n1\n3\n1\n")
    out = tmp_path / "r.json"
    r = run("encode", "--values", values_file, "--clients", clients, "--cohorts", cohorts, *SMALL, "--output", out)
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["cohorts"] == [1, 2, 1, 3, 1]
    cohorts.write_text("1\n2\n0\n3\n1\n")
    r = run("encode", "--values", values_file, "--clients", clients, "--cohorts", cohorts, *SMALL, "--output", out)
    assert r.exit_code == 2 and "line 3 puts client 'c1' in cohort 0" in r.output


def test_option_choices_are_the_librarys():
    """--hash, --bit-order and --method spell their choices in the CLI (so that --help loads no NumPy): the
    library's."""
    from vetdp.cli import rappor as cli
    from vetdp.impl.rappor import HASHES
    from vetdp.impl.rappor_decoding import DECODE_METHODS
    from vetdp.rappor_io import BIT_ORDERS

    assert cli.HASH_CHOICES == HASHES and cli.BIT_ORDER_CHOICES == BIT_ORDERS and cli.METHOD_CHOICES == DECODE_METHODS
