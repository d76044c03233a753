"""The DynamoDB boundary: client construction, the calls, and the translation of their errors.

``ClientError`` and botocore's transport errors become a ``StoreFault`` of its kind here
(``fault_from``) and nowhere else: ``RefusedWrite`` for a request DynamoDB refused as invalid
(permanent), ``RetryableFault`` for one a retry a moment later may cure (throttling, a server or
transport error), ``TransientFault`` for any other code; ``Contention`` for a cancelled transaction
that may pass next time (``cancellation_fault``). Callers choose by these types what to retry. (The
import's S3 calls have their boundary in ``objects.py``.)

What the step logic (counting, summary, registry) needs to decide is returned, not raised:

- ``transact``: ``None`` once committed, else the per-action cancellation codes;
- ``transact_refusals``: the same, each code with the item its action found when its condition
  failed (for actions that ask for ``ReturnValuesOnConditionCheckFailure=ALL_OLD``);
- ``conditional_write``: ``None`` once written, else the item as it was when its condition failed;
- ``single_write``: the same as a ``Written`` answer that also carries what the write returned;
- ``call``: any other call (reads), its response.

DynamoDB and DynamoDB Local differ in one answer: a write inside a transaction that DynamoDB
refuses as invalid (an ``ADD`` to an attribute of another type, an item past 400 KB) cancels the
transaction with the reason ``ValidationError`` on AWS, where DynamoDB Local raises a plain
``ValidationException``. Both become ``RefusedWrite`` here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from sensor_digest.backoff import Backoff
from sensor_digest.errors import Contention, RefusedWrite, RetryableFault, StoreFault, TransientFault

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

T = TypeVar("T")


class ClientSource(Protocol):
    """Where clients come from: a ``boto3.Session`` on Lambda; locally, one whose clients go to
    the local engines and carry the request meter, the fault layer or the in-process SQS."""

    def client(self, service_name: str, **kwargs: Any) -> Any: ...


CONDITIONAL_CHECK_FAILED = "ConditionalCheckFailed"
"""A cancellation reason code: this action's condition failed."""
CONDITIONAL_CHECK_FAILED_ERROR = "ConditionalCheckFailedException"
"""The error code of a single-item write whose condition failed."""
TRANSACTION_CANCELED = "TransactionCanceledException"
TRANSACTION_CONFLICT_ERROR = "TransactionConflictException"  # a single-item write to an item a transaction holds
VALIDATION_ERROR = "ValidationException"

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
VALIDATION_CANCELLATION = "ValidationError"
"""DynamoDB's reason code for an action it refused as invalid inside a transaction."""


def make_client(session: ClientSource, max_pool_connections: int = 16) -> DynamoDBClient:
    """A DynamoDB client of ``session`` (a plain ``boto3.Session`` honours ``AWS_ENDPOINT_URL(_DYNAMODB)``).

    Retries use botocore's standard mode; what is still failing after them becomes a partial
    batch failure, and SQS or the stream retries it later.
    """
    config = Config(
        max_pool_connections=max_pool_connections,
        retries={"mode": "standard", "max_attempts": 3},
        connect_timeout=3,
        read_timeout=10,
    )
    client: DynamoDBClient = session.client("dynamodb", config=config)
    return client


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "Unknown"))


def cancellation_codes(exc: ClientError) -> list[str]:
    """The per-action reason codes of a cancelled ``TransactWriteItems``, in action order."""
    reasons: list[dict[str, Any]] = exc.response.get("CancellationReasons", [])  # type: ignore[assignment]
    return [str(reason.get("Code") or "None") for reason in reasons]


