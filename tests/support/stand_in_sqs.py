"""A stand-in SQS endpoint for what a real one does to a producer now and then: it answers
``SendMessageBatch`` (SQS's JSON protocol) for the first ``answered`` requests, then either holds the
next one unanswered (``after="hang"``: an endpoint that stops answering, or a request under way when
the producer is interrupted) or closes the connection without a word (``after="close"``). It records
each request's entries, and signals when it holds one (``holding``)."""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal


class StandInSqs:
    def __init__(self, *, answered: int, after: Literal["hang", "close"]) -> None:
        self.answered = answered
        self.after = after
        self.requests: list[list[dict[str, Any]]] = []
        self.holding = threading.Event()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> StandInSqs:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                entries = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["Entries"]
                stand_in.requests.append(entries)
                if len(stand_in.requests) > stand_in.answered:
                    if stand_in.after == "hang":
                        stand_in.holding.set()
                        stand_in._release.wait(120)
                    self.close_connection = True
                    return
                body = json.dumps(
                    {
                        "Successful": [
                            {
                                "Id": e["Id"],
                                "MessageId": str(uuid.uuid4()),
                                "MD5OfMessageBody": hashlib.md5(
                                    e["MessageBody"].encode(), usedforsecurity=False
                                ).hexdigest(),
                            }
                            for e in entries
                        ],
                        "Failed": [],
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-amz-json-1.0")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler
