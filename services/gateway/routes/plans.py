"""Plan route: an NPC's plan for today and the action in progress, from the gateway's plan view.

The gateway never imports the planning service nor reads its tables: ``gw_plans`` is folded from planning's
events (DayPlanned, PlanRevised, ActionDecided: services/gateway/handlers.py).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from npcworld.errors import NotFoundError
from services.gateway.deps import Reader, live_world
from services.gateway.freshness import settled
from services.gateway.repository import ViewRepository

__all__ = ["router"]

router = APIRouter(tags=["npcs"])


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
        await settled(request, conn, key.tenant_id, world_id)
        plan = await ViewRepository(conn).plan(key.tenant_id, world_id, npc_id)
    if plan is None or plan["day"] is None:  # no day planned yet (a decision or revision may have come first)
        raise NotFoundError(f"NPC {npc_id!r} has no plan in world {world_id!r}")
    return PlanOut(
        npc_id=npc_id, day=plan["day"], wakes=plan["wakes"], sleeps=plan["sleeps"],
        outline=[_item(i) for i in plan["outline"]], items=[_item(i) for i in plan["items"]],
        goals=plan["goals"], fallbacks=plan["fallbacks"], current_action=_action(plan["current"]),
    )
