"""The account's default event bus, on this machine: what ``PutEvents`` would put, kept.

``LocalEventBus.put_events`` takes the announcer's entries as EventBridge does (at most 10, each with
a source, a detail type and a JSON object as detail, at most 256 KB) and keeps each as the event a
rule's target would receive (``id``, ``time``, ``source``, ``detail-type``, ``detail``): in memory,
and, under ``sensor-digest up``, appended to a JSON-lines file beside the state file, which
``sensor-digest alarms events`` reads.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from sensor_digest import exact_json

MAX_ENTRY_BYTES = 256 * 1024


class LocalEventBus:
    def __init__(self, path: Path | None = None, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.path = path
        self.events: list[dict[str, Any]] = []
        self.arrivals: list[float] = []  # ``time.monotonic()`` as each event was put (the benchmark's lag)
        self._lock = threading.Lock()
        self._clock = clock
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")

    def put_events(self, *, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        if not 1 <= len(Entries) <= 10:
            raise ValueError(f"PutEvents takes 1 to 10 entries, got {len(Entries)}")
        answers: list[dict[str, Any]] = []
        kept: list[dict[str, Any]] = []
        for entry in Entries:
            try:
                detail = json.loads(entry["Detail"], parse_float=Decimal)
                if not entry.get("Source") or not entry.get("DetailType") or not isinstance(detail, dict):
                    raise ValueError("an entry needs Source, DetailType and a JSON object as Detail")
                if len(json.dumps(entry).encode()) > MAX_ENTRY_BYTES:
                    raise ValueError("an entry is over 256 KB")
            except (KeyError, ValueError) as bad:
                answers.append({"ErrorCode": "MalformedDetail", "ErrorMessage": str(bad)})
                continue
            event_id = str(uuid.uuid4())
            kept.append(
                {
                    "id": event_id,
                    "time": self._clock().strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "source": entry["Source"],
                    "detail-type": entry["DetailType"],
                    "detail": detail,
                }
            )
            answers.append({"EventId": event_id})
        with self._lock:
            self.events.extend(kept)
            self.arrivals.extend([time.monotonic()] * len(kept))
            if self.path is not None and kept:
                with self.path.open("a", encoding="utf-8") as out:
                    out.writelines(exact_json.dumps(e) + "\n" for e in kept)  # values exact, as the detail holds them
        return {"FailedEntryCount": sum("ErrorCode" in a for a in answers), "Entries": answers}


def read_events(path: Path) -> list[dict[str, Any]]:
    """The events a local bus kept in ``path`` (exact decimals), oldest first."""
    if not path.is_file():
        return []
    return [json.loads(line, parse_float=Decimal) for line in path.read_text(encoding="utf-8").splitlines() if line]
