"""What a newcomer meets first, held to what the project does: the Node the docs ask for is the one
the Makefile installs, ``cdk watch`` watches the folders that hold the app, the configuration page
shows defaults as context writes them, the summary table keeps a month's total out of the day
column, and a missing region reads as one sentence. No network."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

import boto3
import pytest
from rich.console import Console

from docs_hooks import context_options
from sensor_digest_tools.cli import render
from sensor_digest_tools.cli.local import CLIENT_NOTE
from sensor_digest_tools.ops.targets import TargetError, from_stack

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_ask_for_npm_and_name_the_node_the_makefile_installs_itself() -> None:
    makefile = (ROOT / "Makefile").read_text()
    installed = re.search(r"^NODE22 := node@(\d+)\.", makefile, re.MULTILINE)
    assert installed is not None
    assert re.search(r"^\tnpm install .*\$\(NODE22\)", makefile, re.MULTILINE)  # set-up needs npm, not a Node
    for page in ("README.md", "docs/getting-started.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert re.findall(r"Node \d+\+", text) == [], page  # no Node version asked of the reader
        assert "`npm`" in text and f"Node {installed[1]}" in text, page


def test_cdk_watch_watches_folders_that_hold_the_app_and_its_construct() -> None:
    watch = json.loads((ROOT / "cdk.json").read_text())["watch"]
    files = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if ".venv" not in p.parts and ".cache" not in p.parts]
    for pattern in watch["include"]:
        assert any(fnmatch.fnmatch(f, pattern) for f in files), f"{pattern} matches nothing"
    for needed in ("app.py", "infra/sensor_digest_cdk/pipeline.py", "functions/ingest/handler.py"):
        assert any(fnmatch.fnmatch(needed, pattern) for pattern in watch["include"]), needed


def test_the_configuration_page_shows_defaults_as_context_writes_them() -> None:
    table = context_options.render_options_table()
    row = next(r for r in table.splitlines() if r.startswith("| `restrictProducers`, `producerArns`"))
    assert row.split(" | ")[1] == "`restrictProducers`: `false`<br>`producerArns`: none"
    assert "False" not in table and "()" not in table and "`True`" not in table


def test_a_months_total_sits_in_the_month_column_never_under_day() -> None:
    console = Console(width=120, record=True, color_system=None)
    console.print(render.summary(7, {"2024-05": {"2024-05-01": 3, "2024-05-02": 4}}))
    text = console.export_text().splitlines()
    [header] = [[c.strip() for c in line.strip()[1:-1].split("┃")] for line in text if "┃" in line]
    cells = [[c.strip() for c in line.strip()[1:-1].split("│")] for line in text if "│" in line]
    assert header == ["month", "day", "count"]
    assert ["", "2024-05-01", "3"] in cells
    assert ["2024-05 total", "", "7"] in cells
    assert cells[-1] == ["total", "", "7"]


def test_a_missing_region_reads_as_one_sentence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)

    with pytest.raises(TargetError) as refused:
        from_stack("SensorDigest", None)

    assert str(refused.value) == (
        "cannot read stack 'SensorDigest': You must specify a region; configure AWS credentials and a region"
    )


def test_every_aws_cli_line_for_the_local_pipeline_names_its_endpoint() -> None:
    # the AWS CLI v1 ignores AWS_ENDPOINT_URL_SQS for `aws sqs` (it goes to queue.amazonaws.com)
    page = (ROOT / "docs" / "local-development.md").read_text(encoding="utf-8")
    commands = re.findall(r"^aws (\w+) [^\n]*", page, re.MULTILINE)
    lines = [line for line in page.splitlines() if line.startswith("aws ")]
    assert set(commands) == {"sqs", "dynamodb"}
    assert all("--endpoint-url" in line for line in lines), lines
    assert '--endpoint-url "$AWS_ENDPOINT_URL_SQS"' in CLIENT_NOTE
