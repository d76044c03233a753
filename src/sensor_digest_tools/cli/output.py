"""How every command ends: its result on stdout, one clear error line on stderr and exit code 1
otherwise.

stdout holds only a command's result (a table, a line that says what was done, JSON), so that
``sensor-digest counts ... --json > days.json`` or ``| jq`` gets nothing else; errors, notes,
warnings, progress bars and questions go to stderr. ``errors()`` turns every expected failure (a
target that cannot be found, DynamoDB Local that does not start, a registry refusal, a DynamoDB or
SQS fault) into one line; ``say`` (a result) and ``note`` (everything else) show a line that may
hold producer or operator data as data, never as markup; ``confirm`` asks before a command acts.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, NoReturn

import typer
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError
from rich.text import Text

from sensor_digest.errors import SensorDigestError, StoreFault
from sensor_digest_cdk.shape import ShapeError
from sensor_digest_tools.aws.dynamodb_local import EngineError
from sensor_digest_tools.cli import render
from sensor_digest_tools.ops.targets import Target, TargetError, resolve

console = render.console()
notes = render.console(stderr=True)

TABLE_NOT_FOUND = "ResourceNotFoundException"
QUEUE_NOT_FOUND = ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist")
MISSING_RESOURCE_CODES = (TABLE_NOT_FOUND, *QUEUE_NOT_FOUND)


def print_json(value: Any) -> None:
    """A result as JSON on stdout, as UTF-8 whatever the locale (RFC 8259): text as itself (no
    ``\\u00fc`` for ``ü``), only what could act on a terminal written as a JSON escape
    (``render.json_text``); a script that parses it reads the same values either way."""
    typer.echo(render.json_text(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)).encode())


def print_exact_json(value: Any) -> None:
    """``print_json`` for a result that holds exact decimals (readings' sums, minimums, maximums):
    each ``Decimal`` written as the JSON number it is, in plain digits, never through a float."""
    typer.echo(render.json_text(_exact_json(value, 0)).encode())


def _exact_json(value: Any, depth: int) -> str:
    """``json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)``, with exact decimals."""
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{value} is no JSON number")
        return "0" if value == 0 else format(value, "f")
    inner, outer = "\n" + "  " * (depth + 1), "\n" + "  " * depth
    if isinstance(value, dict) and value:
        members = (
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_exact_json(v, depth + 1)}"
            for k, v in sorted(value.items())
        )
        return "{" + ",".join(members) + outer + "}"
    if isinstance(value, list | tuple) and value:
        return "[" + ",".join(f"{inner}{_exact_json(v, depth + 1)}" for v in value) + outer + "]"
    return json.dumps(value, ensure_ascii=False)


@contextmanager
def errors() -> Iterator[None]:
    """Every expected failure becomes one clear line and exit code 1."""
    try:
        yield
    except StoreFault as exc:  # a DynamoDB call through the core's boundary
        cause = exc.__cause__
        if isinstance(cause, EndpointConnectionError) or (
            isinstance(cause, ClientError) and cause.response.get("Error", {}).get("Code") in MISSING_RESOURCE_CODES
        ):
            _fail_for(cause)  # nothing answers, or the table is not there: say so as for any other call
        fail(str(exc))
    except (TargetError, EngineError, SensorDigestError) as exc:  # registry refusals, targets, the engine
        fail(str(exc))
    except ShapeError as exc:  # options a deployment would refuse too (the local pipeline runs its shape)
        fail("; ".join(exc.problems))
    except (ClientError, BotoCoreError) as exc:
        _fail_for(exc)


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP (a ``timeout``, a closed terminal, a process manager) stop a command as
    Ctrl-C does, so its clean-up and its word on how far it got run too; the previous handlers come
    back afterwards. In the main thread only (where Python delivers signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def told_on_stop(how_far: Callable[[], str]) -> Iterator[None]:
    """A command that acts a batch at a time, stopped on the way: Ctrl-C, SIGTERM or SIGHUP (exit
    code 130, as the shell's own for Ctrl-C), or an endpoint that stops answering or refuses
    (``errors()`` then gives the line and exit code 1). Either way ``how_far()`` goes to stderr
    first: how far it got, how to go on."""
    try:
        with stopped_by_signals():
            yield
    except ClientError as exc:
        if _passing(exc):  # running again may go on; a missing table or a refusal would stop it again
            note(how_far())
        raise
    except (KeyboardInterrupt, BotoCoreError, StoreFault):
        note(how_far())
        raise


def _passing(exc: ClientError) -> bool:
    """Whether AWS refused for the moment (throttled, a server error), not for good."""
    error, status = exc.response.get("Error", {}), exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return "Throttl" in str(error.get("Code", "")) or "LimitExceeded" in str(error.get("Code", "")) or status >= 500


def _fail_for(exc: ClientError | BotoCoreError) -> NoReturn:
    if isinstance(exc, EndpointConnectionError):
        fail(
            f"nothing answers at {exc.kwargs.get('endpoint_url')}: is the local pipeline (`sensor-digest up`) running?"
        )
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        message = exc.response.get("Error", {}).get("Message", str(exc))
        if code == TABLE_NOT_FOUND:
            fail(f"table not found: {message}")
        if code in QUEUE_NOT_FOUND:
            fail(f"queue not found: {message}")
        fail(f"{code}: {message}")
    fail(str(exc))


def fail(message: str) -> NoReturn:
    """One error line on stderr, exit code 1."""
    notes.print(Text.assemble(("error: ", "bold red"), render.data(message)))
    raise typer.Exit(1)


def note(line: str) -> None:
    """A note or warning for the person at the terminal, on stderr (stdout holds only results)."""
    notes.print(render.data(line))


def say(line: str) -> None:
    """A result line on stdout (what a command did) that may hold producer or operator data: shown
    as data."""
    console.print(render.data(line))


def stdin_is_terminal() -> bool:
    """Whether someone can answer a question (a function of its own, so that tests can be one)."""
    return sys.stdin.isatty()


def refuse_without_terminal(action: str) -> None:
    """Refuse ``action`` in one line when nobody can be asked (stdin is a script, a pipe, cron)."""
    if not stdin_is_terminal():
        fail(f"not confirmed: {action}; stdin is not a terminal to ask on, give --yes to go ahead")


def confirm(action: str, *, yes: bool) -> None:
    """Go on with ``action`` (what the command is about to do, in words) only if the person agrees:
    ``--yes`` given, or "y" answered at the terminal (the question on stderr); without a terminal
    and without ``--yes``, refuse (``refuse_without_terminal``). "n" ends the command, exit code 1."""
    if yes:
        return
    refuse_without_terminal(action)
    if not typer.confirm(f"{render.data(action).plain}?", default=False, err=True):
        fail("not confirmed: nothing was done")


def resolve_target(stack: str | None, region: str | None, **explicit: str | None) -> Target:
    return resolve(stack=stack, region=region, **explicit)
