"""``AsyncClient``: one method per API operation, grouped by resource; the transport is ``AsyncBase``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

from npcworld_sdk._async_admin import AsyncAdmin
from npcworld_sdk._async_base import AsyncEventStream
from npcworld_sdk._async_designer import AsyncDesigner
from npcworld_sdk._errors import ReplyTimeoutError
from npcworld_sdk._models import (
    Accepted,
    EventOut,
    MemoryOut,
    MemoryPageOut,
    NpcOut,
    NpcStateOut,
    PageEventOut,
    PageNpcOut,
    PageWorldOut,
    PlanOut,
    RelationshipOut,
    ReplyOut,
    ReplyPending,
    RetrievalOut,
    RetrievedOut,
    TemplateOut,
    UsageOut,
    Weights,
    WorldOut,
)
from npcworld_sdk._request import body, params, path
from npcworld_sdk._sse import ChatChunk

__all__ = ["AsyncClient"]


class AsyncClient(AsyncAdmin, AsyncDesigner):
    """The npcworld REST API, async. ``AsyncClient()`` reads ``NPCWORLD_URL`` and ``NPCWORLD_API_KEY``.

    Every POST carries an ``Idempotency-Key`` (pass ``idempotency_key=`` to choose it), reused by its retries.
    ``list_*`` return one page; ``iter_*`` walk every page.
    """

    # -- worlds

    async def templates(self) -> list[TemplateOut]:
        return await self.fetch_list(TemplateOut, "/v1/templates")

    async def create_world(
        self,
        name: str,
        start_time: datetime,
        *,
        world_id: str | None = None,
        template: str | None = None,
        idempotency_key: str | None = None,
    ) -> WorldOut:
        fields = {"name": name, "start_time": start_time, "world_id": world_id, "template": template}
        return await self.fetch(
            WorldOut, "POST", "/v1/worlds", json=body(fields), idempotency_key=idempotency_key
        )

    async def list_worlds(self, *, cursor: str | None = None, limit: int | None = None) -> PageWorldOut:
        return await self.fetch(PageWorldOut, "GET", "/v1/worlds", params=params(cursor=cursor, limit=limit))

    def iter_worlds(self, *, page_size: int | None = None) -> AsyncIterator[WorldOut]:
        return self.iterate(lambda cursor: self.list_worlds(cursor=cursor, limit=page_size))

    async def get_world(self, world_id: str) -> WorldOut:
        return await self.fetch(WorldOut, "GET", path("/v1/worlds/{}", world_id))

    async def delete_world(self, world_id: str) -> None:
        await self.request("DELETE", path("/v1/worlds/{}", world_id))

    async def fork_world(
        self,
        world_id: str,
        at: datetime,
        *,
        new_world_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> WorldOut:
        """A new world holding this one's history up to world time ``at``."""
        return await self.fetch(
            WorldOut,
            "POST",
            path("/v1/worlds/{}/fork", world_id),
            json=body({"at": at, "new_world_id": new_world_id}),
            idempotency_key=idempotency_key,
        )

    async def llm_usage(
        self, world_id: str, *, since: datetime | None = None, until: datetime | None = None
    ) -> UsageOut:
        return await self.fetch(
            UsageOut,
            "GET",
            path("/v1/worlds/{}/llm-usage", world_id),
            params=params(since=since, until=until),
        )

    # -- NPCs

    async def create_npc(
        self,
        world_id: str,
        npc_id: str,
        name: str,
        *,
        seed: str | None = None,
        age: int | None = None,
        occupation: str | None = None,
        traits: Sequence[str] | None = None,
        location: str | None = None,
        idempotency_key: str | None = None,
    ) -> NpcOut:
        """An NPC; ``seed`` is its persona paragraph (``;`` separates seed memories)."""
        fields = {
            "npc_id": npc_id,
            "name": name,
            "seed": seed,
            "age": age,
            "occupation": occupation,
            "traits": list(traits) if traits is not None else None,
            "location": location,
        }
        return await self.fetch(
            NpcOut,
            "POST",
            path("/v1/worlds/{}/npcs", world_id),
            json=body(fields),
            idempotency_key=idempotency_key,
        )

    async def list_npcs(
        self, world_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> PageNpcOut:
        return await self.fetch(
            PageNpcOut, "GET", path("/v1/worlds/{}/npcs", world_id), params=params(cursor=cursor, limit=limit)
        )

    def iter_npcs(self, world_id: str, *, page_size: int | None = None) -> AsyncIterator[NpcOut]:
        return self.iterate(lambda cursor: self.list_npcs(world_id, cursor=cursor, limit=page_size))

    async def npc_state(self, world_id: str, npc_id: str) -> NpcStateOut:
        """Where the NPC is, what it is doing and its plan, as the world state read model has it."""
        return await self.fetch(NpcStateOut, "GET", path("/v1/worlds/{}/npcs/{}/state", world_id, npc_id))

    async def relationships(self, world_id: str, npc_id: str) -> list[RelationshipOut]:
        return await self.fetch_list(
            RelationshipOut, path("/v1/worlds/{}/npcs/{}/relationships", world_id, npc_id)
        )

    async def plan(self, world_id: str, npc_id: str) -> PlanOut:
        return await self.fetch(PlanOut, "GET", path("/v1/worlds/{}/npcs/{}/plan", world_id, npc_id))

    async def perceive(
        self,
        world_id: str,
        npc_id: str,
        description: str,
        world_time: datetime,
        *,
        location: str | None = None,
        idempotency_key: str | None = None,
    ) -> Accepted:
        """Something the NPC perceived (stored as ``ObservationMade``)."""
        fields = {"description": description, "world_time": world_time, "location": location}
        return await self.fetch(
            Accepted,
            "POST",
            path("/v1/worlds/{}/npcs/{}/perceptions", world_id, npc_id),
            json=body(fields),
            idempotency_key=idempotency_key,
        )

    # -- talking

    async def chat(
        self,
        world_id: str,
        npc_id: str,
        text: str,
        *,
        player_id: str,
        world_time: datetime | None = None,
        timeout: float = 60.0,
        idempotency_key: str | None = None,
    ) -> ReplyOut:
        """Say ``text`` to the NPC as ``player_id`` and return its reply, waiting up to ``timeout`` seconds.

        Raises:
            ReplyTimeoutError: no reply within ``timeout`` (the chat stands: ``chat_result`` may get it).
        """
        deadline = time.monotonic() + timeout
        # The gateway waits at most 60 s; then the chat's result is polled until the deadline.
        server_wait = max(0.1, min(timeout, 60.0))
        fields = {
            "player_id": player_id,
            "text": text,
            "world_time": world_time,
            "wait": True,
            "timeout_s": server_wait,
        }
        answer = await self.request(
            "POST",
            path("/v1/worlds/{}/npcs/{}/chat", world_id, npc_id),
            json=body(fields),
            idempotency_key=idempotency_key,
            timeout=server_wait + 10.0,
        )
        if answer.status_code == 200:
            return ReplyOut.model_validate(answer.json())
        pending = ReplyPending.model_validate(answer.json())
        left = max(0.0, deadline - time.monotonic())
        return await self.wait_for_reply(world_id, npc_id, pending.event_id, timeout=left)

    async def send_chat(
        self,
        world_id: str,
        npc_id: str,
        text: str,
        *,
        player_id: str,
        world_time: datetime | None = None,
        idempotency_key: str | None = None,
    ) -> ReplyPending:
        """Say ``text`` without waiting: the answer names the chat (``event_id``) for ``chat_result``."""
        fields = {"player_id": player_id, "text": text, "world_time": world_time, "wait": False}
        return await self.fetch(
            ReplyPending,
            "POST",
            path("/v1/worlds/{}/npcs/{}/chat", world_id, npc_id),
            json=body(fields),
            idempotency_key=idempotency_key,
        )

    async def stream_chat(
        self,
        world_id: str,
        npc_id: str,
        event_id: str,
        *,
        last_event_id: str | int | None = None,
        read_timeout: float | None = 60.0,
    ) -> AsyncIterator[ChatChunk | ReplyOut]:
        """A chat's reply as the NPC produces it (``event_id`` from ``send_chat``): ``ChatChunk``s, then the
        ``ReplyOut``, and the end. Connecting late gives what was produced so far; a broken connection is
        resumed after the last chunk (``last_event_id``: the index of a chunk already shown)."""
        url = path("/v1/worlds/{}/npcs/{}/chats/{}/stream", world_id, npc_id, event_id)
        resume = None if last_event_id is None else str(last_event_id)
        async with AsyncEventStream(self, url, {}, resume, read_timeout) as stream:
            async for event in stream:
                if event.type == "reply":
                    yield ReplyOut.model_validate(event.envelope)
                    return
                yield ChatChunk(index=event.seq, text=str(event.envelope["text"]))

    async def chat_result(self, world_id: str, npc_id: str, event_id: str) -> ReplyOut | ReplyPending:
        """A chat's reply, or ``ReplyPending`` while the NPC has not answered yet."""
        answer = await self.request("GET", path("/v1/worlds/{}/npcs/{}/chats/{}", world_id, npc_id, event_id))
        if answer.status_code == 202:
            return ReplyPending.model_validate(answer.json())
        return ReplyOut.model_validate(answer.json())

    async def wait_for_reply(
        self, world_id: str, npc_id: str, event_id: str, *, timeout: float = 60.0, interval: float = 0.25
    ) -> ReplyOut:
        """Poll a chat's result until the reply is there (``ReplyTimeoutError`` after ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while True:
            result = await self.chat_result(world_id, npc_id, event_id)
            if isinstance(result, ReplyOut):
                return result
            if time.monotonic() >= deadline:
                raise ReplyTimeoutError(f"no reply to chat {event_id} within {timeout:g} s")
            await asyncio.sleep(interval)

    async def interview(
        self,
        world_id: str,
        npc_id: str,
        question: str,
        *,
        interviewer: str,
        wait: bool = True,
        idempotency_key: str | None = None,
    ) -> ReplyOut | ReplyPending:
        """Ask the NPC a question out of the game (a designer's interview); pending if the reply is late."""
        fields = {"interviewer": interviewer, "question": question, "wait": wait}
        answer = await self.request(
            "POST",
            path("/v1/worlds/{}/npcs/{}/interview", world_id, npc_id),
            json=body(fields),
            idempotency_key=idempotency_key,
        )
        if answer.status_code == 202:
            return ReplyPending.model_validate(answer.json())
        return ReplyOut.model_validate(answer.json())

    async def inner_voice(
        self, world_id: str, npc_id: str, directive: str, *, idempotency_key: str | None = None
    ) -> Accepted:
        """A thought put in the NPC's head, held as its own (``voice`` scope)."""
        return await self.fetch(
            Accepted,
            "POST",
            path("/v1/worlds/{}/npcs/{}/inner-voice", world_id, npc_id),
            json=body({"directive": directive}),
            idempotency_key=idempotency_key,
        )

    # -- memories

    async def list_memories(
        self,
        world_id: str,
        npc_id: str,
        *,
        kind: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> MemoryPageOut:
        return await self.fetch(
            MemoryPageOut,
            "GET",
            path("/v1/worlds/{}/npcs/{}/memories", world_id, npc_id),
            params=params(kind=kind, cursor=cursor, limit=limit),
        )

    def iter_memories(
        self, world_id: str, npc_id: str, *, kind: str | None = None, page_size: int | None = None
    ) -> AsyncIterator[MemoryOut]:
        return self.iterate(
            lambda cursor: self.list_memories(world_id, npc_id, kind=kind, cursor=cursor, limit=page_size)
        )

    async def retrieve_memories(
        self,
        world_id: str,
        npc_id: str,
        query: str,
        *,
        k: int | None = None,
        now: datetime | None = None,
        weights: Weights | None = None,
    ) -> list[RetrievedOut]:
        """The ``k`` memories the NPC would recall for ``query``, with their recency/importance/relevance."""
        fields: dict[str, Any] = {"query": query, "k": k, "now": now}
        if weights is not None:
            fields["weights"] = weights.model_dump(mode="json", exclude_none=True)
        found = await self.fetch(
            RetrievalOut,
            "POST",
            path("/v1/worlds/{}/npcs/{}/memories/retrieve", world_id, npc_id),
            json=body(fields),
        )
        return found.items

    # -- events

    async def list_events(
        self,
        world_id: str,
        *,
        types: Sequence[str] | None = None,
        npc_id: str | None = None,
        until: datetime | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> PageEventOut:
        query = params(
            type=list(types) if types else None, npc_id=npc_id, until=until, cursor=cursor, limit=limit
        )
        return await self.fetch(PageEventOut, "GET", path("/v1/worlds/{}/events", world_id), params=query)

    def iter_events(
        self,
        world_id: str,
        *,
        types: Sequence[str] | None = None,
        npc_id: str | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[EventOut]:
        return self.iterate(
            lambda cursor: self.list_events(
                world_id, types=types, npc_id=npc_id, cursor=cursor, limit=page_size
            )
        )

    def stream_events(
        self,
        world_id: str,
        *,
        types: Sequence[str] | None = None,
        npc_id: str | None = None,
        after: int | None = None,
        last_event_id: str | int | None = None,
        read_timeout: float | None = 60.0,
    ) -> AsyncEventStream:
        """The world's events from the start (or after ``after``/``last_event_id``), then live, over SSE.

        A broken connection is resumed with ``Last-Event-ID``: no event is lost or repeated. The server sends
        a keepalive every 15 s, so ``read_timeout`` (None: wait forever) detects a dead connection.
        """
        query = params(type=list(types) if types else None, npc_id=npc_id, after=after)
        resume = None if last_event_id is None else str(last_event_id)
        return AsyncEventStream(
            self, path("/v1/worlds/{}/events/stream", world_id), query, resume, read_timeout
        )
