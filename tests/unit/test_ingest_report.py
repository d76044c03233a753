"""The audit trail's lines: what each counted report contributed, one log line per batch (or per
64 KB of it), never one per group (no engine)."""

from __future__ import annotations

from sensor_digest.ingest.report import AUDIT_LINE_BYTES, BatchReport


def test_a_batch_of_small_groups_is_one_line_holding_every_group_in_order() -> None:
    report = BatchReport()
    report.audit = [[s, "2024-05-01", [[f"e{s}", 1]]] for s in range(1_000)]  # a fleet: one report a group

    lines = report.take_audit()

    assert len(lines) == 1
    assert [group[0] for group in lines[0]] == list(range(1_000))
    assert report.take_audit() == []  # taken: a second look logs nothing again


def test_a_batch_of_long_event_ids_is_cut_into_lines_each_well_under_cloudwatchs_256_kb() -> None:
    report = BatchReport()
    report.audit = [[s, "2024-05-01", [["x" * 128 + str(i), 1_000_000] for i in range(10)]] for s in range(1_000)]

    lines = report.take_audit()

    assert len(lines) > 1
    assert sum(len(line) for line in lines) == 1_000
    for line in lines:
        size = sum(len(event_id) + 16 for group in line for event_id, _ in group[2])
        assert size < 2 * AUDIT_LINE_BYTES < 256 * 1024
