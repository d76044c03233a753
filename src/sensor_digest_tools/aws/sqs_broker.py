"""An in-process SQS for the local runtime: SQS's semantics (the queue model, ``sqs_queues.py``),
served to every boto3 client here.

``install(session)`` registers on botocore's ``before-call.sqs.*`` hook: each SQS call made by
a client of that session (the ingest handler's own client included) is answered from memory
with the response SQS would send, so the handlers run unchanged. What it keeps of SQS:

- at-least-once delivery: a received message stays in the queue, invisible for the visibility
  timeout, until it is deleted with its latest receipt handle; an older receipt handle is
  accepted but deletes nothing (as SQS documents);
- ``ChangeMessageVisibility`` of 0 to 43,200 s, for a message in flight only (``MessageNotInflight``);
- ``ApproximateReceiveCount``, ``SentTimestamp``, ``ApproximateFirstReceiveTimestamp``;
- the redrive policy: a message received ``maxReceiveCount`` times and still not deleted is
  moved to the dead-letter queue, with its id, body, attributes and sent time, instead of being
  delivered again;
- message attributes, their names by SQS's rule (``InvalidParameterValue`` otherwise), ``SendMessageBatch`` and
  ``DeleteMessageBatch`` of up to ten entries;
- ``MaximumMessageSize``, counted as SQS counts it: the body plus each attribute's name, data
  type and value, in UTF-8 bytes (``InvalidParameterValue`` past it);
- SQS's own dead-letter redrive (``StartMessageMoveTask``, done at once here where SQS runs it as
  a task): every message of the dead-letter queue back to its source queue (or
  ``DestinationArn``) with its body and attributes, as a new message with a new ``messageId`` and
  a new ``SentTimestamp``, as SQS documents;
- a ``clock`` (epoch seconds) for the sent and receive timestamps, so a test can let days pass,
  and ``ticks`` (monotonic seconds) for visibility timeouts and the deduplication window, so a
  test can let a timeout pass without sleeping;
- FIFO queues (``fifo=True``, the name ending in ``.fifo``), in high-throughput mode:
  ``MessageGroupId`` and ``MessageDeduplicationId`` required; a message whose deduplication id
  was seen in its group within the last five minutes is accepted but not queued again (the first
  one's id is returned); each message gets a ``SequenceNumber`` that only grows; a receive returns
  as many messages of one group as it can, in order, then the next group's; no message of a group
  is returned while any one of that group is in flight (received and neither deleted nor visible
  again), so a retried message holds its group back; a FIFO queue's dead-letter queue
  must be FIFO, and a message moved there keeps its group; its deduplication id becomes its
  message id (as SQS documents).

It exists because moto's SQS scans its whole queue several times per call, which is too slow for
the thousands of messages the demo moves; ``sensor-digest up`` still uses moto's server, which
other processes can reach over HTTP.
"""

from __future__ import annotations

from typing import Any

from botocore.awsrequest import AWSResponse

from sensor_digest_tools.aws.sqs_queues import (
    ENDPOINT,
    FIRST_SEQUENCE_NUMBER,
    InvalidAttributeName,
    InvalidFifoRequest,
    InvalidRequest,
    MessageTooLong,
    QueueDoesNotExist,
    SqsQueues,
    _Message,
    md5,
)

__all__ = ["ENDPOINT", "FIRST_SEQUENCE_NUMBER", "LocalSqsBroker", "SqsQueues"]


