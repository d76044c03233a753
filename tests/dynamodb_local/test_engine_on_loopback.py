"""DynamoDB Local as ``start_engine`` starts it where there is no ``javac`` (its launcher run from
its source) listens on 127.0.0.1 alone, as it does with the launcher compiled (every other start of
the suite; tests/dynamodb_local/local/test_up.py checks the ports of ``up``), and answers no web
page's CORS request.

Engine: DynamoDB Local, started by the test from a folder of its own that links the suite's engine
(so that nothing compiled is there).
"""

from __future__ import annotations

import http.client
from pathlib import Path
from typing import Any

import pytest

from sensor_digest_tools.aws import dynamodb_local
from sensor_digest_tools.aws.dynamodb_local import (
    NO_COMPILER,
    SIMULATOR_VERSION,
    EngineError,
    engine_dir,
    fetch_engine,
    start_engine,
)
from tests.support.ports import reaches


@pytest.fixture
def engine_folder(tmp_path: Path) -> Path:
    """A folder of the suite's engine (its jar and libraries linked), with nothing compiled in it."""
    suite = fetch_engine(engine_dir())
    folder = tmp_path / "dynamodb-local"
    folder.mkdir()
    for name in ("DynamoDBLocal.jar", "DynamoDBLocal_lib"):
        (folder / name).symlink_to(suite / name)
    (folder / ".version").write_text(SIMULATOR_VERSION)
    return folder


def test_an_engine_without_javac_listens_on_127_0_0_1_alone_and_allows_no_other_origin(
    engine_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a Java without javac on PATH
    real = dynamodb_local.launcher
    monkeypatch.setattr(dynamodb_local, "launcher", lambda directory, _javac: real(directory, None))

    # When the engine starts
    engine = start_engine(engine_folder)
    port = int(engine.endpoint.rsplit(":", 1)[1])
    try:
        tables = engine.client().list_tables()["TableNames"]
        elsewhere = reaches("127.0.0.2", port)  # Linux answers all of 127.0.0.0/8 on loopback
        preflight = http_answer(
            port,
            "OPTIONS",
            {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
        )
    finally:
        engine.stop()

    # Then it answers on 127.0.0.1, on no other address, allows no page of another origin, and ran
    # its launcher from the source (nothing compiled beside the engine)
    assert tables == []
    assert not elsewhere
    assert "access-control-allow-origin" not in preflight
    assert list(engine_folder.glob("loopback-*")) == []


def http_answer(port: int, method: str, headers: dict[str, str]) -> dict[str, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, "/", headers=headers)
        answer = connection.getresponse()
        answer.read()
        return {name.lower(): value for name, value in answer.getheaders()}
    finally:
        connection.close()


def test_a_java_that_cannot_compile_the_launcher_is_told_in_one_line_to_install_a_jdk(
    engine_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given no javac, and a Java without its compiler module (a runtime alone: here the JDK's own
    # java told to load only the base modules, as its launcher reads JDK_JAVA_OPTIONS)
    real = dynamodb_local.launcher
    monkeypatch.setattr(dynamodb_local, "launcher", lambda directory, _javac: real(directory, None))
    monkeypatch.setenv("JDK_JAVA_OPTIONS", "--limit-modules java.base")

    # When the engine starts, then it says what is missing, in one line
    with pytest.raises(EngineError) as refused:
        start_engine(engine_folder, timeout=60)

    assert str(refused.value) == NO_COMPILER
