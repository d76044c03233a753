"""DynamoDB Local: find or fetch it, start it on a free port (or tell a port in use), create the
contract's tables and drop those a pipeline made on an engine it joined.

The engine is AWS's own ``DynamoDBLocal.jar``, which ships inside the npm package
``amplify-dynamodb-simulator`` (folder ``emulator/``). ``fetch_engine`` takes that package's
tarball alone with ``npm pack`` (none of its Node dependencies) and unpacks the engine into
``engine_dir()``: ``DYNAMODB_LOCAL_DIR`` when set (``make setup`` points it into the checkout's
``.cache/``), else the user's cache, so an installed ``sensor-digest`` finds or fetches it anywhere.
``python -m sensor_digest_tools.aws.dynamodb_local`` fetches it.

The engine listens on 127.0.0.1 only. Its own server would listen on every address, and it has no
option to name one; ``LoopbackEngine.java`` (beside this module) starts it with its own arguments
on the loopback address. The ``javac`` beside ``java``, where there is one, compiles that launcher
once into the engine's folder; else Java runs it from its source (a JDK's compiler module, at each
start).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from sensor_digest.store import schema, tables
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
    print(  # stderr: a first run waits for this download, and should say why
        f"fetching DynamoDB Local ({SIMULATOR_PACKAGE}@{version}, about 64 MB) into {directory}, once",
        file=sys.stderr,
        flush=True,
    )
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


class PortInUse(EngineError):
    """A port asked for (``dynamodb_port``, ``sqs_port``) is taken: nothing can start there."""


def check_port_free(port: int, what: str) -> None:
    """``PortInUse`` naming ``port`` when something listens on it (on loopback or every address),
    tried as the servers bind (address reuse on: a port a closed connection left in TIME_WAIT is free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            raise PortInUse(f"port {port} ({what}) is in use: {exc.strerror or exc}") from None


ENGINE_WAIT_SECONDS = 180.0
"""How long a starting DynamoDB Local may take to answer (``SENSOR_DIGEST_ENGINE_WAIT`` overrides):
its JVM starts in a few seconds on an idle machine, and can take a minute or more on a loaded one."""

PROBE_ERRORS = (EndpointConnectionError, ConnectionClosedError, ReadTimeoutError, ConnectTimeoutError)
"""What a probe of an engine that is still starting meets: nothing listening yet, a connection
dropped, or a JVM that accepted the connection and has not answered yet."""


GIVEN_REFUSED_SECONDS = 3.0
"""How long an engine the user gave (``AWS_ENDPOINT_URL_DYNAMODB``) may refuse connections before
it is told missing: nothing listens there (an engine started by this process gets the whole wait,
as its JVM starts; a given one that accepts connections and answers late does too)."""


class NothingListens(EngineError):
    """Every probe of an endpoint met a refused connection (nothing listens there)."""


def engine_wait_seconds() -> float:
    raw = os.environ.get("SENSOR_DIGEST_ENGINE_WAIT", "").strip()
    try:
        return float(raw) if raw else ENGINE_WAIT_SECONDS
    except ValueError:
        raise EngineError(f"SENSOR_DIGEST_ENGINE_WAIT must be a number of seconds, got {raw!r}") from None


@dataclass
class LocalEngine:
    endpoint: str
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None  # the engine's own output (stderr), for the reason it died

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

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
        if self.log is not None:
            self.log.unlink(missing_ok=True)

    def output(self) -> str:
        """The tail of what the engine wrote (why it exited, when it did)."""
        if self.log is None or not self.log.exists():
            return ""
        return self.log.read_text(errors="replace")[-2000:]


# The client JIT alone (C1): the engine answers many short requests, and on a 2-core machine the
# server JIT's compile threads cost more CPU than they win back (``python -m bench.engine_jit``).
JIT_OPTION = "-XX:TieredStopAtLevel=1"
LAUNCHER_SOURCE = Path(__file__).with_name("LoopbackEngine.java")
"""The launcher that binds DynamoDB Local to 127.0.0.1 (its class: ``LoopbackEngine``)."""


NO_COMPILER = (
    "DynamoDB Local's launcher, which binds it to 127.0.0.1, needs a JDK (javac, or Java's jdk.compiler module) "
    "and this Java has neither: install a JDK 17 or later"
)


def launcher(directory: Path, javac: str | None) -> list[str]:
    """The ``java`` arguments after the library path that run DynamoDB Local of ``directory`` on
    127.0.0.1: its launcher compiled by ``javac`` once (into ``directory``, under the hash of its
    source, written whole or not at all), or, with no ``javac`` or no folder to write, its source
    (Java's source-file mode compiles it in memory at each start). ``EngineError`` when it does not
    compile against the engine."""
    jar = directory / "DynamoDBLocal.jar"
    built = directory / f"loopback-{hashlib.sha256(LAUNCHER_SOURCE.read_bytes()).hexdigest()[:12]}"
    if javac is not None and not (built / "LoopbackEngine.class").is_file():
        _compile_launcher(javac, jar, built)
    if (built / "LoopbackEngine.class").is_file():
        return ["-cp", os.pathsep.join([str(jar), str(built)]), "LoopbackEngine"]
    return ["-cp", str(jar), str(LAUNCHER_SOURCE)]


def javac_beside(java: str) -> str | None:
    """The ``javac`` of the JDK whose ``java`` runs the engine (so that the class it compiles is one
    that ``java`` can load), or ``None``: a Java runtime alone, or ``java`` a link to no JDK."""
    javac = Path(os.path.realpath(java)).with_name("javac.exe" if java.lower().endswith(".exe") else "javac")
    return str(javac) if javac.is_file() and os.access(javac, os.X_OK) else None


def _compile_launcher(javac: str, jar: Path, built: Path) -> None:
    try:
        work = Path(tempfile.mkdtemp(prefix=".loopback-", dir=built.parent))
    except OSError:  # a folder this user cannot write: the source runs instead
        return
    try:
        # A fixed argument list (no shell): the javac beside java, the jar this project fetched, its own source.
        done = subprocess.run(  # noqa: S603
            [javac, "-nowarn", "-cp", str(jar), "-d", str(work), str(LAUNCHER_SOURCE)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            reason = " ".join(done.stderr.split())[-500:]
            raise EngineError(f"the launcher that binds DynamoDB Local to 127.0.0.1 does not compile: {reason}")
        work.chmod(0o755)  # as readable as the engine beside it (mkdtemp makes it the user's alone)
        with contextlib.suppress(OSError):  # another start compiled it first: its launcher stays
            work.rename(built)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _tied_to_this_process(command: list[str]) -> list[str]:
    """``command`` so that it gets SIGTERM when the process that starts it dies, even by SIGKILL:
    on Linux with util-linux's ``setpriv --pdeathsig``, which sets the death signal and then runs the
    command (the signal survives the exec). The signal follows the *thread* that forks, so only a
    start from the main thread is tied. Elsewhere the state file of ``up`` names the engine, and the
    next command stops an engine whose ``up`` is gone (``sensor_digest_tools.ops.targets``)."""
    setpriv = shutil.which("setpriv")
    if sys.platform != "linux" or setpriv is None or threading.current_thread() is not threading.main_thread():
        return command
    return [setpriv, "--pdeathsig", "TERM", *command]


def start_engine(
    directory: Path | None = None,
    port: int | None = None,
    timeout: float | None = None,
    java_options: tuple[str, ...] = (JIT_OPTION,),
) -> LocalEngine:
    """Start ``DynamoDBLocal.jar -inMemory`` on a port of 127.0.0.1 (a free one unless given), listening
    on no other address (``launcher``), and wait until it answers, at most ``timeout`` seconds
    (``engine_wait_seconds()``). The engine never outlives a failed start: it is stopped on any error
    and on Ctrl-C; started from the main thread on Linux, it also dies with this process, even one
    killed outright (``up`` killed with SIGKILL). ``java_options`` go before the rest: by default
    the client JIT alone (C1), as ``python -m bench.engine_jit`` measures it against Java's default."""
    directory = fetch_engine(directory)
    java = shutil.which("java")
    if java is None:
        raise EngineError("java is not on PATH; DynamoDB Local needs Java 17 or later")
    port = port or free_port()
    timeout = engine_wait_seconds() if timeout is None else timeout
    command = [
        java,
        *java_options,
        f"-Djava.library.path={directory / 'DynamoDBLocal_lib'}",
        *launcher(directory, javac_beside(java)),
        "-inMemory",
        "-port",
        str(port),
    ]
    handle, name = tempfile.mkstemp(prefix="dynamodb-local-", suffix=".log")
    os.close(handle)
    log = Path(name)
    with log.open("wb") as out:
        # A fixed argument list (no shell): java from PATH, the jar this project fetched and its launcher.
        process = subprocess.Popen(  # noqa: S603
            _tied_to_this_process(command), cwd=directory, stdout=subprocess.DEVNULL, stderr=out
        )
    engine = LocalEngine(endpoint=f"http://127.0.0.1:{port}", process=process, log=log)
    try:
        wait_until_answering(engine, timeout)
    except EngineError as exc:
        engine.stop()
        if "jdk.compiler" in str(exc):  # the launcher's source, and a Java with no compiler to run it
            raise EngineError(NO_COMPILER) from None
        raise
    except BaseException:
        engine.stop()
        raise
    return engine


JAVA_SETTINGS = ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")
"""The variables by which a shell adds options to every ``java`` (and so to the engine's)."""


def _java_settings() -> str:
    """`` (with JAVA_TOOL_OPTIONS='...', ...)`` for the variables set, so that a start refused over
    an option says whose option it was; the engine's own are ``JIT_OPTION`` and the launcher's."""
    named = [f"{name}={os.environ[name]!r}" for name in JAVA_SETTINGS if os.environ.get(name)]
    return f" (with {', '.join(named)})" if named else ""


def wait_until_answering(
    engine: LocalEngine, timeout: float, probe_seconds: float = 5.0, refused_for: float | None = None
) -> None:
    """Probe ``engine`` until it answers ``ListTables`` (each probe waits ``probe_seconds`` for its
    answer: a JVM under load can accept a connection long before it answers); ``EngineError``
    (naming DynamoDB Local and what to do) when it exits first or is still silent after ``timeout``.
    ``refused_for``: ``NothingListens`` once every probe for that many seconds (or until ``timeout``,
    if sooner) found no listener (connection refused, or never accepted); an endpoint that accepted
    a connection once is waited for until ``timeout``."""
    start = time.monotonic()
    deadline = start + timeout
    probe = local_client(
        engine.endpoint,
        connect_timeout=min(2.0, probe_seconds),
        read_timeout=probe_seconds,
        retries={"max_attempts": 1},
    )
    accepted = False  # a connection was accepted once: something listens, and may answer late
    while True:
        if engine.process is not None and engine.process.poll() is not None:
            raise EngineError(
                f"DynamoDB Local exited with {engine.process.returncode} as it started{_java_settings()}: "
                f"{engine.output()}"
            )
        try:
            probe.list_tables(Limit=1)
            return
        except PROBE_ERRORS as exc:
            accepted = accepted or isinstance(exc, (ReadTimeoutError, ConnectionClosedError))
            now = time.monotonic()
            if refused_for is not None and not accepted and now >= min(deadline, start + refused_for):
                raise NothingListens(f"nothing answers at {engine.endpoint}") from None
            if now >= deadline:
                raise EngineError(
                    f"DynamoDB Local did not answer at {engine.endpoint} within {timeout:.0f} s (a slow or busy "
                    "machine): wait longer with SENSOR_DIGEST_ENGINE_WAIT=<seconds>, or start it yourself and set "
                    "AWS_ENDPOINT_URL_DYNAMODB to its endpoint"
                ) from None
            time.sleep(0.2)


def check_engine(endpoint: str, refused_for: float = GIVEN_REFUSED_SECONDS) -> None:
    """Raise ``EngineError`` with a clear message if nothing answers at ``endpoint``, the engine the
    user gave in ``AWS_ENDPOINT_URL_DYNAMODB``: within ``refused_for`` seconds when nothing listens
    there (a variable left from an earlier `sensor-digest env`), after the whole wait when something
    accepts connections and does not answer (a slow engine is waited for, as a starting one is)."""
    timeout = engine_wait_seconds()
    try:
        wait_until_answering(LocalEngine(endpoint=endpoint), timeout, refused_for=refused_for)
    except NothingListens:
        raise EngineError(
            f"nothing answers at {endpoint} (AWS_ENDPOINT_URL_DYNAMODB): unset it to let sensor-digest start "
            "DynamoDB Local, or start that engine"
        ) from None
    except EngineError:
        raise EngineError(
            f"the engine at {endpoint} (AWS_ENDPOINT_URL_DYNAMODB) accepts connections but did not answer within "
            f"{timeout:.0f} s: wait longer with SENSOR_DIGEST_ENGINE_WAIT=<seconds>, or unset it to let "
            "sensor-digest start DynamoDB Local"
        ) from None


@contextmanager
def running_engine(endpoint: str | None = None, java_options: tuple[str, ...] = (JIT_OPTION,)) -> Iterator[LocalEngine]:
    """Use the engine at ``endpoint`` when given, else start (and afterwards stop) a fresh one."""
    if endpoint:
        check_engine(endpoint)
        yield LocalEngine(endpoint=endpoint)
        return
    engine = start_engine(java_options=java_options)
    try:
        yield engine
    finally:
        engine.stop()


def create_tables(client: DynamoDBClient, table_name: str, ledger_table_name: str) -> None:
    """The contract's two tables, as the stack defines them (on-demand, stream and the profiles'
    index on the digest)."""
    try:
        client.create_table(**tables.create_digest_table_params(table_name))
        client.create_table(**tables.create_table_params(ledger_table_name, schema.LEDGER_KEY_SCHEMA))
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
    for name in (table_name, ledger_table_name):
        client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})


def drop_tables(endpoint: str, names: list[str]) -> None:
    """Delete the tables a pipeline created on an engine it did not start (their names carry the
    pipeline's own random suffix, so no other's), best effort and bounded: a short timeout per call,
    a table already gone or an engine that no longer answers is left as it is."""
    client = local_client(endpoint, connect_timeout=2, read_timeout=10, retries={"max_attempts": 2})
    for name in names:
        try:
            client.delete_table(TableName=name)
        except (ClientError, BotoCoreError):
            continue


if __name__ == "__main__":
    print(f"DynamoDB Local {SIMULATOR_VERSION} is in {fetch_engine()}")
