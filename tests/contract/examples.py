"""One valid payload per event type; a new event type must add its example here."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

T0 = datetime(2023, 2, 14, 17, 0, tzinfo=UTC)

EXAMPLES: dict[str, dict[str, Any]] = {
    "WorldCreated": {"name": "Brindle Hollow", "template": "brindle-hollow", "start_time": T0},
    "WorldForked": {"source_world_id": "w1", "at_world_time": T0, "copied_events": 12},
    "WorldDeleted": {},
    "NpcCreated": {"npc_id": "marta", "name": "Marta Quill", "age": 34, "traits": ("warm",),
                   "occupation": "cafe owner", "seed": "Marta runs the cafe; Marta plans a party",
                   "location": "Lantern Cafe"},
    "ObservationMade": {"description": "the stove is burning", "subject": "stove", "predicate": "is",
                        "object": "burning", "location": "Lantern Cafe:kitchen"},
    "MemoryRecorded": {"memory_id": "m1", "kind": "observation", "description": "the stove is burning",
                       "importance": 6, "created_at": T0, "embedding_model": "minilm-l6-v2-int8"},
    "MemoriesAccessed": {"memory_ids": ("m1", "m2"), "accessed_at": T0, "query": "the party"},
    "LLMBudgetExhausted": {"scope": "world", "limit_tokens": 1000, "used_tokens": 1002,
                           "prompt_kind": "importance"},
    "WorldTicked": {"step": 42, "step_seconds": 10.0},
    "PlacesDiscovered": {"paths": ("brindle-hollow:Lantern Cafe:kitchen",)},
    "ActionDecided": {"description": "brewing coffee for the morning rush", "emoji": "☕",
                      "location_path": "brindle-hollow:Lantern Cafe:kitchen", "start": T0, "duration_minutes": 15,
                      "object_state": {"object_path": "brindle-hollow:Lantern Cafe:kitchen:coffee machine",
                                       "state": "brewing coffee"}},
    "DayPlanned": {"day": T0.date(), "goals": ("run for mayor",),
                   "outline": ({"start": T0, "duration_minutes": 120, "description": "open the cafe",
                                "location_path": "brindle-hollow:Lantern Cafe:counter"},),
                   "items": ({"start": T0, "duration_minutes": 60, "description": "brew the morning coffee",
                              "location_path": "brindle-hollow:Lantern Cafe:kitchen"},),
                   "fallbacks": ("'the library' is not a known place; used brindle-hollow:Lantern Cafe:counter",)},
    "PlanRevised": {"from_time": T0, "reason": "saw the stove burning", "reaction_to": "e1",
                    "items": ({"start": T0, "duration_minutes": 15, "description": "put out the stove fire",
                               "location_path": "brindle-hollow:Lantern Cafe:kitchen:stove"},)},
    "ConversationRequested": {"target_npc_id": "sam", "reason": "invite Sam to the party", "reaction_to": "e1",
                              "location_path": "brindle-hollow:Lantern Cafe:counter"},
    "UtteranceSpoken": {"conversation_id": "c1", "listener_id": "sam", "turn": 1,
                        "text": "Sam! Come to my Valentine's party at the cafe at 5 pm?",
                        "location_path": "brindle-hollow:Lantern Cafe:counter"},
    "ConversationEnded": {"conversation_id": "c1", "participants": ("marta", "sam"), "turns": 4,
                          "summary": "Marta invited Sam to her party at the cafe; Sam agreed to come",
                          "commitments": ({"npc_id": "sam", "description": "go to Marta's party",
                                           "location_path": "brindle-hollow:Lantern Cafe:counter",
                                           "start": T0, "duration_minutes": 120},)},
    "RelationshipChanged": {"other_id": "sam", "familiarity": 3, "sentiment": 6.5},
    "PlayerSpoke": {"player_id": "p1", "text": "What are you up to today?"},
    "NpcReplied": {"player_id": "p1", "text": "Getting ready for the party tonight.",
                   "in_reply_to": "0190f0e0-0000-7000-8000-000000000000", "provider": "offline"},
    "InnerVoiceGiven": {"directive": "you will run for mayor"},
}
