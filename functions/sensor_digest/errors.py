"""One place for the failures a caller must tell apart.

``RejectedMessage`` is permanent: the input breaks the contract and retrying cannot help.
``StoreFault`` is a call to the tables or the import's bucket that failed, of one of two kinds
chosen where the failure is met: ``TransientFault``, worth retrying later (throttling, conflicts,
timeouts, 5xx; of them ``RetryableFault`` and ``Contention``, the ones a retry a moment later may
cure, ``RETRYABLE_FAULTS``), or ``RefusedWrite``, permanent (retrying cannot help). A caller picks
what it retries by these types, never by the words of a fault's reason.
``UnknownTimeZone`` is a zone name the shipped zone data does not hold (``zones.py``); each caller
turns it into its own kind: a configuration error, an invalid profile, a rejected message.
``BadRequest`` is a read API request that breaks the API's rules (an HTTP 400, saying which).
``MalformedItem`` is an item of the tables without the contract's shape (``store/schema.py``).
The registry's refusals (``RegistryError`` and its kinds) close the module.
``ClientError`` codes become these at the boundaries: DynamoDB's (``store/dynamo.py``) and S3's
(``store/objects.py``); the one other place the functions catch a ``ClientError`` is the SQS
dead-letter sink (``ingest/dead_letters.py``), where a batch SQS refused is kept nowhere and its
messages become batch item failures, never an exception.
"""

from __future__ import annotations


class SensorDigestError(Exception):
    """Base of every error raised on purpose by SensorDigest."""


class ReasonedError(SensorDigestError):
    """An error whose one argument, ``reason``, is what a person reads (a dead letter's ``error``
    attribute, a 400's body, a log line)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ConfigurationError(SensorDigestError):
    """The environment or settings are missing or invalid (raised at cold start)."""


class RejectedMessage(ReasonedError):
    """A message breaks the contract's message schema; it is kept in the DLQ, never retried."""


class UnknownTimeZone(ReasonedError):
    """A time zone name that is not one of the shipped ``tzdata`` zones (``zones.py``)."""


class MalformedItem(SensorDigestError):
    """An item of the tables that does not have the contract's shape (a hand-made write, a restore
    from elsewhere): the message names the item and what is wrong with it; ``attribute`` names the
    attribute at fault (``None``: the item as a whole), so that the repair named is that one's
    (``store/repairs.py``)."""

    def __init__(self, reason: str, attribute: str | None = None) -> None:
        super().__init__(reason)
        self.attribute = attribute


class BadRequest(ReasonedError):
    """A read API request that breaks the API's rules (a sensor id, a date, a range, a page token):
    answered 400 with the reason, never retried."""


class StoreFault(ReasonedError):
    """A call to the tables or the import's bucket that failed, or a write that cannot be made:
    ``TransientFault`` or ``RefusedWrite``, never this class itself. A caller that ends a write on
    either catches this, and tells them apart by type (``counting/outcomes.py``: a refusal's
    messages are rejected, a fault's are retried later)."""


class TransientFault(StoreFault):
    """A fault worth retrying: throttling, transaction conflict, timeout, server error."""


class RetryableFault(TransientFault):
    """A call DynamoDB (or the network) failed in a way a retry a moment later may cure: throttling, a
    server error, a transport error or timeout (whose write may have committed: only writes that find
    out what they wrote are retried on it)."""


class Contention(TransientFault):
    """A transaction DynamoDB cancelled for a conflict with another in flight, or for throttling:
    nothing was written, and a retry a moment later usually succeeds (so it is retried inside the
    invocation before the message waits out the visibility timeout)."""


class RefusedWrite(StoreFault):
    """A write DynamoDB refused as invalid (``ValidationException``), such as an ``ADD`` to a day
    item whose ``DataCount`` is not a number (an item written by hand): retrying cannot help, so
    the counters reject its messages into the dead-letter queue with the reason, to be redriven once
    the item is mended. A read DynamoDB refused as invalid is one too: the read API answers it 500,
    never "try again". It is no ``TransientFault``, so that a caller retrying what may pass later
    leaves it out by its type alone. ``repair`` says how to mend
    the item, when it is not the usual ``DataCount``; ``attribute``, which of its attributes refused
    (when known)."""

    def __init__(self, reason: str, repair: str | None = None, attribute: str | None = None) -> None:
        super().__init__(reason)
        self.repair = repair
        self.attribute = attribute


RETRYABLE_FAULTS: tuple[type[TransientFault], ...] = (Contention, RetryableFault)
"""The faults a retry a moment later may cure, for an ``except`` clause (as s3transfer catches its
tuple of retryable exception types): never ``RefusedWrite``, never a ``TransientFault`` of a code
the boundary did not expect."""


# -- the registry's (registry.py): each a refusal the command line names --------------------------


class RegistryError(SensorDigestError):
    """A registry operation was refused; the message says why."""


class InvalidProfile(RegistryError):
    """A profile breaks a rule (its id's range, a name's or serial's length or characters, a zone)."""


class SensorExists(RegistryError):
    """A sensor of that id is registered already."""


class SerialTaken(RegistryError):
    """Another sensor holds that serial."""


class SensorNotFound(RegistryError):
    """No sensor of that id is registered."""


class VersionConflict(RegistryError):
    """Someone else changed the profile between our read and our write, every time we tried."""


class RegistryBusy(RegistryError):
    """DynamoDB cancelled the transaction for throttling or a conflicting transaction every time we
    tried: nothing was written, and the same call a moment later may succeed."""


class SerialHeldElsewhere(RegistryError):
    """The profile's serial has a sentinel naming another sensor (an inconsistency made outside the
    registry: a restore, a hand-made write); nothing was written."""


class UnreadableInput(SensorDigestError):
    """An object to import that no row of can be read (a CSV header without ``sensor_id``, a file
    that is not UTF-8 text): the whole import is refused, nothing counted."""
