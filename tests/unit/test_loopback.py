"""The rule of the servers ``sensor-digest up`` runs (the read API, the SQS endpoint): a request is
answered only when its ``Host`` names the server and its ``Origin``, if any, is the server's own.

Engine: none (the rule on header sets; tests/moto/test_sqs_server.py and
tests/dynamodb_local/local/test_api_server.py hold it over real HTTP).
"""

from __future__ import annotations

from email.message import Message

import pytest

from sensor_digest_tools.local.loopback import refusal

PORT = 8081


def headers(*pairs: tuple[str, str]) -> Message:
    message = Message()
    for name, value in pairs:
        message[name] = value
    return message


@pytest.mark.parametrize(
    "pairs",
    [
        (("Host", f"127.0.0.1:{PORT}"),),
        (("Host", f"LocalHost:{PORT}"),),
        (),  # HTTP/1.0: no Host
        (("Host", f"127.0.0.1:{PORT}"), ("Origin", f"http://127.0.0.1:{PORT}")),
        (("Host", f"localhost:{PORT}"), ("Origin", f"http://LOCALHOST:{PORT}")),
    ],
    ids=["loopback", "localhost-in-any-case", "no-host", "own-origin", "own-origin-by-name"],
)
def test_a_request_naming_the_server_is_answered(pairs: tuple[tuple[str, str], ...]) -> None:
    assert refusal(headers(*pairs), PORT) is None


@pytest.mark.parametrize(
    ("pairs", "status"),
    [
        ((("Host", f"evil.example:{PORT}"),), 421),
        ((("Host", "127.0.0.1:8082"),), 421),
        ((("Host", "127.0.0.1"),), 421),
        ((("Host", f"localhost.evil.example:{PORT}"),), 421),
        ((("Host", f"127.0.0.1:{PORT}"), ("Host", f"127.0.0.1:{PORT}")), 400),
        ((("Host", f"127.0.0.1:{PORT}"), ("Origin", "http://evil.example")), 403),
        ((("Host", f"127.0.0.1:{PORT}"), ("Origin", "null")), 403),
        ((("Host", f"127.0.0.1:{PORT}"), ("Origin", f"https://127.0.0.1:{PORT}")), 403),
        ((("Host", f"127.0.0.1:{PORT}"), ("Origin", "http://127.0.0.1:8082")), 403),
        ((("Host", f"127.0.0.1:{PORT}"), ("Origin", f"http://127.0.0.1:{PORT}/")), 403),
        ((("Origin", f"http://127.0.0.1:{PORT}"), ("Origin", "http://evil.example")), 400),
        ((("Host", f"evil.example:{PORT}"), ("Origin", f"http://evil.example:{PORT}")), 421),  # DNS rebinding
    ],
    ids=[
        "foreign-host",
        "other-port",
        "no-port",
        "host-under-a-foreign-domain",
        "two-hosts",
        "foreign-origin",
        "null-origin",
        "https-origin",
        "origin-of-another-port",
        "origin-with-a-path",
        "two-origins",
        "rebound-name",
    ],
)
def test_a_request_meant_for_another_server_or_from_another_page_is_refused_in_one_line(
    pairs: tuple[tuple[str, str], ...], status: int
) -> None:
    refused = refusal(headers(*pairs), PORT)

    assert refused is not None
    assert refused[0] == status
    assert "\n" not in refused[1] and refused[1]
