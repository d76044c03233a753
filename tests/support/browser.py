"""The read API's page in a real browser: headless Chromium (Debian's ``chromium``) loads a page and
dumps the DOM its scripts drew (``render``), read back as a list of elements (``Dom``). Without
``chromium`` a test that needs it fails and says how to install it (CI installs it: .ci/run)."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

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
