"""DynamoDB Local: find or fetch it, start it on a free port, create the contract's tables.

The engine is AWS's own ``DynamoDBLocal.jar``, which ships inside the npm package
``amplify-dynamodb-simulator`` (folder ``emulator/``). ``fetch_engine`` takes that package's
tarball alone with ``npm pack`` (none of its Node dependencies) and unpacks the engine into
``engine_dir()``: ``DYNAMODB_LOCAL_DIR`` when set (``make setup`` points it into the checkout's
``.cache/``), else the user's cache, so an installed ``sensor-digest`` finds or fetches it anywhere.
``python -m sensor_digest_tools.aws.dynamodb_local`` fetches it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError, EndpointConnectionError

from sensor_digest.store import schema
from sensor_digest_tools.aws.session import local_client

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

SIMULATOR_PACKAGE = "amplify-dynamodb-simulator"
SIMULATOR_VERSION = "2.9.30"


def user_cache() -> Path:
    """Where the command line keeps what it fetches and its state: ``$XDG_CACHE_HOME/sensor-digest``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sensor-digest"


class EngineError(RuntimeError):
    """DynamoDB Local is missing, cannot start, or cannot be reached."""


def engine_dir() -> Path:
    return Path(os.environ.get("DYNAMODB_LOCAL_DIR") or user_cache() / "dynamodb-local")


def fetch_engine(directory: Path | None = None, version: str = SIMULATOR_VERSION) -> Path:
    """Put DynamoDB Local into ``directory`` (idempotent): the jar and its native libraries."""
    directory = directory or engine_dir()
    marker = directory / ".version"
    if (directory / "DynamoDBLocal.jar").is_file() and marker.is_file() and marker.read_text().strip() == version:
        return directory
    npm = shutil.which("npm")
    if npm is None:
        raise EngineError(f"DynamoDB Local is not in {directory}, and npm (which fetches it) is not on PATH")
    with tempfile.TemporaryDirectory() as work:
        # A fixed argument list (no shell): npm from PATH, a pinned package name and version.
        done = subprocess.run(  # noqa: S603
            [npm, "pack", "--silent", f"{SIMULATOR_PACKAGE}@{version}"],
            cwd=work,
            capture_output=True,
            text=True,
            check=False,
        )
        tarball = Path(work) / f"{SIMULATOR_PACKAGE}-{version}.tgz"
        if done.returncode != 0 or not tarball.is_file():
            raise EngineError(f"npm pack {SIMULATOR_PACKAGE}@{version} failed: {done.stderr.strip()[-500:]}")
        with tarfile.open(tarball) as archive:
            members = [m for m in archive.getmembers() if m.name.startswith("package/emulator/")]
            archive.extractall(work, members=members, filter="data")
        if directory.exists():
            shutil.rmtree(directory)
        directory.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(Path(work) / "package" / "emulator"), directory)
    marker.write_text(version)
    return directory


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalEngine:
    endpoint: str
    process: subprocess.Popen[bytes] | None = None

    def client(self) -> DynamoDBClient:
        client: DynamoDBClient = local_client(self.endpoint)
        return client

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
    directory = fetch_engine(directory)
    jar = directory / "DynamoDBLocal.jar"
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
            **schema.create_table_params(table_name, schema.DIGEST_KEY_SCHEMA),
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
        )
        client.create_table(**schema.create_table_params(ledger_table_name, schema.LEDGER_KEY_SCHEMA))
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
    for name in (table_name, ledger_table_name):
        client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})


if __name__ == "__main__":
    print(f"DynamoDB Local {SIMULATOR_VERSION} is in {fetch_engine()}")
