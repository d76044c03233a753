"""Reading a table's stream through the ``dynamodbstreams`` API, as Lambda's poller does.

``StreamReader.poll()`` returns the records that arrived since the last call, across every
shard (new shards are discovered on each poll, closed shards are followed to their end), in
stream order per shard. It remembers the last sequence number read from each shard, so an
iterator that expired or was refused (DynamoDB Local refuses a ``TRIM_HORIZON`` iterator taken
while the shard was still empty) is re-acquired ``AFTER_SEQUENCE_NUMBER`` without losing or
repeating a record. The local runtime and the tests turn records into Lambda events with
``sensor_digest_tools.lambda_runtime.events.stream_event``.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from sensor_digest_tools.aws.session import local_client

REACQUIRE = ("TrimmedDataAccessException", "ExpiredIteratorException")


class StreamReader:
    def __init__(self, endpoint: str, table_name: str, *, client: Any = None, streams: Any = None) -> None:
        self._ddb = client or local_client(endpoint)
        self._streams = streams or local_client(endpoint, "dynamodbstreams")
        self.stream_arn: str = self._ddb.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
        self._iterators: dict[str, str | None] = {}
        self._last: dict[str, str] = {}

    def _discover(self) -> None:
        start: str | None = None
        while True:
            kwargs: dict[str, Any] = {"StreamArn": self.stream_arn}
            if start:
                kwargs["ExclusiveStartShardId"] = start
            description = self._streams.describe_stream(**kwargs)["StreamDescription"]
            for shard in description.get("Shards", []):
                if shard["ShardId"] not in self._iterators:
                    self._iterators[shard["ShardId"]] = self._position(shard["ShardId"])
            start = description.get("LastEvaluatedShardId")
            if not start:
                return

    def _position(self, shard_id: str) -> str:
        kwargs: dict[str, Any] = {"StreamArn": self.stream_arn, "ShardId": shard_id}
        if shard_id in self._last:
            kwargs.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=self._last[shard_id])
        else:
            kwargs["ShardIteratorType"] = "TRIM_HORIZON"
        return str(self._streams.get_shard_iterator(**kwargs)["ShardIterator"])

    def _page(self, shard_id: str, iterator: str, limit: int) -> dict[str, Any]:
        try:
            return dict(self._streams.get_records(ShardIterator=iterator, Limit=limit))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in REACQUIRE:
                raise
            return dict(self._streams.get_records(ShardIterator=self._position(shard_id), Limit=limit))

    def poll(self, limit: int = 1000) -> list[dict[str, Any]]:
        """Every record not returned before (up to ``limit`` per request, all shards drained)."""
        self._discover()
        records: list[dict[str, Any]] = []
        for shard_id, position in list(self._iterators.items()):
            iterator = position
            while iterator:
                page = self._page(shard_id, iterator, limit)
                got = page.get("Records", [])
                if got:
                    records.extend(got)
                    self._last[shard_id] = got[-1]["dynamodb"]["SequenceNumber"]
                iterator = page.get("NextShardIterator")
                if not got:
                    break
            self._iterators[shard_id] = iterator
        return records
