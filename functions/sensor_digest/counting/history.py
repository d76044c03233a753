"""The history import's counting (docs/import.md): a chunk of an imported object's rows, each
sensor-day's reports written at once, the chunk known by its token.

A chunk is a run of consecutive rows of one object (its first and last positions). Its valid reports
are grouped by sensor-day; two rows of one sensor naming one ``event_id`` are one report (the first
is written, the other is a duplicate). Each group is one write of its whole ``Tally`` (count, hours,
and whatever else a tally adds), resting on the group's token (``identities.import_token``: the object,
the chunk's positions, the part) not being counted on the day yet (``day_writes.Imported``):

1. ``lookup``: the chunk's day items, one ``BatchGetItem`` per 100 sensor-days (eventually
   consistent: a stale read costs only a refused write), and, for days whose ``Imports`` is full,
   the ledger's token items of the chunk; a group whose token is found is *already* counted, and
   costs no write (a re-run of an imported object reads only);
2. ``ImportWrite``: update -> insert -> update, each refusal read from the item it returns (the token
   there: already counted; the set full: the token goes to the ledger in a transaction; the hours map
   missing: it is created).

Exactly once rests on the tokens alone: a chunk's rows are the same rows at every run (positions in
the object), so its tokens are too, and a write whose token is counted is refused, whoever wrote it
(a retry, a redriven child, a second import of the object at the same time or years later).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sensor_digest.backoff import RetryPolicy
from sensor_digest.errors import Contention, RefusedWrite, TransientFault
from sensor_digest.messages import SensorMessage
from sensor_digest.store import day_writes, dynamo, expressions, schema
from sensor_digest.store.day_writes import (
    DayKey,
    HoursMap,
    Imported,
    ReadingsView,
    Tally,
    imports_of,
    tokens_full,
)
from sensor_digest.store.identities import import_token
from sensor_digest.upsert import Answer, ThreeStepUpsert, UpsertStep

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass(frozen=True)
class Chunk:
    """The valid, dated reports of the rows ``first`` to ``last`` (positions) of object ``object_id``,
    in row order."""

    object_id: bytes
    first: int
    last: int
    messages: Sequence[SensorMessage]


@dataclass(frozen=True)
class Part:
    """One write of the import: reports of one sensor-day of a chunk, and the token that knows it."""

    day: DayKey
    messages: Sequence[SensorMessage]
    token: bytes

    @property
    def reports(self) -> int:
        return len(self.messages)


@dataclass
class ChunkCount:
    """What became of a chunk's valid reports: ``counted`` now, ``already`` counted by an earlier import
    of the object (their token was there), ``duplicates`` (a repeated ``event_id`` in the chunk),
    ``refused`` (their day item refuses the count: each with the reason); and what it took."""

    counted: int = 0
    already: int = 0
    duplicates: int = 0
    refused: list[tuple[SensorMessage, str]] = field(default_factory=list)
    days: int = 0
    writes: int = 0
    reads: int = 0


def _identity(message: SensorMessage) -> Hashable:
    """Two rows of one sensor naming one ``event_id`` are one report; a row without one is itself."""
    return (message.sensor_id, message.event_id) if message.named else message.message_id


def parts_of(chunk: Chunk) -> tuple[list[Part], int]:
    """The chunk's writes, by sensor-day in the order of their first row, and how many of its reports
    repeat an earlier row's identity. One part per sensor-day: a function of the rows alone, never of
    what the tables hold, so a re-run makes the same parts and tokens."""
    seen: set[Hashable] = set()
    by_day: dict[DayKey, list[SensorMessage]] = {}
    repeats = 0
    for message in chunk.messages:
        identity = _identity(message)
        if identity in seen:
            repeats += 1
            continue
        seen.add(identity)
        by_day.setdefault((message.sensor_id, message.day), []).append(message)
    parts = [
        Part(day, share, import_token(chunk.object_id, chunk.first, chunk.last, index))
        for day, messages in by_day.items()
        for index, share in enumerate(split(messages))
    ]
    return parts, repeats


def split(messages: Sequence[SensorMessage]) -> list[Sequence[SensorMessage]]:
    """A sensor-day's reports of a chunk as the writes that carry them: one, whatever their number (a
    day's count and hours fit one update). A function of the reports alone: a re-run splits alike."""
    return [messages]


