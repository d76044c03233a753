"""``sensor-digest``: the local pipeline and the commands that act on it or on a deployed stack.

The application is ``apps.app``; each command module registers its commands on it when imported:
``local`` (demo, up, env), ``send``, ``tables`` (counts, summary, summary rebuild), ``dlq`` (list,
redrive, stamp), ``sensors`` (the registry) and ``silence`` (sensors gone quiet). Shared options
live in ``options``, how a command ends (result, error line, exit code) in ``output``, tables in
``render``.
"""

from __future__ import annotations

from sensor_digest_tools.cli import dlq, local, send, sensors, silence, tables
from sensor_digest_tools.cli.apps import app

__all__ = ["app", "dlq", "local", "main", "send", "sensors", "silence", "tables"]


def main() -> None:  # pragma: no cover - the console script calls app() directly
    app()
