"""Waiting for DynamoDB Local, as a loaded machine makes it start (no Java here: a stand-in HTTP
server that accepts connections and answers late, or never). The waits are bounded by the test's
own numbers, not by this machine's speed: a slow answer is made slow on purpose."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from sensor_digest_tools.aws.dynamodb_local import EngineError, LocalEngine, wait_until_answering
from tests.support.late_engine import LateEngine, serve_late_engine


@pytest.fixture
def late_engine() -> Iterator[tuple[str, type[LateEngine]]]:
    with serve_late_engine() as served:
        yield served


def test_an_engine_that_accepts_but_answers_late_is_waited_for(late_engine: tuple[str, type[LateEngine]]) -> None:
    endpoint, handler = late_engine
    handler.late, handler.hold = 3, 1.0  # three probes each held longer than a probe waits

    wait_until_answering(LocalEngine(endpoint=endpoint), timeout=30, probe_seconds=0.3)

    # past the three held probes, it probed on until one was answered (a loaded machine may make an
    # answered probe late too: one more probe, never fewer)
    assert handler.seen >= 4


def test_an_engine_still_silent_at_the_deadline_is_named_with_what_to_do(
    late_engine: tuple[str, type[LateEngine]],
) -> None:
    endpoint, handler = late_engine
    handler.late, handler.hold = 1000, 1.0

    with pytest.raises(EngineError) as refused:
        wait_until_answering(LocalEngine(endpoint=endpoint), timeout=1, probe_seconds=0.2)

    message = str(refused.value)
    assert message.startswith(f"DynamoDB Local did not answer at {endpoint} within 1 s")
    assert "SENSOR_DIGEST_ENGINE_WAIT" in message and "AWS_ENDPOINT_URL_DYNAMODB" in message


def test_an_engine_that_exits_as_it_starts_is_named_with_its_exit_code() -> None:
    exited = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    exited.wait()

    with pytest.raises(EngineError, match="DynamoDB Local exited with 3 as it started"):
        wait_until_answering(LocalEngine(endpoint="http://127.0.0.1:9", process=exited), timeout=30)


def test_an_engine_that_exits_as_it_starts_names_the_java_options_the_shell_added(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:+NoSuchOption")
    monkeypatch.delenv("_JAVA_OPTIONS", raising=False)
    monkeypatch.delenv("JDK_JAVA_OPTIONS", raising=False)
    exited = subprocess.Popen([sys.executable, "-c", "raise SystemExit(1)"])
    exited.wait()

    with pytest.raises(EngineError) as refused:
        wait_until_answering(LocalEngine(endpoint="http://127.0.0.1:9", process=exited), timeout=30)
    assert str(refused.value).startswith(
        "DynamoDB Local exited with 1 as it started (with JAVA_TOOL_OPTIONS='-XX:+NoSuchOption'):"
    )
