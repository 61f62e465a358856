"""The reference's formats both ways (issue 27, point 2): files laid out as Google's reference tools write them
(tests/_rappor_reference.py re-implements them from their documentation) decode in vetdp; vetdp's files in the
reference's layout are read by that logic; a file whose hash or bit order disagrees with the parameters is refused
with one line, exit 2."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner

from tests import _rappor_reference as ref
from vetdp.cli.rappor import rappor
from vetdp.impl.rappor_client import client_key
from vetdp.rappor_io import read_map_csv, read_params_csv

K, H, M, P, Q, F = 32, 2, 8, 0.25, 0.75, 0.5


def run(*args):
    return CliRunner().invoke(rappor, [str(a) for a in args])


def _one_line_exit_2(r) -> str:
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and r.output.count("\n") == 1, r.output
    return r.output


@pytest.fixture(scope="module")
def reference_case(tmp_path_factory):
    """The reference's pipeline on a small case: exponential over 30 values, 3000 clients of 4 values each."""
    d = tmp_path_factory.mktemp("ref")
    rows = ref.true_values("exp", 30, 3000, 4, M, np.random.default_rng(1))
    (d / "params.csv").write_text(ref.params_csv(K, H, M, P, Q, F))
    reports = ref.simulate(rows, K, H, P, Q, F, seed=2)
    (d / "reports.csv").write_text(reports)
    (d / "counts.csv").write_text(ref.sum_bits(reports, K, M))
    candidates = [f"v{i}" for i in range(1, 31) if i % 10 != 9] + [f"v{i}" for i in range(31, 41)]
    (d / "candidates.txt").write_text("\n".join(candidates) + "\n")
    (d / "map.csv").write_text(ref.hash_candidates(candidates, K, H, M))
    truth = {}
    for _, _, v in rows:
        truth[v] = truth.get(v, 0) + 1
    return d, truth


def test_reference_reports_decode_with_md5_and_its_bit_order(reference_case):
    d, truth = reference_case
    r = run("decode", "--reports", d / "reports.csv", "--params", d / "params.csv", "--candidates",
            d / "candidates.txt", "--json", d / "from_reports.json")
    assert r.exit_code == 0, r.output
    doc = json.loads((d / "from_reports.json").read_text())
    assert doc["parameters"] | {"hash": "md5", "bit_order": "reference", "k": K, "num_cohorts": M} == doc["parameters"]
    found = {c["value"] for c in doc["candidates"] if c["significant"]}
    heavy = {v for v, _ in sorted(truth.items(), key=lambda kv: -kv[1])[:3]}
    assert heavy <= found and all(truth.get(v, 0) > 0 for v in found)  # the heaviest found, nothing unreported


def test_reference_counts_and_map_decode_to_the_same_estimates(reference_case):
    """sum_bits' counts and hash_candidates' map (CRLF, as the reference writes them) give exactly the estimates the
    reports give: the same counts, the same design."""
    d, _ = reference_case
    r = run("decode", "--counts", d / "counts.csv", "--map", d / "map.csv", "--params", d / "params.csv", "--json",
            d / "from_counts.json")
    assert r.exit_code == 0, r.output
    a = json.loads((d / "from_counts.json").read_text())
    b = json.loads((d / "from_reports.json").read_text()) if (d / "from_reports.json").exists() else None
    if b is None:
        run("decode", "--reports", d / "reports.csv", "--params", d / "params.csv", "--candidates",
            d / "candidates.txt", "--json", d / "from_reports.json")
        b = json.loads((d / "from_reports.json").read_text())
    assert [c["estimate"] for c in a["candidates"]] == pytest.approx([c["estimate"] for c in b["candidates"]],
                                                                     rel=1e-9, abs=1e-6)
    assert [c["significant"] for c in a["candidates"]] == [c["significant"] for c in b["candidates"]]


