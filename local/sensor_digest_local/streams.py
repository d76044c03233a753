"""Reading a table's stream through the ``dynamodbstreams`` API, as Lambda's poller does.

``StreamReader.poll()`` returns the records that arrived since the last call, across every
shard (new shards are discovered on each poll, closed shards are followed to their end), in
stream order per shard. The local runtime and the tests turn them into Lambda events with
``sensor_digest_local.events.stream_event``.
"""

from __future__ import annotations

from typing import Any

from sensor_digest_local.engine import local_client


class StreamReader:
    def __init__(self, endpoint: str, table_name: str, *, client: Any = None, streams: Any = None) -> None:
        self._ddb = client or local_client(endpoint)
        self._streams = streams or local_client(endpoint, "dynamodbstreams")
        self.stream_arn: str = self._ddb.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
        self._iterators: dict[str, str | None] = {}

    def _discover(self) -> None:
        start: str | None = None
        while True:
            kwargs: dict[str, Any] = {"StreamArn": self.stream_arn}
            if start:
                kwargs["ExclusiveStartShardId"] = start
            description = self._streams.describe_stream(**kwargs)["StreamDescription"]
            for shard in description.get("Shards", []):
                shard_id = shard["ShardId"]
                if shard_id not in self._iterators:
                    self._iterators[shard_id] = self._streams.get_shard_iterator(
                        StreamArn=self.stream_arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
                    )["ShardIterator"]
            start = description.get("LastEvaluatedShardId")
            if not start:
                return

    def poll(self, limit: int = 1000) -> list[dict[str, Any]]:
        """Every record not returned before (up to ``limit`` per request, all shards drained)."""
        self._discover()
        records: list[dict[str, Any]] = []
        for shard_id, position in list(self._iterators.items()):
            iterator = position
            while iterator:
                page = self._streams.get_records(ShardIterator=iterator, Limit=limit)
                got = page.get("Records", [])
                records.extend(got)
                iterator = page.get("NextShardIterator")
                if not got:
                    break
            self._iterators[shard_id] = iterator
        return records
