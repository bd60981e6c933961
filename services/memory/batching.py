"""Embedding a consumer poll at once: the memory consumer prefetches every text its handlers will embed.

``EMBED_TEXTS`` says, per payload class, which texts the handler will embed (a handler whose event is not
listed still works: its texts are embedded on the spot). Copies made by a world fork are skipped: their
handlers do not run.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

from npcworld.contracts import (
    Envelope,
    EventPayload,
    NpcCreated,
    NpcReplied,
    ObservationMade,
    carries,
    decode_envelope,
)
from npcworld.embeddings import PrefetchingEmbedder
from npcworld.errors import PermanentError
from npcworld.lanes import current_lane, is_player_traffic
from npcworld.messaging import ConsumerLoop
from npcworld.yielding import unawaited
from services.memory.deps import MemoryDeps
from services.memory.domain import chat_memories, split_seed
from services.memory.gathering import clear_prefetched, gather_slow_calls, prefetching
from services.memory.queuing import queue_for_streams, stream_written
from services.memory.repository import Conn

__all__ = ["EMBED_TEXTS", "MemoryConsumerLoop", "prefetch_embeddings"]

logger = logging.getLogger(__name__)


P = TypeVar("P", bound=EventPayload)
Names = Mapping[tuple[str, str, str], str]  # (tenant, world, npc) → the name its stream has


def _observation(event: Envelope[ObservationMade], names: Names) -> list[str]:
    return [event.payload.description]


def _seed(event: Envelope[NpcCreated], names: Names) -> list[str]:
    return split_seed(event.payload.seed)


def _chat(event: Envelope[NpcReplied], names: Names) -> list[str]:
    replied = event.payload
    assert event.npc_id is not None
    name = names.get((event.tenant_id, event.world_id, event.npc_id))
    if replied.mode != "chat" or name is None:
        return []
    return [text for _, text in chat_memories(name, replied.player_id, replied.heard, replied.text)]


class _Texts(Generic[P]):
    """The texts one payload class's handler embeds (the class is checked once, here)."""

    def __init__(self, payload: type[P], texts: Callable[[Envelope[P], Names], list[str]]) -> None:
        self.payload, self.texts = payload, texts

    def __call__(self, event: Envelope, names: Names) -> list[str]:
        return self.texts(event, names) if carries(event, self.payload) else []


EMBED_TEXTS: dict[str, Callable[[Envelope, Names], list[str]]] = {
    t.payload.event_type: t
    for t in (_Texts(ObservationMade, _observation), _Texts(NpcCreated, _seed), _Texts(NpcReplied, _chat))
}
# Types whose texts include the NPC's name as its stream has it (read before prefetching).
_NAMED = {"NpcReplied"}


async def prefetch_embeddings(
    events: Iterable[Envelope], deps: MemoryDeps, names: Names | None = None
) -> int:
    """Embed the texts these events' handlers will need in one model call; returns how many texts."""
    if not isinstance(deps.embedder, PrefetchingEmbedder):
        return 0
    texts = [t for e in events if e.forked_from is None and e.type in EMBED_TEXTS
             for t in EMBED_TEXTS[e.type](e, names or {})]
    await deps.embedder.prefetch(texts)
    return len(texts)


# The deps of the batch being handled (its prefetched ratings and embeddings): a batch of player traffic is
# handled beside the world's (each in a task of its own), so each batch's caches are its own.
_BATCH_DEPS: ContextVar[MemoryDeps | None] = ContextVar("memory_batch_deps", default=None)


