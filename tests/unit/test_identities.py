"""What the compact ledger stores of a report, and that the largest items it can write stay under
1 KB by DynamoDB's size rules (``sizes.item_bytes``: attribute names plus values, a number by its
digits, binary by its bytes). No engine: sizes are computed, as DynamoDB charges them."""

from __future__ import annotations

import hashlib

from sensor_digest.store import schema
from sensor_digest.store.identities import (
    DAY_IDS,
    ID_BYTES,
    IMPORT_DAY_IDS,
    IMPORT_ID_BYTES,
    PAGE_IDS,
    WRITE_IDS,
    collision_chance,
    identity_hash,
    import_collision_chance,
    import_event_hash,
    import_row_hash,
)
from sensor_digest.store.sizes import WRITE_UNIT_BYTES, item_bytes

LARGEST_SENSOR = 2**53 - 1  # the contract's largest sensor id: 16 digits
LARGEST_DAY_COUNT = 10**16 - 1  # 16 digits: ten billion reports a day of a million each would be 10^16


def _ids(n: int) -> dict[str, list[bytes]]:
    return {"BS": [identity_hash(f"event-{i}") for i in range(n)]}


def test_an_identity_is_twelve_bytes_personalised_and_the_same_every_time() -> None:
    digest = identity_hash("reading-0001")
    assert len(digest) == ID_BYTES == 12
    assert digest == identity_hash("reading-0001")
    assert digest != identity_hash("reading-0002")
    # personalised: not a plain BLAKE2b of the id, so these hashes mean nothing elsewhere
    assert digest != hashlib.blake2b(b"reading-0001", digest_size=12).digest()


def test_the_fullest_day_item_with_a_full_day_of_hourly_counts_is_under_1_kb() -> None:
    item = {
        **schema.day_key(LARGEST_SENSOR, "2024-05-01"),
        schema.DATA_COUNT: {"N": str(LARGEST_DAY_COUNT)},
        schema.ID_PAGE: {"N": "99999"},
        schema.IDS: _ids(DAY_IDS),
        schema.HASHED_COUNT: {"N": str(LARGEST_DAY_COUNT)},
        schema.SKIPPED_PAGES: {"N": "99999"},
        # the hourly counts another release adds to the day item: 24 hours of up to 16 digits
        "HourCounts": {"M": {f"{h:02d}": {"N": str(LARGEST_DAY_COUNT)} for h in range(24)}},
    }
    assert item_bytes(item) < WRITE_UNIT_BYTES


def test_the_fullest_ledger_page_is_under_1_kb() -> None:
    item = {
        **schema.id_page_key(LARGEST_SENSOR, "2024-05-01", 99999),
        schema.IDS: _ids(PAGE_IDS),
        schema.EXPIRES_AT: {"N": str(2**40)},
    }
    assert item_bytes(item) < WRITE_UNIT_BYTES


def test_one_write_spans_at_most_two_pages() -> None:
    # a write carries at most a page's worth, so it fills the rest of one page and starts the next
    assert WRITE_IDS <= PAGE_IDS


def test_the_collision_chance_the_docs_give_for_a_million_reports_a_day() -> None:
    assert f"{collision_chance(1_000_000):.1e}" == "1.3e-23"
    assert collision_chance(2_000_000) == 2 * collision_chance(1_000_000)


def test_an_imported_rows_identity_is_eight_bytes_of_its_event_id_else_of_its_object_and_place() -> None:
    object_id = bytes(range(16))
    assert len(import_event_hash("a-1")) == len(import_row_hash(object_id, 0)) == IMPORT_ID_BYTES == 8
    assert import_event_hash("a-1") == import_event_hash("a-1") != import_event_hash("a-2")
    assert import_row_hash(object_id, 7) != import_row_hash(object_id, 8) != import_row_hash(bytes(16), 8)
    assert import_event_hash("a-1")[:8] != identity_hash("a-1")[:8]  # another person than the ledger's
    assert import_collision_chance(10**6) < 1e-13


def test_the_fullest_day_item_of_the_import_is_under_2_kb() -> None:
    item = {
        **schema.day_key(LARGEST_SENSOR, "2024-05-01"),
        schema.DATA_COUNT: {"N": str(LARGEST_DAY_COUNT)},
        schema.READINGS_COVER: {"N": str(LARGEST_DAY_COUNT)},
        "HourCounts": {"M": {f"{h:02d}": {"N": str(LARGEST_DAY_COUNT)} for h in range(24)}},
        schema.IMPORT_SEQ: {"N": str(10**9)},
        schema.IMPORT_IDS: {"BS": [import_event_hash(f"e{i}") for i in range(IMPORT_DAY_IDS)]},
        schema.IMPORT_PAGES: {"BS": [import_event_hash(f"p{i}") for i in range(4)]},
    }
    assert item_bytes(item) < 2 * WRITE_UNIT_BYTES
