"""The S3 boundary of the history import: an object's head and its bytes as a stream of blocks, JSON
and JSON lines written, keys listed. Every S3 call of the functions is made here, so ``ClientError``
and botocore's transport errors are caught here and nowhere else, as ``dynamo.py`` does for
DynamoDB: each becomes ``TransientFault`` (the step fails, and is run again), or ``UnreadableInput``
for an object that is not there or not readable to the import (no run of it can succeed)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from sensor_digest.errors import TransientFault, UnreadableInput

BLOCK_BYTES = 1024 * 1024
MISSING = frozenset({"NoSuchKey", "NoSuchBucket", "NoSuchVersion", "404", "NotFound", "AccessDenied", "403"})


@dataclass(frozen=True)
class Head:
    """What S3 says of an object: its version (``None`` in a bucket that keeps none), ETag and size."""

    version: str | None
    etag: str
    size: int


def _fault(exc: ClientError | BotoCoreError, action: str, where: str) -> Exception:
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", "Unknown"))
        if code in MISSING:
            return UnreadableInput(f"{where}: {action} refused ({code}): no such object, or not readable to the import")
        return TransientFault(f"{action} {where} failed: {code}")
    return TransientFault(f"{action} {where} failed (transport): {type(exc).__name__}")


def head(client: Any, bucket: str, key: str) -> Head:
    try:
        answer = client.head_object(Bucket=bucket, Key=key)
    except (ClientError, BotoCoreError) as exc:
        raise _fault(exc, "HeadObject", f"s3://{bucket}/{key}") from exc
    version = answer.get("VersionId")
    kept = version if version and version != "null" else None
    return Head(kept, str(answer.get("ETag", "")), int(answer["ContentLength"]))


def blocks(
    client: Any, bucket: str, key: str, version: str | None, span: tuple[int, int] | None = None
) -> Iterator[bytes]:
    """The object's bytes (that version of it; ``span``: the bytes from the first up to the second), as
    blocks of about ``BLOCK_BYTES``."""
    where = f"s3://{bucket}/{key}"
    request: dict[str, Any] = {"Bucket": bucket, "Key": key}
    if version:
        request["VersionId"] = version
    if span is not None:
        if span[1] <= span[0]:
            return
        request["Range"] = f"bytes={span[0]}-{span[1] - 1}"
    try:
        body = client.get_object(**request)["Body"]
        yield from body.iter_chunks(BLOCK_BYTES)
    except (ClientError, BotoCoreError) as exc:
        raise _fault(exc, "GetObject", where) from exc


def read_json(client: Any, bucket: str, key: str) -> Any:
    text = b"".join(blocks(client, bucket, key, None))
    try:
        return json.loads(text)
    except ValueError as exc:
        raise TransientFault(f"s3://{bucket}/{key} holds no JSON: {exc}") from None


def put_json(client: Any, bucket: str, key: str, value: Any) -> None:
    put_bytes(client, bucket, key, json.dumps(value, ensure_ascii=False).encode("utf-8"), "application/json")


def put_lines(client: Any, bucket: str, key: str, entries: Iterable[Mapping[str, Any]]) -> None:
    """JSON lines, one an entry."""
    text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
    put_bytes(client, bucket, key, text.encode("utf-8"), "application/x-ndjson")


def put_bytes(client: Any, bucket: str, key: str, data: bytes, content_type: str) -> None:
    try:
        client.put_object(Bucket=bucket, Key=key, Body=data, ContentType=content_type)
    except (ClientError, BotoCoreError) as exc:
        raise _fault(exc, "PutObject", f"s3://{bucket}/{key}") from exc


def keys(client: Any, bucket: str, prefix: str) -> list[str]:
    """The keys under ``prefix``, in S3's order (by key)."""
    found: list[str] = []
    try:
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            found.extend(str(o["Key"]) for o in page.get("Contents", []))
    except (ClientError, BotoCoreError) as exc:
        raise _fault(exc, "ListObjectsV2", f"s3://{bucket}/{prefix}") from exc
    return found
