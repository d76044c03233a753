"""How the command line shows things: rich tables and lines, built from typed results.

What producers and operators wrote (bodies, reasons, ids, names, serials, the tables' own keys)
is data, never markup: the console parses no markup at all (``console()``), every such value is
shown through ``data`` as a ``Text`` whose terminal control characters (ESC sequences that could
clear or restyle the screen, bidirectional overrides that reorder what is read) are shown as
escapes, and styles are given as ``Text`` styles, never spelt in the strings.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from sensor_digest.registry import SensorProfile
from sensor_digest.silence.rules import wording
from sensor_digest.store import schema
from sensor_digest_tools.ops.dlq import DeadLetter

if TYPE_CHECKING:
    from sensor_digest_tools.local.demo import DemoResult

# What is shown as an escape rather than as itself: control characters (C0 and C1, tab and newline
# among them: a newline in a cell would draw a row that is not there), format characters (the
# bidirectional overrides that make a line read other than it is, zero-width spaces and joiners,
# the byte order mark, tag characters), line and paragraph separators, lone surrogates,
# private-use characters, the other invisible ones (``_INVISIBLE``) and blanks other than the
# space. Combining marks stay themselves: they are how many scripts write. Display only: the
# interpreter's Unicode tables decide, no verdict does.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co"})

# Unicode's default-ignorable code points that are no format character (U+034F, the Hangul fillers,
# the variation selectors...): they print as nothing. And blanks other than the space (U+00A0 and
# the other space separators, U+2800 the blank braille pattern): they print like a space, or as nothing.
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def _unsafe(char: str) -> bool:
    category = unicodedata.category(char)
    return category in _UNSAFE_CATEGORIES or (category == "Zs" and char != " ") or bool(_INVISIBLE.match(char))


def _escaped(text: str) -> str:
    if text.isascii() and text.isprintable():
        return text
    return "".join(ascii(c)[1:-1] if _unsafe(c) else c for c in text)


def json_text(text: str) -> str:
    """JSON written with ``ensure_ascii=False``, its unsafe characters (the same as ``data``'s, which
    JSON allows raw inside a string: C1 controls, bidirectional overrides, lone surrogates...) as
    JSON escapes (``\\u202e``, a pair for one beyond U+FFFF): the same JSON value, letters as
    themselves, nothing that acts on a terminal or cannot be written as UTF-8."""
    if text.isascii() and "\x7f" not in text:
        return text  # json.dumps escapes every other ASCII control character inside a string itself
    # a raw newline is the indentation's, between values (json.dumps writes one in a string as \n)
    return "".join(_json_escape(c) if c != "\n" and _unsafe(c) else c for c in text)


def _json_escape(char: str) -> str:
    units = char.encode("utf-16-le", "surrogatepass")
    return "".join(f"\\u{int.from_bytes(units[i : i + 2], 'little'):04x}" for i in range(0, len(units), 2))


def titled(title: str, **options: Any) -> Table:
    """A table at least as wide as its title, so that the title is never folded into a column of
    words (the table itself takes only the width it needs, up to the console's)."""
    return Table(title=title, min_width=cell_len(title), **options)


NOT_A_TERMINAL_WIDTH = 10_000
"""The width of output that goes to a file or a pipe: wide enough that no line is folded (a
one-line error stays one line, a URL stays whole); tables still take only the width they need."""


def console(**options: object) -> Console:
    """The command line's console: no markup, no emoji codes, no highlighting of data; on a
    terminal as wide as the terminal, elsewhere never folding a line (``NOT_A_TERMINAL_WIDTH``)."""
    out = Console(markup=False, emoji=False, highlight=False, **options)  # type: ignore[arg-type]
    if not out.is_terminal:
        out.width = NOT_A_TERMINAL_WIDTH
    return out


def data(value: object, style: str = "") -> Text:
    """A value as plain text, with its unsafe characters escaped (``\\x1b``, ``\\u202e``, ``\\n``)."""
    return Text(_escaped(str(value)), style=style)


def demo(result: DemoResult) -> list[RenderableType]:
    """The demo's report: counts against the truth, summaries, the run's figures, the checks."""
    shown_parts: list[RenderableType] = []
    truth = dict(result.traffic.truth)
    days = sorted({d for _, d in truth} | {d for _, d in result.counts})
    sensors = sorted({s for s, _ in truth} | {s for s, _ in result.counts})
    shown = sensors[:10]
    table = titled(f"Per-day counts (DynamoDB day items; {len(shown)} of {len(sensors)} sensors)")
    table.add_column("sensor", justify="right")
    for day in days:
        table.add_column(day, justify="right")
    for sensor in shown:
        cells = []
        for day in days:
            got, want = result.counts.get((sensor, day)), truth.get((sensor, day))
            cell = Text(str(got if got is not None else "-"))
            if got != want:
                cell.append(f" (want {want})", style="red")
            cells.append(cell)
        table.add_row(str(sensor), *cells)
    shown_parts.append(table)

    expected = result.day_item_summaries
    summary = titled(f"Summaries ({schema.DAILY_COUNTS} of each sensor's summary item)")
    for column in ("sensor", "days", "total", "matches its day items"):
        summary.add_column(column, justify="right")
    for sensor in shown:
        daily = result.summaries.get(sensor, {})
        summary.add_row(
            str(sensor),
            str(len(daily)),
            str(sum(daily.values())),
            Text("yes", style="green") if daily == expected.get(sensor) else Text("no", style="red"),
        )
    shown_parts.append(summary)

    stats, figures = result.stats, result.figures
    facts = titled("Run", show_header=False)
    facts.add_column("what")
    facts.add_column("value", justify="right")
    rows = [
        ("queue", f"{result.options.queue_type.value} (batches of up to {result.batch_size})"),
        ("messages sent (valid + poison)", f"{stats.messages} ({stats.valid} + {stats.poison})"),
        ("producer retries SQS dropped (FIFO deduplication)", str(stats.producer_retries)),
        ("deliveries to the ingest handler", str(stats.deliveries)),
        ("duplicate deliveries (lost deletes)", str(stats.duplicates_injected)),
        ("DynamoDB faults injected", str(stats.faults_injected)),
        ("failures listed, redelivered by SQS", str(stats.failures_listed)),
        ("stream records read / filtered out", f"{stats.stream_records} / {stats.stream_filtered_out}"),
        ("summary retries from a checkpoint", str(stats.stream_retries)),
        ("stream records given up after the retries (on-failure queue)", str(stats.stream_given_up)),
        ("moved to the DLQ by SQS after maxReceiveCount, then redriven", str(stats.redriven)),
        ("elapsed", f"{figures.elapsed_s:.1f} s"),
        ("messages per second", f"{figures.messages_per_s:.0f}"),
        ("DynamoDB requests per message: ingest", f"{figures.ingest_requests_per_message:.3f}"),
        ("DynamoDB requests per message: summary", f"{figures.summary_requests_per_message:.3f}"),
        ("lag send -> summary p50 / p95", f"{figures.lag_p50_s:.2f} s / {figures.lag_p95_s:.2f} s"),
    ]
    for row in rows:
        facts.add_row(*row)
    shown_parts.append(facts)

    reasons = sorted({d.error for d in result.dead_letters if d.error})
    checks = [
        ("every day count equals the truth", result.counts_exact),
        ("every summary equals its day items", result.summaries_exact),
        (
            "every reading's statistics read back through the read API equal the truth "
            f"({len(result.traffic.readings)} readings of a sensor-day: count, sum, min, max exact; "
            "mean, stddev within 1e-12)",
            result.readings_exact,
        ),
        (f"every poison message is in the DLQ with its reason ({len(result.poison_ids)})", result.poison_kept),
        ("no emulator error", not result.errors),
    ]
    if result.quiet_day is not None:
        checks.insert(-1, ("the silence check finds the sensor that fell silent, and only it", result.silence_found))
        for entry in result.silent:
            shown_parts.append(
                Text.assemble(
                    "Silence: sensor ",
                    data(entry["sensor_id"]),
                    f" stopped reporting at noon of {result.quiet_day}; at 23:30 the silence check finds it silent: ",
                    data(wording(entry)),
                    ". Under `sensor-digest up`: `sensor-digest silence`, GET /silence, the page.",
                )
            )
    if result.alarms is not None:
        alarms = result.alarms
        checks.insert(
            -1,
            (
                f"an alarm rule's {len(alarms.expected)} transitions (breach, acknowledge, clear, breach, snooze, "
                f"reset), each announced once as an event, though every report was resent ({alarms.resent})",
                alarms.ok,
            ),
        )
    for text, ok in checks:
        shown_parts.append(Text.assemble(("PASS", "green") if ok else ("FAIL", "bold red"), " ", text))
    for difference in result.alarms.differences if result.alarms is not None else []:
        shown_parts.append(Text.assemble(("  alarms: ", "dim"), data(difference, style="red")))
    if stats.stream_given_up and not result.summaries_exact:
        shown_parts.append(
            Text(
                f"  {stats.stream_given_up} stream record(s) were given up after the retries, as Lambda does "
                "(the deployed stack alarms on its stream failure queue): `sensor-digest summary rebuild` "
                "brings the summaries back to the day items",
                style="dim",
            )
        )
    for difference in result.reading_differences[:5]:
        shown_parts.append(Text.assemble(("  readings: ", "dim"), data(difference, style="red")))
    for reason in reasons[:5]:
        shown_parts.append(Text.assemble(("  DLQ reason: ", "dim"), data(reason)))
    for error in result.errors:
        shown_parts.append(Text.assemble("  ", data(error, style="red")))
    shown_parts.append(Text("exact", style="bold green") if result.ok else Text("counts are wrong", style="bold red"))
    return shown_parts


def profile(profile: SensorProfile, title: str) -> Table:
    """One sensor's profile."""
    out = titled(title, show_header=False)
    out.add_column("field")
    out.add_column("value")
    for field, value in (
        ("sensor", profile.sensor_id),
        ("name", profile.name),
        ("serial", profile.serial),
        ("time zone", profile.timezone),
        ("silence after", "the stack's default" if profile.silence_hours is None else f"{profile.silence_hours} h"),
        ("registered", registered(profile)),
        ("version", profile.version),
    ):
        out.add_row(field, data(value))
    return out


def registered(profile: SensorProfile) -> str:
    """When a profile was registered, as ``sensors show`` and ``sensors list`` say it."""
    at = profile.registered_at
    return "before registration times were kept" if at is None else f"{at[:10]} {at[11:16]} UTC"


def hours_table(
    title: str, days: list[tuple[str, int]], hours: dict[str, dict[str, int] | None], bad_hours: dict[str, str]
) -> Table:
    """A sensor's days, each with its hours: one row per hour with reports, under its day's row. A
    day whose hours hold only some of its reports, or whose hours cannot be read, says so."""
    out = titled(title)
    out.add_column("day")
    out.add_column("hour")
    out.add_column("count", justify="right")
    for day, n in days:
        out.add_row(data(day), Text("all day", style="bold"), Text(str(n), style="bold"))
        by_hour = hours.get(day)
        if day in bad_hours:
            out.add_row("", Text.assemble(("(hours cannot be read: ", "dim"), data(bad_hours[day]), (")", "dim")), "")
            continue
        if by_hour is None:
            out.add_row("", Text("(no hours: counted before hours were kept)", style="dim"), "")
            continue
        for hour, count in sorted(by_hour.items()):
            if count:
                out.add_row("", data(f"{hour}:00"), str(count))
        held = sum(by_hour.values())
        if held != n:
            why = "some counted before hours were kept" if held < n else "more than the day's count"
            out.add_row("", Text(f"(hours hold {held} of {n} reports: {why})", style="dim"), "")
    return out


def silent_sensors(title: str, silent: list[dict[str, Any]]) -> Table:
    """The silent sensors (``GET /silence``'s entries), each said in the one phrasing the page and
    the docs use too (``silence.rules.wording``): its last report hour and zone, how long, its threshold."""
    out = titled(title)
    out.add_column("sensor", justify="right")
    out.add_column("silence")
    for entry in silent:
        out.add_row(data(entry["sensor_id"]), data(wording(entry)))
    return out


CLIPPED_AT = 200
"""Characters of a dead letter's body or error that ``dlq list`` shows unless ``--full``."""


def dead_letters(entries: list[DeadLetter], *, full: bool = False, cut: str | None = None) -> Table:
    """The dead-letter queue, whole ids (the terminal wraps them): each message's own SQS id, and
    its origin (the id and send time it counts by) where that is another one; each body and error
    its first ``CLIPPED_AT`` characters and how long it is, or whole with ``full``. ``cut``: what
    the title says instead of the count when the listing stopped at its limit (``listing_cut``)."""
    out = titled(f"Dead-letter queue: {cut or f'{len(entries)} message(s)'}")
    out.add_column("message id", overflow="fold")  # fold: a long id or body is wrapped, never cut
    out.add_column("origin (id, sent)", overflow="fold")
    out.add_column("error", overflow="fold")
    out.add_column("body", overflow="fold")
    for entry in entries:
        reason = clipped(entry.error, full=full) if entry.error else Text("(failed maxReceiveCount times)", style="dim")
        origin = (
            Text("(its own)", style="dim")
            if entry.source_message_id == entry.message_id
            else data(f"{entry.source_message_id}, {_sent(entry.source_sent_timestamp)}")
        )
        out.add_row(data(entry.message_id), origin, reason, clipped(entry.body, full=full))
    return out


def listing_cut(listed: int, limit: int, depth: int | None) -> str | None:
    """What a listing that stopped at its ``limit`` shows (``None`` when it shows every message):
    how many of about how many the queue holds (``depth``, SQS's approximate count, if known)."""
    if listed < limit or (depth is not None and depth <= listed):
        return None
    of = f" of about {depth}" if depth is not None else " (there may be more)"
    return f"first {listed}{of} message(s); --limit to see more"


def clipped(value: str, *, full: bool = False, at: int = CLIPPED_AT) -> Text:
    """``value`` as data, or its first ``at`` characters and a marker that says how long it is."""
    if full or len(value) <= at:
        return data(value)
    return Text.assemble(data(value[:at]), (f"… ({len(value):,} characters; --full to see all)", "dim"))


def _sent(millis: str | None) -> str:
    """An SQS send time (epoch milliseconds) as a person reads it."""
    if millis is None or not (millis.isascii() and millis.isdigit()):
        return "send time unknown"
    try:
        return datetime.fromtimestamp(int(millis) / 1000, tz=UTC).isoformat(timespec="milliseconds")
    except (OverflowError, ValueError, OSError):
        return f"{millis} ms"


def summary(sensor: int, months: dict[str, dict[str, int]]) -> Table:
    """A sensor's months, each day's count under its month, the month's total in the month column
    (never under "day"), and the total of all."""
    out = titled(f"Summary of sensor {sensor}: {len(months)} month(s)")
    out.add_column("month")
    out.add_column("day")
    out.add_column("count", justify="right")
    for month, daily in sorted(months.items()):
        for day, n in daily.items():
            out.add_row("", data(day), str(n))
        out.add_row(data(f"{month} total", "dim"), "", Text(str(sum(daily.values())), style="dim"))
    total = sum(n for daily in months.values() for n in daily.values())
    out.add_row(Text("total", style="bold"), "", Text(str(total), style="bold"))
    return out
