"""`vetdp init`: a scaffold whose sample mechanism passes `vetdp check` and pytest straight away, never overwriting."""

import json
import subprocess
import sys
from pathlib import Path

VETDP = str(Path(sys.executable).parent / "vetdp")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([VETDP, *args], cwd=cwd, capture_output=True, text=True, timeout=3600)


def test_init_scaffold_passes_check_and_its_proof_is_pinned(tmp_path):
    r = run("init", "proj", "--package", "acme", "--mechanism", "coin", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    root = tmp_path / "proj"
    for rel in ("pyproject.toml", "src/acme/coin.py", "src/acme/specs/coin.py", "src/acme/lemmas.py",
                "proofs/coin.md", "proofs/pinned/coin.py.txt", ".github/workflows/vetdp.yml"):
        assert (root / rel).is_file(), rel
    assert "[tool.vetdp]" in (root / "pyproject.toml").read_text()
    # the proof names its constants; its obligations are derived (recorded beside the vetted source when blessed)
    assert "\nobligations:" not in (root / "proofs/coin.md").read_text()
    assert "# coin.keep_probability.sound\n" in (root / "proofs/pinned/coin.py.txt").read_text()
    assert "vetdp check" in (root / ".github/workflows/vetdp.yml").read_text()
    check = run("check", "--json", str(tmp_path / "r.json"), cwd=root)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
    names = {(x["spec"], x["check"]) for x in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert {("coin", "privacy.sound"), ("coin", "proof.up_to_date"), ("coin", "obligation.coin.epsilon.sound"),
            ("coin", "lemma.coin.loss_is_epsilon")} <= names
    # a bug in the sample (the map halved) fails the privacy clause
    impl = root / "src" / "acme" / "coin.py"
    text = impl.read_text()
    impl.write_text(text.replace("return 0.0 if d_in == 0 else loss", "return 0.0 if d_in == 0 else loss / 2"))
    bad = run("check", "-k", "coin::privacy.sound", cwd=root)
    assert bad.returncode == 1 and "privacy.sound" in bad.stdout and "reproduce" in bad.stdout


def test_init_never_overwrites(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.vetdp]\nproofs = 'p'\n")
    r = run("init", ".", cwd=tmp_path)
    assert r.returncode == 2 and "never overwrites" in r.stderr and "[tool.vetdp]" in r.stderr
    assert not (tmp_path / "src").exists()


def test_init_appends_to_an_existing_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'mine'\nversion = '1'\n")
    r = run("init", ".", "--package", "minedp", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    text = (tmp_path / "pyproject.toml").read_text()
    assert text.startswith("[project]\nname = 'mine'") and 'specs = ["minedp.specs"]' in text


def test_init_rejects_a_package_name_that_is_not_an_identifier(tmp_path):
    r = run("init", ".", "--package", "my-dp", cwd=tmp_path)
    assert r.returncode == 2 and "--package='my-dp'" in r.stderr


def test_init_refuses_keywords_and_shadowing_names_before_writing(tmp_path):
    from click.testing import CliRunner

    from vetdp.cli import main

    for args, said in ((["--package", "class"], "not a keyword"), (["--package", "json"], "would shadow"),
                       (["--mechanism", "lemmas"], "writes itself")):
        r = CliRunner().invoke(main, ["init", str(tmp_path / "p"), *args])
        assert r.exit_code == 2 and said in r.output and "Traceback" not in r.output, r.output
    assert not (tmp_path / "p").exists()


def test_init_into_a_path_under_a_file_or_an_unwritable_folder_is_refused_before_writing(tmp_path):
    from click.testing import CliRunner

    from vetdp.cli import main

    (tmp_path / "afile").write_text("")
    r = CliRunner().invoke(main, ["init", str(tmp_path / "afile" / "sub")])
    assert r.exit_code == 2 and "is a file, not a folder" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["init", "/proc/vetdp-init-test/proj"])  # a file system nobody can write
    assert r.exit_code == 2 and "cannot be written" in r.output and "Traceback" not in r.output


def test_init_that_fails_midway_leaves_nothing_written(tmp_path, monkeypatch):
    """Issue 24: `init --package class` left a half-written scaffold. Any failure after writing began (here the
    proof's blessing) now undoes it: created files and folders removed, an existing pyproject.toml restored."""
    from click.testing import CliRunner

    import vetdp.cli.init as init_module
    from vetdp.cli import main

    before = "[project]\nname = 'mine'\nversion = '1'\n"
    (tmp_path / "pyproject.toml").write_text(before)
    (tmp_path / "keep.txt").write_text("mine")
    monkeypatch.setattr(init_module, "_bless", lambda root, stem: "z3 said no")
    r = CliRunner().invoke(main, ["init", str(tmp_path)])
    assert r.exit_code == 2 and "nothing was left written" in r.output and "z3 said no" in r.output, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "pyproject.toml"]
    assert (tmp_path / "pyproject.toml").read_text() == before
    r = CliRunner().invoke(main, ["init", str(tmp_path / "fresh")])
    assert r.exit_code == 2 and not (tmp_path / "fresh").exists()


def test_init_requires_vetdp_by_a_direct_reference_that_only_this_project_satisfies(tmp_path):
    """vetdp is not on the index: a bare "vetdp" would install whoever registers the name. The scaffold names the
    vetdp it was made with (here this checkout, installed editable) by a PEP 508 direct reference."""
    import tomllib

    from packaging.requirements import Requirement

    r = run("init", "proj", "--package", "acme", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    text = (tmp_path / "proj" / "pyproject.toml").read_text()
    project = tomllib.loads(text)["project"]
    reqs = [Requirement(x) for x in project["dependencies"] + project["optional-dependencies"]["test"]]
    vetdp = [q for q in reqs if q.name == "vetdp"]
    assert len(vetdp) == 2 and all(q.url == Path(__file__).resolve().parents[1].as_uri() for q in vetdp)
    assert [sorted(q.extras) for q in vetdp] == [[], ["harness"]]
    assert "not on the package index" in text and "pip wheel --no-deps -w dist ." in text


def test_vetdp_reference_follows_what_pip_recorded(monkeypatch):
    import importlib.metadata

    from vetdp.cli import init as init_module

    class Dist:
        def __init__(self, text):
            self.text = text

        def read_text(self, name):
            return self.text

    recorded = {
        '{"url": "file:///w/dist/vetdp-0.1.0-py3-none-any.whl", "archive_info": {}}':
            ("file:///w/dist/vetdp-0.1.0-py3-none-any.whl", "the wheel vetdp was installed from"),
        '{"url": "https://example.org/me/vetdp.git", "vcs_info": {"vcs": "git", "commit_id": "0123abc"}}':
            ("git+https://example.org/me/vetdp.git@0123abc", "the git commit vetdp was installed from"),
    }
    for text, expected in recorded.items():
        monkeypatch.setattr(importlib.metadata, "distribution", lambda name, t=text: Dist(t))
        assert init_module.vetdp_reference() == expected
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Dist(None))  # nothing recorded
    url, what = init_module.vetdp_reference()
    assert url == Path(init_module.__file__).resolve().parents[2].as_uri() and "source tree" in what