def test_vetdp_sum_bits_and_hash_candidates_write_what_the_reference_writes(reference_case, tmp_path):
    d, _ = reference_case
    counts, params = tmp_path / "counts.csv", tmp_path / "params.csv"
    r = run("sum-bits", "--reports", d / "reports.csv", "--params", d / "params.csv", "--output", counts,
            "--params-output", params)
    assert r.exit_code == 0, r.output
    rows = lambda text: [r for r in csv.reader(io.StringIO(text)) if r]  # noqa: E731
    assert rows(counts.read_text()) == rows((d / "counts.csv").read_text())
    assert read_params_csv("--params", str(params)) == read_params_csv("--params", str(d / "params.csv"))
    assert params.read_text().splitlines()[0] == "k,h,m,p,q,f"  # what the reference's Params.from_csv demands
    mapped = tmp_path / "map.csv"
    r = run("hash-candidates", "--candidates", d / "candidates.txt", "--params", d / "params.csv", "--output", mapped)
    assert r.exit_code == 0, r.output
    assert rows(mapped.read_text()) == rows((d / "map.csv").read_text())


def test_vetdp_reports_in_the_reference_layout_are_read_by_its_sum_bits(tmp_path):
    """encode --format reference: the reference's sum_bits reads the file, and with --derivation reference the
    permanent responses are the reference client's, bit for bit, for each client's key."""
    rows = ref.true_values("zipf1", 20, 300, 2, M, np.random.default_rng(3))
    (tmp_path / "values.txt").write_text("\n".join(v for _, _, v in rows) + "\n")
    (tmp_path / "clients.txt").write_text("\n".join(c for c, _, _ in rows) + "\n")
    (tmp_path / "cohorts.txt").write_text("\n".join(str(c) for _, c, _ in rows) + "\n")
    (tmp_path / "params.csv").write_text(ref.params_csv(K, H, M, P, Q, F))
    secret = tmp_path / "master.key"
    out = tmp_path / "reports.csv"
    r = run("encode", "--values", tmp_path / "values.txt", "--clients", tmp_path / "clients.txt", "--params",
            tmp_path / "params.csv", "--secret", secret, "--derivation", "reference", "--format", "reference",
            "--keep-bloom", "--output", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    counts = ref.sum_bits(text, K, M)  # the reference's reader accepts the file
    assert sum(int(line.split(",")[0]) for line in counts.splitlines()) == len(rows)
    master = bytes.fromhex(secret.read_text().strip())
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert [p["client"] for p in parsed] == [c for c, _, _ in rows]
    for p, (client, _, value) in zip(parsed, rows, strict=True):
        cohort = int(p["cohort"])
        bloom = ref.bloom_int(value, cohort, H, K)
        assert p["bloom"] == ref.bit_string(bloom, K)
        assert p["prr"] == ref.bit_string(ref.permanent(client_key(master, client), bloom, F, K), K)
    r = run("sum-bits", "--reports", out, "--params", tmp_path / "params.csv", "--output", tmp_path / "c.csv")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "c.csv").read_text().splitlines() == counts.splitlines()


def test_files_in_the_published_example_layout_decode(tmp_path):
    """The layout of the reference's published example (apps/rappor-analysis): a params CSV with a quoted header, a
    counts CSV of m rows of k + 1 counts, a map with quoted names, positions drawn at random by its simulation and
    empty trailing fields where a cohort's positions collided. The data here are our own, drawn as its gen_counts.R
    draws them."""
    k, h, m, p, q, f = 128, 2, 8, 0.5, 0.75, 0.0
    rng = np.random.default_rng(5)
    names = [f"V_{i}" for i in range(1, 41)]
    positions = {v: [sorted(rng.integers(0, k, size=h).tolist()) for _ in range(m)] for v in names}
    truth = {v: int(200_000 / (i + 1)) for i, v in enumerate(names[:10])}
    sizes, counts = ref.counts_from_design(positions, truth, k, m, p, q, f, rng)
    (tmp_path / "params.csv").write_text('"k","h","m","p","q","f"\n128,2,8,0.5,0.75,0\n')
    (tmp_path / "counts.csv").write_text("".join(",".join(map(str, [n, *row])) + "\n"
                                                 for n, row in zip(sizes.tolist(), counts.tolist(), strict=True)))
    lines = []
    for v in names:
        flat = sorted({c * k + b + 1 for c in range(m) for b in positions[v][c]})
        lines.append(",".join([f'"{v}"', *map(str, flat)] + [""] * (h * m - len(flat))))
    (tmp_path / "map.csv").write_text("\n".join(lines) + "\n")
    cands, design = read_map_csv("--map", str(tmp_path / "map.csv"), k, h, m)
    assert cands == names and design.shape == (m * k, 40)
    out = tmp_path / "d.json"
    r = run("decode", "--counts", tmp_path / "counts.csv", "--map", tmp_path / "map.csv", "--params",
            tmp_path / "params.csv", "--json", out)
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    found = {c["value"] for c in doc["candidates"] if c["significant"]}
    assert set(names[:5]) <= found <= set(names[:10])
    assert doc["parameters"]["f"] == 0.0 and doc["num_reports"] == int(sizes.sum())


