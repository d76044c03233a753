"""``HistoryImport``: the deployed history import (docs/import.md, "On AWS"), with ``importEnabled``
(off by default: nothing of it is deployed; on, it costs nothing while no import runs but what its
bucket holds).

A versioned, encrypted, TLS-only bucket holds the inputs (``inputs/``) and the import's reports and
runs (``import-reports/<object id>/``). A Step Functions state machine imports one object an execution:

1. ``Prepare`` (the prepare function): the object read through once: its identity (its content), its
   record, its chunks of rows (``runs/<execution>/chunks.json``) and how many partitions count them;
2. ``ReadChunks``, a Distributed Map over the chunks (its S3 JSON item reader): the read function reads
   each chunk's bytes (that version of the object) with the local import's own code and writes its
   valid rows to their sensor-days' partitions (express child workflows);
3. ``CountPartitions``, a Distributed Map over the partitions: the count function counts each, every
   sensor-day from all of its rows at once (standard child workflows);
4. ``Finish`` (the finish function): the figures added up and checked, one error report, the record.

Each map runs ``importMaxConcurrency`` items at once, retries a failed item, and tolerates no failure:
the run fails, and its redrive runs the failed items again (an item run again finds what it wrote: the
rows' identities, kept on their days).

Exposes ``bucket``, ``state_machine``, ``prepare_function``, ``read_function``, ``count_function``,
``finish_function``, ``alarm`` (failed executions) and ``grant_start(grantee)`` for the operators who run
``sensor-digest import --stack``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk import ArnFormat, Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from sensor_digest_cdk import nag
from sensor_digest_cdk.lambda_function import (
    IMPORT_COUNT,
    IMPORT_FINISH,
    IMPORT_PREPARE,
    IMPORT_READ,
    RETENTION,
    python_function,
)
from sensor_digest_cdk.monitoring import alarm
from sensor_digest_cdk.removal import removal_policy
from sensor_digest_cdk.shape import PipelineShape

REPORTS = "import-reports/"
INPUTS = "inputs/"
REPORTS_KEPT = Duration.days(90)
# what each function calls, on its tables (the digest table for the counts and the profiles' reads; the
# ledger for the zone pins, the pages of imported identities, the live ledger's pages and markers, and
# the import records)
READ_DIGEST_ACTIONS = ["dynamodb:GetItem", "dynamodb:BatchGetItem"]
READ_LEDGER_ACTIONS = ["dynamodb:PutItem", "dynamodb:BatchGetItem"]
COUNT_DIGEST_ACTIONS = ["dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:BatchGetItem"]
COUNT_LEDGER_ACTIONS = ["dynamodb:PutItem", "dynamodb:BatchGetItem"]
RECORD_ACTIONS = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
# grant_start: put a file, read the reports, start, follow and redrive an execution
OPERATOR_INPUT_ACTIONS = ["s3:PutObject", "s3:GetObject", "s3:AbortMultipartUpload"]
OPERATOR_STATE_ACTIONS = ["states:StartExecution", "states:ListMapRuns"]
OPERATOR_EXECUTION_ACTIONS = ["states:DescribeExecution", "states:RedriveExecution", "states:DescribeMapRun"]
OBJECT_READS = ["s3:GetObject", "s3:GetObjectVersion"]
RESULT_WRITER_V2 = "@aws-cdk/aws-stepfunctions:useDistributedMapResultWriterV2"
"""CDK renders a Distributed Map's ``ResultWriterV2`` only under this feature flag (else the deprecated
``ResultWriter``, with a warning at every synth): set on the construct's own scope, whatever the app's."""


class HistoryImport(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        shape: PipelineShape,
        asset: Path,
        table: dynamodb.ITable,
        ledger: dynamodb.ITable,
    ) -> None:
        super().__init__(scope, construct_id)
        self.node.set_context(RESULT_WRITER_V2, True)
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            removal_policy=removal_policy(shape),
            lifecycle_rules=[
                s3.LifecycleRule(id="ReportsExpire", prefix=REPORTS, expiration=REPORTS_KEPT),
                s3.LifecycleRule(id="OldVersionsExpire", noncurrent_version_expiration=REPORTS_KEPT),
                s3.LifecycleRule(id="UnfinishedUploadsEnd", abort_incomplete_multipart_upload_after=Duration.days(7)),
            ],
        )
        environment = shape.import_environment(
            table=table.table_name, ledger=ledger.table_name, bucket=self.bucket.bucket_name
        )
        made = {"shape": shape, "asset": asset, "environment": environment}
        self.prepare_function = python_function(self, "PrepareFunction", kind=IMPORT_PREPARE, **made)  # type: ignore[arg-type]
        self.read_function = python_function(self, "ReadFunction", kind=IMPORT_READ, **made)  # type: ignore[arg-type]
        self.count_function = python_function(self, "CountFunction", kind=IMPORT_COUNT, **made)  # type: ignore[arg-type]
        self.finish_function = python_function(self, "FinishFunction", kind=IMPORT_FINISH, **made)  # type: ignore[arg-type]
        self._grant_functions(table, ledger)
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            definition_body=sfn.DefinitionBody.from_chainable(self._definition(shape)),
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=logs.LogGroup(
                    self,
                    "StateMachineLogs",
                    retention=RETENTION[shape.log_retention_days],
                    removal_policy=removal_policy(shape),
                ),
                level=sfn.LogLevel.ALL,
                include_execution_data=False,  # the rows are the fleet's data: the logs say what ran, not what it read
            ),
        )
        self.alarm = alarm(
            self,
            "FailedAlarm",
            self.state_machine.metric_failed(period=Duration.minutes(5), statistic="Sum"),
            "A history import failed: run `sensor-digest import` again with the same source to "
            "redrive it (its failed batches run again; nothing counts twice)",
        )
        self._suppress_nag_findings()

    # -- the state machine ---------------------------------------------------------------------

    @property
    def functions(self) -> list[Any]:
        return [self.prepare_function, self.read_function, self.count_function, self.finish_function]

    def _definition(self, shape: PipelineShape) -> sfn.IChainable:
        prepare = tasks.LambdaInvoke(
            self,
            "Prepare",
            lambda_function=self.prepare_function,
            payload=sfn.TaskInput.from_object(
                {"input": sfn.JsonPath.object_at("$"), "run": sfn.JsonPath.string_at("$$.Execution.Name")}
            ),
            payload_response_only=True,
            result_path="$.prepared",
        )
        finish = tasks.LambdaInvoke(
            self,
            "Finish",
            lambda_function=self.finish_function,
            payload=sfn.TaskInput.from_object({"prepared": sfn.JsonPath.object_at("$.prepared")}),
            payload_response_only=True,
            result_path="$.finished",
            output_path="$.finished",
        )
        for task in (prepare, finish):
            task.add_retry(errors=["States.TaskFailed"], interval=Duration.seconds(5), max_attempts=3, backoff_rate=2)
        read = self._map(
            shape,
            "ReadChunks",
            self.read_function,
            "chunk",
            item_reader=sfn.S3JsonItemReader(bucket=self.bucket, key=sfn.JsonPath.string_at("$.prepared.chunks")),
            kind=sfn.StateMachineType.EXPRESS,
        )
        count = self._map(
            shape,
            "CountPartitions",
            self.count_function,
            "partition",
            items_path="$.prepared.partitions",
            kind=sfn.StateMachineType.STANDARD,
        )
        skipped = sfn.Succeed(self, "ImportedBefore", output_path="$.prepared")
        refused = sfn.Succeed(self, "Refused", output_path="$.prepared")
        return prepare.next(
            sfn.Choice(self, "What")
            .when(sfn.Condition.string_equals("$.prepared.action", "skip"), skipped)
            .when(sfn.Condition.string_equals("$.prepared.action", "refuse"), refused)
            .otherwise(read.next(count).next(finish))
        )

    def _map(
        self,
        shape: PipelineShape,
        name: str,
        function: Any,
        item: str,
        *,
        kind: sfn.StateMachineType,
        item_reader: sfn.IItemReader | None = None,
        items_path: str | None = None,
    ) -> sfn.DistributedMap:
        """A map of one function over the run's chunks or partitions: each item with the prepare step's
        answer, retried on any error, no failure tolerated; its results (small) written to the bucket."""
        step = tasks.LambdaInvoke(self, f"{name}Item", lambda_function=function, payload_response_only=True)
        step.add_retry(
            errors=["States.ALL"],
            interval=Duration.seconds(2),
            max_attempts=4,
            backoff_rate=2,
            jitter_strategy=sfn.JitterType.FULL,
        )
        mapped = sfn.DistributedMap(
            self,
            name,
            item_reader=item_reader,
            items_path=items_path,
            item_selector={
                item: sfn.JsonPath.object_at("$$.Map.Item.Value"),
                "prepared": sfn.JsonPath.object_at("$.prepared"),
            },
            max_concurrency=shape.import_max_concurrency,
            tolerated_failure_percentage=0,
            map_execution_type=kind,
            result_writer_v2=sfn.ResultWriterV2(bucket=self.bucket, prefix=f"{REPORTS}map-runs"),
            result_path=sfn.JsonPath.DISCARD,
        )
        mapped.item_processor(step)
        return mapped

    # -- grants ------------------------------------------------------------------------------------

    def _grant_functions(self, table: dynamodb.ITable, ledger: dynamodb.ITable) -> None:
        """Least privilege: each function the item actions it performs, on its tables, and the objects it reads
        or writes (prepare and read read the inputs; every function writes reports; count and finish read
        and list the run's)."""
        reports = self.bucket.arn_for_objects(f"{REPORTS}*")
        add = iam.PolicyStatement
        listed = add(
            actions=["s3:ListBucket"],
            resources=[self.bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{REPORTS}*"]}},
        )
        for function in (self.prepare_function, self.read_function):
            function.add_to_role_policy(add(actions=OBJECT_READS, resources=[self.bucket.arn_for_objects("*")]))
        for function in (self.prepare_function, self.finish_function):
            function.add_to_role_policy(add(actions=RECORD_ACTIONS, resources=[ledger.table_arn]))
        for function in self.functions:
            function.add_to_role_policy(add(actions=["s3:PutObject"], resources=[reports]))
        for function in (self.count_function, self.finish_function):
            function.add_to_role_policy(add(actions=["s3:GetObject"], resources=[reports]))
            function.add_to_role_policy(listed)
        self.read_function.add_to_role_policy(add(actions=READ_DIGEST_ACTIONS, resources=[table.table_arn]))
        self.read_function.add_to_role_policy(add(actions=READ_LEDGER_ACTIONS, resources=[ledger.table_arn]))
        self.count_function.add_to_role_policy(add(actions=COUNT_DIGEST_ACTIONS, resources=[table.table_arn]))
        self.count_function.add_to_role_policy(add(actions=COUNT_LEDGER_ACTIONS, resources=[ledger.table_arn]))

    def grant_start(self, grantee: iam.IGrantable) -> iam.Grant:
        """Lets ``grantee`` run ``sensor-digest import --stack``: put files under ``inputs/`` and read them
        (their heads), list the bucket, read the reports under ``import-reports/``, start the state machine,
        follow its executions and Map runs, and redrive a failed one.

        Objects, executions and Map runs are named at run time, so their ARNs end in a wildcard, which
        cdk-nag's ``AwsSolutions-IAM5`` reports on the grantee's policy: the grant records exactly those
        findings as accepted on the grantee, with the reason (any other wildcard of it is still reported)."""
        add = iam.Grant.add_to_principal
        inputs, reports = self.bucket.arn_for_objects(f"{INPUTS}*"), self.bucket.arn_for_objects(f"{REPORTS}*")
        grant = add(grantee=grantee, actions=OPERATOR_INPUT_ACTIONS, resource_arns=[inputs])
        grant = grant.combine(add(grantee=grantee, actions=["s3:GetObject"], resource_arns=[reports]))
        grant = grant.combine(add(grantee=grantee, actions=["s3:ListBucket"], resource_arns=[self.bucket.bucket_arn]))
        machine = self.state_machine.state_machine_arn
        grant = grant.combine(add(grantee=grantee, actions=OPERATOR_STATE_ACTIONS, resource_arns=[machine]))
        stack, name = Stack.of(self), self.state_machine.state_machine_name
        colon = ArnFormat.COLON_RESOURCE_NAME
        runs = [
            stack.format_arn(service="states", resource="execution", resource_name=f"{name}:*", arn_format=colon),
            stack.format_arn(service="states", resource="mapRun", resource_name=f"{name}/*", arn_format=colon),
        ]
        grant = grant.combine(add(grantee=grantee, actions=OPERATOR_EXECUTION_ACTIONS, resource_arns=runs))
        if isinstance(grantee, Construct):  # a role, user or function of the app: its policy is in the app
            nag.accept(
                grantee,
                "AwsSolutions-IAM5",
                "sensor-digest import --stack: the files it puts under inputs/ and the reports under "
                "import-reports/ of the import's own bucket, and the executions and Map runs of its state "
                "machine, are named at run time.",
                findings=self._operator_findings(),
                nag2_children=True,
            )
        return grant

    def _operator_findings(self) -> list[str]:
        bucket = f"Resource::<{self._id(self.bucket)}.Arn>"
        region, account = nag.arn_env(self)
        machine = f"<{self._id(self.state_machine)}.Name>"
        states = f"Resource::arn:<AWS::Partition>:states:{region}:{account}"
        return [
            f"{bucket}/{INPUTS}*",
            f"{bucket}/{REPORTS}*",
            f"{states}:execution:{machine}:*",
            f"{states}:mapRun:{machine}/*",
        ]

    def _suppress_nag_findings(self) -> None:
        """Each accepted cdk-nag finding, with the reason and the exact finding it applies to."""
        functions = self.functions
        roles = [f.role for f in functions]
        nag.accept(
            functions,
            "AwsSolutions-L1",
            "Python 3.13, as the pipeline's other functions: the newest Python the project runs its unit tier on "
            "(make test-unit-py313).",
        )
        nag.accept(
            roles,  # type: ignore[arg-type]
            "AwsSolutions-IAM5",
            "X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions; the functions' "
            "reports are the objects under import-reports/ (a prefix: one object per batch), and the prepare "
            "function reads the object it is given, anywhere in the import's own bucket.",
            findings=[
                "Resource::*",
                f"Resource::<{self._id(self.bucket)}.Arn>/*",
                f"Resource::<{self._id(self.bucket)}.Arn>/{REPORTS}*",
            ],
            nag2_children=True,
        )
        nag.accept(
            self.state_machine,
            "AwsSolutions-IAM5",
            "CDK's LambdaInvoke grants each function's versions (<arn>:*); the Distributed Map's item reader and "
            "result writer read and write the objects of the import's own bucket; its child workflows are "
            "executions of this state machine (their ARNs are made at run time); X-Ray's actions take no resource.",
            findings=[
                "Resource::*",
                *(f"Resource::<{self._id(f)}.Arn>:*" for f in functions),
                f"Resource::<{self._id(self.bucket)}.Arn>/*",
                f"Resource::arn:<AWS::Partition>:s3:::<{self._id(self.bucket)}>/*",
                *self._child_executions(),
            ],
            nag2_children=True,
        )
        no_access_logs = (
            "The import's bucket holds the files an operator imports and the import's own reports; who put "
            "and read what is in CloudTrail's management events and the state machine's logs, and server "
            "access logs would need a second bucket for nothing else."
        )
        nag.accept(self.bucket, "AwsSolutions-S1", no_access_logs)
        bucket = self.bucket.node.default_child
        assert isinstance(bucket, s3.CfnBucket)
        bucket.add_metadata("checkov", {"skip": [{"id": "CKV_AWS_18", "comment": no_access_logs}]})  # this bucket only

    @staticmethod
    def _id(construct: Construct) -> str:
        return Stack.of(construct).get_logical_id(construct.node.default_child)  # type: ignore[arg-type]

    def _child_executions(self) -> list[str]:
        machine = self._id(self.state_machine)
        region, account = nag.arn_env(self)
        execution = (
            f'Resource::arn:<AWS::Partition>:states:{region}:{account}:execution:{{"Fn::Select":[6,'
            f'{{"Fn::Split":[":",{{"Ref":"{machine}"}}]}}]}}'
        )
        return [f"{execution}:*", f"{execution}/*:*"]
