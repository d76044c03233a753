"""The silence check on the local pipeline (``up``): the deployed check's code, with its own
settings (``SilenceSettings``), run every so many seconds on a thread of its own instead of hourly
by EventBridge.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sensor_digest.config import SilenceSettings
from sensor_digest.silence.check import CONNECTIONS, SilenceCheck, SilencePage
from sensor_digest.store.dynamo import make_client


def watch_silence(
    settings: SilenceSettings,
    session: Any,
    *,
    every: float,
    stop: threading.Event,
    errors: list[BaseException],
    heard: Callable[[], Callable[[SilencePage], None] | None],
) -> None:
    """Run the check every ``every`` seconds until ``stop`` is set: each answer to the listener
    ``heard()`` gives at that moment (none: nobody listens), each failure kept in ``errors``."""
    check = SilenceCheck(
        table_name=settings.table_name,
        client=make_client(session, max_pool_connections=CONNECTIONS),
        default_hours=settings.silence_hours,
        default_zone=settings.timezone,
    )
    while not stop.wait(every):
        try:
            found = check.run()
        except Exception as exc:
            errors.append(exc)
            continue
        listener = heard()
        if listener is not None:
            listener(found)
