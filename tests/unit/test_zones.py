"""Time zones from the zone data the functions ship (``sensor_digest/zones.py``); no network, no engine."""

from __future__ import annotations

import json
import zoneinfo
from collections.abc import Iterator
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path

import pytest

from sensor_digest import zones
from sensor_digest.config import IngestSettings
from sensor_digest.errors import ConfigurationError, UnknownTimeZone
from sensor_digest.messages import read_pending

BASE = {"TABLE_NAME": "t", "LEDGER_TABLE_NAME": "l", "DLQ_URL": "https://sqs.example/q"}


@pytest.fixture
def machine_zone_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A machine whose zone files say Asia/Tokyo is New York (``zoneinfo`` reads them before tzdata)."""
    new_york = resources.files("tzdata.zoneinfo.America").joinpath("New_York").read_bytes()
    (tmp_path / "Asia").mkdir()
    (tmp_path / "Asia" / "Tokyo").write_bytes(new_york)
    monkeypatch.setattr(zones, "_loaded", {})
    zoneinfo.reset_tzpath(to=[str(tmp_path)])
    zoneinfo.ZoneInfo.clear_cache()
    try:
        yield tmp_path
    finally:
        zoneinfo.reset_tzpath()
        zoneinfo.ZoneInfo.clear_cache()


def test_the_day_does_not_depend_on_the_machines_zone_files(machine_zone_files: Path) -> None:
    # Given a machine whose Asia/Tokyo file holds New York's rules (ZoneInfo(name) reads it)
    assert zoneinfo.ZoneInfo("Asia/Tokyo").utcoffset(datetime(2024, 5, 1)) == timedelta(hours=-4)

    # When the digest zone and a sensor's zone are read
    settings = IngestSettings.from_env({**BASE, "DIGEST_TIMEZONE": "Asia/Tokyo"})
    body = json.dumps({"sensor_id": 1, "timestamp": "2024-05-01T20:00:00Z"})
    day = read_pending(message_id="m", body=body, sent_timestamp=None).in_zone(settings.timezone).day

    # Then they are tzdata's Tokyo (+09:00: 05:00 on 2 May), as in Lambda, not the machine's
    assert day == "2024-05-02"
    assert zones.load("Asia/Tokyo") is settings.timezone


@pytest.mark.parametrize(
    ("name", "hint"),
    [("posix/Asia/Tokyo", "; use 'Asia/Tokyo'"), ("right/UTC", "; use 'UTC'"), ("localtime", ""), ("Mars/Base", "")],
)
def test_a_zone_the_shipped_tzdata_lacks_is_refused_at_cold_start_naming_the_tzdata_release(
    name: str, hint: str
) -> None:
    # the first three load on this machine with ZoneInfo(name), from /usr/share/zoneinfo; never in Lambda
    with pytest.raises(ConfigurationError) as info:
        IngestSettings.from_env({**BASE, "DIGEST_TIMEZONE": name})
    assert str(info.value) == (
        f"DIGEST_TIMEZONE: time zone {name!r} is not an IANA time zone of tzdata {zones.TZDATA_VERSION}, "
        f"the zone data the functions ship{hint}"
    )


def test_every_zone_the_shipped_tzdata_lists_loads_and_nothing_outside_the_list_does() -> None:
    listed = zones.names()
    assert {"UTC", "Asia/Tokyo", "America/Argentina/Buenos_Aires", "Etc/GMT-14"} <= listed
    assert all(zones.load(name).key == name for name in sorted(listed))
    for name in ("posix/Asia/Tokyo", "../../etc/passwd", "/usr/share/zoneinfo/UTC", "Asia", "zone.tab", ""):
        with pytest.raises(UnknownTimeZone, match=f"of tzdata {zones.TZDATA_VERSION}"):
            zones.load(name)
