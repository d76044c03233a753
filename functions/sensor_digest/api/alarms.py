"""The read API's alarm routes: alarms by state, a sensor's alarms, an alarm's history, and the
operator's actions (``service.py`` routes them; ``alarms/operations.py`` acts).

- ``GET /alarms[?state=S]``: the alarms in state ``S`` from the sparse ``Alarms`` index, by sensor;
  without ``state``, every alarm that is not NORMAL, in ``LISTED_ORDER`` (ACTIVE first). NORMAL alarms
  are not indexed: ``state=NORMAL`` is a 400 that points at a sensor's alarms. Paginated: a page
  holds at most ``limit`` (``MAX_ALARMS``) alarms, and ``next_token`` continues it, bound to the
  request (``tokens.py``); the position is a state, or a state and the alarm a page stopped after.
- ``GET /sensors/{sensor_id}/alarms``: every alarm of the sensor, NORMAL ones included (one per rule
  that watches it, and the stored ones of rules since deleted).
- ``GET /alarms/{alarm_id}/history``: the alarm's logged transitions, newest first, paginated.
- ``POST /alarms/{alarm_id}/{action}`` (``ACTIONS``): the alarm after the action; ``snooze`` takes
  ``{"until": "<ISO-8601 with an offset>"}`` or ``{"minutes": N}``, the others no body (or ``{}``).
  The operator recorded is the caller's IAM identity (``operator_of``).

Times are ISO-8601 in UTC (``...Z``), values exact decimals (``exact_json``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from sensor_digest import exact_json
from sensor_digest.alarms.model import ACTIONS, LISTED_ORDER, Alarm, State, Transition, iso
from sensor_digest.alarms.operations import MAX_SNOOZE_SECONDS, MICROS, AlarmOperations, parse_alarm_id
from sensor_digest.alarms.rules import NAME
from sensor_digest.api import rules, tokens
from sensor_digest.errors import BadRequest
from sensor_digest.store import schema

MAX_ALARMS = 100
MAX_HISTORY = 100
UNKNOWN_OPERATOR = "unknown"
MAX_SNOOZE_MINUTES = MAX_SNOOZE_SECONDS // 60
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _shown(text: str, most: int = 40) -> str:
    """What the client sent, clipped and quoted as a JSON-safe literal (an error repeats input)."""
    return ascii(text if len(text) <= most else text[:most] + "...")


def _json_shown(value: object, most: int = 70) -> str:
    """A value of the client's JSON body as JSON writes it (exact decimals), clipped."""
    try:
        return ascii(exact_json.dumps(value))[1:-1][:most]
    except (TypeError, ValueError):
        return type(value).__name__


def alarm_json(alarm: Alarm) -> dict[str, Any]:
    """An alarm as the API answers it (and ``sensor-digest alarms ... --json`` prints it)."""
    return {
        "alarm_id": alarm.id,
        "sensor_id": alarm.sensor_id,
        "rule": alarm.rule,
        "reading": alarm.reading,
        "state": alarm.state.value,
        "severity": alarm.severity,
        "since": None if alarm.since is None else iso(alarm.since),
        "snoozed_until": None if alarm.snoozed_until is None else iso(alarm.snoozed_until),
        "version": alarm.version,
    }


def transition_json(t: Transition) -> dict[str, Any]:
    """One transition of an alarm's history; ``value`` and ``report_time`` are ``None`` where an
    operator moved it."""
    return t.as_json()


def operator_of(event: Mapping[str, Any]) -> str:
    """Who acts: the IAM identity API Gateway's IAM authorizer put in the event
    (``requestContext.authorizer.iam.userArn``), else ``unknown``."""
    context = event.get("requestContext")
    authorizer = context.get("authorizer") if isinstance(context, Mapping) else None
    iam = authorizer.get("iam") if isinstance(authorizer, Mapping) else None
    arn = iam.get("userArn") if isinstance(iam, Mapping) else None
    return arn if isinstance(arn, str) and arn.strip() else UNKNOWN_OPERATOR


def listed_state(text: str | None) -> State | None:
    """``state``: one of ``LISTED_ORDER`` (none: all of them)."""
    if text is None:
        return None
    if text == State.NORMAL.value:
        raise BadRequest("NORMAL alarms are not listed: ask a sensor's alarms, GET /sensors/{sensor_id}/alarms")
    if text not in {s.value for s in LISTED_ORDER}:
        listed = ", ".join(s.value for s in LISTED_ORDER)
        raise BadRequest(f"state must be one of {listed}, got {_shown(text)}")
    return State(text)


def _listing_position(after: object, states: tuple[State, ...]) -> tuple[int, dict[str, Any] | None]:
    """Where a page of ``GET /alarms`` stopped: the state's index, and the index key to start after
    (``None``: the state's beginning). A position that is none of these is refused."""
    parts = after.split("/") if isinstance(after, str) else []
    names = [s.value for s in states]
    if len(parts) not in (1, 3) or parts[0] not in names:
        raise BadRequest(tokens.REFUSED)
    index = names.index(parts[0])
    if len(parts) == 1:
        return index, None
    sensor, rule = parts[1], parts[2]
    if not rules.is_sensor_id(sensor) or NAME.fullmatch(rule) is None:
        raise BadRequest(tokens.REFUSED)
    return index, {**schema.alarm_key(int(sensor), rule), schema.ALERTING: {"S": parts[0]}}


def _position_of(state: State, key: Mapping[str, Any]) -> str:
    sensor = key[schema.SENSOR_ID]["N"]
    rule = str(key[schema.DATE]["S"]).removeprefix(schema.ALARM_PREFIX)
    return f"{state.value}/{sensor}/{rule}"


