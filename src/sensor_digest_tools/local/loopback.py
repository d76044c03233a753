"""The one rule of the servers ``sensor-digest up`` runs in this process (the read API and the SQS
endpoint): they listen on 127.0.0.1 and answer only requests meant for them.

A browser lets any web page send requests to 127.0.0.1, and through a DNS name rebound to
127.0.0.1 even read the answers as the page's own. So a server here (on ``HOST:port``) refuses,
with a one-line JSON error and before anything of the request is acted on:

- a request naming more than one ``Host`` or ``Origin`` (400);
- a ``Host`` other than ``127.0.0.1:<port>`` or ``localhost:<port>``, in any case (host names are
  case-insensitive): a page reaching it through a rebound DNS name (421);
- an ``Origin`` other than the server's own (``http://127.0.0.1:<port>``, ``http://localhost:<port>``):
  a page of any other site, or ``null`` (a sandboxed frame, a file), sent by a browser (403).

Browsers name the page's ``Origin`` in every request but a plain ``GET`` or ``HEAD`` (a link, an
image), and in those too when a script asks to read the answer; boto3, the AWS CLI and curl name
none, and are answered. So is a request without ``Host`` (HTTP/1.0).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

HOST = "127.0.0.1"


def own_hosts(port: int) -> tuple[str, str]:
    """The ``Host`` values that name the server on ``HOST:port`` (lower-case)."""
    return f"{HOST}:{port}", f"localhost:{port}"


def refusal(headers: Message, port: int) -> tuple[HTTPStatus, str] | None:
    """Why a request with ``headers`` to the server on ``HOST:port`` is refused, or ``None``."""
    hosts, origins = headers.get_all("Host") or [], headers.get_all("Origin") or []
    if len(hosts) > 1:
        return HTTPStatus.BAD_REQUEST, "a request names one Host"
    if hosts and hosts[0].lower() not in own_hosts(port):
        return HTTPStatus.MISDIRECTED_REQUEST, f"this server is {HOST}:{port}"
    if len(origins) > 1:
        return HTTPStatus.BAD_REQUEST, "a request names one Origin"
    if origins and origins[0].lower() not in {f"http://{host}" for host in own_hosts(port)}:
        return HTTPStatus.FORBIDDEN, f"this server answers no web page but its own (http://{HOST}:{port})"
    return None


def admitted(request: BaseHTTPRequestHandler) -> bool:
    """``True`` when ``request`` is meant for its server; else it is answered with its refusal."""
    server = request.server  # an HTTPServer (the standard library's, werkzeug's): it knows its port
    refused = refusal(request.headers, server.server_port if isinstance(server, HTTPServer) else 0)
    if refused is None:
        return True
    status, error = refused
    send_json(request, status, {"error": error})
    return False


def send_json(
    request: BaseHTTPRequestHandler, status: HTTPStatus, body: dict[str, Any], headers: Mapping[str, str] | None = None
) -> None:
    write(request, status, {"Content-Type": "application/json", **(headers or {})}, json.dumps(body).encode())


def write(request: BaseHTTPRequestHandler, status: HTTPStatus, headers: Mapping[str, str], body: bytes) -> None:
    """Answer ``request`` and close its connection: ``headers`` (their own length and connection
    headers left out), ``X-Content-Type-Options: nosniff``, and ``body`` (none to a ``HEAD``)."""
    request.close_connection = True
    request.send_response(status.value, status.phrase)
    for name, value in headers.items():
        if name.lower() not in ("content-length", "connection"):
            request.send_header(name, value)
    request.send_header("X-Content-Type-Options", "nosniff")
    request.send_header("Content-Length", str(len(body)))
    request.send_header("Connection", "close")
    request.end_headers()
    if request.command != "HEAD":
        request.wfile.write(body)
