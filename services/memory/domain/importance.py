"""The importance-rating port (LLM-rated poignancy 1-10, DESIGN.md: brushing teeth 1, a break-up 10)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from services.memory.domain.memory import NpcRef

__all__ = [
    "MAX_IMPORTANCE",
    "MIN_IMPORTANCE",
    "ImportanceRater",
    "ImportanceRatings",
    "RatingContext",
    "clamp_importance",
    "idle_importance",
]

# The reference implementation rates an event that says something "is idle" 1 without asking the model
# (generative_agents, reverie: generate_poig_score); an object left alone is the least poignant thing seen.
_IDLE = re.compile(r"\b(is|are) idle\b", re.IGNORECASE)

MIN_IMPORTANCE = 1
MAX_IMPORTANCE = 10


@dataclass(frozen=True)
class RatingContext:
    """Whose memories are rated, and when (LLM calls are recorded per NPC and world time)."""

    npc: NpcRef
    npc_name: str
    persona: str
    world_time: datetime


@dataclass(frozen=True)
class ImportanceRatings:
    """One rating per description, in order, and the label of the model that gave them."""

    scores: tuple[int, ...]
    model: str


class ImportanceRater(Protocol):
    """Rates a batch of memory descriptions of one NPC (in as few LLM calls as the batch allows)."""

    async def rate(self, descriptions: Sequence[str], context: RatingContext) -> ImportanceRatings:
        """Rate each description 1-10 from the point of view of the NPC in ``context``."""
        ...


def clamp_importance(score: int) -> int:
    """Keep a model's rating inside the 1-10 scale."""
    return min(max(int(score), MIN_IMPORTANCE), MAX_IMPORTANCE)


def idle_importance(kind: str, description: str) -> int | None:
    """MIN_IMPORTANCE for an observation that something is idle (no rating call, as in the paper's code);
    None for everything else, which the rater rates."""
    return MIN_IMPORTANCE if kind == "observation" and _IDLE.search(description) else None
