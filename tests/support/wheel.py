"""The project's wheel, built once a session (``built_wheel`` in tests/conftest.py) for every test of it.

Building it takes a build environment of its own and a copy of the tree each time; the tests of the
wheel (tests/repository/test_packaging.py) and of the command installed from it
(tests/dynamodb_local/test_packaging.py) ask questions of the same file, so one build serves them all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class BuiltWheel:
    path: Path  # the wheel file
    log: str  # what ``pip wheel -v`` printed while building it (the backend's warnings among it)


def build_wheel(out: Path) -> BuiltWheel:
    """``pip wheel --no-deps -v`` of the checkout into ``out``, as a user would build it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DYNAMODB_LOCAL", "AWS_ENDPOINT", "PYTHON"))}
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(out), str(ROOT)]
    done = subprocess.run(command, cwd=out, env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    [wheel] = out.glob("sensor_digest-*.whl")
    return BuiltWheel(path=wheel, log=done.stdout + done.stderr)


def fresh_virtualenv(folder: Path, env: dict[str, str]) -> Path:
    """A virtualenv of nothing but the standard library at ``folder``; its Python. Packages go into
    it with ``pip_install`` (this suite's pip, run by that Python: the same install as its own pip's,
    without bootstrapping one into every new virtualenv)."""
    command = [sys.executable, "-m", "venv", "--without-pip", str(folder)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{command} failed:\n{done.stderr[-3000:]}"
    return folder / "bin" / "python"


def pip_install(python: Path, *requirements: str | Path, env: dict[str, str]) -> None:
    """``pip install --no-compile`` of ``requirements`` into ``python``'s environment, from the index
    (or pip's cache), as a user's ``pip install`` would."""
    command = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile"]
    command += [str(r) for r in requirements]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
