"""The deployed import's first and last steps, around the Distributed Map (docs/import.md, "On AWS").

``PrepareService``: the object's identity (bucket, key, version, else ETag), its record (a finished
import with no rejected row is not run again, unless asked), and every line read once before any is
counted: Distributed Map's item readers stop at a JSON line that is not JSON (and no one can say what
they make of a CSV record that breaks the format), so an object holding one is refused whole, nothing
counted, its bad lines in ``<prefix>refused.jsonl``; the rows' count, and where positions shift
from lines (blank lines), for the batches' error reports.

``FinishService``: the batches' figures added up (``<prefix>batches/``), their rejected rows in one
error report (``<prefix>rejected.jsonl``, by line), and the record finished.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.config import ImportSettings
from sensor_digest.errors import UnreadableInput
from sensor_digest.history.reading import Skipped, lines_of, rows_of
from sensor_digest.history.record import Figures, Records
from sensor_digest.history.rows import CSV, JSONL, Unreadable, shown
from sensor_digest.history.service import BATCH_PREFIX
from sensor_digest.history.source import MAX_SHIFTS, Lines, SourceObject, format_of, s3_object
from sensor_digest.store import dynamo, objects
from sensor_digest.store.dynamo import ClientSource

REPORTS_PREFIX = "import-reports/"
MERGED_REJECTED = 1_000_000
"""The most rejected rows the finish step gathers in one error report (the rest stay in the batches' reports)."""
SHOWN_BAD_LINES = 1000


@dataclass
class StepReport:
    """A step's answer: the state machine's next input (``response``), and nothing to publish."""

    answer: dict[str, Any] = field(default_factory=dict)

    def response(self) -> dict[str, Any]:
        return self.answer

    def metrics(self) -> Mapping[str, int]:
        return {}

    def log_fields(self) -> Mapping[str, Any]:
        return {k: v for k, v in self.answer.items() if k in ("action", "name", "rows", "figures", "reason")}


def reports_prefix(source: SourceObject) -> str:
    return f"{REPORTS_PREFIX}{source.object_id.hex()}/"


@dataclass
class Scan:
    """An object read through once: its rows, where line numbers shift from positions, its bad lines."""

    rows: int = 0
    blank: int = 0
    shifts: list[tuple[int, int]] = field(default_factory=list)
    bad: list[dict[str, Any]] = field(default_factory=list)
    bad_count: int = 0


def scan(blocks: Iterator[bytes], fmt: str) -> Scan:
    """Every row of the object checked as Distributed Map's reader needs it (a JSON line that is JSON,
    a CSV record that is one and matches its header)."""
    found, skipped = Scan(), Skipped()
    offset = 2 if fmt == CSV else 1
    for row in rows_of(lines_of(blocks), fmt, skipped):
        found.rows += 1
        extra = row.line - offset - row.position
        if extra != (found.shifts[-1][1] if found.shifts else 0):
            found.shifts.append((row.position, extra))
        reason = row.value.reason if isinstance(row.value, Unreadable) else None
        if reason is None and fmt == JSONL:
            try:
                json.loads(row.value)
            except ValueError as exc:
                reason = f"the line is not JSON ({exc}): the deployed import's reader would stop at it"
        if reason is not None:
            found.bad_count += 1
            if len(found.bad) < SHOWN_BAD_LINES:
                found.bad.append({"line": row.line, "reason": reason, "row": shown(row)})
    found.blank = skipped.blank
    return found


class PrepareService:
    def __init__(self, *, records: Records, s3: Any, bucket: str) -> None:
        self._records = records
        self._s3 = s3
        self._bucket = bucket

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> StepReport:
        bucket, key = event.get("bucket"), event.get("key")
        if not (isinstance(bucket, str) and isinstance(key, str) and bucket and key):
            raise UnreadableInput("the import's input must name the object: {'bucket': ..., 'key': ...}")
        fmt = format_of(key, event.get("format") if isinstance(event.get("format"), str) else None)
        head = objects.head(self._s3, bucket, key)
        source = s3_object(bucket, key, version=head.version, etag=head.etag)
        prefix = reports_prefix(source)
        answer: dict[str, Any] = {
            "object": {"bucket": bucket, "key": key, "version": head.version or "null", "name": source.name},
            "identity": source.identity,
            "object_id": source.object_id.hex(),
            "format": fmt,
            "reports": {"bucket": self._bucket, "prefix": prefix},
        }
        record = self._records.get(source)
        if record is not None and record.done and not event.get("again"):
            figures = record.figures.as_json()
            return StepReport({**answer, "action": "skip", "figures": figures, "finished_at": record.finished_at})
        found = scan(objects.blocks(self._s3, bucket, key, head.version), fmt)
        refusal = None
        if found.bad_count:
            objects.put_lines(self._s3, self._bucket, f"{prefix}refused.jsonl", found.bad)
            refusal = (
                f"{found.bad_count} line(s) the deployed import cannot read (first: line {found.bad[0]['line']}, "
                f"{found.bad[0]['reason']}); nothing was counted: fix them, upload the object again, and import it"
            )
        elif len(found.shifts) > MAX_SHIFTS:
            refusal = (
                f"more than {MAX_SHIFTS} places where rows and lines part (blank lines): remove them, or import the "
                "file from a machine into the stack's tables (`sensor-digest import FILE --table ... --ledger ...`)"
            )
        if refusal is not None:
            return StepReport({**answer, "action": "refuse", "reason": refusal, "refused": f"{prefix}refused.jsonl"})
        self._records.start(source)
        lines = Lines(2 if fmt == CSV else 1, tuple(found.shifts))
        answer.update(action="import", rows=found.rows, blank=found.blank, lines=lines.as_json())
        return StepReport(answer)


class FinishService:
    def __init__(self, *, records: Records, s3: Any) -> None:
        self._records = records
        self._s3 = s3

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> StepReport:
        prepared = event.get("prepared")
        if not isinstance(prepared, Mapping) or not isinstance(prepared.get("reports"), Mapping):
            raise UnreadableInput("the finish step's input must hold the prepare step's answer (prepared)")
        bucket, prefix = str(prepared["reports"]["bucket"]), str(prepared["reports"]["prefix"])
        keys = objects.keys(self._s3, bucket, f"{prefix}{BATCH_PREFIX}")  # by first position: by line
        total, lines, rejected = Figures(blank=_whole(prepared.get("blank", 0))), [], 0
        with ThreadPoolExecutor(max_workers=16) as pool:
            for result in pool.map(lambda key: objects.read_json(self._s3, bucket, key), keys):
                total.add(Figures.from_json(result.get("figures")))
                for entry in result.get("rejected", []):
                    rejected += 1
                    if rejected <= MERGED_REJECTED:
                        lines.append(json.dumps(entry, ensure_ascii=False) + "\n")
        answer: dict[str, Any] = {"action": "finished", "figures": total.as_json(), "name": prepared["object"]["name"]}
        if lines:
            data = "".join(lines).encode("utf-8")
            objects.put_bytes(self._s3, bucket, f"{prefix}rejected.jsonl", data, "application/x-ndjson")
            answer["rejected"] = f"s3://{bucket}/{prefix}rejected.jsonl"
            if rejected > MERGED_REJECTED:
                answer["rejected_note"] = (
                    f"the first {MERGED_REJECTED:,} of {rejected:,} rejected rows; every one is in s3://{bucket}/"
                    f"{prefix}{BATCH_PREFIX}"
                )
        source = SourceObject(str(prepared["identity"]), str(prepared["object"]["name"]))
        self._records.finish(source, total)
        return StepReport(answer)


def _whole(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise UnreadableInput("the prepare step's blank lines must be a whole number")
    return value


def build_prepare(settings: ImportSettings, session: ClientSource) -> PrepareService:
    records = Records(settings.ledger_table_name, dynamo.make_client(session))
    return PrepareService(records=records, s3=session.client("s3"), bucket=settings.import_bucket)


def build_finish(settings: ImportSettings, session: ClientSource) -> FinishService:
    records = Records(settings.ledger_table_name, dynamo.make_client(session))
    return FinishService(records=records, s3=session.client("s3"))
