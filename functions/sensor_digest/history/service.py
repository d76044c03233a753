"""The deployed import's two map steps (docs/import.md, "On AWS"), each an item of its Distributed Map:

- ``ReadService``: one chunk of the object (``{"chunk": {"start", "end", "line", "position"}, "prepared":
  {...}}``): its bytes read from S3 and its rows read by the same code as a local file's
  (``reading.py``, ``chunks.read_rows``), each valid row written to the partition of its sensor-day
  (``<run>/spill/<partition>/<position>.jsonl``), the rows refused with their reasons and the figures in
  ``<run>/read/<position>.json``;
- ``CountService``: one partition (``{"partition": n, "prepared": {...}}``): its rows, from every chunk in
  row order, counted (``counter.py``), its figures and the rows their day refused in
  ``<run>/count/<partition>.json``.

A fault that a retry may cure is raised: the map tries the item again; a chunk read again writes the same
objects, a partition counted again finds what it counted (its rows' identities, kept on their days).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sensor_digest import names
from sensor_digest.config import ImportSettings, UnknownSensors
from sensor_digest.errors import UnreadableInput
from sensor_digest.history.chunks import Dating, read_rows, refused_rows
from sensor_digest.history.counter import HistoryCounter, Overlap
from sensor_digest.history.pins import ZonePins
from sensor_digest.history.reading import lines_of, rows_of
from sensor_digest.history.record import Figures
from sensor_digest.history.rows import FORMATS, check_header
from sensor_digest.history.spill import MAX_PARTITIONS, decode_all, encode, partition_of
from sensor_digest.history.steps import COUNT, READ, SPILL
from sensor_digest.profiles import ProfileCache, Profiles
from sensor_digest.store import dynamo, objects
from sensor_digest.store.dynamo import ClientSource

OBJECT_ID = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class Prepared:
    """What the prepare step found of the object, as each map item carries it (``UnreadableInput`` for
    anything the state machine does not send)."""

    bucket: str
    key: str
    version: str | None
    object_id: bytes
    fmt: str
    header: list[str] | None
    partitions: int
    run_bucket: str
    run: str
    overlap: Overlap

    @classmethod
    def of(cls, value: Any) -> Prepared:
        try:
            obj, run = value["object"], value["run"]
            fmt, object_id, header = value["format"], value["object_id"], value.get("header")
            partitions = len(value["partitions"])
            overlap = Overlap(value.get("overlap", Overlap.REFUSE.value))
            checked = (
                all(isinstance(obj[k], str) for k in ("bucket", "key", "version"))
                and fmt in FORMATS
                and isinstance(object_id, str)
                and OBJECT_ID.fullmatch(object_id) is not None
                and (header is None or (isinstance(header, list) and all(isinstance(h, str) for h in header)))
                and 1 <= partitions <= MAX_PARTITIONS
                and all(isinstance(run[k], str) for k in ("bucket", "prefix"))
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UnreadableInput(f"a map item must carry the prepare step's answer ({exc})") from None
        if not checked:
            raise UnreadableInput("a map item's prepared answer is not as the prepare step writes it")
        version = None if obj["version"] == "null" else obj["version"]
        kept = check_header(header) if header is not None else None
        object_bytes = bytes.fromhex(object_id)
        where = (run["bucket"], run["prefix"])
        return cls(obj["bucket"], obj["key"], version, object_bytes, fmt, kept, partitions, *where, overlap)


def _whole(value: Any, name: str) -> int:
    if type(value) is not int or value < 0:
        raise UnreadableInput(f"a map item's {name} must be a whole number")
    return value


@dataclass
class StepResult:
    """What one map item did: its figures (and where its results are, for the finish step)."""

    figures: Figures
    key: str

    def response(self) -> dict[str, Any]:
        return {"key": self.key, "figures": self.figures.as_json()}

    def metrics(self) -> Mapping[str, int]:
        f = self.figures
        return {
            names.METRIC_IMPORT_COUNTED: f.counted,
            names.METRIC_IMPORT_ALREADY: f.already,
            names.METRIC_IMPORT_DUPLICATE: f.duplicates,
            names.METRIC_IMPORT_REJECTED: f.rejected,
        }

    def log_fields(self) -> Mapping[str, Any]:
        return {"key": self.key, **self.figures.as_json()}


class ReadService:
    """One chunk of the object, read into the run's partitions (see the module)."""

    def __init__(self, *, dating: Dating, s3: Any) -> None:
        self._dating = dating
        self._s3 = s3

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> StepResult:
        prepared, chunk = Prepared.of(event.get("prepared")), event.get("chunk")
        if not isinstance(chunk, Mapping):
            raise UnreadableInput("a read item must name its chunk")
        start, end = _whole(chunk.get("start"), "start"), _whole(chunk.get("end"), "end")
        line, position = _whole(chunk.get("line"), "line"), _whole(chunk.get("position"), "position")
        blocks = objects.blocks(self._s3, prepared.bucket, prepared.key, prepared.version, (start, end))
        lines = lines_of(blocks, first=max(1, line))
        rows = list(rows_of(lines, prepared.fmt, position=position, header=prepared.header))
        read = read_rows(prepared.object_id, rows, prepared.fmt, self._dating)
        by_partition: dict[int, list[str]] = {}
        for entry in read.entries:
            by_partition.setdefault(partition_of(entry.key, prepared.partitions), []).append(encode(entry) + "\n")
        for partition, encoded in sorted(by_partition.items()):
            key = f"{prepared.run}{SPILL}{partition:05d}/{position:012d}.jsonl"
            objects.put_bytes(self._s3, prepared.run_bucket, key, "".join(encoded).encode(), "application/x-ndjson")
        figures = Figures(rows=len(rows), rejected=len(read.rejected), zone_kept=read.zone_kept)
        key = f"{prepared.run}{READ}{position:012d}.json"
        result = {"figures": figures.as_json(), "rejected": [r.entry() for r in read.rejected]}
        objects.put_json(self._s3, prepared.run_bucket, key, result)
        return StepResult(figures, key)


