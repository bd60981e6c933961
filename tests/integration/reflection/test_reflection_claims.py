"""A player's claim is never promoted to a reflection on the real stack (memory service consumer handlers, its
HTTP API, the reflection consumer and run, Postgres): ten false claims about the party, each rated as poignant
as the party itself, add nothing toward a reflection, and the reflection the NPC's own day triggers neither
shows, cites nor states them; its insights are stored as inferred memories."""

from __future__ import annotations

from datetime import timedelta

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, MemoryRecorded, NpcReplied, ReflectionTriggered
from npcworld.llm import LLMSettings, build_llm
from npcworld.memory_client.http import HttpMemoryReader
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef
from services.reflection.deps import ConsumerDeps, RunDeps
from services.reflection.reflect import run_reflection
from services.reflection.settings import ReflectionSettings
from tests.integration.memory.support import envelope, handle, new_npc
from tests.integration.reflection.support import (
    CROSSING,
    T0,
    ListQueue,
    accumulator,
    completed,
    consume_all,
    record_day,
    run_stream,
)

CLAIM = "The Valentine's Day party at Hobbs Cafe is cancelled, Marta told everyone to stay home"


async def _claims(pool: AsyncConnectionPool, deps: MemoryDeps, npc: NpcRef) -> list[Envelope]:
    recorded: list[Envelope] = []
    for i in range(10):
        said = NpcReplied(player_id="p-liar", text="Oh? I had not heard.", in_reply_to=f"e-{i}",
                          provider="offline", heard=CLAIM)
        event = envelope(said, npc, T0 - timedelta(minutes=30 - i))
        recorded += [e for e in await handle(pool, event, deps) if e.type == "MemoryRecorded"]
    return recorded


async def test_repeated_claims_add_nothing_toward_a_reflection_and_no_insight_rests_on_them(
    pool: AsyncConnectionPool, memory_deps: MemoryDeps, reader: HttpMemoryReader, queue: ListQueue
) -> None:
    npc = new_npc()
    claims = await _claims(pool, memory_deps, npc)
    told = [e.payload for e in claims if isinstance(e.payload, MemoryRecorded)]
    assert len(told) == 20 and {(m.told_by, m.trust) for m in told if m.kind == "observation"} == {
        ("player:p-liar", "low")}
    assert all(m.trust == "low" and m.importance in (2, 9) for m in told)  # the claims rated 9, as a party is
    consumer = ConsumerDeps(queue=queue, settings=ReflectionSettings())
    assert await consume_all(pool, claims, consumer) == []
    assert await accumulator(pool, npc) == (0, 0, None)

    recorded = await record_day(pool, npc, memory_deps)
    triggers = await consume_all(pool, recorded, consumer)
    assert [t.type for t in triggers] == ["ReflectionTriggered"]  # where the day alone crosses 150
    assert triggers[0].causation_id == recorded[CROSSING - 1].event_id
    trigger = triggers[0].payload
    assert isinstance(trigger, ReflectionTriggered)
    await consume_all(pool, triggers, consumer)  # enqueues the run's job

    run = RunDeps(pool=pool, llm=build_llm(LLMSettings(), pool), reader=reader, settings=ReflectionSettings())
    assert await run_reflection(queue.jobs[0], run) == "completed"
    done = await completed(pool, trigger.run_key)
    claim_ids = {m.memory_id for m in told}
    assert done.insights and not [i for i in done.insights if set(i.evidence) & claim_ids]
    assert not [i for i in done.insights if "cancel" in i.text.lower() or "stay home" in i.text.lower()]
    assert done.memories_considered == len(recorded)  # the 20 claim memories were not among them

    outcome = (await run_stream(pool, trigger.run_key))[1].envelope
    stored = [e.payload for e in await handle(pool, outcome, memory_deps) if e.type == "MemoryRecorded"]
    assert stored and {(m.kind, m.source, m.trust) for m in stored if isinstance(m, MemoryRecorded)} == {
        ("reflection", "inferred", "medium")}
