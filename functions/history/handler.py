"""Lambda entry points of the history import's state machine (docs/import.md, "On AWS"): ``prepare`` (the
object read once: its identity, its record, its chunks), ``read`` (a chunk of the read map: its rows into
partitions), ``count`` (a partition of the count map: its rows counted) and ``finish`` (the figures added
up and checked, the error report, the record)."""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.config import ImportSettings
from sensor_digest.entry import LambdaEntry
from sensor_digest.history.service import CountService, ReadService, build_count, build_read
from sensor_digest.history.steps import FinishService, PrepareService, build_finish, build_prepare

__all__ = ["count", "finish", "prepare", "read"]

preparing: LambdaEntry[PrepareService] = LambdaEntry(
    names.IMPORT_SERVICE, lambda session: build_prepare(ImportSettings.from_env(), session), "import prepared"
)
reading: LambdaEntry[ReadService] = LambdaEntry(
    names.IMPORT_SERVICE, lambda session: build_read(ImportSettings.from_env(), session), "import chunk read"
)
counting: LambdaEntry[CountService] = LambdaEntry(
    names.IMPORT_SERVICE, lambda session: build_count(ImportSettings.from_env(), session), "import partition counted"
)
finishing: LambdaEntry[FinishService] = LambdaEntry(
    names.IMPORT_SERVICE, lambda session: build_finish(ImportSettings.from_env(), session), "import finished"
)
prepare = preparing.handler
read = reading.handler
count = counting.handler
finish = finishing.handler
