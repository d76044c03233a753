"""The contract's two tables: the digest (with its stream, and its sparse ``Profiles`` and ``Alarms``
indexes) and the ledger (with TTL); ``rule_reads``, the read of the alarm rules' two ledger items."""

from __future__ import annotations

from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct

from sensor_digest.store import schema
from sensor_digest_cdk.removal import removal_policy
from sensor_digest_cdk.shape import PipelineShape

_TYPES = {"N": dynamodb.AttributeType.NUMBER, "S": dynamodb.AttributeType.STRING}
# the alarm rules (alarms/store.py RuleStore): the version item, and the rule set when it moved
RULE_READ_ACTIONS = ["dynamodb:GetItem"]


def _attribute(definition: tuple[str, str, str]) -> dynamodb.Attribute:
    name, kind, _ = definition
    return dynamodb.Attribute(name=name, type=_TYPES[kind])


class DigestTables(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, shape: PipelineShape) -> None:
        super().__init__(scope, construct_id)
        provisioned = shape.billing == "provisioned"
        common = {
            "billing_mode": dynamodb.BillingMode.PROVISIONED if provisioned else dynamodb.BillingMode.PAY_PER_REQUEST,
            "read_capacity": shape.read_capacity if provisioned else None,
            "write_capacity": shape.write_capacity if provisioned else None,
            "encryption": dynamodb.TableEncryption.AWS_MANAGED,
            "point_in_time_recovery_specification": dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            "removal_policy": removal_policy(shape),
            "deletion_protection": not shape.destroy,
        }
        self.table = dynamodb.Table(
            self,
            "DigestTable",
            table_name=shape.table_name or None,  # generated unless given
            partition_key=_attribute(schema.DIGEST_KEY_SCHEMA[0]),
            sort_key=_attribute(schema.DIGEST_KEY_SCHEMA[1]),
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            **common,  # type: ignore[arg-type]
        )
        # the read API's list of registered sensors: sparse (only profiles carry its key), an in-place update
        index_partition, index_sort = schema.PROFILE_INDEX_KEY_SCHEMA
        self.table.add_global_secondary_index(
            index_name=schema.PROFILE_INDEX,
            partition_key=_attribute(index_partition),
            sort_key=_attribute(index_sort),
            projection_type=dynamodb.ProjectionType.INCLUDE,
            non_key_attributes=list(schema.PROFILE_INDEX_PROJECTION),
            read_capacity=shape.read_capacity if provisioned else None,
            write_capacity=shape.write_capacity if provisioned else None,
        )
        # the alarms by state (``GET /alarms``): sparse (only an alarm not NORMAL carries ``Alerting``)
        index_partition, index_sort = schema.ALARM_INDEX_KEY_SCHEMA
        self.table.add_global_secondary_index(
            index_name=schema.ALARM_INDEX,
            partition_key=_attribute(index_partition),
            sort_key=_attribute(index_sort),
            projection_type=dynamodb.ProjectionType.ALL,
            read_capacity=shape.read_capacity if provisioned else None,
            write_capacity=shape.write_capacity if provisioned else None,
        )
        self.ledger = dynamodb.Table(
            self,
            "LedgerTable",
            table_name=shape.ledger_table_name or None,
            partition_key=_attribute(schema.LEDGER_KEY_SCHEMA[0]),
            time_to_live_attribute=schema.EXPIRES_AT,
            **common,  # type: ignore[arg-type]
        )


def rule_reads(ledger: dynamodb.ITable) -> iam.PolicyStatement:
    """``GetItem`` of the alarm rules' two ledger items (``RULES_KEY``, ``RULES_VERSION_KEY``), and of no
    other: the partition keys a request may name are those two (``dynamodb:LeadingKeys``)."""
    return iam.PolicyStatement(
        actions=RULE_READ_ACTIONS,
        resources=[ledger.table_arn],
        conditions={
            "ForAllValues:StringEquals": {"dynamodb:LeadingKeys": [schema.RULES_KEY, schema.RULES_VERSION_KEY]}
        },
    )
