"""Every repository path a docstring, a doc page or a config file names exists: a file moved or
renamed without its mentions fails here (``cdk watch`` once watched a folder that had gone)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP_FOLDERS = ("infra", "src", "functions", "tests", "bench", "docs", "docs_hooks", ".ci")
FOLDERS = "|".join(re.escape(t) for t in TOP_FOLDERS)
NAMED = re.compile(r"(?<![\w/.-])((?:" + FOLDERS + r")/[A-Za-z0-9_./-]*[A-Za-z0-9_])")
SUFFIXES = (".py", ".md", ".json", ".toml", ".yml", ".yaml", ".cfg")
NOT_PATHS = ("*", "<", ">", "{", "}")  # a pattern (src/**) or a placeholder (docs/<page>.md)


def tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    return done.stdout.split()


def ignored(path: str) -> bool:
    return subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, check=False).returncode == 0


def named_paths(files: list[str]) -> set[tuple[str, str]]:
    found = set()
    for name in files:
        if not (name.endswith(SUFFIXES) or name in ("Makefile", ".ci/run")):
            continue
        text = (ROOT / name).read_text(encoding="utf-8", errors="ignore")
        found |= {(name, match.group(1).rstrip(".")) for match in NAMED.finditer(text)}
    return found


def test_every_repository_path_named_in_code_docs_and_config_exists() -> None:
    files = tracked()
    missing = sorted(
        f"{where} names {path}"
        for where, path in named_paths(files)
        if not any(ch in path for ch in NOT_PATHS)
        and "/.." not in path
        and not (ROOT / path).exists()
        and not any(f.startswith(path) for f in files)
        and not ignored(path)
    )
    assert missing == []


def test_the_check_sees_a_path_that_does_not_exist() -> None:
    gone = "infra" + "/settings.py"  # spelt in two, or this file would name it
    assert [m.group(1) for m in NAMED.finditer(f"the sizes ``{gone}`` gives them")] == [gone]
    assert not (ROOT / gone).exists()
