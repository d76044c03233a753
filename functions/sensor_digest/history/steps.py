"""The deployed import's first and last steps, around its two Distributed Maps (docs/import.md, "On AWS").

``PrepareService``: the object read through once: its identity is its content (SHA-256), as a local
file's, so the same rows imported by either path, under any name, are one object; its record (a
finished import with no rejected row is not run again, unless asked); its rows, and where each chunk of
``CHUNK_ROWS`` rows begins and ends (``chunks.json`` of the run: the read map's items), and how many
partitions they are counted in (the count map's items).
``FinishService``: the chunks' and partitions' figures added up, checked (every row in one figure), their
rejected rows in one error report (``rejected.jsonl``, by line), and the record finished.
"""

from __future__ import annotations

import hashlib
import heapq
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sensor_digest.config import ImportSettings
from sensor_digest.errors import TransientFault, UnreadableInput
from sensor_digest.history.days import Overlap
from sensor_digest.history.reading import Skipped, blank, header_of, lines_of
from sensor_digest.history.record import Figures, Records
from sensor_digest.history.rows import CSV
from sensor_digest.history.source import SourceObject, file_object, format_of
from sensor_digest.history.spill import partitions_for
from sensor_digest.store import dynamo, objects
from sensor_digest.store.dynamo import ClientSource

REPORTS_PREFIX = "import-reports/"
CHUNK_ROWS = 10_000
"""Rows a chunk of the deployed import: one item of its read map."""
MERGED_REJECTED = 1_000_000
"""The most rejected rows the finish step gathers in one error report (the rest stay in the run's)."""
READ = "read/"
COUNT = "count/"
SPILL = "spill/"
RUN_NAME_CHARS = 80


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
    """An object read through once: its content's SHA-256, its rows and blank lines, a CSV object's header,
    and its chunks (``CHUNK_ROWS`` rows each: the first byte, the byte after the last, the first line, the
    first row's position)."""

    sha256: str = ""
    rows: int = 0
    blank: int = 0
    header: list[str] | None = None
    chunks: list[dict[str, int]] = field(default_factory=list)


def scan(blocks: Iterable[bytes], fmt: str, chunk_rows: int | None = None) -> Scan:
    """Every line of the object once, with the same rules the rows are read by (``reading.py``): a blank
    line is no row, a CSV object's first line its header (``UnreadableInput`` when it cannot be read)."""
    found, digest, size = Scan(), hashlib.sha256(), [0]
    chunk_rows = chunk_rows or CHUNK_ROWS

    def hashed() -> Iterator[bytes]:
        for block in blocks:
            digest.update(block)
            size[0] += len(block)
            yield block

    lines = lines_of(hashed())
    if fmt == CSV:
        found.header = header_of(lines)
    skipped = Skipped()
    for line in lines:
        if blank(line, fmt):
            skipped.blank += 1
            continue
        if found.rows % chunk_rows == 0:
            if found.chunks:
                found.chunks[-1]["end"] = line.offset
            found.chunks.append({"start": line.offset, "end": -1, "line": line.number, "position": found.rows})
        found.rows += 1
    if found.chunks:
        found.chunks[-1]["end"] = size[0]
    found.sha256, found.blank = digest.hexdigest(), skipped.blank
    return found


def run_prefix(source: SourceObject, run: str) -> str:
    """Where one run (an execution) of an object's import keeps its chunks, partitions and results."""
    return f"{reports_prefix(source)}runs/{run}/"


