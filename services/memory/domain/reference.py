"""Reference retrieval: scores every memory exactly as the formula says, in plain Python (the test oracle).

Deliberately naive (O(n * dims) per query, no index, no SQL) so production paths can be checked against it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from services.memory.domain.scoring import (
    Candidate,
    RetrievalWeights,
    ScoredMemory,
    StreamStats,
    score_candidates,
)

__all__ = ["cosine", "reference_top_k", "stream_stats"]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity in double precision (0 for a zero vector)."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norm if norm > 0 else 0.0


def stream_stats(candidates: Sequence[Candidate]) -> StreamStats:
    """Min and max of each raw component over a whole (non-empty) stream."""
    return StreamStats(
        importance_min=float(min(c.importance for c in candidates)),
        importance_max=float(max(c.importance for c in candidates)),
        accessed_min=min(c.last_accessed_at for c in candidates),
        accessed_max=max(c.last_accessed_at for c in candidates),
        relevance_min=min(c.relevance for c in candidates),
        relevance_max=max(c.relevance for c in candidates),
    )


def reference_top_k(
    memories: Sequence[tuple[str, int, datetime, Sequence[float]]],
    query: Sequence[float],
    now: datetime,
    k: int,
    weights: RetrievalWeights | None = None,
) -> list[ScoredMemory]:
    """Top ``k`` of a whole stream given as (memory_id, importance, last_accessed_at, embedding) tuples."""
    if not memories:
        return []
    candidates = [Candidate(mid, imp, accessed, cosine(vec, query)) for mid, imp, accessed, vec in memories]
    return score_candidates(candidates, stream_stats(candidates), now, weights or RetrievalWeights(), k)
