"""Retrieval scoring (DESIGN.md "The agent model"): a_rec*recency + a_imp*importance + a_rel*relevance.

Recency decays by 0.995 per world hour since last access; relevance is cosine similarity; each
component is min-max normalised to [0, 1] over the NPC's whole stream (a constant component scores 0.5,
as the paper's code does); weights default to 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

__all__ = [
    "RECENCY_DECAY_PER_HOUR",
    "Candidate",
    "RetrievalWeights",
    "ScoredMemory",
    "StreamStats",
    "prior",
    "prior_thresholds",
    "recency",
    "relevance_bound",
    "score_candidates",
]

RECENCY_DECAY_PER_HOUR = 0.995


@dataclass(frozen=True)
class RetrievalWeights:
    """The a_rec, a_imp and a_rel weights; the paper uses 1 for each."""

    recency: float = 1.0
    importance: float = 1.0
    relevance: float = 1.0


@dataclass(frozen=True)
class Candidate:
    """What scoring needs from one memory: its importance, last access and cosine to the query."""

    memory_id: str
    importance: int
    last_accessed_at: datetime
    relevance: float


@dataclass(frozen=True)
class StreamStats:
    """Minimum and maximum of each raw component over the NPC's whole stream."""

    importance_min: float
    importance_max: float
    accessed_min: datetime
    accessed_max: datetime
    relevance_min: float
    relevance_max: float


@dataclass(frozen=True)
class ScoredMemory:
    """One retrieved memory with its normalised components (for debugging) and weighted score."""

    memory_id: str
    score: float
    recency: float
    importance: float
    relevance: float


def recency(now: datetime, last_accessed_at: datetime) -> float:
    """0.995 ** world hours since last access; an access after ``now`` counts as zero hours."""
    hours = max((now - last_accessed_at).total_seconds() / 3600.0, 0.0)
    return float(RECENCY_DECAY_PER_HOUR**hours)


def _normalise(value: float, low: float, high: float) -> float:
    if not high > low:
        return 0.5
    return min(max((value - low) / (high - low), 0.0), 1.0)


def _components(
    c: Candidate, stats: StreamStats, now: datetime, rec_range: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    rec_lo, rec_hi = rec_range or (recency(now, stats.accessed_min), recency(now, stats.accessed_max))
    rec = _normalise(recency(now, c.last_accessed_at), rec_lo, rec_hi)
    imp = _normalise(float(c.importance), stats.importance_min, stats.importance_max)
    rel = _normalise(c.relevance, stats.relevance_min, stats.relevance_max)
    return rec, imp, rel


def score_candidates(
    candidates: Iterable[Candidate], stats: StreamStats, now: datetime, weights: RetrievalWeights, k: int
) -> list[ScoredMemory]:
    """Score candidates against stream-wide ``stats`` and return the best ``k``.

    Ties break on memory id, so every implementation orders equal scores the same way.
    """
    scored = []
    rec_range = (recency(now, stats.accessed_min), recency(now, stats.accessed_max))
    for c in candidates:
        rec, imp, rel = _components(c, stats, now, rec_range)
        score = weights.recency * rec + weights.importance * imp + weights.relevance * rel
        scored.append(ScoredMemory(c.memory_id, score, rec, imp, rel))
    scored.sort(key=lambda s: (-s.score, s.memory_id))
    return scored[:k]


def prior(
    importance: int, last_accessed_at: datetime, stats: StreamStats, now: datetime, weights: RetrievalWeights
) -> float:
    """The query-independent part of the score: weighted normalised importance plus recency."""
    rec, imp, _ = _components(Candidate("", importance, last_accessed_at, 0.0), stats, now)
    return weights.importance * imp + weights.recency * rec


def prior_thresholds(
    stats: StreamStats, now: datetime, weights: RetrievalWeights, needed: float
) -> dict[int, datetime | None]:
    """For each importance level, the oldest last access whose prior can still reach ``needed``.

    A memory of level L can have ``prior >= needed`` only if it was last accessed at or after the returned
    time (None: every memory of the level can; a level left out: none can). Recency is monotone in the
    access time (0.995 per world hour), so each level is one index range. A second of slack absorbs rounding.
    """
    rec_lo, rec_hi = recency(now, stats.accessed_min), recency(now, stats.accessed_max)
    out: dict[int, datetime | None] = {}
    for level in range(int(stats.importance_min), int(stats.importance_max) + 1):
        imp = _normalise(float(level), stats.importance_min, stats.importance_max)
        rest = needed - weights.importance * imp
        if weights.recency <= 0 or not rec_hi > rec_lo:
            constant = weights.recency * (0.5 if not rec_hi > rec_lo else 0.0)
            if constant >= rest - 1e-9:
                out[level] = None
            continue
        share = rest / weights.recency
        if share <= 1e-9:
            out[level] = None
        elif share <= 1 + 1e-9:
            floor = rec_lo + min(share, 1.0) * (rec_hi - rec_lo)
            hours = math.log(floor) / math.log(RECENCY_DECAY_PER_HOUR) if floor < 1 else 0.0
            out[level] = now - timedelta(hours=hours, seconds=1)
    return out


def relevance_bound(relevance: float, stats: StreamStats, weights: RetrievalWeights) -> float:
    """The weighted normalised relevance of a memory at most this similar to the query."""
    return weights.relevance * _normalise(relevance, stats.relevance_min, stats.relevance_max)
