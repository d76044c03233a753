"""The read API's requests, routed by Powertools' ``APIGatewayHttpResolver`` (HTTP API payload 2.0).

``ApiService.handle_event`` takes an API Gateway event (on AWS, or from the local server of
``sensor-digest up``) and returns an ``ApiReport`` whose ``response()`` is the HTTP answer. Every
answer is JSON (``application/json``): the data, or ``{"error": "..."}`` with 400 (the request
broke a rule: ``rules.py``, ``tokens.py``), 404 (no such route), 405 (a route, another method),
500 (a fault of the code, or a read DynamoDB refused as invalid: retrying cannot help) or 503
(DynamoDB failed or throttled: try again). Each request is one
``Query``: of the sensor's partition for ``days`` and ``months``, of the ``Profiles`` index for
``sensors``; ``hours`` is one ``BatchGetItem`` of the day item and the profile (the zone the hours
are in); never a ``Scan``. ``silence`` checks a page of the ``Profiles`` index (up to 100 registered
sensors) with the silence check's reads (``silence/check.py``: batched reads of their profiles and
day items, the older days' ``Query``s several at once); a sensor it could not decide is named
under ``unchecked``, the others answered.

An item without the contract's shape (a day's ``DataCount`` that is no whole number or is negative, a
month's ``DailyCounts`` that is no map or an element that is no number, a profile whose ``SensorId``
is no sensor id) is a data problem, not a fault of the server: the answer is a 200 with everything
that can be read, and beside the contract's fields ``malformed``, one entry per item (or element)
left out, naming it, what is wrong with it, and what mends it (``store/repairs.py``). Absent when
all is well.

The alarm routes (``alarms.py``): ``GET /alarms``, ``/sensors/{id}/alarms``, ``/alarms/{id}/history``
and the operator's ``POST /alarms/{id}/<action>``, answering 409 where the alarm's state refuses the
action (``ActionRefused``) and 404 for an alarm no rule watches (``UnknownAlarm``).

Powertools keeps the event being resolved on the class, so one service resolves one event at a
time (a lock): Lambda gives a container one request at a time anyway; the local server, many.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import tzinfo
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError

from sensor_digest import exact_json, names, zones
from sensor_digest.alarms.model import ACTIONS, ActionRefused
from sensor_digest.alarms.operations import AlarmOperations, BadAlarmId, UnknownAlarm
from sensor_digest.api import readings, rules, tokens
from sensor_digest.api.alarms import AlarmRoutes, operator_of
from sensor_digest.errors import BadRequest, MalformedItem, RefusedWrite, TransientFault, UnknownTimeZone
from sensor_digest.logs import LOG
from sensor_digest.silence.check import SilenceCheck
from sensor_digest.store import dynamo, reads, repairs, schema, tally

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DAYS_ROUTE = "/sensors/<sensor_id>/days"
MONTHS_ROUTE = "/sensors/<sensor_id>/months"
SENSORS_ROUTE = "/sensors"
HOURS_ROUTE = "/sensors/<sensor_id>/hours"
READINGS_ROUTE = "/sensors/<sensor_id>/readings"
READINGS_HOURS_ROUTE = "/sensors/<sensor_id>/readings/hours"
SILENCE_ROUTE = "/silence"
ALARMS_ROUTE = "/alarms"
SENSOR_ALARMS_ROUTE = "/sensors/<sensor_id>/alarms"
ALARM_HISTORY_ROUTE = "/alarms/<alarm_id>/history"
ALARM_ACTION_ROUTES = {action: f"/alarms/<alarm_id>/{action}" for action in ACTIONS}  # POST
# the paths of the routes and their method, for telling a wrong method (405) from a wrong path (404)
ROUTE_PATHS = tuple(
    (re.compile(p), method)
    for p, method in (
        (r"/sensors", "GET"),
        (r"/sensors/[^/]+/days", "GET"),
        (r"/sensors/[^/]+/months", "GET"),
        (r"/sensors/[^/]+/hours", "GET"),
        (r"/sensors/[^/]+/readings", "GET"),
        (r"/sensors/[^/]+/readings/hours", "GET"),
        (r"/silence", "GET"),
        (r"/alarms", "GET"),
        (r"/sensors/[^/]+/alarms", "GET"),
        (r"/alarms/[^/]+/history", "GET"),
        (rf"/alarms/[^/]+/(?:{'|'.join(ACTIONS)})", "POST"),
    )
)
LOGGED_PATH_CHARS = 200
MALFORMED = "malformed"  # the answer's field beside the contract's: what was left out, why, and its repair


def error(status: HTTPStatus, reason: str, headers: Mapping[str, str] | None = None) -> Response[Any]:
    return Response(
        status_code=status.value,
        content_type=content_types.APPLICATION_JSON,
        body={"error": reason},
        headers=dict(headers or {}),
    )


def _entry(bad: reads.Unreadable, repair: str) -> dict[str, str]:
    """One entry of ``malformed``: where (``month``, ``day``), what is wrong, what mends it."""
    where = {key: value for key, value in (("month", bad.month), ("day", bad.day)) if value is not None}
    return {**where, "error": bad.reason, "repair": repair}


def _note_malformed(answer: dict[str, Any], malformed: list[dict[str, str]]) -> None:
    """``malformed`` beside the answer's data, when there is any (a warning in the log: a data
    problem, not a fault of the server)."""
    if malformed:
        LOG.warning("items left out of the answer", malformed=malformed[:10], count=len(malformed))
        answer[MALFORMED] = malformed


def _raw_sensor_id(item: Mapping[str, Any]) -> str:
    """An item's ``SensorId`` as DynamoDB keeps it (a number as text), whatever it holds."""
    value = item.get(schema.SENSOR_ID)
    return str(value.get("N", "")) if isinstance(value, Mapping) else ""


