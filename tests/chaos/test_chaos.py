"""A stepping town with players posting heals by itself from the faults an operator meets (the CI subset;
`python -m bench.chaos` runs every fault, repeatedly)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.chaos.checks import all_checks, owed
from tests.chaos.harness import RECOVERY_S, WORLD, ChaosTown, Clients

# Memory and planning run as two instances each (one consumer group per service, partitions split between
# them). Faults: one instance of each of those (the other takes its partitions over while the supervisor
# restarts it), the gateway (requests cut mid-way) and its projection consumer (its read models must still
# rebuild row for row), the broker (it comes back empty) and Postgres (immediate shutdown). bench/chaos.py
# runs every fault, repeatedly.
INSTANCES = ("--instances", "memory=2,planning=2")
FAULTS = ("memory", "planning-2", "gateway", "gateway-projection", "broker", "postgres")


@pytest.mark.timeout(900)
def test_the_town_heals_by_itself_and_nothing_is_lost_doubled_or_owed(tmp_path: Path) -> None:
    town = ChaosTown(tmp_path / "home", *INSTANCES)
    clients = Clients(town)
    try:
        town.start()
        clients.start(count=1, pause=(0.5, 1.5))  # a load this 2-core machine digests step by step
        for fault in FAULTS:
            town.stop_postgres_abruptly() if fault == "postgres" else town.kill(fault)
            town.wait_steps(2, RECOVERY_S)
            town.wait_api(RECOVERY_S)
            clients.wait_accepted(1, RECOVERY_S)  # players' requests (and retries of cut ones) go through
        clients.stop()
        settle(town)
        with psycopg.connect(town.database_url) as conn:
            problems = all_checks(conn, town.receiver, clients.accepted, town.database_url)
        assert not problems, "\n".join(problems)
    finally:
        clients.stop()
        town.stop()


def settle(town: ChaosTown, timeout: float = 120) -> None:
    """Pause the clock (once the gateway answers again) and wait until no consumer owes an event."""
    deadline, left = time.monotonic() + timeout, ["?"]
    with town.client() as client:
        while True:
            try:
                answer = client.post(f"/v1/worlds/{WORLD}/clock", json={"paused": True})
                if answer.status_code < 500 or time.monotonic() > deadline:
                    answer.raise_for_status()
                    break
            except httpx.TransportError:  # the gateway is still starting again after a fault
                if time.monotonic() > deadline:
                    raise
            time.sleep(1)
    while left and time.monotonic() < deadline:
        with psycopg.connect(town.database_url) as conn:
            left = owed(conn)
        time.sleep(1)
    assert not left, "\n".join(left)
