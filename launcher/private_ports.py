"""Free loopback ports for a stack that shares its machine with another backend.

``npcworld test``, ``npcworld eval``, ``npcworld simulate``, the benches and the test suite start stacks of
their own while an operator's ``npcworld run`` may hold the default ports. The internal APIs (memory's
retrieval API, 8101; the webhooks service's delivery log, 8102) then get free ports too, and the gateway
and services of that stack are told where they are, so one stack never serves, or reads, another's.
"""

from __future__ import annotations

import socket

__all__ = ["free_port", "private_api_env"]


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on ``host`` now (a wildcard address is checked on loopback)."""
    with socket.socket() as sock:
        sock.bind((host if host not in ("0.0.0.0", "::") else "127.0.0.1", 0))
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
