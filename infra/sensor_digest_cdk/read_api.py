"""The read API capability: an API Gateway HTTP API with IAM authorization on every route, in front
of the query function (``functions/api/handler.py``), whose role may read the digest table and write
its alarm items only (the operator's actions), and read the alarm rules of the ledger.

``ReadApi(scope, id, *, shape, label, asset, table, ledger, alarm_topic=None)`` exposes ``api``,
``function``, ``stage``, ``url`` and ``access_logs``, ``grant_invoke(grantee)`` for consumers (AWS
principals that sign their requests with SigV4: the ``GET`` routes) and
``grant_alarm_operations(grantee)`` for operators (the ``POST`` routes of the alarms' actions). The
stage throttles (``apiThrottleRateLimit``, ``apiThrottleBurstLimit``), writes one JSON access log line
per request to a log group of its own, and an alarm fires on any 5xx (to ``alarm_topic`` when given).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsii
from aws_cdk import Duration, Stack
from aws_cdk import aws_apigateway as apigateway
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk.aws_apigatewayv2_authorizers import HttpIamAuthorizer
from aws_cdk.aws_apigatewayv2_integrations import HttpLambdaIntegration
from constructs import Construct

from sensor_digest.alarms.model import ACTIONS
from sensor_digest.store import schema
from sensor_digest_cdk import nag
from sensor_digest_cdk.digest_tables import rule_reads
from sensor_digest_cdk.lambda_function import API, RETENTION, FunctionKind, python_function
from sensor_digest_cdk.monitoring import alarm
from sensor_digest_cdk.removal import removal_policy
from sensor_digest_cdk.shape import PipelineShape

# Only what the function calls (one Query a request), on the digest table and its Profiles index
READ_ACTIONS = ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem"]
ALARM_INDEX_ACTIONS = ["dynamodb:Query"]  # GET /alarms: the alarms in a state, from the Alarms index
ALARM_WRITE_ACTIONS = ["dynamodb:PutItem"]  # an operator's action: the alarm's next version, on condition
ROUTES = (  # GET
    "/sensors",
    "/sensors/{sensor_id}/days",
    "/sensors/{sensor_id}/months",
    "/sensors/{sensor_id}/hours",
    "/sensors/{sensor_id}/readings",
    "/sensors/{sensor_id}/readings/hours",
    "/silence",
    "/alarms",
    "/sensors/{sensor_id}/alarms",
    "/alarms/{alarm_id}/history",
)
OPERATOR_ROUTES = tuple(f"/alarms/{{alarm_id}}/{action}" for action in ACTIONS)  # POST, one per action


def _invoked(routes: tuple[str, ...]) -> tuple[str, ...]:
    """The routes as execute-api ARNs name them: a path parameter is a wildcard there."""
    return tuple(re.sub(r"\{[^}]+\}", "*", route) for route in routes)


INVOKED_PATHS = _invoked(ROUTES)
OPERATED_PATHS = _invoked(OPERATOR_ROUTES)
STAGE = "$default"
# One JSON line per request: who (the signing principal), what, and how it went
ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTime",
    "sourceIp": "$context.identity.sourceIp",
    "caller": "$context.identity.caller",
    "userArn": "$context.identity.userArn",
    "method": "$context.httpMethod",
    "path": "$context.path",
    "routeKey": "$context.routeKey",
    "status": "$context.status",
    "responseLength": "$context.responseLength",
    "latencyMs": "$context.responseLatency",
    "integrationError": "$context.integrationErrorMessage",
    "authorizerError": "$context.authorizer.error",
}
ACCESS_LOG_FORMAT = json.dumps(ACCESS_LOG_FIELDS, separators=(",", ":"))


@jsii.implements(apigwv2.IAccessLogSettings)
class _AccessLogs:
    """The stage's access log settings: a log group and the JSON line above."""

    def __init__(self, group: logs.ILogGroup) -> None:
        self._destination = apigwv2.LogGroupLogDestination(group)

    @property
    def destination(self) -> apigwv2.IAccessLogDestination:
        return self._destination

    @property
    def format(self) -> apigateway.AccessLogFormat:
        return apigateway.AccessLogFormat.custom(ACCESS_LOG_FORMAT)


