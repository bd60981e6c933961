"""Pure memory-stream logic: the memory object, retrieval scoring, duplicate suppression and seeds."""

from services.memory.domain.ablations import ablated_kinds
from services.memory.domain.chat import chat_memories
from services.memory.domain.importance import (
    ImportanceRater,
    ImportanceRaterOfMany,
    ImportanceRatings,
    RatingContext,
    clamp_importance,
    idle_importance,
    shared_calls,
)
from services.memory.domain.memory import (
    Memory,
    MemoryDraft,
    NpcRef,
    NpcStream,
    access_stream_id,
    memory_stream_id,
)
from services.memory.domain.observations import (
    PreviousObservation,
    is_duplicate,
    normalise_description,
    state_key,
)
from services.memory.domain.provenance import (
    DESIGNER,
    INFERRED,
    PERCEIVED,
    PLANNED,
    Provenance,
    corroborated,
    told_by_npc,
    told_by_player,
)
from services.memory.domain.reference import cosine, reference_top_k, stream_stats
from services.memory.domain.scoring import (
    Candidate,
    RetrievalWeights,
    ScoredMemory,
    StreamStats,
    prior,
    prior_thresholds,
    recency,
    relevance_bound,
    score_candidates,
)
from services.memory.domain.seeds import persona_summary, split_seed

__all__ = [
    "DESIGNER",
    "INFERRED",
    "PERCEIVED",
    "PLANNED",
    "Candidate",
    "ImportanceRater",
    "ImportanceRaterOfMany",
    "ImportanceRatings",
    "Memory",
    "MemoryDraft",
    "NpcRef",
    "NpcStream",
    "PreviousObservation",
    "Provenance",
    "RatingContext",
    "RetrievalWeights",
    "ScoredMemory",
    "StreamStats",
    "ablated_kinds",
    "access_stream_id",
    "chat_memories",
    "clamp_importance",
    "corroborated",
    "cosine",
    "idle_importance",
    "is_duplicate",
    "memory_stream_id",
    "normalise_description",
    "persona_summary",
    "prior",
    "prior_thresholds",
    "recency",
    "reference_top_k",
    "relevance_bound",
    "score_candidates",
    "shared_calls",
    "split_seed",
    "state_key",
    "stream_stats",
    "told_by_npc",
    "told_by_player",
]
