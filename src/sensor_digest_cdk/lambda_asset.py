"""The Lambda asset: ``functions/`` plus the pure-Python ``tzdata`` package, built by copying files.

AL2023-based Lambda runtimes do not promise system zone data, and ``zoneinfo`` falls back to
the ``tzdata`` package; it is copied from the environment ``make setup`` installed (pinned in
requirements.txt), so synth needs no Docker and no network. boto3 comes with the runtime and
Powertools from its published layer.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import tzdata

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = ROOT / "functions"
BUILD = ROOT / ".cache" / "lambda-asset"
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")


def build_function_asset(destination: Path = BUILD) -> Path:
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(FUNCTIONS, destination, ignore=IGNORE)
    shutil.copytree(Path(tzdata.__file__).parent, destination / "tzdata", ignore=IGNORE)
    return destination
