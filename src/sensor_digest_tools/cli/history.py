"""``import``: a fleet's past reports from a file or from S3 into a pipeline (docs/import.md).

A file is imported here, into the tables of the local pipeline (``sensor-digest up``) or the tables
named (``--table``, ``--ledger``), streamed; with ``--stack``, a file is put in the stack's import
bucket and imported there by the deployed state machine, as an ``s3://`` object or prefix is. Either
way a progress bar (rows, rate, time left) on stderr, the summary on stdout (``--json``), rejected
rows in an error report. Exit codes: 0 imported (rejected rows too: they are in the error report),
1 a failure (nothing to read, a target that cannot be found, writes that failed after their tries:
what was written stands, and the same command again counts the rest, nothing twice), 2 a usage
error, 130 stopped (Ctrl-C, SIGTERM): the same command again goes on.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from sensor_digest import zones
from sensor_digest.errors import UnreadableInput
from sensor_digest.history.counter import Overlap
from sensor_digest.history.record import Before, Figures
from sensor_digest.history.source import format_of
from sensor_digest_tools.cli.options import PLAIN, AsJson, Days, LedgerOpt, Region, Stack, TableOpt, parse_timezone
from sensor_digest_tools.cli.output import errors, fail, note, notes, print_json, resolve_target, say, told_on_stop
from sensor_digest_tools.ops import history_stack
from sensor_digest_tools.ops.history import FileImport, Outcome, default_errors_path, scan_file
from sensor_digest_tools.ops.history import Progress as Done

commands = typer.Typer(**PLAIN)  # import, at the command line's top level (app.py)


Format = Annotated[
    str | None,
    typer.Option("--format", help="jsonl or csv (default: by the name's extension: .jsonl, .ndjson, .json, .csv)."),
]


@commands.command("import")
def import_history(
    source: Annotated[str, typer.Argument(help="A file, or s3://bucket/key-or-prefix (with --stack).")],
    fmt: Format = None,
    stack: Stack = None,
    region: Region = None,
    table: TableOpt = None,
    ledger: LedgerOpt = None,
    timezone: Annotated[
        str | None,
        typer.Option(
            help="The zone of an unregistered sensor's rows at its first import (default: the pipeline's "
            "digestTimezone, else UTC). A sensor's rows keep the zone of its first import."
        ),
    ] = None,
    errors_to: Annotated[
        Path | None,
        typer.Option("--errors", help="Where the rejected rows go (default: beside the file, <name>.rejected.jsonl)."),
    ] = None,
    again: Annotated[
        bool,
        typer.Option(
            "--again", help="Go through an object imported whole before too (its rows found counted: reads only)."
        ),
    ] = False,
    overlap: Annotated[
        Overlap,
        typer.Option(
            help="A row naming an event_id on a day holding live reports the pipeline no longer knows all of "
            "(ordered mode; expired live ledger): refuse it into the error report, or count it (the live "
            "pipeline never received it)."
        ),
    ] = Overlap.REFUSE,
    as_json: AsJson = False,
) -> None:
    """Import a fleet's past reports: JSON lines (each line a sensor message) or CSV (a header naming
    sensor_id, timestamp and optionally count, event_id, readings.<name>, in any case; one line a
    record). Every row needs a timestamp. A row is identified by its sensor and event_id on its day
    (once, across every file), else by its object and line: importing the same object again, or
    another carrying the same event_ids, counts nothing twice. A sensor's rows are dated in the zone
    of its first import.
    Rejected rows go to an error report with their line and reason.

    Exit codes: 0 imported (rows rejected too), 1 a failure (the same command again goes on, nothing
    counts twice), 2 a usage error, 130 stopped."""
    if source.startswith("s3://") or stack:
        if not stack:
            raise typer.BadParameter("an s3:// source is imported by a deployed stack: give --stack NAME")
        if errors_to is not None:
            _check_report_path(errors_to, None if source.startswith("s3://") else Path(source))
        with errors(), bar() as progress:
            target = resolve_target(stack, region)
            task = progress.add_task("importing", total=None, rate="")

            def tick(name: str, done: int, total: int) -> None:
                progress.update(task, description=f"importing {name}", completed=done, total=total or None)

            found = history_stack.run(
                target,
                source,
                fmt=fmt,
                again=again,
                errors_to=errors_to,
                stack=stack,
                on_tick=tick,
                overlap=overlap.value,
            )
        _show(found.name, found.figures, found.errors, as_json, before=found.before, extra=found.extra)
        return
    path = Path(source)
    if path.is_dir():
        raise typer.BadParameter(f"{source} is a folder: name a file in it", param_hint="SOURCE")
    if not path.is_file():
        raise typer.BadParameter(f"{source}: no such file", param_hint="SOURCE")
    if path.name.lower().endswith(".gz"):
        raise typer.BadParameter(
            f"{source}: a compressed file is not read here; decompress it first", param_hint="SOURCE"
        )
    try:
        chosen = format_of(path.name, fmt)
    except UnreadableInput as exc:
        raise typer.BadParameter(str(exc), param_hint="--format") from None
    report = errors_to or default_errors_path(path)
    _check_report_path(report, path)
    with errors():
        target = resolve_target(None, region, table=table, ledger=ledger).need("table", "ledger")
        zone = parse_timezone(timezone or target.timezone or "UTC", zones.load)
        reject = target.unknown_sensors == "reject"
        importer = FileImport.over(
            target.dynamodb(),
            str(target.table),
            str(target.ledger),
            zone=zone,
            reject_unknown=reject,
            overlap=overlap,
        )
        outcome = _run(importer, path, chosen, report, again)
    _show(str(path), outcome.figures, str(outcome.errors) if outcome.errors else None, as_json, before=outcome.before)


def bar() -> Progress:
    """The progress bar on stderr: what, how far (rows of the total), the rate, the time left."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
        console=notes,
        transient=True,
        disable=not notes.is_terminal,
    )


