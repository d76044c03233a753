"""The core's one logger: a Powertools child logger, so that on Lambda its lines go out through the
handler's Logger (service name, cold start, request id) with their keyword fields; the local
runtime routes it to stderr (``sensor_digest_tools.local.pipeline.route_service_logs``)."""

from __future__ import annotations

from aws_lambda_powertools import Logger

LOG = Logger(child=True)