class HistoryCounter:
    """Writes chunks of imported rows (see the module)."""

    def __init__(
        self,
        *,
        table_name: str,
        ledger_table_name: str,
        client: DynamoDBClient,
        max_workers: int = 8,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.table = table_name
        self.ledger = ledger_table_name
        self.client = client
        self._max_workers = max_workers
        self._retry = retry or RetryPolicy()

    def count(self, chunk: Chunk) -> ChunkCount:
        """Write the chunk; ``TransientFault`` when a write could not be made (throttling, an engine
        that does not answer): what was written stands, and the chunk written again counts the rest."""
        parts, repeats = parts_of(chunk)
        result = ChunkCount(duplicates=repeats, days=len(parts))
        seen = self.lookup(parts, result)
        todo = [p for p in parts if not self._already(p, seen)]
        result.already += sum(p.reports for p in parts) - sum(p.reports for p in todo)
        if not todo:
            return result
        workers = min(self._max_workers, len(todo))
        if workers == 1:
            outcomes = [self._write(p, seen.get(p.day)) for p in todo]
        else:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="import") as pool:
                outcomes = list(pool.map(lambda p: self._write(p, seen.get(p.day)), todo))
        for part, (fate, requests, reason) in zip(todo, outcomes, strict=True):
            result.writes += requests
            if fate == "counted":
                result.counted += part.reports
            elif fate == "already":
                result.already += part.reports
            else:
                result.refused.extend((m, str(reason)) for m in part.messages)
        return result

    # -- the lookup -------------------------------------------------------------------------------

    def lookup(self, parts: Sequence[Part], result: ChunkCount) -> dict[DayKey, dict[str, Any]]:
        """The parts' day items as read (``{}``: none), with the tokens the ledger holds for parts whose
        day item's ``Imports`` is full, merged into the item's as if they were there."""
        days = sorted({p.day for p in parts})
        items = dynamo.batch_get(self.client, self.table, [schema.day_key(*d) for d in days], consistent=False)
        result.reads += (len(days) + 99) // 100
        seen: dict[DayKey, dict[str, Any]] = {d: {} for d in days}
        for item in items:
            seen[(schema.sensor_of_item(item), schema.text_of(item, schema.DATE))] = item
        full = [p for p in parts if tokens_full(seen[p.day])]
        if full:
            keys = [schema.import_token_key(*p.day, p.token) for p in full]
            found = dynamo.batch_get(self.client, self.ledger, keys, consistent=False, projection=[schema.LEDGER_KEY])
            result.reads += (len(keys) + 99) // 100
            held = {str(item[schema.LEDGER_KEY]["S"]) for item in found}
            for part, key in zip(full, keys, strict=True):
                if str(key[schema.LEDGER_KEY]["S"]) in held:
                    seen[part.day] = _with_token(seen[part.day], part.token)
        return seen

    @staticmethod
    def _already(part: Part, seen: dict[DayKey, dict[str, Any]]) -> bool:
        return part.token in imports_of(seen.get(part.day, {}))

    # -- one write ---------------------------------------------------------------------------------

    def _write(self, part: Part, item: dict[str, Any] | None) -> tuple[str, int, str | None]:
        """``("counted" | "already" | "refused", requests, reason)``; contention and throttling are
        retried by ``retry``, then raised (``TransientFault``)."""
        write = ImportWrite(self, part, item)
        for attempt in range(self._retry.attempts + 1):
            start = UpsertStep.CREATE_IF_MISSING if write.seen == {} else UpsertStep.UPDATE_IF_EXISTS
            try:
                write.run(max_attempts=8, start=start)
                return write.fate, write.requests, None
            except RefusedWrite as refused:  # the day item takes no count (a value written by hand)
                return "refused", write.requests, refused.reason
            except TransientFault as fault:
                if attempt >= self._retry.attempts or not _worth_retrying(fault):
                    raise
                self._retry.wait(attempt)
                write.seen = None  # read again by the writes themselves
        raise AssertionError("unreachable")  # pragma: no cover


