"""The read API's page in a real browser: headless Chromium (Debian's ``chromium``) loads a page and
dumps the DOM its scripts drew (``render``), read back as a list of elements (``Dom``: ``assert_drawn``
when the page must have drawn); or gives what a script finds on the page as laid out (``evaluate``: where
labels are drawn, and how wide). ``served`` puts the read API's service behind the local server. Without
``chromium`` a test that needs it fails and says how to install it (CI installs it: .ci/run)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from sensor_digest_tools.lambda_runtime.invoke import lambda_handler
from sensor_digest_tools.local.api_server import LocalApi

INSTALL = "apt-get update && apt-get install -y chromium"
BROWSER_SECONDS = 180  # a bound on a slow shared machine, not a timing assertion


class Dom(HTMLParser):
    """The rendered DOM as a list of elements: tag, attributes, and the text directly inside."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[dict[str, Any]] = []
        self._open: list[dict[str, Any]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in ("meta", "link", "input", "br", "img"):
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop()["tag"] != tag:
            pass

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1]["text"] += data

    def find(self, tag: str, **attrs: str) -> list[dict[str, Any]]:
        return [e for e in self.elements if e["tag"] == tag and all(e["attrs"].get(k) == v for k, v in attrs.items())]


def assert_drawn(dom: Dom) -> None:
    """The page's scripts drew it (``data-state`` ready on its body); else its status line says why."""
    assert dom.find("body")[0]["attrs"].get("data-state") == "ready", dom.find("p", id="status")


@contextlib.contextmanager
def served(service: Any) -> Iterator[LocalApi]:
    """The read API's ``service`` behind the local server the page is loaded from, stopped after."""
    local = LocalApi(lambda_handler(service))
    local.start()
    try:
        yield local
    finally:
        local.stop()


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail(f"this test needs Debian's chromium: {INSTALL}", pytrace=False)
    return found


def render(url: str, profile: Path) -> str:
    """The DOM after the page's scripts ran, as headless Chromium dumps it."""
    done = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",  # root in CI's container
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=30000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=BROWSER_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class _Pipe:
    """Chromium's DevTools protocol over ``--remote-debugging-pipe``: JSON messages, each ended by a
    NUL byte, written to its file descriptor 3 and read from its 4 (no socket, no client library)."""

    def __init__(self, profile: Path, width: int, height: int) -> None:
        ours_read, theirs_write = os.pipe()
        theirs_read, ours_write = os.pipe()

        def as_fds_3_and_4() -> None:  # in the child: through high numbers, whatever the pipes' own
            os.dup2(theirs_read, 100)
            os.dup2(theirs_write, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.process = subprocess.Popen(
            [
                chromium(),
                "--headless",
                "--no-sandbox",  # root in CI's container
                "--disable-gpu",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=as_fds_3_and_4,  # noqa: PLW1509 (no threads start in the child before exec)
        )
        os.close(theirs_read)
        os.close(theirs_write)
        self._read, self._write = ours_read, ours_write
        self._buffer = b""
        self._last_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._last_id += 1
        message: dict[str, Any] = {"id": self._last_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._next()
            if answer.get("id") == self._last_id:
                assert "error" not in answer, answer
                return answer["result"]
            self.events.append(answer)

    def wait_for(self, method: str) -> None:
        while not any(event.get("method") == method for event in self.events):
            self.events.append(self._next())

    def _next(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._read], [], [], BROWSER_SECONDS)
            assert ready, f"chromium said nothing in {BROWSER_SECONDS} s"
            chunk = os.read(self._read, 1 << 16)
            assert chunk, "chromium closed its pipe"
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def close(self) -> None:
        with contextlib.suppress(OSError, AssertionError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._read)
        os.close(self._write)


DRAWN = "document.body.dataset.state !== 'loading'"


def evaluate(url: str, profile: Path, script: str, *, width: int = 1280, height: int = 900) -> Any:
    """What ``script`` (a JavaScript expression, awaited) gives on the page at ``url``, laid out in a
    window ``width`` pixels wide, once its scripts drew it (the body's ``data-state`` no longer
    ``loading``): as JSON. Unlike ``render``, what the browser laid out can be read: where a label is
    drawn, and how wide (``getBoundingClientRect``)."""
    browser = _Pipe(profile, width, height)
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.call("Page.enable", session=session)
        browser.call("Page.navigate", {"url": url}, session=session)
        browser.wait_for("Page.loadEventFired")
        waited = (
            f"new Promise((done) => {{ const look = () => ({DRAWN}) ? done(true) : setTimeout(look, 50); look(); }})"
        )
        browser.call("Runtime.evaluate", {"expression": waited, "awaitPromise": True}, session=session)
        result = browser.call(
            "Runtime.evaluate",
            {"expression": f"(async () => ({script}))()", "awaitPromise": True, "returnByValue": True},
            session=session,
        )
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")
    finally:
        browser.close()
