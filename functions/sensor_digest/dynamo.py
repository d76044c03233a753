"""The DynamoDB boundary: client construction and the translation of its errors.

``ClientError`` and botocore's transport errors become ``TransientFault`` here and nowhere else,
so the counting and summary logic only ever sees the project's own errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from sensor_digest.errors import TransientFault

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

T = TypeVar("T")

CONDITIONAL_CHECK_FAILED = "ConditionalCheckFailed"
TRANSACTION_CANCELED = "TransactionCanceledException"

# Error codes of DynamoDB's API that a retry can cure (besides the transport errors of botocore).
RETRYABLE_ERROR_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "LimitExceededException",
        "InternalServerError",
        "ServiceUnavailable",
        "TransactionInProgressException",
        "TransactionConflictException",
    }
)
# Cancellation reason codes of TransactWriteItems that a retry can cure.
RETRYABLE_CANCELLATION_CODES = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}
)


def make_client(max_pool_connections: int = 16) -> DynamoDBClient:
    """A DynamoDB client that honours ``AWS_ENDPOINT_URL(_DYNAMODB)`` (botocore reads them itself).

    Retries use botocore's standard mode; what is still failing after them becomes a partial
    batch failure, and SQS or the stream retries it later.
    """
    config = Config(
        max_pool_connections=max_pool_connections,
        retries={"mode": "standard", "max_attempts": 3},
        connect_timeout=3,
        read_timeout=10,
    )
    client: DynamoDBClient = boto3.client("dynamodb", config=config)
    return client


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "Unknown"))


def cancellation_codes(exc: ClientError) -> list[str]:
    """The per-action reason codes of a cancelled ``TransactWriteItems``, in action order."""
    reasons: list[dict[str, Any]] = exc.response.get("CancellationReasons", [])  # type: ignore[assignment]
    return [str(reason.get("Code") or "None") for reason in reasons]


def fault_from(exc: ClientError | BotoCoreError, action: str) -> TransientFault:
    """A write that failed and must be retried later: name the action and DynamoDB's code."""
    if isinstance(exc, ClientError):
        code = error_code(exc)
        kind = "retryable" if code in RETRYABLE_ERROR_CODES else "unexpected"
        return TransientFault(f"{action} failed ({kind}): {code}")
    return TransientFault(f"{action} failed (transport): {type(exc).__name__}")


def call(action: str, fn: Callable[[], T], *, tolerate: str | None = None) -> T | None:
    """Run one DynamoDB call; ``None`` when it failed with the tolerated error code.

    Every other failure is raised as ``TransientFault`` (``raise ... from exc``).
    """
    try:
        return fn()
    except ClientError as exc:
        if tolerate is not None and error_code(exc) == tolerate:
            return None
        raise fault_from(exc, action) from exc
    except BotoCoreError as exc:
        raise fault_from(exc, action) from exc
