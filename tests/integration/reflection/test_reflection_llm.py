"""Reflection on the real ``openai`` client against the fake OpenAI server: malformed output fails the run
with nothing half-written, an outage opens the breaker and the run still completes offline, 429/500 back
off, and replay of a recorded run gives the same reflection without calling the provider."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope, ReflectionFailed, ReflectionTriggered
from npcworld.llm import LLMClient, LLMSettings, build_llm
from npcworld.llm.testing import FakeOpenAIServer, Reply
from npcworld.memory_client.http import HttpMemoryReader
from services.memory.deps import MemoryDeps
from services.memory.domain import NpcRef
from services.reflection.deps import ConsumerDeps, RunDeps
from services.reflection.reflect import Outcome, run_reflection
from services.reflection.settings import ReflectionSettings
from tests.integration.llm.conftest import FakeClock, RecordedSleeps, call_rows
from tests.integration.memory.support import new_npc
from tests.integration.reflection.support import (
    ListQueue,
    accumulator,
    completed,
    consume,
    consume_all,
    memory_ids,
    record_day,
    run_stream,
)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
async def make_llm(
    pool: AsyncConnectionPool, server: FakeOpenAIServer
) -> AsyncIterator[Callable[..., LLMClient]]:
    built: list[LLMClient] = []
    sleeps, clock = RecordedSleeps(), FakeClock()

    def build(**overrides: Any) -> LLMClient:
        values: dict[str, Any] = {"openai_base_url": server.base_url, "openai_api_key": "test-key",
                                  "llm_model": "fake-model", "llm_max_retries": 2, "llm_backoff_base_s": 0.01,
                                  "llm_timeout_s": 5.0, "llm_breaker_failures": 3, **overrides}
        built.append(build_llm(LLMSettings(**values), pool, sleep=sleeps, clock=clock))
        return built[-1]

    build.sleeps = sleeps  # type: ignore[attr-defined]
    yield build
    for client in built:
        await client.close()


async def _trigger(
    pool: AsyncConnectionPool, npc: NpcRef, memory_deps: MemoryDeps
) -> tuple[Envelope, ListQueue]:
    queue = ListQueue()
    consumer = ConsumerDeps(queue=queue, settings=ReflectionSettings())
    [trigger] = await consume_all(pool, await record_day(pool, npc, memory_deps), consumer)
    await consume(pool, trigger, consumer)
    return trigger, queue


async def _run(
    pool: AsyncConnectionPool, queue: ListQueue, llm: LLMClient, reader: HttpMemoryReader
) -> Outcome:
    return await run_reflection(queue.jobs[0], RunDeps(pool=pool, llm=llm, reader=reader,
                                                       settings=ReflectionSettings()))


async def test_malformed_insights_fail_the_run_and_nothing_half_done_is_written(
    pool: AsyncConnectionPool, memory_deps: MemoryDeps, reader: HttpMemoryReader, server: FakeOpenAIServer,
    make_llm: Callable[..., LLMClient],
) -> None:
    npc = new_npc()
    trigger, queue = await _trigger(pool, npc, memory_deps)
    questions = {"questions": ["What is Marta planning?", "Who is coming?", "What about the mayor?"]}
    good = {"insights": [{"text": "Marta is throwing a party", "evidence": [1]}]}
    # The first question's insights are fine; the second question's never validate (3 attempts).
    server.enqueue(Reply.json(questions), Reply.json(good), *[Reply.text("I think Marta likes parties")] * 3)

    assert await _run(pool, queue, make_llm(), reader) == "failed"

    events = await run_stream(pool, queue.jobs[0].run_key)
    assert [e.envelope.type for e in events] == ["ReflectionTriggered", "ReflectionFailed"]
    failed = events[1].envelope.payload
    assert isinstance(failed, ReflectionFailed) and "LLMOutputError" in failed.reason
    rows = await call_rows(pool, npc.tenant_id)
    assert [(r["prompt_kind"], r["outcome"], r["attempts"]) for r in rows] == [
        ("reflection_questions", "ok", 1),
        ("reflection_insights", "ok", 1),
        ("reflection_insights", "malformed", 3),
    ]
    assert await memory_ids(pool, npc, "reflection") == set()  # not even the first question's insight

    consumer = ConsumerDeps(queue=queue, settings=ReflectionSettings())
    await consume(pool, events[1].envelope, consumer)
    assert await accumulator(pool, npc) == (170, 1, None)  # the next counted memory triggers run 2
    assert isinstance(trigger.payload, ReflectionTriggered) and trigger.payload.run == 1


async def test_an_outage_opens_the_breaker_and_the_reflection_completes_offline(
    pool: AsyncConnectionPool, memory_deps: MemoryDeps, reader: HttpMemoryReader, server: FakeOpenAIServer,
    make_llm: Callable[..., LLMClient],
) -> None:
    npc = new_npc()
    _, queue = await _trigger(pool, npc, memory_deps)
    server.down = True

    assert await _run(pool, queue, make_llm(), reader) == "completed"

    assert server.chat_count == 3  # the first call's 3 attempts opened the breaker; the rest never left
    done = await completed(pool, queue.jobs[0].run_key)
    assert done.provider == "offline" and len(done.questions) == 3
    observations = await memory_ids(pool, npc, "observation")
    assert all(set(i.evidence) <= observations for i in done.insights)
    rows = await call_rows(pool, npc.tenant_id)
    assert len(rows) == 4 and {r["outcome"] for r in rows} == {"outage_fallback"}


async def test_429_and_500_back_off_and_the_reflection_completes_from_the_provider(
    pool: AsyncConnectionPool, memory_deps: MemoryDeps, reader: HttpMemoryReader, server: FakeOpenAIServer,
    make_llm: Callable[..., LLMClient],
) -> None:
    npc = new_npc()
    _, queue = await _trigger(pool, npc, memory_deps)
    server.enqueue(Reply.error(429, retry_after="2"), Reply.error(500))
    llm = make_llm()

    assert await _run(pool, queue, llm, reader) == "completed"

    assert make_llm.sleeps[0] == 2.0 and len(make_llm.sleeps) == 2  # type: ignore[attr-defined]
    done = await completed(pool, queue.jobs[0].run_key)
    assert done.provider == "openai" and done.questions[0] == "What is the fake model's question number 1?"
    rows = await call_rows(pool, npc.tenant_id)
    assert [r["attempts"] for r in rows] == [3, 1, 1, 1]


async def test_replay_of_a_recorded_run_gives_the_same_reflection_with_zero_provider_calls(
    pool: AsyncConnectionPool, memory_deps: MemoryDeps, reader: HttpMemoryReader, server: FakeOpenAIServer,
    make_llm: Callable[..., LLMClient],
) -> None:
    recorded_npc = new_npc()
    _, queue = await _trigger(pool, recorded_npc, memory_deps)
    assert await _run(pool, queue, make_llm(), reader) == "completed"
    original = await completed(pool, queue.jobs[0].run_key)
    calls = server.chat_count

    # The same world history replayed into another world of the tenant, answered from the recording only.
    copy = NpcRef(recorded_npc.tenant_id, f"world-{uuid.uuid4().hex[:8]}", recorded_npc.npc_id)
    _, replay_queue = await _trigger(pool, copy, memory_deps)
    server.down = True
    assert await _run(pool, replay_queue, make_llm(llm_mode="replay"), reader) == "completed"

    assert server.chat_count == calls
    replayed = await completed(pool, replay_queue.jobs[0].run_key)
    assert replayed.provider == "replay"
    assert replayed.questions == original.questions
    assert [(i.text, i.question, i.depth) for i in replayed.insights] == [
        (i.text, i.question, i.depth) for i in original.insights]
    assert [await _texts(reader, copy, i.evidence) for i in replayed.insights] == [
        await _texts(reader, recorded_npc, i.evidence) for i in original.insights]
    rows = await call_rows(pool, copy.tenant_id)
    assert [r["outcome"] for r in rows[-4:]] == ["replayed"] * 4


async def _texts(reader: HttpMemoryReader, npc: NpcRef, ids: tuple[str, ...]) -> list[str]:
    by_id = {m.memory_id: m.description for m in await reader.recent(npc.tenant_id, npc.world_id, npc.npc_id)}
    return [by_id[i] for i in ids]