def _run(importer: FileImport, path: Path, fmt: str, errors_path: Path, again: bool) -> Outcome:
    stop = threading.Event()
    reached = Done()
    with bar() as progress:
        task = progress.add_task("reading", total=path.stat().st_size, rate="")
        scanned = scan_file(path, on_bytes=lambda n: progress.advance(task, n))
        progress.update(task, description="reading rows", total=scanned.lines, completed=0)

        def advanced(done: Done) -> None:
            reached.lines, reached.figures, reached.phase = done.lines, done.figures, done.phase
            elapsed = progress.tasks[0].elapsed or 0.0
            rate = f"{done.figures.rows / elapsed:,.0f} rows/s" if elapsed and done.phase == "reading" else ""
            what = "reading rows" if done.phase == "reading" else "counting rows"
            progress.update(task, description=what, completed=done.lines, total=done.total, rate=rate)

        how_far = lambda: _stopped(reached, str(path))  # noqa: E731 - read when stopped
        with told_on_stop(how_far):
            try:
                return importer.run(
                    path, fmt, errors_path, again=again, scanned=scanned, on_progress=advanced, stop=stop
                )
            except UnreadableInput as exc:
                fail(f"{path}: {exc}")


def _stopped(reached: Done, name: str) -> str:
    where = (
        f"after line {reached.lines:,} of {name}, while reading its rows"
        if reached.phase == "reading"
        else f"while counting the rows of {name}"
    )
    return (
        f"stopped {where} ({reached.figures.counted:,} reports counted so far): run the same command again to "
        "import the rest; what was counted stays counted, and nothing counts twice"
    )


def _check_report_path(report: Path, source: Path | None) -> None:
    """The error report's path, checked before anything is read or written (a usage error otherwise):
    never the file imported (the report replaces what is at its path), never a folder, in a folder
    that exists."""
    hint = "--errors"
    if source is not None and (report.resolve() == source.resolve() or _same_file(report, source)):
        raise typer.BadParameter(
            f"{report} is the file being imported: the error report would replace it; name another file",
            param_hint=hint,
        )
    if report.is_dir():
        raise typer.BadParameter(f"{report} is a folder: name a file in it for the error report", param_hint=hint)
    if report.is_symlink() or (report.exists() and not report.is_file()):  # /dev/null, a fifo, a link
        raise typer.BadParameter(
            f"{report} is not a regular file: the error report replaces what is at its path; name a file",
            param_hint=hint,
        )
    if not report.parent.is_dir():
        raise typer.BadParameter(f"{report}: its folder {report.parent} does not exist", param_hint=hint)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:  # one of them is not there (yet)
        return False


