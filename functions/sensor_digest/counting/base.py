"""What every counter shares: the batch's lookup and its concurrent group writes (``count_batch``).

A counter turns the valid messages of one batch into writes. ``count_batch`` is the same for every
mode: the batch is written in waves (``waves``: one, unless a mode holds some messages back for a
later one); each wave reads what its writes need to know (``lookup``: ``BatchGetItem``s), drops
the messages the read proved counted already, groups the rest by sensor-day, and writes the groups
concurrently (``count_group``, each mode its own), each group only while the invocation has time.

The order the groups are written in, what a group that meets another writer does, and whether a
day found missing is bet created meanwhile are the counter's ``Policies`` (``policies.py``): savings
the benchmark can switch off, never what a count rests on. What the container remembers between
batches (the day items that exist, those without hours, ...) is ``memory.py``'s: a stale memory
costs only the write it would have saved; correctness rests on the writes' conditions alone.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections import defaultdict, deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sensor_digest.counting.memory import CreatedDays, FrozenPages, KnownDays
from sensor_digest.counting.outcomes import (
    BatchCount,
    Group,
    GroupOutcome,
    Lookup,
    leaders,
    share_leaders_fate,
)
from sensor_digest.counting.policies import ALL, Policies
from sensor_digest.errors import MalformedItem, RefusedWrite, StoreFault
from sensor_digest.logs import LOG
from sensor_digest.messages import SensorMessage
from sensor_digest.store import repairs, schema, sizes, tally
from sensor_digest.store.day_store import DayStore
from sensor_digest.store.day_view import MISSING, UNSEEN, DayKey, DayView, ids_of, view_of
from sensor_digest.store.identities import import_event_hash
from sensor_digest.upsert import ThreeStepUpsert, UpsertStep

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = [
    "BatchCount",
    "DayCounter",
    "DayKey",
    "DayWrite",
    "Expired",
    "Group",
    "GroupOutcome",
    "Lookup",
    "TableCounter",
    "leaders",
    "share_leaders_fate",
]


Expired = Callable[[], bool] | None
"""Whether the invocation's time is up (``None``: it never is)."""