def fault_from(exc: ClientError | BotoCoreError, action: str) -> StoreFault:
    """A call that failed, as the fault of its kind, naming the action and DynamoDB's code:
    ``RefusedWrite`` for a request DynamoDB refused as invalid, with its message (retrying it cannot
    help); ``RetryableFault`` for a code of ``RETRYABLE_ERROR_CODES`` or a transport error;
    ``TransientFault`` for any other code."""
    if isinstance(exc, ClientError):
        code = error_code(exc)
        if code == VALIDATION_ERROR:
            message = str(exc.response.get("Error", {}).get("Message", ""))
            return RefusedWrite(f"{action} refused by DynamoDB ({code}): {message}")
        if code in RETRYABLE_ERROR_CODES:
            return RetryableFault(f"{action} failed (retryable): {code}")
        return TransientFault(f"{action} failed (unexpected): {code}")
    return RetryableFault(f"{action} failed (transport): {type(exc).__name__}")


def call(action: str, fn: Callable[[], T]) -> T:
    """Run one DynamoDB call; every failure is raised as ``fault_from``'s fault (``raise ... from exc``)."""
    try:
        return fn()
    except ClientError as exc:
        raise fault_from(exc, action) from exc
    except BotoCoreError as exc:
        raise fault_from(exc, action) from exc


def conditional_write(
    action: str, fn: Callable[[], object], *, not_written: tuple[str, ...] = (CONDITIONAL_CHECK_FAILED_ERROR,)
) -> dict[str, Any] | None:
    """Run one conditional ``PutItem`` / ``UpdateItem``: ``None`` once written; when its condition
    failed (or it failed with another error code of ``not_written``), the item as it was (what
    ``ReturnValuesOnConditionCheckFailure=ALL_OLD`` returned, ``{}`` when the call did not ask for it
    or there was no item)."""
    try:
        fn()
    except ClientError as exc:
        if error_code(exc) in not_written:
            item: dict[str, Any] = dict(exc.response.get("Item") or {})  # type: ignore[call-overload]
            return item
        raise fault_from(exc, action) from exc
    except BotoCoreError as exc:
        raise fault_from(exc, action) from exc
    return None


@dataclass(frozen=True)
class Written:
    """What a conditional single-item write came to: ``written``, with the attributes it asked
    ``ReturnValues`` for; or refused by its condition, with the item as it was
    (``ReturnValuesOnConditionCheckFailure=ALL_OLD``; ``{}`` when there was none)."""

    written: bool
    item: dict[str, Any] = field(default_factory=dict)


def single_write(client: DynamoDBClient, operation: str, params: dict[str, Any]) -> Written:
    """One conditional ``PutItem`` or ``UpdateItem``. A write refused because a transaction holds
    its item (``TransactionConflictException``) is ``Contention``; one refused as invalid,
    ``RefusedWrite``; any other failure, ``fault_from``'s."""
    method = client.put_item if operation == "PutItem" else client.update_item
    try:
        response: dict[str, Any] = dict(method(**params))  # type: ignore[arg-type]
    except ClientError as exc:
        code = error_code(exc)
        if code == CONDITIONAL_CHECK_FAILED_ERROR:
            return Written(False, dict(exc.response.get("Item") or {}))  # type: ignore[call-overload]
        if code == TRANSACTION_CONFLICT_ERROR:
            raise Contention(f"{operation} refused: a transaction holds the item") from exc
        raise fault_from(exc, operation) from exc
    except BotoCoreError as exc:
        raise fault_from(exc, operation) from exc
    return Written(True, dict(response.get("Attributes") or {}))


@dataclass(frozen=True)
class Refusal:
    """One action's part in a cancelled ``TransactWriteItems``: its reason code (``"None"`` when it
    was not the cause) and, when its condition failed and it asked for
    ``ReturnValuesOnConditionCheckFailure=ALL_OLD``, the item as it was (``{}`` otherwise)."""

    code: str
    item: dict[str, Any] = field(default_factory=dict)
    message: str = ""


