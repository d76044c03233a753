"""The Lambda asset, built at synth from what is installed: no checkout needed beside the app.

The asset root holds what ``functions/`` holds in the checkout: the core package ``sensor_digest``
(installed with the wheel), the handler modules ``ingest/handler.py``, ``summary/handler.py`` and ``api/handler.py``
(the contract's entry points; the wheel ships them as package data of this package,
``sensor_digest_cdk/functions/``, so they never land in site-packages as top-level packages), and
the pure-Python ``tzdata`` package: AL2023-based Lambda runtimes do not promise system zone data, and
``zoneinfo`` falls back to ``tzdata`` (pinned in requirements.txt). Synth needs no Docker and no
network; boto3 comes with the runtime and Powertools from its published layer.

The asset is built once per process into a temporary folder (CDK copies it into the cloud
assembly, fingerprinted by content, so the folder's own path never reaches the template).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from importlib import resources
from pathlib import Path

import tzdata

import sensor_digest

HANDLER_PACKAGES = ("ingest", "summary", "api", "silence", "history", "announcer")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")
CORE = Path(sensor_digest.__file__).resolve().parent


def handler_root() -> Path:
    """Where ``ingest/``, ``summary/`` and ``api/`` are: this package's data in an installed wheel, else the
    checkout's ``functions/`` (beside the core package ``sensor_digest``)."""
    packaged = Path(str(resources.files(__package__ or "sensor_digest_cdk") / "functions"))
    if (packaged / "ingest" / "handler.py").is_file():
        return packaged
    return CORE.parent


def build_function_asset(destination: Path) -> Path:
    """The asset root at ``destination`` (replaced if it exists)."""
    if destination.exists():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    shutil.copytree(CORE, destination / "sensor_digest", ignore=IGNORE)
    for name in HANDLER_PACKAGES:
        shutil.copytree(handler_root() / name, destination / name, ignore=IGNORE)
    shutil.copytree(Path(tzdata.__file__).parent, destination / "tzdata", ignore=IGNORE)
    return destination


@functools.cache
def function_asset() -> Path:
    """The asset of this process, built on first use and removed when the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="sensor-digest-asset-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return build_function_asset(folder / "asset")
