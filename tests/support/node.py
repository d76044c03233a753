"""The checkout's Node 22 (``make setup`` puts it under ``.cache/node``) first on ``PATH``, for jsii and
the CDK CLI: what synthesizes in the tests calls ``on_path()`` before it imports ``aws_cdk``, since
jsii starts Node at that import."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / ".cache" / "node" / "node_modules" / ".bin"


def on_path() -> None:
    """Node 22 first on this process's ``PATH`` (where ``make setup`` installed it), once."""
    if NODE_BIN.is_dir() and str(NODE_BIN) not in os.environ["PATH"].split(os.pathsep):
        os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}"
    os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")
