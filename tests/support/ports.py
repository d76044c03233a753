"""Whether a port answers: what the tests of the engine's and ``up``'s ports ask of an address."""

from __future__ import annotations

import socket


def reaches(host: str, port: int) -> bool:
    """A TCP connection to ``host``:``port`` is accepted (within two seconds)."""
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False
