"""Rules routes: a studio's rules over NPCs' decided actions (server-side rule checks).

``PUT`` stores the world's whole rule set as one ``ActionRulesSet`` event; world-state judges every later
``ActionDecided`` against it before the action takes effect (``ActionVetoed`` when a rule vetoes or replaces
it). ``GET`` reads the latest set back from the event store.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from npcworld.contracts import ActionRule, ActionRulesSet
from npcworld.errors import ValidationError
from npcworld.eventstore import EventStore, UnitOfWork
from services.gateway.deps import Reader, Writer, live_world
from services.gateway.repository import ViewRepository
from services.gateway.schemas import Accepted

__all__ = ["router"]

router = APIRouter(tags=["rules"])


class RulesBody(BaseModel):
    """The world's rules over decided actions, in order: the first one an action breaks decides."""

    rules: list[ActionRule] = Field(default_factory=list, max_length=200)


@router.put("/v1/worlds/{world_id}/rules", status_code=202)
async def set_rules(world_id: str, body: RulesBody, key: Writer, request: Request) -> Accepted:
    """Replace the world's rules (an empty list removes them); they apply to actions decided from now on."""
    ids = [r.rule_id for r in body.rules]
    if len(set(ids)) != len(ids):
        raise ValidationError("rule ids must be distinct", field="rules")
    async with request.app.state.pool.connection() as conn, conn.transaction():
        state = await live_world(conn, key.tenant_id, world_id)
        uow = UnitOfWork(conn, EventStore())
        # stamped with the world's current time
        when = await ViewRepository(conn).world_time(key.tenant_id, world_id) or state.start_time
        assert when is not None
        event = uow.new_event(ActionRulesSet(rules=tuple(body.rules)), tenant_id=key.tenant_id,
                              world_id=world_id, world_time=when)
        await uow.append(f"rules-{world_id}", [event])
    return Accepted(event_id=str(event.event_id))


@router.get("/v1/worlds/{world_id}/rules", response_model=RulesBody)
async def get_rules(world_id: str, key: Reader, request: Request) -> RulesBody:
    """The world's current rules (the last set stored)."""
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
        cur = await conn.execute(
            "SELECT payload FROM world_events(%s, %s) AS events"
            " WHERE type = 'ActionRulesSet'"
            " ORDER BY seq DESC LIMIT 1",
            (key.tenant_id, world_id),
        )
        row = await cur.fetchone()
    return RulesBody(rules=list(ActionRulesSet.model_validate(row[0]).rules) if row else [])
