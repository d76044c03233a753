"""The deployed import's batch function: one batch of a Distributed Map run over an object's rows.

Its event is the Distributed Map's batch (ItemReader + ItemBatcher): ``{"Items": [{"position": n,
"row": ...}, ...], "BatchInput": {"object_id": hex, "format": "jsonl" | "csv", "lines": {...},
"reports": {"bucket": ..., "prefix": ...}}}``: each item a row and its position in the object (the
Map's ``$$.Map.Item.Index``), the batch input what the prepare step found of the object. The batch
is one chunk (``chunks.import_chunk``); its figures and rejected rows are written to
``<prefix>batches/<first position>.json`` (the finish step adds them up), and returned. A fault
that a retry may cure is raised: the Map retries the batch, and its rows' identities, kept on their
days, keep a batch that is written again from counting twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sensor_digest import names
from sensor_digest.config import ImportSettings, UnknownSensors
from sensor_digest.counting.history import HistoryCounter
from sensor_digest.history.chunks import Dating, import_chunk
from sensor_digest.history.pins import ZonePins
from sensor_digest.history.record import Figures
from sensor_digest.history.rows import FORMATS, Rejected, Row
from sensor_digest.history.source import Lines
from sensor_digest.profiles import ProfileCache, Profiles
from sensor_digest.store import dynamo, objects
from sensor_digest.store.dynamo import ClientSource

OBJECT_ID = re.compile(r"[0-9a-f]{32}")
MAX_ITEMS = 10_000
BATCH_PREFIX = "batches/"


@dataclass(frozen=True)
class Batch:
    """A batch as its event names it, checked (``ValueError`` for anything the state machine does not send)."""

    object_id: bytes
    fmt: str
    lines: Lines
    bucket: str
    prefix: str
    rows: Sequence[Row]

    @property
    def first(self) -> int:
        return min(r.position for r in self.rows)

    @property
    def last(self) -> int:
        return max(r.position for r in self.rows)

    @classmethod
    def of(cls, event: Mapping[str, Any]) -> Batch:
        items, given = event.get("Items"), event.get("BatchInput")
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS or not isinstance(given, Mapping):
            raise ValueError("a batch is {'Items': [1 to 10,000 items], 'BatchInput': {...}}")
        object_id, fmt, reports = given.get("object_id"), given.get("format"), given.get("reports")
        if not (isinstance(object_id, str) and OBJECT_ID.fullmatch(object_id)) or fmt not in FORMATS:
            raise ValueError("the batch input must name the object (object_id) and its format")
        if not (isinstance(reports, Mapping) and all(isinstance(reports.get(k), str) for k in ("bucket", "prefix"))):
            raise ValueError("the batch input must name where its reports go (reports.bucket, reports.prefix)")
        lines = Lines.from_json(given.get("lines", {"first": 1}))
        rows = []
        for item in items:
            position = item.get("position") if isinstance(item, Mapping) else None
            if type(position) is not int or position < 0 or "row" not in item:
                raise ValueError("an item is {'position': its index, 'row': the row}")
            rows.append(Row(position, lines.line(position), item["row"]))
        return cls(bytes.fromhex(object_id), str(fmt), lines, reports["bucket"], reports["prefix"], rows)


@dataclass
class BatchReport:
    first: int = 0
    last: int = 0
    figures: Figures = field(default_factory=Figures)
    rejected: list[Rejected] = field(default_factory=list)

    def response(self) -> dict[str, Any]:
        return {"first": self.first, "last": self.last, "figures": self.figures.as_json()}

    def metrics(self) -> Mapping[str, int]:
        f = self.figures
        return {
            names.METRIC_IMPORT_COUNTED: f.counted,
            names.METRIC_IMPORT_ALREADY: f.already,
            names.METRIC_IMPORT_DUPLICATE: f.duplicates,
            names.METRIC_IMPORT_REJECTED: f.rejected,
        }

    def log_fields(self) -> Mapping[str, Any]:
        return {"first": self.first, "last": self.last, **self.figures.as_json()}


def figures_of(result: Any) -> Figures:
    """A chunk's figures (``chunks.ChunkResult``)."""
    count = result.count
    return Figures(
        rows=result.rows,
        counted=count.counted,
        already=count.already,
        duplicates=count.duplicates,
        rejected=len(result.rejected),
        days=count.days,
        writes=count.writes,
        reads=count.reads,
        zone_kept=result.zone_kept,
    )


class BatchService:
    """One batch of the deployed import (see the module)."""

    def __init__(self, *, counter: HistoryCounter, dating: Dating, s3: Any) -> None:
        self._counter = counter
        self._dating = dating
        self._s3 = s3

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> BatchReport:
        batch = Batch.of(event)
        result = import_chunk(
            self._counter, batch.object_id, batch.rows, batch.fmt, self._dating, first=batch.first, last=batch.last
        )
        report = BatchReport(batch.first, batch.last, figures_of(result), result.rejected)
        key = f"{batch.prefix}{BATCH_PREFIX}{batch.first:012d}.json"
        objects.put_json(
            self._s3,
            batch.bucket,
            key,
            {**report.response(), "rejected": [r.entry() for r in result.rejected]},
        )
        return report


def build_service(settings: ImportSettings, session: ClientSource) -> BatchService:
    client = dynamo.make_client(session)
    ledger = settings.ledger_table_name
    counter = HistoryCounter(table_name=settings.table_name, ledger_table_name=ledger, client=client)
    profiles = ProfileCache(
        Profiles(table_name=settings.table_name, client=client), ttl=float(settings.profile_cache_seconds)
    )
    reject = settings.unknown_sensors == UnknownSensors.REJECT
    dating = Dating(settings.timezone, profiles, ZonePins(ledger, client), reject_unknown=reject)
    return BatchService(counter=counter, dating=dating, s3=session.client("s3"))
