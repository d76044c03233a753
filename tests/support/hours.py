"""Hours in the reliability suites: what the day items' ``HourCounts`` hold, what they should hold.

``hour_truth`` dates every distinct report by the project's own rules (``messages.read_pending``,
``in_zone``), so a scenario's messages give the hours exactly once would leave; ``hour_counts``
reads them back; ``hours_match_counts`` checks that on every day item the hours sum to
``DataCount`` (every day item of a test is created with hours).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from sensor_digest.errors import RejectedMessage
from sensor_digest.messages import SensorMessage, read_pending
from sensor_digest.store import schema, tally
from sensor_digest.store.reads import scan_all
from sensor_digest_tools.lambda_runtime.events import QueuedMessage

HourKey = tuple[int, str, str]


def _valid(messages: Iterable[QueuedMessage], zone: tzinfo) -> Iterator[SensorMessage]:
    """The valid reports among ``messages``, read and dated in ``zone`` as ingest reads them."""
    for queued in messages:
        try:
            yield read_pending(
                message_id=queued.message_id, body=queued.body, sent_timestamp=str(queued.sent_timestamp_ms)
            ).in_zone(zone)
        except RejectedMessage:
            continue


def hour_truth(messages: Iterable[QueuedMessage], zone: tzinfo = ZoneInfo("UTC")) -> Counter[HourKey]:
    """(sensor, day, hour) -> count of the valid reports among ``messages`` (each counted once)."""
    truth: Counter[HourKey] = Counter()
    for message in _valid(messages, zone):
        truth[(message.sensor_id, message.day, message.hour)] += message.count
    return truth


def hour_counts(client: Any, table: str) -> dict[HourKey, int]:
    """Every day item's hours, by (sensor, day, hour); zero elements left out."""
    out: dict[HourKey, int] = {}
    for item in scan_all(client, table):
        found = schema.day_count_of_item(item)
        hours = schema.hour_counts_of_item(item) if found is not None else None
        for hour, n in (hours or {}).items():
            if n:
                out[(found[0], found[1], hour)] = n  # type: ignore[index]
    return out


def hours_match_counts(client: Any, table: str) -> list[tuple[int, str]]:
    """The day items whose hours do not sum to their ``DataCount`` (or that have none): ``[]`` when all do."""
    wrong = []
    for item in scan_all(client, table):
        found = schema.day_count_of_item(item)
        if found is None:
            continue
        hours = schema.hour_counts_of_item(item)
        if hours is None or sum(hours.values()) != found[2]:
            wrong.append((found[0], found[1]))
    return wrong


ReadingKey = tuple[int, str, str, str]
"""(sensor, day, hour, reading name)."""


def readings_truth(messages: Iterable[QueuedMessage], zone: tzinfo = ZoneInfo("UTC")) -> dict[ReadingKey, tuple]:
    """(sensor, day, hour, name) -> (count, sum, min, max) of the valid reports' readings among
    ``messages``, each report once (its first message), computed in decimal."""
    values: dict[ReadingKey, list] = {}
    seen: set[tuple[int, str]] = set()
    for message in _valid(messages, zone):
        if (message.sensor_id, message.event_id) in seen:
            continue
        seen.add((message.sensor_id, message.event_id))
        for name, value in message.readings:
            values.setdefault((message.sensor_id, message.day, message.hour, name), []).append(value)
    return {key: (len(v), sum(v), min(v), max(v)) for key, v in values.items()}


def readings_read(client: Any, table: str) -> dict[ReadingKey, tuple]:
    """The same, as the day items keep them."""
    found: dict[ReadingKey, tuple] = {}
    for item in scan_all(client, table):
        if schema.DATA_COUNT not in item or schema.READINGS not in item:
            continue
        sensor, day = schema.sensor_of_item(item), schema.text_of(item, schema.DATE)
        for name, kept in tally.readings_of_item(item).items():
            for hour, stats in kept.hours.items():
                found[(sensor, day, hour, name)] = (stats.count, *stats.values())
    return found
