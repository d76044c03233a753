"""DynamoDB Local: find it, start it on a free port, create the contract's tables.

The engine is AWS's own ``DynamoDBLocal.jar``, taken from the npm package
``amplify-dynamodb-simulator`` by ``scripts/fetch-dynamodb-local.sh`` into ``.cache/``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

from sensor_digest import layout

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_ENGINE_DIR = REPO_ROOT / ".cache" / "dynamodb-local"
LOCAL_REGION = "us-east-1"
LOCAL_CREDENTIALS = {"aws_access_key_id": "local", "aws_secret_access_key": "local"}


class EngineError(RuntimeError):
    """DynamoDB Local is missing, cannot start, or cannot be reached."""


def engine_dir() -> Path:
    return Path(os.environ.get("DYNAMODB_LOCAL_DIR", DEFAULT_ENGINE_DIR))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def local_client(endpoint: str, service: str = "dynamodb", **config: object) -> DynamoDBClient:
    """A client of a local endpoint with the local credentials; ``config`` overrides botocore's Config."""
    options: dict[str, object] = {"retries": {"mode": "standard", "max_attempts": 3}, **config}
    return boto3.client(  # type: ignore[no-any-return, call-overload]
        service,
        endpoint_url=endpoint,
        region_name=LOCAL_REGION,
        config=Config(**options),  # type: ignore[arg-type]
        **LOCAL_CREDENTIALS,
    )


@dataclass
class LocalEngine:
    endpoint: str
    process: subprocess.Popen[bytes] | None = None

    def client(self) -> DynamoDBClient:
        return local_client(self.endpoint)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_engine(directory: Path | None = None, port: int | None = None, timeout: float = 60.0) -> LocalEngine:
    """Start ``DynamoDBLocal.jar -inMemory`` on a free loopback port and wait until it answers."""
    directory = directory or engine_dir()
    jar = directory / "DynamoDBLocal.jar"
    if not jar.is_file():
        raise EngineError(f"DynamoDB Local not found at {jar}; run `make setup` (scripts/fetch-dynamodb-local.sh)")
    java = shutil.which("java")
    if java is None:
        raise EngineError("java is not on PATH; DynamoDB Local needs Java 17 or later")
    port = port or free_port()
    command = [
        java,
        f"-Djava.library.path={directory / 'DynamoDBLocal_lib'}",
        "-jar",
        str(jar),
        "-inMemory",
        "-port",
        str(port),
    ]
    # A fixed argument list (no shell): java from PATH and the jar this project fetched.
    process = subprocess.Popen(command, cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # noqa: S603
    engine = LocalEngine(endpoint=f"http://127.0.0.1:{port}", process=process)
    deadline = time.monotonic() + timeout
    probe = local_client(engine.endpoint, connect_timeout=1, read_timeout=2)
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise EngineError(f"DynamoDB Local exited with {process.returncode}: {err[-2000:]}")
        try:
            probe.list_tables(Limit=1)
            return engine
        except EndpointConnectionError:
            time.sleep(0.2)
    engine.stop()
    raise EngineError(f"DynamoDB Local did not answer on port {port} within {timeout:.0f}s")


def check_engine(endpoint: str) -> None:
    """Raise ``EngineError`` with a clear message if nothing answers at ``endpoint``."""
    try:
        local_client(endpoint, connect_timeout=2, read_timeout=5, retries={"max_attempts": 1}).list_tables(Limit=1)
    except EndpointConnectionError as exc:
        raise EngineError(f"no DynamoDB engine answers at {endpoint}") from exc


@contextmanager
def running_engine(endpoint: str | None = None) -> Iterator[LocalEngine]:
    """Use the engine at ``endpoint`` when given, else start (and afterwards stop) a fresh one."""
    if endpoint:
        check_engine(endpoint)
        yield LocalEngine(endpoint=endpoint)
        return
    engine = start_engine()
    try:
        yield engine
    finally:
        engine.stop()


def create_tables(client: DynamoDBClient, table_name: str, ledger_table_name: str) -> None:
    """The contract's two tables, as the stack defines them (on-demand, stream on the digest)."""
    try:
        client.create_table(
            **layout.create_table_params(table_name, layout.DIGEST_KEY_SCHEMA),
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        client.create_table(**layout.create_table_params(ledger_table_name, layout.LEDGER_KEY_SCHEMA))
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
    for name in (table_name, ledger_table_name):
        client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
