"""The sensor registry: profiles with a unique serial number and optimistic-lock updates.

A profile is the digest table's item at ``layout.profile_key``: a name, a serial, an IANA time
zone and a version. A serial is kept unique across sensors by a sentinel item in the ledger
(``layout.sentinel_key``), written in the same transaction as the profile:

- register: put the profile and the sentinel, each on ``attribute_not_exists``;
- update: read, change, write on condition that the version is still the one read (+1); a serial
  change moves the sentinel in the same transaction; a lost race is retried from a fresh read a
  bounded number of times, since every change is a function of the profile it reads;
- delete: profile and sentinel together, on the same version condition.

Every failure the caller must tell apart is its own error, naming the conflict.
"""

from __future__ import annotations

import random
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sensor_digest import dynamo, layout
from sensor_digest.errors import SensorDigestError, TransientFault

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_NAME = 256
MAX_SERIAL = 128


class RegistryError(SensorDigestError):
    """A registry operation was refused; the message says why."""


class InvalidProfile(RegistryError):
    pass


class SensorExists(RegistryError):
    pass


class SerialTaken(RegistryError):
    pass


class SensorNotFound(RegistryError):
    pass


class VersionConflict(RegistryError):
    """Someone else changed the profile between our read and our write, every time we tried."""


@dataclass(frozen=True)
class SensorProfile:
    sensor_id: int
    name: str
    serial: str
    timezone: str = "UTC"
    version: int = 1

    def validate(self) -> SensorProfile:
        if not 0 <= self.sensor_id <= 2**53 - 1:
            raise InvalidProfile(f"sensor id {self.sensor_id} is out of range")
        if not 1 <= len(self.name) <= MAX_NAME or not self.name.isprintable():
            raise InvalidProfile(f"name must be 1 to {MAX_NAME} printable characters")
        if not 1 <= len(self.serial) <= MAX_SERIAL or not self.serial.isprintable():
            raise InvalidProfile(f"serial must be 1 to {MAX_SERIAL} printable characters")
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise InvalidProfile(f"time zone {self.timezone!r} is not an IANA time zone") from None
        return self

    def item(self) -> dict[str, Any]:
        return {
            **layout.profile_key(self.sensor_id),
            layout.NAME: {"S": self.name},
            layout.SERIAL: {"S": self.serial},
            layout.TIME_ZONE: {"S": self.timezone},
            layout.VERSION: {"N": str(self.version)},
        }

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> SensorProfile:
        return cls(
            sensor_id=layout.sensor_of_item(item),
            name=item[layout.NAME]["S"],
            serial=item[layout.SERIAL]["S"],
            timezone=item.get(layout.TIME_ZONE, {}).get("S", "UTC"),
            version=int(item[layout.VERSION]["N"]),
        )


