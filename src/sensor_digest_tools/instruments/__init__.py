"""Instruments on a boto3 session: request metering, item sizing, the latency model, conflicts and faults."""
