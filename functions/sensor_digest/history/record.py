"""An import's figures, and the record of an object's import in the ledger (``IMPORT#<object id>``,
never expiring): started, then finished with its figures. A second import of a finished object with
no rejected row has nothing left to count and reads only the record; one with rejected rows goes
through its chunks again (a row refused for an unregistered sensor counts once the sensor is), each
row's identity found on its day."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from sensor_digest.history.source import SourceObject
from sensor_digest.store import dynamo, reads, schema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

STARTED = "started"
FINISHED = "finished"


@dataclass
class Figures:
    """What an import did: ``rows`` read (each line of the object is a row, ``blank``, or a CSV
    header); of the rows, reports ``counted`` now, ``already`` counted (their identity found counted on
    their day: by an earlier import of this object or of another, or an earlier part of this one),
    ``duplicates`` (repeating the identity of an earlier row of the same import), rows ``rejected`` (in
    the error report): ``rows = counted + already + duplicates + rejected``; sensor-days written
    (``days``), and the requests it took (``writes``, ``reads``); ``zone_kept``: rows dated in the zone
    of their sensor's first import where its profile (or the default) now gives another;
    ``overlap_refused``: of the rejected, those naming an ``event_id`` on a day whose live reports the
    pipeline no longer knows all of (``--overlap``)."""

    rows: int = 0
    counted: int = 0
    already: int = 0
    duplicates: int = 0
    rejected: int = 0
    days: int = 0
    writes: int = 0
    reads: int = 0
    blank: int = 0
    zone_kept: int = 0
    overlap_refused: int = 0

    def add(self, other: Figures) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def as_json(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_json(cls, value: Any) -> Figures:
        """Figures as a batch's result carries them; ``ValueError`` for anything else."""
        if not isinstance(value, Mapping):
            raise ValueError("figures must be an object")
        out = cls()
        for f in fields(cls):
            n = value.get(f.name, 0)
            if type(n) is not int or n < 0:
                raise ValueError(f"figure {f.name} must be a whole number")
            setattr(out, f.name, n)
        return out


@dataclass(frozen=True)
class Record:
    """An object's import as the ledger keeps it."""

    state: str
    source: str
    figures: Figures
    started_at: str = ""
    finished_at: str = ""

    @property
    def done(self) -> bool:
        """Finished with no row rejected: importing the object again has nothing to count."""
        return self.state == FINISHED and self.figures.rejected == 0


@dataclass
class Before:
    """The objects an import found imported whole before, and skipped (nothing of them read again):
    how many, what their earlier imports counted, and when the last of them finished."""

    objects: int = 0
    figures: Figures = field(default_factory=Figures)
    finished_at: str = ""

    def add(self, figures: Figures, finished_at: str) -> None:
        self.objects += 1
        self.figures.add(figures)
        self.finished_at = max(self.finished_at, finished_at)

    def as_json(self) -> dict[str, Any]:
        return {"objects": self.objects, "finished_at": self.finished_at or None, **self.figures.as_json()}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Records:
    """The import records of one ledger table."""

    def __init__(self, ledger: str, client: DynamoDBClient) -> None:
        self._ledger = ledger
        self._client = client

    def get(self, source: SourceObject) -> Record | None:
        item = reads.get_item(self._client, self._ledger, schema.import_record_key(source.object_id))
        if not item:
            return None
        figures = item.get(schema.RECORD_FIGURES, {}).get("M", {})
        numbers = {name: int(value.get("N", "0")) for name, value in figures.items() if isinstance(value, Mapping)}
        try:
            parsed = Figures.from_json(numbers)
        except ValueError:
            parsed = Figures()
        return Record(
            state=str(item.get(schema.RECORD_STATE, {}).get("S", STARTED)),
            source=str(item.get(schema.RECORD_SOURCE, {}).get("S", source.name)),
            figures=parsed,
            started_at=str(item.get(schema.RECORD_STARTED, {}).get("S", "")),
            finished_at=str(item.get(schema.RECORD_FINISHED, {}).get("S", "")),
        )

    def start(self, source: SourceObject) -> None:
        """The object's import is under way (again): its name and the time, no figures yet."""
        self._set(source, {schema.RECORD_STATE: {"S": STARTED}, schema.RECORD_STARTED: {"S": _now()}})

    def finish(self, source: SourceObject, figures: Figures) -> None:
        """The object's import ended, every chunk written: its figures."""
        numbers = {name: {"N": str(n)} for name, n in figures.as_json().items()}
        self._set(
            source,
            {
                schema.RECORD_STATE: {"S": FINISHED},
                schema.RECORD_FINISHED: {"S": _now()},
                schema.RECORD_FIGURES: {"M": numbers},
            },
        )

    def _set(self, source: SourceObject, values: dict[str, Any]) -> None:
        names = {f"#a{i}": name for i, name in enumerate([schema.RECORD_SOURCE, *values])}
        given = {":a0": {"S": source.identity}, **{f":a{i + 1}": v for i, v in enumerate(values.values())}}
        expression = "SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(names)))
        params = {
            "TableName": self._ledger,
            "Key": schema.import_record_key(source.object_id),
            "UpdateExpression": expression,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": given,
        }
        dynamo.call("UpdateItem", partial(self._client.update_item, **params))  # type: ignore[arg-type]
