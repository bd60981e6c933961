"""Free loopback ports for a stack that shares its machine with another backend.

``npcworld test``, ``npcworld eval``, ``npcworld simulate``, the benches and the test suite start stacks of
their own while an operator's ``npcworld run`` may hold the default ports. The internal APIs (memory's
retrieval API, 8101; the webhooks service's delivery log, 8102) then get free ports too, and the gateway
and services of that stack are told where they are, so one stack never serves, or reads, another's.

A port is picked seconds before the process that listens on it binds it (Postgres, the broker and the
services start in between). A port the kernel handed out as free (bind to port 0) comes from the range it
also gives the local end of every outgoing connection, so one of those connections (a service's link to
the broker, a client's to Postgres) could take it meanwhile and the listener would fail to start. Ports
are therefore picked outside that range.

``NPCWORLD_PORTS=LOW-HIGH`` keeps the picks within that span (still outside the kernel's range): processes
that start stacks side by side (the test suite's workers) each get a span of their own, so two of them
never pick the same port in the seconds before it is bound.
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

__all__ = ["free_port", "private_api_env"]

_LOWEST = 10_000  # below: well-known and commonly configured ports
# Ports above _LOWEST that browsers and fetch() refuse to connect to (the Fetch standard's "bad ports").
_REFUSED_BY_FETCH = frozenset({10080})
_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LINUX_DEFAULT_EPHEMERAL = (32_768, 60_999)
_TRIES = 200
_handed_out: set[int] = set()  # never the same port twice to one process's stacks
_pick = random.Random()  # seeded from the OS: a simulation's seeded RNG stays untouched


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now, on any address (``host`` is kept for callers that name one), outside
    the kernel's range for outgoing connections."""
    del host  # checked on the wildcard address, which covers every address
    low, high = _ephemeral_range()
    lowest, highest = _allowed()
    spans = [(max(a, lowest), min(b, highest)) for a, b in ((_LOWEST, low - 1), (high + 1, 65_535))]
    spans = [(a, b) for a, b in spans if a <= b]
    for _ in range(_TRIES if spans else 0):
        a, b = _pick.choice(spans)
        port = _pick.randint(a, b)
        if port not in _handed_out and port not in _REFUSED_BY_FETCH and _bindable(port):
            _handed_out.add(port)
            return port
    with socket.socket() as sock:  # every port outside the range is taken: the kernel's pick
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def private_api_env() -> dict[str, str]:
    """Environment for a stack's processes: its memory API and delivery log on free loopback ports."""
    memory, webhooks = free_port(), free_port()
    return {
        "MEMORY_API_HOST": "127.0.0.1",
        "MEMORY_API_PORT": str(memory),
        "MEMORY_API_URL": f"http://127.0.0.1:{memory}",
        "WEBHOOKS_API_HOST": "127.0.0.1",
        "WEBHOOKS_API_PORT": str(webhooks),
        "WEBHOOKS_API_URL": f"http://127.0.0.1:{webhooks}",
    }


def _allowed() -> tuple[int, int]:
    """The span ``NPCWORLD_PORTS`` allows (all ports when unset).

    Raises:
        ValueError: ``NPCWORLD_PORTS`` is not ``LOW-HIGH``.
    """
    given = os.environ.get("NPCWORLD_PORTS", "").strip()
    if not given:
        return 0, 65_535
    low, sep, high = given.partition("-")
    if not sep or not low.strip().isdigit() or not high.strip().isdigit():
        raise ValueError(f"NPCWORLD_PORTS must be LOW-HIGH (e.g. 20000-24999), not {given!r}")
    return int(low), int(high)


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(p) for p in _EPHEMERAL.read_text().split())
    except (OSError, ValueError):
        return _LINUX_DEFAULT_EPHEMERAL
    return low, high


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("0.0.0.0", port))  # fails if anything holds the port on any address
        except OSError:
            return False
    return True
