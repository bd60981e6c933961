"""Event contracts: the envelope, one frozen payload model per event type, and the topic catalogue."""

from npcworld.contracts.base import EventPayload
from npcworld.contracts.envelope import Envelope, TraceContext
from npcworld.contracts.llm import LLMBudgetExhausted
from npcworld.contracts.memory import MemoriesAccessed, MemoryKind, MemoryRecorded
from npcworld.contracts.perception import ObservationMade, PlacesDiscovered
from npcworld.contracts.planning import ActionDecided, ObjectStateChange
from npcworld.contracts.registry import EVENT_TYPES, decode_envelope, envelope_from_dict
from npcworld.contracts.topics import ALL_TOPICS, DEAD_LETTER, RELAY_MARKER, Topic
from npcworld.contracts.world import NpcCreated, WorldCreated, WorldDeleted, WorldForked, WorldTicked

__all__ = [
    "ALL_TOPICS",
    "ActionDecided",
    "DEAD_LETTER",
    "EVENT_TYPES",
    "Envelope",
    "EventPayload",
    "LLMBudgetExhausted",
    "MemoriesAccessed",
    "MemoryKind",
    "MemoryRecorded",
    "NpcCreated",
    "ObjectStateChange",
    "ObservationMade",
    "PlacesDiscovered",
    "RELAY_MARKER",
    "Topic",
    "TraceContext",
    "WorldCreated",
    "WorldDeleted",
    "WorldForked",
    "WorldTicked",
    "decode_envelope",
    "envelope_from_dict",
]