def _show(
    name: str,
    figures: Figures,
    errors_path: str | None,
    as_json: bool,
    *,
    before: Before | None = None,
    extra: dict[str, Any] | None = None,
) -> None:
    """The summary: what this import did; what earlier imports did of the objects it skipped apart
    (``imported_before``), never added to this one's figures."""
    if as_json:
        answer: dict[str, Any] = {"source": name, **figures.as_json(), "errors": errors_path}
        answer["imported_before"] = before.as_json() if before is not None else None
        print_json({**answer, **(extra or {})})
        return
    if before is not None:
        whole = "it was" if before.objects == 1 else f"{before.objects:,} objects were"
        say(
            f"{name}: {whole} imported whole before ({before.figures.counted:,} reports counted then, no row "
            "rejected): nothing to do there (--again goes through it once more, reading only)"
        )
        if not figures.rows:
            return
    line = (
        f"imported {name}: {figures.rows:,} rows, {figures.counted:,} counted, {figures.already:,} counted "
        f"before, {figures.duplicates:,} duplicates, {figures.rejected:,} rejected"
    )
    if figures.blank:
        line += f" ({figures.blank:,} blank lines, no rows)"
    say(line)
    if errors_path:
        note(f"the rejected rows, with their line and reason: {errors_path}")
    if figures.overlap_refused:
        note(
            f"{figures.overlap_refused:,} of them name an event_id on days holding live reports the pipeline no longer "
            "knows all of: they may repeat one, so they were not counted; if the live pipeline never received them, "
            "import again with --overlap count (docs/import.md, 'Live and imported reports')"
        )
    if figures.zone_kept:
        note(
            f"{figures.zone_kept:,} rows were dated in the time zone their sensor's first import used, not the one "
            "its profile (or the default) gives now: a sensor's imported rows keep one zone, so that importing them "
            "again finds them on their day (docs: History import)"
        )


@commands.command("import-demo")
def import_demo(
    sensors: Annotated[int, typer.Option(min=1, max=10_000, help="Distinct sensors.")] = 10,
    days: Days = 3,
    per_day: Annotated[int, typer.Option(min=1, max=100_000, help="Reports per sensor-day.")] = 150,
    poison: Annotated[int, typer.Option(min=0, max=10_000, help="Rows the import must reject.")] = 5,
    fmt: Annotated[str, typer.Option("--format", help="jsonl or csv.")] = "jsonl",
    order: Annotated[str, typer.Option(help="sorted (by sensor, then time), time, or random.")] = "sorted",
    seed: Annotated[int, typer.Option(help="Random seed of the history.")] = 7,
    keep: Annotated[
        Path | None, typer.Option(help="A folder to keep the history file and its error report in.")
    ] = None,
) -> None:
    """Import a generated history file into a fresh local pipeline and check it against the truth:
    every sensor-day's count and hours, its readings' statistics read back through the read API (a
    temperature in every row, a humidity in half), the month summaries, the rejected rows in the error
    report, and a second import of the same file counting nothing. Exit code 1 when anything differs."""
    import os

    from sensor_digest_tools.local.history_demo import ImportDemoOptions, run_import_demo
    from sensor_digest_tools.local.readings_check import SHOWN_DIFFERENCES

    if fmt not in ("jsonl", "csv"):
        raise typer.BadParameter("jsonl or csv", param_hint="--format")
    if order not in ("sorted", "time", "random"):
        raise typer.BadParameter("sorted, time or random", param_hint="--order")
    if keep is not None and not keep.is_dir():
        raise typer.BadParameter(f"{keep}: no such folder", param_hint="--keep")
    options = ImportDemoOptions(
        sensors=sensors,
        days=days,
        per_day=per_day,
        poison=poison,
        fmt=fmt,
        order=order,  # type: ignore[arg-type]
        seed=seed,
        engine_endpoint=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"),
    )
    with errors():
        note(f"importing {sensors * days * per_day + poison:,} generated rows into a local pipeline ...")
        result = run_import_demo(options, folder=keep)
    check = {True: "ok", False: "DIFFERENT"}
    first, again = result.first, result.again
    say(
        f"imported {first.rows:,} rows in {result.elapsed_s:.1f} s (both runs): {first.counted:,} reports counted, "
        f"{first.rejected:,} rejected"
    )
    say(f"counts and hours of {len(result.truth.counts):,} sensor-days against the truth: {check[result.counts_exact]}")
    statistics = len(result.truth.readings)
    say(
        f"readings' statistics of {statistics:,} sensor-day readings read back through the read API against the "
        f"truth (count, sum, min, max exact; mean, stddev within 1e-12): {check[result.readings_exact]}"
    )
    for line in result.readings_differences[:SHOWN_DIFFERENCES]:
        note(f"readings: {line}")
    say(f"month summaries built by the stream equal the day items: {check[result.summaries_exact]}")
    say(f"rejected rows in the error report ({result.rejected_lines} lines): {check[result.rejected_reported]}")
    say(
        f"the same file again: {again.counted:,} counted, {again.already:,} found counted before: "
        f"{check[result.again_counted_nothing]}"
    )
    for problem in result.problems:
        note(problem)
    if not result.ok:
        raise typer.Exit(1)
