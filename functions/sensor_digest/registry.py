"""The sensor registry's writes: profiles with a unique serial number and optimistic-lock updates
(the command line's; the ingest path reads profiles through ``profiles.py`` alone).

A profile is the digest table's item at ``schema.profile_key``: a name, a serial, an IANA time
zone and a version. A serial is kept unique across sensors by a sentinel item in the ledger
(``schema.sentinel_key``), written in the same transaction as the profile:

- register: put the profile, stamped with its registration time (``RegisteredAt``, from the
  injected clock), on ``attribute_not_exists`` and the sentinel on "absent, or already this
  sensor's" (a sentinel left without its profile, by a restore or a hand-made delete);
- update: read, change, write on condition that the version is still the one read (+1); a serial
  change moves the sentinel in the same transaction (the old one deleted if it is absent or this
  sensor's, the new one put as in register); a lost race is retried from a fresh read a bounded
  number of times, since every change is a function of the profile it reads;
- delete: profile and sentinel together, on the same conditions.

A cancelled transaction is read action by action: ``SensorExists`` only when the profile's
condition failed, ``SerialTaken`` only when the new sentinel's did, ``SerialHeldElsewhere`` when
the profile's own sentinel names another sensor, a version conflict only when the version moved.
Throttling or a conflicting transaction (``dynamo.RETRYABLE_CANCELLATION_CODES``) wrote nothing
and is retried with jittered backoff (``backoff.py``), then ``RegistryBusy``. Every failure the caller must tell
apart is its own error, naming the conflict.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from sensor_digest.backoff import Backoff
from sensor_digest.errors import (
    InvalidProfile,
    RegistryBusy,
    RegistryError,
    SensorExists,
    SensorNotFound,
    SerialHeldElsewhere,
    SerialTaken,
    TransientFault,
    VersionConflict,
)
from sensor_digest.profiles import ProfileCache, Profiles, SensorProfile
from sensor_digest.silence.rules import registration_text
from sensor_digest.store import dynamo, expressions, reads, schema

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = [
    "Deletion",
    "InvalidProfile",
    "ProfileCache",
    "Profiles",
    "Registry",
    "RegistryBusy",
    "RegistryError",
    "SensorExists",
    "SensorNotFound",
    "SensorProfile",
    "SerialHeldElsewhere",
    "SerialTaken",
    "VersionConflict",
    "sentinel_owner",
]

MAX_BACKOFF_SECONDS = 1.0


class Registry(Profiles):
    """Profiles registered, updated and deleted with their serial's sentinel (see the module)."""

    def __init__(
        self,
        *,
        table_name: str,
        ledger_table_name: str,
        client: DynamoDBClient,
        max_attempts: int = 8,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__(table_name=table_name, client=client, max_attempts=max_attempts)
        self._ledger = ledger_table_name
        self._clock = clock
        self._attempts = max_attempts
        self._backoff = Backoff(attempts=max_attempts, base_seconds=0.01, cap_seconds=MAX_BACKOFF_SECONDS, sleep=sleep)

    # -- writes ---------------------------------------------------------------------------

    def list_unlisted(self) -> int:
        """Give every profile written before the ``Profiles`` index existed (no ``ProfileList``) its
        entry there; returns how many. One Scan (an operator's command, never a Lambda's path), then one
        ``UpdateItem`` per such profile, on condition that it is still a profile without one (a profile
        deleted meanwhile stays deleted; one updated meanwhile got it from the update). Only
        ``ProfileList`` is written: the version, and so any update in flight, is left alone."""
        listed = 0
        for item in reads.profile_items(self._client, self._table):
            if schema.PROFILE_LIST in item:
                continue
            written = dynamo.conditional_write("UpdateItem", partial(self._list, schema.sensor_of_item(item)))
            listed += written is None
        return listed

    def _list(self, sensor_id: int) -> object:
        """Give a profile its ``Profiles`` entry, if it is still a profile without one."""
        return self._client.update_item(
            TableName=self._table,
            Key=schema.profile_key(sensor_id),
            UpdateExpression="SET #l = :l",
            ConditionExpression="attribute_exists(#pk) AND attribute_not_exists(#l)",
            ExpressionAttributeNames={"#l": schema.PROFILE_LIST, "#pk": schema.SENSOR_ID},
            ExpressionAttributeValues={":l": {"S": schema.PROFILE_LIST_VALUE}},
        )

    def register(self, profile: SensorProfile) -> SensorProfile:
        profile = replace(profile.validate(), version=1, registered_at=registration_text(self._clock()))
        actions = [self._put_profile_if_new(profile), self._put_sentinel(profile)]
        refusals: list[dynamo.Refusal] | None = None
        for attempt in range(self._attempts):
            refusals = self._transact(actions)
            if refusals is None:
                return profile
            profile_code, sentinel_code = (r.code for r in refusals)
            if profile_code == dynamo.CONDITIONAL_CHECK_FAILED:
                raise SensorExists(f"sensor {profile.sensor_id} is already registered")
            if sentinel_code == dynamo.CONDITIONAL_CHECK_FAILED:
                raise SerialTaken(f"serial {profile.serial!r} already belongs to another sensor")
            self._back_off(attempt)  # throttled or in conflict: nothing was written
        raise self._busy(f"registering sensor {profile.sensor_id}", refusals)

    def update(self, sensor_id: int, change: Callable[[SensorProfile], SensorProfile]) -> SensorProfile:
        """Apply ``change`` to the current profile and write it if nobody changed it meanwhile.

        A lost race is retried from a fresh read (``change`` sees the new profile), up to
        ``max_attempts`` times, then ``VersionConflict``; ``RegistryBusy`` when the last attempt
        was cancelled by throttling or a conflicting transaction.
        """
        refusals: list[dynamo.Refusal] | None = None
        for attempt in range(self._attempts):
            current = self.get(sensor_id)
            if current is None:
                raise SensorNotFound(f"sensor {sensor_id} is not registered")
            changed = replace(change(current), sensor_id=sensor_id, registered_at=current.registered_at)
            wanted = replace(changed, version=current.version + 1).validate()  # registered once, kept
            actions = [self._put_profile_if_version(wanted, current.version)]
            if wanted.serial != current.serial:
                actions += [self._delete_sentinel(current), self._put_sentinel(wanted)]
            else:  # the serial stays: its sentinel must still be free or this sensor's
                actions += [self._check_sentinel(current)]
            refusals = self._transact(actions)
            if refusals is None:
                return wanted
            if len(refusals) >= 2 and self._sentinels_decide(refusals):
                if refusals[1].code == dynamo.CONDITIONAL_CHECK_FAILED:
                    raise self._held_elsewhere(current, refusals[1], "nothing was changed")
                raise SerialTaken(f"serial {wanted.serial!r} already belongs to another sensor")
            self._back_off(attempt)  # a lost race (re-read), or throttled / in conflict
        if self._retryable(refusals):
            raise self._busy(f"updating sensor {sensor_id}", refusals)
        raise VersionConflict(f"sensor {sensor_id} kept changing under us; {self._attempts} attempts lost the race")

    def delete(self, sensor_id: int) -> Deletion:
        """Delete a profile, and its serial's sentinel with it. The profile is deleted as it was read,
        even a malformed one (the repair for it). A sentinel that names another sensor (an
        inconsistency made outside the registry) is left to that sensor: the profile goes alone,
        on condition that the sentinel still names that sensor, and ``Deletion.held_by`` says so."""
        refusals: list[dynamo.Refusal] | None = None
        kept: dict[str, Any] | None = None  # the other sensor's sentinel, as last seen
        for attempt in range(self._attempts):
            item = reads.get_item(self._client, self._table, schema.profile_key(sensor_id))
            if item is None:
                raise SensorNotFound(f"sensor {sensor_id} is not registered")
            serial = item.get(schema.SERIAL, {}).get("S") if isinstance(item.get(schema.SERIAL), dict) else None
            actions = [self._delete_profile_as_read(item)]
            if serial is not None:
                sentinel = schema.sentinel_key(serial)
                if kept is None:
                    actions.append({"Delete": {"TableName": self._ledger, "Key": sentinel, **self._free_or(sensor_id)}})
                else:
                    actions.append({"ConditionCheck": {"TableName": self._ledger, "Key": sentinel, **_still(kept)}})
            present = serial is not None and kept is None and self._sentinel_exists(serial)
            refusals = self._transact(actions)
            if refusals is None:
                held_by = None if kept is None else sentinel_owner(kept)
                return Deletion(
                    sensor_id=sensor_id,
                    serial=serial,
                    serial_freed=present,
                    held_by=held_by,
                )
            if len(refusals) == 2 and self._sentinels_decide(refusals):
                # the sentinel is someone else's (first time), or no longer what we saw: read it all again
                kept = refusals[1].item if kept is None and refusals[1].item else None
                continue
            self._back_off(attempt)
        if self._retryable(refusals):
            raise self._busy(f"deleting sensor {sensor_id}", refusals)
        raise VersionConflict(f"sensor {sensor_id} kept changing while it was being deleted")

    # -- decisions over a cancelled transaction (the profile's action first) ------------------

    @staticmethod
    def _retryable(refusals: list[dynamo.Refusal] | None) -> bool:
        return any(r.code in dynamo.RETRYABLE_CANCELLATION_CODES for r in refusals or [])

    @classmethod
    def _sentinels_decide(cls, refusals: list[dynamo.Refusal]) -> bool:
        """Whether a sentinel's failed condition is the verdict: the profile's version condition
        held and nothing was throttled or in conflict (an action in conflict may not have been
        evaluated, so its ``None`` proves nothing: retry from a fresh read instead)."""
        return refusals[0].code != dynamo.CONDITIONAL_CHECK_FAILED and not cls._retryable(refusals)

    @staticmethod
    def _held_elsewhere(current: SensorProfile, refusal: dynamo.Refusal, outcome: str) -> SerialHeldElsewhere:
        """The profile's serial has a sentinel naming someone else (``refusal.item``: the sentinel)."""
        owner = refusal.item.get(schema.SENSOR_ID, {}).get("N")
        names = f"names sensor {owner}" if owner is not None else "names no sensor"
        return SerialHeldElsewhere(
            f"sensor {current.sensor_id}'s serial {current.serial!r} has a sentinel in the ledger "
            f"({schema.SERIAL_PREFIX}{current.serial}) that {names}, not sensor {current.sensor_id}; {outcome}"
        )

    def _busy(self, what: str, refusals: list[dynamo.Refusal] | None) -> RegistryBusy:
        codes = sorted({r.code for r in refusals or [] if r.code in dynamo.RETRYABLE_CANCELLATION_CODES})
        return RegistryBusy(
            f"{what}: none of {self._attempts} attempts committed, the last cancelled by DynamoDB "
            f"({', '.join(codes)}); nothing was written, try again"
        )

    def _back_off(self, attempt: int) -> None:
        """Before the next attempt (none after the last): full jitter, 0 to min(1 s, 10 ms * 2^attempt)."""
        if attempt + 1 < self._attempts:
            self._backoff.wait(attempt)

    # -- actions --------------------------------------------------------------------------

    def _put_profile_if_new(self, profile: SensorProfile) -> dict[str, Any]:
        return expressions.put(expressions.put_if_absent(self._table, profile.item()))

    def _put_profile_if_version(self, profile: SensorProfile, read_version: int) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self._table,
                "Item": profile.item(),
                "ConditionExpression": "#v = :v",
                "ExpressionAttributeNames": {"#v": schema.VERSION},
                "ExpressionAttributeValues": {":v": {"N": str(read_version)}},
            }
        }

    def _sentinel_is_free_or_mine(self, profile: SensorProfile) -> dict[str, Any]:
        """The condition of every sentinel write: no sentinel, or one naming this sensor."""
        return self._free_or(profile.sensor_id)

    @staticmethod
    def _free_or(sensor_id: int) -> dict[str, Any]:
        return {
            "ConditionExpression": "attribute_not_exists(#pk) OR #s = :s",
            "ExpressionAttributeNames": {"#pk": schema.LEDGER_KEY, "#s": schema.SENSOR_ID},
            "ExpressionAttributeValues": {":s": {"N": str(sensor_id)}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }

    def _delete_profile_as_read(self, item: dict[str, Any]) -> dict[str, Any]:
        """Delete the profile item on condition that its version is still the one read (whatever
        its type, or its absence, on a malformed item)."""
        version = item.get(schema.VERSION)
        condition: dict[str, Any] = (
            {"ConditionExpression": "#v = :v", "ExpressionAttributeValues": {":v": version}}
            if isinstance(version, dict)
            else {"ConditionExpression": "attribute_exists(#pk) AND attribute_not_exists(#v)"}
        )
        names = {"#v": schema.VERSION} | ({} if isinstance(version, dict) else {"#pk": schema.SENSOR_ID})
        return {
            "Delete": {
                "TableName": self._table,
                "Key": schema.profile_key(schema.sensor_of_item(item)),
                "ExpressionAttributeNames": names,
                **condition,
            }
        }

    def _put_sentinel(self, profile: SensorProfile) -> dict[str, Any]:
        item = {**schema.sentinel_key(profile.serial), schema.SENSOR_ID: {"N": str(profile.sensor_id)}}
        return {"Put": {"TableName": self._ledger, "Item": item, **self._sentinel_is_free_or_mine(profile)}}

    def _sentinel_exists(self, serial: str) -> bool:
        return reads.get_item(self._client, self._ledger, schema.sentinel_key(serial)) is not None

    def _check_sentinel(self, profile: SensorProfile) -> dict[str, Any]:
        key = schema.sentinel_key(profile.serial)
        return {"ConditionCheck": {"TableName": self._ledger, "Key": key, **self._sentinel_is_free_or_mine(profile)}}

    def _delete_sentinel(self, profile: SensorProfile) -> dict[str, Any]:
        key = schema.sentinel_key(profile.serial)
        return {"Delete": {"TableName": self._ledger, "Key": key, **self._sentinel_is_free_or_mine(profile)}}

    def _transact(self, actions: list[dict[str, Any]]) -> list[dynamo.Refusal] | None:
        """``None`` when committed; the refusals when a condition failed or DynamoDB throttled or
        found a conflicting transaction (nothing written; the caller decides); any other
        cancellation is a fault."""
        refusals = dynamo.transact_refusals(self._client, actions)
        if refusals is None:
            return None
        codes = [r.code for r in refusals]
        if dynamo.CONDITIONAL_CHECK_FAILED in codes or any(c in dynamo.RETRYABLE_CANCELLATION_CODES for c in codes):
            return refusals
        raise TransientFault(f"transaction cancelled (unexpected): {', '.join(codes)}")


@dataclass(frozen=True)
class Deletion:
    """A deleted profile: its serial, whether the serial is free again (its sentinel was there and
    is gone; a profile without a sentinel frees nothing anyone could see), and (when the serial's
    sentinel named another sensor, which keeps it) that sensor."""

    sensor_id: int
    serial: str | None
    serial_freed: bool
    held_by: int | None = None


def sentinel_owner(sentinel: dict[str, Any]) -> int | None:
    """The sensor a serial's sentinel item names, or None when it names none readable."""
    value = sentinel.get(schema.SENSOR_ID)
    try:
        return int(value["N"]) if isinstance(value, dict) else None
    except (KeyError, TypeError, ValueError):
        return None


def _still(sentinel: dict[str, Any]) -> dict[str, Any]:
    """A condition that the sentinel still names the sensor it named when read (or still none)."""
    owner = sentinel.get(schema.SENSOR_ID)
    if isinstance(owner, dict):
        return {
            "ConditionExpression": "#s = :s",
            "ExpressionAttributeNames": {"#s": schema.SENSOR_ID},
            "ExpressionAttributeValues": {":s": owner},
        }
    return {
        "ConditionExpression": "attribute_exists(#pk) AND attribute_not_exists(#s)",
        "ExpressionAttributeNames": {"#pk": schema.LEDGER_KEY, "#s": schema.SENSOR_ID},
    }
