"""A local SQS endpoint: moto's server on a loopback port, with SensorDigest's queue pair.

moto implements the SQS semantics the pipeline relies on (visibility timeout, receive counts,
redrive to the dead-letter queue past ``maxReceiveCount``, message attributes), over the real
SQS API, so the handlers' own boto3 clients reach it through ``AWS_ENDPOINT_URL_SQS``.

moto's server answers any web page: it reflects every ``Origin`` in its CORS answers and takes
any ``Host``. Here it runs behind the read API's rule (``sensor_digest_tools.local.loopback``): it
listens on 127.0.0.1, a request naming another ``Host`` or a page's foreign ``Origin`` is refused
before moto sees it, and its answers carry no CORS header.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sensor_digest.dead_letter_format import SQS_MAX_MESSAGE_BYTES, source_queue_max_bytes
from sensor_digest_tools.aws.dynamodb_local import EngineError
from sensor_digest_tools.aws.session import local_client
from sensor_digest_tools.local import loopback
from sensor_digest_tools.local.loopback import HOST


@dataclass
class QueuePair:
    queue_url: str
    dlq_url: str


def _speed_up_moto_receive() -> None:
    """moto's ``receive_message`` checks each returned message's retention by computing *all* queue
    attributes (several scans of the whole queue) per message, which makes a queue of a few hundred
    messages slow. Same check, reading the one attribute it needs (moto is pinned in
    requirements-dev.txt; without that attribute the original stays)."""
    from moto.core.utils import unix_time
    from moto.sqs.models import SQSBackend

    if getattr(SQSBackend, "_sensor_digest_patched", False) or not hasattr(
        SQSBackend, "is_message_valid_based_on_retention_period"
    ):
        return

    def is_valid(self: Any, queue_name: str, message: Any) -> bool:
        retention = int(self.get_queue(queue_name).message_retention_period)
        return bool(retention + message.sent_timestamp / 1000 > unix_time())

    setattr(SQSBackend, "is_message_valid_based_on_retention_period", is_valid)  # noqa: B010
    setattr(SQSBackend, "_sensor_digest_patched", True)  # noqa: B010


LOCAL_EXTRA_HINT = (
    "sensor-digest up serves SQS with moto's server, which the base install leaves out: "
    "pip install 'sensor-digest[local]' (from a checkout: pip install '.[local]')"
)


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def without_cors(app: WsgiApp) -> WsgiApp:
    """``app`` with every ``Access-Control-*`` header taken out of its answers (moto's server adds
    them, ``*`` or the request's ``Origin``): no web page is told it may read the queue."""

    def answer(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            kept = [(name, value) for name, value in headers if not name.lower().startswith("access-control-")]
            return start_response(status, kept, exc_info)

        return app(environ, start)

    return answer


class LocalSqs:
    """moto's server on ``127.0.0.1:port`` (a free port when 0), in a thread of its own, answering
    only the requests ``loopback.admitted`` lets through."""

    def __init__(self, port: int = 0) -> None:
        try:  # the `local` extra: only `up` needs it
            from moto.moto_server.werkzeug_app import (
                DomainDispatcherApplication,
                MotoRequestHandler,
                create_backend_app,
            )
            from werkzeug.serving import make_server
        except ImportError as exc:
            raise EngineError(LOCAL_EXTRA_HINT) from exc

        class Requests(MotoRequestHandler):  # type: ignore[misc]
            def run_wsgi(self) -> None:
                if loopback.admitted(self):
                    super().run_wsgi()

        _speed_up_moto_receive()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        app = without_cors(DomainDispatcherApplication(create_backend_app))
        self._server = make_server(HOST, port, app, threaded=True, request_handler=Requests)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="sensor-digest-sqs", daemon=True
        )
        self._thread.start()
        self.port = int(self._server.server_address[1])
        self.endpoint = f"http://{HOST}:{self.port}"

    def client(self) -> Any:
        return local_client(self.endpoint, "sqs")

    def create_queues(self, name: str, *, visibility_timeout: int, max_receive_count: int) -> QueuePair:
        sqs = self.client()
        dlq_url = sqs.create_queue(
            QueueName=f"{name}DLQ",
            Attributes={"MaximumMessageSize": str(SQS_MAX_MESSAGE_BYTES), "MessageRetentionPeriod": "1209600"},
        )["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(max_receive_count)})
        queue_url = sqs.create_queue(
            QueueName=name,
            Attributes={
                "VisibilityTimeout": str(visibility_timeout),
                "RedrivePolicy": redrive,
                "MaximumMessageSize": str(source_queue_max_bytes(SQS_MAX_MESSAGE_BYTES)),
            },
        )["QueueUrl"]
        return QueuePair(queue_url=queue_url, dlq_url=dlq_url)

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join(timeout=30)
        self._server.server_close()
