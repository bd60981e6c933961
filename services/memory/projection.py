"""The memory projection: memory streams folded from events (forks, ``npcworld replay --service memory``).

Appliers only write memory tables. Vectors are not in the events (they would dwarf them): a memory's vector
is copied from any stream that already holds it (a fork's source, or the tables as they were before a
replay), otherwise the description is embedded again with the configured embedder, which is deterministic.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from psycopg import AsyncConnection

from npcworld.contracts import (
    ClockChanged,
    Envelope,
    MemoriesAccessed,
    MemoryCorrected,
    MemoryForgotten,
    MemoryRecorded,
    NpcCreated,
    NpcPersonaChanged,
    NpcRetired,
    StepCompleted,
    WorldDeleted,
    WorldForked,
    carries,
)
from npcworld.contracts.players import PlayerForgotten
from npcworld.embeddings import EmbeddingSpace, check_space
from npcworld.errors import PermanentError
from npcworld.fork import inherited_events
from npcworld.projection import Applier, Appliers, Projection, applier, claim
from npcworld.shredding import FORGOTTEN
from npcworld.stepping import steps
from services.memory.deps import MemoryDeps
from services.memory.domain import (
    ImportanceRatings,
    Memory,
    NpcRef,
    NpcStream,
    Provenance,
    RatingContext,
    persona_summary,
    state_key,
)
from services.memory.repository import Conn, PlayerMemories

__all__ = ["TABLES", "NoImportanceRater", "apply_accessed", "apply_corrected", "apply_forgotten",
           "apply_held_accesses", "apply_or_hold_accessed", "apply_recorded", "apply_recorded_new",
           "build_projection", "claim_own", "fold_fork_copies", "reembed_stream", "replay_memory_events"]

logger = logging.getLogger(__name__)
TABLES = ("memory_npcs", "memories", "memory_access", "memory_clocks", "memory_forgotten", "memory_retired")
_BATCH = 256


class NoImportanceRater:
    """Replay and forks copy importance from the events: a projection never asks for a rating."""

    async def rate(self, descriptions: Sequence[str], context: RatingContext) -> ImportanceRatings:
        raise PermanentError("the memory projection does not rate importance")


def build_projection(deps: MemoryDeps, consumer: str = "memory") -> Projection:
    """The memory read model's appliers, bound to the embedder they fall back on.

    The memory service folds its own events (MemoryRecorded, MemoriesAccessed) itself, one call at a time
    where it appends them (``record_memories`` with the vector it just computed, ``flush_accesses``), and
    claims them for its consumer there (``claim_own``), so a handler later in the same transaction reads
    them; its consumer does not read them back (``appended_only``; the loop's ``fold_on_append`` is off).
    A fork's inherited memory events are folded, in store order, when the fork's WorldForked arrives
    (``Projection.inherited``; an older fork's copies likewise, ``fold_fork_copies``): an inherited correction
    then always finds the memory it corrects. Designers' edits
    arrive through the consumer (topic npcworld.memory-edits.v1). A rebuild folds the same claimed events
    through the same appliers, so it equals the live read model row for row.
    """
    async def keep_derived(conn: AsyncConnection[Any]) -> None:
        """Before a rebuild: keep per-stream index flags (derived data, not in the events), and drop the held
        last accesses, which the fold holds again from their claimed events. Vectors stay where they are:
        ``memory_vectors`` is not rebuilt, and the fold finds each text's vector there."""
        await deps.repository.keep_own_indexes(conn)
        await deps.repository.drop_held_accesses(conn)

    async def restore_derived(conn: AsyncConnection[Any]) -> None:
        await deps.repository.restore_own_indexes(conn)

    async def recorded(event: Envelope[MemoryRecorded], conn: AsyncConnection[Any]) -> None:
        if event.forked_from is None:  # a fork's copies: with its WorldForked
            await apply_recorded(conn, deps, event)

    async def accessed(event: Envelope[MemoriesAccessed], conn: AsyncConnection[Any]) -> None:
        if event.forked_from is None:
            await apply_or_hold_accessed(conn, deps, event)

    async def forked(event: Envelope[WorldForked], conn: AsyncConnection[Any]) -> None:
        await fold_fork_copies(conn, event, copies, consumer)

    async def clock_changed(event: Envelope[ClockChanged], conn: AsyncConnection[Any]) -> None:
        clock = event.payload
        stepped = steps(clock)
        await deps.repository.set_stepped(conn, event.tenant_id, event.world_id, stepped)
        if not stepped:
            await apply_held_accesses(conn, deps, event)

    async def step_completed(event: Envelope, conn: AsyncConnection[Any]) -> None:
        await apply_held_accesses(conn, deps, event)

    async def npc_created(
        event: Envelope[NpcCreated | NpcPersonaChanged], conn: AsyncConnection[Any]
    ) -> None:
        created = event.payload
        persona = persona_summary(created.name, created.age, created.traits, created.occupation)
        npc = NpcRef(event.tenant_id, event.world_id, created.npc_id)
        await deps.repository.ensure_npc(conn, npc, name=created.name, persona=persona)

    async def corrected(event: Envelope[MemoryCorrected], conn: AsyncConnection[Any]) -> None:
        if event.forked_from is None:
            await apply_corrected(conn, deps, event)

    async def forgotten(event: Envelope[MemoryForgotten], conn: AsyncConnection[Any]) -> None:
        if event.forked_from is None:
            await apply_forgotten(conn, deps, event)

    async def recorded_copy(event: Envelope[MemoryRecorded], conn: AsyncConnection[Any]) -> None:
        await apply_recorded(conn, deps, event)

    async def accessed_copy(event: Envelope[MemoriesAccessed], conn: AsyncConnection[Any]) -> None:
        await apply_or_hold_accessed(conn, deps, event)

    async def corrected_copy(event: Envelope[MemoryCorrected], conn: AsyncConnection[Any]) -> None:
        await apply_corrected(conn, deps, event)

    async def forgotten_copy(event: Envelope[MemoryForgotten], conn: AsyncConnection[Any]) -> None:
        await apply_forgotten(conn, deps, event)

    # How a fork's inherited events (and an older fork's copies) are folded: all four types, in store order,
    # whichever topic they are on.
    copies = Appliers(applier(MemoryRecorded, recorded_copy), applier(MemoriesAccessed, accessed_copy),
                      applier(MemoryCorrected, corrected_copy), applier(MemoryForgotten, forgotten_copy))

    async def npc_retired(event: Envelope[NpcRetired], conn: AsyncConnection[Any]) -> None:
        p = event.payload
        await deps.repository.retire(conn, NpcRef(event.tenant_id, event.world_id, p.npc_id))

    async def world_deleted(event: Envelope, conn: AsyncConnection[Any]) -> None:
        await deps.repository.delete_world(conn, event.tenant_id, event.world_id)

    async def player_forgotten(event: Envelope[PlayerForgotten], conn: AsyncConnection[Any]) -> None:
        p = event.payload
        await PlayerMemories().forget_player(conn, event.tenant_id, event.world_id, p.player_id)

    return Projection(
        consumer,
        TABLES,
        Appliers(
            applier(NpcCreated, npc_created), applier(MemoryRecorded, recorded),
            applier(MemoriesAccessed, accessed), applier(WorldDeleted, world_deleted),
            applier(ClockChanged, clock_changed), applier(StepCompleted, step_completed),
            applier(NpcPersonaChanged, npc_created), applier(MemoryCorrected, corrected),
            applier(MemoryForgotten, forgotten), applier(PlayerForgotten, player_forgotten),
            applier(NpcRetired, npc_retired), applier(WorldForked, forked),
        ),
        prepare=keep_derived,
        finish=restore_derived,
        fold_on_append=False,
        appended_only=frozenset({"MemoryRecorded", "MemoriesAccessed"}),
        inherited=copies,
    )


def _npc(event: Envelope) -> NpcRef:
    if event.npc_id is None:
        raise ValueError(f"memory event {event.event_id} has no npc_id")
    return NpcRef(event.tenant_id, event.world_id, event.npc_id)


async def apply_recorded(conn: Conn, deps: MemoryDeps, event: Envelope[MemoryRecorded]) -> int:
    """Insert the recorded memory unless the stream has it (a fork's copy, a replay); returns 1 when new."""
    p = event.payload
    npc = _npc(event)
    stream = await deps.repository.get_npc(conn, npc) or await deps.repository.ensure_npc(conn, npc)
    if await deps.repository.existing_ids(conn, stream, [p.memory_id]):
        return 0
    if await deps.repository.forgotten(conn, stream, [p.memory_id]):
        return 0  # removed by a designer before this event came back to the consumer
    if p.description == FORGOTTEN:
        return 0  # a forgotten player's chat (its key is erased): a rebuild leaves it out, as live did
    memory = _memory(npc, p)
    model = stream.embedding_model or p.embedding_model or deps.embedder.model
    vector = await deps.repository.stored_vector(conn, npc, model, p.memory_id, p.description)
    if vector is not None:
        vectors = vector[None, :]
    else:
        stored = EmbeddingSpace(model, stream.embedding_dims or 0) if stream.embedding_model else None
        check_space(stored, EmbeddingSpace.of(deps.embedder), f"NPC {npc.npc_id!r}")
        model, vectors = deps.embedder.model, await deps.embedder.embed([p.description])
    # The source is the event the memory was recorded for (its cause), as for a new memory.
    source = event.causation_id or uuid.UUID(int=0)
    return await deps.repository.add(conn, stream, [memory], vectors, model=model, source_event_id=source)


async def apply_recorded_new(
    conn: Conn, deps: MemoryDeps, stream: NpcStream, events: Sequence[Envelope[MemoryRecorded]],
    vectors: npt.NDArray[np.float32], model: str,
) -> None:
    """Fold MemoryRecorded events of new memories of one stream and one cause, whose vectors the recording
    reaction has at hand (one row of ``vectors`` per event): the rows ``apply_recorded`` would write."""
    if not events:
        return
    memories = [_memory(stream.npc, event.payload) for event in events]
    source = events[0].causation_id or uuid.UUID(int=0)
    await deps.repository.add(conn, stream, memories, vectors, model=model, source_event_id=source)


def _memory(npc: NpcRef, p: MemoryRecorded) -> Memory:
    return Memory(p.memory_id, npc, p.kind, p.description, p.importance, p.created_at, p.created_at,
                  p.location, p.subject, p.evidence, p.depth, Provenance(p.source, p.told_by, p.trust))


async def claim_own(conn: Conn, deps: MemoryDeps, events: Sequence[Envelope]) -> None:
    """Claim events the memory service folded where it appended them, for its consumer."""
    await claim(conn, deps.consumer, events)


async def apply_corrected(conn: Conn, deps: MemoryDeps, event: Envelope[MemoryCorrected]) -> None:
    """A designer's correction: the new text and its vector (embedded here, in the stream's space)."""
    p = event.payload
    stream = await deps.repository.get_npc(conn, _npc(event))
    found = await deps.repository.get_many(conn, stream, [p.memory_id]) if stream else {}
    if stream is None or p.memory_id not in found:
        logger.info("correction %s of a memory the stream lacks: nothing to correct", event.event_id)
        return
    stored = EmbeddingSpace(stream.embedding_model, stream.embedding_dims or 0) if stream.embedding_model \
        else None
    check_space(stored, EmbeddingSpace.of(deps.embedder), f"NPC {stream.npc.npc_id!r}")
    memory = found[p.memory_id]
    key = state_key(p.description, memory.subject, memory.location) if memory.kind == "observation" else None
    vectors = await deps.embedder.embed([p.description])
    await deps.repository.correct(conn, stream, p.memory_id, p.description, key, vectors[0])


async def apply_accessed(conn: Conn, deps: MemoryDeps, event: Envelope[MemoriesAccessed]) -> None:
    """Move the accessed memories' last access forward (never back)."""
    p = event.payload
    npc = _npc(event)
    stream = await deps.repository.get_npc(conn, npc) or await deps.repository.ensure_npc(conn, npc)
    await deps.repository.mark_accessed(conn, stream, p.memory_ids, p.accessed_at)


async def apply_or_hold_accessed(conn: Conn, deps: MemoryDeps, event: Envelope[MemoriesAccessed]) -> None:
    """Apply a MemoriesAccessed. One of an older log (a single retrieval's, with its ``query``) in a
    stepped world waits for the step's end, as it did when it was made; batched ones are appended at the
    step's end already."""
    p = event.payload
    if p.query is not None and not p.retrievals and await deps.repository.is_stepped(
            conn, event.tenant_id, event.world_id):
        await deps.repository.hold(conn, event)
    else:
        await apply_accessed(conn, deps, event)


async def apply_forgotten(conn: Conn, deps: MemoryDeps, event: Envelope[MemoryForgotten]) -> None:
    """A designer removed a memory from the NPC's stream."""
    p = event.payload
    npc = _npc(event)
    stream = await deps.repository.get_npc(conn, npc) or await deps.repository.ensure_npc(conn, npc)
    await deps.repository.forget(conn, stream, p.memory_id)


async def fold_fork_copies(
    conn: Conn, forked: Envelope[WorldForked], appliers: Mapping[str, Applier], consumer: str
) -> int:
    """Fold an older fork's copies of memory events (its WorldForked closes the copy, so they are all stored)
    in store order, and claim them for ``consumer``; returns how many. Idempotent, so a rebuild, which
    meets the WorldForked again, folds them again to the same rows."""
    if forked.payload.inherited_until_seq is not None:
        return 0  # a fork that inherits its history (Projection.inherited folds it)
    copies = await inherited_events(conn, forked, tuple(appliers))
    for copy in copies:
        await appliers[copy.type](copy, conn)
    await claim(conn, consumer, copies)
    return len(copies)


async def apply_held_accesses(conn: Conn, deps: MemoryDeps, event: Envelope) -> None:
    """Apply the world's accesses held back during a step by earlier versions, which held each retrieval's
    MemoriesAccessed event (order is irrelevant: access only moves forward)."""
    for held in await deps.repository.take_held(conn, event.tenant_id, event.world_id, accesses=True):
        if carries(held, MemoriesAccessed):
            await apply_accessed(conn, deps, held)


async def replay_memory_events(conn: Conn, deps: MemoryDeps, events: Sequence[Envelope]) -> int:
    """Apply MemoryRecorded and MemoriesAccessed events in order (already-present memories are skipped).

    Returns:
        How many memories were inserted.
    """
    added = 0
    for event in events:
        if carries(event, MemoryRecorded):
            added += await apply_recorded(conn, deps, event)
        elif carries(event, MemoriesAccessed):
            await apply_accessed(conn, deps, event)
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
