"""Plan route: an NPC's plan for today and the action in progress, read from the planning read model.

The gateway never imports the planning service; it reads ``planning_npcs`` (owned by planning, read-only
here) with the one query docs/planning.md documents.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from npcworld.errors import NotFoundError
from services.gateway.deps import Reader, live_world

__all__ = ["router"]

router = APIRouter(tags=["npcs"])

_PLAN = ("SELECT state->'plan', state->'current', state->'goals', (state->>'ready')::boolean"
         " FROM planning_npcs WHERE tenant_id = %s AND world_id = %s AND npc_id = %s")


class PlanItemOut(BaseModel):
    start: datetime
    duration_minutes: int
    description: str
    location_path: str


class ActionOut(PlanItemOut):
    emoji: str = ""
    object_path: str | None = None
    object_state: str | None = None
    reaction_to: str | None = Field(default=None, description="event id of the perception it reacts to")


class PlanOut(BaseModel):
    npc_id: str
    day: date | None = Field(description="the planned day (null until the NPC's first action)")
    wakes: datetime | None = None
    sleeps: datetime | None = None
    outline: list[PlanItemOut] = Field(description="the day in 5-8 blocks")
    items: list[PlanItemOut] = Field(description="hour chunks covering the waking day, revisions applied")
    goals: list[str] = Field(description="goals the NPC holds (inner voice)")
    fallbacks: list[str] = Field(description="places the plan named that the NPC does not know, and why")
    current_action: ActionOut | None


def _item(raw: dict[str, Any]) -> PlanItemOut:
    return PlanItemOut(start=raw["start"], duration_minutes=raw["minutes"], description=raw["description"],
                       location_path=raw["location"])


def _action(raw: dict[str, Any] | None) -> ActionOut | None:
    if raw is None:
        return None
    return ActionOut(**_item(raw["item"]).model_dump(), emoji=raw["emoji"], object_path=raw["object_path"],
                     object_state=raw["object_state"], reaction_to=raw["reaction_to"])


@router.get("/v1/worlds/{world_id}/npcs/{npc_id}/plan", response_model=PlanOut)
async def get_plan(world_id: str, npc_id: str, key: Reader, request: Request) -> PlanOut:
    """The NPC's plan for today (outline, hour chunks with revisions) and the action in progress."""
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
        cur = await conn.execute(_PLAN, (key.tenant_id, world_id, npc_id))
        row = await cur.fetchone()
    if row is None or not row[3]:
        raise NotFoundError(f"NPC {npc_id!r} has no plan in world {world_id!r}")
    plan, current, goals = row[0] or {}, row[1], row[2] or []
    return PlanOut(
        npc_id=npc_id, day=plan.get("day"), wakes=plan.get("start"), sleeps=plan.get("end"),
        outline=[_item(i) for i in plan.get("outline", [])], items=[_item(i) for i in plan.get("items", [])],
        goals=goals, fallbacks=plan.get("fallbacks", []), current_action=_action(current),
    )
