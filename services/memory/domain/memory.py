"""The memory object of DESIGN.md "The agent model": description, kind, times, importance 1-10, evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from npcworld.contracts import MemoryKind
from services.memory.domain.provenance import PERCEIVED, Provenance

__all__ = ["Memory", "MemoryDraft", "NpcRef", "NpcStream", "access_stream_id", "memory_stream_id"]


@dataclass(frozen=True)
class NpcRef:
    """Which NPC a memory stream belongs to; every lookup is scoped by all three ids."""

    tenant_id: str
    world_id: str
    npc_id: str


@dataclass(frozen=True)
class NpcStream:
    """An NPC's memory stream as the memory service knows it.

    ``embedding_model``/``embedding_dims`` name the space every vector of the stream lives in
    (None until the first memory fixes it). ``own_index``: a large stream's HNSW index of its own is built.
    ``in_row_vectors``: its memories keep their vectors in their rows, for that index (set before it is
    built); otherwise a memory's vector is its world's for its text (``memory_vectors``, migration 0128).
    """

    key: int
    npc: NpcRef
    name: str | None
    persona: str
    embedding_model: str | None
    embedding_dims: int | None
    memory_count: int
    own_index: bool = False
    in_row_vectors: bool = False


@dataclass(frozen=True)
class MemoryDraft:
    """A memory about to be recorded: importance and embedding are not known yet."""

    kind: MemoryKind
    description: str
    created_at: datetime
    location: str | None = None
    subject: str | None = None
    evidence: tuple[str, ...] = ()
    depth: int = 0
    provenance: Provenance = PERCEIVED


@dataclass(frozen=True)
class Memory:
    """A recorded memory. ``last_accessed_at`` starts at ``created_at`` and moves forward on retrieval."""

    memory_id: str
    npc: NpcRef
    kind: MemoryKind
    description: str
    importance: int
    created_at: datetime
    last_accessed_at: datetime
    location: str | None = None
    subject: str | None = None
    evidence: tuple[str, ...] = field(default=())
    depth: int = 0
    provenance: Provenance = PERCEIVED


def memory_stream_id(npc: NpcRef) -> str:
    """The event-store stream holding one NPC's MemoryRecorded events."""
    return f"memory:{npc.world_id}:{npc.npc_id}"


def access_stream_id(npc: NpcRef) -> str:
    """The stream of one NPC's MemoriesAccessed events.

    Kept apart from the recording stream so a retrieval never races the consumer's appends for the
    same stream version (replay folds both in global sequence order, so nothing depends on it).
    """
    return f"memory-access:{npc.world_id}:{npc.npc_id}"