def _sort_key_after(page: reads.Page, high: str) -> str | None:
    """Where a page of a sensor's range stopped (its last sort key), or ``None`` at the end: when
    DynamoDB stopped at the range's last key ``high``, nothing follows it."""
    after = None if page.last_key is None else str(page.last_key[schema.DATE]["S"])
    return None if after is None or after >= high else after


@dataclass(frozen=True)
class ApiReport:
    """One request's answer (``response()``, what Lambda returns to API Gateway), its fate as a
    metric, and its log line's fields."""

    method: str
    path: str
    answer: dict[str, Any]

    @property
    def status(self) -> int:
        return int(self.answer.get("statusCode", 500))

    def response(self) -> dict[str, Any]:
        return self.answer

    def metrics(self) -> Mapping[str, int]:
        fate = (
            names.METRIC_API_FAILED
            if self.status >= 500
            else names.METRIC_API_REFUSED
            if self.status >= 400
            else names.METRIC_API_ANSWERED
        )
        return {fate: 1}

    def log_fields(self) -> Mapping[str, Any]:
        return {"method": self.method[:16], "path": self.path[:LOGGED_PATH_CHARS], "status": self.status}


class ApiService:
    def __init__(
        self,
        *,
        table_name: str,
        client: DynamoDBClient,
        silence: SilenceCheck | None = None,
        default_zone: tzinfo | None = None,
        alarms: AlarmOperations | None = None,
    ) -> None:
        self._table = table_name
        self._alarms = None if alarms is None else AlarmRoutes(alarms)
        self._client = client
        self._zone = default_zone or ZoneInfo("UTC")  # the digest zone (DIGEST_TIMEZONE): unregistered sensors' days
        self._silence = silence or SilenceCheck(
            table_name=table_name, client=client, default_hours=None, default_zone=ZoneInfo("UTC")
        )
        self._lock = threading.Lock()
        self.app = self._resolver()

    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> ApiReport:
        http = event.get("requestContext", {}).get("http", {})
        with self._lock:
            answer = self.app.resolve(dict(event), None)  # type: ignore[arg-type]  # the context is unused
        return ApiReport(method=str(http.get("method", "")), path=str(event.get("rawPath", "")), answer=answer)

    # -- the reads, each one Query ----------------------------------------------------

    def _day_items_page(
        self, route: str, sensor: int, first: str | None, last: str | None, *, limit: str | None, token: str | None
    ) -> tuple[rules.Range, str, reads.Page]:
        """A page of the sensor's items in the requested range of days (one ``Query``), for ``route``:
        the range, the request's digest its page tokens are bound to, and the page."""
        span = rules.day_range(first, last)
        digest = tokens.request_digest(route, sensor, span.first, span.last)
        after = tokens.after_sort_key(token, digest, span.first, span.last) if token is not None else None
        page = reads.sensor_items_page(
            self._client,
            self._table,
            sensor,
            span.first,
            span.last,
            limit=rules.limit(limit, rules.MAX_DAYS),
            after=after,
        )
        return span, digest, page

    def days(
        self, sensor: int, first: str | None, last: str | None, limit: str | None, token: str | None
    ) -> dict[str, Any]:
        span, digest, page = self._day_items_page("days", sensor, first, last, limit=limit, token=token)
        days, unreadable = reads.days_read(page.items)
        answer: dict[str, Any] = {"sensor_id": sensor, "days": dict(days)}
        _note_malformed(answer, [_entry(bad, repairs.day_item(sensor, str(bad.day))) for bad in unreadable])
        return self._continued(answer, digest, _sort_key_after(page, span.last))

    def readings(
        self, sensor: int, first: str | None, last: str | None, limit: str | None, token: str | None
    ) -> dict[str, Any]:
        """Each day's readings' statistics (``api/readings.py``): one ``Query`` of the sensor's day items
        in the range, as ``days`` reads them. Days without readings are absent; ``partial_days`` names
        the days whose statistics hold only some of their reports (counted before readings were kept)."""
        span, digest, page = self._day_items_page("readings", sensor, first, last, limit=limit, token=token)
        days: dict[str, Any] = {}
        partial: list[str] = []
        counted, unreadable = reads.days_read(page.items)  # the days with reports, as ``days`` answers them
        with_reports = {day for day, _ in counted}
        malformed = [_entry(bad, repairs.day_item(sensor, str(bad.day))) for bad in unreadable]
        for item in page.items:
            day = item.get(schema.DATE, {}).get("S", "")
            if day not in with_reports:
                continue
            try:
                kept = tally.readings_of_item(item)
            except MalformedItem as bad:
                malformed.append(
                    {"day": day, "error": str(bad), "repair": repairs.day_item(sensor, day, bad.attribute)}
                )
                continue
            if kept:
                days[day] = readings.day_statistics(kept)
                if not readings.complete(item):
                    partial.append(day)
        answer: dict[str, Any] = {"sensor_id": sensor, "days": days, "partial_days": partial}
        _note_malformed(answer, malformed)
        return self._continued(answer, digest, _sort_key_after(page, span.last))

    def readings_hours(self, sensor: int, day: str | None) -> dict[str, Any]:
        """One day's readings' statistics by hour: one ``GetItem`` (eventually consistent) of the day
        item; ``complete`` says whether they hold all of its reports."""
        wanted = rules.day(day)
        item = reads.get_item(self._client, self._table, schema.day_key(sensor, wanted), consistent=False) or {}
        answer: dict[str, Any] = {"sensor_id": sensor, "day": wanted, "hours": {}, "complete": True}
        counted, unreadable = reads.days_read([item])
        _note_malformed(answer, [_entry(bad, repairs.day_item(sensor, wanted)) for bad in unreadable])
        if not counted:  # no day with reports: none, a count of 0, or one that cannot be read
            return answer
        try:
            answer["hours"] = readings.hour_statistics(tally.readings_of_item(item))
        except MalformedItem as bad:
            _note_malformed(
                answer, [{"day": wanted, "error": str(bad), "repair": repairs.day_item(sensor, wanted, bad.attribute)}]
            )
        answer["complete"] = readings.complete(item)
        return answer

    def months(
        self, sensor: int, first: str | None, last: str | None, limit: str | None, token: str | None
    ) -> dict[str, Any]:
        span = rules.month_range(first, last)
        low, high = reads.month_range(sensor, span.first, span.last)
        digest = tokens.request_digest("months", sensor, span.first, span.last)
        after = tokens.after_sort_key(token, digest, low, high) if token is not None else None
        page = reads.sensor_items_page(
            self._client, self._table, sensor, low, high, limit=rules.limit(limit, rules.MAX_MONTHS), after=after
        )
        months, unreadable = reads.months_read(sensor, page.items)
        answer: dict[str, Any] = {"sensor_id": sensor, "months": months}
        _note_malformed(answer, [_entry(bad, repairs.summary_item(sensor)) for bad in unreadable])
        return self._continued(answer, digest, _sort_key_after(page, high))

    def sensors(self, limit: str | None, token: str | None) -> dict[str, Any]:
        digest = tokens.request_digest("sensors")
        after = tokens.after_sensor(token, digest, rules.MAX_SENSOR_ID) if token is not None else None
        page = reads.profiles_page(self._client, self._table, limit=rules.limit(limit, rules.MAX_SENSORS), after=after)
        listed, malformed = [], []
        for item in page.items:
            raw = _raw_sensor_id(item)
            if rules.is_sensor_id(raw):
                listed.append(
                    {
                        "sensor_id": int(raw),
                        "name": item.get(schema.NAME, {}).get("S"),
                        "timezone": item.get(schema.TIME_ZONE, {}).get("S"),
                    }
                )
            else:  # listed by the index, refused by every other route: left out, and named
                reason = f"{schema.describe(item)}: {schema.SENSOR_ID} is no sensor id (0 to {rules.MAX_SENSOR_ID})"
                malformed.append({"sensor_id": raw, "error": reason, "repair": repairs.profile_id(raw)})
        answer: dict[str, Any] = {"sensors": listed}
        _note_malformed(answer, malformed)
        last = page.last_key and _raw_sensor_id(page.last_key)
        return self._continued(answer, digest, (int(last) if rules.is_sensor_id(last) else last) if last else None)

    def hours(self, sensor: int, day: str | None) -> dict[str, Any]:
        """One day's ``HourCounts`` and the zone they are in (``timezone``: the sensor's registered
        zone, else the digest zone): one ``BatchGetItem`` (eventually consistent) of the day item and
        the profile. Hours without reports are absent; a day without reports (no item, or one without
        ``DataCount``), or counted before hours were kept, has none. ``count`` is the day's count and
        ``complete`` whether the hours hold all of it: a day counted partly before hours were kept (or
        partly by a release that kept none, rolled back to) holds the hours of only some of its
        reports, and says so rather than pass them off as the day's split."""
        wanted = rules.day(day)
        keys = [schema.day_key(sensor, wanted), schema.profile_key(sensor)]
        items = {
            schema.text_of(i, schema.DATE): i
            for i in dynamo.batch_get(self._client, self._table, keys, consistent=False)
        }
        item = items.get(wanted, {})
        answer: dict[str, Any] = {"sensor_id": sensor, "day": wanted, "hours": {}, "count": 0, "complete": True}
        answer["timezone"] = self._zone_name(items.get(schema.PROFILE_SORT_KEY, {}))
        try:
            found = schema.day_count_of_item(item)
            kept = schema.hour_counts_of_item(item) if found is not None else None
        except MalformedItem as bad:
            _note_malformed(
                answer, [{"day": wanted, "error": str(bad), "repair": repairs.day_item(sensor, wanted, bad.attribute)}]
            )
            answer["complete"] = False
            return answer
        count = found[2] if found is not None else 0
        answer["hours"] = {hour: n for hour, n in (kept or {}).items() if n > 0}
        answer["count"] = count
        answer["complete"] = sum(answer["hours"].values()) == count
        return answer

    def _zone_name(self, profile: Mapping[str, Any]) -> str:
        """The zone a sensor's days are counted in: its registered zone (one the functions load, as
        ingest and the silence check read it), else the digest zone."""
        name = profile.get(schema.TIME_ZONE, {}).get("S")
        try:
            return str(zones.load(name)) if isinstance(name, str) else str(self._zone)
        except UnknownTimeZone:
            return str(self._zone)

    def silence(self, limit: str | None, token: str | None) -> dict[str, Any]:
        """The silent sensors among a page of registered sensors (``silence/check.py``)."""
        digest = tokens.request_digest("silence")
        after = tokens.after_sensor(token, digest, rules.MAX_SENSOR_ID) if token is not None else None
        page = self._silence.page(limit=rules.limit(limit, rules.MAX_SENSORS), after=after)
        answer: dict[str, Any] = {"sensors": [s.as_json() for s in page.silent]}
        if page.unchecked:  # their reads failed: the page's other sensors are answered
            LOG.warning("sensors left unchecked", count=len(page.unchecked))
            answer["unchecked"] = [u.as_json() for u in page.unchecked]
        return self._continued(answer, digest, page.after)

    @staticmethod
    def _continued(answer: dict[str, Any], digest: str, after: str | int | None) -> dict[str, Any]:
        """The answer, with ``next_token`` when DynamoDB stopped before the end of the range."""
        if after is not None:
            answer["next_token"] = tokens.encode(digest, after)
        return answer

    # -- routing ------------------------------------------------------------------------

    def _alarm_routes(self, app: APIGatewayHttpResolver, query: Callable[[str], str | None]) -> None:
        """The alarm routes (``alarms.py``); without alarm operations (no ledger table), each a 503."""

        def routes() -> AlarmRoutes:
            if self._alarms is None:
                raise TransientFault("this API has no ledger table for the alarm rules (LEDGER_TABLE_NAME)")
            return self._alarms

        app.get(ALARMS_ROUTE)(lambda: routes().listing(query("state"), query("limit"), query("token")))
        app.get(SENSOR_ALARMS_ROUTE)(lambda sensor_id: routes().of_sensor(rules.sensor_id(sensor_id)))
        app.get(ALARM_HISTORY_ROUTE)(lambda alarm_id: routes().history(alarm_id, query("limit"), query("token")))

        def action(name: str) -> Callable[[str], dict[str, Any]]:
            def route(alarm_id: str) -> dict[str, Any]:
                event = app.current_event
                return routes().act(alarm_id, name, event.decoded_body, operator_of(event.raw_event))

            return route

        for name, path in ALARM_ACTION_ROUTES.items():
            app.post(path)(action(name))

    def _resolver(self) -> APIGatewayHttpResolver:
        app = APIGatewayHttpResolver(serializer=exact_json.dumps)

        def query(name: str) -> str | None:
            return app.current_event.get_query_string_value(name)

        def ranged(read: Callable[..., dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
            def route(sensor_id: str) -> dict[str, Any]:
                return read(rules.sensor_id(sensor_id), query("from"), query("to"), query("limit"), query("token"))

            return route

        app.get(DAYS_ROUTE)(ranged(self.days))
        app.get(READINGS_ROUTE)(ranged(self.readings))
        app.get(READINGS_HOURS_ROUTE)(lambda sensor_id: self.readings_hours(rules.sensor_id(sensor_id), query("day")))
        app.get(MONTHS_ROUTE)(ranged(self.months))
        app.get(SENSORS_ROUTE)(lambda: self.sensors(query("limit"), query("token")))
        app.get(HOURS_ROUTE)(lambda sensor_id: self.hours(rules.sensor_id(sensor_id), query("day")))
        app.get(SILENCE_ROUTE)(lambda: self.silence(query("limit"), query("token")))
        self._alarm_routes(app, query)

        @app.not_found
        def not_found(_: NotFoundError) -> Response[Any]:
            path, method = app.current_event.path, app.current_event.http_method
            allowed = next((allow for p, allow in ROUTE_PATHS if p.fullmatch(path)), None)
            if allowed is not None:
                return error(
                    HTTPStatus.METHOD_NOT_ALLOWED,
                    f"{method[:16]} is not allowed here: only {allowed}",
                    {"Allow": allowed},
                )
            return error(
                HTTPStatus.NOT_FOUND,
                "no such route: GET /sensors, /sensors/{id}/days, /sensors/{id}/months, /sensors/{id}/hours,"
                " /sensors/{id}/readings, /sensors/{id}/readings/hours, /silence, /alarms, /sensors/{id}/alarms,"
                f" /alarms/{{id}}/history; POST /alarms/{{id}}/{'|'.join(ACTIONS)}",
            )

        def bad_request(exc: BadRequest | BadAlarmId) -> Response[Any]:
            return error(HTTPStatus.BAD_REQUEST, exc.reason)

        def unknown_alarm(exc: UnknownAlarm) -> Response[Any]:
            return error(HTTPStatus.NOT_FOUND, exc.reason)

        def action_refused(exc: ActionRefused) -> Response[Any]:
            return error(HTTPStatus.CONFLICT, exc.reason)

        def malformed(exc: MalformedItem) -> Response[Any]:  # an alarm item, or the rule set, written by hand
            LOG.error("item unreadable", error=str(exc))
            return error(HTTPStatus.INTERNAL_SERVER_ERROR, str(exc))

        def fault(exc: TransientFault) -> Response[Any]:
            LOG.warning("read failed", error=exc.reason)
            return error(HTTPStatus.SERVICE_UNAVAILABLE, f"the table could not be read ({exc.reason}); try again")

        def refused(exc: RefusedWrite) -> Response[Any]:  # a request DynamoDB refused as invalid
            LOG.error("read refused", error=exc.reason)
            return error(HTTPStatus.INTERNAL_SERVER_ERROR, f"the table refused the read ({exc.reason})")

        def unexpected(exc: Exception) -> Response[Any]:
            LOG.exception("request failed")
            return error(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error")

        answers: dict[type[Exception], Callable[[Any], Response[Any]]] = {
            BadRequest: bad_request,
            BadAlarmId: bad_request,
            UnknownAlarm: unknown_alarm,
            ActionRefused: action_refused,
            MalformedItem: malformed,
            RefusedWrite: refused,
            TransientFault: fault,
            Exception: unexpected,
        }
        for kind, answer in answers.items():
            app.exception_handler(kind)(answer)
        return app
