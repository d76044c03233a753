"""What the command line shows and reads, without a pipeline: producer text is shown as data (no
markup, nothing invisible, no line it did not have), output to a file is never folded, and
``send --timestamp`` reads numbers as the ingest reads them; results on stdout, errors on stderr;
``--version``; options in the wrong place; long dead letters clipped; JSON with text as itself;
commands that change things refused where nobody can confirm them."""

from __future__ import annotations

import io
import json
import os
from importlib import metadata
from pathlib import Path

import pytest
from botocore.exceptions import ClientError
from rich.table import Table
from typer.testing import CliRunner

from sensor_digest_tools.cli import output, render
from sensor_digest_tools.cli.app import app
from sensor_digest_tools.ops.dlq import DeadLetter


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ABC\u200b", "ABC\\u200b"),  # zero-width space: two serials that print alike
        ("\ufeffid", "\\ufeffid"),  # byte order mark
        ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),  # line and paragraph separators
        ("tag\U000e0041\U000e007f", "tag\\U000e0041\\U000e007f"),  # tag characters
        ("two\nrows", "two\\nrows"),  # a newline would draw a row that is not there
        ("\x1b[31mred", "\\x1b[31mred"),  # terminal escapes
        ("\u202eevil", "\\u202eevil"),  # a right-to-left override
        ("[/x] [link=http://x]y[/link]", "[/x] [link=http://x]y[/link]"),  # markup: shown, never parsed
        ("X\u034fY", "X\\u034fY"),  # a combining grapheme joiner: prints as nothing
        ("X\ufe0fY", "X\\ufe0fY"),  # a variation selector
        ("X\U000e0100Y", "X\\U000e0100Y"),  # a variation selector beyond the BMP
        ("\u3164\u115f\u2800", "\\u3164\\u115f\\u2800"),  # blanks that are letters or symbols
        ("a\u00a0b", "a\\xa0b"),  # a no-break space prints like a space
        ("Zürich 東京 ✓ e\u0301", "Zürich 東京 ✓ e\u0301"),  # letters, symbols and combining marks are themselves
    ],
)
def test_producer_text_is_shown_as_data(text: str, shown: str) -> None:
    assert render.data(text).plain == shown


def test_output_to_a_file_is_not_folded_at_80_columns() -> None:
    out = io.StringIO()
    console = render.console(file=out)
    line = "error: " + " ".join(["a long reason that names https://example.com/a/very/long/path"] * 4)
    console.print(render.data(line))
    table = Table()
    table.add_column("id")
    table.add_row(render.data("x" * 150))
    console.print(table)

    printed = out.getvalue().splitlines()
    assert printed[0] == line
    assert any("x" * 150 in row for row in printed)


@pytest.mark.parametrize(
    ("timestamp", "reason"),
    [
        ("\u0661\u0667\u0661\u0664\u0665\u0665\u0667\u0666\u0660\u0660", "only ASCII"),  # Arabic-Indic digits
        ("\uff11\uff17\uff11\uff14", "only ASCII"),  # full-width digits
        (" 1714557600 ", "no whitespace"),  # spaces
        ("1_714_557_600", "is not ISO-8601"),  # Python's digit separators
        ("1e999", "is not a finite number of epoch seconds"),
        ("1e309", "is not a finite number of epoch seconds"),
        ("9" * 5000, "is no epoch time: 5000 digits"),
    ],
)
def test_send_reads_a_timestamp_as_the_ingest_would_and_refuses_before_any_queue(timestamp: str, reason: str) -> None:
    result = CliRunner().invoke(
        app, ["send", "--sensor", "1", "--timestamp", timestamp, "--queue-url", "http://nowhere.invalid/q"]
    )

    assert result.exit_code == 2 and "Traceback" not in result.output
    assert reason in result.output


