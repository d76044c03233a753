"""A device that reports to SensorDigest through AWS IoT Core: MQTT over TLS (port 8883, X.509
client certificate) with paho-mqtt, QoS 1, on the topic the pipeline's ``iot_topic`` selects.

    pip install "paho-mqtt>=2"
    python iot_device.py --endpoint abc123-ats.iot.eu-west-1.amazonaws.com --sensor 7 \\
        --cert device.pem.crt --key private.pem.key --ca AmazonRootCA1.pem \\
        --rule SensorDigestIotRule --topic sensors/7/reports

``--rule`` (the stack's output ``IotRuleName``) publishes through Basic Ingest
(``$aws/rules/<rule>/<topic>``: no broker, no messaging charge); without it the report goes through
the broker on ``<topic>``. Either way the rule ``SELECT * FROM '<iot_topic>'`` forwards the JSON
payload unchanged as the SQS message body.

Counted exactly once: MQTT QoS 1 delivers at least once, and each delivery is a new rule
evaluation, hence a new SQS message with a new ``messageId``. Only the report's own ``event_id``
makes the copies one report to the ingest: the device draws it once per reading, keeps it with the
reading, and sends the very same payload on every retry (``Reading.payload``). ``timestamp`` is
the reading's time, not the send time: ISO-8601 with its UTC offset (or epoch seconds), so a
report retried after midnight still counts on its own day.
"""

from __future__ import annotations

import argparse
import json
import ssl
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

MQTT_TLS_PORT = 8883
QOS_AT_LEAST_ONCE = 1
PUBLISH_TIMEOUT_SECONDS = 10.0
ATTEMPTS = 5


@dataclass(frozen=True)
class Reading:
    """One report, its identity fixed when it is taken (store it so, e.g. in flash, until acknowledged)."""

    sensor_id: int
    count: int = 1
    taken_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    event_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def payload(self) -> bytes:
        """The message body SensorDigest counts: ``sensor_id``, ``count``, ``timestamp``, ``event_id``."""
        body = {
            "sensor_id": self.sensor_id,
            "count": self.count,
            "timestamp": self.taken_at.isoformat(timespec="seconds"),  # e.g. 2026-05-01T13:45:00+00:00
            "event_id": self.event_id,
        }
        return json.dumps(body, separators=(",", ":")).encode("utf-8")


def publish_topic(topic: str, rule: str | None) -> str:
    """The topic to publish on: Basic Ingest's ``$aws/rules/<rule>/<topic>``, or the topic itself."""
    return f"$aws/rules/{rule}/{topic}" if rule else topic


def connect(endpoint: str, client_id: str, cert: str, key: str, ca: str) -> Any:
    """A paho client connected to the account's IoT endpoint over mutual TLS (1.2 or newer)."""
    import paho.mqtt.client as mqtt  # noqa: PLC0415 - the example's only third-party import

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311)
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(certfile=cert, keyfile=key)
    client.tls_set_context(context)
    client.connect(endpoint, MQTT_TLS_PORT, keepalive=60)
    client.loop_start()
    return client


def send(client: Any, topic: str, reading: Reading) -> None:
    """Publishes ``reading`` with QoS 1 until the broker acknowledges it, the same payload every time."""
    for attempt in range(1, ATTEMPTS + 1):
        info = client.publish(topic, reading.payload(), qos=QOS_AT_LEAST_ONCE)
        info.wait_for_publish(timeout=PUBLISH_TIMEOUT_SECONDS)
        if info.is_published():
            return
        print(f"attempt {attempt}: no PUBACK for event {reading.event_id}; sending it again")
    raise RuntimeError(f"event {reading.event_id} not acknowledged after {ATTEMPTS} attempts; kept for later")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True, help="aws iot describe-endpoint --endpoint-type iot:Data-ATS")
    parser.add_argument("--sensor", type=int, required=True)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--topic", required=True, help="a topic the pipeline's iot_topic filter matches")
    parser.add_argument("--rule", help="the rule's name (output IotRuleName) to publish through Basic Ingest")
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--ca", required=True, help="Amazon Root CA 1")
    args = parser.parse_args(argv)
    reading = Reading(sensor_id=args.sensor, count=args.count)
    client = connect(args.endpoint, f"sensor-{args.sensor}", args.cert, args.key, args.ca)
    try:
        send(client, publish_topic(args.topic, args.rule), reading)
        print(f"sent {reading.payload().decode()}")
    finally:
        client.loop_stop()
        client.disconnect()


if __name__ == "__main__":
    main()
