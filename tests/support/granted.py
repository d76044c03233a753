"""A function's DynamoDB grant against what its code really sends: ``Recorder`` keeps every action a
client sends (each action of a transaction as the IAM action it is authorised as), ``granted`` reads
what the synthesized template lets the function do, on the test's tables. An action the code needs
and the role lacks would be an ``AccessDenied`` that only a deployed stack would show."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk.assertions import Template

from tests.support.tables import Tables
from tests.support.templates import actions, policy_of, table_id

_TRANSACT_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}
READS = ("get_item", "batch_get_item", "query", "scan")
CALLS = (*READS, "put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item")
"""Every DynamoDB call a recorder is asked about (a ``FaultySession``'s ``operations``)."""


class Recorder:
    """A fault rule that injects nothing and keeps ``(IAM action, table name)`` of every call."""

    def __init__(self) -> None:
        self.used: set[tuple[str, str]] = set()

    def __call__(self, operation: str, kwargs: dict[str, Any]) -> None:
        if operation == "transact_write_items":
            for item in kwargs["TransactItems"]:
                [(kind, action)] = item.items()
                self.used.add((f"dynamodb:{_TRANSACT_ACTIONS[kind]}", action["TableName"]))
            return
        name = "dynamodb:" + "".join(part.capitalize() for part in operation.split("_"))
        batched = operation in ("batch_get_item", "batch_write_item")
        self.used |= {(name, table) for table in (kwargs["RequestItems"] if batched else [kwargs["TableName"]])}


def granted(template: Template, tables: Tables, handler: str) -> set[tuple[str, str]]:
    """``(action, table name)`` the function of ``handler`` may do, the template's tables named as the test's."""
    names = {
        json.dumps({"Fn::GetAtt": [table_id(template, "SensorDigest"), "Arn"]}): tables.table,
        json.dumps({"Fn::GetAtt": [table_id(template, "SensorDigestLedger"), "Arn"]}): tables.ledger,
    }
    out = set()
    for statement in policy_of(template, handler):
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        for resource in resources:
            table = names.get(json.dumps(resource))
            out |= {(a, table) for a in actions(statement) if table is not None}
    return out