@pytest.mark.parametrize(
    ("timestamp", "understood"),
    [
        (
            "2024",
            "as epoch seconds it is 1970-01-01T00:33:44Z, not the year 2024; write a date in ISO-8601 (2024-01-01,",
        ),
        (
            "20240501",
            "as epoch seconds it is 1970-08-23T06:21:41Z, not the date 2024-05-01; "
            "write a date in ISO-8601 (2024-05-01,",
        ),
        (
            "202405",
            "as epoch seconds it is 1970-01-03T08:13:25Z, not the month 2024-05; write a date in ISO-8601 (2024-05-01,",
        ),
        ("2024.5", "as epoch seconds it is 1970-01-01T00:33:44.500000Z, and a number closer to 0 than 100000000"),
        ("-5", "as epoch seconds it is 1969-12-31T23:59:55Z, and a number closer to 0 than 100000000"),
        ("99999999", "as epoch seconds it is 1973-03-03T09:46:39Z, and a number closer to 0 than 100000000"),
    ],
)
def test_send_refuses_a_year_like_number_naming_the_instant_it_would_be_and_how_to_write_a_date(
    timestamp: str, understood: str
) -> None:
    result = CliRunner().invoke(
        app, ["send", "--sensor", "1", "--timestamp", timestamp, "--queue-url", "http://nowhere.invalid/q"]
    )

    assert result.exit_code == 2 and "Traceback" not in result.output
    error = result.stderr.splitlines()[-1]  # one line, after click's usage lines
    assert error.startswith(f"Error: Invalid value: --timestamp {timestamp} is refused: {understood}")
    assert "epoch seconds of 9 digits or more (1714557600)" in error and "if that instant is meant" in error


def test_send_says_an_epoch_in_milliseconds_looks_like_milliseconds() -> None:
    result = CliRunner().invoke(
        app, ["send", "--sensor", "1", "--timestamp", "1714557600000", "--queue-url", "http://nowhere.invalid/q"]
    )

    assert result.exit_code == 2
    assert "it looks like epoch milliseconds (2024-05-01 in UTC): send epoch seconds (divide by 1000)" in result.output


READING_RULE_SAID = "a reading is a JSON number below 1,000,000,000 in magnitude with at most 6 digits after"


@pytest.mark.parametrize(
    ("readings", "said"),
    [
        (["temperature"], 'Invalid value for --reading: "temperature" is no name=value (temperature=21.5)'),
        (
            ["t=21,5"],
            f'Invalid value for --reading: "t=21,5": the value is no JSON number (21.5, -3); {READING_RULE_SAID}',
        ),
        (["t=+5"], "the value is no JSON number"),
        (["t=.5"], "the value is no JSON number"),
        (["t=NaN"], "the value is no JSON number"),
        (["t=\u0661"], "the value is no JSON number"),  # an Arabic-Indic digit
        (["t=" + "1" * 80], "the value has 80 characters"),
        (["t=1", "t=2"], 'Invalid value for --reading: "t" is given twice: one value a name'),
        # the ingest's own rules, and its words
        (
            ["1x=5"],
            'the ingest would reject this report: readings name string "1x" must be 1 to 32 ASCII letters, digits or '
            "_, a letter first",
        ),
        (["t=1.1234567"], "the ingest would reject this report: readings.t must be a JSON number below 1,000,000,000"),
        (["t=1e9"], "got number 1e9"),
        ([f"r{i}=1" for i in range(9)], "the ingest would reject this report: readings must have at most 8 names"),
    ],
)
def test_send_refuses_a_reading_the_ingest_would_reject_in_one_line_before_any_queue(
    readings: list[str], said: str
) -> None:
    options = [x for reading in readings for x in ("--reading", reading)]
    result = CliRunner().invoke(app, ["send", "--sensor", "1", *options, "--queue-url", "http://nowhere.invalid/q"])

    assert result.exit_code == 2 and result.stdout == ""
    error = result.stderr.splitlines()[-1]  # one line, after click's usage lines
    assert error.startswith("Error: ") and said in error


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--hourly"], "Invalid value for --day: --hourly reads one day: give --day YYYY-MM-DD"),
        (["--day", "2024-05-01"], "--day goes with --hourly (a day's hours); a range is --from and --to"),
        ([], "--from and --to are required (or --hourly --day)"),
        (["--from", "2024-05-01"], "--from and --to are required (or --hourly --day)"),
        (["--from", "2024-05-02", "--to", "2024-05-01"], "--to 2024-05-01 is before --from 2024-05-02"),
        (["--from", "2024-13-01", "--to", "2024-05-01"], "'2024-13-01' is not a date (YYYY-MM-DD)"),
        (["--hourly", "--day", "2024-05-01", "--from", "2024-05-01"], "--hourly reads one day (--day), not a range"),
        (["--hourly", "--day", "2024-05-01", "--timezone", "Mars/Base"], "time zone 'Mars/Base' is not an IANA"),
    ],
)
def test_readings_refuses_options_that_do_not_go_together_before_reading_anything(args: list[str], said: str) -> None:
    result = CliRunner().invoke(app, ["readings", "--sensor", "1", *args, "--table", "t"])

    assert result.exit_code == 2 and result.stdout == ""
    assert said in result.stderr.splitlines()[-1]


