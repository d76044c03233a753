"""What Lambda calls, minus Powertools' decorators: the adapter the local pipeline, the tests and the
benchmark use to run a service as its handler (the event in, the partial batch response out)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


class Report(Protocol):
    def response(self) -> dict[str, Any]: ...


class Service(Protocol):
    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> Report: ...


def lambda_handler(service: Service) -> Handler:
    """``service`` as Lambda invokes a handler: the context's remaining time bounds the work."""

    def invoke(event: dict[str, Any], context: Any) -> dict[str, Any]:
        remaining = context.get_remaining_time_in_millis() if context is not None else None
        return service.handle_event(event, remaining).response()

    return invoke