def _micros(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(microseconds=1)


def snooze_of(raw: object, now: int) -> tuple[int | None, int | None]:
    """A snooze's body: ``(until, None)`` (an instant in microseconds) or ``(None, minutes)``."""
    if not isinstance(raw, Mapping):
        raise BadRequest('snooze takes a JSON object: {"until": "2024-05-01T12:00:00Z"} or {"minutes": 30}')
    unknown = sorted(str(k) for k in raw if k not in ("until", "minutes"))
    if unknown:
        raise BadRequest(f'snooze takes "until" or "minutes", not {_shown(unknown[0])}')
    if ("until" in raw) == ("minutes" in raw):
        raise BadRequest('snooze takes "until" (an ISO-8601 time with an offset) or "minutes", one of them')
    if "minutes" in raw:
        minutes = raw["minutes"]
        if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= MAX_SNOOZE_MINUTES:
            shown = _json_shown(minutes)
            raise BadRequest(f"minutes must be a whole number from 1 to {MAX_SNOOZE_MINUTES}, got {shown}")
        return None, minutes
    text = raw["until"]
    try:
        moment = datetime.fromisoformat(text) if isinstance(text, str) and len(text) <= 64 else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None or moment.utcoffset() is None:
        shown = _json_shown(text)
        raise BadRequest(f"until must be an ISO-8601 time with an offset (2024-05-01T12:00:00Z), got {shown}")
    until = _micros(moment)
    if not now < until <= now + MAX_SNOOZE_SECONDS * MICROS:
        raise BadRequest(f"until must be in the future, within {MAX_SNOOZE_SECONDS // 86_400} days, got {iso(until)}")
    return until, None


def body_of(text: str | None, action: str) -> object:
    """The request's JSON body (``{}`` when there is none); a body for an action that takes none is
    refused."""
    if text is None or not text.strip():
        raw: object = {}
    else:
        try:
            raw = json.loads(text, parse_float=Decimal)
        except ValueError:
            raise BadRequest("the body must be JSON") from None
    if action != "snooze" and raw != {}:
        raise BadRequest(f"{action} takes no body (or {{}})")
    return raw


class AlarmRoutes:
    """The answers of the alarm routes, over ``operations`` (``clock``: seconds, for a snooze's end)."""

    def __init__(self, operations: AlarmOperations, clock: Callable[[], float] | None = None) -> None:
        self._ops = operations
        self._clock = clock or operations.clock

    def listing(self, state: str | None, limit: str | None, token: str | None) -> dict[str, Any]:
        wanted = listed_state(state)
        states = LISTED_ORDER if wanted is None else (wanted,)
        most = rules.limit(limit, MAX_ALARMS)
        digest = tokens.request_digest("alarms", "*" if wanted is None else wanted.value)
        index, start = (0, None) if token is None else _listing_position(tokens.decode(token, digest), states)
        found: list[Alarm] = []
        after: str | None = None
        while index < len(states):
            page = self._ops.alarms.in_state(states[index], limit=most - len(found), start=start)
            found += page.alarms
            if page.next_key is not None:  # a page full, or cut at 1 MB: on in this state
                if len(found) >= most:
                    after = _position_of(states[index], page.next_key)
                    break
                start = page.next_key
                continue
            index, start = index + 1, None
            if len(found) >= most:
                after = states[index].value if index < len(states) else None
                break
        answer: dict[str, Any] = {"alarms": [alarm_json(a) for a in found]}
        if after is not None:
            answer["next_token"] = tokens.encode(digest, after)
        return answer

    def of_sensor(self, sensor: int) -> dict[str, Any]:
        return {"sensor_id": sensor, "alarms": [alarm_json(a) for a in self._ops.of_sensor(sensor)]}

    def history(self, alarm_id: str, limit: str | None, token: str | None) -> dict[str, Any]:
        sensor, rule = parse_alarm_id(alarm_id)
        most = rules.limit(limit, MAX_HISTORY)
        digest = tokens.request_digest("alarm-history", sensor, rule)
        start = None
        if token is not None:
            after = tokens.decode(token, digest)
            if not isinstance(after, str) or not re.fullmatch(
                f"{re.escape(schema.ALARM_LOG_PREFIX + rule)}#[0-9]{{{schema.LOG_VERSION_DIGITS}}}#[0-9]{{5}}", after
            ):
                raise BadRequest(tokens.REFUSED)
            start = {schema.SENSOR_ID: {"N": str(sensor)}, schema.DATE: {"S": after}}
        else:
            self._ops.alarm(sensor, rule)  # UnknownAlarm: no rule, nothing stored (a page on is not asked again)
        transitions, next_key = self._ops.alarms.history(sensor, rule, limit=most, start=start)
        answer: dict[str, Any] = {"alarm_id": alarm_id, "transitions": [transition_json(t) for t in transitions]}
        if next_key is not None:
            answer["next_token"] = tokens.encode(digest, str(next_key[schema.DATE]["S"]))
        return answer

    def act(self, alarm_id: str, action: str, body: str | None, by: str) -> dict[str, Any]:
        parse_alarm_id(alarm_id)  # a bad id before a bad body
        raw = body_of(body, action)
        until = minutes = None
        if action == "snooze":
            until, minutes = snooze_of(raw, int(self._clock() * MICROS))
        return alarm_json(self._ops.act(alarm_id, action, by=by, until=until, minutes=minutes))


__all__ = [
    "ACTIONS",
    "MAX_ALARMS",
    "MAX_HISTORY",
    "AlarmRoutes",
    "alarm_json",
    "operator_of",
    "transition_json",
]
