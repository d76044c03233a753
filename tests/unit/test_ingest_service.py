"""The ingest service's accounting, with a fake counter and sink (no network, no engine)."""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from sensor_digest import ingest as ingest_module
from sensor_digest.counting import GroupOutcome, Lookup
from sensor_digest.errors import TransientFault
from sensor_digest.ingest import InboundMessage, IngestService


class FakeCounter:
    """Counts every group, except the sensors it is told to fail (or to blow up on)."""

    def __init__(self, failing: set[int], exploding: set[int]) -> None:
        self.failing = failing
        self.exploding = exploding

    def lookup(self, messages: list[Any]) -> Lookup:
        return Lookup()

    def count_group(
        self, sensor_id: int, day: str, messages: list[Any], deadline: float | None = None, **_: Any
    ) -> GroupOutcome:
        if sensor_id in self.exploding:
            raise RuntimeError("bug")
        if sensor_id in self.failing:
            return GroupOutcome(failed=list(messages), reason="throttled")
        return GroupOutcome(counted=list(messages), requests=1)


class Sink:
    def __init__(self, refuse: bool) -> None:
        self.refuse = refuse
        self.kept: list[str] = []

    def reject(self, message: InboundMessage, reason: str) -> bool:
        if self.refuse:
            return False
        self.kept.append(message.message_id)
        return True


BODIES = st.one_of(
    st.text(max_size=50),
    st.builds(lambda s, c: json.dumps({"sensor_id": s, "count": c}), st.integers(-1, 6), st.integers(0, 3)),
    st.builds(lambda s: json.dumps({"sensor_id": s, "timestamp": "2024-05-01T00:00:00Z"}), st.integers(0, 6)),
)


@settings(max_examples=200, deadline=None)
@given(
    bodies=st.lists(BODIES, max_size=30),
    failing=st.sets(st.integers(0, 6)),
    exploding=st.sets(st.integers(0, 6), max_size=1),
    refuse=st.booleans(),
)
def test_every_record_ends_counted_rejected_or_failed_and_nothing_raises(
    bodies: list[str], failing: set[int], exploding: set[int], refuse: bool
) -> None:
    messages = [
        InboundMessage(message_id=f"m{i}", body=b, sent_timestamp="1714564800000") for i, b in enumerate(bodies)
    ]
    sink = Sink(refuse)
    service = IngestService(
        counter=FakeCounter(failing, exploding),  # type: ignore[arg-type]
        dead_letters=sink,  # type: ignore[arg-type]
        default_zone=ZoneInfo("UTC"),
        max_workers=3,
    )

    report = service.process(messages)

    assert report.counted + report.duplicates + report.rejected + report.failed == len(messages)
    assert len(set(report.failed_ids)) == report.failed
    assert report.rejected == len(sink.kept)
    response_ids = [f["itemIdentifier"] for f in report.response()["batchItemFailures"]]
    assert response_ids == sorted(response_ids, key=lambda mid: int(mid[1:]))  # batch order


def test_a_refused_dead_letter_send_lists_the_message_for_redelivery() -> None:
    service = IngestService(
        counter=FakeCounter(set(), set()),  # type: ignore[arg-type]
        dead_letters=Sink(refuse=True),  # type: ignore[arg-type]
        default_zone=ZoneInfo("UTC"),
    )
    report = service.process([InboundMessage(message_id="bad", body="{", sent_timestamp=None)])
    assert report.response() == {"batchItemFailures": [{"itemIdentifier": "bad"}]}


class TroubledProfiles:
    """A profile cache whose batch read blows up, and whose lookups fail for chosen sensors."""

    def prefetch(self, sensor_ids: Any) -> None:
        list(sensor_ids)
        raise KeyError("TimeZone")  # a malformed profile item

    def zone(self, sensor_id: int) -> ZoneInfo | None:
        if sensor_id == 7:
            raise ValueError("bad zone data")
        if sensor_id == 8:
            raise TransientFault("throttled")
        return None


def test_a_surprise_while_reading_one_message_rejects_it_alone_with_a_reason(monkeypatch: Any) -> None:
    # Given a parser that raises something other than a rejection for one body,
    # and a profile cache whose batch read raises and whose lookups fail for sensors 7 and 8
    real_read = ingest_module.read_pending

    def read_pending(**kwargs: Any) -> Any:
        if kwargs["body"] == "boom":
            raise OverflowError("int too large to convert to float")
        return real_read(**kwargs)

    monkeypatch.setattr(ingest_module, "read_pending", read_pending)
    reasons: dict[str, str] = {}

    class KeepingSink(Sink):
        def reject(self, message: InboundMessage, reason: str) -> bool:
            reasons[message.message_id] = reason
            return super().reject(message, reason)

    service = IngestService(
        counter=FakeCounter(set(), set()),  # type: ignore[arg-type]
        dead_letters=KeepingSink(refuse=False),  # type: ignore[arg-type]
        default_zone=ZoneInfo("UTC"),
        profiles=TroubledProfiles(),  # type: ignore[arg-type]
    )
    bodies = {"ok": {"sensor_id": 1}, "bad-zone": {"sensor_id": 7}, "throttled": {"sensor_id": 8}}
    messages = [
        InboundMessage(message_id=m, body=json.dumps(b), sent_timestamp="1714564800000") for m, b in bodies.items()
    ]
    messages.append(InboundMessage(message_id="boom", body="boom", sent_timestamp="1714564800000"))

    # When the batch is processed
    report = service.process(messages)

    # Then each message ends on its own: counted, rejected with an "unexpected" reason, or listed alone
    assert report.counted == 1
    assert report.response() == {"batchItemFailures": [{"itemIdentifier": "throttled"}]}
    assert set(reasons) == {"bad-zone", "boom"}
    assert reasons["boom"].startswith("unexpected error while reading the message: OverflowError")
    assert reasons["bad-zone"].startswith("unexpected error while reading the message: ValueError")
