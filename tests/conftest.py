"""Shared fixtures. Engines: DynamoDB Local (AWS's own engine) for every DynamoDB claim; moto for SQS.

Each folder under tests/ is a tier, one engine (tests/support/tiers.py, whose hooks are registered
here): its tests carry its marker, and a test under tests/unit/ or tests/repository/ that asks for
one of the engine fixtures below fails before the engine starts, saying where it belongs.

The session starts one DynamoDB Local on a free port (or uses ``AWS_ENDPOINT_URL_DYNAMODB`` when it
is already set and answers), and every test gets its own freshly named tables. The ingest fixtures
(the real ingest service with DynamoDB Local behind it and moto's SQS as DLQ) serve the whole of
tests/dynamodb_local; its reliability suite wraps ``ingest_session`` in its fault layer.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import boto3
import pytest
from hypothesis import settings

# The shared test code asserts too (the model's bounds, the delivery loop): pytest rewrites its
# asserts as it does the tests' (registered before anything imports it).
pytest.register_assert_rewrite("tests.support")

# No test may rest on how fast a busy machine runs: Hypothesis's 200 ms deadline per example is off for
# every property test (those that set their own keep it off too).
settings.register_profile("sensor-digest", deadline=None)
settings.load_profile("sensor-digest")

from moto import mock_aws  # noqa: E402

from sensor_digest import ingest, summary  # noqa: E402
from sensor_digest.config import IngestSettings, SummarySettings  # noqa: E402
from sensor_digest_tools.aws.dynamodb_local import create_tables, running_engine, start_engine  # noqa: E402
from sensor_digest_tools.aws.session import LocalSession, local_client  # noqa: E402
from sensor_digest_tools.lambda_runtime.invoke import lambda_handler  # noqa: E402
from tests.support.order import longest_first  # noqa: E402
from tests.support.sqs import PASSTHROUGH, DeadLetters  # noqa: E402
from tests.support.tables import Tables  # noqa: E402
from tests.support.tiers import mark_tiers, pytest_runtest_setup  # noqa: E402, F401
from tests.support.wheel import BuiltWheel, build_wheel  # noqa: E402

# No test may ever reach AWS: fake credentials and a fixed region before any client exists.
os.environ["AWS_ACCESS_KEY_ID"] = "local"
os.environ["AWS_SECRET_ACCESS_KEY"] = "local"
os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
os.environ.pop("AWS_PROFILE", None)
os.environ.pop("AWS_SESSION_TOKEN", None)
# Nor the user's own local pipeline: a `sensor-digest up` running on this machine keeps its endpoints
# in the user's cache, where the command line (run by the tests) would find it and act on it.
os.environ["SENSOR_DIGEST_STATE"] = os.path.join(tempfile.mkdtemp(prefix="sensor-digest-tests-"), "local-pipeline.json")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "SensorDigest")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")

_counter = itertools.count()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test marked by its folder (tests/support/tiers.py), the longest first (tests/support/order.py)."""
    mark_tiers(config, items)
    longest_first(items)


@pytest.fixture(scope="session")
def built_wheel() -> Iterator[BuiltWheel]:
    """The project's wheel, built once for the session's tests of it (no engine: any tier may ask).
    A folder of its own (not pytest's numbered ones, which concurrent sessions prune)."""
    with tempfile.TemporaryDirectory(prefix="sensor-digest-wheel-") as folder:
        yield build_wheel(Path(folder))


@pytest.fixture(scope="session")
def ddb_endpoint() -> Iterator[str]:
    preset = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    with running_engine(preset) as engine:
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = engine.endpoint
        os.environ["AWS_ENDPOINT_URL_DYNAMODBSTREAMS"] = engine.endpoint
        yield engine.endpoint


@pytest.fixture
def engine_endpoint(
    request: pytest.FixtureRequest, ddb_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The session's engine; a test marked ``fresh_engine`` gets a DynamoDB Local of its own.

    DynamoDB Local keeps one in-memory database and does not get faster when tables are deleted,
    so the scenarios that move tens of thousands of items each start from an empty engine.
    """
    if request.node.get_closest_marker("fresh_engine") is None:
        yield ddb_endpoint
        return
    engine = start_engine()
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", engine.endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODBSTREAMS", engine.endpoint)
    yield engine.endpoint
    engine.stop()


@pytest.fixture
def session(engine_endpoint: str) -> LocalSession:
    """A boto3 session of this test whose DynamoDB clients go to the engine (SQS: moto, where active)."""
    return LocalSession({"dynamodb": engine_endpoint})


@pytest.fixture
def ddb(engine_endpoint: str) -> Any:
    return local_client(engine_endpoint, max_pool_connections=32)


@pytest.fixture
def tables(ddb: Any) -> Iterator[Tables]:
    """A fresh digest table and ledger on DynamoDB Local.

    They are deleted afterwards: DynamoDB Local keeps everything in one in-memory database and
    slows down as tables (and their streams) pile up.
    """
    suffix = f"{next(_counter)}-{uuid.uuid4().hex[:6]}"
    names = Tables(table=f"SensorDigest-{suffix}", ledger=f"SensorDigestLedger-{suffix}")
    create_tables(ddb, names.table, names.ledger)
    yield names
    for name in (names.table, names.ledger):
        ddb.delete_table(TableName=name)


@pytest.fixture
def summary_settings(tables: Tables) -> SummarySettings:
    return SummarySettings(table_name=tables.table)


@pytest.fixture
def summary_handler(summary_settings: SummarySettings, session: LocalSession) -> Any:
    """The summary service as Lambda invokes it, built by the handler's own ``build_service``."""
    return lambda_handler(summary.build_service(summary_settings, session))


@pytest.fixture
def dead_letters(tables: Tables) -> Iterator[DeadLetters]:
    """moto SQS (faithful for send/receive/attributes) while DynamoDB calls pass through to DynamoDB Local."""
    with mock_aws(config=PASSTHROUGH):  # type: ignore[arg-type]
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="SensorDigestDLQ", Attributes={"MaximumMessageSize": "1048576"})["QueueUrl"]
        yield DeadLetters(client=sqs, url=url)


@pytest.fixture
def ingest_settings(tables: Tables, dead_letters: DeadLetters) -> IngestSettings:
    return IngestSettings(
        table_name=tables.table, ledger_table_name=tables.ledger, dlq_url=dead_letters.url, timezone=ZoneInfo("UTC")
    )


@pytest.fixture
def ingest_session(session: LocalSession) -> Any:
    """Where the ingest service's clients come from (the reliability suite wraps it in the fault layer)."""
    return session


@pytest.fixture
def ingest_handler(ingest_settings: IngestSettings, ingest_session: Any) -> Any:
    """The ingest service as Lambda invokes it, built by the handler's own ``build_service`` for this
    test's tables, dead-letter queue and session."""
    return lambda_handler(ingest.build_service(ingest_settings, ingest_session))