@pytest.fixture
def no_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No running local pipeline: the state file lives in the test's tmp dir (never a developer's)."""
    monkeypatch.setenv("SENSOR_DIGEST_STATE", str(tmp_path / "local-pipeline.json"))


def test_version_prints_the_package_version_and_exits_0() -> None:
    result = CliRunner().invoke(app, ["--version"])

    assert result.exit_code == 0
    assert result.stdout == f"sensor-digest {metadata.version('sensor-digest')}\n"


@pytest.mark.usefixtures("no_pipeline")
def test_an_error_is_one_line_on_stderr_and_stdout_stays_empty() -> None:
    result = CliRunner().invoke(
        app, ["counts", "--sensor", "1", "--from", "2024-05-01", "--to", "2024-05-01", "--json"]
    )

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "sensor-digest up" in result.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--sensor", "7"], "options go after the subcommand: `{prog} summary rebuild --sensor 7`"),
        (
            ["--table", "T", "--sensor", "7"],
            "options go after the subcommand: `{prog} summary rebuild --sensor 7 --table T`",
        ),
        (["--json"], "`summary rebuild` has no --json: it is `summary`'s own, to read a summary"),
        (
            ["--sensor", "7", "--from", "2024-05"],
            "options go after the subcommand: `{prog} summary rebuild --sensor 7`; "
            "`summary rebuild` has no --from: it is `summary`'s own, to read a summary",
        ),
    ],
)
@pytest.mark.usefixtures("no_pipeline")
def test_summary_refuses_its_own_options_before_a_subcommand_and_says_where_they_go(args: list[str], said: str) -> None:
    # `summary --sensor 7 rebuild` would rebuild every sensor: the group's --sensor is not rebuild's
    result = CliRunner().invoke(app, ["summary", *args, "rebuild"], prog_name="sensor-digest")

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == "Error: " + said.format(prog="sensor-digest")


def test_dlq_list_shows_the_start_of_a_long_body_or_error_and_how_long_it_is_unless_full() -> None:
    def letter(body: str, error: str) -> DeadLetter:
        return DeadLetter(message_id="m-1", body=body, error=error, source_message_id="m-1", receipt_handle="r")

    huge, long_body, long_error = "{" + "x" * 912_343 + "}", "{" + "y" * 4_998 + "}", "e" * 500
    clipped, whole = io.StringIO(), io.StringIO()
    render.console(file=clipped).print(render.dead_letters([letter(huge, long_error)]))
    render.console(file=whole).print(render.dead_letters([letter(long_body, long_error)], full=True))

    assert "{" + "x" * 199 + "… (912,345 characters; --full to see all)" in clipped.getvalue()
    assert "e" * 200 + "… (500 characters; --full to see all)" in clipped.getvalue()
    assert "x" * 200 not in clipped.getvalue() and len(clipped.getvalue().splitlines()) == 6  # one row
    assert long_body in whole.getvalue() and long_error in whole.getvalue() and "--full" not in whole.getvalue()


def test_json_is_written_with_text_as_itself_and_only_what_acts_on_a_terminal_escaped() -> None:
    value = {"name": "Zürich 東京 ✓", "body": "\x9b2J \u202eevil tag\U000e0041 \x7f\n\x1b[31m"}

    text = render.json_text(json.dumps(value, indent=2, ensure_ascii=False))

    assert json.loads(text) == value
    assert '"Zürich 東京 ✓"' in text
    assert "\\u009b2J \\u202eevil tag\\udb40\\udc41 \\u007f\\n\\u001b[31m" in text
    text.encode()  # no lone surrogate: UTF-8 whatever the body held


@pytest.mark.parametrize(
    ("command", "action"),
    [
        (["sensors", "delete", "--sensor", "7", "--table", "T", "--ledger", "L"], "delete sensor 7"),
        (
            ["dlq", "redrive", "--queue-url", "http://nowhere.invalid/q", "--dlq-url", "http://nowhere.invalid/d"],
            "redrive message(s) from http://nowhere.invalid/d to http://nowhere.invalid/q",
        ),
    ],
)
@pytest.mark.usefixtures("no_pipeline")
def test_a_command_that_changes_things_refuses_without_a_terminal_unless_yes(command: list[str], action: str) -> None:
    # CliRunner's stdin is not a terminal: nobody could answer the question; refused before any call
    result = CliRunner().invoke(app, command)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"error: not confirmed: {action}; stdin is not a terminal to ask on, give --yes to go ahead\n"
    )


def test_a_table_title_is_not_folded_into_a_column_of_words_in_file_output() -> None:
    out = io.StringIO()
    table = render.titled("Summary of sensor 206: 1 month(s)")
    table.add_column("day")
    table.add_row("2024-05-01")

    render.console(file=out).print(table)

    assert out.getvalue().splitlines()[0].strip() == "Summary of sensor 206: 1 month(s)"


def test_import_refuses_a_compressed_file_in_one_line(tmp_path: Path) -> None:
    compressed = tmp_path / "history.jsonl.gz"
    compressed.write_bytes(b"\x1f\x8b\x08\x00")

    result = CliRunner().invoke(app, ["import", str(compressed), "--table", "t", "--ledger", "l"])

    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "a compressed file is not read here; decompress it first" in " ".join(result.stderr.split())


@pytest.mark.parametrize(
    ("errors_to", "said"),
    [
        ("history.jsonl", "is the file being imported: the error report would replace it"),
        ("./sub/../history.jsonl", "is the file being imported"),
        ("link.jsonl", "is the file being imported"),  # a hard link to it
        ("folder", "is a folder: name a file in it"),
        ("missing/r.jsonl", "its folder missing does not exist"),
        ("fifo", "fifo is not a regular file"),  # as /dev/null, which was replaced by a file (run as root)
        ("other-link.jsonl", "other-link.jsonl is not a regular file"),  # a symbolic link
    ],
)
def test_import_refuses_an_error_report_at_its_input_or_where_none_can_be_written_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, errors_to: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "folder").mkdir()
    history = tmp_path / "history.jsonl"
    history.write_text('{"sensor_id": 1, "timestamp": "2024-01-01T00:00:00Z"}\n')
    (tmp_path / "link.jsonl").hardlink_to(history)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "other.jsonl").write_text("kept\n")
    (tmp_path / "other-link.jsonl").symlink_to(tmp_path / "other.jsonl")

    result = CliRunner().invoke(
        app, ["import", "history.jsonl", "--errors", errors_to, "--table", "t", "--ledger", "l"]
    )

    assert result.exit_code == 2 and "Traceback" not in result.output
    assert said in " ".join(result.stderr.split())
    assert history.read_text() == '{"sensor_id": 1, "timestamp": "2024-01-01T00:00:00Z"}\n'  # untouched
    assert (tmp_path / "fifo").is_fifo() and (tmp_path / "other.jsonl").read_text() == "kept\n"


@pytest.mark.parametrize(
    ("code", "status", "told"),
    [
        ("ResourceNotFoundException", 400, False),
        ("AccessDeniedException", 400, False),
        ("ThrottlingException", 400, True),
        ("InternalServerError", 500, True),
    ],
)
def test_a_command_stopped_by_aws_says_to_run_it_again_only_when_that_can_go_on(
    capsys: pytest.CaptureFixture[str], code: str, status: int, told: bool
) -> None:
    refusal = ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}}, "BatchWriteItem"
    )
    with pytest.raises(ClientError), output.told_on_stop(lambda: "stopped after line 7: run it again"):
        raise refusal
    assert ("stopped after line 7" in capsys.readouterr().err) is told
