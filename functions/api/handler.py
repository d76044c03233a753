"""Lambda entry point of the read API: an API Gateway HTTP API event (payload 2.0) in, the HTTP
answer out.

Same shape as ``ingest/handler.py`` (``sensor_digest/entry.py``); the routes are
``sensor_digest/api/service.py``'s, which ``sensor-digest up`` serves on a loopback port too.
"""

from __future__ import annotations

from sensor_digest import names
from sensor_digest.api import build_service
from sensor_digest.config import ApiSettings
from sensor_digest.entry import from_environment

__all__ = ["build_service", "handler", "reset", "service"]

entry = from_environment(names.API_SERVICE, build_service, ApiSettings.from_env, "request answered")
service = entry.service
handler = entry.handler
reset = entry.reset
