"""The moto tier: the handlers end to end on moto's DynamoDB and SQS, no Java, in seconds.

moto is a quick check here, never the authority: every correctness claim is also tested on
DynamoDB Local (tests/dynamodb_local), and ``test_moto_divergences.py`` pins where moto differs.
"""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from sensor_digest_tools.aws.dynamodb_local import create_tables
from tests.support.moto_tier import MotoAws

REGION = "us-east-1"


@pytest.fixture
def moto_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoAws]:
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS"):
        monkeypatch.delenv(name, raising=False)  # everything to moto, nothing to a local engine
    with mock_aws():
        session = boto3.Session(region_name=REGION, aws_access_key_id="moto", aws_secret_access_key="moto")
        ddb, sqs = session.client("dynamodb"), session.client("sqs")
        create_tables(ddb, "SensorDigest", "SensorDigestLedger")
        dlq_url = sqs.create_queue(QueueName="SensorDigestDLQ")["QueueUrl"]
        yield MotoAws(session, ddb, sqs, "SensorDigest", "SensorDigestLedger", dlq_url)
