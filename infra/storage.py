"""The contract's two tables: the digest (with its stream) and the ledger (with TTL)."""

from __future__ import annotations

from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from infra.settings import Settings


class Storage(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings) -> None:
        super().__init__(scope, construct_id)
        provisioned = settings.billing == "provisioned"
        common = {
            "billing_mode": dynamodb.BillingMode.PROVISIONED if provisioned else dynamodb.BillingMode.PAY_PER_REQUEST,
            "read_capacity": settings.read_capacity if provisioned else None,
            "write_capacity": settings.write_capacity if provisioned else None,
            "encryption": dynamodb.TableEncryption.AWS_MANAGED,
            "point_in_time_recovery_specification": dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            "removal_policy": settings.removal_policy,
            "deletion_protection": not settings.destroy,
        }
        self.table = dynamodb.Table(
            self,
            "DigestTable",
            table_name=settings.table_name,
            partition_key=dynamodb.Attribute(name="SensorId", type=dynamodb.AttributeType.NUMBER),
            sort_key=dynamodb.Attribute(name="Date", type=dynamodb.AttributeType.STRING),
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            **common,  # type: ignore[arg-type]
        )
        self.ledger = dynamodb.Table(
            self,
            "LedgerTable",
            table_name=settings.ledger_table_name,
            partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING),
            time_to_live_attribute="ExpiresAt",
            **common,  # type: ignore[arg-type]
        )
