"""Event contracts: the envelope, one frozen payload model per event type, and the topic catalogue."""

from npcworld.contracts.base import EventPayload
from npcworld.contracts.dialogue import (
    Commitment,
    ConversationEnded,
    InnerVoiceGiven,
    NpcReplied,
    PlayerSpoke,
    RelationshipChanged,
    UtteranceSpoken,
)
from npcworld.contracts.envelope import Envelope, TraceContext
from npcworld.contracts.llm import LLMBudgetExhausted
from npcworld.contracts.memory import MemoriesAccessed, MemoryKind, MemoryRecorded
from npcworld.contracts.perception import ObservationMade, PlacesDiscovered
from npcworld.contracts.planning import (
    ActionDecided,
    ConversationRequested,
    DayPlanned,
    ObjectStateChange,
    PlanItem,
    PlanRevised,
)
from npcworld.contracts.reflection import (
    ReflectionCompleted,
    ReflectionFailed,
    ReflectionInsight,
    ReflectionTriggered,
)
from npcworld.contracts.registry import EVENT_TYPES, decode_envelope, envelope_from_dict
from npcworld.contracts.topics import ALL_TOPICS, DEAD_LETTER, RELAY_MARKER, Topic
from npcworld.contracts.world import (
    ActionStarted,
    ArenaDef,
    ClockChanged,
    NpcCreated,
    NpcMove,
    NpcsMoved,
    ObjectDef,
    ObjectStateChanged,
    SectorDef,
    StepCompleted,
    TileMap,
    WorldCreated,
    WorldDefined,
    WorldDeleted,
    WorldForked,
    WorldTicked,
)

__all__ = [
    "ALL_TOPICS",
    "DEAD_LETTER",
    "EVENT_TYPES",
    "RELAY_MARKER",
    "ActionDecided",
    "ActionStarted",
    "ArenaDef",
    "ClockChanged",
    "Commitment",
    "ConversationEnded",
    "ConversationRequested",
    "DayPlanned",
    "Envelope",
    "EventPayload",
    "InnerVoiceGiven",
    "LLMBudgetExhausted",
    "MemoriesAccessed",
    "MemoryKind",
    "MemoryRecorded",
    "NpcCreated",
    "NpcMove",
    "NpcReplied",
    "NpcsMoved",
    "ObjectDef",
    "ObjectStateChange",
    "ObjectStateChanged",
    "ObservationMade",
    "PlacesDiscovered",
    "PlanItem",
    "PlanRevised",
    "PlayerSpoke",
    "ReflectionCompleted",
    "ReflectionFailed",
    "ReflectionInsight",
    "ReflectionTriggered",
    "RelationshipChanged",
    "SectorDef",
    "StepCompleted",
    "TileMap",
    "Topic",
    "TraceContext",
    "UtteranceSpoken",
    "WorldCreated",
    "WorldDefined",
    "WorldDeleted",
    "WorldForked",
    "WorldTicked",
    "decode_envelope",
    "envelope_from_dict",
]
