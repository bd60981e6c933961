"""A chat's reply as Server-Sent Events, while the NPC produces it: ``chunk`` events (``id:`` the chunk's
number, resumable with ``Last-Event-ID``), then one ``reply`` event with the validated reply, and the end.

The dialogue service asks for the reply before its transaction, with the LLM layer streaming the text into
``llm_reply_chunks`` (words offline, tokens from an OpenAI-compatible server; npcworld.llm.streaming); the
reply itself is still the ``NpcReplied`` event. Chunks are a preview: a client shows them as they come and
replaces them with the ``reply`` event's text, which is what was validated and stored.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse
from psycopg.rows import dict_row

from npcworld.contracts import NpcReplied
from npcworld.errors import NotFoundError, ValidationError
from npcworld.shredding import reveal
from services.gateway.deps import Chatter

__all__ = ["router"]

router = APIRouter(tags=["dialogue"])
PATH = "/v1/worlds/{world_id}/npcs/{npc_id}/chats/{event_id}/stream"
_POLL_S = 0.1  # chunks are read this often while the reply grows (appends wake the stream sooner)
_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
        "description": "`event: chunk` (`id: <n>`, `data: {\"index\": n, \"text\": ...}`) as the reply is "
        "produced, then `event: reply` with the reply (as GET …/chats/{event_id} answers it) and the end",
    }
}


def _after(last_event_id: str | None) -> int:
    if last_event_id is None:
        return 0
    if not last_event_id.strip().isdigit() or len(last_event_id.strip()) > 9:
        raise ValidationError("Last-Event-ID must be the id of a chunk this stream sent",
                              field="Last-Event-ID")
    return int(last_event_id)


@router.get(PATH, response_class=StreamingResponse, responses=_DOC)
async def stream_chat(
    world_id: str, npc_id: str, event_id: uuid.UUID, key: Chatter, request: Request,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=32)] = None,
) -> StreamingResponse:
    """The reply to a chat or interview (its ``event_id`` from the POST) as it is produced; a client that
    connects late gets what was produced so far, then the rest. A player session streams only its chats."""
    after = _after(last_event_id)
    async with request.app.state.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT payload->>'player_id' FROM events WHERE event_id = %s AND type = 'PlayerSpoke'"
            " AND in_world(tenant_id, world_id, %s, %s) AND npc_id = %s",
            (event_id, key.tenant_id, world_id, npc_id),
        )
        said = await cur.fetchone()
    if said is None or (key.player_id is not None and said[0] != key.player_id):
        raise NotFoundError(f"no chat {str(event_id)!r} with NPC {npc_id!r} in world {world_id!r}")
    return StreamingResponse(
        _frames(request, key.tenant_id, event_id, after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _frames(request: Request, tenant_id: str, chat: uuid.UUID, after: int) -> AsyncIterator[str]:
    state = request.app.state
    yield "retry: 1000\n\n"
    quiet_since = time.monotonic()
    while True:
        # The reply is looked up first: its chunks were all stored before it was appended.
        reply = await _reply(request, chat)
        for seq, text in await _chunks(request, tenant_id, chat, after):
            yield f"id: {seq}\nevent: chunk\ndata: {json.dumps({'index': seq, 'text': text})}\n\n"
            after, quiet_since = seq, time.monotonic()
        if reply is not None:
            yield f"event: reply\ndata: {json.dumps(reply, separators=(',', ':'))}\n\n"
            return
        if time.monotonic() - quiet_since >= state.settings.gateway_sse_keepalive_seconds:
            yield ": keepalive\n\n"
            quiet_since = time.monotonic()
        await state.notifier.wait(_POLL_S)


async def _chunks(request: Request, tenant_id: str, chat: uuid.UUID, after: int) -> list[tuple[int, str]]:
    async with request.app.state.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT seq, text FROM llm_reply_chunks WHERE cause_id = %s AND tenant_id = %s AND seq > %s"
            " ORDER BY seq",
            (chat, tenant_id, after),
        )
        return [(int(r[0]), str(r[1])) for r in await cur.fetchall()]


async def _reply(request: Request, chat: uuid.UUID) -> dict[str, Any] | None:
    async with request.app.state.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT event_id, payload FROM events WHERE type = 'NpcReplied' AND causation_id = %s", (chat,)
        )
        row = await cur.fetchone()
        if row is not None:
            await reveal(conn, [("NpcReplied", row["payload"])])
    if row is None:
        return None
    replied = NpcReplied.model_validate(row["payload"])
    return {"event_id": str(chat), "reply_event_id": str(row["event_id"]), "reply": replied.text,
            "provider": replied.provider, "memory_ids": list(replied.memory_ids)}
