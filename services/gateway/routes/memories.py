"""NPC memory streams for studios: list an NPC's memories, and retrieve with each memory's score breakdown.

The gateway reads through the memory service's internal API (``HttpMemoryReader`` on MEMORY_API_URL),
created on first use and kept on ``app.state``. Tenancy is checked here first (another tenant's world or
an NPC not in the world is a 404); an unreachable memory service is a 503 problem.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts import MemoryKind, MemorySource, Trust
from npcworld.errors import NotFoundError
from npcworld.memory_client import MemoryView, RetrievalRequest, RetrievedView, Weights
from npcworld.memory_client.http import HttpMemoryReader
from npcworld.memory_client.settings import DEFAULT_MEMORY_API_URL
from services.gateway.deps import Reader, live_world
from services.gateway.fields import Text, ZonedDatetime

__all__ = ["router"]

router = APIRouter(tags=["memories"])
PATH = "/v1/worlds/{world_id}/npcs/{npc_id}/memories"


class MemoryOut(BaseModel):
    """One memory of an NPC's stream."""

    memory_id: str
    kind: MemoryKind
    description: str
    importance: int = Field(description="LLM-rated poignancy, 1-10")
    created_at: datetime
    last_accessed_at: datetime
    location: str | None = None
    subject: str | None = None
    evidence: list[str] = Field(default_factory=list, description="memory ids a reflection cites")
    depth: int = 0
    source: MemorySource = Field(
        default="perceived", description="perceived (own senses and words), told, inferred (reflections, "
        "plans) or designer (seeds, inner voice)")
    told_by: str | None = Field(default=None, description="who told it: npc:<id> or player:<id>")
    trust: Trust = Field(
        default="high", description="low: a player's uncorroborated claim, never evidence for a reflection "
        "nor what a reaction goes on")


class MemoryPageOut(BaseModel):
    items: list[MemoryOut]
    next_cursor: str | None = Field(default=None, description="pass as ?cursor= for the next page")


class ScoresOut(BaseModel):
    """Each component min-max normalised to [0, 1] over the NPC's stream; total = weighted sum."""

    recency: float
    importance: float
    relevance: float
    total: float


class RetrievedOut(MemoryOut):
    scores: ScoresOut


class RetrieveIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: Text = Field(min_length=1, max_length=2000, description="what the NPC is trying to remember")
    k: int = Field(default=10, ge=1, le=100, description="how many memories to return")
    weights: Weights | None = Field(default=None, description="a_rec, a_imp, a_rel (default 1 each)")
    now: ZonedDatetime | None = Field(
        default=None, description="world time of the retrieval (default: the NPC's newest memory's time)"
    )


class RetrievalOut(BaseModel):
    items: list[RetrievedOut]


def _reader(request: Request) -> HttpMemoryReader:
    reader = getattr(request.app.state, "memory_reader", None)
    if reader is None:
        url = getattr(request.app.state.settings, "memory_api_url", DEFAULT_MEMORY_API_URL)
        reader = request.app.state.memory_reader = HttpMemoryReader(url)
    return reader


async def _check_npc(request: Request, tenant_id: str, world_id: str, npc_id: str) -> None:
    async with request.app.state.pool.connection() as conn:
        state = await live_world(conn, tenant_id, world_id)
    if npc_id not in state.npcs:
        raise NotFoundError(f"NPC {npc_id!r} not found in world {world_id!r}")


def _out(view: MemoryView) -> MemoryOut:
    return MemoryOut(**view.model_dump(exclude={"evidence"}), evidence=list(view.evidence))


def _retrieved(view: RetrievedView) -> RetrievedOut:
    scores = ScoresOut(recency=view.recency, importance=view.importance_score, relevance=view.relevance,
                       total=view.score)
    base = MemoryView.model_validate(view.model_dump(include=set(MemoryView.model_fields)))
    return RetrievedOut(**_out(base).model_dump(), scores=scores)


@router.get(PATH, response_model=MemoryPageOut)
async def list_memories(
    world_id: str, npc_id: str, key: Reader, request: Request,
    kind: Annotated[list[MemoryKind] | None, Query(description="only these kinds")] = None,
    since: Annotated[ZonedDatetime | None, Query(description="created at or after this world time")] = None,
    until: Annotated[ZonedDatetime | None, Query(description="created at or before this world time")] = None,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> MemoryPageOut:
    """The NPC's memories, newest first."""
    await _check_npc(request, key.tenant_id, world_id, npc_id)
    try:
        page = await _reader(request).list_memories(
            key.tenant_id, world_id, npc_id, limit=limit, kinds=tuple(kind or ()), since=since, until=until,
            cursor=cursor,
        )
    except NotFoundError:  # the NPC has no memories yet
        return MemoryPageOut(items=[])
    return MemoryPageOut(items=[_out(m) for m in page.items], next_cursor=page.next_cursor)


@router.post(f"{PATH}/retrieve", response_model=RetrievalOut)
async def retrieve_memories(
    world_id: str, npc_id: str, body: RetrieveIn, key: Reader, request: Request
) -> RetrievalOut:
    """Top-k memories by recency + importance + relevance with component scores; marks them accessed."""
    await _check_npc(request, key.tenant_id, world_id, npc_id)
    reader = _reader(request)
    try:
        now = body.now
        if now is None:
            newest = await reader.recent(key.tenant_id, world_id, npc_id, limit=1)
            if not newest:
                return RetrievalOut(items=[])
            now = newest[0].created_at
        found = await reader.retrieve(RetrievalRequest(
            tenant_id=key.tenant_id, world_id=world_id, npc_id=npc_id, query=body.query, k=body.k, now=now,
            weights=body.weights,
        ))
    except NotFoundError:  # the NPC has no memories yet
        return RetrievalOut(items=[])
    return RetrievalOut(items=[_retrieved(r) for r in found])
