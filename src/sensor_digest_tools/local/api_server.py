"""The read API on a loopback port, for ``sensor-digest up``: the standard library's HTTP server
turning each request into an API Gateway HTTP API event (payload 2.0) for the API's own handler
(``sensor_digest.api``, as ``functions/api/handler.py`` builds it), and its answer back into HTTP.

``GET /`` (and the page's files) is the page ``page/index.html``: a heatmap of day counts, a day's
hours, a sensor's readings and its months, drawn from the API in the browser. Everything else goes
to the handler, so the answers are the deployed API's, 404s and 405s included.

Only this machine can reach it, and no web page but its own: it listens on 127.0.0.1 and refuses
a request naming another ``Host`` or a page's foreign ``Origin`` (``loopback.py``, the rule the SQS
endpoint of ``up`` follows too), so a page elsewhere cannot read it through a DNS name rebound to
127.0.0.1. What cannot be a request of the API is refused with a JSON error and never reaches the handler: a
request target longer than ``MAX_TARGET`` (414), one that is not an ASCII path or whose query does
not decode as UTF-8 (400), a body over ``MAX_BODY`` (413), a method the server does not know (405);
a connection that stalls is dropped after ``REQUEST_TIMEOUT_SECONDS``. Each answer closes its
connection. Every header the server reads is checked before it is used, and a request whose header
is not one is answered 400 in JSON: ``Host`` and ``Origin`` (once at most), ``Content-Length`` (once, or repeated
alike, in ASCII digits: ``²`` is a digit to Python's ``isdigit`` and no length), and
``Transfer-Encoding`` (none: a body needs its length, 411). A body (the alarm actions' ``POST``) goes
into the event as API Gateway puts it: text as itself, anything else base64.

There is no IAM here: the caller of an alarm action is recorded as ``local`` (``LOCAL_CALLER``), where
API Gateway's IAM authorizer would name the signing identity (``requestContext.authorizer.iam``).
"""

from __future__ import annotations

import base64
import re
import threading
import time
import uuid
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl

from sensor_digest_tools.local import loopback
from sensor_digest_tools.local.loopback import HOST

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]

MAX_TARGET = 8192  # API Gateway refuses longer request lines too
MAX_BODY = 64 * 1024
CONTENT_LENGTH = re.compile(r"[0-9]{1,20}")  # ASCII digits only (str.isdigit takes '²' and other scripts')
MAX_QUERY_FIELDS = 64
REQUEST_TIMEOUT_SECONDS = 10
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
LOCAL_CALLER = "local"  # the operator an alarm action names, where AWS names the caller's IAM ARN
PAGE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/heatmap.js": ("heatmap.js", "text/javascript; charset=utf-8"),
    "/chart.js": ("chart.js", "text/javascript; charset=utf-8"),
    "/readings.js": ("readings.js", "text/javascript; charset=utf-8"),
    "/heatmap.css": ("heatmap.css", "text/css; charset=utf-8"),
}
SECURITY_HEADERS = {  # the page's; every answer also gets X-Content-Type-Options: nosniff
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
}


class BadTarget(ValueError):
    """A request target that cannot be one of the API's (the reason is the answer's error)."""


