"""``sensor-digest import ... --stack``: the deployed import, started and followed (docs/import.md, "On AWS").

A file is put in the stack's import bucket first, under ``inputs/<its SHA-256>/<its name>`` and only
if it is not there yet (another upload would be another version, another object). Each object is one
execution of the import's state machine, named after the object (its bucket, key and version, else
ETag): starting it again while it runs follows the same execution, one that failed is redriven (its
failed batches run again, their rows' identities keep what they wrote from counting twice), one that finished
is shown. The Distributed Map's run gives the progress (its items: rows).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ClientError

from sensor_digest.errors import UnreadableInput
from sensor_digest.history.record import Before, Figures
from sensor_digest.history.source import format_of
from sensor_digest.store import objects
from sensor_digest_tools.ops.targets import Target, TargetError

INPUTS_PREFIX = "inputs/"
REPORTS_PREFIX = "import-reports/"
POLL_SECONDS = 2.0
REDRIVABLE = ("FAILED", "TIMED_OUT", "ABORTED")
Tick = Callable[[str, int, int], None]
"""What a follower is told: the object's name, rows done, rows in all (0: not known yet)."""


@dataclass
class StackImport:
    """What the deployed import did with the objects named: their figures added up, their error reports."""

    name: str
    figures: Figures = field(default_factory=Figures)
    errors: str | None = None
    before: Before | None = None  # the objects imported whole before, skipped: not in ``figures``
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Clients:
    s3: Any
    sfn: Any
    sleep: Callable[[float], None] = time.sleep


def clients(target: Target) -> Clients:
    region = target.region
    return Clients(boto3.client("s3", region_name=region), boto3.client("stepfunctions", region_name=region))


def put_file(s3: Any, bucket: str, path: Path) -> str:
    """The file in the import bucket (put once: its key names its content); its key."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1024 * 1024), b""):
            digest.update(block)
    key = f"{INPUTS_PREFIX}{digest.hexdigest()}/{path.name}"
    try:
        objects.head(s3, bucket, key)
    except UnreadableInput:
        s3.upload_file(str(path), bucket, key)
    return key


def object_keys(s3: Any, source: str, bucket: str, fmt: str | None) -> list[str]:
    """The keys an ``s3://`` source names in the import bucket: the object, else those under the prefix
    whose format is known (the import's own reports left out)."""
    rest = source.removeprefix("s3://")
    given, _, key = rest.partition("/")
    if given != bucket:
        raise TargetError(
            f"the stack's import reads its own bucket, s3://{bucket}: copy the objects there first "
            f"(aws s3 cp {source} s3://{bucket}/{INPUTS_PREFIX} --recursive)"
        )
    if key and not key.endswith("/"):
        try:
            objects.head(s3, bucket, key)
            return [key]
        except UnreadableInput:
            pass
    found = []
    for name in objects.keys(s3, bucket, key):
        if name.startswith(REPORTS_PREFIX) or name.endswith("/"):
            continue
        try:
            format_of(name, fmt)
        except UnreadableInput:
            continue
        found.append(name)
    if not found:
        raise TargetError(f"no object to import at {source} (names ending .jsonl, .ndjson, .json or .csv)")
    return found


def execution_name(bucket: str, key: str, head: objects.Head, again: bool) -> str:
    """The execution of one object: the same name for the same object (a second start follows it)."""
    identity = f"{bucket}/{key}?{head.version or head.etag}"
    name = "import-" + hashlib.sha256(identity.encode()).hexdigest()[:40]
    return f"{name}-again-{int(time.time())}" if again else name


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def start(c: Clients, machine: str, name: str, payload: dict[str, Any]) -> str:
    """The execution's ARN: started, or the one of that name (redriven when it failed)."""
    try:
        started = c.sfn.start_execution(stateMachineArn=machine, name=name, input=json.dumps(payload))
        return str(started["executionArn"])
    except ClientError as exc:
        if _error_code(exc) != "ExecutionAlreadyExists":
            raise
    arn = f"{machine.replace(':stateMachine:', ':execution:')}:{name}"
    status = c.sfn.describe_execution(executionArn=arn)["status"]
    if status in REDRIVABLE:
        c.sfn.redrive_execution(executionArn=arn)
    return arn


def follow(c: Clients, arn: str, name: str, on_tick: Tick | None) -> dict[str, Any]:
    """Wait for the execution, telling ``on_tick`` how far its Map run got; its output."""
    while True:
        described = c.sfn.describe_execution(executionArn=arn)
        status = described["status"]
        if on_tick is not None:  # the read map's chunks, then the count map's partitions
            runs = c.sfn.list_map_runs(executionArn=arn).get("mapRuns", [])
            counts = [c.sfn.describe_map_run(mapRunArn=run["mapRunArn"]).get("itemCounts", {}) for run in runs]
            if counts:
                done_items = sum(int(n.get("succeeded", 0)) for n in counts)
                on_tick(name, done_items, sum(int(n.get("total", 0)) for n in counts))
        if status == "SUCCEEDED":
            output: dict[str, Any] = json.loads(described.get("output") or "{}")
            return output
        if status in REDRIVABLE:
            cause = described.get("cause") or described.get("error") or status
            raise TargetError(
                f"the import of {name} {status.lower()}: {cause}; run the same command again to redrive it "
                "(its failed items run again; nothing counts twice)"
            )
        c.sleep(POLL_SECONDS)


def run(
    target: Target,
    source: str,
    *,
    fmt: str | None,
    again: bool,
    errors_to: Path | None,
    stack: str | None,
    on_tick: Tick | None = None,
    made: Clients | None = None,
    overlap: str = "refuse",
) -> StackImport:
    """Import ``source`` (a file, or ``s3://`` in the import bucket) with the stack's state machine."""
    bucket, machine = target.import_bucket, target.import_state_machine
    if not (bucket and machine):
        raise TargetError(
            f"{target.origin} has no history import: deploy it with importEnabled=true (docs/import.md), "
            "or import the file into named tables with --table and --ledger"
        )
    c = made or clients(target)
    if source.startswith("s3://"):
        keys = object_keys(c.s3, source, bucket, fmt)
    else:
        path = Path(source)
        if not path.is_file():
            raise TargetError(f"{source}: no such file")
        format_of(path.name, fmt)
        keys = [put_file(c.s3, bucket, path)]
    done = StackImport(name=source)
    reports: list[str] = []
    for key in keys:
        head = objects.head(c.s3, bucket, key)
        payload = {"bucket": bucket, "key": key, **({"format": fmt} if fmt else {}), "again": again, "overlap": overlap}
        arn = start(c, machine, execution_name(bucket, key, head, again), payload)
        output = follow(c, arn, f"s3://{bucket}/{key}", on_tick)
        action = output.get("action")
        if action == "refuse":
            raise TargetError(f"s3://{bucket}/{key}: {output.get('reason')}")
        if action == "skip":
            done.before = done.before or Before()
            done.before.add(Figures.from_json(output.get("figures", {})), str(output.get("finished_at") or ""))
        else:
            done.figures.add(Figures.from_json(output.get("figures", {})))
        if output.get("rejected"):
            reports.append(str(output["rejected"]))
    if reports:
        done.errors = reports[0] if len(reports) == 1 else ", ".join(reports)
        if errors_to is not None:
            with errors_to.open("wb") as out:
                for url in reports:
                    b, _, k = url.removeprefix("s3://").partition("/")
                    for block in objects.blocks(c.s3, b, k, None):
                        out.write(block)
            done.errors = str(errors_to)
    done.extra = {"stack": stack, "objects": [f"s3://{bucket}/{k}" for k in keys]}
    return done