class LocalSqsBroker(SqsQueues):
    """``SqsQueues`` answering the SQS calls of every boto3 client of a session (``install``)."""

    def install(self, session: Any) -> None:
        session.events.register("before-parameter-build.sqs", self._keep_params)
        session.events.register("before-call.sqs", self._serve)

    @staticmethod
    def _keep_params(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["sensor_digest_params"] = dict(params)

    def _serve(self, model: Any, context: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        params = context.get("sensor_digest_params", {})
        try:
            parsed = getattr(self, f"_api_{model.name}")(params)
            status = 200
        except QueueDoesNotExist as exc:
            parsed = {"Error": {"Code": "AWS.SimpleQueueService.NonExistentQueue", "Message": f"no queue {exc}"}}
            status = 400
        except (MessageTooLong, InvalidAttributeName) as exc:
            parsed = {"Error": {"Code": "InvalidParameterValue", "Message": str(exc)}}
            status = 400
        except InvalidRequest as exc:
            parsed = {"Error": {"Code": exc.code, "Message": str(exc)}}
            status = 400
        except AttributeError:
            parsed = {"Error": {"Code": "InvalidAction", "Message": f"{model.name} is not emulated"}}
            status = 400
        parsed["ResponseMetadata"] = {"HTTPStatusCode": status}
        return AWSResponse(url=ENDPOINT, status_code=status, headers={}, raw=None), parsed

    def _send_entry(self, url: str, entry: dict[str, Any]) -> dict[str, Any]:
        message = self.send(
            url,
            entry["MessageBody"],
            entry.get("MessageAttributes"),
            group_id=entry.get("MessageGroupId"),
            deduplication_id=entry.get("MessageDeduplicationId"),
        )
        out = {"MessageId": message.message_id, "MD5OfMessageBody": md5(entry["MessageBody"])}
        if message.sequence_number is not None:
            out["SequenceNumber"] = message.sequence_number
        return out

    def _api_SendMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._send_entry(p["QueueUrl"], p)

    def _api_SendMessageBatch(self, p: dict[str, Any]) -> dict[str, Any]:
        ok, failed = [], []
        for entry in p["Entries"]:
            try:
                ok.append({"Id": entry["Id"], **self._send_entry(p["QueueUrl"], entry)})
            except (MessageTooLong, InvalidAttributeName) as exc:
                failed.append(
                    {"Id": entry["Id"], "Code": "InvalidParameterValue", "Message": str(exc), "SenderFault": True}
                )
            except InvalidFifoRequest as exc:
                failed.append({"Id": entry["Id"], "Code": exc.code, "Message": str(exc), "SenderFault": True})
        return {"Successful": ok, "Failed": failed}

    def _api_ReceiveMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        messages = self.receive(p["QueueUrl"], int(p.get("MaxNumberOfMessages", 1)), p.get("VisibilityTimeout"))
        out = []
        for m in messages:
            out.append(
                {
                    "MessageId": m.message_id,
                    "ReceiptHandle": m.receipt,
                    "MD5OfBody": md5(m.body),
                    "Body": m.body,
                    "Attributes": {
                        "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                        "SentTimestamp": str(m.sent_ms),
                        "ApproximateReceiveCount": str(m.receive_count),
                        "ApproximateFirstReceiveTimestamp": str(m.first_receive_ms),
                        **_fifo_attributes(m),
                    },
                    "MessageAttributes": m.attributes,
                }
            )
        return {"Messages": out} if out else {}

    def _api_DeleteMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        self.delete(p["QueueUrl"], p["ReceiptHandle"])
        return {}

    def _api_DeleteMessageBatch(self, p: dict[str, Any]) -> dict[str, Any]:
        for entry in p["Entries"]:
            self.delete(p["QueueUrl"], entry["ReceiptHandle"])
        return {"Successful": [{"Id": e["Id"]} for e in p["Entries"]], "Failed": []}

    def _api_ChangeMessageVisibility(self, p: dict[str, Any]) -> dict[str, Any]:
        self.change_visibility(p["QueueUrl"], p["ReceiptHandle"], float(p["VisibilityTimeout"]))
        return {}

    def _api_StartMessageMoveTask(self, p: dict[str, Any]) -> dict[str, Any]:
        moved = self.move_messages(p["SourceArn"], p.get("DestinationArn"))
        return {"TaskHandle": f"emulated-move-of-{moved}"}

    def _api_GetQueueAttributes(self, p: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(p["QueueUrl"])
        visible, in_flight = self.counts(p["QueueUrl"])
        return {
            "Attributes": {
                "QueueArn": queue.arn,
                "ApproximateNumberOfMessages": str(visible),
                "ApproximateNumberOfMessagesNotVisible": str(in_flight),
                "VisibilityTimeout": str(int(queue.visibility_timeout)),
                "MaximumMessageSize": str(queue.max_message_bytes),
                **(
                    {
                        "FifoQueue": "true",
                        "ContentBasedDeduplication": "false",
                        "DeduplicationScope": "messageGroup",
                        "FifoThroughputLimit": "perMessageGroupId",
                    }
                    if queue.fifo
                    else {}
                ),
            }
        }


def _fifo_attributes(message: _Message) -> dict[str, str]:
    if message.sequence_number is None:
        return {}
    return {
        "MessageGroupId": str(message.group_id),
        "MessageDeduplicationId": str(message.deduplication_id),
        "SequenceNumber": message.sequence_number,
    }
