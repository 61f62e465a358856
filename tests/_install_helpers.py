"""A fresh venv with vetdp installed non-editable, as a user installs a tool (shared by the install tests).

No network: the venv reaches the dependencies through a .pth file pointing at this interpreter's
site-packages, and vetdp itself is installed with ``--no-deps`` from a copy of this tree, which is
deleted afterwards so that nothing can read the source checkout by accident.
"""

import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from vetdp.obligations.pinning import default_proofs_dir

REPO = default_proofs_dir().parent


def _copy_tree(base: Path) -> Path:
    """A copy under ``base`` of what building vetdp reads from this tree."""
    src = base / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    for name in ("vetdp", "impl", "specs", "proofs/findings", "examples/oue"):  # the findings registry ships
        shutil.copytree(REPO / name, src / name, ignore=ignore)
    (src / "ci").mkdir()
    shutil.copy(REPO / "ci" / "gate.toml", src / "ci" / "gate.toml")
    return src


def runtime_install(base: Path) -> Path:
    """bin/ of a fresh venv under ``base`` holding ``pip install <a copy of this tree>``: non-editable, without extras,
    so with vetdp's base dependencies only (NumPy, from pip's cache or index) and nothing of this interpreter's."""
    src = _copy_tree(base)
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", str(src)],
                         capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    shutil.rmtree(src)
    return env_dir / "bin"


def noneditable_install(base: Path, imports: str = "vetdp, vetdp.impl") -> Path:
    """bin/ of a venv under ``base`` holding vetdp built from a copy of this tree; ``imports`` must resolve there."""
    src = _copy_tree(base)
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", str(src)],
                         capture_output=True, text=True, timeout=3600)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    shutil.rmtree(src)  # nothing of the copied tree may be what the installed vetdp reads
    where = subprocess.run([str(py), "-c", f"import {imports}; import vetdp; print(vetdp.__file__)"],
                           cwd=base, check=True, capture_output=True, text=True).stdout
    assert str(site) in where and str(REPO) not in where, where
    return env_dir / "bin"
