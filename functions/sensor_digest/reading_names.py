"""The rule of a reading's name, and how many names a report may carry: a leaf of the core, so that
the construct's ``iotReadings`` rule (infra/sensor_digest_cdk/rules.py) follows the ingest's rule
and imports nothing else of it (``messages`` reads the store's layout)."""

from __future__ import annotations

import re

MAX_READINGS = 8
READING_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")
"""A reading's name: 1 to 32 ASCII characters, a letter first, then letters, digits or ``_`` (a map
key and a path segment; ``fullmatch``)."""
