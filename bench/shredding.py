"""Crypto-shredding cost: appending and reading a player's sealed lines against the same lines unsealed, and
forgetting a player with many lines.

Starts its own embedded Postgres. Run: ``python -m bench.shredding [--events 2000] [--batch 100]``.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from launcher.embedded.postgres import start_postgres, stop_postgres
from npcworld.contracts import Envelope, EventPayload, InnerVoiceGiven, PlayerSpoke
from npcworld.db import apply_migrations, open_pool
from npcworld.eventstore import EventFilter, EventStore, UnitOfWork
from npcworld.forgetting import forget_player_data

T0 = datetime(2023, 2, 13, 8, 0, tzinfo=UTC)
LINE = "I found a strange key behind the bakery, does it open anything in the cafe? " * 2


async def _append(url: str, tenant: str, payloads: Sequence[EventPayload], batch: int) -> float:
    pool = await open_pool(url, min_size=1, max_size=2)
    try:
        started = time.perf_counter()
        for first in range(0, len(payloads), batch):
            events = [Envelope.new(p, tenant_id=tenant, world_id="w", world_time=T0, npc_id="marta")
                      for p in payloads[first:first + batch]]
            async with pool.connection() as conn, conn.transaction():
                await UnitOfWork(conn, EventStore()).append(f"s-{uuid.uuid4().hex[:8]}", events)
        return time.perf_counter() - started
    finally:
        await pool.close()


async def _read(url: str, tenant: str) -> tuple[float, int]:
    pool = await open_pool(url, min_size=1, max_size=2)
    try:
        started, after, count = time.perf_counter(), 0, 0
        async with pool.connection() as conn:
            while page := await EventStore().read_all(conn, after, 1000, EventFilter(tenant_id=tenant)):
                after, count = page[-1].seq, count + len(page)
        return time.perf_counter() - started, count
    finally:
        await pool.close()


async def _forget(url: str, tenant: str) -> tuple[float, int]:
    pool = await open_pool(url, min_size=1, max_size=2)
    try:
        started = time.perf_counter()
        async with pool.connection() as conn, conn.transaction():
            done = await forget_player_data(conn, tenant, "p1")
        return time.perf_counter() - started, len(done.worlds)
    finally:
        await pool.close()


async def run(url: str, events: int, batch: int) -> None:
    sealed = [PlayerSpoke(player_id="p1", text=f"{i} {LINE}") for i in range(events)]
    plain = [InnerVoiceGiven(directive=f"{i} {LINE}") for i in range(events)]
    for name, payloads in (("unsealed (InnerVoiceGiven)", plain), ("sealed (PlayerSpoke)", sealed)):
        tenant = f"bench-{uuid.uuid4().hex[:6]}"
        appended = await _append(url, tenant, payloads, batch)
        read, count = await _read(url, tenant)
        print(f"{name:28} append {1e3 * appended / events:6.3f} ms/event ({batch} per transaction), "
              f"read_all {1e3 * read / count:6.3f} ms/event ({count} events)")
        if payloads is sealed:
            took, worlds = await _forget(url, tenant)
            read, _ = await _read(url, tenant)
            print(f"forget_player_data with {events} lines: {took:.2f} s ({worlds} world); "
                  f"reading them forgotten {1e3 * read / count:6.3f} ms/event")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    pgdata = Path(tempfile.mkdtemp(prefix="npcworld-bench-")) / "pgdata"
    url = start_postgres(pgdata)
    try:
        apply_migrations(url)
        print(f"machine: {platform.machine()}, Python {platform.python_version()}; "
              f"{args.events} lines of {len(LINE)}+ characters")
        asyncio.run(run(url, args.events, args.batch))
    finally:
        stop_postgres(pgdata)


if __name__ == "__main__":
    main()
