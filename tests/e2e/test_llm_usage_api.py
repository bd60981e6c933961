"""LLM usage per world: calls and tokens by prompt kind and model, summed from the recorded calls."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import httpx
from psycopg_pool import AsyncConnectionPool

from npcworld.llm.repository import CallRecord, LLMCallRepository

MakeClient = Callable[..., Awaitable[httpx.AsyncClient]]
T0 = "2023-02-13T07:00:00+00:00"


def _call(
    tenant: str, world: str, kind: str, model: str, tokens: tuple[int, int], outcome: str = "ok"
) -> CallRecord:
    return CallRecord(
        tenant_id=tenant,
        world_id=world,
        npc_id="marta",
        prompt_kind=kind,
        template_version=1,
        request_hash=uuid.uuid4().hex,
        model=model,
        provider="offline" if "offline" in model else "openai",
        parameters={},
        request=[],
        response=None if outcome == "error" else {"ok": True},
        response_text=None,
        outcome=outcome,
        tokens_in=tokens[0],
        tokens_out=tokens[1],
    )  # type: ignore[arg-type]


async def test_usage_sums_a_worlds_calls_by_prompt_kind_and_model_and_nothing_else(
    client_factory: MakeClient, pool: AsyncConnectionPool
) -> None:
    client = await client_factory()
    tenant = (await client.get("/v1/tenant")).json()["tenant_id"]
    world, other = (f"w-{uuid.uuid4().hex[:8]}" for _ in range(2))
    for w in (world, other):
        assert (
            await client.post("/v1/worlds", json={"world_id": w, "name": "V", "start_time": T0})
        ).status_code == 201
    calls = LLMCallRepository(pool)
    for record in (
        _call(tenant, world, "importance", "gpt-4o-mini", (100, 10)),
        _call(tenant, world, "importance", "gpt-4o-mini", (120, 12)),
        _call(tenant, world, "importance", "gpt-4o-mini", (50, 0), outcome="error"),
        _call(tenant, world, "reflection", "offline-cognition-v1", (0, 0)),
        _call(tenant, other, "importance", "gpt-4o-mini", (999, 999)),
    ):
        await calls.add(record)

    usage = (await client.get(f"/v1/worlds/{world}/llm-usage")).json()
    assert (usage["calls"], usage["tokens_in"], usage["tokens_out"]) == (4, 270, 22)
    lines = {(u["prompt_kind"], u["model"]): u for u in usage["by_kind"]}
    assert lines[("importance", "gpt-4o-mini")] | {} == {
        "prompt_kind": "importance",
        "model": "gpt-4o-mini",
        "provider": "openai",
        "calls": 3,
        "failed_calls": 1,
        "tokens_in": 270,
        "tokens_out": 22,
    }
    assert lines[("reflection", "offline-cognition-v1")]["calls"] == 1
    stranger = await client_factory()
    assert (await stranger.get(f"/v1/worlds/{world}/llm-usage")).status_code == 404
