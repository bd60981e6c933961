"""Replay answers from recordings with zero provider calls; exhausted budgets fall back offline, said once."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.cause import handling
from npcworld.contracts import LLMBudgetExhausted
from npcworld.eventstore import EventFilter, EventStore
from npcworld.llm import LLMClient, LLMSettings, ReplayMissingError, build_llm
from npcworld.llm.prompts import (
    ImportanceOutput,
    ReflectionInsightsOutput,
    ReflectionQuestionsOutput,
)
from npcworld.llm.testing import FakeOpenAIServer, Reply
from tests.integration.llm.conftest import Scope, call_rows

MEMORIES = [
    {"id": f"m{i}", "description": text}
    for i, text in enumerate(
        ["Maria Lopez studies physics", "Maria Lopez has a crush on Klaus", "Klaus reads"]
    )
]


async def _reflect(llm: LLMClient, scope: Scope) -> list[Any]:
    questions = await llm.complete(
        "reflection_questions",
        {"npc_name": "Klaus", "memories": MEMORIES},
        ReflectionQuestionsOutput,
        **scope,
    )
    answers: list[Any] = [questions.value]
    for question in questions.value.questions:
        insights = await llm.complete(
            "reflection_insights",
            {"npc_name": "Klaus", "question": question, "memories": MEMORIES},
            ReflectionInsightsOutput,
            **scope,
        )
        answers.append(insights.value)
    return answers


async def test_replay_reproduces_a_run_with_zero_provider_calls(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    live = await _reflect(make_llm(), scope)
    calls_made = server.chat_count
    assert calls_made == 4

    server.down = True  # any provider call would now fail loudly
    replayed = await _reflect(make_llm(llm_mode="replay"), scope)

    assert replayed == live
    assert server.chat_count == calls_made
    outcomes = [(r["outcome"], r["provider"]) for r in await call_rows(pool, scope["tenant_id"])]
    assert outcomes == [("ok", "openai")] * 4 + [("replayed", "replay")] * 4


async def test_replay_of_an_offline_run_needs_no_provider_at_all(
    pool: AsyncConnectionPool, scope: Scope
) -> None:
    offline = build_llm(LLMSettings(llm_provider="offline"), pool)
    replay = build_llm(LLMSettings(llm_provider="offline", llm_mode="replay"), pool)
    live = await _reflect(offline, scope)
    assert await _reflect(replay, scope) == live


async def test_replay_without_a_recording_is_a_clear_error(
    make_llm: Callable[..., LLMClient], server: FakeOpenAIServer, scope: Scope
) -> None:
    with pytest.raises(ReplayMissingError, match="no recorded importance@v1 answer"):
        await make_llm(llm_mode="replay").complete(
            "importance", {"npc_name": "K", "memories": ["x"]}, ImportanceOutput, **scope
        )
    assert server.chat_count == 0


async def _budget_events(pool: AsyncConnectionPool, world_id: str) -> list[LLMBudgetExhausted]:
    async with pool.connection() as conn:
        stored = await EventStore().read_all(
            conn, where=EventFilter(world_id=world_id, types=("LLMBudgetExhausted",))
        )
    return [s.envelope.payload for s in stored if isinstance(s.envelope.payload, LLMBudgetExhausted)]


async def test_an_exhausted_world_budget_falls_back_offline_and_says_so_once(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    llm = make_llm(llm_world_token_budget=50)
    inputs = {"npc_name": "Klaus", "memories": ["broke up with Maria"]}
    server.enqueue(*[Reply.json({"scores": [9]}, tokens_in=20, tokens_out=10)] * 2)
    results = [await llm.complete("importance", inputs, ImportanceOutput, **scope) for _ in range(4)]

    assert [(r.provider, r.outcome) for r in results] == [("openai", "ok")] * 2 + [
        ("offline", "budget_fallback")
    ] * 2
    assert all(r.value.scores == (10,) for r in results[2:])  # the offline rating, not an empty answer
    assert server.chat_count == 2
    [event] = await _budget_events(pool, scope["world_id"])
    assert (event.scope, event.limit_tokens, event.used_tokens, event.fallback_provider) == (
        "world",
        50,
        60,
        "offline",
    )
    rows = await call_rows(pool, scope["tenant_id"])
    assert [r["outcome"] for r in rows] == ["ok", "ok", "budget_fallback", "budget_fallback"]

    await llm.repository.set_limit(scope["tenant_id"], scope["world_id"], 1000)
    raised = await llm.complete("importance", inputs, ImportanceOutput, **scope)
    assert (raised.provider, server.chat_count) == ("openai", 3)


async def test_an_exhausted_tenant_budget_moves_every_world_of_the_tenant_offline(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    llm = make_llm()
    await llm.repository.set_limit(scope["tenant_id"], None, 25)
    inputs = {"npc_name": "Klaus", "memories": ["reads a book"]}
    await llm.complete("importance", inputs, ImportanceOutput, **scope)  # 30 tokens: over the limit
    other_world = Scope(tenant_id=scope["tenant_id"], world_id=scope["world_id"] + "-2", npc_id="n")
    fallback = await llm.complete("importance", inputs, ImportanceOutput, **other_world)

    assert (fallback.provider, fallback.outcome) == ("offline", "budget_fallback")
    [event] = await _budget_events(pool, other_world["world_id"])
    assert (event.scope, event.limit_tokens, event.used_tokens) == ("tenant", 25, 30)
    assert server.chat_count == 1


async def test_without_openai_settings_the_offline_provider_answers_and_is_recorded(
    pool: AsyncConnectionPool, scope: Scope
) -> None:
    llm = build_llm(LLMSettings(llm_provider="auto", openai_base_url=None, openai_api_key=None), pool)
    result = await llm.complete(
        "importance", {"npc_name": "K", "memories": ["brushing teeth"]}, ImportanceOutput, **scope
    )
    assert (result.provider, result.outcome, result.value.scores) == ("offline", "ok", (1,))
    [row] = await call_rows(pool, scope["tenant_id"])
    assert (row["provider"], row["model"], row["tokens_in"]) == ("offline", "npcworld-offline-1", 0)


async def test_a_call_made_while_handling_an_event_names_that_event(
    pool: AsyncConnectionPool, scope: Scope
) -> None:
    llm = build_llm(LLMSettings(llm_provider="offline"), pool)
    handled, chain = uuid.uuid4(), uuid.uuid4()
    with handling(handled, chain):
        await llm.complete("importance", {"npc_name": "K", "memories": ["a fire"]}, ImportanceOutput, **scope)
    await llm.complete("importance", {"npc_name": "K", "memories": ["a walk"]}, ImportanceOutput, **scope)
    rows = await call_rows(pool, scope["tenant_id"])
    assert [r["cause_event_id"] for r in rows] == [handled, None]