class PrepareService:
    def __init__(self, *, records: Records, s3: Any, bucket: str) -> None:
        self._records = records
        self._s3 = s3
        self._bucket = bucket

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> StepReport:
        """``event``: the execution's input (``input``: bucket, key, and optionally format, again, overlap)
        and its name (``run``)."""
        given = event.get("input", event)
        if not isinstance(given, Mapping):
            raise UnreadableInput("the import's input must be an object")
        run = event.get("run", "run")
        bucket, key = given.get("bucket"), given.get("key")
        if not (isinstance(bucket, str) and isinstance(key, str) and bucket and key):
            raise UnreadableInput("the import's input must name the object: {'bucket': ..., 'key': ...}")
        if not (isinstance(run, str) and 0 < len(run) <= RUN_NAME_CHARS and "/" not in run):
            raise UnreadableInput("the import's run must be a name (its execution's)")
        fmt = format_of(key, given.get("format") if isinstance(given.get("format"), str) else None)
        overlap = given.get("overlap", Overlap.REFUSE.value)
        if overlap not in {o.value for o in Overlap}:
            raise UnreadableInput(f"the import's overlap must be one of {', '.join(o.value for o in Overlap)}")
        head = objects.head(self._s3, bucket, key)
        name = f"s3://{bucket}/{key}"
        try:
            found = scan(objects.blocks(self._s3, bucket, key, head.version), fmt)
        except UnreadableInput as exc:
            refused = {"object": {"bucket": bucket, "key": key, "name": name}, "format": fmt}
            return StepReport({**refused, "action": "refuse", "reason": str(exc), "name": name})
        source = file_object(found.sha256, name)
        prefix, at = reports_prefix(source), run_prefix(source, run)
        answer: dict[str, Any] = {
            "object": {"bucket": bucket, "key": key, "version": head.version or "null", "name": name},
            "identity": source.identity,
            "object_id": source.object_id.hex(),
            "format": fmt,
            "reports": {"bucket": self._bucket, "prefix": prefix},
            "run": {"bucket": self._bucket, "prefix": at},
            "overlap": overlap,
        }
        record = self._records.get(source)
        if record is not None and record.done and not given.get("again"):
            figures = record.figures.as_json()
            return StepReport({**answer, "action": "skip", "figures": figures, "finished_at": record.finished_at})
        self._records.start(source)
        objects.put_json(self._s3, self._bucket, f"{at}chunks.json", found.chunks)
        answer.update(
            action="import",
            rows=found.rows,
            blank=found.blank,
            header=found.header,
            chunks=f"{at}chunks.json",
            partitions=list(range(partitions_for(found.rows))),
        )
        return StepReport(answer)


class FinishService:
    def __init__(self, *, records: Records, s3: Any) -> None:
        self._records = records
        self._s3 = s3

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> StepReport:
        prepared = event.get("prepared")
        if not isinstance(prepared, Mapping) or not isinstance(prepared.get("run"), Mapping):
            raise UnreadableInput("the finish step's input must hold the prepare step's answer (prepared)")
        bucket, at = str(prepared["run"]["bucket"]), str(prepared["run"]["prefix"])
        total = Figures(blank=_whole(prepared.get("blank", 0)))
        read = [objects.read_json(self._s3, bucket, k) for k in objects.keys(self._s3, bucket, f"{at}{READ}")]
        counted = [objects.read_json(self._s3, bucket, k) for k in objects.keys(self._s3, bucket, f"{at}{COUNT}")]
        for result in [*read, *counted]:
            total.add(Figures.from_json(result.get("figures")))
        rows = _whole(prepared.get("rows", 0))
        if total.rows != rows or total.counted + total.already + total.duplicates + total.rejected != rows:
            raise TransientFault(
                f"the run's results account for {total.counted + total.already + total.duplicates + total.rejected:,} "
                f"of the object's {rows:,} rows (a part of the run is missing: expired, or removed by hand): import "
                "it again with --again; nothing counts twice"
            )
        in_order = heapq.merge(
            *(iter(r.get("rejected", [])) for r in read),
            sorted((e for r in counted for e in r.get("rejected", [])), key=_line),
            key=_line,
        )
        kept = zip(range(MERGED_REJECTED), in_order, strict=False)
        lines = [json.dumps(e, ensure_ascii=False) + "\n" for _, e in kept]
        answer: dict[str, Any] = {"action": "finished", "figures": total.as_json(), "name": prepared["object"]["name"]}
        if lines:
            prefix = str(prepared["reports"]["prefix"])
            data = "".join(lines).encode("utf-8")
            objects.put_bytes(self._s3, bucket, f"{prefix}rejected.jsonl", data, "application/x-ndjson")
            answer["rejected"] = f"s3://{bucket}/{prefix}rejected.jsonl"
            if total.rejected > MERGED_REJECTED:
                answer["rejected_note"] = (
                    f"the first {MERGED_REJECTED:,} of {total.rejected:,} rejected rows; every one is in "
                    f"s3://{bucket}/{at}{READ} and {COUNT}"
                )
        source = SourceObject(str(prepared["identity"]), str(prepared["object"]["name"]))
        self._records.finish(source, total)
        return StepReport(answer)


def _line(entry: Mapping[str, Any]) -> int:
    line = entry.get("line")
    return line if type(line) is int else 0


def _whole(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise UnreadableInput("the prepare step's figures must be whole numbers")
    return value


def build_prepare(settings: ImportSettings, session: ClientSource) -> PrepareService:
    records = Records(settings.ledger_table_name, dynamo.make_client(session))
    return PrepareService(records=records, s3=session.client("s3"), bucket=settings.import_bucket)


def build_finish(settings: ImportSettings, session: ClientSource) -> FinishService:
    records = Records(settings.ledger_table_name, dynamo.make_client(session))
    return FinishService(records=records, s3=session.client("s3"))
