"""SensorDigest core: message parsing, exactly-once day counting and the summary map upsert.

Everything here is plain Python on top of a boto3 DynamoDB client that the caller injects;
the Lambda handlers under ``functions/ingest`` and ``functions/summary`` only wire
configuration and observability around it, and the local runtime reuses it as is.
"""
