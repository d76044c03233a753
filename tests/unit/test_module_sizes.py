"""No source module over 350 lines (the house's rule): a module that outgrows it is split along its
seams, not left to grow. Engine: none (reads the files)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 350
SOURCES = ("functions", "src", "infra", "bench", "docs_hooks")


def test_no_source_module_is_over_350_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for folder in SOURCES
        for path in (ROOT / folder).rglob("*.py")
    }
    assert len(sizes) > 100  # the tree was found
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}