# ------------------------------------------------------------------ refusals: never decoded silently

def test_a_hash_that_disagrees_with_the_file_is_refused(reference_case, tmp_path):
    d, _ = reference_case
    msg = _one_line_exit_2(run("decode", "--reports", d / "reports.csv", "--params", d / "params.csv", "--hash",
                               "sha256", "--candidates", d / "candidates.txt"))
    assert "--hash='sha256' disagrees with --reports=" in msg and "hash='md5'" in msg
    msg = _one_line_exit_2(run("decode", "--reports", d / "reports.csv", "--params", d / "params.csv", "--bit-order",
                               "vetdp", "--candidates", d / "candidates.txt"))
    assert "--bit-order='vetdp' disagrees" in msg
    # vetdp's own SHA-256 reports with the reference's params file (which means MD5)
    own = tmp_path / "own.npz"
    assert run("simulate", "--num-candidates", "10", "--num-reports", "2000", "--k", "32", "--num-cohorts", "8",
               "--p", "0.25", "--output", own).exit_code == 0
    msg = _one_line_exit_2(run("decode", "--reports", own, "--params", d / "params.csv", "--candidates",
                               d / "candidates.txt"))
    assert "disagrees with --reports=" in msg and "sha256" in msg
    msg = _one_line_exit_2(run("decode", "--reports", own, "--map", d / "map.csv"))
    assert "--map=" in msg and "does not match" in msg and "sha256" in msg
    msg = _one_line_exit_2(run("sum-bits", "--reports", own, "--output", tmp_path / "c.csv"))
    assert "hashed with sha256" in msg and not (tmp_path / "c.csv").exists()


def test_the_reference_csv_with_a_renamed_column_is_refused(reference_case, tmp_path):
    """The issue's path: the reference's file with irr renamed to reports was read as vetdp's CSV, decoded with the
    wrong hash and bit order, and found nothing without a warning."""
    d, _ = reference_case
    renamed = tmp_path / "renamed.csv"
    text = (d / "reports.csv").read_text()
    renamed.write_text(text.replace("client,cohort,bloom,prr,irr", "client,cohort,bloom,prr,reports", 1))
    msg = _one_line_exit_2(run("decode", "--reports", renamed, "--candidates", d / "candidates.txt", "--k", "32",
                               "--num-cohorts", "8"))
    assert "unknown columns" in msg and "client,cohort,bloom,prr,irr" in msg


def test_the_reference_layout_is_written_for_md5_only(tmp_path):
    (tmp_path / "v.txt").write_text("a\nb\n")
    msg = _one_line_exit_2(run("encode", "--values", tmp_path / "v.txt", "--format", "reference", "--hash", "sha256",
                               "--k", "32", "--seed", "1", "--output", tmp_path / "r.csv"))
    assert "--hash='sha256' disagrees with --format reference" in msg, msg
    msg = _one_line_exit_2(run("encode", "--values", tmp_path / "v.txt", "--format", "reference", "--seed", "1",
                               "--output", tmp_path / "r.json"))
    assert "must end in .csv" in msg


