"""The ingest service's accounting, with a fake counter and sink (no network, no engine)."""

from __future__ import annotations

import json
from typing import Any
from zoneinfo import ZoneInfo

import boto3
from hypothesis import given, settings
from hypothesis import strategies as st

from sensor_digest.counting import DayCounter, Group, GroupOutcome
from sensor_digest.errors import TransientFault
from sensor_digest.ingest import DeadLetterSink, InboundMessage, IngestService, Rejection
from sensor_digest.ingest import service as ingest_module
from sensor_digest.profiles import PROFILES_KEPT, ProfileCache
from sensor_digest_tools.aws.sqs_broker import ENDPOINT, LocalSqsBroker


class FakeCounter(DayCounter):
    """Counts every group, except the sensors it is told to fail (or to blow up on)."""

    def __init__(self, failing: set[int], exploding: set[int], **options: Any) -> None:
        super().__init__(**options)
        self.failing = failing
        self.exploding = exploding

    def identity(self, message: Any) -> Any:
        return message.ledger_key

    def count_group(self, group: Group) -> GroupOutcome:
        sensor_id, messages = group.sensor_id, group.messages
        if sensor_id in self.exploding:
            raise RuntimeError("bug")
        if sensor_id in self.failing:
            return GroupOutcome(failed=list(messages), reason="throttled")
        return GroupOutcome(counted=list(messages), requests=1)


class Sink:
    def __init__(self, refuse: bool) -> None:
        self.refuse = refuse
        self.kept: list[str] = []

    def send(self, rejections: list[Rejection], deadline: float | None = None) -> set[str]:
        if self.refuse:
            return set()
        self.kept += [r.message.message_id for r in rejections]
        return {r.message.message_id for r in rejections}


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
        counter=FakeCounter(failing, exploding, max_workers=3),
        dead_letters=sink,  # type: ignore[arg-type]
        default_zone=ZoneInfo("UTC"),
    )

    report = service.process(messages)

    assert report.counted + report.duplicates + report.rejected + report.failed == len(messages)
    assert len(set(report.failed_ids)) == report.failed
    assert report.rejected == len(sink.kept)
    response_ids = [f["itemIdentifier"] for f in report.response()["batchItemFailures"]]
    assert response_ids == sorted(response_ids, key=lambda mid: int(mid[1:]))  # batch order


def test_a_refused_dead_letter_send_lists_the_message_for_redelivery() -> None:
    service = IngestService(
        counter=FakeCounter(set(), set()),
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
        def send(self, rejections: list[Rejection], deadline: float | None = None) -> set[str]:
            reasons.update((r.message.message_id, r.reason) for r in rejections)
            return super().send(rejections, deadline)

    service = IngestService(
        counter=FakeCounter(set(), set()),
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


class FakeClock:
    """Time that passes only when an SQS call is made (``per_call`` seconds each): no test here
    depends on how fast this machine is."""

    def __init__(self, per_call: float) -> None:
        self.now = 1000.0
        self.per_call = per_call
        self.calls: list[str] = []

    def __call__(self) -> float:
        return self.now

    def install(self, session: Any) -> None:
        session.events.register("after-call.sqs", self._tick)

    def _tick(self, model: Any, **_: Any) -> None:
        self.calls.append(model.name)
        self.now += self.per_call


def _flood(per_call: float) -> tuple[Any, Any, FakeClock, str, list[InboundMessage]]:
    """160 poison messages and 10 valid ones, dead letters to the in-process SQS, where every
    call takes ``per_call`` seconds of the service's clock."""
    broker, clock = LocalSqsBroker(), FakeClock(per_call)
    session = boto3.Session(aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1")
    broker.install(session)
    clock.install(session)
    sqs = session.client("sqs", endpoint_url=ENDPOINT)
    dlq = broker.create_queue("dlq")
    service = IngestService(
        counter=FakeCounter(set(), set(), clock=clock),
        dead_letters=DeadLetterSink(queue_url=dlq, client=sqs, clock=clock),
        default_zone=ZoneInfo("UTC"),
        clock=clock,
    )
    poison = [InboundMessage(message_id=f"p{i}", body='{"sensor_id": "x"}') for i in range(160)]
    valid = [
        InboundMessage(message_id=f"v{i}", body=json.dumps({"sensor_id": i}), sent_timestamp="1714564800000")
        for i in range(10)
    ]
    return service, sqs, clock, dlq, poison + valid


def _event(messages: list[InboundMessage]) -> dict[str, Any]:
    return {
        "Records": [
            {"messageId": m.message_id, "body": m.body, "attributes": {"SentTimestamp": m.sent_timestamp}}
            for m in messages
        ]
    }


def test_a_flood_of_poison_is_kept_in_batches_and_costs_the_valid_reports_nothing() -> None:
    # Given 160 poison messages beside 10 valid ones, every SQS call taking 15 ms, 5 s left
    service, sqs, clock, dlq, messages = _flood(per_call=0.015)

    # When the batch is handled
    report = service.handle_event(_event(messages), remaining_ms=5000)

    # Then all 160 are kept with their reason in 16 SendMessageBatch requests, and the valid counted
    assert (report.counted, report.rejected, report.failed_ids) == (10, 160, [])
    assert clock.calls == ["SendMessageBatch"] * 16
    kept = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, MessageAttributeNames=["All"])["Messages"]
    assert {m["MessageAttributes"]["error"]["StringValue"] for m in kept} == {
        'sensor_id must be an integer, got string "x"'
    }


def test_dead_letters_that_would_outlast_the_invocation_are_listed_and_nothing_is_lost() -> None:
    # Given SQS answering so slowly (300 ms a request) that 2 s (5 s left less the 3 s margin)
    # cannot hold the 16 requests the poison needs
    service, sqs, clock, dlq, messages = _flood(per_call=0.3)

    # When the batch is handled
    report = service.handle_event(_event(messages), remaining_ms=5000)
    requests = list(clock.calls)

    # Then what was sent before the deadline is kept, and everything else is listed for SQS to
    # bring back (the valid reports too: their writes would start past the deadline)
    kept = _drain(sqs, dlq)
    listed = set(report.failed_ids)
    assert requests == ["SendMessageBatch"] * 7  # started at 0.0, 0.3, ... 1.8 s of the 2 s
    assert report.rejected == len(kept) == 70
    assert listed == {m.message_id for m in messages[70:]}
    assert report.counted == 0

    # and when SQS redelivers the listed ones to an invocation with time, they all end
    again = service.handle_event(_event([m for m in messages if m.message_id in listed]), remaining_ms=60_000)
    assert (again.rejected, again.counted, again.failed_ids) == (90, 10, [])


def _drain(sqs: Any, url: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while got := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        out += got
        for m in got:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return out


def test_the_profile_cache_forgets_past_its_bound_however_many_sensor_ids_producers_invent() -> None:
    class NobodyRegistered:
        reads = 0

        def get_many(self, sensor_ids: Any) -> dict[int, Any]:
            self.reads += 1
            return {}

    registry = NobodyRegistered()
    cache = ProfileCache(registry, ttl=3600)  # type: ignore[arg-type]
    for start in range(0, PROFILES_KEPT + 50_000, 1000):  # batches of 1,000 fresh ids, as a flood sends
        cache.prefetch(range(start, start + 1000))
    assert len(cache) == PROFILES_KEPT
    # the most recent are the ones kept: asking again for the last batch reads nothing
    reads = registry.reads
    assert cache.profile(PROFILES_KEPT + 49_999) is None and registry.reads == reads
    assert cache.profile(0) is None and registry.reads == reads + 1  # the oldest was forgotten
