"""LLM usage of a world: calls and tokens in/out by prompt kind and model, from the recorded calls."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from services.gateway.deps import Reader, live_world
from services.gateway.fields import ZonedDatetime
from services.gateway.repository import UsageRepository

__all__ = ["router"]

router = APIRouter(tags=["usage"])


class UsageLine(BaseModel):
    prompt_kind: str
    model: str = Field(description="the model that answered (the offline label for offline answers)")
    provider: str = Field(description="openai, offline or replay")
    calls: int
    failed_calls: int
    tokens_in: int
    tokens_out: int


class UsageOut(BaseModel):
    world_id: str
    calls: int
    tokens_in: int
    tokens_out: int
    by_kind: list[UsageLine]


@router.get("/v1/worlds/{world_id}/llm-usage", response_model=UsageOut)
async def llm_usage(
    world_id: str,
    key: Reader,
    request: Request,
    since: Annotated[
        ZonedDatetime | None, Query(description="calls recorded at or after (wall clock)")
    ] = None,
    until: Annotated[ZonedDatetime | None, Query(description="calls recorded before (wall clock)")] = None,
) -> UsageOut:
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
        rows = await UsageRepository(conn).by_kind_and_model(key.tenant_id, world_id, since, until)
    lines = [
        UsageLine(
            prompt_kind=r.prompt_kind,
            model=r.model,
            provider=r.provider,
            calls=r.calls,
            failed_calls=r.failed_calls,
            tokens_in=r.tokens_in,
            tokens_out=r.tokens_out,
        )
        for r in rows
    ]
    return UsageOut(
        world_id=world_id,
        calls=sum(r.calls for r in rows),
        tokens_in=sum(r.tokens_in for r in rows),
        tokens_out=sum(r.tokens_out for r in rows),
        by_kind=lines,
    )
