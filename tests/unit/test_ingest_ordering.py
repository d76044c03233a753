"""The FIFO batch response keeps each group's order (no network)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sensor_digest.errors import RejectedMessage
from sensor_digest.ingest import InboundMessage, failures_with_group_tails
from sensor_digest.messages import read_pending, sequenced


def batch_of(groups: list[str]) -> list[InboundMessage]:
    return [InboundMessage(message_id=f"m{i}", body="{}", group_id=g) for i, g in enumerate(groups)]


def test_a_listed_message_lists_every_later_message_of_its_group_only() -> None:
    batch = batch_of(["a", "b", "a", "c", "b", "a"])

    assert failures_with_group_tails(batch, ["m2"]) == ["m2", "m5"]
    assert failures_with_group_tails(batch, ["m1", "m3"]) == ["m1", "m3", "m4"]
    assert failures_with_group_tails(batch, []) == []


@given(
    groups=st.lists(st.sampled_from("abcd"), max_size=30),
    picks=st.sets(st.integers(0, 29), max_size=10),
)
def test_the_listed_set_holds_whole_group_tails_and_nothing_before_a_failure(
    groups: list[str], picks: set[int]
) -> None:
    batch = batch_of(groups)
    failed = [f"m{i}" for i in picks if i < len(batch)]

    out = set(failures_with_group_tails(batch, failed))

    assert set(failed) <= out
    for group in set(groups):
        members = [m.message_id for m in batch if m.group_id == group]
        flags = [mid in out for mid in members]
        assert flags == sorted(flags)  # never a listed message before an unlisted one of its group
        if any(flags):  # and the first listed one is a failure, not a bystander
            assert members[flags.index(True)] in failed


def test_a_fifo_record_needs_its_sequence_number_and_its_sensor_as_group() -> None:
    pending = read_pending(message_id="m", body='{"sensor_id": 42}', sent_timestamp="0")

    assert sequenced(pending, sequence_number="18849496460467696128", group_id="42").sequence == 18849496460467696128
    for number, group, reason in [
        (None, "42", "SequenceNumber attribute is missing"),
        ("12a", "42", "not a decimal number"),
        ("\u0661\u0662", "42", "not a decimal number"),  # Arabic-Indic digits: isdigit() says yes
        (str(2**128), "42", "more than 128 bits"),
        ("1", "042", "MessageGroupId '042' is not the sensor id 42"),
        ("1", None, "MessageGroupId None is not the sensor id 42"),
    ]:
        try:
            sequenced(pending, sequence_number=number, group_id=group)
        except RejectedMessage as rejection:
            assert reason in rejection.reason
        else:
            raise AssertionError(f"{number!r}, {group!r} was accepted")
