"""``SensorDigestPipeline``: the whole pipeline as one construct (L3), for any stack.

Tables, queues, the ingest and summary functions, the alarm announcer (alarm events on the default
bus, to the alarm topic), the read API (an HTTP API with IAM auth and its query function), alarms
and dashboard, and, on request, an AWS IoT topic rule to the
ingest queue and a queue policy that admits only the producers granted. Its props are
``PipelineShape``'s fields, keyword-only, checked at once (``ShapeError``, one line per problem);
physical names are generated unless given, so two pipelines live in one stack side by side.

What a user wires next is exposed: ``queue``, ``dead_letter_queue``, ``table``, ``ledger``,
``ingest_function``, ``summary_function``, ``announcer`` (``function``, ``failure_queue``, ``rule``),
``alarm_topic``, ``dashboard``, ``read_api``, ``iot`` (or
``None``), ``silence`` (the scheduled silence check, or ``None`` without ``silence_hours``),
``history_import`` (the history import, or ``None`` without ``import_enabled``: its ``grant_start``
lets an operator run ``sensor-digest import --stack``), and
the grants ``grant_send`` (producers), ``grant_read`` (consumers of the counts) and
``grant_redrive`` (operators of the dead-letter queue).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Annotations, Lazy, Stack
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_iam as iam
from constructs import Construct

from sensor_digest import names
from sensor_digest.store import schema
from sensor_digest_cdk import nag
from sensor_digest_cdk.alarm_announcer import AlarmAnnouncer
from sensor_digest_cdk.digest_tables import RULE_READ_ACTIONS, DigestTables, rule_reads
from sensor_digest_cdk.history_import import HistoryImport
from sensor_digest_cdk.iot_ingest import IotIngest
from sensor_digest_cdk.lambda_asset import function_asset
from sensor_digest_cdk.monitoring import PipelineMonitoring
from sensor_digest_cdk.pipeline_parts import FifoNamesFit, Producers, SomeProducer, pipeline_name, principal_arn
from sensor_digest_cdk.queue_ingest import QueueIngest
from sensor_digest_cdk.read_api import ReadApi
from sensor_digest_cdk.shape import PipelineShape, prop_key
from sensor_digest_cdk.silence_check import SilenceCheck
from sensor_digest_cdk.stream_summary import StreamSummary
from sensor_digest_cdk.workable import overridden_not_applying

if TYPE_CHECKING:
    from typing import Unpack

    from aws_cdk import aws_cloudwatch as cloudwatch
    from aws_cdk import aws_dynamodb as dynamodb
    from aws_cdk import aws_lambda as lambda_
    from aws_cdk import aws_sns as sns
    from aws_cdk import aws_sqs as sqs

    from sensor_digest_cdk.props import PipelineProps

# IAM has no action named TransactWriteItems: each action inside a transaction is authorised as
# its own PutItem / UpdateItem / ConditionCheckItem ("Using IAM with DynamoDB transactions").
# Only what the code calls: the count update/insert and the sensor profiles' reads on the digest,
# marker puts and the batch's lookup of known markers on the ledger, the map upsert (UpdateItem) for the summary.
INGEST_DIGEST_ACTIONS = ["dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:BatchGetItem"]
INGEST_LEDGER_ACTIONS = ["dynamodb:PutItem", "dynamodb:BatchGetItem"]  # markers, and the lookup of known ones
INGEST_PAGE_ACTIONS = ["dynamodb:UpdateItem", "dynamodb:GetItem"]  # the compact ledger's identity pages
INGEST_DLQ_ACTIONS = ["sqs:SendMessage"]
SUMMARY_DIGEST_ACTIONS = ["dynamodb:UpdateItem"]
# grant_redrive, beyond grant_send on the ingest queue and grant_consume_messages on the dead-letter
# queue: `dlq stamp` sends its copies to the dead-letter queue; SQS's own redrive is a message move task
DEAD_LETTER_REDRIVE_ACTIONS = [
    "sqs:SendMessage",
    "sqs:StartMessageMoveTask",
    "sqs:ListMessageMoveTasks",
    "sqs:CancelMessageMoveTask",
]
PRODUCERS_SID = "DenySendToAllButTheGrantedProducers"
# grant_read: the item reads of the digest table and its Profiles index, named (no index/* wildcard)
READ_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:Scan",
    "dynamodb:DescribeTable",
]
HIDDEN_ID = "Default"  # CDK leaves this id out of logical ids (app.py's stack keeps its ids through it)
NOT_APPLYING_WARNING = "sensor-digest:propNotApplying"  # a shape's value its mode ignores (workable.py)


class SensorDigestPipeline(Construct):
    """The SensorDigest pipeline: ``SensorDigestPipeline(self, "Readings", queue_type="fifo")``, or
    ``shape=PipelineShape(...)`` for a shape built (and checked) beforehand."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        shape: PipelineShape | None = None,
        **props: Unpack[PipelineProps],
    ) -> None:
        if shape is not None and props:
            raise TypeError("SensorDigestPipeline takes a shape or its props, not both")
        shape = shape if shape is not None else PipelineShape.from_props(**props)  # ShapeError before anything
        super().__init__(scope, construct_id)
        self.shape = shape
        for warning in overridden_not_applying(shape, prop_key):  # a shape built beforehand: props were refused
            Annotations.of(self).add_warning_v2(NOT_APPLYING_WARNING, warning)
        stack = Stack.of(self)
        # the app's own pipeline only is named by its stack alone: a ``Default`` directly in its stack,
        # not one nested deeper (two teams' scopes could each hold one: their metrics would sum)
        hidden = construct_id == HIDDEN_ID and scope is stack
        label = stack.stack_name if hidden else self.node.path  # Readings/Plain
        self.pipeline_name = pipeline_name(self, stack, hidden=hidden)
        asset = function_asset()
        storage = DigestTables(self, "Storage", shape=shape)
        ingest = QueueIngest(
            self,
            "Ingest",
            shape=shape,
            asset=asset,
            table_name=storage.table.table_name,
            ledger_table_name=storage.ledger.table_name,
        )
        summary = StreamSummary(self, "Summary", shape=shape, asset=asset, table=storage.table)
        self.announcer = AlarmAnnouncer(self, "Announcer", shape=shape, asset=asset, table=storage.table)
        self.monitoring = PipelineMonitoring(
            self,
            "Monitoring",
            shape=shape,
            label=label,
            queue=ingest.queue,
            dead_letter_queue=ingest.dead_letter_queue,
            stream_failure_queue=summary.failure_queue,
            ingest=ingest.function,
            summary=summary.function,
            table=storage.table,
            ledger=storage.ledger,
            announcer=self.announcer.function,
            announcer_failure_queue=self.announcer.failure_queue,
            pipeline=self.pipeline_name,
        )
        self.announcer.announce_to(self.monitoring.topic, label=label, pipeline=self.pipeline_name)
        self.read_api = ReadApi(
            self,
            "ReadApi",
            shape=shape,
            label=label,
            asset=asset,
            table=storage.table,
            ledger=storage.ledger,
            alarm_topic=self.monitoring.topic,
        )
        self.table: dynamodb.Table = storage.table
        self.ledger: dynamodb.Table = storage.ledger
        self.queue: sqs.Queue = ingest.queue
        self.dead_letter_queue: sqs.Queue = ingest.dead_letter_queue
        self.stream_failure_queue: sqs.Queue = summary.failure_queue
        self.ingest_function: lambda_.Function = ingest.function
        self.summary_function: lambda_.Function = summary.function
        self.alarm_topic: sns.Topic = self.monitoring.topic
        self.dashboard: cloudwatch.Dashboard = self.monitoring.dashboard
        self.dashboard_url: str = self.monitoring.dashboard_url

        self.silence: SilenceCheck | None = None  # the scheduled silence check, when silence_hours is set
        if shape.silence_hours:
            self.silence = SilenceCheck(
                self,
                "Silence",
                shape=shape,
                asset=asset,
                table=storage.table,
                pipeline=self.pipeline_name,
                alarm_topic=self.monitoring.topic,
            )
        self.history_import: HistoryImport | None = None  # the history import, when import_enabled is set
        if shape.import_enabled:
            self.history_import = HistoryImport(
                self, "Import", shape=shape, asset=asset, table=storage.table, ledger=storage.ledger
            )
            self.history_import.alarm.add_alarm_action(cloudwatch_actions.SnsAction(self.monitoring.topic))
        for function in self._functions():
            function.add_environment(names.PIPELINE_ENV, self.pipeline_name)  # its metrics' pipeline dimension
        self._grant_functions(ingest, summary)
        self._producers: list[str] = list(shape.producer_arns)
        self.iot: IotIngest | None = None
        if shape.iot_topic:
            self.iot = IotIngest(self, "Iot", shape=shape, queue=self.queue)
            self._producers.append(self.iot.role.role_arn)
        if shape.restrict_producers:
            self._restrict_producers()
        if shape.fifo:
            self.node.add_validation(FifoNamesFit(stack, (self.queue, self.dead_letter_queue)))
        self._suppress_nag_findings()

    # -- what users wire next ------------------------------------------------------------------

    def grant_send(self, grantee: iam.IGrantable) -> iam.Grant:
        """Lets ``grantee`` send reports to the ingest queue (``sqs:SendMessage`` and the queue's URL
        and attributes); with ``restrict_producers``, also admits it past the queue policy's Deny,
        which names principals by ARN: ``grantee`` must then be an IAM role or user (or an
        ``ArnPrincipal``)."""
        if self.shape.restrict_producers:
            self._producers.append(principal_arn(grantee, Stack.of(self)))
        return self.queue.grant_send_messages(grantee)

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Lets ``grantee`` read the counts: ``GetItem``, ``BatchGetItem``, ``Query``, ``Scan`` and
        ``DescribeTable`` on the digest table and its ``Profiles`` index; nothing of the ledger. (To call
        the read API instead: ``read_api.grant_invoke``.)"""
        return iam.Grant.add_to_principal(
            grantee=grantee,
            actions=READ_ACTIONS,
            resource_arns=[self.table.table_arn, f"{self.table.table_arn}/index/{schema.PROFILE_INDEX}"],
        )

    def grant_redrive(self, grantee: iam.IGrantable) -> iam.Grant:
        """Lets an operator run the dead-letter procedures of the operations page, and nothing more:
        ``sensor-digest dlq list`` and ``dlq redrive`` (receive, hold back, delete and count dead
        letters; send them to the ingest queue: ``grant_send``), ``dlq stamp`` (send a stamped copy
        to the dead-letter queue itself), and SQS's own redrive of the console or the API (start,
        list and cancel a message move task on the dead-letter queue, as SQS requires of its caller,
        beside the receive, delete and send it performs on the caller's behalf)."""
        send = self.grant_send(grantee)
        consume = self.dead_letter_queue.grant_consume_messages(grantee)
        own = iam.Grant.add_to_principal(
            grantee=grantee, actions=DEAD_LETTER_REDRIVE_ACTIONS, resource_arns=[self.dead_letter_queue.queue_arn]
        )
        return send.combine(consume).combine(own)

    # -- inside ----------------------------------------------------------------------------------

    def _functions(self) -> list[lambda_.Function]:
        """Every function of the pipeline, those of the optional parts built included."""
        functions = [self.ingest_function, self.summary_function, self.announcer.function, self.read_api.function]
        functions += [self.silence.function] if self.silence is not None else []
        functions += self.history_import.functions if self.history_import is not None else []
        return functions

    def _grant_functions(self, ingest: QueueIngest, summary: StreamSummary) -> None:
        """Least privilege: exactly the item actions each function performs, on its tables only."""
        ingest.function.add_to_role_policy(
            iam.PolicyStatement(actions=INGEST_DIGEST_ACTIONS, resources=[self.table.table_arn])
        )
        # markers (one per message; in ordered mode only for a counted message listed behind a failed
        # one) and the lookup of known ones; exactly once on a standard queue, the identity pages
        # (written in the count's transaction, the page being filled read by a redelivery's lookup)
        ledger_actions = list(INGEST_LEDGER_ACTIONS)
        if not self.shape.fifo and self.shape.delivery_mode == "exactly-once":
            ledger_actions += INGEST_PAGE_ACTIONS
        ingest.function.add_to_role_policy(
            iam.PolicyStatement(actions=ledger_actions, resources=[self.ledger.table_arn])
        )
        # the alarm rules' two items (alarm evaluation after the count; its alarm items are the digest's
        # BatchGetItem and PutItem above): only where GetItem on the ledger is not granted already
        if not set(RULE_READ_ACTIONS) <= set(ledger_actions):
            ingest.function.add_to_role_policy(rule_reads(self.ledger))
        ingest.function.add_to_role_policy(
            iam.PolicyStatement(actions=INGEST_DLQ_ACTIONS, resources=[self.dead_letter_queue.queue_arn])
        )
        summary.function.add_to_role_policy(
            iam.PolicyStatement(actions=SUMMARY_DIGEST_ACTIONS, resources=[self.table.table_arn])
        )
        # Stream read (DescribeStream, GetRecords, GetShardIterator, ListStreams) comes with the event source.

    def _restrict_producers(self) -> None:
        """The queue policy denies ``sqs:SendMessage`` to every principal whose ARN is not one of the
        producers (``producer_arns``, the IoT rule's role, every ``grant_send`` grantee), the account's
        administrators and root included: an explicit Deny beats their Allow. It denies nothing else
        (the ingest function's event source receives and deletes with its own role)."""
        self.queue.add_to_resource_policy(
            iam.PolicyStatement(
                sid=PRODUCERS_SID,
                effect=iam.Effect.DENY,
                principals=[iam.AnyPrincipal()],
                actions=["sqs:SendMessage"],
                resources=[self.queue.queue_arn],
                conditions={"ArnNotEquals": {"aws:PrincipalArn": Lazy.list(Producers(self._producers))}},
            )
        )
        self.node.add_validation(SomeProducer(self._producers))

    def _suppress_nag_findings(self) -> None:
        """Each accepted cdk-nag finding, with the reason and the exact finding it applies to."""
        nag.accept(
            [self.ingest_function.role, self.summary_function.role, self.announcer.function.role],  # type: ignore[list-item]
            "AwsSolutions-IAM5",
            "X-Ray PutTraceSegments/PutTelemetryRecords and DynamoDB ListStreams support no "
            "resource-level permissions; every other action is scoped to one table, stream, queue or event bus.",
            findings=["Resource::*"],
            nag2_children=True,
        )
        nag.accept(
            [self.ingest_function, self.summary_function, self.announcer.function],
            "AwsSolutions-L1",
            "Python 3.13, not the newest Lambda runtime (3.14): the newest Python the project runs "
            "its unit tier on (make test-unit-py313), and no verdict of the functions depends on the "
            "Python version (their own timestamp grammar and character rule, zones from tzdata).",
        )
        nag.accept(
            [self.dead_letter_queue, self.stream_failure_queue, self.announcer.failure_queue],
            "AwsSolutions-SQS3",
            "This queue is itself a dead-letter destination (SQS redrive target or the stream "
            "event source's on-failure destination); a queue for its failures would have no reader.",
        )