def event_of(method: str, target: str, headers: dict[str, str], source_ip: str, body: bytes = b"") -> dict[str, Any]:
    """The API Gateway HTTP API event (payload 2.0) of a request, as API Gateway would hand it to the
    function: ``rawPath``, ``rawQueryString``, lower-case headers, ``queryStringParameters`` with
    repeated parameters joined by commas, the body (if any), and the caller (``LOCAL_CALLER``);
    ``BadTarget`` for a target that is none."""
    if not target.startswith("/") or not target.isascii():
        raise BadTarget("the request target must be a path in ASCII")
    path, _, query = target.partition("?")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, errors="strict", max_num_fields=MAX_QUERY_FIELDS)
    except UnicodeDecodeError:
        raise BadTarget("the query does not decode as UTF-8") from None
    except ValueError:
        raise BadTarget(f"the query has more than {MAX_QUERY_FIELDS} parameters") from None
    parameters: dict[str, str] = {}
    for name, value in pairs:
        parameters[name] = f"{parameters[name]},{value}" if name in parameters else value
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        "requestContext": {
            "accountId": "local",
            "apiId": "local",
            "authorizer": {"iam": {"userArn": LOCAL_CALLER}},
            "domainName": headers.get("host", HOST),
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": uuid.uuid4().hex,
            "routeKey": "$default",
            "stage": "$default",
            "timeEpoch": int(time.time() * 1000),
        },
        "isBase64Encoded": False,
    }
    if parameters:
        event["queryStringParameters"] = parameters
    if body:
        try:
            event["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
    return event


def page_file(name: str) -> bytes:
    return resources.files("sensor_digest_tools.local").joinpath("page", name).read_bytes()


class LocalApi:
    """The API of ``handler`` on ``127.0.0.1:port`` (a free port when 0), in a thread of its own."""

    def __init__(self, handler: Handler, port: int = 0) -> None:
        self._handler = handler
        self._server = ThreadingHTTPServer((HOST, port), self._requests())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> str:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="sensor-digest-api", daemon=True
        )
        self._thread.start()
        return self.url

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=30)
        self._server.server_close()

    def _requests(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Requests(BaseHTTPRequestHandler):
            server_version = "sensor-digest-api"
            sys_version = ""
            timeout = REQUEST_TIMEOUT_SECONDS

            def log_message(self, format: str, *args: Any) -> None:
                pass  # `up` keeps stderr for what runs where

            def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
                """The server's own refusals (a request line or headers too long, a method it does not
                know) as JSON, as the API's are."""
                if code == HTTPStatus.NOT_IMPLEMENTED:  # no do_<METHOD>: a method nothing here serves
                    code, message = HTTPStatus.METHOD_NOT_ALLOWED, "method not allowed: only GET and POST"
                status = HTTPStatus(code)
                allow = {"Allow": "GET, POST"} if code == 405 else {}
                self._send(status, {"error": message or status.phrase}, allow)

            def _answer(self) -> None:
                if not loopback.admitted(self):
                    return
                if len(self.path) > MAX_TARGET:
                    self._send(HTTPStatus.REQUEST_URI_TOO_LONG, {"error": f"request target over {MAX_TARGET} bytes"})
                    return
                body = self._body_read()
                if body is None:
                    return
                page = PAGE_FILES.get(self.path.partition("?")[0])
                if self.command in ("GET", "HEAD") and page is not None:
                    name, kind = page
                    self._write(HTTPStatus.OK, {"Content-Type": kind, **SECURITY_HEADERS}, page_file(name))
                    return
                try:
                    headers = {name.lower(): value for name, value in self.headers.items()}
                    event = event_of(self.command, self.path, headers, self.client_address[0], body)
                except BadTarget as exc:
                    self._send(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                    return
                answer = api._handler(event, None)
                body = str(answer.get("body") or "").encode()
                self._write(HTTPStatus(int(answer["statusCode"])), dict(answer.get("headers") or {}), body)

            def _body_read(self) -> bytes | None:
                """A request's body (empty without one); ``None`` when it was refused."""
                if self.headers.get("Transfer-Encoding"):
                    self._send(HTTPStatus.LENGTH_REQUIRED, {"error": "a body needs a Content-Length"})
                    return None
                lengths = set(self.headers.get_all("Content-Length") or ["0"])
                length = lengths.pop() if len(lengths) == 1 else ""
                if CONTENT_LENGTH.fullmatch(length) is None:
                    self._send(HTTPStatus.BAD_REQUEST, {"error": "Content-Length must be one length in ASCII digits"})
                    return None
                if int(length) > MAX_BODY:
                    self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": f"a body of at most {MAX_BODY} bytes"})
                    return None
                return self.rfile.read(int(length))

            def _send(self, status: HTTPStatus, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                loopback.send_json(self, status, body, headers)

            def _write(self, status: HTTPStatus, headers: dict[str, str], body: bytes) -> None:
                loopback.write(self, status, headers, body)

        for method in METHODS:
            setattr(Requests, f"do_{method}", Requests._answer)
        return Requests
