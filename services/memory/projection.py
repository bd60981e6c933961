"""Rebuilding memory streams from the event store, and re-embedding a stream with another model.

Vectors are not in the events (they would dwarf them); replay embeds descriptions again with the
configured embedder, which is deterministic, so one stream never holds two embedding spaces.
"""

from __future__ import annotations

from collections.abc import Sequence

from npcworld.contracts import Envelope, MemoriesAccessed, MemoryRecorded
from npcworld.embeddings import EmbeddingSpace
from services.memory.deps import MemoryDeps
from services.memory.domain import Memory, NpcRef
from services.memory.repository import Conn

__all__ = ["reembed_stream", "replay_memory_events"]

_BATCH = 256


async def replay_memory_events(conn: Conn, deps: MemoryDeps, events: Sequence[Envelope]) -> int:
    """Apply MemoryRecorded and MemoriesAccessed events in order (already-present memories are skipped).

    Returns:
        How many memories were inserted.
    """
    added = 0
    pending: list[tuple[Envelope, MemoryRecorded]] = []
    for event in events:
        if isinstance(event.payload, MemoryRecorded):
            pending.append((event, event.payload))
            if len(pending) >= _BATCH:
                added += await _insert(conn, deps, pending)
                pending = []
        elif isinstance(event.payload, MemoriesAccessed):
            added += await _insert(conn, deps, pending)
            pending = []
            stream = await deps.repository.ensure_npc(conn, _npc(event))
            await deps.repository.mark_accessed(
                conn, stream, event.payload.memory_ids, event.payload.accessed_at
            )
    return added + await _insert(conn, deps, pending)


def _npc(event: Envelope) -> NpcRef:
    if event.npc_id is None:
        raise ValueError(f"memory event {event.event_id} has no npc_id")
    return NpcRef(event.tenant_id, event.world_id, event.npc_id)


async def _insert(conn: Conn, deps: MemoryDeps, pending: list[tuple[Envelope, MemoryRecorded]]) -> int:
    added = 0
    for npc in dict.fromkeys(_npc(e) for e, _ in pending):
        items = [(e, p) for e, p in pending if _npc(e) == npc]
        stream = await deps.repository.ensure_npc(conn, npc)
        memories = [
            Memory(
                p.memory_id,
                npc,
                p.kind,
                p.description,
                p.importance,
                p.created_at,
                p.created_at,
                p.location,
                p.subject,
                p.evidence,
                p.depth,
            )
            for _, p in items
        ]
        vectors = await deps.embedder.embed([m.description for m in memories])
        for (event, _), memory, vector in zip(items, memories, vectors, strict=True):
            added += await deps.repository.add(
                conn,
                stream,
                [memory],
                vector[None, :],
                model=deps.embedder.model,
                source_event_id=event.event_id,
            )
    return added


async def reembed_stream(conn: Conn, deps: MemoryDeps, npc: NpcRef) -> int:
    """Re-embed every memory of the NPC with the configured embedder and move the stream to its space.

    Runs in the caller's transaction, so retrieval never sees a half-converted stream.

    Returns:
        How many memories were re-embedded.
    """
    stream = await deps.repository.get_npc(conn, npc)
    if stream is None:
        return 0
    memories = await deps.repository.all_memories(conn, stream)
    space = EmbeddingSpace.of(deps.embedder)
    for start in range(0, len(memories), _BATCH):
        batch = memories[start : start + _BATCH]
        vectors = await deps.embedder.embed([m.description for m in batch])
        await deps.repository.replace_embeddings(
            conn, stream, [m.memory_id for m in batch], vectors, space.model
        )
    await deps.repository.set_space(conn, stream, space.model, space.dimensions)
    return len(memories)
