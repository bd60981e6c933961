"""What a fork costs as its source's history grows: ``python -m bench.fork_cost``.

For each size in ``--sizes`` (events; default 10,000, 100,000 and 1,000,000) builds a world of ``--npcs`` NPCs
in a fresh database of one embedded PostgreSQL: its creation, then per world step a tick, and per NPC an
observation, a memory, a decision, an action, a move and a line of talk, each a valid event of its type
(written straight into the event store, in the streams the services use: the world stream holds its creation
and NPCs, the clock's stream its ticks). Then it forks the world ``--forks`` times at world times spread over
its history (``npcworld.fork.fork_world``, one transaction each, as ``POST /v1/worlds/{id}/fork`` runs it) and
prints the median and worst wall time of a fork, and what reading a fork made at the middle costs: its world
stream (what the gateway folds for the world's state), its first page of 100 events (inherited) and its canon.
With ``--fold`` it also times the work a fork leaves to the services: world_state folding the middle fork's
inherited history into its read model (in a transaction rolled back afterwards), which each service does in
the background, a chunk at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from launcher.embedded.postgres import start_postgres, stop_postgres
from npcworld.canon import canon_of
from npcworld.contracts import EVENT_TYPES
from npcworld.db import apply_migrations
from npcworld.eventstore import EventFilter, EventStore
from npcworld.fork import fork_world, world_stream
from tests.contract.examples import EXAMPLES
from tests.infra import with_database

WORLD = "long-lived"
# Per NPC and step (its own stream), then the clock's tick (its stream).
_MIX = ("ObservationMade", "MemoryRecorded", "ActionDecided", "ActionStarted", "NpcsMoved", "UtteranceSpoken")


def _payload(event_type: str) -> str:
    """The contract example of the type as stored JSON text ("marta" stands for the NPC, "m1" the memory)."""
    return EVENT_TYPES[event_type].model_validate(EXAMPLES[event_type]).model_dump_json()


# The world stream: its creation and its NPCs (versions 1..n+1); the NPCs' steps follow in SQL.
_WORLD_SQL = """
INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id, npc_id,
                    world_time, recorded_at, correlation_id, payload)
SELECT gen_random_uuid(), 'world-' || %(w)s, 1, 'WorldCreated', 1, %(t)s, %(w)s, NULL,
       '2023-02-14 07:00Z'::timestamptz, now(), gen_random_uuid(), %(created)s::jsonb
UNION ALL
SELECT gen_random_uuid(), 'world-' || %(w)s, 1 + i, 'NpcCreated', 1, %(t)s, %(w)s, 'npc-' || i,
       '2023-02-14 07:00Z', now(), gen_random_uuid(), replace(%(npc)s, 'marta', 'npc-' || i)::jsonb
  FROM generate_series(1, %(n)s::int) i
"""
_STEPS_SQL = """
INSERT INTO events (event_id, stream_id, version, type, schema_version, tenant_id, world_id, npc_id,
                    world_time, recorded_at, correlation_id, payload)
SELECT gen_random_uuid(), stream, version, type, 1, %(t)s, %(w)s, npc, at, now(), gen_random_uuid(),
       payload::jsonb
