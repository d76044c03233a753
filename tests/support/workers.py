"""Code run in child processes by the concurrency scenario (importable under the spawn method)."""

from __future__ import annotations

import os
from typing import Any


def run_handler_on_batches(env: dict[str, str], batches: list[list[dict[str, Any]]]) -> dict[str, int]:
    """One 'Lambda container': the real ingest handler over its batches, redelivering its failures."""
    os.environ.update(env)
    from ingest import handler as module  # noqa: PLC0415 - only after the environment is in place
    from sensor_digest_tools.lambda_runtime.events import FakeContext  # noqa: PLC0415

    queue = [list(b) for b in batches]
    invocations = failures = 0
    while queue:
        records = queue.pop(0)
        response = module.handler({"Records": records}, FakeContext())
        invocations += 1
        failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
        failures += len(failed)
        retry = [r for r in records if r["messageId"] in failed]
        if retry:
            queue.append(retry)
    return {"invocations": invocations, "failures": failures}
