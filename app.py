#!/usr/bin/env python3
"""CDK entry point: builds the one SensorDigest stack from context and checks it with cdk-nag."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "functions")]  # the constructs and the shared core (the stream filter)

import aws_cdk as cdk  # noqa: E402
from cdk_nag import AwsSolutionsChecks  # noqa: E402

from sensor_digest_cdk.shape import Settings  # noqa: E402
from sensor_digest_cdk.stack import SensorDigestStack  # noqa: E402


def build_app(context: dict[str, object] | None = None) -> tuple[cdk.App, SensorDigestStack]:
    app = cdk.App(context=context or {})
    settings = Settings.from_context(app.node.try_get_context)
    stack = SensorDigestStack(app, settings.stack_name, settings=settings, stack_name=settings.stack_name)
    cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
    cdk.Tags.of(app).add("project", "sensor-digest")
    return app, stack


if __name__ == "__main__":
    build_app()[0].synth()