def table_reader(
    scope: Construct,
    *,
    shape: PipelineShape,
    asset: Path,
    kind: FunctionKind,
    table: dynamodb.ITable,
    actions: list[str],
    environment: dict[str, str],
) -> lambda_.Function:
    """A function (``Function`` in ``scope``) that reads the digest table: ``actions`` on the table and its
    Profiles index, with ``environment`` (the read API's ``GET /silence`` is the silence check, with the same
    default threshold). The read API's query function and the scheduled silence check's."""
    function = python_function(scope, "Function", shape=shape, asset=asset, kind=kind, environment=environment)
    index = f"{table.table_arn}/index/{schema.PROFILE_INDEX}"
    function.add_to_role_policy(iam.PolicyStatement(actions=actions, resources=[table.table_arn, index]))
    return function


class ReadApi(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        shape: PipelineShape,
        label: str,
        asset: Path,
        table: dynamodb.ITable,
        ledger: dynamodb.ITable,
        alarm_topic: sns.ITopic | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.function = table_reader(
            self,
            shape=shape,
            asset=asset,
            kind=API,
            table=table,
            actions=READ_ACTIONS,
            environment=shape.api_environment(table=table.table_name, ledger=ledger.table_name),
        )
        integration = HttpLambdaIntegration(
            "Query",
            self.function,
            payload_format_version=apigwv2.PayloadFormatVersion.VERSION_2_0,
            timeout=Duration.seconds(shape.api_integration_timeout_seconds),
        )
        # Every route, $default (any other path or method: the function's 404 or 405) among them,
        # takes SigV4-signed requests of principals IAM lets invoke it, and nothing else
        self.api = apigwv2.HttpApi(
            self,
            "Api",
            api_name=f"{label.replace('/', '-')}-read-api",
            description=f"{label}: day counts, monthly summaries, registered sensors and alarms (IAM auth)",
            default_authorizer=HttpIamAuthorizer(),
            default_integration=integration,
            create_default_stage=False,
        )
        for path in ROUTES:
            self.api.add_routes(path=path, methods=[apigwv2.HttpMethod.GET], integration=integration)
        for path in OPERATOR_ROUTES:
            self.api.add_routes(path=path, methods=[apigwv2.HttpMethod.POST], integration=integration)
        self._grant_alarms(table, ledger)
        self.access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=RETENTION[shape.log_retention_days],
            removal_policy=removal_policy(shape),
        )
        self.stage = apigwv2.HttpStage(
            self,
            "Stage",
            http_api=self.api,
            stage_name=STAGE,
            auto_deploy=True,
            throttle=apigwv2.ThrottleSettings(
                rate_limit=shape.api_throttle_rate_limit, burst_limit=shape.api_throttle_burst_limit
            ),
            access_log_settings=_AccessLogs(self.access_logs),
        )
        self.url = self.stage.url
        self.server_errors_alarm = alarm(
            self,
            "ServerErrorsAlarm",
            self.api.metric_server_error(period=Duration.minutes(5), statistic="Sum"),
            "The read API answered 5xx: the query function failed, or DynamoDB throttled it",
            topic=alarm_topic,
        )
        self._suppress_nag_findings()

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` call the API's ``GET`` routes (signed with SigV4), the alarms' among them, and no
        other path or method: not the ``POST`` routes of the alarms' actions (``grant_alarm_operations``).

        A route's path parameter (``{sensor_id}``) is a wildcard in its execute-api ARN, which cdk-nag's
        ``AwsSolutions-IAM5`` reports on the grantee's policy: the grant records that finding as
        accepted, with its reason, for exactly these ARNs (any other wildcard of the grantee is still
        reported), so an app with ``AwsSolutionsChecks`` synthesizes clean."""
        return self._grant_routes(
            grantee,
            "GET",
            INVOKED_PATHS,
            "execute-api:Invoke on the read API's GET routes only; their {sensor_id} and {alarm_id} path "
            "parameters are wildcards in the route's execute-api ARN by API Gateway's own format.",
        )

    def grant_alarm_operations(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` act on alarms: ``POST /alarms/{alarm_id}/<action>`` for each action
        (acknowledge, snooze, reset, disable, enable), and nothing else (reading them is ``grant_invoke``).
        The ``{alarm_id}`` wildcard of these ARNs is accepted on the grantee as ``grant_invoke``'s are."""
        return self._grant_routes(
            grantee,
            "POST",
            OPERATED_PATHS,
            "execute-api:Invoke on the read API's POST routes of the alarms' actions only; their {alarm_id} "
            "path parameter is a wildcard in the route's execute-api ARN by API Gateway's own format.",
        )

    def _grant_routes(self, grantee: iam.IGrantable, method: str, paths: tuple[str, ...], reason: str) -> iam.Grant:
        """``execute-api:Invoke`` of ``method`` on ``paths`` of the stage, the wildcards' findings accepted."""
        grant = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["execute-api:Invoke"],
            resource_arns=[self.api.arn_for_execute_api(method, path, STAGE) for path in paths],
        )
        if isinstance(grantee, Construct):  # a role, user or function of the app: its policy is in the app
            nag.accept(
                grantee,
                "AwsSolutions-IAM5",
                reason,
                findings=self._invoke_findings(method, paths),
                nag2_applies_to=[nag.regex_applies_to(self._invoke_finding(method, paths))],
                nag2_children=True,
            )
        return grant

    def _invoke_prefix(self, method: str) -> str:
        """How cdk-nag writes the start of a grant's ARNs in a finding
        (``Resource::arn:<AWS::Partition>:execute-api:...:<api logical id>/$default/GET``)."""
        api_id = Stack.of(self).resolve(self.api.node.default_child.logical_id)  # type: ignore[union-attr]
        region, account = nag.arn_env(self)
        return f"Resource::arn:<AWS::Partition>:execute-api:{region}:{account}:<{api_id}>/{STAGE}/{method}"

    def _invoke_findings(self, method: str, paths: tuple[str, ...]) -> list[str]:
        """The ``AwsSolutions-IAM5`` findings of a grant's ARNs that hold a wildcard (cdk-nag 3
        acknowledges each by its text)."""
        return [self._invoke_prefix(method) + path for path in paths if "*" in path]

    def _invoke_finding(self, method: str, paths: tuple[str, ...]) -> str:
        """The same findings as the ``/regex/`` cdk-nag 2 takes."""
        wild = "|".join(re.escape(path) for path in paths if "*" in path)
        return f"/^{re.escape(self._invoke_prefix(method))}(?:{wild})$/"

    def _grant_alarms(self, table: dynamodb.ITable, ledger: dynamodb.ITable) -> None:
        """The alarm routes' grants beyond the reads of the table: the Alarms index's Query, the
        operator's PutItem of an alarm item, and GetItem of the alarm rules' two ledger items alone."""
        index = f"{table.table_arn}/index/{schema.ALARM_INDEX}"
        self.function.add_to_role_policy(iam.PolicyStatement(actions=ALARM_INDEX_ACTIONS, resources=[index]))
        self.function.add_to_role_policy(iam.PolicyStatement(actions=ALARM_WRITE_ACTIONS, resources=[table.table_arn]))
        self.function.add_to_role_policy(rule_reads(ledger))

    def _suppress_nag_findings(self) -> None:
        """The query function's accepted cdk-nag findings, each with its reason and what it applies to."""
        nag.accept_table_reader(self.function, self.function.role, "the function")  # type: ignore[arg-type]
