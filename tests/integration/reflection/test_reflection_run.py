"""A day of memories crosses the threshold: exactly one reflection run, stored once, with evidence."""

from __future__ import annotations

import asyncio

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import ReflectionTriggered
from npcworld.llm import LLMSettings, build_llm
from npcworld.memory_client.http import HttpMemoryReader
from services.memory.deps import MemoryDeps
from services.reflection.deps import ConsumerDeps, RunDeps
from services.reflection.reflect import run_reflection
from services.reflection.settings import ReflectionSettings
from tests.integration.memory.support import handle, new_npc
from tests.integration.reflection.support import (
    CROSSING,
    ListQueue,
    accumulator,
    completed,
    consume,
    consume_all,
    memory_ids,
    record_day,
    run_stream,
)


async def test_crossing_150_yields_exactly_one_reflection_even_if_the_trigger_is_delivered_twice(
    pool: AsyncConnectionPool, memory_deps: MemoryDeps, reader: HttpMemoryReader, queue: ListQueue
) -> None:
    npc = new_npc()
    recorded = await record_day(pool, npc, memory_deps)
    consumer = ConsumerDeps(queue=queue, settings=ReflectionSettings())

    before = await consume_all(pool, recorded[: CROSSING - 1], consumer)
    assert before == [] and await accumulator(pool, npc) == (150, 0, None)
    triggers = await consume_all(pool, recorded[CROSSING - 1 :], consumer)
    assert [t.type for t in triggers] == ["ReflectionTriggered"]
    trigger = triggers[0]
    assert isinstance(trigger.payload, ReflectionTriggered)
    assert (trigger.payload.run, trigger.payload.importance_sum) == (1, 159)
    assert trigger.causation_id == recorded[CROSSING - 1].event_id

    # The trigger is delivered twice (say the consumer crashed before committing its offset).
    await consume(pool, trigger, consumer)
    await consume(pool, trigger, consumer)
    assert len(queue.jobs) == 2 and queue.jobs[0] == queue.jobs[1]

    run = RunDeps(pool=pool, llm=build_llm(LLMSettings(), pool), reader=reader, settings=ReflectionSettings())
    outcomes = await asyncio.gather(*(run_reflection(job, run) for job in queue.jobs))
    assert sorted(outcomes) == ["already_done", "completed"]
    assert await run_reflection(queue.jobs[0], run) == "already_done"  # a re-run job too

    done = await completed(pool, trigger.payload.run_key)
    assert len(done.questions) == 3 and done.provider == "offline"
    assert done.memories_considered == len(recorded)
    observations = await memory_ids(pool, npc, "observation")
    assert done.insights and all(set(i.evidence) <= observations and i.depth == 1 for i in done.insights)

    # The memory service stores the insights as reflection memories; the accumulator starts again.
    outcome = (await run_stream(pool, trigger.payload.run_key))[1].envelope
    stored = await handle(pool, outcome, memory_deps)
    assert len(stored) == len(done.insights)
    await consume(pool, outcome, consumer)
    assert await accumulator(pool, npc) == (0, 1, None)
    reflections = await reader.recent(npc.tenant_id, npc.world_id, npc.npc_id, kinds=("reflection",))
    assert sorted((r.description, r.evidence, r.depth) for r in reflections) == sorted(
        (i.text, i.evidence, i.depth) for i in done.insights
    )


async def test_a_reflection_memory_does_not_count_toward_the_next_reflection(
    pool: AsyncConnectionPool, memory_deps: MemoryDeps, queue: ListQueue
) -> None:
    npc = new_npc()
    recorded = await record_day(pool, npc, memory_deps, ["Marta is planning a party"])
    consumer = ConsumerDeps(queue=queue, settings=ReflectionSettings(reflection_threshold=5))
    reflection = recorded[0].model_copy(
        update={"payload": recorded[0].payload.model_copy(update={"kind": "reflection"})}
    )
    assert await consume(pool, reflection, consumer) == []
    assert await accumulator(pool, npc) == (0, 0, None)
    assert [e.type for e in await consume(pool, recorded[0], consumer)] == ["ReflectionTriggered"]
