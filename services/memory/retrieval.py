"""Retrieval as a service call: validate, embed the query, rank the stream, note the access.

Small streams are ranked exactly in SQL. Large ones take the top-C by relevance from the stream's own HNSW
index (an exact sort until the upkeep has built it), then only those memories whose importance + recency
could still beat the k-th best (Fagin's threshold algorithm: one index range per importance level), and
score the union.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from npcworld.cause import Cause
from npcworld.embeddings import EmbeddingSpace, check_space
from npcworld.errors import NotFoundError, ValidationError
from npcworld.lanes import is_player_traffic
from services.memory.deps import MemoryDeps
from services.memory.domain import (
    Memory,
    NpcRef,
    NpcStream,
    RetrievalWeights,
    ScoredMemory,
    StreamStats,
    prior_thresholds,
    relevance_bound,
    score_candidates,
)
from services.memory.repository import Conn, IndexCandidates, ScoreFloor, SearchPlan

__all__ = ["MAX_K", "MAX_QUERY_LENGTH", "RetrievedMemory", "rank", "retrieve"]

MAX_K = 100
MAX_QUERY_LENGTH = 2000


@dataclass(frozen=True)
class RetrievedMemory:
    """A memory and why it was retrieved (normalised recency, importance, relevance and the score)."""

    memory: Memory
    scores: ScoredMemory


def _validate(query: str, k: int, weights: RetrievalWeights) -> None:
    if not query.strip():
        raise ValidationError("query must not be empty", field="query")
    if len(query) > MAX_QUERY_LENGTH:
        raise ValidationError(f"query must be at most {MAX_QUERY_LENGTH} characters", field="query")
    if not 1 <= k <= MAX_K:
        raise ValidationError(f"k must be between 1 and {MAX_K}, got {k}", field="k")
    for name in ("recency", "importance", "relevance"):
        value = getattr(weights, name)
        if not (math.isfinite(value) and 0 <= value <= 100):
            raise ValidationError(
                f"weight {name} must be between 0 and 100, got {value}", field=f"weights.{name}"
            )


async def retrieve(
    conn: Conn,
    deps: MemoryDeps,
    npc: NpcRef,
    query: str,
    *,
    k: int,
    now: datetime,
    weights: RetrievalWeights | None = None,
    vector: npt.NDArray[np.float32] | None = None,
    cause: Cause | None = None,
) -> list[RetrievedMemory]:
    """The NPC's top-``k`` memories for ``query`` at world time ``now``; notes them accessed.

    ``vector`` is the query's embedding when the caller computed it already (the API does, before it
    takes a database connection, so connections are not held while the model runs). ``cause``: the event
    the caller was handling (``npcworld.cause``), which the why view finds the retrieval by.

    The access is noted, not appended: the memory service turns an NPC's noted accesses into one
    MemoriesAccessed event at the step's end or within about a second (``services.memory.accesses``), so
    replaying the event store reproduces every last-access time without an event per retrieval.

    Raises:
        ValidationError: empty or over-long query, ``k`` outside 1..100, or a bad weight (see ``field``).
        NotFoundError: the NPC is unknown to the memory service in this tenant and world.
        EmbeddingSpaceMismatchError: the stream was embedded with another model than the one configured.
    """
    weights = weights or RetrievalWeights()
    _validate(query, k, weights)
    stream = await deps.repository.get_npc(conn, npc)
    if stream is None:
        raise NotFoundError(f"NPC {npc.npc_id!r} not found in world {npc.world_id!r}")
    if stream.memory_count == 0:
        return []
    space = EmbeddingSpace(stream.embedding_model or "", stream.embedding_dims or 0)
    check_space(space, EmbeddingSpace.of(deps.embedder), f"NPC {npc.npc_id!r}")
    if vector is None:
        vector = (await deps.embedder.embed([query]))[0]
    scored = await rank(conn, deps, stream, vector, now=now, weights=weights, k=k)
    if not scored:
        return []
    ids = [s.memory_id for s in scored]
    memories = await deps.repository.get_many(conn, stream, ids)
    await deps.repository.note_accesses(conn, npc, query, ids, now, cause.event_id if cause else None,
                                        held=not is_player_traffic())
    return [RetrievedMemory(memories[s.memory_id], s) for s in scored]


async def rank(
    conn: Conn,
    deps: MemoryDeps,
    stream: NpcStream,
    query: npt.NDArray[np.float32],
    *,
    now: datetime,
    weights: RetrievalWeights,
    k: int,
) -> list[ScoredMemory]:
    """Top-``k`` of the stream for a query vector: exact SQL for small streams, index-backed for large."""
    if stream.memory_count <= deps.settings.exact_scan_max:
        return await deps.repository.exact_top_k(conn, stream, query, now, weights, k)
    return await _threshold_top_k(conn, deps, stream, query, now=now, weights=weights, k=k)


async def _threshold_top_k(
    conn: Conn,
    deps: MemoryDeps,
    stream: NpcStream,
    query: npt.NDArray[np.float32],
    *,
    now: datetime,
    weights: RetrievalWeights,
    k: int,
) -> list[ScoredMemory]:
    repo, cfg = deps.repository, deps.settings
    size = max(cfg.candidate_pool, 2 * k)
    plan = SearchPlan(size, cfg.hnsw_ef_search, cfg.farthest_ef_search, cfg.prior_pool, weights, now)
    found = await repo.index_candidates(conn, stream, query, plan)
    return await _threshold(conn, deps, stream, query, found, plan, k)


async def _threshold(
    conn: Conn,
    deps: MemoryDeps,
    stream: NpcStream,
    query: npt.NDArray[np.float32],
    found: IndexCandidates,
    plan: SearchPlan,
    k: int,
) -> list[ScoredMemory]:
    now, weights, relevant = plan.now, plan.weights, found.relevant
    relevances = [c.relevance for c in [*relevant, *found.farthest]]
    imp_lo, imp_hi, acc_lo, acc_hi = found.ranges
    stats = StreamStats(float(imp_lo), float(imp_hi), acc_lo, acc_hi, min(relevances), max(relevances))
    if len(relevant) < plan.limit:  # the index ran out of rows: the list is the whole stream
        await deps.repository.restore_settings(conn, found.enable_sort)
        return score_candidates(relevant, stats, now, weights, k)
    seen = {c.memory_id for c in relevant}
    candidates = [*relevant, *(c for c in found.by_prior if c.memory_id not in seen)]
    top = score_candidates(candidates, stats, now, weights, k)
    # Fagin's threshold: a memory outside the relevance list is at most as relevant as its last entry, so
    # it can only beat the k-th best with a prior of at least this; those are a few index ranges.
    floor = top[-1].score if len(top) == k else -math.inf
    needed = floor - relevance_bound(relevant[-1].relevance, stats, weights)
    since = prior_thresholds(stats, now, weights, needed)
    exclude = tuple(c.memory_id for c in candidates)
    bounds = ScoreFloor(floor, now, stats, weights, exclude, deps.settings.range_cap)
    more = await deps.repository.prior_candidates(conn, stream, query, since, bounds, found.enable_sort)
    if not more:
        return top
    # Only the current top-k and the memories that reach its floor can end up in the top-k.
    best = {s.memory_id for s in top}
    return score_candidates([*(c for c in candidates if c.memory_id in best), *more], stats, now, weights, k)
