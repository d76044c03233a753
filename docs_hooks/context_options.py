"""The context options table of ``docs/configuration.md``, written into the markdown itself from the
deployment model, so that a reader of the repository sees it as the site does: the ``Tunables``
fields a context key sets (``sensor_digest_cdk.tunables``: each one's default, rule and meaning;
``context_key``; ``stackName`` from ``context.py``), one row per meaning (fields of equal meaning share
a row, each key's default and rule on a line of its own). A meaning's first line is its cell; the lines
after it are its details, a list below the table. ``{s.<figure>}`` in a meaning is the app's default
``PipelineShape``'s figure.

``python -m docs_hooks.context_options --write`` (``make generated``) writes the table between the
page's two markers; ``tests/repository/test_generated.py`` fails when the page's table differs from what
that writes (so CI keeps it true), and so does the site's build (``on_page_markdown``, the MkDocs
hook, checks the page and renders nothing).
"""

from __future__ import annotations

import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
MARKER = "<!-- context-options -->"
END_MARKER = "<!-- /context-options: written by `python -m docs_hooks.context_options --write` -->"


def _default(value: object) -> str:
    """A default as the context key takes it: ``true``/``false`` as written in context, a number with
    its thousands marked, text in code, and an empty text or list as "none" (never Python's repr)."""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, tuple | list):
        return ", ".join(f"`{item}`" for item in value) if value else "none"
    return f"`{value}`" if value else "none"


def _rows() -> dict[str, list[tuple[str, object, Any]]]:
    """Each meaning (formatted) and its keys: a key's name, default and rule, in the model's order."""
    from sensor_digest.dead_letter_format import DEAD_LETTER_OVERHEAD_BYTES  # noqa: PLC0415
    from sensor_digest_cdk.context import CONTEXT_FIELDS, STACK_NAME_MEANING, STACK_NAME_RULE, AppSettings  # noqa: PLC0415
    from sensor_digest_cdk.rules import context_key  # noqa: PLC0415
    from sensor_digest_cdk.shape import PipelineShape  # noqa: PLC0415
    from sensor_digest_cdk.tunables import MEANING, RULE  # noqa: PLC0415

    app = AppSettings()
    by_field = {f.name: f for f in fields(app.shape)}
    rows: dict[str, list[tuple[str, object, Any]]] = {
        STACK_NAME_MEANING: [("stackName", app.stack_name, STACK_NAME_RULE)]
    }
    for name in CONTEXT_FIELDS:
        f = by_field[name]
        rows.setdefault(f.metadata[MEANING], []).append((context_key(name), getattr(app.shape, name), f.metadata[RULE]))
    values: dict[str, Any] = {
        "s": app.shape,
        "marker_days": app.shape.marker_ttl_seconds // 86_400,
        "fifo_visibility": PipelineShape(queue_type="fifo").visibility_timeout_seconds,
        "overhead": DEAD_LETTER_OVERHEAD_BYTES,
    }
    return {meaning.format(**values): keys for meaning, keys in rows.items()}


def render_options_table() -> str:
    """The table: a row per meaning, its keys, defaults and what each allows, and the meaning's one line."""
    lines = ["| key | default | allowed | meaning |", "|---|---|---|---|"]
    for meaning, keys in _rows().items():
        one = len(keys) == 1
        allowed = keys[0][2].allowed if one else "<br>".join(f"`{k}`: {rule.allowed}" for k, _, rule in keys)
        cells = (
            ", ".join(f"`{k}`" for k, _, _ in keys),
            _default(keys[0][1]) if one else "<br>".join(f"`{k}`: {_default(default)}" for k, default, _ in keys),
            allowed,
            meaning.split("\n", 1)[0],
        )
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def render_details() -> str:
    """The details of each row whose meaning has more than its one line, as a list under its keys."""
    return "\n".join(
        "- " + ", ".join(f"`{k}`" for k, _, _ in keys) + ": " + " ".join(meaning.split("\n")[1:])
        for meaning, keys in _rows().items()
        if "\n" in meaning
    )


def with_table(page: str) -> str:
    """``page`` with the table between its markers written anew; ``ValueError`` without the markers."""
    start, end = page.find(MARKER), page.find(END_MARKER)
    if start < 0 or end < start:
        raise ValueError(f"the page holds no {MARKER} ... {END_MARKER} for the options table")
    written = render_options_table() + "\n\n" + render_details()
    return page[: start + len(MARKER)] + "\n" + written + "\n" + page[end:]


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs' hook: the page holding the table must hold it as the model writes it (the build
    fails otherwise, naming the command that writes it); every page is served as written."""
    if MARKER in markdown and with_table(markdown) != markdown:
        raise ValueError(
            "docs/configuration.md: the options table is stale: run python -m docs_hooks.context_options --write"
        )
    return markdown


def main(argv: list[str]) -> int:
    from sensor_digest_cdk.props_writer import generated_main  # noqa: PLC0415

    def text() -> str:
        return render_options_table() + "\n\n" + render_details() + "\n"

    def write() -> None:
        PAGE.write_text(with_table(PAGE.read_text(encoding="utf-8")), encoding="utf-8")

    return generated_main(argv, "docs_hooks.context_options", text, write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
