"""A stand-in for DynamoDB Local on loopback that accepts connections and answers ``ListTables``
late, or never: how a JVM still starting (or a busy engine) looks to the start-up checks."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class LateEngine(http.server.BaseHTTPRequestHandler):
    """Answers ``ListTables`` only after ``late`` requests, each of those held ``hold`` seconds."""

    late = 0
    hold = 0.0
    seen = 0

    def do_POST(self) -> None:
        type(self).seen += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if type(self).seen <= type(self).late:
            time.sleep(type(self).hold)  # accepted, read, silent: a JVM still starting, or a busy engine
            return
        body = json.dumps({"TableNames": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve_late_engine() -> Iterator[tuple[str, type[LateEngine]]]:
    """The stand-in's endpoint and its handler class (set ``late`` and ``hold`` on it)."""
    handler = type("Handler", (LateEngine,), {"late": 0, "hold": 0.0, "seen": 0})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
