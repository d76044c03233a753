"""A local SQS endpoint: moto's server on a loopback port, with SensorDigest's queue pair.

moto implements the SQS semantics the pipeline relies on (visibility timeout, receive counts,
redrive to the dead-letter queue past ``maxReceiveCount``, message attributes), over the real
SQS API, so the handlers' own boto3 clients reach it through ``AWS_ENDPOINT_URL_SQS``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from sensor_digest.dead_letter_format import SQS_MAX_MESSAGE_BYTES, source_queue_max_bytes
from sensor_digest_tools.aws.dynamodb_local import EngineError
from sensor_digest_tools.aws.session import local_client


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


class LocalSqs:
    def __init__(self, port: int = 0) -> None:
        try:
            from moto.server import ThreadedMotoServer  # the `local` extra: only `up` needs it
        except ImportError as exc:
            raise EngineError(LOCAL_EXTRA_HINT) from exc

        _speed_up_moto_receive()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        self._server.start()
        host, bound = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{bound}"

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
        self._server.stop()
