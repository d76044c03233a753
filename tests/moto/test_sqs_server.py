"""The SQS endpoint of ``sensor-digest up`` (moto's server behind the read API's rule) over real
HTTP: a web page's requests are refused before moto sees them (another ``Origin``, a preflight, a
``Host`` a rebound DNS name gives), no answer carries CORS headers, and the clients of the queue
(boto3 with the endpoint URL, a request signed as the AWS CLI signs it) are answered.

Engine: moto's server on a loopback port (``LocalSqs``), one for the module; requests by
``http.client``, written as a browser or a page rebound to 127.0.0.1 would send them.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from sensor_digest_tools.aws.session import LOCAL_CREDENTIALS, LOCAL_REGION
from sensor_digest_tools.aws.sqs_server import LocalSqs, QueuePair

FAKE_SIGNATURE = (  # what a page can put in an Authorization header: moto checks no signature
    f"AWS4-HMAC-SHA256 Credential=local/20240101/{LOCAL_REGION}/sqs/aws4_request, SignedHeaders=host, Signature=0"
)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


@pytest.fixture(scope="module")
def sqs() -> Iterator[LocalSqs]:
    server = LocalSqs()
    yield server
    server.stop()


@pytest.fixture
def queue(sqs: LocalSqs, request: pytest.FixtureRequest) -> Iterator[QueuePair]:
    pair = sqs.create_queues(f"Q{abs(hash(request.node.nodeid))}", visibility_timeout=1, max_receive_count=3)
    yield pair
    for url in (pair.queue_url, pair.dlq_url):
        sqs.client().delete_queue(QueueUrl=url)


def port_of(sqs: LocalSqs) -> int:
    return int(urlsplit(sqs.endpoint).port or 0)


def send(sqs: LocalSqs, method: str, path: str, headers: dict[str, str], body: str = "") -> Answer:
    connection = http.client.HTTPConnection("127.0.0.1", port_of(sqs), timeout=30)
    try:
        # skip_host: the Host header is the test's (a rebound page sends its own name)
        connection.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
        for name, value in {**headers, "Content-Length": str(len(body.encode()))}.items():
            connection.putheader(name, value)
        connection.endheaders(body.encode())
        answer = connection.getresponse()
        return Answer(answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read())
    finally:
        connection.close()


def json_send_message(queue_url: str, **headers: str) -> tuple[str, dict[str, str], str]:
    """``SendMessage`` in SQS's JSON protocol, as a page's ``fetch`` would post it."""
    return (
        "/",
        {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "AmazonSQS.SendMessage",
            "Authorization": FAKE_SIGNATURE,
            **headers,
        },
        json.dumps({"QueueUrl": queue_url, "MessageBody": '{"sensor_id": 1}'}),
    )


def waiting(sqs: LocalSqs, queue: QueuePair) -> int:
    attributes = sqs.client().get_queue_attributes(
        QueueUrl=queue.queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def cors_headers(answer: Answer) -> dict[str, str]:
    return {name: value for name, value in answer.headers.items() if name.startswith("access-control-")}


def test_a_preflight_from_another_origin_is_refused_and_reflects_nothing(sqs: LocalSqs) -> None:
    # Given a page of another site about to post to the queue: the browser asks first
    answer = send(
        sqs,
        "OPTIONS",
        "/",
        {
            "Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type,x-amz-target",
        },
    )

    # Then the endpoint refuses, in JSON, and allows that origin nothing
    assert answer.status == 403
    assert answer.headers["content-type"] == "application/json"
    assert set(json.loads(answer.body)) == {"error"}
    assert cors_headers(answer) == {}


@pytest.mark.parametrize(
    "extra",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Host": "evil.example:{port}"},
        {"Host": "evil.example:{port}", "Origin": "http://evil.example:{port}"},
    ],
    ids=["foreign-origin", "null-origin", "rebound-host", "rebound-page"],
)
def test_a_send_message_from_a_web_page_is_refused_and_counts_nothing(
    sqs: LocalSqs, queue: QueuePair, extra: dict[str, str]
) -> None:
    # Given a SendMessage as a page would post it: from its own origin, or through a DNS name rebound to 127.0.0.1
    path, headers, body = json_send_message(queue.queue_url)
    headers.update({name: value.format(port=port_of(sqs)) for name, value in extra.items()})

    answer = send(sqs, "POST", path, headers, body)

    # Then it is refused before moto sees it: nothing is queued
    assert answer.status == (421 if "Host" in extra else 403)
    assert set(json.loads(answer.body)) == {"error"}
    assert cors_headers(answer) == {}
    assert waiting(sqs, queue) == 0


def test_a_form_a_page_posts_in_the_query_protocol_is_refused(sqs: LocalSqs, queue: QueuePair) -> None:
    # Given a plain HTML form's POST (no preflight): SendMessage in SQS's query protocol
    form = urlencode({"Action": "SendMessage", "MessageBody": "x", "Version": "2012-11-05"})
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Origin": "http://evil.example",
        "Authorization": FAKE_SIGNATURE,
    }

    answer = send(sqs, "POST", urlsplit(queue.queue_url).path, headers, form)

    assert answer.status == 403
    assert waiting(sqs, queue) == 0


def test_boto3_with_the_endpoint_url_sends_and_receives_and_no_answer_carries_cors(
    sqs: LocalSqs, queue: QueuePair
) -> None:
    client = sqs.client()  # boto3, endpoint_url=http://127.0.0.1:<port>

    sent = client.send_message(QueueUrl=queue.queue_url, MessageBody='{"sensor_id": 7}')
    received = client.receive_message(QueueUrl=queue.queue_url, WaitTimeSeconds=0)

    assert [m["Body"] for m in received["Messages"]] == ['{"sensor_id": 7}']
    headers = sent["ResponseMetadata"]["HTTPHeaders"]
    assert not [name for name in headers if name.lower().startswith("access-control-")]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_request_signed_as_the_aws_cli_signs_it_is_answered(sqs: LocalSqs, queue: QueuePair, host: str) -> None:
    # Given SendMessage in the query protocol, signed with SigV4 by botocore (what the AWS CLI runs)
    # for --endpoint-url http://<host>:<port>
    url = f"http://{host}:{port_of(sqs)}{urlsplit(queue.queue_url).path}"
    form = urlencode({"Action": "SendMessage", "MessageBody": "signed", "Version": "2012-11-05"})
    signed = AWSRequest(
        method="POST", url=url, data=form, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    credentials = Credentials(LOCAL_CREDENTIALS["aws_access_key_id"], LOCAL_CREDENTIALS["aws_secret_access_key"])
    SigV4Auth(credentials, "sqs", LOCAL_REGION).add_auth(signed)
    headers: dict[str, Any] = dict(signed.headers.items())

    answer = send(sqs, "POST", urlsplit(url).path, {**headers, "Host": f"{host}:{port_of(sqs)}"}, form)

    assert answer.status == 200, answer.body
    assert b"<SendMessageResponse" in answer.body
    assert waiting(sqs, queue) == 1


def test_a_request_from_the_endpoint_s_own_origin_is_answered(sqs: LocalSqs, queue: QueuePair) -> None:
    path, headers, body = json_send_message(queue.queue_url, Origin=f"http://127.0.0.1:{port_of(sqs)}")

    answer = send(sqs, "POST", path, headers, body)

    assert answer.status == 200, answer.body
    assert cors_headers(answer) == {}
    assert waiting(sqs, queue) == 1
