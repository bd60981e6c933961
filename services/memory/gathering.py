"""Two phases for recording memories (DESIGN.md "Two phases per handler"): the slow calls first, outside any
transaction; the writes then, in a short one.

A dry run of the handlers, in transactions that are rolled back (one per NPC, a few NPCs at a time), finds
what each would rate and embed (``record_memories`` collects instead of recording while the rater is a
``DraftCollector``). The importance ratings (one LLM call per world and moment: a step's new memories of every
NPC, or per NPC and moment with a rater of one NPC at a time) and the embeddings (one model call) are then
computed with no transaction open, and the real run finds them in the ``PrefetchingRater`` and
``PrefetchingEmbedder`` caches. A handler that asks for something the dry run did not foresee still gets it,
on the spot.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import Envelope
from npcworld.embeddings import PrefetchingEmbedder
from npcworld.eventstore import EventStore, UnitOfWork
from npcworld.llm.prompts import MAX_BATCH_MEMORIES, MAX_MEMORIES
from services.memory.deps import MemoryDeps
from services.memory.domain import (
    ImportanceRater,
    ImportanceRaterOfMany,
    ImportanceRatings,
    RatingContext,
    shared_calls,
)
from services.memory.queuing import stream_written

__all__ = ["DRY_RUN_CONNECTIONS", "DraftCollector", "PrefetchingRater", "RatingRequest", "batches",
           "clear_prefetched", "dry_run", "gather_slow_calls", "prefetching"]

logger = logging.getLogger(__name__)

DRY_RUN_CONNECTIONS = 3  # NPCs whose dry runs read at once (the memory consumer's pool holds a few more)

Handler = Callable[[Envelope, UnitOfWork, MemoryDeps], Awaitable[None]]


@dataclass(frozen=True)
class RatingRequest:
    """One call a handler will make to the importance rater."""

    texts: tuple[str, ...]
    context: RatingContext


class DraftCollector:
    """The rater of a dry run: ``record_memories`` hands it its drafts' texts instead of recording them."""

    def __init__(self) -> None:
        self.requests: list[RatingRequest] = []
        self.texts: list[str] = []  # every text the handlers will embed (rated or not)

    def collect(self, texts: Sequence[str], context: RatingContext, *, unrated: Sequence[str]) -> None:
        """The drafts' ``texts`` will be embedded, and the ``unrated`` among them rated."""
        self.texts.extend(texts)
        if unrated:
            self.requests.append(RatingRequest(tuple(unrated), context))

    async def rate(self, descriptions: Sequence[str], context: RatingContext) -> ImportanceRatings:
        raise AssertionError("a dry run records nothing, so it rates nothing")


class PrefetchingRater:
    """Wraps a rater; ``rate`` answers prefetched requests from a cache that ``clear`` empties."""

    def __init__(self, inner: ImportanceRater, *, concurrency: int = 4) -> None:
        self.inner = inner
        self.concurrency = concurrency
        self._cache: dict[RatingRequest, ImportanceRatings] = {}

    async def prefetch(self, requests: Sequence[RatingRequest]) -> None:
        """Rate every request not cached yet: one batch per NPC and moment (the paper's per-step batch,
        each distinct text once), a few calls at a time. A rater of many NPCs at once rates the batches of
        one world and moment together (``shared_calls``): a step's new memories in one call, not one per
        NPC."""
        gate = asyncio.Semaphore(self.concurrency)
        pending = [(c, g, list(dict.fromkeys(t for r in g for t in r.texts)))
                   for c, g in batches(r for r in requests if r not in self._cache)]

        async def call(part: list[tuple[RatingContext, list[RatingRequest], list[str]]]) -> None:
            async with gate:
                if len(part) > 1 and isinstance(self.inner, ImportanceRaterOfMany):
                    rated = await self.inner.rate_many([(texts, c) for c, _, texts in part])
                else:
                    rated = [await self.inner.rate(texts, c) for c, _, texts in part]
            for (_, group, texts), ratings in zip(part, rated, strict=True):
                if len(ratings.scores) != len(texts):
                    continue  # left to the handler, which meets the mismatch where it is handled
                score = dict(zip(texts, ratings.scores, strict=True))
                for r in group:
                    self._cache[r] = ImportanceRatings(tuple(score[t] for t in r.texts), ratings.model)

        if isinstance(self.inner, ImportanceRaterOfMany):
            shared = shared_calls([(c, len(texts)) for c, _, texts in pending], per_npc=MAX_MEMORIES,
                                  per_call=MAX_BATCH_MEMORIES)
        else:
            shared = [[i] for i in range(len(pending))]
        await asyncio.gather(*(call([pending[i] for i in indexes]) for indexes in shared))

    async def rate(self, descriptions: Sequence[str], context: RatingContext) -> ImportanceRatings:
        cached = self._cache.get(RatingRequest(tuple(descriptions), context))
        return cached if cached is not None else await self.inner.rate(descriptions, context)

    def clear(self) -> None:
        self._cache.clear()