@dataclass(eq=False, kw_only=True)
class DayCounter(ABC):
    """Counts the valid messages of a batch into day items; one subclass per mode (``ledger.py``,
    ``ordered.py``, ``plain.py``), chosen once by ``ingest/wiring.py``'s ``MODES``."""

    max_workers: int = 8
    clock: Callable[[], float] = time.monotonic
    policies: Policies = ALL
    created_days: CreatedDays = field(init=False, default_factory=CreatedDays)

    @abstractmethod
    def identity(self, message: SensorMessage) -> Hashable | None:
        """What makes two messages of a batch one report (``None``: every message counts)."""

    @abstractmethod
    def count_group(self, group: Group) -> GroupOutcome:
        """Count one sensor-day group (``Group``: its messages, deadline, whether its day item was
        found missing, whether a contended write may be handed back); never raises for a write
        failure (it lands in ``failed``)."""

    def waves(self, messages: Sequence[SensorMessage]) -> list[list[SensorMessage]]:
        """The batch's messages in the order of the waves that write them (here: one wave)."""
        return [list(messages)]

    def lookup(self, messages: Sequence[SensorMessage], expired: Expired = None) -> Lookup:
        """What a wave's writes would otherwise find out the expensive way (nothing, here); ``expired``
        says when the invocation's time is up (no read is started past it)."""
        return Lookup()

    def known_key(self, message: SensorMessage) -> str | None:
        """The ledger key whose presence proves ``message`` counted before (``None``: no such key)."""
        return None

    lookup_guards = False
    """Whether the lookup is what keeps a message with a ``known_key`` from counting twice (so a
    lookup that fails must hold those messages back, and every message of their sensors with them:
    a later message of the sensor written first would leave a higher sequence number applied), not
    only a saving (the writes would find out)."""

    def may_bet(self, messages: Sequence[SensorMessage]) -> bool:
        """Whether a group of ``messages`` whose day item was found missing may start at the update
        when that item was likely created since (``memory.CreatedDays``): only where the update is one
        single-item write, so that a lost bet costs one refused write (here: never)."""
        return False

    def remember_counted(self, messages: Sequence[SensorMessage]) -> None:
        """Messages that ended counted but may come back through the dead-letter queue: what a mode
        must remember of them so that they never count twice (nothing, here: a marker was written
        with each count, or nothing guards at all)."""
        return

    def count_batch(
        self,
        messages: Sequence[SensorMessage],
        deadline: float | None = None,
        on_outcome: Callable[[GroupOutcome], None] | None = None,
    ) -> BatchCount:
        """Count one batch's messages, one per identity (the caller settles repeats): wave by wave,
        the wave's lookup, then its sensor-day groups written concurrently in ring order while
        ``deadline`` (``time.monotonic()``) allows (a group past it is failed untried, to be
        redelivered); last, the groups some write deferred. ``on_outcome`` hears of each group's
        outcome as soon as it is known (a lookup's duplicates first, as one outcome)."""
        result = BatchCount()
        heard = on_outcome or (lambda outcome: None)
        expired = self._expiry(deadline)
        deferred: list[tuple[DayKey, list[SensorMessage]]] = []
        for wave in self.waves(messages):
            if wave:
                self._count_wave(wave, deadline, expired, heard, result, deferred)
        if deferred:  # the other writers have moved on by now; no second deferral
            result.groups += self._write(deferred, set(), deadline, heard, may_defer=False)[0]
        return result

    def _count_wave(  # noqa: PLR0917 - the wave's inputs and where its results go
        self,
        messages: list[SensorMessage],
        deadline: float | None,
        expired: Expired,
        heard: Callable[[GroupOutcome], None],
        result: BatchCount,
        deferred: list[tuple[DayKey, list[SensorMessage]]],
    ) -> None:
        try:
            found = self.lookup(messages, expired)
        except StoreFault as fault:
            if self.lookup_guards:  # those it guards wait for a lookup that answers, their sensors with them
                waiting = {m.sensor_id for m in messages if self.known_key(m) is not None}
                held = [m for m in messages if m.sensor_id in waiting]
                if held:
                    heard(GroupOutcome(failed=held, reason=f"lookup of markers failed: {fault.reason}"))
                    messages = [m for m in messages if m.sensor_id not in waiting]
            LOG.warning("lookup before the writes failed; the writes will find out", reason=fault.reason)
            found = Lookup()
        result.lookup_requests += found.requests
        groups: dict[DayKey, list[SensorMessage]] = defaultdict(list)
        known: list[SensorMessage] = []
        for message in messages:
            if self.known_key(message) in found.counted_before:  # no write needed to find out
                known.append(message)
            else:
                groups[(message.sensor_id, message.day)].append(message)
        if known:
            result.known_duplicates += known
            heard(GroupOutcome(duplicates=known))
        may_defer = self.policies.defer_contended
        written, again = self._write(list(groups.items()), found.missing_days, deadline, heard, may_defer=may_defer)
        result.groups += written
        deferred += again

    def _write(
        self,
        groups: list[tuple[DayKey, list[SensorMessage]]],
        missing: set[DayKey],
        deadline: float | None,
        heard: Callable[[GroupOutcome], None],
        *,
        may_defer: bool,
    ) -> tuple[list[tuple[DayKey, GroupOutcome]], list[tuple[DayKey, list[SensorMessage]]]]:
        """The groups written concurrently, in the policies' order (the ring): their outcomes, and the
        groups handed back to be written at the end. The workers take the groups one by one; a
        group deferred (another invocation was writing its day item) is handed back, to be written at
        the end of the batch, when the other has moved on (``Policies.defer_contended``)."""
        pending = deque(self.policies.order(groups))
        done: list[tuple[DayKey, GroupOutcome]] = []
        lock = threading.Lock()

        def work() -> None:
            while True:
                with lock:
                    if not pending:
                        return
                    key, messages = pending.popleft()
                outcome = self._safe_count(key, messages, key in missing, deadline, may_defer)
                heard(outcome)
                with lock:
                    done.append((key, outcome))

        workers = min(self.max_workers, len(pending))
        if workers <= 1:
            work()
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                for future in [pool.submit(work) for _ in range(workers)]:
                    future.result()  # a crash (not an Exception: never caught per group) ends the batch
        return done, [(key, outcome.deferred) for key, outcome in done if outcome.deferred]

    def _expiry(self, deadline: float | None) -> Expired:
        """Whether the invocation's time is up (``deadline``, on the counter's clock): every loop of
        calls asks before its next one, so nothing of a batch runs on after its answer."""
        if deadline is None:
            return None
        return lambda: self.clock() >= deadline

    def _safe_count(
        self, key: DayKey, messages: list[SensorMessage], missing: bool, deadline: float | None, may_defer: bool
    ) -> GroupOutcome:
        if (
            deadline is not None and self.clock() >= deadline
        ):  # a batch item failure now rather than cut off by the timeout
            return GroupOutcome(failed=list(messages), reason="no time left in the invocation")
        # found missing, and likely created since by another invocation
        bet = (
            missing
            and self.policies.bet_on_created_days
            and self.may_bet(messages)
            and self.created_days.likely_created()
        )
        try:
            outcome = self.count_group(
                Group(key[0], key[1], messages, deadline, missing=missing and not bet, may_defer=may_defer)
            )
        except Exception as exc:  # a bug must fail this group only, never the batch
            LOG.exception("group raised", sensor_id=key[0], day=key[1])
            return GroupOutcome(failed=list(messages), reason=f"internal error: {type(exc).__name__}")
        if missing:
            self.created_days.heard(outcome)
        if outcome.rejected and outcome.repair is None:
            self.name_the_repair(key, outcome)
        if outcome.rejected and outcome.refused_by == schema.READINGS:
            outcome = self._without_readings_again(key, outcome, deadline)
        return outcome

    def name_the_repair(self, key: DayKey, outcome: GroupOutcome) -> None:
        """DynamoDB refused the group's write as invalid without saying which attribute: find it, and
        put what mends it in ``outcome`` (here: nothing to read)."""
        return

    def _without_readings_again(self, key: DayKey, outcome: GroupOutcome, deadline: float | None) -> GroupOutcome:
        """The day item's ``Readings`` refused the group's write (written by hand; or, for
        ``refused_names``, too large to add to): its reports carrying those readings stay rejected (the
        reason and the repair with them); the others count as on any other day (nothing of them was
        written: the refused write was not)."""
        names = set(outcome.refused_names)

        def unaffected(m: SensorMessage) -> bool:
            return not m.readings if not names else not names & {name for name, _ in m.readings}

        plain = [m for m in outcome.rejected if unaffected(m)]
        if not plain:
            return outcome
        again = self.count_group(Group(key[0], key[1], plain, deadline))
        outcome.rejected = [m for m in outcome.rejected if not unaffected(m)] + again.rejected
        outcome.counted += again.counted
        outcome.duplicates += again.duplicates
        outcome.failed += again.failed
        outcome.deferred += again.deferred
        outcome.requests += again.requests
        outcome.steps += again.steps
        outcome.retries += again.retries
        if not outcome.rejected:
            outcome.reason, outcome.repair, outcome.refused_by = again.reason, again.repair, again.refused_by
        return outcome


