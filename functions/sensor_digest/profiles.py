"""Sensor profiles as the ingest path reads them: ``SensorProfile`` (the digest table's item at
``schema.profile_key``: a name, a unique serial, an IANA time zone, a version and, optionally, its
own silence threshold and when it was registered), ``Profiles`` (the reads) and ``ProfileCache``
(a container's cache of them, which ingest asks for a sensor's zone). The writes that keep a serial
unique (sentinels, optimistic locking) serve the command line and live in ``registry.py``.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, TypeVar
from zoneinfo import ZoneInfo

from sensor_digest import zones
from sensor_digest.characters import CHARACTER_RULE, control_character
from sensor_digest.errors import InvalidProfile, MalformedItem, RejectedMessage, UnknownTimeZone
from sensor_digest.silence.rules import check_hours, registration_time
from sensor_digest.store import dynamo, reads, schema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_NAME = 256
MAX_SERIAL = 128


@dataclass(frozen=True)
class SensorProfile:
    sensor_id: int
    name: str
    serial: str
    timezone: str = "UTC"
    version: int = 1
    silence_hours: int | None = None  # its own silence threshold (silence/rules.py); None: the stack's
    registered_at: str | None = None  # ``YYYY-MM-DDTHH:MM:SSZ`` (the registry sets it); None: from before

    def validate(self) -> SensorProfile:
        if not 0 <= self.sensor_id <= 2**53 - 1:
            raise InvalidProfile(f"sensor id {self.sensor_id} is out of range")
        for what, value, most in (("name", self.name, MAX_NAME), ("serial", self.serial, MAX_SERIAL)):
            if not 1 <= len(value) <= most:
                raise InvalidProfile(f"{what} must have 1 to {most} characters, got {len(value)}")
            if (found := control_character(value)) is not None:  # the event id's rule (characters.py)
                raise InvalidProfile(f"{what} {CHARACTER_RULE}: {found}")
        try:  # a zone the functions can load: one of the shipped tzdata's, not the machine's
            zones.check(self.timezone)
        except UnknownTimeZone as exc:
            raise InvalidProfile(exc.reason) from None
        if self.silence_hours is not None:
            try:
                check_hours(self.silence_hours)
            except ValueError as exc:
                raise InvalidProfile(str(exc)) from None
        return self

    def item(self) -> dict[str, Any]:
        """The profile as stored: its key, ``ProfileList`` (its entry in the ``Profiles`` index, which
        lists the registered sensors) and its attributes."""
        return {
            **schema.profile_index_key(self.sensor_id),
            schema.NAME: {"S": self.name},
            schema.SERIAL: {"S": self.serial},
            schema.TIME_ZONE: {"S": self.timezone},
            schema.VERSION: {"N": str(self.version)},
            **({} if self.silence_hours is None else {schema.SILENCE_HOURS: {"N": str(self.silence_hours)}}),
            **({} if self.registered_at is None else {schema.REGISTERED_AT: {"S": self.registered_at}}),
        }

    @classmethod
    def from_item(cls, item: dict[str, Any], *, strict_silence: bool = True) -> SensorProfile:
        """The profile an item holds; ``MalformedItem`` (naming the item and the attribute) for an
        item without a profile's shape: every profile the registry writes has all five. Without
        ``strict_silence`` (ingest's and the silence check's reads), a ``SilenceHours`` that is no
        whole number reads as none (the stack's default): it never stops a sensor's counts. A
        ``RegisteredAt`` that is no registration time reads as none (as on a profile from before it)."""
        silence = None
        if schema.SILENCE_HOURS in item:
            try:
                silence = schema.number_of(item, schema.SILENCE_HOURS)
            except MalformedItem:
                if strict_silence:
                    raise
        return cls(
            sensor_id=schema.sensor_of_item(item),
            name=schema.text_of(item, schema.NAME),
            serial=schema.text_of(item, schema.SERIAL),
            timezone=schema.text_of(item, schema.TIME_ZONE),
            version=schema.number_of(item, schema.VERSION),
            silence_hours=silence,
            registered_at=registered_at_of(item),
        )


def registered_at_of(item: dict[str, Any]) -> str | None:
    """A profile item's ``RegisteredAt`` when it is a registration time (``silence.rules``), else ``None``."""
    text = item.get(schema.REGISTERED_AT, {}).get("S") if isinstance(item.get(schema.REGISTERED_AT), dict) else None
    return text if registration_time(text) is not None else None


class Profiles:
    """The registry's reads: one profile, many at once (``BatchGetItem``), every one (a Scan, for the
    command line)."""

    def __init__(
        self, *, table_name: str, client: DynamoDBClient, max_attempts: int = 8, consistent: bool = True
    ) -> None:
        """``consistent``: ``get_many`` reads strongly consistent (ingest: a profile registered a moment
        ago is found), or eventually, at half the read units (the history import, which dates a sensor's
        rows in the zone of its first import whatever its profile says since)."""
        self._table = table_name
        self._client = client
        self._unprocessed = replace(dynamo.UNPROCESSED_KEYS, attempts=max_attempts)
        self._consistent = consistent

    def get(self, sensor_id: int) -> SensorProfile | None:
        item = reads.get_item(self._client, self._table, schema.profile_key(sensor_id))
        return SensorProfile.from_item(item) if item else None

    def get_many(self, sensor_ids: Iterable[int]) -> dict[int, SensorProfile]:
        """Profiles of these sensors (those registered): one ``BatchGetItem`` per 100 sensors."""
        keys = [schema.profile_key(i) for i in sorted(set(sensor_ids))]
        items = dynamo.batch_get(
            self._client, self._table, keys, consistent=self._consistent, backoff=self._unprocessed
        )
        found = (SensorProfile.from_item(item, strict_silence=False) for item in items)
        return {profile.sensor_id: profile for profile in found}

    def all_profiles(self) -> list[SensorProfile]:
        """Every profile (a Scan: for the command line, never for the Lambda functions);
        ``MalformedItem`` if one of them is."""
        profiles, malformed = self.scan_profiles()
        if malformed:
            raise malformed[0]
        return profiles

    def scan_profiles(self) -> tuple[list[SensorProfile], list[MalformedItem]]:
        """Every profile that reads as one, and what is wrong with each item that does not."""
        profiles: list[SensorProfile] = []
        malformed: list[MalformedItem] = []
        for item in reads.profile_items(self._client, self._table):
            try:
                profiles.append(SensorProfile.from_item(item))
            except MalformedItem as bad:
                malformed.append(bad)
        return sorted(profiles, key=lambda p: p.sensor_id), malformed


PROFILES_KEPT = 100_000
"""Sensors whose profile (or its absence) a container remembers, least recently used forgotten
past it: sensor ids come from producers, so without a bound a stream of fresh ids would grow
the cache until the container ran out of memory (about 22 MB of unregistered ids at this bound,
measured with tracemalloc)."""


@dataclass(eq=False)
class ProfileCache:
    """Per-container cache of sensors' registration and time zone, refreshed after ``ttl`` seconds,
    at most ``limit`` sensors (least recently used forgotten)."""

    registry: Profiles
    ttl: float = 60.0
    clock: Callable[[], float] = time.monotonic
    limit: int = PROFILES_KEPT
    _entries: OrderedDict[int, tuple[float, SensorProfile | None]] = field(
        init=False, default_factory=OrderedDict, repr=False
    )

    def __len__(self) -> int:
        return len(self._entries)

    def prefetch(self, sensor_ids: Iterable[int]) -> dict[int, SensorProfile | None]:
        """The profiles of these sensors (``None``: not registered), read with one ``BatchGetItem``
        per 100 that are not cached or have expired."""
        now = self.clock()
        wanted = dict.fromkeys(sensor_ids)
        out: dict[int, SensorProfile | None] = {}
        stale: set[int] = set()
        for sensor_id in wanted:
            entry = self._entries.get(sensor_id)
            if entry is None or entry[0] <= now:
                stale.add(sensor_id)
            else:
                self._entries.move_to_end(sensor_id)
                out[sensor_id] = entry[1]
        if stale:
            found = self.registry.get_many(stale)
            for sensor_id in stale:
                out[sensor_id] = found.get(sensor_id)
                self._entries[sensor_id] = (now + self.ttl, out[sensor_id])
                self._entries.move_to_end(sensor_id)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)
        return out

    def profile(self, sensor_id: int) -> SensorProfile | None:
        return self.prefetch([sensor_id])[sensor_id]

    def zone(self, sensor_id: int) -> ZoneInfo | None:
        """The sensor's registered zone (``None`` if it is not registered). A profile stored with a
        zone the functions cannot load (by an earlier version, or by hand) rejects the report with
        the way to fix it, rather than counting it on a day of another zone."""
        found = self.profile(sensor_id)
        if found is None:
            return None
        try:
            return zones.load(found.timezone)
        except UnknownTimeZone as exc:
            raise RejectedMessage(
                f"sensor {sensor_id} is registered with a time zone the functions cannot load ({exc.reason}); "
                f"fix the profile with `sensor-digest sensors update --sensor {sensor_id} --timezone <zone>`, "
                "then `sensor-digest dlq redrive`"
            ) from None


Zone = TypeVar("Zone", bound=tzinfo)


def dating_zone(
    profiles: ProfileCache | None, sensor_id: int, default: Zone, *, reject_unknown: bool
) -> ZoneInfo | Zone:
    """The zone a sensor's report is dated in: its registered zone, else ``default`` (the digest's);
    ``RejectedMessage`` for an unregistered sensor when ``reject_unknown`` (``UNKNOWN_SENSORS=reject``),
    or for a profile whose zone cannot be loaded; ``MalformedItem`` for a profile that cannot be read.
    Live ingest and the history import date by it alike."""
    zone = profiles.zone(sensor_id) if profiles is not None else None
    if zone is not None:
        return zone
    if reject_unknown and profiles is not None:
        raise RejectedMessage(f"sensor {sensor_id} is not registered (UNKNOWN_SENSORS=reject)")
    return default