FROM (
  SELECT s, 0 AS i, 0 AS k, 'clock-' || %(w)s AS stream, s AS version, 'WorldTicked' AS type,
         NULL AS npc, '2023-02-14 07:00Z'::timestamptz + make_interval(secs => 10 * s) AS at,
         replace(%(tick)s, '42', s::text) AS payload
    FROM generate_series(%(from)s::int, %(to)s::int) s
  UNION ALL
  SELECT s, i, k, 'npc-' || %(w)s || '-' || i, (s - 1) * %(kinds)s + k,
         (%(mix)s::text[])[k], 'npc-' || i,
         '2023-02-14 07:00Z'::timestamptz + make_interval(secs => 10 * s),
         replace(replace((%(payloads)s::text[])[k], 'marta', 'npc-' || i), '"m1"',
                 '"m-' || s || '-' || i || '"')
    FROM generate_series(%(from)s::int, %(to)s::int) s, generate_series(1, %(n)s::int) i,
         generate_series(1, %(kinds)s::int) k
) e ORDER BY s, i, k
"""


def build(url: str, npcs: int, events: int) -> str:
    """The world, in about ``events`` events; returns its tenant."""
    tenant = "bench-" + uuid.uuid4().hex[:8]
    steps = max(1, events // (npcs * len(_MIX) + 1))
    params: dict[str, Any] = {
        "t": tenant, "w": WORLD, "n": npcs, "kinds": len(_MIX), "mix": list(_MIX),
        "payloads": [_payload(t) for t in _MIX], "created": _payload("WorldCreated"),
        "npc": _payload("NpcCreated"), "tick": _payload("WorldTicked"),
    }
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET synchronous_commit = off")
        conn.execute(_WORLD_SQL, params)
        for start in range(1, steps + 1, 100):  # 100 steps a statement
            conn.execute(_STEPS_SQL, {**params, "from": start, "to": min(steps, start + 99)})
        conn.execute("VACUUM ANALYZE events")
    return tenant


async def _forks(url: str, tenant: str, points: list[datetime]) -> list[float]:
    """Wall seconds of each fork (one connection, one transaction a fork)."""
    took = []
    async with await psycopg.AsyncConnection.connect(url) as conn:
        for i, at in enumerate(points):
            started = time.perf_counter()
            async with conn.transaction():
                await fork_world(conn, tenant_id=tenant, source_world_id=WORLD, at=at,
                                 new_world_id=f"fork-{i}")
            took.append(time.perf_counter() - started)
    return took


async def _reads(url: str, tenant: str, fork: str, fold: bool) -> dict[str, float]:
    """Milliseconds of each read of the fork (the best of three), and with ``fold`` the seconds and events of
    world_state's fold of its inherited history."""
    store, out = EventStore(), {}
    async with await psycopg.AsyncConnection.connect(url) as conn:
        reads: dict[str, Any] = {
            "world stream": lambda: store.read_stream(conn, tenant, world_stream(fork), world_id=fork),
            "first page (100)": lambda: store.read_all(conn, 0, 100, EventFilter(tenant_id=tenant,
                                                                                 world_id=fork)),
            "canon": lambda: canon_of(conn, tenant, fork),
        }
        for name, read in reads.items():
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                await read()
                best = min(best, time.perf_counter() - started)
            out[name] = best * 1000
        if fold:
            from services.world_state.handlers import PROJECTION

            [forked] = await store.read_all(conn, 0, 1, EventFilter(tenant_id=tenant, world_id=fork,
                                                                    types=("WorldForked",), history="own"))
            async with conn.transaction(force_rollback=True):
                started = time.perf_counter()
                folded = await PROJECTION.fold_inherited(conn, forked.envelope)
                out["fold s"], out["fold events"] = time.perf_counter() - started, folded
    return out


def run(server: str, size: int, npcs: int, forks: int, fold: bool) -> None:
    name = f"fork_{size}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = with_database(server, name)
    apply_migrations(url)
    started = time.perf_counter()
    tenant = build(url, npcs, size)
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*), min(world_time), max(world_time) FROM events").fetchone()
    assert row is not None
    stored, first, last = row
    built = time.perf_counter() - started
    points = [first + (last - first) * (i + 1) / (forks + 1) for i in range(forks)]
    took = asyncio.run(_forks(url, tenant, points))
    reads = asyncio.run(_reads(url, tenant, f"fork-{forks // 2}", fold))
    fold_line = ""
    if fold:
        rate = reads["fold events"] / reads["fold s"] if reads["fold s"] else 0.0
        fold_line = (f"; world_state folds the middle fork's {reads['fold events']:,.0f} inherited events in"
                     f" {reads['fold s']:.1f} s ({rate:,.0f}/s)")
    print(f"{stored:>9,} events (built in {built:.0f} s): fork p50 {statistics.median(took) * 1000:.1f} ms,"
          f" max {max(took) * 1000:.1f} ms over {forks}; reading the middle fork: "
          + ", ".join(f"{k} {v:.1f} ms" for k, v in reads.items() if not k.startswith("fold"))
          + f"{fold_line}; load average {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--npcs", type=int, default=200)
    parser.add_argument("--forks", type=int, default=5)
    parser.add_argument("--fold", action="store_true", help="also time world_state folding a fork's history")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="npcworld-fork-bench-") as root:
        pgdata = Path(root) / "pgdata"
        server = start_postgres(pgdata)
        try:
            for size in (int(s) for s in args.sizes.split(",")):
                run(server, size, args.npcs, args.forks, args.fold)
        finally:
            stop_postgres(pgdata)


if __name__ == "__main__":
    main()
