"""An engine the user gave (``AWS_ENDPOINT_URL_DYNAMODB``), as ``up`` and ``demo`` check it: nothing
listening there is told at once, with the variable to unset; one that accepts connections and
answers late is waited for, as a starting engine is.

Engine: none (a closed loopback port, and a stand-in HTTP server on loopback that accepts
connections and answers late or never). Waits are bounded by the test's own numbers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from sensor_digest_tools.aws.dynamodb_local import (
    EngineError,
    LocalEngine,
    NothingListens,
    check_engine,
    free_port,
    wait_until_answering,
)
from tests.support.late_engine import LateEngine, serve_late_engine


@pytest.fixture
def slow_engine() -> Iterator[tuple[str, type[LateEngine]]]:
    with serve_late_engine() as served:
        yield served


def test_a_given_endpoint_where_nothing_listens_is_told_in_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the default wait for an engine (minutes) and an endpoint where nothing listens
    monkeypatch.delenv("SENSOR_DIGEST_ENGINE_WAIT", raising=False)
    endpoint = f"http://127.0.0.1:{free_port()}"
    raised: list[BaseException] = []

    def check() -> None:
        try:
            check_engine(endpoint)
        except BaseException as exc:  # handed to the test's thread
            raised.append(exc)

    # When it is checked as the engine to use
    worker = threading.Thread(target=check, daemon=True)
    worker.start()
    worker.join(timeout=60)  # bounded: the whole wait would be minutes

    # Then it is refused well before the wait for a starting engine ends, naming the variable to unset
    assert not worker.is_alive(), "a refused connection was waited for as a starting engine"
    [error] = raised
    assert isinstance(error, EngineError)
    assert str(error) == (
        f"nothing answers at {endpoint} (AWS_ENDPOINT_URL_DYNAMODB): unset it to let sensor-digest start "
        "DynamoDB Local, or start that engine"
    )


def test_a_given_endpoint_that_accepts_but_answers_late_is_waited_for_past_the_refusal_window(
    slow_engine: tuple[str, type[LateEngine]],
) -> None:
    # Given an engine that accepts connections and holds its first three answers past a probe's wait
    endpoint, handler = slow_engine
    handler.late, handler.hold = 3, 1.0

    # When it is waited for with a refusal window shorter than its silence
    wait_until_answering(LocalEngine(endpoint=endpoint), timeout=30, probe_seconds=0.3, refused_for=0.1)

    # Then the wait went on until it answered
    assert handler.seen == 4


def test_a_refusal_window_ends_a_wait_only_where_nothing_listens() -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"

    with pytest.raises(NothingListens, match=f"nothing answers at {endpoint}"):
        wait_until_answering(LocalEngine(endpoint=endpoint), timeout=60, probe_seconds=0.3, refused_for=0.5)


def test_a_given_endpoint_that_accepts_and_never_answers_is_named_with_the_wait_and_the_variable(
    slow_engine: tuple[str, type[LateEngine]], monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint, handler = slow_engine
    handler.late, handler.hold = 1000, 10.0
    monkeypatch.setenv("SENSOR_DIGEST_ENGINE_WAIT", "1")

    with pytest.raises(EngineError) as refused:
        check_engine(endpoint)

    assert str(refused.value) == (
        f"the engine at {endpoint} (AWS_ENDPOINT_URL_DYNAMODB) accepts connections but did not answer within 1 s: "
        "wait longer with SENSOR_DIGEST_ENGINE_WAIT=<seconds>, or unset it to let sensor-digest start DynamoDB Local"
    )
