"""Service-level helpers for the ingest tests on DynamoDB Local: a dead-letter sink that keeps what it
is handed, and a counter that hands each group's outcome (with the steps it took) to a listener."""

from __future__ import annotations

from collections.abc import Callable

from sensor_digest.counting import DayCounter, Group, GroupOutcome
from sensor_digest.ingest import Rejection


class DeadLettered:
    """A fake dead-letter sink for service-level tests (the handler tests use moto's SQS)."""

    def __init__(self) -> None:
        self.kept: list[tuple[str, str]] = []

    def send(self, rejections: list[Rejection], deadline: float | None = None) -> set[str]:
        self.kept += [(r.message.message_id, r.reason) for r in rejections]
        return {r.message.message_id for r in rejections}


def recording(counter: DayCounter, on_group: Callable[[GroupOutcome], None] | None) -> DayCounter:
    """``counter``, handing each group's outcome (with the steps it took) to ``on_group``."""
    if on_group is not None:
        count_group = counter.count_group

        def recorded(group: Group) -> GroupOutcome:
            outcome = count_group(group)
            on_group(outcome)
            return outcome

        counter.count_group = recorded  # type: ignore[method-assign]
    return counter
