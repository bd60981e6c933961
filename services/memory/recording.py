"""Recording memories: rate importance in one batched call, embed, store and emit MemoryRecorded."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from npcworld.contracts import Envelope, MemoryRecorded
from npcworld.embeddings import EmbeddingSpace, check_space
from npcworld.errors import TransientError
from npcworld.eventstore import UnitOfWork
from npcworld.ids import new_id
from services.memory.deps import MemoryDeps
from services.memory.domain import (
    ImportanceRatings,
    Memory,
    MemoryDraft,
    NpcStream,
    RatingContext,
    ablated_kinds,
    clamp_importance,
    idle_importance,
    is_duplicate,
    memory_stream_id,
    state_key,
)
from services.memory.gathering import DraftCollector
from services.memory.projection import apply_recorded_new, claim_own

__all__ = ["IDLE_RULE", "REUSED", "is_repeated_observation", "record_memories"]

# The importance_model of a memory whose rating is the NPC's earlier rating of the same state, and of an idle
# object's (rated without a model, as the paper's code does).
REUSED = "earlier-rating"
IDLE_RULE = "idle-rule"


async def is_repeated_observation(
    uow: UnitOfWork, deps: MemoryDeps, stream: NpcStream, draft: MemoryDraft
) -> bool:
    """Whether the NPC already stored this unchanged state recently (then it is not stored again)."""
    key = state_key(draft.description, draft.subject, draft.location)
    previous = await deps.repository.latest_observation(uow.conn, stream, key)
    window = timedelta(hours=deps.settings.duplicate_window_hours)
    return is_duplicate(draft.description, draft.created_at, previous, window)


async def record_memories(
    uow: UnitOfWork, deps: MemoryDeps, stream: NpcStream, drafts: Sequence[MemoryDraft], *, at: datetime
) -> list[Envelope[MemoryRecorded]]:
    """Append one MemoryRecorded per draft to the event store and fold it into the NPC's stream.

    Raises:
        EmbeddingSpaceMismatchError: the stream's vectors come from another embedding model.
        TransientError: the importance rater returned a different number of ratings than asked.
    """
    if not drafts:
        return []
    retired, ablations = await deps.repository.recording_bars(uow.conn, stream.npc)
    # A retired NPC remembers nothing new (what it remembered stays); an ablated world
    # (WorldCreated.ablations) records no memory of the ablated kinds.
    dropped = ablated_kinds(ablations) if ablations else frozenset()
    drafts = [d for d in drafts if d.kind not in dropped]
    if retired or not drafts:
        return []
    space = EmbeddingSpace.of(deps.embedder)
    stored = (
        EmbeddingSpace(stream.embedding_model, stream.embedding_dims or 0) if stream.embedding_model else None
    )
    check_space(stored, space, f"NPC {stream.npc.npc_id!r}")
    texts = [d.description for d in drafts]
    context = RatingContext(stream.npc, stream.name or stream.npc.npc_id, stream.persona, at)
    known = await _earlier_ratings(uow, deps, stream, drafts)
    unrated = [t for i, t in enumerate(texts) if i not in known]
    if isinstance(deps.rater, DraftCollector):  # a dry run (services/memory/gathering.py): nothing is written
        deps.rater.collect(texts, context, unrated=unrated)
        return []
    # Embedded before rating: offline importance embeds the same texts and finds them in the model's cache.
    vectors = await deps.embedder.embed(texts)
    ratings = await deps.rater.rate(unrated, context) if unrated else ImportanceRatings((), REUSED)
    if len(ratings.scores) != len(unrated):
        raise TransientError(
            f"importance rater returned {len(ratings.scores)} ratings for {len(unrated)} memories"
        )
    fresh = iter(ratings.scores)
    scores = [known[i][0] if i in known else next(fresh) for i in range(len(drafts))]
    models = [known[i][1] if i in known else ratings.model for i in range(len(drafts))]
    memories = [
        Memory(
            new_id(),
            stream.npc,
            d.kind,
            d.description,
            clamp_importance(score),
            d.created_at,
            d.created_at,
            d.location,
            d.subject,
            d.evidence,
            d.depth,
            d.provenance,
        )
        for d, score in zip(drafts, scores, strict=True)
    ]
    events = [
        uow.new_event(
            _recorded(m, None if stream.embedding_model else space, model),
            tenant_id=stream.npc.tenant_id,
            world_id=stream.npc.world_id,
            npc_id=stream.npc.npc_id,
            world_time=at,
        )
        for m, model in zip(memories, models, strict=True)
    ]
    # The memory service writes one NPC's memories from batches handled side by side (the world's, player
    # traffic's beside it, a step's release): they queue for the stream instead of racing for its version.
    stream_id = memory_stream_id(stream.npc)
    await uow.queue_for(stream.npc.tenant_id, stream_id)
    await uow.append(stream_id, events)
    # Folded here, with the vectors at hand, so the next handler of this transaction reads these rows.
    await apply_recorded_new(uow.conn, deps, stream, events, vectors, space.model)
    await claim_own(uow.conn, deps, events)
    return events


async def _earlier_ratings(
    uow: UnitOfWork, deps: MemoryDeps, stream: NpcStream, drafts: Sequence[MemoryDraft]
) -> dict[int, tuple[int, str]]:
    """Ratings known without a model call, by draft index: an idle object (the paper's code rates it 1), and
    a state the NPC stored and rated once (the rating is in that MemoryRecorded event) when it comes back."""
    known: dict[int, tuple[int, str]] = {}
    for i, d in enumerate(drafts):
        if (idle := idle_importance(d.kind, d.description)) is not None:
            known[i] = (idle, IDLE_RULE)
        elif d.kind == "observation":
            key = state_key(d.description, d.subject, d.location)
            earlier = await deps.repository.earlier_rating(uow.conn, stream, key, d.description)
            if earlier is not None:
                known[i] = (earlier, REUSED)
    return known


def _recorded(m: Memory, space: EmbeddingSpace | None, importance_model: str) -> MemoryRecorded:
    """The event of a new memory; ``space`` only while the stream has no embedding model yet (a stream keeps
    its first memory's: ``check_space``)."""
    return MemoryRecorded(
        memory_id=m.memory_id,
        kind=m.kind,
        description=m.description,
        importance=m.importance,
        created_at=m.created_at,
        location=m.location,
        subject=m.subject,
        evidence=m.evidence,
        depth=m.depth,
        embedding_model=space.model if space else None,
        embedding_dimensions=space.dimensions if space else None,
        importance_model=importance_model,
        source=m.provenance.source,
        told_by=m.provenance.told_by,
        trust=m.provenance.trust,
    )