class Registry:
    def __init__(
        self, *, table_name: str, ledger_table_name: str, client: DynamoDBClient, max_attempts: int = 8
    ) -> None:
        self._table = table_name
        self._ledger = ledger_table_name
        self._client = client
        self._attempts = max_attempts

    # -- reads ----------------------------------------------------------------------------

    def get(self, sensor_id: int) -> SensorProfile | None:
        response: dict[str, Any] = dict(
            dynamo.call(
                "GetItem",
                lambda: self._client.get_item(
                    TableName=self._table, Key=layout.profile_key(sensor_id), ConsistentRead=True
                ),
            )
            or {}
        )
        item = response.get("Item")
        return SensorProfile.from_item(item) if item else None

    def get_many(self, sensor_ids: Iterable[int]) -> dict[int, SensorProfile]:
        """Profiles of these sensors (those registered): one ``BatchGetItem`` per 100 sensors."""
        keys = [layout.profile_key(i) for i in sorted(set(sensor_ids))]
        items = dynamo.batch_get(self._client, self._table, keys, consistent=True, attempts=self._attempts)
        return {profile.sensor_id: profile for profile in map(SensorProfile.from_item, items)}

    def all_profiles(self) -> list[SensorProfile]:
        """Every profile (a Scan: for the command line, never for the Lambda functions)."""
        out: list[SensorProfile] = []
        paginator = self._client.get_paginator("scan")
        for page in paginator.paginate(
            TableName=self._table,
            FilterExpression="#d = :p",
            ExpressionAttributeNames={"#d": layout.DATE},
            ExpressionAttributeValues={":p": {"S": layout.PROFILE_SORT_KEY}},
            ConsistentRead=True,
        ):
            out.extend(SensorProfile.from_item(i) for i in page["Items"])
        return sorted(out, key=lambda p: p.sensor_id)

    # -- writes ---------------------------------------------------------------------------

    def register(self, profile: SensorProfile) -> SensorProfile:
        profile = replace(profile.validate(), version=1)
        actions = [
            self._put_profile_if_new(profile),
            self._put_sentinel(profile),
        ]
        codes = self._transact(actions)
        if codes is not None:
            if codes[0] == dynamo.CONDITIONAL_CHECK_FAILED:
                raise SensorExists(f"sensor {profile.sensor_id} is already registered")
            raise SerialTaken(f"serial {profile.serial!r} already belongs to another sensor")
        return profile

    def update(self, sensor_id: int, change: Callable[[SensorProfile], SensorProfile]) -> SensorProfile:
        """Apply ``change`` to the current profile and write it if nobody changed it meanwhile.

        A lost race is retried from a fresh read (``change`` sees the new profile), up to
        ``max_attempts`` times, then ``VersionConflict``.
        """
        for attempt in range(self._attempts):
            current = self.get(sensor_id)
            if current is None:
                raise SensorNotFound(f"sensor {sensor_id} is not registered")
            wanted = replace(change(current), sensor_id=sensor_id, version=current.version + 1).validate()
            actions = [self._put_profile_if_version(wanted, current.version)]
            if wanted.serial != current.serial:
                actions += [self._delete_sentinel(current), self._put_sentinel(wanted)]
            codes = self._transact(actions)
            if codes is None:
                return wanted
            if (
                len(codes) == 3
                and codes[2] == dynamo.CONDITIONAL_CHECK_FAILED
                and codes[0] != dynamo.CONDITIONAL_CHECK_FAILED
            ):
                raise SerialTaken(f"serial {wanted.serial!r} already belongs to another sensor")
            time.sleep(random.uniform(0, 0.01 * 2**attempt))  # noqa: S311 - jitter, not security
        raise VersionConflict(f"sensor {sensor_id} kept changing under us; {self._attempts} attempts lost the race")

    def delete(self, sensor_id: int) -> SensorProfile:
        for _ in range(self._attempts):
            current = self.get(sensor_id)
            if current is None:
                raise SensorNotFound(f"sensor {sensor_id} is not registered")
            actions = [
                {
                    "Delete": {
                        "TableName": self._table,
                        "Key": layout.profile_key(sensor_id),
                        "ConditionExpression": "#v = :v",
                        "ExpressionAttributeNames": {"#v": layout.VERSION},
                        "ExpressionAttributeValues": {":v": {"N": str(current.version)}},
                    }
                },
                self._delete_sentinel(current),
            ]
            if self._transact(actions) is None:
                return current
        raise VersionConflict(f"sensor {sensor_id} kept changing while it was being deleted")

    # -- actions --------------------------------------------------------------------------

    def _put_profile_if_new(self, profile: SensorProfile) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self._table,
                "Item": profile.item(),
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": layout.SENSOR_ID},
            }
        }

    def _put_profile_if_version(self, profile: SensorProfile, read_version: int) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self._table,
                "Item": profile.item(),
                "ConditionExpression": "#v = :v",
                "ExpressionAttributeNames": {"#v": layout.VERSION},
                "ExpressionAttributeValues": {":v": {"N": str(read_version)}},
            }
        }

    def _put_sentinel(self, profile: SensorProfile) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self._ledger,
                "Item": {**layout.sentinel_key(profile.serial), layout.SENSOR_ID: {"N": str(profile.sensor_id)}},
                "ConditionExpression": "attribute_not_exists(#pk)",
                "ExpressionAttributeNames": {"#pk": layout.LEDGER_KEY},
            }
        }

    def _delete_sentinel(self, profile: SensorProfile) -> dict[str, Any]:
        return {
            "Delete": {
                "TableName": self._ledger,
                "Key": layout.sentinel_key(profile.serial),
                "ConditionExpression": "#s = :s",
                "ExpressionAttributeNames": {"#s": layout.SENSOR_ID},
                "ExpressionAttributeValues": {":s": {"N": str(profile.sensor_id)}},
            }
        }

    def _transact(self, actions: list[dict[str, Any]]) -> list[str] | None:
        """``None`` when committed; the cancellation codes when a condition failed or a concurrent
        transaction conflicted (the caller re-reads and retries); any other cancellation is a fault."""
        codes = dynamo.transact(self._client, actions)
        if codes is None or any(c in dynamo.RETRYABLE_CANCELLATION_CODES for c in codes):
            return codes
        if dynamo.CONDITIONAL_CHECK_FAILED not in codes:
            raise TransientFault(f"transaction cancelled (unexpected): {', '.join(codes)}")
        return codes


PROFILES_KEPT = 100_000
"""Sensors whose profile (or its absence) a container remembers, least recently used forgotten
past it: sensor ids come from producers, so without a bound a stream of fresh ids would grow
the cache until the container ran out of memory (about 22 MB of unregistered ids at this bound,
measured with tracemalloc)."""


class ProfileCache:
    """Per-container cache of sensors' registration and time zone, refreshed after ``ttl`` seconds,
    at most ``limit`` sensors (least recently used forgotten)."""

    def __init__(
        self,
        registry: Registry,
        ttl: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        limit: int = PROFILES_KEPT,
    ) -> None:
        self._registry = registry
        self._ttl = ttl
        self._clock = clock
        self._limit = limit
        self._entries: OrderedDict[int, tuple[float, SensorProfile | None]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def prefetch(self, sensor_ids: Iterable[int]) -> dict[int, SensorProfile | None]:
        """The profiles of these sensors (``None``: not registered), read with one ``BatchGetItem``
        per 100 that are not cached or have expired."""
        now = self._clock()
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
            found = self._registry.get_many(stale)
            for sensor_id in stale:
                out[sensor_id] = found.get(sensor_id)
                self._entries[sensor_id] = (now + self._ttl, out[sensor_id])
                self._entries.move_to_end(sensor_id)
            while len(self._entries) > self._limit:
                self._entries.popitem(last=False)
        return out

    def profile(self, sensor_id: int) -> SensorProfile | None:
        return self.prefetch([sensor_id])[sensor_id]

    def zone(self, sensor_id: int) -> ZoneInfo | None:
        found = self.profile(sensor_id)
        return ZoneInfo(found.timezone) if found is not None else None
