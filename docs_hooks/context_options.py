"""MkDocs hook: the context options table of ``docs/configuration.md``, rendered at build time from
the deployment model (``sensor_digest_cdk.shape``: the ``PipelineShape`` fields a context key sets,
with their defaults and, ``RULES``, what each key allows; ``context_key``; ``stackName`` from
``AppSettings``), so the page cannot go stale.

What a key means is written here, once per group of keys (``MEANINGS``); ``{s}`` in a meaning is
the app's default ``PipelineShape``, so derived figures come from the model too. A field without a
meaning, or a meaning naming a key the model does not have, fails the build (and
``tests/unit/test_docs_site.py``): a new context key cannot ship undocumented.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- context-options -->"

MEANINGS: dict[tuple[str, ...], str] = {
    ("stackName",): "stack name; the tables are named `<stackName>` and `<stackName>Ledger`",
    ("removal",): (
        "`retain` (deletion protection on; `make destroy` keeps tables, queues, logs and the key) "
        "or `destroy` (a dev stack)"
    ),
    ("billing", "readCapacity", "writeCapacity"): (
        "with `provisioned`: `readCapacity`, `writeCapacity` (1 to 40,000, DynamoDB's default quota per table); "
        "given without it, they are refused (they do not apply)"
    ),
    ("deliveryMode",): "`at-least-once` not with `queueType=fifo`",
    ("ledgerMode",): (
        "how exactly-once ingest on a standard queue remembers what it counted: `compact` (identities in "
        "the day item and ledger pages) or `per-message` (a marker per message: the strict identity rule "
        "across days, about four times the write units; the first step of a rollback to a version before "
        "the compact ledger) ([Exactly-once ingest](exactly-once.md))"
    ),
    ("queueType",): (
        "`fifo`: [ordered mode](ordered-mode.md); both ingest queues FIFO in high-throughput mode, ingest's ledger "
        "grant for its few markers only; `stackName` then at most 30 characters (CloudFormation's generated FIFO queue "
        "names are not shortened to SQS's 80, aws-cdk#11041); switching an existing stack replaces both "
        "queues: drain the old queue first ([Deploy, 7](deploy.md#7-upgrade-a-deployed-stack))"
    ),
    ("fifoBatchSize", "fifoMaxConcurrency"): (
        "the event source on a FIFO queue (Lambda allows at most 10 and no batching window; "
        "`ingestBatchSize`, `ingestBatchingWindowSeconds` and `ingestMaxConcurrency` do not apply there, and are "
        "refused with `queueType=fifo`, as these two are with a standard queue); "
        "visibility timeout = 6 × function timeout = {fifo_visibility} s"
    ),
    ("unknownSensors", "profileCacheSeconds"): "the [registry](registry.md)'s use in ingest",
    ("silenceHours",): (
        "the default [silence](operations.md#silent-sensors) threshold in hours (a sensor's profile may set its "
        "own); set, the stack runs the silence check every hour, publishes `silentSensors` and alarms on it; "
        "0 (the default): no check, no alarm"
    ),
    ("digestTimezone",): "zone of day boundaries; checked at synth against the shipped tzdata's list",
    ("ingestBatchSize", "ingestBatchingWindowSeconds"): (
        "SQS event source; chosen by measurement ([Benchmarks](benchmarks.md)): a message waits at most "
        "{s.ingest_batching_window_seconds} s for its batch; a batch of more than 10 needs a window of at "
        "least 1 s (Lambda's rule)"
    ),
    ("ingestMaxConcurrency", "ingestTimeoutSeconds", "ingestMemoryMb", "ingestMaxWorkers"): (
        "ingest function; two invocations at once keep transaction conflicts rare and handle about 1,000 "
        "messages per second on W1 here (latency model), several thousand by the model's own bound; raise "
        "it for more. The timeout starts at 5 s: ingest keeps 3 s before it free for its answer and logs"
    ),
    ("queueRetentionDays", "deadLetterRetentionDays", "maxReceiveCount"): (
        "queues (visibility timeout = 6 × function timeout + window = {s.visibility_timeout_seconds} s, "
        "within SQS's 12 h); `maxReceiveCount` × visibility timeout must stay under the queue's retention, "
        "or a failing message would expire before it reaches the dead-letter queue, and under the dead-letter "
        "queue's (standard queues), or it would expire there on arrival; the ledger's markers live the queue's "
        "retention + twice the dead-letter queue's + a day ({marker_days} days at the defaults)"
    ),
    ("deadLetterMaxMessageBytes",): (
        "the dead-letter queue's `MaximumMessageSize`; the ingest queue's is derived from it (minus "
        "{overhead:,} bytes for the reason and origin attributes: {s.ingest_max_message_bytes:,} by default)"
    ),
    (
        "summaryBatchSize",
        "summaryBatchingWindowSeconds",
        "summaryRetryAttempts",
        "summaryMaxRecordAgeHours",
    ): "stream event source (bisect on error, `TRIM_HORIZON`); a record's age stops at the stream's 24 h",
    ("summaryTimeoutSeconds", "summaryMemoryMb"): "summary function",
    ("logRetentionDays", "iteratorAgeAlarmSeconds", "alarmEmail"): "monitoring",
    ("apiTimeoutSeconds", "apiMemoryMb", "apiThrottleRateLimit", "apiThrottleBurstLimit"): (
        "the [read API](read-api.md)'s query function and its stage's throttling (API Gateway waits "
        "{s.api_integration_timeout_seconds} s for the function: its timeout and a second)"
    ),
    ("iotTopic", "iotRuleName"): (
        "[IoT Core ingestion](iot.md): an MQTT topic filter whose reports a topic rule forwards to the ingest "
        "queue (standard queues only), and the rule's name (derived when not given)"
    ),
    ("restrictProducers", "producerArns"): (
        "with `true`, the ingest queue's policy denies `sqs:SendMessage` to every principal but the roles and "
        "users in `producerArns` (and the IoT rule's role) ([construct](construct.md#restricting-producers))"
    ),
    ("queueAgeAlarmSeconds",): (
        "the stall alarm on the ingest queue's oldest message; 0 derives it (`maxReceiveCount` × visibility "
        "timeout + 300 s, at least 1,800 s: {s.queue_age_threshold_seconds:,} s at the defaults); a value at or "
        "under {s.max_receive_count} × {s.visibility_timeout_seconds} s is refused, since one message working "
        "through its retries would fire it"
    ),
}


def _default(value: object) -> str:
    """A default as the context key takes it: ``true``/``false`` as written in context, a number with
    its thousands marked, text in code, and an empty text or list as "none" (never Python's repr)."""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, tuple | list):
        return ", ".join(f"`{item}`" for item in value) if value else "none"
    return f"`{value}`" if value else "none"


def render_options_table() -> str:
    """The table, one row per group of ``MEANINGS``: keys, defaults and what each allows from the
    model, then the meaning. Raises ``ValueError`` when the keys of the model and ``MEANINGS`` differ."""
    from sensor_digest.dead_letter_format import DEAD_LETTER_OVERHEAD_BYTES  # noqa: PLC0415
    from sensor_digest_cdk.context import CONTEXT_FIELDS, STACK_NAME_RULE, AppSettings  # noqa: PLC0415
    from sensor_digest_cdk.rules import RULES, context_key  # noqa: PLC0415
    from sensor_digest_cdk.shape import PipelineShape  # noqa: PLC0415

    app = AppSettings()
    defaults = app.shape
    field_of = {context_key(name): name for name in CONTEXT_FIELDS} | {"stackName": "stack_name"}
    rules = {**RULES, "stack_name": STACK_NAME_RULE}
    documented = [key for group in MEANINGS for key in group]
    undocumented = sorted(set(field_of) - set(documented))
    unknown = sorted(set(documented) - set(field_of))
    if undocumented or unknown:
        raise ValueError(f"context options: no meaning for {undocumented}; meanings of unknown keys {unknown}")
    fifo = PipelineShape(queue_type="fifo")
    values: dict[str, Any] = {
        "s": defaults,
        "marker_days": defaults.marker_ttl_seconds // 86_400,
        "fifo_visibility": fifo.visibility_timeout_seconds,
        "overhead": DEAD_LETTER_OVERHEAD_BYTES,
    }
    rows = ["| key | default | allowed | meaning |", "|---|---|---|---|"]
    for group, meaning in MEANINGS.items():
        names = [field_of[key] for key in group]
        keys = ", ".join(f"`{key}`" for key in group)
        default = ", ".join(_default(getattr(app if name == "stack_name" else defaults, name)) for name in names)
        if len(group) == 1:
            allowed = rules[names[0]].allowed
        else:
            allowed = "<br>".join(f"`{key}`: {rules[name].allowed}" for key, name in zip(group, names, strict=True))
        cells = (keys, default, allowed, meaning.format(**values))
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs' hook: the marker in a page becomes the table."""
    return markdown.replace(MARKER, render_options_table()) if MARKER in markdown else markdown
