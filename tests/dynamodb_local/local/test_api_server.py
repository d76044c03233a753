"""The local server of the read API (``sensor-digest up``'s) over real HTTP: the API's own handler
behind it, its page at ``/``, loopback only and no other page's, and a clean JSON 4xx for hostile
requests.

Engine: DynamoDB Local behind the API's service; the server: the standard library's, on 127.0.0.1.
Requests are written as raw bytes on a socket, so that malformed ones reach the server as sent.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Any

import pytest

from sensor_digest.store import schema
from sensor_digest_tools.local.api_server import HOST, LocalApi
from tests.support.tables import Tables


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def send(server: LocalApi, raw: bytes) -> Answer:
    """Write ``raw`` as it is, read the answer until the server closes the connection."""
    with socket.create_connection((HOST, server.port), timeout=30) as connection:
        connection.sendall(raw)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return Answer(status=int(status_line.split()[1]), headers=headers, body=body)


def request(server: LocalApi, target: str | bytes, method: str = "GET", extra: str = "", host: str = "") -> Answer:
    line = target if isinstance(target, bytes) else target.encode()
    host = host or f"{HOST}:{server.port}"
    # headers as bytes of Latin-1, as HTTP/1.1 reads them (so "\u00b2" reaches the server as the superscript two)
    return send(server, method.encode() + b" " + line + f" HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode("latin-1"))


def test_the_api_answers_over_http_as_its_handler_does(ddb: Any, tables: Tables, server: LocalApi) -> None:
    ddb.put_item(TableName=tables.table, Item=schema.day_item(7, "2024-05-01", 3))

    answer = request(server, "/sensors/7/days?from=2024-05-01&to=2024-05-31")

    assert answer.status == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {"sensor_id": 7, "days": {"2024-05-01": 3}}


def test_the_server_listens_on_loopback_only(server: LocalApi) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    assert server._server.server_address[0] == "127.0.0.1"


def test_the_page_is_served_at_the_root_with_a_policy_that_allows_no_other_origin(server: LocalApi) -> None:
    answer = request(server, "/")

    assert answer.status == 200
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in answer.headers["content-security-policy"]
    assert b'<table id="heatmap"' in answer.body


def test_a_request_naming_another_host_is_refused(server: LocalApi) -> None:
    answer = request(server, "/sensors", host="attacker.example:80")

    assert answer.status == 421
    assert "error" in answer.json()


@pytest.mark.parametrize("host", ["LOCALHOST", "LocalHost", "localhost"])
def test_a_request_naming_localhost_in_any_case_is_answered(server: LocalApi, host: str) -> None:
    # Given a host name in any case (host names are case-insensitive)
    # When a request names it with the server's port
    answer = request(server, "/", host=f"{host}:{server.port}")

    # Then the server answers it as its own
    assert answer.status == 200


def test_a_request_naming_another_host_in_capitals_is_refused(server: LocalApi) -> None:
    answer = request(server, "/sensors", host=f"LOCALHOST.ATTACKER.EXAMPLE:{server.port}")

    assert answer.status == 421


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("GET", "Origin: http://evil.example\r\n"),
        ("GET", "Origin: null\r\n"),
        ("OPTIONS", "Origin: http://evil.example\r\nAccess-Control-Request-Method: GET\r\n"),
    ],
    ids=["foreign-origin", "null-origin", "preflight"],
)
def test_a_request_from_another_page_is_refused_and_allowed_nothing(server: LocalApi, method: str, extra: str) -> None:
    # Given a page of another site reading the API, or its browser asking first
    answer = request(server, "/sensors", method, extra)

    # Then it is refused in JSON, and no CORS header allows that page anything
    assert answer.status == 403
    assert set(answer.json()) == {"error"}
    assert not [name for name in answer.headers if name.startswith("access-control-")]


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost"])
def test_a_request_from_the_page_s_own_origin_is_answered(server: LocalApi, name: str) -> None:
    answer = request(server, "/sensors", "GET", f"Origin: http://{name}:{server.port}\r\n")

    assert answer.status == 200


@pytest.mark.parametrize(
    ("target", "method", "extra", "status"),
    [
        ("/sensors?from=" + "x" * 9000, "GET", "", 414),
        ("/sensors?from=" + "x" * 70000, "GET", "", 414),
        (b"/sensors/\xff/days", "GET", "", 400),
        ("/sensors/7/days?from=%ff&to=2024-05-01", "GET", "", 400),
        ("/../../etc/passwd", "GET", "", 404),
        ("/sensors/7/days/../../../etc/passwd", "GET", "", 404),
        ("/sensors", "POST", "Content-Length: 2\r\n\r\n{}", 405),
        ("/sensors", "DELETE", "", 405),
        ("/sensors", "BREW", "", 405),
        ("/sensors", "POST", "Transfer-Encoding: chunked\r\n", 411),
        ("/sensors", "POST", "Content-Length: 99999999\r\n", 413),
        ("/sensors/abc/days?from=2024-05-01&to=2024-05-02", "GET", "", 400),
        ("/sensors", "GET", "Content-Length: \u00b2\r\n", 400),
        ("/sensors", "GET", "Content-Length: 1\u00b3\r\n", 400),
        ("/sensors", "GET", "Content-Length: -1\r\n", 400),
        ("/sensors", "GET", "Content-Length: 1 0\r\n", 400),
        ("/sensors", "GET", "Content-Length: 0\r\nContent-Length: 2\r\n", 400),
        ("/sensors", "GET", f"Content-Length: {'9' * 40}\r\n", 400),
        ("/sensors", "GET", "Host: localhost\r\n", 400),
        ("/sensors", "GET", f"Origin: http://{HOST}\r\nOrigin: http://{HOST}\r\n", 400),
    ],
    ids=[
        "long-target",
        "huge-target",
        "raw-non-ascii-path",
        "bad-percent-encoding",
        "traversal",
        "traversal-under-route",
        "post",
        "delete",
        "unknown-method",
        "chunked-body",
        "huge-body",
        "bad-sensor-id",
        "length-in-superscript-digits",
        "length-with-a-superscript-three",
        "negative-length",
        "length-with-a-space",
        "two-lengths",
        "length-past-any-body",
        "second-host",
        "two-origins",
    ],
)
def test_a_hostile_request_gets_a_clean_json_4xx(
    server: LocalApi, target: str | bytes, method: str, extra: str, status: int
) -> None:
    answer = request(server, target, method, extra)

    assert answer.status == status
    assert answer.headers["content-type"] == "application/json"
    assert set(answer.json()) == {"error"}


def test_a_header_that_is_not_one_leaves_the_server_answering_the_next_request(
    server: LocalApi, capfd: pytest.CaptureFixture[str]
) -> None:
    # Given a request whose Content-Length is a superscript two, which Python's isdigit takes
    answer = request(server, "/sensors", "GET", "Content-Length: \u00b2\r\n")

    # Then it is answered, in JSON, no request thread dies with a traceback, and the next is served
    assert (answer.status, answer.json()) == (400, {"error": "Content-Length must be one length in ASCII digits"})
    assert "Traceback" not in capfd.readouterr().err
    assert request(server, "/sensors").status == 200


def test_head_answers_the_headers_without_a_body(server: LocalApi) -> None:
    page, route = request(server, "/", "HEAD"), request(server, "/sensors", "HEAD")

    assert (page.status, page.body) == (200, b"")
    assert int(page.headers["content-length"]) > 0
    assert (route.status, route.body) == (405, b"")
