"""A provider outage opens the circuit breaker: calls then fail fast, falling back offline or failing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.errors import TransientError
from npcworld.llm import CircuitOpenError, LLMClient, ProviderUnavailableError
from npcworld.llm.prompts import ImportanceOutput
from npcworld.llm.testing import FakeOpenAIServer
from tests.integration.llm.conftest import FakeClock, Scope, call_rows

MEMORIES = {"npc_name": "Isabella Rodriguez", "memories": ["brushing her teeth", "broke up with her partner"]}


async def test_outage_opens_the_breaker_and_calls_fall_back_offline_without_reaching_the_provider(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    clock: FakeClock,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    llm = make_llm(llm_breaker_failures=3, llm_max_retries=2, llm_breaker_reset_s=30)
    server.down = True

    first = await llm.complete("importance", MEMORIES, ImportanceOutput, **scope)
    assert server.chat_count == 3  # every attempt failed; the third opened the breaker
    second = await llm.complete("importance", MEMORIES, ImportanceOutput, **scope)
    assert server.chat_count == 3  # open breaker: the provider is not called at all

    for result in (first, second):
        assert (result.provider, result.outcome, result.model) == (
            "offline",
            "outage_fallback",
            "npcworld-offline-1",
        )
        assert result.value.scores[0] < result.value.scores[1]
    rows = await call_rows(pool, scope["tenant_id"])
    assert [r["outcome"] for r in rows] == ["outage_fallback", "outage_fallback"]
    assert "HTTP 503" in rows[0]["error"] and "circuit open" in rows[1]["error"]

    server.down = False
    clock.now += 30  # half-open: one trial call goes through and closes the breaker
    recovered = await llm.complete("importance", MEMORIES, ImportanceOutput, **scope)
    assert (recovered.provider, recovered.outcome) == ("openai", "ok")
    assert server.chat_count == 4


async def test_with_the_fail_policy_an_outage_raises_a_transient_error(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    llm = make_llm(llm_outage_policy="fail", llm_breaker_failures=2, llm_max_retries=3)
    server.down = True
    with pytest.raises(CircuitOpenError) as info:
        await llm.complete("importance", MEMORIES, ImportanceOutput, **scope)
    assert isinstance(info.value, ProviderUnavailableError) and isinstance(info.value, TransientError)
    assert server.chat_count == 2  # the breaker cut the retries short
    with pytest.raises(CircuitOpenError):
        await llm.complete("importance", MEMORIES, ImportanceOutput, **scope)
    assert server.chat_count == 2
    rows = await call_rows(pool, scope["tenant_id"])
    assert [(r["outcome"], r["response"]) for r in rows] == [("error", None), ("error", None)]