@dataclass(eq=False, kw_only=True)
class TableCounter(DayCounter):
    """A counter of the digest table: it looks up the day items a batch needs that this container
    does not know to exist, and remembers those it wrote or saw."""

    table_name: str
    client: DynamoDBClient
    ledger_table_name: str = ""
    store: DayStore = field(init=False)
    known_days: KnownDays = field(init=False, default_factory=KnownDays)

    def __post_init__(self) -> None:
        self.store = DayStore(self.client, self.table_name, self.ledger_table_name)

    def lookup(self, messages: Sequence[SensorMessage], expired: Expired = None) -> Lookup:
        return self.lookup_days(messages, Lookup(), expired)

    def lookup_days(self, messages: Sequence[SensorMessage], found: Lookup, expired: Expired = None) -> Lookup:
        """The day items of the groups of ``messages`` (those not counted before) that this container
        does not know to exist: each one missing starts at the insert, each one there is remembered with
        what the writes need of it (its hours map, its readings: ``DayView``)."""
        days = self.known_days.unknown(
            (m.sensor_id, m.day) for m in messages if self.known_key(m) not in found.counted_before
        )
        if days:
            items = self.store.find_days(
                days,
                found,
                projection=[
                    schema.SENSOR_ID,
                    schema.DATE,
                    schema.HOUR_COUNTS,
                    schema.READINGS,
                    schema.READINGS_REPAIRS,
                    schema.IMPORT_SEQ,
                    schema.IMPORT_IDS,
                    schema.IMPORT_PAGES,
                ],
                expired=expired,
            )
            for day, item in items.items():
                self.known_days.add([day], view_of(item, identities=False))
            found.missing_days = set(days) - set(items)
        return found

    def name_the_repair(self, key: DayKey, outcome: GroupOutcome) -> None:
        """The day item, read (strongly consistent, one unit): the attribute a counting write cannot add
        the group's count to (one whose sum would pass DynamoDB's 38 digits too), or the item too large
        to grow (``schema.check_day_item``), named with what mends it; a read that fails names nothing
        (the generic repair stands)."""
        try:
            item = self.store.read_day(key)
            schema.check_day_item(item, sizes.item_bytes(item), sum(m.count for m in outcome.rejected))
            past = tally.readings_past_digits(item, outcome.rejected)
        except StoreFault:
            return
        except MalformedItem as bad:
            outcome.reason = f"{outcome.reason}: {bad}"
            outcome.repair = repairs.day_item(*key, bad.attribute)
            if bad.attribute == schema.READINGS:  # its readings, edited since this container read them
                outcome.refused_by = schema.READINGS  # the reports without readings count at once
            return
        if past:
            outcome.reason = (
                f"{schema.describe(item)}: the statistics of {', '.join(repr(n) for n in past)} in its "
                f"{schema.READINGS}, with these reports' values, would need more than DynamoDB's "
                f"{schema.DYNAMODB_DIGITS} digits"
            )
            outcome.repair = repairs.day_item(*key, schema.READINGS)
            outcome.refused_by, outcome.refused_names = schema.READINGS, tuple(past)

    def view(self, group: Group) -> DayView:
        """What the container knows of a group's day item: missing (a read found none), as last seen,
        or not seen (``UNSEEN``: its writes find out)."""
        return MISSING if group.missing else (self.known_days.get(group.key) or UNSEEN)

    @staticmethod
    def first_step(missing: bool) -> UpsertStep:
        """Where a group's update -> insert -> update starts: at the insert for a day found missing."""
        return UpsertStep.CREATE_IF_MISSING if missing else UpsertStep.UPDATE_IF_EXISTS


