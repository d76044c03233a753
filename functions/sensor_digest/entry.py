"""What both Lambda entry points share: Powertools, the service built once per container, the
report published as metrics and one log line, the partial batch response returned.

``ingest/handler.py`` and ``summary/handler.py`` are each one ``LambdaEntry``: a name, how to build
the service (the module's ``build_service`` with settings from the environment and a default
boto3 session), and the log line's message.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Generic, Protocol, TypeVar

import boto3
from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from sensor_digest import names
from sensor_digest.store.dynamo import ClientSource


class Report(Protocol):
    def response(self) -> dict[str, Any]: ...

    def metrics(self) -> Mapping[str, int]: ...

    def log_fields(self) -> Mapping[str, Any]: ...


class Service(Protocol):
    def handle_event(self, event: Mapping[str, Any], remaining_ms: int | None = None) -> Report: ...


S = TypeVar("S", bound=Service)


class LambdaEntry(Generic[S]):
    def __init__(self, name: str, build: Callable[[ClientSource], S], done: str) -> None:
        self.logger = Logger(service=name)
        self.metrics = Metrics(
            service=name, namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or names.METRICS_NAMESPACE
        )
        self.tracer = Tracer(service=name)
        self._done = done
        # Built on the first invocation (never at import), then reused by the warm container.
        self.service: Callable[[], S] = cache(lambda: build(boto3.Session()))
        self.handler = self.logger.inject_lambda_context(
            self.metrics.log_metrics(self.tracer.capture_lambda_handler(self._handle, capture_response=False))
        )

    def _handle(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        report = self.service().handle_event(event, context.get_remaining_time_in_millis())
        for metric, value in report.metrics().items():
            self.metrics.add_metric(name=metric, unit=MetricUnit.Count, value=value)
        self.logger.info(self._done, **report.log_fields())
        return report.response()
