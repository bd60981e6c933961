"""Planning benchmark: LLM calls per NPC per simulated day, by prompt kind, from the ``llm_calls`` records.

Run: python -m bench.planning_calls [--npcs 3] [--step-seconds 10] [--days 1]
The demo NPCs (repeated with new ids past three) live one world day from midnight in a fresh embedded
PostgreSQL, with the offline provider recording every call. Every step is a WorldTicked through the
planning handlers; perception is modelled at its worst case: every NPC sees every other NPC's new action
(all in one place all day), and the first NPC sees "the stove is burning" at 15:00. Retrievals go to an
in-memory reader holding each NPC's seed memories (they cost no LLM call either way).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from launcher.embedded.postgres import start_postgres, stop_postgres
from npcworld.contracts import ActionDecided, Envelope, EventPayload, NpcCreated, ObservationMade, WorldTicked
from npcworld.db import apply_migrations, open_pool
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.llm import build_llm
from npcworld.memory_client.testing import FakeMemoryReader
from services.planning.deps import PlanningDeps
from services.planning.handlers import ROUTES
from services.planning.settings import Settings

TENANT, WORLD = "bench", "brindle-hollow"
MIDNIGHT = datetime(2023, 2, 14, tzinfo=UTC)
PERSONAS = (
    {"npc_id": "marta", "name": "Marta Quill", "age": 34, "traits": ("warm", "organised"),
     "occupation": "owner of the Lantern Cafe",
     "seed": "Marta runs the Lantern Cafe; Marta wants to host a party at the cafe; "
             "Marta is friends with Tobias"},
    {"npc_id": "tobias", "name": "Tobias Wren", "age": 52, "traits": ("earnest", "talkative"),
     "occupation": "pharmacist at the Wren Pharmacy",
     "seed": "Tobias keeps the pharmacy; Tobias is running for mayor; "
             "Tobias buys coffee from Marta every morning"},
    {"npc_id": "ines", "name": "Ines Varga", "age": 27, "traits": ("curious", "shy"), "occupation": "painter",
     "seed": "Ines paints the river in the mornings at the Varga Studio; Ines knows nobody in town yet"},
)
PLACES = (f"{WORLD}:Mill Street:Lantern Cafe", f"{WORLD}:Mill Street:Wren Pharmacy",
          f"{WORLD}:Riverside:Varga Studio", f"{WORLD}:Town Square:Town Hall")


def personas(count: int) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        npc = dict(PERSONAS[i % len(PERSONAS)])
        suffix = "" if i < len(PERSONAS) else f"-{i}"
        out.append(npc | {"npc_id": f"{npc['npc_id']}{suffix}", "name": f"{npc['name']}{suffix}",
                          "location": f"{WORLD}:Homes:{npc['name']} house", "known_places": PLACES})
    return out


async def handle(pool: Any, deps: PlanningDeps, payload: EventPayload, at: datetime,
                 npc_id: str | None = None) -> list[Envelope]:
    event = Envelope.new(payload, tenant_id=TENANT, world_id=WORLD, world_time=at, npc_id=npc_id)
    async with pool.connection() as conn, conn.transaction():
        uow = UnitOfWork(conn, EventStore(), cause=event)
        await ROUTES[event.type](event, uow, deps)
    return uow.appended


async def simulate(database_url: str, npcs: int, step_seconds: float, days: int) -> dict[str, Counter[str]]:
    pool = await open_pool(database_url, min_size=1, max_size=4)
    settings = Settings(database_url=database_url, kafka_bootstrap_servers="unused:9092")
    memory = FakeMemoryReader()
    deps = PlanningDeps(llm=build_llm(settings, pool), memory=memory)
    people = personas(npcs)
    try:
        for p in people:
            await handle(pool, deps, NpcCreated(**p), MIDNIGHT)
            for part in p["seed"].split(";"):
                memory.add(TENANT, WORLD, p["npc_id"], part.strip(), created_at=MIDNIGHT, kind="seed")
        names = {p["npc_id"]: p["name"] for p in people}
        now, step, end, fire = MIDNIGHT, 0, MIDNIGHT + timedelta(days=days), MIDNIGHT.replace(hour=15)
        while now + timedelta(seconds=step_seconds) < end:
            step += 1
            now += timedelta(seconds=step_seconds)
            ticked = await handle(pool, deps, WorldTicked(step=step, step_seconds=step_seconds), now)
            decided = [e for e in ticked if isinstance(e.payload, ActionDecided)]
            for event in decided:
                assert isinstance(event.payload, ActionDecided) and event.npc_id is not None
                seen = ObservationMade(description=f"{names[event.npc_id]} is {event.payload.description}",
                                       subject=names[event.npc_id])
                for viewer in names:
                    if viewer != event.npc_id:
                        await handle(pool, deps, seen, now, npc_id=viewer)
            if fire <= now < fire + timedelta(seconds=step_seconds):
                burning = ObservationMade(description="the stove is burning", subject="stove")
                await handle(pool, deps, burning, now, npc_id=people[0]["npc_id"])
        async with pool.connection() as conn:
            cur = await conn.execute("SELECT npc_id, prompt_kind, count(*) FROM llm_calls GROUP BY 1, 2")
            counts: dict[str, Counter[str]] = {}
            for npc_id, kind, n in await cur.fetchall():
                counts.setdefault(npc_id, Counter())[kind] += n
        return counts
    finally:
        await pool.close()


def report(counts: dict[str, Counter[str]], days: int, seconds: float) -> None:
    kinds = sorted({k for c in counts.values() for k in c})
    print(f"LLM calls per NPC per simulated day ({len(counts)} NPCs, {days} day(s), {seconds:.1f} s wall)")
    print("| npc | " + " | ".join(kinds) + " | total |")
    print("|---|" + "---:|" * (len(kinds) + 1))
    for npc, c in sorted(counts.items()):
        cells = " | ".join(f"{c[k] / days:.1f}" for k in kinds)
        print(f"| {npc} | {cells} | {sum(c.values()) / days:.1f} |")
    mean = {k: sum(c[k] for c in counts.values()) / len(counts) / days for k in kinds}
    print("| **mean** | " + " | ".join(f"{mean[k]:.1f}" for k in kinds) + f" | {sum(mean.values()):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--npcs", type=int, default=3)
    parser.add_argument("--step-seconds", type=float, default=10.0)
    parser.add_argument("--days", type=int, default=1)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="npcworld-bench-planning-"))
    try:
        url = start_postgres(root / "pgdata")
        apply_migrations(url)
        started = time.perf_counter()
        counts = asyncio.run(simulate(url, args.npcs, args.step_seconds, args.days))
        report(counts, args.days, time.perf_counter() - started)
    finally:
        stop_postgres(root / "pgdata")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
