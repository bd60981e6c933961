"""Memory-stream events (npcworld.memory.v1, keyed by NPC; designers' edits on npcworld.memory-edits.v1)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from npcworld.contracts.base import EventPayload
from npcworld.contracts.topics import MEMORY, MEMORY_EDITS, Topic

__all__ = ["AccessCause", "MemoriesAccessed", "MemoryCorrected", "MemoryForgotten", "MemoryKind",
           "MemoryRecorded", "MemorySource", "Trust", "legacy_provenance"]

MemoryKind = Literal["observation", "reflection", "plan", "dialogue", "seed"]
# Where a memory came from: the NPC's own senses (and its own words), someone telling it, its own inference
# (reflections, plans), or the designer (seeds, inner voice). docs/studio-controls.md "Memory provenance".
MemorySource = Literal["perceived", "told", "inferred", "designer"]
# How far the NPC relies on a memory as fact: "low" (a player's uncorroborated claim) is never evidence for
# a reflection nor what a reaction goes on.
Trust = Literal["high", "medium", "low"]


def legacy_provenance(kind: str, subject: str | None) -> dict[str, Any]:
    """Provenance of a memory recorded before memories carried one (migration 0111 backfills the same): by
    kind, and a chat's memories (subject ``player <id>``) as that player's, held at low trust."""
    if subject and subject.startswith("player ") and kind in ("observation", "dialogue"):
        player = f"player:{subject.removeprefix('player ')}"
        told = kind == "observation"
        return {"source": "told" if told else "perceived", "told_by": player if told else None,
                "trust": "low"}
    source = {"seed": "designer", "reflection": "inferred", "plan": "inferred"}.get(kind, "perceived")
    return {"source": source, "told_by": None, "trust": "medium" if kind == "reflection" else "high"}


class MemoryRecorded(EventPayload):
    """A memory entered an NPC's memory stream, with its LLM-rated importance (1-10)."""

    event_type: ClassVar[str] = "MemoryRecorded"
    topic: ClassVar[Topic] = MEMORY

    memory_id: str
    kind: MemoryKind
    description: str = Field(min_length=1, max_length=4000)
    importance: int = Field(ge=1, le=10)
    created_at: datetime
    location: str | None = None
    subject: str | None = None
    evidence: tuple[str, ...] = ()
    depth: int = Field(default=0, ge=0)
    embedding_model: str | None = Field(
        default=None, description="the model that embedded it: named while the NPC's stream has none yet "
        "(its first memories); absent, the stream's")
    embedding_dimensions: int | None = Field(default=None, ge=1, description="with embedding_model")
    importance_model: str | None = None
    source: MemorySource = Field(default="perceived", description="absent in older events: by kind")
    told_by: str | None = Field(default=None, max_length=120, description="npc:<id> or player:<id> when told")
    trust: Trust = Field(default="high", description="absent in older events: by kind")

    @model_validator(mode="before")
    @classmethod
    def _provenance_of_older_events(cls, data: Any) -> Any:
        if isinstance(data, dict) and "source" not in data and "kind" in data:
            return {**legacy_provenance(str(data["kind"]), data.get("subject")), **data}
        return data


class AccessCause(BaseModel):
    """What one retrieval returned, best first: ``cause`` is the event being handled (``npcworld.cause``;
    None for a retrieval made outside any handling, e.g. an operator's in the console). ``query`` is left
    out when it is a player's words (a retrieval made for a player's line), which the log keeps only
    sealed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cause: uuid.UUID | None = None
    query: str | None = None
    memory_ids: tuple[str, ...] = Field(min_length=1)


class MemoriesAccessed(EventPayload):
    """Retrievals returned these memories; their last-access time moves to ``accessed_at``.

    One event carries an NPC's accesses of a step (stepped worlds) or of about a second (other worlds), not
    one per retrieval: ``retrievals`` says which handling retrieved which memories with which query (the
    why view). Older events hold a single retrieval: its ``query`` and, as the event's causation, its cause.
    """

    event_type: ClassVar[str] = "MemoriesAccessed"
    topic: ClassVar[Topic] = MEMORY

    memory_ids: tuple[str, ...] = Field(min_length=1)
    accessed_at: datetime
    query: str | None = Field(default=None, description="older events: the one retrieval's query")
    retrievals: tuple[AccessCause, ...] = ()


class MemoryCorrected(EventPayload):
    """A designer corrected a memory of the envelope's NPC: its description is now ``description``.

    The memory service re-embeds the new text; kind, importance, times and evidence stay as recorded.
    """

    event_type: ClassVar[str] = "MemoryCorrected"
    topic: ClassVar[Topic] = MEMORY_EDITS

    memory_id: str
    description: str = Field(min_length=1, max_length=4000)


class MemoryForgotten(EventPayload):
    """A designer removed a memory from the envelope's NPC: it is gone from retrieval and listings."""

    event_type: ClassVar[str] = "MemoryForgotten"
    topic: ClassVar[Topic] = MEMORY_EDITS

    memory_id: str