class CountService:
    """One partition of the run, counted (see the module)."""

    def __init__(self, *, counter: HistoryCounter, s3: Any) -> None:
        self._counter = counter
        self._s3 = s3

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> StepResult:
        prepared = Prepared.of(event.get("prepared"))
        partition = _whole(event.get("partition"), "partition")
        if partition >= prepared.partitions:
            raise UnreadableInput(f"partition {partition} is not one of the run's {prepared.partitions}")
        spilled = objects.keys(self._s3, prepared.run_bucket, f"{prepared.run}{SPILL}{partition:05d}/")

        def rows() -> Iterator[Any]:
            for key in spilled:  # by the position of their chunk: in row order
                yield from decode_all(_lines(objects.blocks(self._s3, prepared.run_bucket, key, None)))

        counted = self._counter.count(rows, prepared.overlap)
        figures = counted.figures()
        key = f"{prepared.run}{COUNT}{partition:05d}.json"
        rejected = [r.entry() for r in refused_rows(counted.refused)]
        objects.put_json(self._s3, prepared.run_bucket, key, {"figures": figures.as_json(), "rejected": rejected})
        return StepResult(figures, key)


def _lines(blocks: Iterator[bytes]) -> Iterator[str]:
    held = b""
    for block in blocks:
        held += block
        *whole, held = held.split(b"\n")
        for line in whole:
            yield line.decode("utf-8")
    if held:
        yield held.decode("utf-8")


def build_read(settings: ImportSettings, session: ClientSource) -> ReadService:
    client = dynamo.make_client(session)
    profiles = ProfileCache(
        Profiles(table_name=settings.table_name, client=client, consistent=False),
        ttl=float(settings.profile_cache_seconds),
    )
    reject = settings.unknown_sensors == UnknownSensors.REJECT
    dating = Dating(settings.timezone, profiles, ZonePins(settings.ledger_table_name, client), reject_unknown=reject)
    return ReadService(dating=dating, s3=session.client("s3"))


def build_count(settings: ImportSettings, session: ClientSource) -> CountService:
    client = dynamo.make_client(session)
    ledger = settings.ledger_table_name
    counter = HistoryCounter(table_name=settings.table_name, ledger_table_name=ledger, client=client)
    return CountService(counter=counter, s3=session.client("s3"))


__all__: Sequence[str] = ["CountService", "ReadService", "build_count", "build_read"]
