"""``HistoryImport``: the deployed history import (docs/import.md, "On AWS"), with ``importEnabled``
(off by default: nothing of it is deployed; on, it costs nothing while no import runs but what its
bucket holds).

A versioned, encrypted, TLS-only bucket holds the inputs (``inputs/``) and the import's reports
(``import-reports/<object id>/``). A Step Functions state machine imports one object an execution:

1. ``Prepare`` (the prepare function): the object's identity and record, every line read once (an
   object that Distributed Map's reader could not read is refused whole, nothing counted);
2. a Distributed Map whose item reader (JSON lines or CSV, the object's version) hands its rows,
   ``IMPORT_BATCH_ROWS`` a batch with their positions, to the batch function (express child
   workflows, retried on any error; no failure tolerated: the run fails, and its redrive runs the
   failed batches again, their tokens keeping what they wrote from counting twice);
   ``importMaxConcurrency`` batches at once;
3. ``Finish`` (the finish function): the batches added up, one error report, the record finished.

Exposes ``bucket``, ``state_machine``, ``prepare_function``, ``batch_function``, ``finish_function``,
``alarm`` (failed executions) and ``grant_start(grantee)`` for the operators who run
``sensor-digest import --stack``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsii
from aws_cdk import ArnFormat, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from sensor_digest_cdk import nag
from sensor_digest_cdk.lambda_function import IMPORT_BATCH, IMPORT_FINISH, IMPORT_PREPARE, RETENTION, python_function
from sensor_digest_cdk.removal import removal_policy
from sensor_digest_cdk.shape import PipelineShape

IMPORT_BATCH_ROWS = 1000
"""Rows a batch of the deployed import (fixed: its batches are its tokens; another size would make other
tokens, and an object imported again with it would count twice)."""
IMPORT_BATCH_BYTES = 240 * 1024
"""Bytes a batch at most (Step Functions' payload limit is 256 KB): long rows make smaller batches, the
same ones at every run of the same object."""
REPORTS = "import-reports/"
INPUTS = "inputs/"
REPORTS_KEPT = Duration.days(90)
# what each function calls, on its tables (the digest table for the counts and the profiles' reads;
# the ledger for the tokens past a day item's room and the import records)
BATCH_DIGEST_ACTIONS = ["dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:BatchGetItem"]
BATCH_LEDGER_ACTIONS = ["dynamodb:PutItem", "dynamodb:BatchGetItem"]
RECORD_ACTIONS = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
# grant_start: put a file, read the reports, start, follow and redrive an execution
OPERATOR_STATE_ACTIONS = ["states:StartExecution", "states:ListMapRuns"]
OPERATOR_EXECUTION_ACTIONS = ["states:DescribeExecution", "states:RedriveExecution", "states:DescribeMapRun"]


@jsii.implements(sfn.IItemReader)
class _Versioned:
    """An S3 item reader that reads the version of the object the prepare step identified (CDK's readers
    name only a key: an object put again meanwhile would be read under the identity of the one before)."""

    def __init__(self, inner: sfn.S3JsonLItemReader | sfn.S3CsvItemReader, bucket: s3.IBucket) -> None:
        self._inner = inner
        self._bucket = bucket

    @property
    def resource(self) -> str:
        return self._inner.resource

    @property
    def bucket(self) -> s3.IBucket:
        return self._bucket

    @property
    def bucket_name_path(self) -> None:
        return None

    @property
    def max_items(self) -> None:
        return None

    def render(self, query_language: sfn.QueryLanguage | None = None) -> Any:
        rendered = dict(self._inner.render(query_language))
        parameters = dict(rendered["Parameters"])
        parameters["VersionId.$"] = "$.prepared.object.version"
        rendered["Parameters"] = parameters
        return rendered

    def provide_policy_statements(self) -> list[iam.PolicyStatement]:
        return [iam.PolicyStatement(actions=["s3:GetObject", "s3:GetObjectVersion"], resources=[self._objects])]

    def validate_item_reader(self) -> list[str]:
        return list(self._inner.validate_item_reader())

    @property
    def _objects(self) -> str:
        return self._bucket.arn_for_objects("*")


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
        self.batch_function = python_function(self, "BatchFunction", kind=IMPORT_BATCH, **made)  # type: ignore[arg-type]
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
        self.alarm = cloudwatch.Alarm(
            self,
            "FailedAlarm",
            metric=self.state_machine.metric_failed(period=Duration.minutes(5), statistic="Sum"),
            threshold=0,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description="A history import failed: run `sensor-digest import` again with the same source to "
            "redrive it (its failed batches run again; nothing counts twice)",
        )
        self._suppress_nag_findings()

    # -- the state machine ---------------------------------------------------------------------

    def _definition(self, shape: PipelineShape) -> sfn.IChainable:
        prepare = tasks.LambdaInvoke(
            self, "Prepare", lambda_function=self.prepare_function, payload_response_only=True, result_path="$.prepared"
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
        skipped = sfn.Succeed(self, "ImportedBefore", output_path="$.prepared")
        refused = sfn.Succeed(self, "Refused", output_path="$.prepared")
        by_format = (
            sfn.Choice(self, "Format")
            .when(sfn.Condition.string_equals("$.prepared.format", "csv"), self._map(shape, "csv").next(finish))
            .otherwise(self._map(shape, "jsonl").next(finish))
        )
        return prepare.next(
            sfn.Choice(self, "What")
            .when(sfn.Condition.string_equals("$.prepared.action", "skip"), skipped)
            .when(sfn.Condition.string_equals("$.prepared.action", "refuse"), refused)
            .otherwise(by_format)
        )

    def _map(self, shape: PipelineShape, fmt: str) -> sfn.DistributedMap:
        key = sfn.JsonPath.string_at("$.prepared.object.key")
        if fmt == "csv":
            reader: sfn.S3JsonLItemReader | sfn.S3CsvItemReader = sfn.S3CsvItemReader(bucket=self.bucket, key=key)
        else:
            reader = sfn.S3JsonLItemReader(bucket=self.bucket, key=key)
        batch = tasks.LambdaInvoke(
            self, f"Count{fmt.upper()}Batch", lambda_function=self.batch_function, payload_response_only=True
        )
        batch.add_retry(
            errors=["States.ALL"],
            interval=Duration.seconds(2),
            max_attempts=4,
            backoff_rate=2,
            jitter_strategy=sfn.JitterType.FULL,
        )
        rows = sfn.DistributedMap(
            self,
            f"Rows{fmt.upper()}",
            item_reader=_Versioned(reader, self.bucket),
            item_selector={
                "position": sfn.JsonPath.string_at("$$.Map.Item.Index"),
                "row": sfn.JsonPath.string_at("$$.Map.Item.Value"),
            },
            item_batcher=sfn.ItemBatcher(
                max_items_per_batch=IMPORT_BATCH_ROWS,
                max_input_bytes_per_batch=IMPORT_BATCH_BYTES,
                batch_input={  # paths as Amazon States Language writes them (CDK passes BatchInput as it is)
                    "object_id.$": "$.prepared.object_id",
                    "format": fmt,
                    "lines.$": "$.prepared.lines",
                    "reports.$": "$.prepared.reports",
                },
            ),
            max_concurrency=shape.import_max_concurrency,
            tolerated_failure_percentage=0,
            map_execution_type=sfn.StateMachineType.EXPRESS,
            result_writer=sfn.ResultWriter(bucket=self.bucket, prefix=f"{REPORTS}map-runs"),
            result_path="$.map",
        )
        rows.item_processor(batch)
        return rows

    # -- grants ------------------------------------------------------------------------------------

    def _grant_functions(self, table: dynamodb.ITable, ledger: dynamodb.ITable) -> None:
        """Least privilege: each function the item actions it performs, on its tables, and the objects it reads
        or writes (the prepare function reads inputs; every function writes reports; finish lists them)."""
        reports = self.bucket.arn_for_objects(f"{REPORTS}*")
        add = iam.PolicyStatement
        self.prepare_function.add_to_role_policy(
            add(actions=["s3:GetObject", "s3:GetObjectVersion"], resources=[self.bucket.arn_for_objects("*")])
        )
        for function in (self.prepare_function, self.finish_function):
            function.add_to_role_policy(add(actions=RECORD_ACTIONS, resources=[ledger.table_arn]))
        for function in (self.prepare_function, self.batch_function, self.finish_function):
            function.add_to_role_policy(add(actions=["s3:PutObject"], resources=[reports]))
        self.batch_function.add_to_role_policy(add(actions=BATCH_DIGEST_ACTIONS, resources=[table.table_arn]))
        self.batch_function.add_to_role_policy(add(actions=BATCH_LEDGER_ACTIONS, resources=[ledger.table_arn]))
        self.finish_function.add_to_role_policy(add(actions=["s3:GetObject"], resources=[reports]))
        self.finish_function.add_to_role_policy(
            add(
                actions=["s3:ListBucket"],
                resources=[self.bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{REPORTS}*"]}},
            )
        )

    def grant_start(self, grantee: iam.IGrantable) -> iam.Grant:
        """Lets ``grantee`` run ``sensor-digest import --stack``: put files in the bucket and read it (its
        reports), start the state machine, follow its executions and Map runs, and redrive a failed one."""
        objects = self.bucket.grant_read_write(grantee)
        state = iam.Grant.add_to_principal(
            grantee=grantee, actions=OPERATOR_STATE_ACTIONS, resource_arns=[self.state_machine.state_machine_arn]
        )
        stack, name = Stack.of(self), self.state_machine.state_machine_name
        colon = ArnFormat.COLON_RESOURCE_NAME
        executions = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=OPERATOR_EXECUTION_ACTIONS,
            resource_arns=[
                stack.format_arn(service="states", resource="execution", resource_name=f"{name}:*", arn_format=colon),
                stack.format_arn(service="states", resource="mapRun", resource_name=f"{name}/*", arn_format=colon),
            ],
        )
        return objects.combine(state).combine(executions)

    def _suppress_nag_findings(self) -> None:
        """Each accepted cdk-nag finding, with the reason and the exact finding it applies to."""
        functions = [self.prepare_function, self.batch_function, self.finish_function]
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
        execution = (
            'Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,'
            f'{{"Fn::Split":[":",{{"Ref":"{machine}"}}]}}]}}'
        )
        return [f"{execution}:*", f"{execution}/*:*"]
