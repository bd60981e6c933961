"""Server-Sent Events of a world's events: ``id:`` is the store sequence, resumable with ``Last-Event-ID``.

Events are read from the event store in sequence order, never past an unsettled row (see
repository._events), so a client that reconnects with its last id gets every later event once.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from npcworld.errors import ValidationError
from npcworld.eventstore import EventFilter, StoredEvent
from services.gateway.deps import Reader, live_world
from services.gateway.repository import EventReader

__all__ = ["router"]

router = APIRouter(tags=["events"])
_BATCH = 500
_STREAM_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
        "description": "`id: <seq>`, `event: <type>`, `data: <envelope JSON>` per event",
    }
}


def _frame(stored: StoredEvent) -> str:
    data = json.dumps(stored.envelope.model_dump(mode="json"), separators=(",", ":"))
    return f"id: {stored.seq}\nevent: {stored.envelope.type}\ndata: {data}\n\n"


def _resume_point(last_event_id: str | None, after: int | None) -> int:
    if last_event_id is None:
        return after or 0
    if not last_event_id.strip().isdigit() or len(last_event_id.strip()) > 18:
        raise ValidationError(
            "Last-Event-ID must be the id of an event this stream sent", field="Last-Event-ID"
        )
    return int(last_event_id)


@router.get("/v1/worlds/{world_id}/events/stream", response_class=StreamingResponse, responses=_STREAM_DOC)
async def stream_events(
    world_id: str,
    key: Reader,
    request: Request,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=32)] = None,
    after: Annotated[
        int | None, Query(ge=0, le=2**62, description="start after this seq (no Last-Event-ID)")
    ] = None,
    type: Annotated[list[str] | None, Query(description="only these event types")] = None,
    npc_id: Annotated[str | None, Query(max_length=100, description="only this NPC's events")] = None,
) -> StreamingResponse:
    """The world's events from the start (or after ``Last-Event-ID``/``after``), then live."""
    position = _resume_point(last_event_id, after)
    async with request.app.state.pool.connection() as conn:
        await live_world(conn, key.tenant_id, world_id)
    where = EventFilter(tenant_id=key.tenant_id, world_id=world_id, npc_id=npc_id, types=tuple(type or ()))
    return StreamingResponse(
        _events(request, where, position),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _events(request: Request, where: EventFilter, position: int) -> AsyncIterator[str]:
    state = request.app.state
    settings = state.settings
    yield "retry: 1000\n\n"
    quiet_since = time.monotonic()
    while True:
        async with state.pool.connection() as conn:
            batch = await EventReader(conn).settled_after(where, position, _BATCH)
        for stored in batch:
            yield _frame(stored)
            position = stored.seq
        if batch:
            quiet_since = time.monotonic()
            if len(batch) == _BATCH:
                continue
        elif time.monotonic() - quiet_since >= settings.gateway_sse_keepalive_seconds:
            yield ": keepalive\n\n"
            quiet_since = time.monotonic()
        await state.notifier.wait(settings.gateway_sse_poll_seconds)
