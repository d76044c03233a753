"""The pipeline's one deployment shape: ``PipelineShape``, every tunable (declared in ``tunables.py``)
checked, and the figures and functions' environments derived from them.

``PipelineShape`` is CDK-free (it imports no ``aws_cdk``): the construct ``SensorDigestPipeline``
takes it as its props, the app reads it from context (``AppSettings.from_context``), and the local
pipeline and the benchmark run on it, so nothing about the event sources (batch size, window,
concurrency, visibility timeout, receive count, message sizes, marker lifetime, alarm floors) is
derived anywhere else.

A shape is valid by construction: ``PipelineShape(...)`` checks every value against its rule and the
combinations refused (``workable.py``), and raises ``ShapeError`` with one line per problem. The
lines name the keys as the caller wrote them: ``queue_type`` for the construct's props
(``PipelineShape.from_props``), ``queueType`` for context (``context.py``, which also reads each
value by its type, since a ``-c key=value`` arrives as text, and refuses misspelt keys with the
nearest name).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from sensor_digest import config
from sensor_digest.dead_letter_format import source_queue_max_bytes
from sensor_digest.environment import Settings, WholeOrNone
from sensor_digest_cdk import workable
from sensor_digest_cdk.rules import (
    FIFO_MAX_BATCH,
    LAMBDA_PYTHON,
    MODE_FIELDS,
    POWERTOOLS_LAYER_ACCOUNT,
    POWERTOOLS_LAYER_VERSION,
    Rule,
    ShapeError,
    context_key,
    iot_topic_ok,
    prop_key,
    unknown_key_problems,
)
from sensor_digest_cdk.tunables import CARRIES, RULES, Tunables

if TYPE_CHECKING:
    from typing import Unpack

    from sensor_digest_cdk.props import PipelineProps

__all__ = ["FIFO_MAX_BATCH", "RULES", "PipelineShape", "Rule", "ShapeError", "context_key", "iot_topic_ok", "prop_key"]


@dataclass(frozen=True)
class PipelineShape(Tunables):
    """The props of ``SensorDigestPipeline``: today's defaults, every value checked on construction."""

    def __post_init__(self) -> None:
        super().__post_init__()
        problems = self.problems(prop_key)
        if problems:
            raise ShapeError(problems)

    # -- derived, in one place (the checks' own figures are in Tunables) -----------------------

    @property
    def ingest_max_message_bytes(self) -> int:
        """The ingest queue's ``MaximumMessageSize``: a rejected body is re-sent to the dead-letter
        queue with an ``error`` attribute and its origin's two (each clipped to a fixed size,
        ``sensor_digest.dead_letter_format``), and SQS counts attributes toward the same limit, so the
        largest body the queue takes must still fit the dead-letter queue with them."""
        return source_queue_max_bytes(self.dead_letter_max_message_bytes)

    @property
    def marker_ttl_seconds(self) -> int:
        """A marker must outlive every redelivery of its message through one trip to the dead-letter
        queue, ``dlq stamp`` and SQS's own redrive included: the message's time in the ingest queue,
        then in the dead-letter queue (SQS keeps a standard message's first enqueue time when it moves
        it there, and a FIFO queue's restarts it: the queue's retention counts once more on FIFO), then
        again in the dead-letter queue as the new message ``dlq stamp`` writes, then in the ingest queue
        as the new message a redrive sends (both restart retention), plus a day: Q + 2D + 1 days, or
        2Q + 2D + 1 on FIFO (43 and 57 at the defaults)."""
        queue_days = self.queue_retention_days * (2 if self.fifo else 1)
        return (queue_days + 2 * self.dead_letter_retention_days + 1) * 24 * 3600

    @property
    def api_integration_timeout_seconds(self) -> int:
        """How long API Gateway waits for the query function: its timeout and a second more."""
        return self.api_timeout_seconds + 1

    @property
    def destroy(self) -> bool:
        return self.removal == "destroy"

    @property
    def powertools_layer_arn(self) -> str:
        return (
            f"arn:${{AWS::Partition}}:lambda:${{AWS::Region}}:{POWERTOOLS_LAYER_ACCOUNT}:layer:"
            f"AWSLambdaPowertoolsPythonV3-{LAMBDA_PYTHON}-arm64:{POWERTOOLS_LAYER_VERSION}"
        )

    @property
    def iot_rule_sql(self) -> str:
        """The IoT rule's statement: every field of a report published on ``iot_topic``, and with
        ``iot_readings`` those fields again as the report's ``readings`` (an object literal, which
        leaves out a field the payload lacks). The filter is quoted as it is (``iot_topic_ok`` admits
        no character that could end the literal), the names written as they are (``iot_readings_ok``:
        letters, digits and ``_``)."""
        if not self.iot_readings:
            return f"SELECT * FROM '{self.iot_topic}'"  # noqa: S608 - the filter can hold no quote (iot_topic_ok)
        mapped = ", ".join(f"'{name}': {name}" for name in self.iot_readings)
        return f"SELECT *, {{{mapped}}} AS readings FROM '{self.iot_topic}'"  # noqa: S608 - checked names and filter

    # -- the functions' environments -----------------------------------------------------------

    def function_environment(self, settings: type[Settings], given: Mapping[str, str]) -> dict[str, str]:
        """The environment of the function whose settings model is ``settings``: each of its
        variables (``sensor_digest.config``) from ``given`` (by name: the resources, what is derived)
        or from the prop that carries it (``tunables.carried``), in the model's order; a whole number
        or none whose prop is 0 is not set. The construct deploys it, the local pipeline reads it as
        the function does."""
        carried = {f.metadata[CARRIES].name: getattr(self, f.name) for f in fields(self) if CARRIES in f.metadata}
        deployed = {}
        for variable in settings.variables():
            if variable.name in given:
                deployed[variable.name] = given[variable.name]
            elif not (isinstance(variable, WholeOrNone) and not carried[variable.name]):
                deployed[variable.name] = str(carried[variable.name])
        return deployed

    def ingest_environment(self, *, table: str, ledger: str, dlq_url: str) -> dict[str, str]:
        """The ingest function's (``config.IngestSettings``): its tables, its dead-letter queue, the
        markers' lifetime and the props it carries."""
        given = {
            config.TABLE_NAME.name: table,
            config.LEDGER_TABLE_NAME.name: ledger,
            config.DLQ_URL.name: dlq_url,
            config.MARKER_TTL_SECONDS.name: str(self.marker_ttl_seconds),
        }
        return self.function_environment(config.IngestSettings, given)

    def api_environment(self, *, table: str, ledger: str) -> dict[str, str]:
        """The read API's (``config.ApiSettings``): the table, the ledger (the alarm rules), and for
        ``GET /silence`` the silence check's zone and default threshold (``silence_environment``)."""
        given = {config.TABLE_NAME.name: table, config.LEDGER_TABLE_NAME.name: ledger}
        return self.function_environment(config.ApiSettings, given)

    def silence_environment(self, *, table: str) -> dict[str, str]:
        """The silence check's (``config.SilenceSettings``): the table, the zone of sensors registered
        without one, and the default threshold, set only when ``silence_hours`` is (0: none)."""
        return self.function_environment(config.SilenceSettings, {config.TABLE_NAME.name: table})

    def import_environment(self, *, table: str, ledger: str, bucket: str) -> dict[str, str]:
        """The history import's functions' (``config.ImportSettings``): the tables, its bucket, and how a
        row is dated and whose rows are refused (as ingest: ``DIGEST_TIMEZONE``, ``UNKNOWN_SENSORS``)."""
        given = {
            config.TABLE_NAME.name: table,
            config.LEDGER_TABLE_NAME.name: ledger,
            config.IMPORT_BUCKET.name: bucket,
        }
        return self.function_environment(config.ImportSettings, given)

    def summary_environment(self, *, table: str) -> dict[str, str]:
        """The summary function's (``config.SummarySettings``): its table."""
        return self.function_environment(config.SummarySettings, {config.TABLE_NAME.name: table})

    def announcer_environment(self, *, table: str) -> dict[str, str]:
        """The alarm announcer's (``config.AnnouncerSettings``): its table."""
        return self.function_environment(config.AnnouncerSettings, {config.TABLE_NAME.name: table})

    # -- building one ----------------------------------------------------------------------

    @classmethod
    def from_props(cls, **props: Unpack[PipelineProps]) -> PipelineShape:
        """The construct's keyword props, each checked for its type and rule: ``ShapeError`` names
        every problem in snake_case, an unknown prop with the nearest name."""
        known = {f.name for f in fields(cls)}
        problems = unknown_key_problems(props, known, prop_key, "prop", strict=True)
        values = {name: value for name, value in props.items() if name in known}
        return cls.built(values, set(), problems, prop_key, "prop")

    @classmethod
    def built(
        cls, values: dict[str, Any], unreadable: set[str], problems: list[str], key: Callable[[str], str], what: str
    ) -> PipelineShape:
        """The shape of ``values`` (the unreadable ones left at their defaults), or ``ShapeError``
        with ``problems`` and every rule and combination the readable values break, in the caller's
        words (``key``, ``what``)."""
        unchecked = Tunables(**values)
        problems = problems + workable.problems(unchecked, key, unreadable, what)
        ok = {name for name in RULES if name not in unreadable and workable.acceptable(name, getattr(unchecked, name))}
        if ok.issuperset(MODE_FIELDS):  # the mode is known: say what of the values given it does not use
            given = [name for name in values if name in ok]
            problems += workable.given_not_applying(unchecked, given, key, what)
        if problems:
            raise ShapeError(problems)
        return cls(**{f.name: getattr(unchecked, f.name) for f in fields(cls)})

    def problems(self, key: Callable[[str], str] = prop_key, skip: Iterable[str] = (), what: str = "prop") -> list[str]:
        """One line per problem, keys named by ``key``: a value of the wrong type or out of its range,
        a combination refused; the fields in ``skip`` were unreadable (``workable.problems``)."""
        return workable.problems(self, key, skip, what)
