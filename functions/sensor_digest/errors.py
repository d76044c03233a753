"""One place for the failures a caller must tell apart.

``RejectedMessage`` is permanent: the input breaks the contract and retrying cannot help.
``TransientFault`` is anything worth retrying (throttling, conflicts, timeouts, 5xx).
``UnknownTimeZone`` is a zone name the shipped zone data does not hold (``zones.py``); each caller
turns it into its own kind: a configuration error, an invalid profile, a rejected message.
``BadRequest`` is a read API request that breaks the API's rules (an HTTP 400, saying which).
``MalformedItem`` is an item of the tables without the contract's shape (``store/schema.py``).
``ClientError`` codes become these at the DynamoDB boundary (``store/dynamo.py``) and nowhere else.
"""

from __future__ import annotations


class SensorDigestError(Exception):
    """Base of every error raised on purpose by SensorDigest."""


class ConfigurationError(SensorDigestError):
    """The environment or settings are missing or invalid (raised at cold start)."""


class RejectedMessage(SensorDigestError):
    """A message breaks the contract's message schema; it is kept in the DLQ, never retried."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnknownTimeZone(SensorDigestError):
    """A time zone name that is not one of the shipped ``tzdata`` zones (``zones.py``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MalformedItem(SensorDigestError):
    """An item of the tables that does not have the contract's shape (a hand-made write, a restore
    from elsewhere): the message names the item and what is wrong with it."""


class BadRequest(SensorDigestError):
    """A read API request that breaks the API's rules (a sensor id, a date, a range, a page token):
    answered 400 with the reason, never retried."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TransientFault(SensorDigestError):
    """A fault worth retrying: throttling, transaction conflict, timeout, server error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Contention(TransientFault):
    """A transaction DynamoDB cancelled for a conflict with another in flight, or for throttling:
    nothing was written, and a retry a moment later usually succeeds (so it is retried inside the
    invocation before the message waits out the visibility timeout)."""


class RefusedWrite(TransientFault):
    """A write DynamoDB refused as invalid (``ValidationException``), such as an ``ADD`` to a day
    item whose ``DataCount`` is not a number (an item written by hand): retrying cannot help, so
    the counters reject its messages into the dead-letter queue with the reason, to be redriven once
    the item is mended. Everywhere else it is a fault like any other. ``repair`` says how to mend
    the item, when it is not the usual ``DataCount``."""

    def __init__(self, reason: str, repair: str | None = None) -> None:
        super().__init__(reason)
        self.repair = repair
