"""Lambda entry points of the history import's state machine (docs/import.md, "On AWS"): ``prepare``
(the object checked, its identity and record), ``handler`` (one batch of the Distributed Map: the
Map's batch event in, its figures out) and ``finish`` (the batches added up, the error report, the
record). The package is ``import_``: ``import`` is a Python keyword."""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.config import ImportSettings
from sensor_digest.entry import LambdaEntry
from sensor_digest.history.service import BatchService, build_service
from sensor_digest.history.steps import FinishService, PrepareService, build_finish, build_prepare

__all__ = ["build_service", "finish", "handler", "prepare"]

batches: LambdaEntry[BatchService] = LambdaEntry(
    names.IMPORT_SERVICE, lambda session: build_service(ImportSettings.from_env(), session), "import batch counted"
)
preparing: LambdaEntry[PrepareService] = LambdaEntry(
    names.IMPORT_SERVICE, lambda session: build_prepare(ImportSettings.from_env(), session), "import prepared"
)
finishing: LambdaEntry[FinishService] = LambdaEntry(
    names.IMPORT_SERVICE, lambda session: build_finish(ImportSettings.from_env(), session), "import finished"
)
handler = batches.handler
prepare = preparing.handler
finish = finishing.handler
