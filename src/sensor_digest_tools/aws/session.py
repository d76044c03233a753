"""Clients of the local engines: fixed endpoints, the local region and credentials.

``LocalSession`` is what the local runtime, the benchmark and the tests pass to the handlers'
``build_service(settings, session)``: a boto3 ``Session`` of its own (so the request meter, the
fault layer and the in-process SQS register on its ``events``, and two pipelines in one process
never share one) whose clients go to the local endpoints, with nothing read from or written to
the process environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import boto3
from botocore.config import Config

LOCAL_REGION = "us-east-1"
LOCAL_CREDENTIALS = {"aws_access_key_id": "local", "aws_secret_access_key": "local"}


class LocalSession:
    def __init__(self, endpoints: Mapping[str, str] | None = None) -> None:
        self.boto = boto3.Session(region_name=LOCAL_REGION, **LOCAL_CREDENTIALS)
        self.endpoints = dict(endpoints or {})

    @property
    def events(self) -> Any:
        """botocore's event hooks of every client this session makes."""
        return self.boto.events

    def client(self, service_name: str, **kwargs: Any) -> Any:
        endpoint = self.endpoints.get(service_name)
        if endpoint is not None:
            kwargs.setdefault("endpoint_url", endpoint)
        return self.boto.client(service_name, **kwargs)


def local_client(endpoint: str, service: str = "dynamodb", **config: object) -> Any:
    """A client of a local endpoint with the local credentials; ``config`` overrides botocore's Config."""
    options: dict[str, object] = {"retries": {"mode": "standard", "max_attempts": 3}, **config}
    return boto3.client(  # type: ignore[call-overload]
        service,
        endpoint_url=endpoint,
        region_name=LOCAL_REGION,
        config=Config(**options),  # type: ignore[arg-type]
        **LOCAL_CREDENTIALS,
    )
