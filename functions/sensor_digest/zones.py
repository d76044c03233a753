"""Time zones from the zone data the functions ship: the pure-Python ``tzdata`` package, nothing else.

``ZoneInfo(name)`` looks in the machine's zone files first (``/usr/share/zoneinfo``) and falls back
to ``tzdata``. An operator's machine has names there that the Lambda asset, which ships only
``tzdata`` (``infra/sensor_digest_cdk/lambda_asset.py``), cannot load: ``posix/Asia/Tokyo``,
``right/UTC``, ``localtime``;
and its files may be of another release than ``tzdata``'s. So a zone is loaded here only if it is
one of the names ``tzdata`` lists (its ``zones`` file), and only from ``tzdata``'s own file
(``ZoneInfo.from_file``), cached: the same name gives the same offsets on a laptop, in the tests,
at synth and in Lambda. Every other name is refused with ``UnknownTimeZone``, which names the
``tzdata`` release. Used by the configuration (``DIGEST_TIMEZONE``), the registry (a profile's
zone), the ingest's profile cache and the stack's settings (``digestTimezone``).
"""

from __future__ import annotations

import threading
from functools import cache
from importlib import resources
from zoneinfo import ZoneInfo

import tzdata

from sensor_digest.errors import UnknownTimeZone

TZDATA_VERSION: str = tzdata.IANA_VERSION
"""The IANA release of the zone data (for example ``2026f``), as the ``tzdata`` package pins it."""

_lock = threading.Lock()
_loaded: dict[str, ZoneInfo] = {}


@cache
def names() -> frozenset[str]:
    """Every zone name the shipped ``tzdata`` holds (its ``zones`` file, one name a line)."""
    text = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def is_known(name: str) -> bool:
    return name in names()


def check(name: str) -> str:
    """``name`` if it is a zone of the shipped ``tzdata``; ``UnknownTimeZone`` (one line) otherwise."""
    if is_known(name):
        return name
    shown = repr(name) if len(name) <= 80 else repr(name[:77]) + "..."
    reason = f"time zone {shown} is not an IANA time zone of tzdata {TZDATA_VERSION}, the zone data the functions ship"
    for prefix in ("posix/", "right/"):  # the machine's copies of the zones (right/: with leap seconds)
        if name.startswith(prefix) and is_known(name[len(prefix) :]):
            reason += f"; use {name[len(prefix) :]!r}"
    raise UnknownTimeZone(reason)


def load(name: str) -> ZoneInfo:
    """The zone ``name`` read from ``tzdata``'s own file (once per process); ``UnknownTimeZone`` if
    ``tzdata`` does not list it. The machine's zone files are never read."""
    zone = _loaded.get(name)
    if zone is not None:
        return zone
    check(name)
    *folders, leaf = name.split("/")  # a listed name: no "..", no absolute path
    package = ".".join(["tzdata.zoneinfo", *folders])
    with resources.files(package).joinpath(leaf).open("rb") as data:
        zone = ZoneInfo.from_file(data, key=name)
    with _lock:  # two threads loading one name at once keep the first, so a name is one object
        return _loaded.setdefault(name, zone)
