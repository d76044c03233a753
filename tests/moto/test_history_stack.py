"""``sensor-digest import ... --stack``'s side (ops/history_stack.py): a file put in the import bucket once,
one execution per object named after it, a second start following it, a failed one redriven, the
Map run's progress, a refused object said in one line. Engines: moto's S3; Step Functions is a fake
that answers as the service documents (an execution of a name that exists: ExecutionAlreadyExists)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from sensor_digest_tools.ops import history_stack
from sensor_digest_tools.ops.targets import Target, TargetError

BUCKET = "the-import-bucket"
MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:Import"
FINISHED = {"action": "finished", "figures": {"rows": 3, "counted": 3}, "name": "x"}


@dataclass
class FakeStepFunctions:
    """Executions by name: each runs through ``statuses`` (one a ``describe_execution``), then ends
    with ``output``; ``redrive_execution`` runs a failed one again."""

    statuses: list[str] = field(default_factory=lambda: ["RUNNING", "SUCCEEDED"])
    output: dict[str, Any] = field(default_factory=lambda: dict(FINISHED))
    started: list[dict[str, Any]] = field(default_factory=list)
    redriven: list[str] = field(default_factory=list)
    state: dict[str, list[str]] = field(default_factory=dict)

    def start_execution(self, *, stateMachineArn: str, name: str, input: str) -> dict[str, Any]:
        arn = f"{stateMachineArn.replace(':stateMachine:', ':execution:')}:{name}"
        if arn in self.state:
            error = {"Error": {"Code": "ExecutionAlreadyExists", "Message": "exists"}}
            raise ClientError(error, "StartExecution")  # type: ignore[arg-type]
        self.started.append({"name": name, "input": json.loads(input)})
        self.state[arn] = list(self.statuses)
        return {"executionArn": arn}

    def describe_execution(self, *, executionArn: str) -> dict[str, Any]:
        left = self.state[executionArn]
        status = left.pop(0) if len(left) > 1 else left[0]
        answer: dict[str, Any] = {"status": status}
        if status == "SUCCEEDED":
            answer["output"] = json.dumps(self.output)
        if status == "FAILED":
            answer["cause"] = "a batch failed: throttled"
        return answer

    def redrive_execution(self, *, executionArn: str) -> dict[str, Any]:
        self.redriven.append(executionArn)
        self.state[executionArn] = ["RUNNING", "SUCCEEDED"]
        return {}

    def list_map_runs(self, *, executionArn: str) -> dict[str, Any]:
        return {"mapRuns": [{"mapRunArn": f"{executionArn}/map"}]}

    def describe_map_run(self, *, mapRunArn: str) -> dict[str, Any]:
        return {"itemCounts": {"succeeded": 2, "total": 3}}


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        yield client


TARGET = Target(import_bucket=BUCKET, import_state_machine=MACHINE, origin="stack 'S'")


def run(s3: Any, sfn: FakeStepFunctions, source: str, **given: Any) -> history_stack.StackImport:
    made = history_stack.Clients(s3, sfn, sleep=lambda _: None)
    options: dict[str, Any] = {"fmt": None, "again": False, "errors_to": None, "stack": "S", **given}
    return history_stack.run(TARGET, source, made=made, **options)


def test_a_file_is_put_in_the_import_bucket_once_and_imported_by_one_execution(s3: Any, tmp_path: Path) -> None:
    history = tmp_path / "fleet.jsonl"
    history.write_text('{"sensor_id": 1, "timestamp": "2020-01-01T00:00:00Z"}\n')
    sfn = FakeStepFunctions()
    ticks: list[tuple[str, int, int]] = []

    first = run(s3, sfn, str(history), on_tick=lambda *t: ticks.append(t))
    second = run(s3, sfn, str(history))

    versions = s3.list_object_versions(Bucket=BUCKET).get("Versions", [])
    assert (
        len(versions) == 1 and versions[0]["Key"].startswith("inputs/") and versions[0]["Key"].endswith("/fleet.jsonl")
    )
    assert len(sfn.started) == 1  # the second start followed the execution of the same name
    started = {"bucket": BUCKET, "key": versions[0]["Key"], "again": False, "overlap": "refuse"}
    assert sfn.started[0]["input"] == started
    assert first.figures.counted == second.figures.counted == 3
    assert ticks and ticks[-1][1:] == (2, 3)


def test_a_failed_execution_is_said_and_the_same_command_again_redrives_it(s3: Any) -> None:
    s3.put_object(Bucket=BUCKET, Key="inputs/h.csv", Body=b"sensor_id,timestamp\n1,2020-01-01\n")
    sfn = FakeStepFunctions(statuses=["RUNNING", "FAILED"])

    with pytest.raises(TargetError, match="failed: a batch failed: throttled; run the same command again"):
        run(s3, sfn, f"s3://{BUCKET}/inputs/h.csv")
    again = run(s3, sfn, f"s3://{BUCKET}/inputs/h.csv")

    assert len(sfn.redriven) == 1 and again.figures.counted == 3


def test_a_prefix_is_every_object_under_it_but_the_imports_own_reports(s3: Any) -> None:
    for key in ("inputs/a.jsonl", "inputs/b.csv", "inputs/notes.txt", "import-reports/x/rejected.jsonl"):
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"sensor_id,timestamp\n")
    sfn = FakeStepFunctions()

    done = run(s3, sfn, f"s3://{BUCKET}/")

    assert sorted(s["input"]["key"] for s in sfn.started) == ["inputs/a.jsonl", "inputs/b.csv"]
    assert done.figures.counted == 6


def test_an_object_outside_the_import_bucket_is_refused_with_the_way_to_copy_it(s3: Any) -> None:
    with pytest.raises(TargetError, match=f"copy the objects there first .*s3://{BUCKET}/inputs/"):
        run(s3, FakeStepFunctions(), "s3://elsewhere/history.jsonl")


def test_an_object_the_import_refuses_is_said_with_its_reason(s3: Any) -> None:
    s3.put_object(Bucket=BUCKET, Key="inputs/broken.csv", Body=b"id,time\n")
    refused = {"action": "refuse", "reason": "the CSV header must name sensor_id and timestamp (it lacks ...)"}

    with pytest.raises(TargetError, match=r"inputs/broken\.csv: the CSV header must name sensor_id and timestamp"):
        run(s3, FakeStepFunctions(output=refused), f"s3://{BUCKET}/inputs/broken.csv")


def test_a_stack_without_the_import_is_told_how_to_deploy_it(s3: Any) -> None:
    with pytest.raises(TargetError, match="importEnabled=true"):
        history_stack.run(Target(origin="stack 'S'"), "x.jsonl", fmt=None, again=False, errors_to=None, stack="S")


def test_objects_imported_whole_before_are_apart_from_what_this_import_counted(s3: Any) -> None:
    for key in ("inputs/a.jsonl", "inputs/b.jsonl"):
        s3.put_object(Bucket=BUCKET, Key=key, Body=b'{"sensor_id": 1, "timestamp": "2020-01-01"}\n')
    skipped = {"action": "skip", "figures": {"rows": 5, "counted": 5}, "finished_at": "2026-01-02T03:04:05Z"}
    sfn = FakeStepFunctions(output=skipped)

    done = run(s3, sfn, f"s3://{BUCKET}/inputs/")

    assert done.figures.counted == 0 and done.figures.rows == 0  # nothing counted now
    assert done.before is not None and (done.before.objects, done.before.figures.counted) == (2, 10)
    assert done.before.finished_at == "2026-01-02T03:04:05Z"
