"""Lambda entry points of the history import's state machine (docs/import.md, "On AWS"): ``prepare`` (the
object read once: its identity, its record, its chunks), ``read`` (a chunk of the read map: its rows into
partitions), ``count`` (a partition of the count map: its rows counted) and ``finish`` (the figures added
up and checked, the error report, the record)."""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.config import ImportSettings
from sensor_digest.entry import from_environment
from sensor_digest.history.service import build_count, build_read
from sensor_digest.history.steps import build_finish, build_prepare

__all__ = ["count", "finish", "prepare", "read"]

preparing = from_environment(names.IMPORT_SERVICE, build_prepare, ImportSettings.from_env, "import prepared")
reading = from_environment(names.IMPORT_SERVICE, build_read, ImportSettings.from_env, "import chunk read")
counting = from_environment(names.IMPORT_SERVICE, build_count, ImportSettings.from_env, "import partition counted")
finishing = from_environment(names.IMPORT_SERVICE, build_finish, ImportSettings.from_env, "import finished")
prepare = preparing.handler
read = reading.handler
count = counting.handler
finish = finishing.handler
