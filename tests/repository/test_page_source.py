"""The page's scripts (local/page/*.js) put every answer of the read API into the DOM as text: no API
that parses a string as HTML or runs it as code appears in them. Engine: none (the scripts' text);
the browser tests show the same on a rendered page (tests/dynamodb_local/local/test_page_*_in_browser.py)."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).parents[2] / "src" / "sensor_digest_tools" / "local" / "page"
PARSES_MARKUP_OR_CODE = re.compile(
    r"\.(innerHTML|outerHTML|insertAdjacentHTML|createContextualFragment|setHTMLUnsafe)\b"
    r"|document\.(write|writeln)\b|\beval\(|new Function\(|DOMParser|\.srcdoc\b"
)


def test_the_pages_scripts_never_parse_a_string_as_markup_or_code() -> None:
    scripts = sorted(PAGE.glob("*.js"))
    assert {s.name for s in scripts} >= {"heatmap.js", "chart.js", "readings.js"}

    found = [
        f"{script.name}:{number}: {line.strip()}"
        for script in scripts
        for number, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1)
        if PARSES_MARKUP_OR_CODE.search(line)
    ]

    assert found == []
