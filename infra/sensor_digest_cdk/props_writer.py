"""Writes ``props.py``, the construct's ``PipelineProps``, from the tunables (one key per field of
``Tunables``, with its type as declared there): ``python -m sensor_digest_cdk.props_writer --write``
(``make generated``). Without ``--write`` it prints the file. ``tests/repository/test_generated.py`` fails
when the committed file differs, so a tunable added is a prop of the construct's type as well."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

from sensor_digest_cdk import tunables
from sensor_digest_cdk.tunables import Tunables

PROPS = Path(__file__).with_name("props.py")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

HEAD = '''"""The construct's keyword props as a type: ``PipelineProps``, one key per tunable, with its type.

Written from ``tunables.py`` by ``python -m sensor_digest_cdk.props_writer --write`` (``make generated``):
not edited by hand; ``tests/repository/test_generated.py`` fails when it differs from what that writes.
"""

from __future__ import annotations

from typing import TypedDict
'''


def render() -> str:
    """The text of ``props.py``."""
    annotations = {f.name: str(f.type) for f in fields(Tunables)}
    used = sorted({n for a in annotations.values() for n in NAME.findall(a) if hasattr(tunables, n)}, key=str.lower)
    lines = [HEAD]
    if used:
        lines += ["from sensor_digest_cdk.tunables import (", *(f"    {n}," for n in used), ")", ""]
    lines += ["__all__ = [", *(f'    "{n}",' for n in sorted(["PipelineProps", *used])), "]", "", ""]
    lines += [
        "class PipelineProps(TypedDict, total=False):",
        '    """The keyword props of ``SensorDigestPipeline``: every field of ``PipelineShape``."""',
        "",
        *(f"    {name}: {annotation}" for name, annotation in annotations.items()),
    ]
    return "\n".join(lines) + "\n"


def generated_main(argv: list[str], module: str, text: Callable[[], str], write: Callable[[], object]) -> int:
    """The command line of a file written from the tunables (``make generated``), ``python -m <module>``:
    ``--write`` writes it (``write``), no argument prints what it would hold (``text``), anything else is
    refused with the usage (exit code 2). This module's and ``docs_hooks.context_options``'s."""
    if argv == ["--write"]:
        write()
    elif not argv:
        sys.stdout.write(text())
    else:
        sys.stderr.write(f"usage: python -m {module} [--write]\n")
        return 2
    return 0


def main(argv: list[str]) -> int:
    return generated_main(
        argv, "sensor_digest_cdk.props_writer", render, lambda: PROPS.write_text(render(), encoding="utf-8")
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