IMPORT_PAGES_A_REQUEST = 25
"""Pages of imported identities read a ``BatchGetItem`` (each up to 160 KB)."""


class ImportedRows:
    """What a live writer checks before it counts reports that name an ``event_id`` on a day holding
    imported rows (docs/import.md, "Live and imported reports"): a report whose identity the import kept
    on its day is the imported row it repeats, and is not counted again. The pages of a day's imported
    identities never change: read once (strongly consistent: a page is written in the transaction
    that names it), and kept."""

    def __init__(self, store: DayStore) -> None:
        self._store = store
        self.pages: FrozenPages[bytes] = FrozenPages()

    def drop(
        self, day: DayKey, view: DayView, messages: list[SensorMessage], outcome: GroupOutcome
    ) -> list[SensorMessage]:
        """``messages`` without those the day's imported rows hold, which ``outcome`` gets as duplicates."""
        repeated = {m.message_id for m in self.repeated(day, view, messages, outcome)}
        if not repeated:
            return messages
        outcome.duplicates.extend(m for m in messages if m.message_id in repeated)
        return [m for m in messages if m.message_id not in repeated]

    def repeated(
        self, day: DayKey, view: DayView, messages: Sequence[SensorMessage], outcome: GroupOutcome
    ) -> list[SensorMessage]:
        """Of ``messages``, those the day's imported rows hold; ``RefusedWrite`` with the repair when some
        name an ``event_id`` and the day's import attributes cannot be read."""
        named = [m for m in messages if m.named]
        if not named:
            return []
        if view.imports_broken is not None:
            bad = view.imports_broken
            raise RefusedWrite(str(bad), repair=repairs.day_item(*day, bad.attribute), attribute=bad.attribute)
        imports = view.imports
        if not imports.seq:
            return []
        held, unread = self.pages.held(day, sorted(imports.pages))
        for start in range(0, len(unread), IMPORT_PAGES_A_REQUEST):
            chunk = unread[start : start + IMPORT_PAGES_A_REQUEST]
            keys = [schema.import_page_key(*day, page) for page in chunk]
            found = self._store.find_ledger(keys, outcome, per_request=IMPORT_PAGES_A_REQUEST)
            for page, key in zip(chunk, keys, strict=True):
                item = found.get(str(key[schema.LEDGER_KEY]["S"]))
                if item is None:  # named, and not there: a hand-made item (the import refuses the day too)
                    raise RefusedWrite(
                        f"{schema.describe(schema.day_key(*day))} names a page of imported rows the ledger does not "
                        "hold",
                        repair=repairs.day_item(*day, schema.IMPORT_PAGES),
                        attribute=schema.IMPORT_PAGES,
                    )
                ids = ids_of(item)
                held |= ids
                self.pages.keep(day, page, ids)
        held |= imports.ids
        return [m for m in named if import_event_hash(m.event_id) in held]


class DayWrite(ThreeStepUpsert):
    """A write of one day item through the three steps (each counter's own: ``PlainWrite``, ``LedgerWrite``,
    ``OrderedWrite``): the store and the day it writes, the group's outcome it fills, and ``view``, what
    the writes know of the item (following what each refusal shows)."""

    def __init__(self, store: DayStore, day: DayKey, outcome: GroupOutcome, view: DayView) -> None:
        super().__init__()
        self.view = view
        self._store = store
        self._day = day
        self._outcome = outcome
