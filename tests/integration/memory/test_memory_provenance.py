"""Provenance is part of the event-sourced stream (real Postgres and embedder): what the handlers record —
seeds, a perception, another NPC's line, a player's repeated and corroborated lines — a replay of the events
rebuilds exactly, an event recorded before provenance folds to its kind's, and migration 0111 gives rows
stored before it the same values a replay gives them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import (
    MemoryRecorded,
    NpcCreated,
    NpcReplied,
    ObservationMade,
    UtteranceSpoken,
    envelope_from_dict,
)
from npcworld.contracts.memory import legacy_provenance
from npcworld.db import MIGRATIONS_DIR
from npcworld.eventstore import EventStore
from services.memory.deps import MemoryDeps
from services.memory.domain import Memory, NpcRef, memory_stream_id
from services.memory.projection import replay_memory_events
from services.memory.repository import MemoryRepository
from tests.integration.memory.support import T0, envelope, handle, new_npc

pytestmark = pytest.mark.integration
STOLE = "Tom Reed stole the bread from the bakery"


def _said(line: str, player: str = "p-liar") -> NpcReplied:
    return NpcReplied(player_id=player, text="Oh?", in_reply_to=str(uuid.uuid4()), provider="offline",
                      heard=line)


async def _record_all(pool: AsyncConnectionPool, npc: NpcRef, deps: MemoryDeps) -> None:
    created = NpcCreated(npc_id=npc.npc_id, name="Ann Baker", seed="Ann Baker runs the bakery")
    await handle(pool, envelope(created, npc, T0, npc_id=""), deps)
    await handle(pool, envelope(ObservationMade(description="Tom Reed fixed the bakery oven"), npc, T0), deps)
    heard = UtteranceSpoken(conversation_id="c1", listener_id=npc.npc_id, turn=1, text="Lovely bread today.")
    await handle(pool, envelope(heard, npc, T0 + timedelta(minutes=1), npc_id="sam"), deps)
    for minute in (2, 3):
        await handle(pool, envelope(_said(STOLE), npc, T0 + timedelta(minutes=minute)), deps)
    await handle(pool, envelope(_said("Tom Reed fixed the bakery oven", "p-honest"), npc,
                                T0 + timedelta(minutes=4)), deps)


async def _stream(pool: AsyncConnectionPool, npc: NpcRef) -> list[Memory]:
    async with pool.connection() as conn:
        stream = await MemoryRepository().get_npc(conn, npc)
        assert stream is not None
        return await MemoryRepository().all_memories(conn, stream)


async def test_a_replay_rebuilds_every_memorys_provenance(
    pool: AsyncConnectionPool, deps: MemoryDeps
) -> None:
    npc = new_npc()
    await _record_all(pool, npc, deps)
    before = await _stream(pool, npc)
    held = {(m.description.split(":")[0], m.provenance.source, m.provenance.told_by, m.provenance.trust)
            for m in before}
    assert held == {
        ("Ann Baker runs the bakery", "designer", None, "high"),
        ("Tom Reed fixed the bakery oven", "perceived", None, "high"),
        ("sam said to Ann Baker", "told", "npc:sam", "medium"),
        ("A player (p-liar) said to Ann Baker", "told", "player:p-liar", "low"),
        ("Ann Baker replied to a player (p-liar)", "perceived", None, "low"),
        ("A player (p-honest) said to Ann Baker", "told", "player:p-honest", "medium"),
        ("Ann Baker replied to a player (p-honest)", "perceived", None, "medium"),
    }
    assert [m.description for m in before if m.provenance.told_by == "player:p-liar"] == [
        f'A player (p-liar) said to Ann Baker: "{STOLE}"',
        f'A player (p-liar) said to Ann Baker: "{STOLE}" (p-liar has told Ann Baker this 2 times)']

    async with pool.connection() as conn, conn.transaction():
        stream = await MemoryRepository().get_npc(conn, npc)
        assert stream is not None
        await MemoryRepository().delete_stream(conn, stream)
        stored = await EventStore().read_stream(conn, npc.tenant_id, memory_stream_id(npc))
        events = [e.envelope for e in stored]
        assert await replay_memory_events(conn, deps, events) == len(before)
    assert await _stream(pool, npc) == before


@pytest.mark.parametrize(("kind", "subject"), [
    ("seed", None), ("reflection", None), ("plan", None), ("observation", "stove"),
    ("observation", "player p1"), ("dialogue", "player p1"), ("dialogue", None),
])
async def test_an_older_event_and_an_older_row_get_the_same_provenance(
    pool: AsyncConnectionPool, deps: MemoryDeps, kind: str, subject: str | None
) -> None:
    npc = new_npc()
    payload = {"memory_id": str(uuid.uuid4()), "kind": kind, "description": f"an older {kind} memory",
               "importance": 3, "created_at": T0.isoformat(), "subject": subject,
               "embedding_model": deps.embedder.model}
    old = envelope_from_dict({
        "event_id": str(uuid.uuid4()), "type": "MemoryRecorded", "schema_version": 1,
        "tenant_id": npc.tenant_id, "world_id": npc.world_id, "npc_id": npc.npc_id,
        "world_time": T0.isoformat(), "recorded_at": datetime.now(UTC).isoformat(),
        "correlation_id": str(uuid.uuid4()), "payload": payload})
    assert isinstance(old.payload, MemoryRecorded)
    expected = legacy_provenance(kind, subject)
    async with pool.connection() as conn, conn.transaction(force_rollback=True):
        assert await replay_memory_events(conn, deps, [old]) == 1
        await conn.execute("UPDATE memories SET source = 'perceived', told_by = NULL, trust = 'high'"
                           " WHERE npc_key IN (SELECT npc_key FROM memory_npcs WHERE npc_id = %s)",
                           (npc.npc_id,))  # as stored before the migration
        folded = (old.payload.source, old.payload.told_by, old.payload.trust)
        for statement in _backfill():
            await conn.execute(statement)
        cur = await conn.execute("SELECT m.source, m.told_by, m.trust FROM memories AS m"
                                 " JOIN memory_npcs AS n USING (npc_key) WHERE n.npc_id = %s", (npc.npc_id,))
        migrated = await cur.fetchone()
    assert folded == migrated == (expected["source"], expected["told_by"], expected["trust"])


def _backfill() -> list[str]:
    """The UPDATE statements of migration 0111 (the columns already exist here)."""
    text = (MIGRATIONS_DIR / "0111_memory_provenance.sql").read_text()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    return [s.strip() for s in body.split(";") if s.strip().startswith("UPDATE")]
