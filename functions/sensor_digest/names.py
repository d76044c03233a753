"""Names that the functions, the stack and the tools must spell alike: the services (Powertools'
service names, the metrics' ``service`` dimension), the metrics namespace, names and the
``pipeline`` dimension (with the variable that gives its value), and the keys of the stack's
outputs (which the command line reads to find a deployed stack's resources)."""

from __future__ import annotations

INGEST_SERVICE = "sensor-digest-ingest"
SUMMARY_SERVICE = "sensor-digest-summary"
ANNOUNCER_SERVICE = "sensor-digest-announcer"
API_SERVICE = "sensor-digest-api"
SILENCE_SERVICE = "sensor-digest-silence"
IMPORT_SERVICE = "sensor-digest-import"  # the history import's functions (prepare, batch, finish)
METRICS_NAMESPACE = "SensorDigest"
# Every metric a pipeline publishes carries the pipeline it belongs to, so that two pipelines in one
# account (two in a stack, or two stacks) never sum into one graph: the construct sets the variable
# on each of its functions, and its dashboard graphs its own value.
PIPELINE_DIMENSION = "pipeline"
PIPELINE_ENV = "SENSOR_DIGEST_PIPELINE"

# ingest's metrics, one per message fate
METRIC_COUNTED = "counted"
METRIC_DUPLICATE = "duplicate"
METRIC_REJECTED = "rejected"
METRIC_FAILED = "failed"
INGEST_METRICS = (METRIC_COUNTED, METRIC_DUPLICATE, METRIC_REJECTED, METRIC_FAILED)

# the summary's metrics
METRIC_SUMMARY_WRITTEN = "summaryWritten"
METRIC_SUMMARY_STALE = "summaryStale"
METRIC_SUMMARY_IGNORED = "summaryIgnored"
METRIC_SUMMARY_FAILED = "summaryFailed"

# the alarm announcer's
METRIC_ALARMS_ANNOUNCED = "alarmsAnnounced"
METRIC_ALARMS_UNANNOUNCED = "alarmsUnannounced"  # transitions whose announcement failed (retried)
# the announcer's events on the account's default bus (the stack's rule matches both, and its
# PutEvents grant is conditioned on the source)
ALARM_EVENT_SOURCE = "sensor-digest"
ALARM_DETAIL_TYPE = "Sensor Digest Alarm State Change"

# the read API's metrics, one per answer's fate: 2xx, 4xx (the request's fault), 5xx
METRIC_API_ANSWERED = "apiAnswered"
METRIC_API_REFUSED = "apiRefused"
METRIC_API_FAILED = "apiFailed"

# the silence check (silence/): registered sensors silent past their threshold, at its last run
METRIC_SILENT_SENSORS = "silentSensors"
METRIC_SILENCE_CHECKED = "silenceChecked"
METRIC_SILENCE_UNCHECKED = "silenceUnchecked"  # registered sensors the check could not decide (their reads failed)

# the history import's metrics (per batch: its rows' fates)
METRIC_IMPORT_COUNTED = "importCounted"
METRIC_IMPORT_ALREADY = "importAlready"
METRIC_IMPORT_DUPLICATE = "importDuplicate"
METRIC_IMPORT_REJECTED = "importRejected"

# the stack's outputs
OUTPUT_QUEUE_URL = "QueueUrl"
OUTPUT_DEAD_LETTER_QUEUE_URL = "DeadLetterQueueUrl"
OUTPUT_TABLE_NAME = "TableName"
OUTPUT_LEDGER_TABLE_NAME = "LedgerTableName"
OUTPUT_DASHBOARD_URL = "DashboardUrl"
OUTPUT_STREAM_FAILURE_QUEUE_URL = "StreamFailureQueueUrl"
OUTPUT_API_URL = "ApiUrl"
OUTPUT_UNKNOWN_SENSORS = "UnknownSensors"  # the ingest's UNKNOWN_SENSORS: what `send` checks a report against
OUTPUT_IMPORT_BUCKET = "ImportBucketName"  # with importEnabled: where `sensor-digest import` puts files
OUTPUT_IMPORT_STATE_MACHINE = "ImportStateMachineArn"  # with importEnabled: what `sensor-digest import` starts
OUTPUT_DIGEST_TIMEZONE = "DigestTimezone"  # the zone of day boundaries: how `sensor-digest import FILE` dates rows