class MemoryConsumerLoop(ConsumerLoop[MemoryDeps]):
    """The one consumer loop; a poll's embeddings are computed in one call before its events are handled.

    Player traffic is handled beside the world's events, one batch at a time: ingest (perceptions studios
    post), whose model work runs on lowered threads (``npcworld.yielding``), and chats, whose memories no
    reply waits for (dialogue answers from what it retrieved). A step's events never wait here for either."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, beside=("ingest", "interactive"), **kwargs)

    @property
    def deps(self) -> MemoryDeps:
        return _BATCH_DEPS.get() or self._base_deps

    @deps.setter
    def deps(self, value: MemoryDeps) -> None:
        self._base_deps = value

    async def _process_batch(self, records: Sequence[Any], dead: Any) -> None:
        events = []
        for record in records:
            try:
                events.append(decode_envelope(record.value or b""))
            except PermanentError:
                continue  # the loop dead-letters it
        base = self._base_deps
        batch = prefetching(base)  # caches of this batch's own
        token = _BATCH_DEPS.set(batch)
        # A chat's memories are recorded after its reply went out: their model work yields the CPU as
        # ingest's does (``npcworld.yielding``).
        background = unawaited() if current_lane() == "interactive" else contextlib.nullcontext()
        try:
            with background:
                await self._prepare(events, batch)
            await super()._process_batch(list(records), dead)
        finally:
            clear_prefetched(batch)
            _BATCH_DEPS.reset(token)

    async def _prepare(self, events: list[Envelope], batch: MemoryDeps) -> None:
        """The batch's ratings and embeddings, made before its transaction into ``batch``'s caches."""
        try:
            # A route that gathers does its own slow calls (a step's release rates its held writes):
            # a dry run of it here would rate them a second time.
            gathering = self.routes.gathering()
            written = [e for e in await self._written_now(events) if e.type not in gathering]
            if batch.rate_before_transaction and written:
                # Ratings and embeddings, found by a dry run, made with no transaction open; the poll's
                # transaction then only writes (DESIGN.md "Two phases per handler").
                await gather_slow_calls(written, batch, self.pool, self.routes)
            else:
                await prefetch_embeddings(written, batch, await self._names(written))
        except Exception:  # only an optimisation: the handlers embed on the spot and meet the error there
            logger.warning("preparing %d events' slow calls failed", len(events), exc_info=True)

    async def _before_handlers(self, conn: Conn, events: list[Envelope]) -> None:
        """Queue for the memory streams the batch records into, in one order (``services.memory.queuing``);
        a stepped world's own events are held for its step's end (``services.memory.holding``): nothing to
        queue for."""
        events = [e for e in events if e.type in self.routes and stream_written(e) is not None]
        if not is_player_traffic() and events:
            worlds = sorted({(e.tenant_id, e.world_id) for e in events})
            stepped = await self._base_deps.repository.stepped_worlds(conn, worlds)
            events = [e for e in events if (e.tenant_id, e.world_id) not in stepped]
        await queue_for_streams(conn, events)

    async def _names(self, events: list[Envelope]) -> dict[tuple[str, str, str], str]:
        """The stream names (or ids) of the NPCs whose texts quote their name."""
        refs = sorted({(e.tenant_id, e.world_id, e.npc_id) for e in events if e.type in _NAMED and e.npc_id})
        if not refs:
            return {}
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT tenant_id, world_id, npc_id, coalesce(nullif(name, ''), npc_id) FROM memory_npcs"
                " WHERE (tenant_id, world_id, npc_id) IN"
                " (SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]))",
                ([r[0] for r in refs], [r[1] for r in refs], [r[2] for r in refs]),
            )
            return {(r[0], r[1], r[2]): r[3] for r in await cur.fetchall()}

    async def _written_now(self, events: list[Envelope]) -> list[Envelope]:
        """The events whose texts are embedded in this poll: stepped worlds hold theirs for the step's end,
        except player traffic's, which is written at once (``services.memory.holding``)."""
        if is_player_traffic():
            return events
        worlds = sorted({(e.tenant_id, e.world_id) for e in events if e.type in EMBED_TEXTS})
        async with self.pool.connection() as conn:
            stepped = await self.deps.repository.stepped_worlds(conn, worlds)
        return [e for e in events if (e.tenant_id, e.world_id) not in stepped]
