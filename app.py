#!/usr/bin/env python3
"""CDK entry point: builds the one SensorDigest stack from context and checks it with cdk-nag.

Bad context (a value out of its range, a misspelt key) is refused before any construct exists:
one line per problem on stderr, no traceback, exit code 1 (``AppSettings.from_context``). The stack
is a thin shell over the construct ``SensorDigestPipeline`` (``infra/sensor_digest_cdk/pipeline.py``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT / "infra"), str(ROOT / "functions")]  # the constructs and the shared core (the stream filter)

import aws_cdk as cdk  # noqa: E402

from sensor_digest_cdk import nag  # noqa: E402
from sensor_digest_cdk.context import AppSettings  # noqa: E402
from sensor_digest_cdk.shape import ShapeError  # noqa: E402
from sensor_digest_cdk.stack import SensorDigestStack  # noqa: E402

# Where the CDK CLI hands the app its context (cdk.json, cdk.context.json and every -c): JSON in
# the environment, or a file named there when the context is too large for it (as cdk.App reads it).
CONTEXT_ENV = "CDK_CONTEXT_JSON"
CONTEXT_OVERFLOW_ENV = "CONTEXT_OVERFLOW_LOCATION_ENV"


def cli_context() -> dict[str, object]:
    """The context the CDK CLI hands the app ({} when app.py runs on its own)."""
    context: dict[str, object] = {}
    if text := os.environ.get(CONTEXT_ENV):
        context.update(json.loads(text))
    if path := os.environ.get(CONTEXT_OVERFLOW_ENV):
        context.update(json.loads(Path(path).read_text(encoding="utf-8")))
    return context


def build_app(context: dict[str, object] | None = None) -> tuple[cdk.App, SensorDigestStack]:
    """The app and its stack; ``ShapeError`` (every problem of the context) before anything is built."""
    app = cdk.App(context=context or {})
    keys = [*(context or {}), *cli_context()]
    settings = AppSettings.from_context(app.node.try_get_context, keys)
    stack = SensorDigestStack(app, settings.stack_name, settings=settings, stack_name=settings.stack_name)
    nag.check(app)  # cdk-nag's AWS Solutions checks at synth (a validation plugin on cdk-nag 3)
    cdk.Tags.of(app).add("project", "sensor-digest")
    return app, stack


def main() -> int:
    try:
        app, _ = build_app()
    except ShapeError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 1
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
