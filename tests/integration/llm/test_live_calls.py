"""The real openai client against the fake server: answers, retries, backoff, timeouts, refusals."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from psycopg_pool import AsyncConnectionPool

from npcworld.eventstore import EventFilter, EventStore
from npcworld.llm import LLMClient, LLMOutputError, LLMRequestError
from npcworld.llm.prompts import ImportanceOutput, render_recorded
from npcworld.llm.testing import FakeOpenAIServer, Reply
from services.memory.domain import NpcRef, RatingContext
from services.memory.importance import LLMImportanceRater
from tests.integration.llm.conftest import RecordedSleeps, Scope, call_rows

MEMORIES = {"npc_name": "Isabella Rodriguez", "memories": ["brushing her teeth", "broke up with her partner"]}


def _prompt(row: dict[str, Any]) -> Any:
    """The recorded call's messages, rendered again from its template inputs (the record keeps no text)."""
    return render_recorded(row["prompt_kind"], row["template_version"], row["inputs"])


async def test_real_client_path_answers_validates_and_records(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    server.enqueue(Reply.json({"scores": [1, 10]}, tokens_in=40, tokens_out=8))
    result = await make_llm().complete("importance", MEMORIES, ImportanceOutput, **scope)

    assert result.value == ImportanceOutput(scores=(1, 10))
    assert (result.provider, result.model, result.outcome) == ("openai", "fake-model", "ok")
    assert (result.tokens_in, result.tokens_out) == (40, 8)
    sent = server.requests[-1]
    assert sent.prompt == "importance@v1"
    assert sent.body["model"] == "fake-model"
    assert sent.body["response_format"] == {"type": "json_object"}
    [row] = await call_rows(pool, scope["tenant_id"])
    assert row["outcome"] == "ok" and row["provider"] == "openai" and row["model"] == "fake-model"
    assert row["request_hash"] == result.request_hash
    assert (row["prompt_kind"], row["template_version"], row["npc_id"]) == ("importance", 1, scope["npc_id"])
    # The record keeps what renders the prompt again, not the rendered text (and its length, for estimates).
    assert row["request"] is None
    assert _prompt(row) == sent.body["messages"]
    assert row["prompt_chars"] == sum(len(m["content"]) for m in sent.body["messages"])
    assert row["response"] == {"scores": [1, 10]}
    assert row["parameters"] == {"temperature": 0.0, "max_tokens": 300, "response_format": "json_object"}
    assert (row["tokens_in"], row["tokens_out"], row["attempts"]) == (40, 8, 1)
    usage = await make_llm().repository.usage(scope["tenant_id"], scope["world_id"])
    assert (usage.tenant_used, usage.world_used) == (48, 48)


async def test_json_schema_mode_sends_the_output_schema(
    make_llm: Callable[..., LLMClient], server: FakeOpenAIServer, scope: Scope
) -> None:
    await make_llm(llm_response_format="json_schema").complete(
        "importance", MEMORIES, ImportanceOutput, **scope
    )
    sent = server.requests[-1].body["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "importance"


async def test_malformed_output_is_retried_with_the_reason(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    server.enqueue(
        Reply.text('{"scores": [1, 10'), Reply.json({"scores": [3]}), Reply.json({"scores": [2, 9]})
    )
    result = await make_llm().complete("importance", MEMORIES, ImportanceOutput, **scope)

    assert result.value.scores == (2, 9)
    assert server.chat_count == 3
    correction = server.requests[-1].body["messages"][-1]["content"]
    assert "expected 2 scores, got 1" in correction
    [row] = await call_rows(pool, scope["tenant_id"])
    assert (row["outcome"], row["attempts"], row["tokens_in"]) == ("ok", 3, 60)
    assert _prompt(row) == server.requests[0].body["messages"]  # the recorded request is the original


async def test_malformed_output_every_time_is_recorded_as_a_failure_and_nothing_else(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    server.enqueue(*[Reply.text("I would rate these a 5.")] * 3)
    with pytest.raises(LLMOutputError, match="importance: no valid output after 3 attempt"):
        await make_llm().complete("importance", MEMORIES, ImportanceOutput, **scope)

    [row] = await call_rows(pool, scope["tenant_id"])
    assert (row["outcome"], row["provider"], row["attempts"]) == ("malformed", "openai", 3)
    assert row["response"] is None
    assert row["response_text"] == "I would rate these a 5."
    assert "no JSON object" in row["error"]
    async with pool.connection() as conn:
        events = await EventStore().read_all(conn, where=EventFilter(world_id=scope["world_id"]))
    assert events == []


async def test_429_and_500_back_off_honouring_retry_after_then_succeed(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    sleeps: RecordedSleeps,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    server.enqueue(Reply.error(429, retry_after="7"), Reply.error(500), Reply.json({"scores": [1, 10]}))
    result = await make_llm().complete("importance", MEMORIES, ImportanceOutput, **scope)

    assert result.value.scores == (1, 10)
    assert server.chat_count == 3
    assert sleeps[0] == 7.0  # the server's Retry-After, longer than our own backoff
    assert 0.01 <= sleeps[1] <= 0.02  # second retry: base * 2 with jitter
    [row] = await call_rows(pool, scope["tenant_id"])
    assert (row["outcome"], row["attempts"]) == ("ok", 3)


async def test_a_slow_response_times_out_and_is_retried(
    make_llm: Callable[..., LLMClient], server: FakeOpenAIServer, scope: Scope
) -> None:
    server.enqueue(Reply.slow(3.0), Reply.json({"scores": [4, 8]}))
    result = await make_llm(llm_timeout_s=0.3).complete("importance", MEMORIES, ImportanceOutput, **scope)
    assert result.value.scores == (4, 8)
    assert server.chat_count == 2


async def test_a_refused_request_is_not_retried(
    make_llm: Callable[..., LLMClient],
    server: FakeOpenAIServer,
    pool: AsyncConnectionPool,
    scope: Scope,
) -> None:
    server.enqueue(Reply.error(400))
    llm = make_llm()
    with pytest.raises(LLMRequestError, match="HTTP 400"):
        await llm.complete("importance", MEMORIES, ImportanceOutput, **scope)
    assert server.chat_count == 1
    [row] = await call_rows(pool, scope["tenant_id"])
    assert (row["outcome"], row["response"]) == ("error", None)


async def test_inputs_are_validated_before_anything_is_sent(
    make_llm: Callable[..., LLMClient], server: FakeOpenAIServer, scope: Scope
) -> None:
    from npcworld.errors import ValidationError

    with pytest.raises(ValidationError):
        await make_llm().complete("importance", {"npc_name": "I", "memories": []}, ImportanceOutput, **scope)
    assert server.chat_count == 0


async def test_a_steps_memories_of_several_npcs_are_rated_in_one_endpoint_call(
    make_llm: Callable[..., LLMClient], server: FakeOpenAIServer, pool: AsyncConnectionPool, scope: Scope
) -> None:
    rater = LLMImportanceRater(make_llm())
    at = datetime(2023, 2, 13, 7, tzinfo=UTC)
    contexts = [RatingContext(NpcRef(scope["tenant_id"], scope["world_id"], npc), name, "", at)
                for npc, name in (("ann", "Ann Lee"), ("bob", "Bob Ray"))]

    ratings = await rater.rate_many([(("Ann waters the plants", "Ann sees a fire"), contexts[0]),
                                     (("Bob reads",), contexts[1])])

    assert [len(r.scores) for r in ratings] == [2, 1]
    assert server.chat_count == 1
    rows = await call_rows(pool, scope["tenant_id"])
    assert [(r["prompt_kind"], r["npc_id"], r["outcome"]) for r in rows] == [("importance_batch", None, "ok")]
    assert [p["npc_name"] for p in rows[0]["inputs"]["people"]] == ["Ann Lee", "Bob Ray"]
