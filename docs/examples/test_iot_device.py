"""The IoT device example (``iot_device.py``): no broker here, so it is compiled, its payload read by
the ingest's own message rules, and its retry loop run against a stand-in for paho's client (no
engine: pure Python, no AWS, no network)."""

from __future__ import annotations

import importlib.util
import json
import py_compile
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from types import ModuleType
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sensor_digest.messages import read_pending

EXAMPLE = Path(__file__).with_name("iot_device.py")


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("iot_device", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_device_example_compiles(tmp_path: Path) -> None:
    py_compile.compile(str(EXAMPLE), cfile=str(tmp_path / "iot_device.pyc"), doraise=True)


def test_a_readings_payload_is_a_report_the_ingest_counts_on_the_readings_own_day() -> None:
    # Given a reading taken at 23:30 in UTC+2 (21:30 UTC)
    device = load_example()
    taken = datetime(2026, 5, 1, 23, 30, tzinfo=timezone(timedelta(hours=2)))
    reading = device.Reading(sensor_id=7, count=3, taken_at=taken)

    # When the ingest reads its payload, sent a day later
    pending = read_pending(message_id="m-1", body=reading.payload().decode(), sent_timestamp="1777766400000")

    # Then it counts 3 for sensor 7 under the device's event id, on the day the timestamp names
    assert (pending.sensor_id, pending.count, pending.event_id) == (7, 3, reading.event_id)
    assert pending.in_zone(ZoneInfo("UTC")).day == "2026-05-01"
    assert json.loads(reading.payload())["timestamp"] == "2026-05-01T23:30:00+02:00"


def test_a_reading_keeps_its_event_id_and_two_readings_do_not_share_one() -> None:
    device = load_example()
    reading = device.Reading(sensor_id=7)
    assert reading.payload() == reading.payload()
    assert reading.event_id != device.Reading(sensor_id=7).event_id
    assert reading.taken_at.tzinfo is UTC


class FakeInfo:
    def __init__(self, acknowledged: bool) -> None:
        self._acknowledged = acknowledged

    def wait_for_publish(self, timeout: float | None = None) -> None:
        return None

    def is_published(self) -> bool:
        return self._acknowledged


class FakeClient:
    """paho's ``publish`` as far as ``send`` uses it: acknowledged from the ``ack_on``-th attempt."""

    def __init__(self, ack_on: int) -> None:
        self.ack_on = ack_on
        self.sent: list[tuple[str, bytes, int]] = []

    def publish(self, topic: str, payload: bytes, qos: int) -> Any:
        self.sent.append((topic, payload, qos))
        return FakeInfo(len(self.sent) >= self.ack_on)


def test_an_unacknowledged_report_is_sent_again_with_the_same_payload_through_basic_ingest() -> None:
    device = load_example()
    reading = device.Reading(sensor_id=7)
    client = FakeClient(ack_on=3)
    topic = device.publish_topic("sensors/7/reports", "SensorDigestRule")

    device.send(client, topic, reading)

    assert client.sent == [("$aws/rules/SensorDigestRule/sensors/7/reports", reading.payload(), 1)] * 3


def test_a_report_never_acknowledged_is_kept_and_named() -> None:
    device = load_example()
    reading = device.Reading(sensor_id=7)
    with pytest.raises(RuntimeError, match=f"event {reading.event_id} not acknowledged after 5 attempts"):
        device.send(FakeClient(ack_on=99), device.publish_topic("sensors/7/reports", None), reading)
