"""The deployment shape is CDK-free: ``pip install`` without the ``cdk`` extra keeps the command
line, the local pipeline and the benchmark, which all read ``PipelineShape``. Pure Python, in a
process of its own where ``aws_cdk``, ``constructs`` and ``cdk_nag`` cannot be imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BLOCK_CDK = """
import sys
for name in ("aws_cdk", "constructs", "cdk_nag", "jsii"):
    sys.modules[name] = None  # an import of it raises ImportError
sys.path[:0] = ["functions", "infra", "src", "."]
import sensor_digest_cdk
from sensor_digest_cdk import PipelineShape, ShapeError
from sensor_digest_tools.local.pipeline import PipelineOptions
import bench.plan
import sensor_digest_tools.cli.app
shape = PipelineShape(queue_type="fifo")
print(PipelineOptions(shape=shape).event_batch_size, shape.visibility_timeout_seconds)
try:
    sensor_digest_cdk.SensorDigestPipeline
except ImportError:
    print("construct needs the cdk extra")
"""


def test_the_shape_the_local_pipeline_the_bench_and_the_command_line_load_without_the_cdk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_CDK], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["10 180", "construct needs the cdk extra"]
