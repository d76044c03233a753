"""Ingest: a batch of SQS messages in, a partial batch response out.

``service.py`` (read -> date -> count -> report), ``records.py`` (what ingest reads of an SQS
record), ``ordering.py`` (what a FIFO queue changes), ``dead_letters.py`` (where rejections go),
``report.py`` (each message's fate), ``wiring.py`` (``build_service``).
"""

from sensor_digest.ingest.dead_letters import DeadLetterSink, FifoDeadLetterSink, Rejection
from sensor_digest.ingest.ordering import FifoGroupOrdering, StandardOrdering, failures_with_group_tails
from sensor_digest.ingest.records import InboundMessage
from sensor_digest.ingest.report import BatchReport
from sensor_digest.ingest.service import IngestService
from sensor_digest.ingest.wiring import build_service
from sensor_digest.logs import LOG

__all__ = [
    "LOG",
    "BatchReport",
    "DeadLetterSink",
    "FifoDeadLetterSink",
    "FifoGroupOrdering",
    "InboundMessage",
    "IngestService",
    "Rejection",
    "StandardOrdering",
    "build_service",
    "failures_with_group_tails",
]