def test_bit_order_is_recorded_and_read_back(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    common = ["--num-candidates", "10", "--num-reports", "3000", "--k", "16", "--num-cohorts", "4", "--seed", "2"]
    assert run("simulate", *common, "--output", a).exit_code == 0
    assert run("simulate", *common, "--bit-order", "reference", "--output", b).exit_code == 0
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    assert db["parameters"]["bit_order"] == "reference" and da["parameters"]["bit_order"] == "vetdp"
    assert db["reports"] == [s[::-1] for s in da["reports"]]  # the same reports, written the other way round
    cands = tmp_path / "c.txt"
    cands.write_text("\n".join(f"cand-{i:06d}" for i in range(5)) + "\n")
    ja, jb = tmp_path / "ja.json", tmp_path / "jb.json"
    assert run("decode", "--reports", a, "--candidates", cands, "--json", ja).exit_code == 0
    assert run("decode", "--reports", b, "--candidates", cands, "--json", jb).exit_code == 0
    assert json.loads(ja.read_text())["candidates"] == json.loads(jb.read_text())["candidates"]
    msg = _one_line_exit_2(run("decode", "--reports", b, "--candidates", cands, "--bit-order", "vetdp"))
    assert "--bit-order='vetdp' disagrees with --reports=" in msg


@pytest.mark.parametrize("content,words", [
    ('"k","h","m"\n1,2,3\n', ["header", "k,h,m,p,q,f"]),
    ("k,h,m,p,q,f\n128,2,8,0.5,0.75\n", ["5 values"]),
    ("k,h,m,p,q,f\n128,2,eight,0.5,0.75,0.5\n", ["m='eight'", "integer"]),
    ("k,h,m,p,q,f\n", ["two"]),
], ids=["header", "short-row", "not-int", "no-values"])
def test_bad_params_files_are_refused(tmp_path, content, words):
    path = tmp_path / "p.csv"
    path.write_text(content)
    (tmp_path / "v.txt").write_text("a\n")
    msg = _one_line_exit_2(run("encode", "--values", tmp_path / "v.txt", "--params", path, "--output",
                               tmp_path / "o.json"))
    assert all(w in msg for w in words), msg


@pytest.mark.parametrize("content,words", [
    ("1,0\n", ["disagrees", "one row per cohort"]),
    ("10,3,4\n10,11,0\n", ["line 2", "exceeds"]),
    ("10,3,4\n10,1.5,0\n", ["line 2", "'1.5'", "integer"]),
], ids=["rows", "count-above-size", "fraction"])
def test_bad_counts_files_are_refused(tmp_path, content, words):
    path = tmp_path / "c.csv"
    path.write_text(content)
    (tmp_path / "cands.txt").write_text("a\nb\n")
    msg = _one_line_exit_2(run("decode", "--counts", path, "--candidates", tmp_path / "cands.txt", "--num-cohorts",
                               "2", "--f", "0.5", "--p", "0.25", "--q", "0.75", "--h", "1"))
    assert all(w in msg for w in words), msg


def test_counts_need_the_privacy_parameters(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("10,3,4\n10,1,0\n")
    (tmp_path / "cands.txt").write_text("a\n")
    msg = _one_line_exit_2(run("decode", "--counts", path, "--candidates", tmp_path / "cands.txt"))
    assert "carries no f, p, q" in msg and "--params" in msg


@pytest.mark.parametrize("content,words", [
    ('"a",1,2\n"a",3,4\n', ["line 2", "repeats line 1"]),
    ('"a",1,2,3\n', ["3 positions", "h·m = 2"]),
    ('"a",0,2\n', ["position '0'", "[1, m·k = 2]"]),
    ('"",1,2\n', ["line 1", "blank"]),
], ids=["repeat", "too-many", "zero", "blank"])
def test_bad_map_files_are_refused(tmp_path, content, words):
    path = tmp_path / "m.csv"
    path.write_text(content)
    counts = tmp_path / "c.csv"
    counts.write_text("10,3,4\n")
    msg = _one_line_exit_2(run("decode", "--counts", counts, "--map", path, "--h", "2", "--f", "0.5", "--p", "0.25",
                               "--q", "0.75"))
    assert all(w in msg for w in words), msg


def test_the_reference_reports_need_their_parameters(reference_case):
    d, _ = reference_case
    msg = _one_line_exit_2(run("decode", "--reports", d / "reports.csv", "--candidates", d / "candidates.txt"))
    assert "carries no parameters" in msg and "--params" in msg and "--num-cohorts" in msg
    msg = _one_line_exit_2(run("sum-bits", "--reports", d / "reports.csv", "--output", d / "c.csv"))
    assert "how many cohorts" in msg
