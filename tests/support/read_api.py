"""Calling the read API's service as the local server does (an API Gateway event per request) and
putting items in its table: what the read API's tests share."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from sensor_digest import api
from sensor_digest.store import schema
from sensor_digest_tools.local.api_server import event_of
from tests.support.tables import Tables


def get(service: api.ApiService, target: str, method: str = "GET") -> tuple[int, dict[str, Any], dict[str, Any]]:
    """One request: its status, its JSON body and its headers."""
    answer = service.handle_event(event_of(method, target, {"host": "test"}, "127.0.0.1")).response()
    return int(answer["statusCode"]), json.loads(answer["body"]), answer.get("headers") or {}


def put_days(ddb: Any, tables: Tables, sensor: int, counts: dict[str, int]) -> None:
    for day, count in counts.items():
        ddb.put_item(TableName=tables.table, Item=schema.day_item(sensor, day, count))


def put_month(ddb: Any, tables: Tables, sensor: int, month: str, counts: dict[str, int]) -> None:
    ddb.put_item(TableName=tables.table, Item=schema.summary_item(sensor, month, counts))


def follow(service: api.ApiService, target: str, key: str) -> Iterator[dict[str, Any]]:
    """Every page of ``target``, following ``next_token``."""
    token: str | None = None
    for _ in range(50):
        status, body, _ = get(service, target + (f"&token={token}" if token else ""))
        assert status == 200, body
        yield body
        token = body.get("next_token")
        if token is None:
            return
    raise AssertionError("more than 50 pages")
