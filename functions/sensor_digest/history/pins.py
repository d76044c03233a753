"""The zone each sensor's imported rows are dated in, pinned at its first import (docs/import.md,
"The day of a row"): ``IMPZONE#<sensor_id>`` in the ledger, its ``Zone``, never expiring.

A row's identity is kept on the day it counted on (``history/counter.py``). For an import of the
same rows again to find them, each row must fall on the same day at every import: so a sensor's
rows are dated in one zone for good, the one its first import used (its registered zone then, else
the digest's), whatever its profile, or the default, says later. The first import to date a sensor's
rows writes the pin on condition that there is none; another that raced it reads the winner's from
the refusal. Pins never change, so each is read once per process (``LIMIT`` kept).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from threading import Lock
from typing import TYPE_CHECKING

from sensor_digest.store import dynamo, expressions, schema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

LIMIT = 100_000
"""The most pins a process keeps (least recently used forgotten, and read again when needed)."""


class ZonePins:
    """The pins of one ledger table, read and written through ``client``."""

    def __init__(self, ledger: str, client: DynamoDBClient, limit: int = LIMIT) -> None:
        self._ledger = ledger
        self._client = client
        self._limit = limit
        self._kept: OrderedDict[int, str] = OrderedDict()
        self._lock = Lock()
        self.reads = 0
        self.writes = 0

    def prefetch(self, sensor_ids: Iterable[int]) -> None:
        """Read the pins of these sensors that are not kept (one ``BatchGetItem`` per 100; eventually
        consistent: a pin missed is found by the write that would make it)."""
        wanted = [s for s in dict.fromkeys(sensor_ids) if self.get(s) is None]
        if not wanted:
            return
        keys = [schema.import_zone_key(s) for s in wanted]
        found = dynamo.batch_get(self._client, self._ledger, keys, consistent=False)
        self.reads += (len(keys) + 99) // 100
        for item in found:
            sensor = int(str(item[schema.LEDGER_KEY]["S"]).removeprefix(schema.IMPORT_ZONE_PREFIX))
            self._keep(sensor, _zone_of(item))

    def get(self, sensor_id: int) -> str | None:
        """The sensor's pinned zone, if kept."""
        with self._lock:
            zone = self._kept.get(sensor_id)
            if zone is not None:
                self._kept.move_to_end(sensor_id)
            return zone

    def pin(self, sensor_id: int, zone: str) -> str:
        """The sensor's pinned zone: ``zone``, written now if it has none, else the one it has."""
        kept = self.get(sensor_id)
        if kept is not None:
            return kept
        item = {**schema.import_zone_key(sensor_id), schema.IMPORT_ZONE: {"S": zone}}
        params = expressions.put_if_absent(self._ledger, item, schema.LEDGER_KEY)
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        self.writes += 1
        found = dynamo.conditional_write("PutItem", lambda: self._client.put_item(**params))  # type: ignore[arg-type]
        return self._keep(sensor_id, zone if found is None else _zone_of(found))

    def _keep(self, sensor_id: int, zone: str) -> str:
        with self._lock:
            self._kept[sensor_id] = zone
            self._kept.move_to_end(sensor_id)
            while len(self._kept) > self._limit:
                self._kept.popitem(last=False)
        return zone


def _zone_of(item: schema.Item) -> str:
    value = item.get(schema.IMPORT_ZONE, {})
    return str(value.get("S", "")) if isinstance(value, dict) else ""
