"""The day items and their ledger items: every call the live counters make on them, in one place.

The counters (``counting/``) decide what to write, with the parameters ``day_writes.py`` builds;
``DayStore`` sends them and says what DynamoDB answered, as Powertools' persistence layer does for
idempotency records:

- ``write``: one action as one conditional single-item write, several as one ``TransactWriteItems``.
  Committed, it returns what the write returned; a failed condition raises ``Refused``, which carries,
  for each action, its reason code and the item as it was (``ALL_OLD``). Anything else raises by type
  (``store/dynamo.py``): ``Contention`` (a retry can cure it), ``RefusedWrite`` (invalid: it cannot),
  ``TransientFault``.
- reads of day items (``find_days``, ``read_day``), of ledger items (``find_ledger``, ``read_ledger``)
  and the unconditional ``put`` of a marker.
- metering: each call adds the requests it made to the ``Meter`` it is given (a group's outcome, a
  batch's lookup), so that nothing else counts requests by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from sensor_digest.errors import TransientFault
from sensor_digest.store import dynamo, reads, schema
from sensor_digest.store.dynamo import CONDITIONAL_CHECK_FAILED, Refusal

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DayKey = tuple[int, str]
Params = dict[str, Any]
Expired = Callable[[], bool] | None


class Meter(Protocol):
    """Where a call's requests are counted (``GroupOutcome``, ``Lookup``)."""

    requests: int


@dataclass
class Requests:
    """A meter of its own, for a caller that only wants the count."""

    requests: int = 0


@dataclass(frozen=True)
class Action:
    """One write of a ``write``: ``Put`` or ``Update`` with its parameters (those of ``PutItem`` /
    ``UpdateItem``, as ``day_writes.py`` builds them)."""

    kind: str
    params: Params

    @classmethod
    def put(cls, params: Params) -> Action:
        return cls("Put", params)

    @classmethod
    def update(cls, params: Params) -> Action:
        return cls("Update", params)


class Refused(Exception):
    """A write refused by a failed condition: for each action, in order, its ``Refusal`` (its reason
    code, ``"None"`` where it was not the cause, and the item as it was where its condition failed;
    ``{}``: none)."""

    def __init__(self, refusals: Sequence[Refusal]) -> None:
        super().__init__(", ".join(r.code for r in refusals))
        self.refusals = list(refusals)

    @property
    def item(self) -> dict[str, Any]:
        """The first action's item as it was (``{}`` when it was not there or was not the cause)."""
        first = self.refusals[0]
        return first.item if first.code == CONDITIONAL_CHECK_FAILED else {}

    def failed(self, index: int) -> bool:
        """Whether action ``index``'s own condition failed."""
        return self.refusals[index].code == CONDITIONAL_CHECK_FAILED


class DayStore:
    """The digest table's day items and the ledger table's items (markers, identity pages, pages of
    imported identities), through one client."""

    def __init__(self, client: DynamoDBClient, table: str, ledger: str = "") -> None:
        self.client = client
        self.table = table
        self.ledger = ledger

    # -- writes ----------------------------------------------------------------------------------

    def write(self, actions: Sequence[Action], meter: Meter | None = None) -> dict[str, Any]:
        """``actions`` written, all or none (see the module): what a single write returned (its
        ``ReturnValues``), ``{}`` for a transaction; ``Refused`` when a condition failed."""
        (meter or Requests()).requests += 1
        if len(actions) == 1:
            action = actions[0]
            answer = dynamo.single_write(self.client, f"{action.kind}Item", action.params)
            if not answer.written:
                raise Refused([Refusal(CONDITIONAL_CHECK_FAILED, answer.item)])
            return answer.item
        sent = [{action.kind: _transactable(action.params)} for action in actions]
        refusals = dynamo.transact_refusals(self.client, sent)
        if refusals is None:
            return {}
        codes = [r.code for r in refusals]
        if len(codes) != len(sent):
            raise TransientFault(f"transaction cancelled without a reason per action: {codes}")
        fault = dynamo.cancellation_fault(codes, [r.message for r in refusals])
        if fault is not None:
            raise fault
        raise Refused(refusals)

    def put(self, params: Params) -> None:
        """An unconditional ``PutItem`` (a marker written twice is one); not metered (it is no count's)."""
        dynamo.call("PutItem", partial(self.client.put_item, **params))

    # -- reads -----------------------------------------------------------------------------------

    def find_days(
        self,
        days: Iterable[DayKey],
        meter: Meter,
        *,
        projection: Sequence[str] = (),
        expired: Expired = None,
    ) -> dict[DayKey, dict[str, Any]]:
        """The day items of ``days`` that exist, by sensor-day (eventually consistent: a stale read
        costs only the refused write it would have saved)."""
        keys = [schema.day_key(*day) for day in days]
        items = dynamo.batch_get(
            self.client, self.table, keys, consistent=False, projection=projection, expired=expired
        )
        meter.requests += (len(keys) + 99) // 100
        return {(schema.sensor_of_item(item), schema.text_of(item, schema.DATE)): item for item in items}

    def read_day(self, day: DayKey, meter: Meter | None = None) -> dict[str, Any]:
        """``day``'s item, strongly consistent (``{}``: none)."""
        (meter or Requests()).requests += 1
        return reads.get_item(self.client, self.table, schema.day_key(*day)) or {}

    def find_ledger(
        self,
        keys: Sequence[dict[str, Any]],
        meter: Meter | None,
        *,
        consistent: bool = True,
        keys_only: bool = False,
        expired: Expired = None,
        per_request: int = 100,
    ) -> dict[str, dict[str, Any]]:
        """The ledger items of ``keys`` that exist, by their key's text, ``per_request`` keys a
        ``BatchGetItem`` (``keys_only``: their keys alone)."""
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), per_request):
            items = dynamo.batch_get(
                self.client,
                self.ledger,
                list(keys[start : start + per_request]),
                consistent=consistent,
                projection=[schema.LEDGER_KEY] if keys_only else (),
                expired=expired,
            )
            if meter is not None:
                meter.requests += 1
            found.update({str(item[schema.LEDGER_KEY]["S"]): item for item in items})
        return found

    def read_ledger(
        self, key: dict[str, Any], meter: Meter | None = None, *, consistent: bool = True
    ) -> dict[str, Any]:
        """One ledger item (``{}``: none)."""
        (meter or Requests()).requests += 1
        return reads.get_item(self.client, self.ledger, key, consistent=consistent) or {}


def _transactable(params: Params) -> Params:
    """A single write's parameters as a transaction's action (``ReturnValues`` is a single write's)."""
    return {name: value for name, value in params.items() if name != "ReturnValues"}
