"""Lambda entry point of the ingest path: SQS batch in, partial batch response out.

Thin by design (``sensor_digest/entry.py``): ``service()`` builds the service once per container
with ``build_service`` from the environment and a default boto3 session (the local runtime and
the tests call ``build_service`` with their own settings and session), the event goes to it, and
the outcome becomes the response, metrics and one log line. Lambda passes a context, which
Powertools reads, so a caller outside Lambda passes one too (``FakeContext`` in the tests).
"""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.config import IngestSettings
from sensor_digest.entry import from_environment
from sensor_digest.ingest import build_service

__all__ = ["build_service", "handler", "reset", "service"]

entry = from_environment(names.INGEST_SERVICE, build_service, IngestSettings.from_env, "batch done")
service = entry.service
handler = entry.handler
reset = entry.reset
