"""SensorDigest as CDK constructs: ``SensorDigestPipeline`` (the whole pipeline, for any stack) and
``SensorDigestStack`` (app.py's stack over it).

``pip install "sensor-digest[cdk]"`` brings the CDK; ``from sensor_digest_cdk import
SensorDigestPipeline``. The package's shape (``sensor_digest_cdk.shape``: ``PipelineShape``,
``ShapeError``) needs no CDK: the command line and the benchmark read it without the extra, so the
constructs are imported on first use only.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from sensor_digest_cdk.props import PipelineProps
from sensor_digest_cdk.shape import PipelineShape, ShapeError

if TYPE_CHECKING:
    from sensor_digest_cdk.pipeline import SensorDigestPipeline
    from sensor_digest_cdk.stack import SensorDigestStack

__all__ = ["PipelineProps", "PipelineShape", "SensorDigestPipeline", "SensorDigestStack", "ShapeError"]

_CONSTRUCTS = {"SensorDigestPipeline": "sensor_digest_cdk.pipeline", "SensorDigestStack": "sensor_digest_cdk.stack"}


def __getattr__(name: str) -> Any:
    if name in _CONSTRUCTS:
        return getattr(import_module(_CONSTRUCTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