def _worth_retrying(fault: TransientFault) -> bool:
    return isinstance(fault, Contention) or "retryable" in fault.reason or "transport" in fault.reason


def _with_token(item: dict[str, Any], token: bytes) -> dict[str, Any]:
    """``item`` as if its ``Imports`` held ``token`` too (a token the ledger holds for its day)."""
    tokens = sorted(imports_of(item) | {token})
    return {**item, schema.IMPORTS: {"BS": tokens}}


class ImportWrite(ThreeStepUpsert):
    """One part through the three steps; ``seen`` is the day item as last seen (``{}``: there is none;
    ``None``: not known), corrected by every refusal."""

    def __init__(self, counter: HistoryCounter, part: Part, seen: dict[str, Any] | None) -> None:
        super().__init__()
        self._counter = counter
        self._part = part
        self._tally = Tally.of(part.messages)
        self.seen = seen
        self.fate = ""
        self.requests = 0

    def nothing_left(self) -> bool:
        return bool(self.fate)

    def update_if_exists(self) -> Answer:
        if self.seen == {}:
            return Answer.NEXT
        return self._update()

    def create_if_missing(self) -> Answer:
        counter, part = self._counter, self._part
        params = day_writes.import_create(counter.table, part.day, self._tally, [part.token])
        answer = self._send("PutItem", params)
        if answer.written:
            self.fate = "counted"
            return Answer.DONE
        self.seen = answer.item
        return Answer.NEXT  # created meanwhile: step 3 adds to it, as it is

    def update_after_race(self) -> Answer:
        if self.seen == {}:  # day items are never deleted
            raise TransientFault("the day item is missing after its insert")
        return self._update()

    def _update(self) -> Answer:
        seen, part, counter = self.seen or {}, self._part, self._counter
        if part.token in imports_of(seen):
            self.fate = "already"
            return Answer.DONE
        hours = HoursMap.after(seen) if self.seen is not None else HoursMap.ADD
        readings = ReadingsView.of_item(seen) if self.seen is not None else ReadingsView()  # a refusal shows them
        kept = not tokens_full(seen)
        guard = Imported(part.token, kept)
        params = day_writes.update(counter.table, part.day, self._tally, hours, guard, readings=readings)
        if kept:
            answer = self._send("UpdateItem", params)
            if answer.written:
                self.fate = "counted"
                return Answer.DONE
            self.seen = answer.item
            return Answer.AGAIN if answer.item else Answer.NEXT
        return self._overflow(params)

    def _overflow(self, day_update: dict[str, Any]) -> Answer:
        """The day item's ``Imports`` is full: the count and the token's ledger item, one transaction."""
        counter, part = self._counter, self._part
        token_put = day_writes.import_token_put(counter.ledger, part.day, part.token)
        token_put["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        self.requests += 1
        actions = [expressions.update(day_update), expressions.put(token_put)]
        refusals = dynamo.transact_refusals(counter.client, actions)
        if refusals is None:
            self.fate = "counted"
            return Answer.DONE
        codes = [r.code for r in refusals]
        fault = dynamo.cancellation_fault(codes, [r.message for r in refusals])
        if fault is not None:
            raise fault
        if len(refusals) == 2 and refusals[1].code == dynamo.CONDITIONAL_CHECK_FAILED:
            self.fate = "already"  # the token's ledger item is there: counted before
            return Answer.DONE
        self.seen = refusals[0].item if refusals else {}
        return Answer.AGAIN if self.seen else Answer.NEXT

    def _send(self, operation: str, params: dict[str, Any]) -> dynamo.Written:
        self.requests += 1
        return dynamo.single_write(self._counter.client, operation, params)
