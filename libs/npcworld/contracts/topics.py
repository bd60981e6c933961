"""The topic catalogue: every Kafka topic, how it is keyed, who produces and who consumes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ALL_TOPICS", "DEAD_LETTER", "DIALOGUE", "MEMORY", "MEMORY_EDITS", "PERCEPTION", "PLANNING",
           "REFLECTION", "RELAY_MARKER", "WORLD", "Topic"]


@dataclass(frozen=True)
class Topic:
    """One topic of the catalogue."""

    name: str
    key: Literal["world_id", "npc_id", "none"]
    partitions: int
    producers: tuple[str, ...]
    consumers: tuple[str, ...]
    description: str


WORLD = Topic(
    "npcworld.world.v1", "world_id", 6, ("gateway", "world_state"),
    ("world_state", "perception", "memory", "reflection", "planning", "dialogue", "gateway"),
    "World lifecycle, NPC creation, clock, object states and movement; keyed by world so world order holds.",
)
PERCEPTION = Topic(
    "npcworld.perception.v1", "npc_id", 12, ("perception", "gateway"),
    ("perception", "memory", "planning", "dialogue", "gateway"),
    "What each NPC perceived; keyed by NPC so per-NPC order holds.",
)
MEMORY = Topic(
    "npcworld.memory.v1", "npc_id", 12, ("memory",), ("reflection",),
    "Memories recorded and accessed in each NPC's memory stream (the memory service folds its own events "
    "where it appends them and does not read this topic; a fork's copies it folds with the fork's "
    "WorldForked).",
)
MEMORY_EDITS = Topic(
    "npcworld.memory-edits.v1", "npc_id", 3, ("gateway",), ("memory",),
    "Designers' corrections and removals of memories.",
)
REFLECTION = Topic(
    "npcworld.reflection.v1", "npc_id", 12, ("reflection",), ("memory", "reflection"),
    "Reflection runs triggered, completed (with the insights) or failed.",
)
PLANNING = Topic(
    "npcworld.planning.v1", "npc_id", 12, ("planning",), ("world_state", "memory", "dialogue", "gateway"),
    "Day plans, decomposition and decided actions.",
)
DIALOGUE = Topic(
    "npcworld.dialogue.v1", "npc_id", 12, ("dialogue", "gateway"),
    ("memory", "planning", "dialogue", "gateway"),
    "Conversations, utterances, player chat and relationship changes.",
)
DEAD_LETTER = Topic(
    "npcworld.deadletter.v1", "none", 1, ("every consumer",), ("ops",),
    "Events a consumer could not process, with the reason and the original headers.",
)
RELAY_MARKER = Topic(
    "npcworld.relay-marker.v1", "none", 1, ("relay",), ("relay",),
    "Written once per broker by the relay; an empty marker means the broker lost its data (republish).",
)

ALL_TOPICS: tuple[Topic, ...] = (
    WORLD, PERCEPTION, MEMORY, MEMORY_EDITS, REFLECTION, PLANNING, DIALOGUE, DEAD_LETTER, RELAY_MARKER,
)
