"""Instruments on a boto3 session's hooks, and ``install``, the one place that puts them there.

Each instrument registers handlers on botocore's events of a session (so on every client made from
it, the handlers' own included), and the order matters: ``install`` names every hook in its order.

1. ``metering.RequestMeter`` (``before-parameter-build.dynamodb``): counts each request and the
   write units it costs, as sent;
2. ``conflicts.ConflictEmulator`` (``before-call.dynamodb`` / ``after-call.dynamodb``): DynamoDB's
   ``TransactionConflict``, which DynamoDB Local does not produce;
3. ``latency.LatencyModel`` (``before-call.dynamodb``): a networked DynamoDB's delay, after the
   conflict emulator so that the delay falls inside a transaction's window;
4. ``faults.FaultInjector`` (``before-call.dynamodb``): throttling that replaces a request;
5. the in-process SQS (``sensor_digest_tools.aws.sqs_broker.LocalSqsBroker``,
   ``before-call.sqs``): SQS answered from memory. It is not an instrument, but it lives on the
   same hooks, so it is installed here too, last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sensor_digest_tools.aws.sqs_broker import LocalSqsBroker
    from sensor_digest_tools.instruments.conflicts import ConflictEmulator
    from sensor_digest_tools.instruments.faults import FaultInjector
    from sensor_digest_tools.instruments.latency import LatencyModel
    from sensor_digest_tools.instruments.metering import RequestMeter


def install(
    session: Any,
    *,
    meter: RequestMeter | None = None,
    conflicts: ConflictEmulator | None = None,
    latency: LatencyModel | None = None,
    faults: FaultInjector | None = None,
    sqs: LocalSqsBroker | None = None,
) -> None:
    """Register the given instruments on ``session``'s hooks, in the order of the module's list."""
    for instrument in (meter, conflicts, latency, faults, sqs):
        if instrument is not None:
            instrument.install(session)
