"""Where a command acts: the local pipeline, a deployed stack, or explicitly named resources."""

from __future__ import annotations

import json
import os
import signal
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

from sensor_digest import names
from sensor_digest_tools.aws.dynamodb_local import user_cache
from sensor_digest_tools.aws.session import local_client

OUTPUT_KEYS = {
    "queue_url": names.OUTPUT_QUEUE_URL,
    "dlq_url": names.OUTPUT_DEAD_LETTER_QUEUE_URL,
    "table": names.OUTPUT_TABLE_NAME,
    "ledger": names.OUTPUT_LEDGER_TABLE_NAME,
    "unknown_sensors": names.OUTPUT_UNKNOWN_SENSORS,
    "timezone": names.OUTPUT_DIGEST_TIMEZONE,
    "import_bucket": names.OUTPUT_IMPORT_BUCKET,
    "import_state_machine": names.OUTPUT_IMPORT_STATE_MACHINE,
}


class TargetError(RuntimeError):
    """The target cannot be found or reached; the message says what to do."""


@dataclass(frozen=True)
class Target:
    queue_url: str | None = None
    dlq_url: str | None = None
    table: str | None = None
    ledger: str | None = None
    dynamodb_endpoint: str | None = None
    sqs_endpoint: str | None = None
    region: str | None = None
    origin: str = "explicit"
    pid: int | None = None  # the `up` process that keeps a local pipeline running
    engine_pid: int | None = None  # the DynamoDB Local that `up` started (None: one it did not start)
    api_url: str | None = None  # the read API `up` serves on loopback
    unknown_sensors: str | None = None  # the ingest's UNKNOWN_SENSORS, where the target says it (None: unknown)
    timezone: str | None = None  # the ingest's DIGEST_TIMEZONE, where the target says it (None: unknown)
    import_bucket: str | None = None  # a stack's history import (importEnabled): its bucket
    import_state_machine: str | None = None  # and its state machine
    events_file: str | None = None  # the alarm events a local pipeline's bus keeps (JSON lines; `up`'s)

    @property
    def local(self) -> bool:
        return self.dynamodb_endpoint is not None

    def dynamodb(self) -> Any:
        if self.dynamodb_endpoint:
            return local_client(self.dynamodb_endpoint)
        return boto3.client("dynamodb", region_name=self.region)

    def sqs(self) -> Any:
        if self.sqs_endpoint:
            return local_client(self.sqs_endpoint, "sqs")
        return boto3.client("sqs", region_name=self.region)

    def need(self, *fields: str) -> Target:
        missing = [f for f in fields if not getattr(self, f)]
        if missing:
            flags = ", ".join("--" + f.replace("_", "-") for f in missing)
            raise TargetError(f"{self.origin} target has no {', '.join(missing)}: pass {flags} or --stack NAME")
        return self


def state_file() -> Path:
    """Where ``up`` leaves the running pipeline's endpoints: ``SENSOR_DIGEST_STATE``, else the user's cache."""
    return Path(os.environ.get("SENSOR_DIGEST_STATE") or user_cache() / "local-pipeline.json")


def events_file() -> Path:
    """Where ``up`` keeps the alarm events its local bus took: beside the state file."""
    path = state_file()
    return path.with_name(f"{path.stem}.events.jsonl")


def save_local(target: Target) -> Path:
    """The state file, written whole or not at all: a reader that finds the file (another command,
    a test waiting for ``up``) never reads it empty or half written."""
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(asdict(target), indent=2))
    partial.replace(path)  # a rename within one folder: atomic
    return path


def clear_local(pid: int | None = None) -> None:
    """Remove the state file; with ``pid``, only if it is still that process's (never another's)."""
    if pid is not None:
        current = _read_state()
        if current is None or current.pid != pid:
            return
    state_file().unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def _read_state() -> Target | None:
    path = state_file()
    if not path.is_file():
        return None
    try:
        return Target(**json.loads(path.read_text()))
    except (ValueError, TypeError) as exc:
        raise TargetError(f"the state file {path} is not one `sensor-digest up` wrote ({exc}); remove it") from exc


def running_local() -> Target | None:
    """The local pipeline a live ``up`` keeps, if any; a state file whose process is gone (killed
    without its clean-up) is removed, and ``TargetError`` says so."""
    target = _read_state()
    if target is None:
        return None
    if target.pid is not None and not _alive(target.pid):
        state_file().unlink(missing_ok=True)
        stopped = _stop_orphan_engine(target.engine_pid)
        raise TargetError(
            f"the local pipeline of process {target.pid} is gone (its state file was stale and is now removed"
            f"{'; its DynamoDB Local, left running, is stopped' if stopped else ''}): start one with `sensor-digest up`"
        )
    return target


def _stop_orphan_engine(pid: int | None) -> bool:
    """Stop the DynamoDB Local a killed ``up`` left behind: only a live process that is one (its
    command line names ``DynamoDBLocal.jar``: a pid may have been reused since); ``True`` if stopped."""
    if pid is None or not _alive(pid):
        return False
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # no /proc (macOS) or not ours to read: leave it alone
        return False
    if b"DynamoDBLocal.jar" not in command:
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    return True


def from_stack(name: str, region: str | None) -> Target:
    try:
        stacks = boto3.client("cloudformation", region_name=region).describe_stacks(StackName=name)["Stacks"]
    except (NoCredentialsError, NoRegionError) as exc:
        reason = str(exc).rstrip(".")  # botocore's sentences end with one: "You must specify a region."
        raise TargetError(f"cannot read stack {name!r}: {reason}; configure AWS credentials and a region") from exc
    except ClientError as exc:
        message = exc.response.get("Error", {}).get("Message", str(exc))
        if "does not exist" in message:
            raise TargetError(f"stack {name!r} does not exist in this account and region") from exc
        raise TargetError(f"cannot read stack {name!r}: {message}") from exc
    except BotoCoreError as exc:
        raise TargetError(f"cannot reach CloudFormation: {exc}") from exc
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
    values = {field: outputs.get(key) for field, key in OUTPUT_KEYS.items()}
    return Target(**values, region=region, origin=f"stack {name!r}")


def resolve(
    *,
    stack: str | None = None,
    queue_url: str | None = None,
    dlq_url: str | None = None,
    table: str | None = None,
    ledger: str | None = None,
    region: str | None = None,
) -> Target:
    """``--stack`` first, else the running local pipeline; explicit options override either."""
    if stack:
        base = from_stack(stack, region)
    else:
        local = running_local()
        base = local if local is not None else Target(region=region, origin="explicit")
    if queue_url and queue_url != base.queue_url:  # another pipeline's queue: its setting is not known here
        base = replace(base, unknown_sensors=None)
    target = replace(
        base,
        queue_url=queue_url or base.queue_url,
        dlq_url=dlq_url or base.dlq_url,
        table=table or base.table,
        ledger=ledger or base.ledger,
    )
    if not (target.queue_url or target.table or target.dlq_url):
        raise TargetError(
            "no pipeline to act on: start the local one with `sensor-digest up`, "
            "or name a deployed one with --stack NAME (or --queue-url / --table)"
        )
    return target