def transact_refusals(client: DynamoDBClient, actions: list[dict[str, Any]]) -> list[Refusal] | None:
    """Run ``TransactWriteItems``: ``None`` once committed; when DynamoDB cancelled it, one
    ``Refusal`` per action, in action order."""
    try:
        client.transact_write_items(TransactItems=actions)  # type: ignore[arg-type]
    except ClientError as exc:
        if error_code(exc) != TRANSACTION_CANCELED:
            raise fault_from(exc, "TransactWriteItems") from exc
        reasons: list[dict[str, Any]] = exc.response.get("CancellationReasons", [])  # type: ignore[assignment]
        return [
            Refusal(str(r.get("Code") or "None"), dict(r.get("Item") or {}), str(r.get("Message") or ""))
            for r in reasons
        ]
    except BotoCoreError as exc:
        raise fault_from(exc, "TransactWriteItems") from exc
    return None


def transact(client: DynamoDBClient, actions: list[dict[str, Any]]) -> list[str] | None:
    """Run ``TransactWriteItems``: ``None`` once committed; when DynamoDB cancelled it, the reason
    code of each action, in action order (``"None"`` for an action that was not the cause)."""
    refusals = transact_refusals(client, actions)
    return None if refusals is None else [refusal.code for refusal in refusals]


UNPROCESSED_KEYS = Backoff(attempts=8, base_seconds=0.01, least=1.0)
"""``batch_get``'s retries of unprocessed keys: 10 ms, doubling, no jitter."""


def batch_get(
    client: DynamoDBClient,
    table: str,
    keys: list[dict[str, Any]],
    *,
    consistent: bool,
    projection: Sequence[str] = (),
    backoff: Backoff = UNPROCESSED_KEYS,
    expired: Callable[[], bool] | None = None,
) -> list[dict[str, Any]]:
    """The items of these keys that exist: ``BatchGetItem`` by 100 keys, unprocessed keys retried
    with ``backoff``; ``TransientFault`` if some are still unprocessed after its attempts, or when
    ``expired`` says the invocation's time is up before the next request (no read runs on past it)."""
    found: list[dict[str, Any]] = []
    for start in range(0, len(keys), 100):
        if expired is not None and expired():
            raise TransientFault("no time left in the invocation to read on")
        pending = keys[start : start + 100]
        for attempt in range(backoff.attempts):
            request: dict[str, Any] = {"Keys": pending, "ConsistentRead": consistent}
            if projection:
                names = {f"#k{i}": name for i, name in enumerate(projection)}
                request.update(ProjectionExpression=", ".join(names), ExpressionAttributeNames=names)
            response: dict[str, Any] = dict(
                call("BatchGetItem", partial(client.batch_get_item, RequestItems={table: request}))  # type: ignore[dict-item]
            )
            found.extend(response.get("Responses", {}).get(table, []))
            pending = response.get("UnprocessedKeys", {}).get(table, {}).get("Keys", [])
            if not pending:
                break
            backoff.wait(attempt)
        if pending:
            raise TransientFault("BatchGetItem left keys unprocessed")
    return found


def cancellation_fault(codes: list[str], messages: Sequence[str] = ()) -> StoreFault | None:
    """The fault a cancellation stands for when it is not (only) failed conditions, else ``None``:
    ``RefusedWrite`` when DynamoDB refused an action as invalid (``ValidationError``, with its
    message when ``messages`` holds the reasons' messages), ``Contention`` when a retry can cure it."""
    if VALIDATION_CANCELLATION in codes:
        said = [m for c, m in zip(codes, messages, strict=False) if c == VALIDATION_CANCELLATION and m]
        return RefusedWrite(
            "TransactWriteItems refused by DynamoDB (ValidationError)" + (f": {said[0]}" if said else "")
        )
    retryable = sorted({c for c in codes if c in RETRYABLE_CANCELLATION_CODES})
    if retryable:
        return Contention(f"transaction cancelled (retryable): {', '.join(retryable)}")
    unexpected = sorted({c for c in codes if c not in ("None", CONDITIONAL_CHECK_FAILED)})
    if unexpected:
        return TransientFault(f"transaction cancelled (unexpected): {', '.join(unexpected)}")
    return None
