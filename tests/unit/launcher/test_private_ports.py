"""A private stack's internal APIs get free loopback ports, and its processes are told where they are."""

from __future__ import annotations

import socket

from launcher.private_ports import free_port, private_api_env


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
