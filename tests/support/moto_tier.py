"""The quick tier's moto account: a session, its DynamoDB and SQS clients, the tables and the DLQ."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class MotoAws:
    session: Any
    ddb: Any
    sqs: Any
    table: str
    ledger: str
    dlq_url: str
