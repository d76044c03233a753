"""The suite's order: its longest modules first, so that the workers end together.

``--dist worksteal`` gives each worker a run of the collected tests and lets a worker that is done
take tests from the end of another's run. With a one-minute test last in a run, one worker waits
for it alone; with the long ones first, what is left at the end is short enough to share. The
list is of whole modules (a module's tests stay together, their fixtures with them), the slowest of
``make test``'s printed durations (docs/testing.md); a module left off only runs later.
"""

from __future__ import annotations

import pytest

LONGEST_FIRST = (
    "tests/dynamodb_local/test_packaging.py",
    "tests/repository/test_packaging.py",
    "tests/dynamodb_local/reliability/test_exactness.py",
    "tests/dynamodb_local/local/test_page_at_its_limits.py",
    "tests/dynamodb_local/local/test_pipeline.py",
    "tests/dynamodb_local/local/test_up.py",
    "tests/synth/test_context.py",
    "tests/dynamodb_local/reliability/test_concurrency.py",
    "tests/dynamodb_local/reliability/test_fifo_model.py",
    "tests/dynamodb_local/reliability/test_model.py",
    "tests/dynamodb_local/test_bench_tools.py",
)


def longest_first(items: list[pytest.Item]) -> None:
    """``items`` reordered in place: ``LONGEST_FIRST``'s modules in its order, then the rest as collected."""
    rank = {module: n for n, module in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