def batches(requests: Iterable[RatingRequest]) -> list[tuple[RatingContext, list[RatingRequest]]]:
    """Distinct requests grouped by whose memories they rate and when, in first-seen order (deterministic:
    the held writes of a step are gathered in their fixed release order)."""
    groups: dict[RatingContext, list[RatingRequest]] = {}
    for request in dict.fromkeys(requests):
        groups.setdefault(request.context, []).append(request)
    return list(groups.items())


async def dry_run(
    events: Sequence[Envelope], deps: MemoryDeps, pool: AsyncConnectionPool, handlers: Mapping[str, Handler],
    *, connections: int = DRY_RUN_CONNECTIONS,
) -> DraftCollector:
    """What the handlers of ``events`` would embed and rate, in their order; writes nothing.

    Each NPC's events run in a rolled-back transaction of their own, up to ``connections`` NPCs at a time: a
    run only reads (what it would write is rolled back), and its reads take a round trip each, which on a
    saturated machine costs several milliseconds, so a step's 25 NPCs read side by side rather than one after
    another. An NPC's events stay together and in order (a new NPC's stream, set up by one, is read by the
    next). What they collect is merged in the events' order, so the rating calls are the same as one run's.
    """
    runnable = [e for e in events if e.type in handlers and e.forked_from is None]
    collectors = [DraftCollector() for _ in runnable]
    by_npc: dict[object, list[int]] = {}
    for i, event in enumerate(runnable):
        by_npc.setdefault(stream_written(event) or (event.tenant_id, event.world_id), []).append(i)
    gate = asyncio.Semaphore(connections)
    store = EventStore()

    async def run(indexes: list[int]) -> None:
        async with gate, pool.connection() as conn, conn.transaction(force_rollback=True):
            for i in indexes:
                event = runnable[i]
                dry = dataclasses.replace(deps, rater=collectors[i])
                try:
                    async with conn.transaction():
                        await handlers[event.type](event, UnitOfWork(conn, store, cause=event), dry)
                except Exception:  # the real run meets the same error where it is handled (dead letters)
                    logger.debug("dry run of %s event_id=%s failed", event.type, event.event_id,
                                 exc_info=True)

    await asyncio.gather(*(run(indexes) for indexes in by_npc.values()))
    merged = DraftCollector()
    for collector in collectors:
        merged.requests += collector.requests
        merged.texts += collector.texts
    return merged


async def gather_slow_calls(
    events: Sequence[Envelope], deps: MemoryDeps, pool: AsyncConnectionPool, handlers: Mapping[str, Handler]
) -> int:
    """Compute, outside any transaction, the ratings and embeddings the handlers of ``events`` will ask for;
    returns how many rating calls were prefetched. Without prefetching ports there is nothing to do."""
    rater, embedder = deps.rater, deps.embedder
    if not isinstance(rater, PrefetchingRater) and not isinstance(embedder, PrefetchingEmbedder):
        return 0
    collected = await dry_run(events, deps, pool, handlers)
    requests = collected.requests
    # Embeddings first: offline importance embeds the same texts and finds them in the model's cache.
    if isinstance(embedder, PrefetchingEmbedder):
        await embedder.prefetch(collected.texts)
    if isinstance(rater, PrefetchingRater):
        await rater.prefetch(requests)
    return len(requests) if isinstance(rater, PrefetchingRater) else 0


def prefetching(deps: MemoryDeps) -> MemoryDeps:
    """``deps`` with caching rater and embedder (fresh caches) for one batch's prefetched calls."""
    embedder = deps.embedder.inner if isinstance(deps.embedder, PrefetchingEmbedder) else deps.embedder
    rater = deps.rater.inner if isinstance(deps.rater, PrefetchingRater) else deps.rater
    return dataclasses.replace(deps, embedder=PrefetchingEmbedder(embedder), rater=PrefetchingRater(rater))


def clear_prefetched(deps: MemoryDeps) -> None:
    """Drop what was prefetched for a batch that is now committed (or given up)."""
    if isinstance(deps.rater, PrefetchingRater):
        deps.rater.clear()
    if isinstance(deps.embedder, PrefetchingEmbedder):
        deps.embedder.clear()
