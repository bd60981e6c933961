"""A private stack's internal APIs get free loopback ports, and its processes are told where they are."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from launcher import private_ports
from launcher.private_ports import _ephemeral_range, free_port, private_api_env


def test_memory_api_and_delivery_log_are_on_distinct_free_ports_the_clients_are_pointed_at() -> None:
    env = private_api_env()
    memory, webhooks = int(env["MEMORY_API_PORT"]), int(env["WEBHOOKS_API_PORT"])
    assert memory != webhooks and 8101 not in (memory, webhooks) and 8102 not in (memory, webhooks)
    assert env["MEMORY_API_URL"] == f"http://127.0.0.1:{memory}"
    assert env["WEBHOOKS_API_URL"] == f"http://127.0.0.1:{webhooks}"
    assert env["MEMORY_API_HOST"] == env["WEBHOOKS_API_HOST"] == "127.0.0.1"
    for port in (memory, webhooks):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # still free


def test_a_wildcard_host_is_checked_on_loopback() -> None:
    port = free_port("0.0.0.0")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_ports_are_picked_outside_the_range_of_outgoing_connections_and_never_twice() -> None:
    """A port is bound seconds after it is picked: an outgoing connection made meanwhile (a service's link to
    the broker) takes its local port from the kernel's ephemeral range, so it can never take a picked one."""
    low, high = _ephemeral_range()
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    assert not [p for p in ports if low <= p <= high]


def test_when_nothing_outside_the_range_is_left_the_kernel_picks(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    everything = tmp_path / "ip_local_port_range"
    everything.write_text("1024\t65535\n")
    monkeypatch.setattr(private_ports, "_EPHEMERAL", everything)
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_ports_stay_within_the_span_npcworld_ports_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Processes starting stacks side by side (the suite's workers) each pick from a span of their own."""
    monkeypatch.setenv("NPCWORLD_PORTS", "21000-21999")
    ports = [free_port() for _ in range(30)]
    assert all(21_000 <= p <= 21_999 for p in ports) and len(set(ports)) == 30
    monkeypatch.setenv("NPCWORLD_PORTS", "21000")
    with pytest.raises(ValueError, match="LOW-HIGH"):
        free_port()
