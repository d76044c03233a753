"""What ``sensor-digest alarms`` does beyond a call or two: a rule file read and checked whole before
anything is written, what applying it would change, a rule set changed by one rule (read again and
decided again when another apply won the race), every alarm by state, and who the operator is.

A rule file is JSON (``{"rules": [...]}`` or a list, ``RuleSet.parse``): numbers are read as
written (exact decimals), an object that names a field twice or a number JSON cannot carry (``NaN``)
is refused, and so is a YAML file, by its name, with the conversion to use. Nothing of a file that
breaks a rule is applied: the rule set is stored whole (``RuleStore.save``) or not at all.
"""

from __future__ import annotations

import getpass
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from sensor_digest.alarms.model import LISTED_ORDER, Alarm, State
from sensor_digest.alarms.operations import AlarmOperations
from sensor_digest.alarms.rules import InvalidRule, RuleSet
from sensor_digest.alarms.store import AlarmStore, RulesChanged, RuleStore
from sensor_digest_tools.ops.targets import Target

MICROS = 1_000_000
YAML_SUFFIXES = (".yaml", ".yml")
MAX_RULE_FILE_BYTES = 1_000_000
RACE_ATTEMPTS = 5


def operations(target: Target) -> AlarmOperations:
    """The alarm operations of a target with both tables (``target.need("table", "ledger")`` first)."""
    client = target.dynamodb()
    return AlarmOperations(
        rules=RuleStore(ledger_table_name=str(target.ledger), client=client),
        alarms=AlarmStore(table_name=str(target.table), client=client),
    )


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise InvalidRule(f"field {key[:40]!r} is given twice in one object")
        seen[key] = value
    return seen


def _constant(name: str) -> Any:
    raise InvalidRule(f"{name} is no JSON number")


def load_json(text: str) -> Any:
    """Rules' JSON text, strictly: numbers as exact decimals, no field twice in an object, no
    ``NaN``; ``InvalidRule`` in one line."""
    try:
        return json.loads(text, parse_float=Decimal, object_pairs_hook=_pairs, parse_constant=_constant)
    except json.JSONDecodeError as bad:
        raise InvalidRule(f"not JSON: {bad.msg} at line {bad.lineno}, column {bad.colno}") from None
    except RecursionError:
        raise InvalidRule("not JSON rules: nested too deep") from None


def parse_rules_text(text: str) -> RuleSet:
    """A rule file's JSON text as a rule set; ``InvalidRule`` in one line."""
    return RuleSet.parse(load_json(text))


def read_rule_file(path: Path) -> RuleSet:
    """The rule set of a JSON rule file; ``InvalidRule`` (naming the file) for anything wrong with it."""
    if path.suffix.lower() in YAML_SUFFIXES:
        raise InvalidRule(
            f"{path} is YAML, which is not read: convert it to JSON first (`yq -o json {path.name} > rules.json`)"
        )
    try:
        if path.stat().st_size > MAX_RULE_FILE_BYTES:
            raise InvalidRule(f"{path} is over {MAX_RULE_FILE_BYTES:,} bytes: no rule file is that long")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidRule(f"{path} is not UTF-8 text") from None
    except OSError as bad:
        raise InvalidRule(f"{path} cannot be read: {bad.strerror or bad}") from None
    try:
        return parse_rules_text(text)
    except InvalidRule as bad:
        raise InvalidRule(f"{path}: {bad.reason}") from None


@dataclass(frozen=True)
class RuleChanges:
    """What storing ``after`` over ``before`` changes, by rule name."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: tuple[str, ...]

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def words(self) -> str:
        parts = [
            f"{what} {', '.join(names)}"
            for what, names in (("added", self.added), ("changed", self.changed), ("removed", self.removed))
            if names
        ]
        return "; ".join(parts) if parts else "nothing changes"

    def as_json(self) -> dict[str, list[str]]:
        return {
            "added": list(self.added),
            "changed": list(self.changed),
            "removed": list(self.removed),
            "unchanged": list(self.unchanged),
        }


def changes(before: RuleSet, after: RuleSet) -> RuleChanges:
    old = {r.name: r.document() for r in before.rules}
    new = {r.name: r.document() for r in after.rules}
    return RuleChanges(
        added=tuple(sorted(set(new) - set(old))),
        changed=tuple(sorted(n for n in set(new) & set(old) if new[n] != old[n])),
        removed=tuple(sorted(set(old) - set(new))),
        unchanged=tuple(sorted(n for n in set(new) & set(old) if new[n] == old[n])),
    )


def now_micros() -> int:
    return int(time.time() * MICROS)


def change_rules(store: RuleStore, change: Callable[[RuleSet], RuleSet], *, by: str) -> tuple[RuleSet, RuleSet]:
    """The rule set read, changed by ``change`` and stored on condition of the version read; read and
    changed again when another writer stored a version in between. The rules before and after."""
    for _ in range(RACE_ATTEMPTS):
        before = store.load()
        after = change(before)
        if not changes(before, after).any:
            return before, before
        try:
            return before, store.save(after, expected=before.version, by=by, now=now_micros())
        except RulesChanged:
            continue
    raise RulesChanged(f"the alarm rules kept changing under this change ({RACE_ATTEMPTS} attempts); try again")


def every_alarm(alarms: AlarmStore, states: tuple[State, ...] = LISTED_ORDER, *, page: int = 100) -> Iterator[Alarm]:
    """The alarms of ``states`` (not NORMAL), state by state in that order, by sensor."""
    for state in states:
        start: dict[str, Any] | None = None
        while True:
            found = alarms.in_state(state, limit=page, start=start)
            yield from found.alarms
            start = found.next_key
            if start is None:
                break


def operator_name(target: Target, *, caller_arn: Callable[[Target], str | None] | None = None) -> str:
    """Who acts, as an alarm's transitions and the rule set record it: on a local pipeline (or a
    DynamoDB endpoint of this machine), the OS user's name; on AWS, the caller's IAM ARN (one
    ``sts:GetCallerIdentity``), else the OS user's name."""
    user = _user()
    if target.local or os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
        return user
    arn = (caller_arn or _caller_arn)(target)
    return arn or user


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in the environment nor the password database
        return "unknown"


def _caller_arn(target: Target) -> str | None:
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        sts = boto3.client(
            "sts",
            region_name=target.region,
            config=Config(connect_timeout=3, read_timeout=3, retries={"max_attempts": 1}),
        )
        return str(sts.get_caller_identity()["Arn"])
    except (BotoCoreError, ClientError, KeyError):
        return None
