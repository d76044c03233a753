"""The tables' definitions as ``CreateTable`` takes them (on demand, as the stack makes them), from
the key schemas ``schema.py`` names: the local engine, the tests and the benchmark create them here."""

from __future__ import annotations

from typing import Any

from sensor_digest.store.schema import (
    ALARM_INDEX,
    ALARM_INDEX_KEY_SCHEMA,
    ALERTING,
    DIGEST_KEY_SCHEMA,
    PROFILE_INDEX,
    PROFILE_INDEX_KEY_SCHEMA,
    PROFILE_INDEX_PROJECTION,
    PROFILE_LIST,
)

KeySchema = tuple[tuple[str, str, str], ...]


def _key_schema(schema: KeySchema) -> list[dict[str, str]]:
    return [{"AttributeName": name, "KeyType": role} for name, _, role in schema]


def create_table_params(table_name: str, schema: KeySchema) -> dict[str, Any]:
    """``CreateTable`` parameters of a table with this key schema (on demand, as the stack makes it)."""
    return {
        "TableName": table_name,
        "AttributeDefinitions": [{"AttributeName": name, "AttributeType": kind} for name, kind, _ in schema],
        "KeySchema": _key_schema(schema),
        "BillingMode": "PAY_PER_REQUEST",
    }


def create_digest_table_params(table_name: str) -> dict[str, Any]:
    """``CreateTable`` parameters of the digest table as the stack makes it: its keys, the
    ``Profiles`` and ``Alarms`` indexes and the stream."""
    params = create_table_params(table_name, DIGEST_KEY_SCHEMA)
    params["AttributeDefinitions"].append({"AttributeName": PROFILE_LIST, "AttributeType": "S"})
    params["AttributeDefinitions"].append({"AttributeName": ALERTING, "AttributeType": "S"})
    params["GlobalSecondaryIndexes"] = [
        {
            "IndexName": PROFILE_INDEX,
            "KeySchema": _key_schema(PROFILE_INDEX_KEY_SCHEMA),
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(PROFILE_INDEX_PROJECTION)},
        },
        {
            "IndexName": ALARM_INDEX,
            "KeySchema": _key_schema(ALARM_INDEX_KEY_SCHEMA),
            "Projection": {"ProjectionType": "ALL"},
        },
    ]
    params["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    return params
