"""The previous release's own code, run as its Lambda handler against the tables a test uses.

The previous release is the last commit before the compact ledger (``f127501``, 2026-11-25): one
marker per message, no hashes, no hours. Its ``functions/`` folder is frozen in
``releases/functions-f127501.tar.gz`` (made by ``git archive f127501 functions | gzip -n -9``), so the
tests need no git history. ``PreviousRelease`` unpacks it once into a folder of its own and runs
its ``ingest/handler.py`` in a child process whose import path holds that folder alone (the child
checks it imported the old ``sensor_digest``, not this checkout's), with the environment a deployed
function would have (``TABLE_NAME``, ``LEDGER_TABLE_NAME``, ``DLQ_URL``) and the engine's endpoint:
exactly what a rollback deploys, against the same DynamoDB Local tables. Given ``dlq_url`` and
``sqs_endpoint`` (moto's server, ``LocalSqs``), it writes the reports it rejects there, as its own
dead letters; ``settings``: more of its environment (``UNKNOWN_SENSORS``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sensor_digest_tools.lambda_runtime.events import QueuedMessage, sqs_event

RELEASE = "f127501"
ARCHIVE = Path(__file__).parent / "releases" / f"functions-{RELEASE}.tar.gz"

_RUNNER = """
import json, sys
root, answer = sys.argv[1], sys.argv[2]
import sensor_digest
if not sensor_digest.__file__.startswith(root):
    raise SystemExit(f"imported {sensor_digest.__file__}, not the previous release under {root}")
from ingest.handler import handler

class Context:
    function_name = "sensor-digest-previous-release"
    function_version = "$LATEST"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:sensor-digest-previous-release"
    aws_request_id = "previous-release"
    log_group_name = "/aws/lambda/sensor-digest-previous-release"
    log_stream_name = "previous-release"
    def get_remaining_time_in_millis(self):
        return 300_000

response = handler(json.load(sys.stdin), Context())
with open(answer, "w") as out:
    json.dump(response, out)
"""


class PreviousRelease:
    """The previous release's ingest function, deployed over ``table`` and ``ledger`` (see the module)."""

    def __init__(
        self,
        workdir: Path,
        *,
        table: str,
        ledger: str,
        endpoint: str,
        dlq_url: str | None = None,
        sqs_endpoint: str | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        self.root = workdir / f"release-{RELEASE}"
        if not (self.root / "functions").is_dir():
            with tarfile.open(ARCHIVE) as archive:
                archive.extractall(self.root, filter="data")
        self._answer = workdir / "previous-release-answer.json"
        self._env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "AWS_ENDPOINT"))},
            "PYTHONPATH": str(self.root / "functions"),
            "TABLE_NAME": table,
            "LEDGER_TABLE_NAME": ledger,
            # without a dead-letter queue of the test's: valid reports only
            "DLQ_URL": dlq_url or "http://127.0.0.1:9/000000000000/unused-dead-letters",
            "AWS_ENDPOINT_URL_DYNAMODB": endpoint,
            "POWERTOOLS_METRICS_NAMESPACE": "SensorDigestPreviousRelease",
            "POWERTOOLS_LOG_LEVEL": "WARNING",
            "POWERTOOLS_TRACE_DISABLED": "true",
            **({"AWS_ENDPOINT_URL_SQS": sqs_endpoint} if sqs_endpoint else {}),
            **(settings or {}),
        }

    def ingest(self, messages: Iterable[QueuedMessage]) -> dict[str, Any]:
        """One invocation with these messages (a new container each time): its partial batch response."""
        event = json.dumps(sqs_event(list(messages)))
        done = subprocess.run(
            [sys.executable, "-c", _RUNNER, str(self.root / "functions"), str(self._answer)],
            input=event,
            env=self._env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"the previous release failed ({done.returncode}): {done.stderr[-2000:]}")
        answer: dict[str, Any] = json.loads(self._answer.read_text())
        return answer
