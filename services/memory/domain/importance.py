"""The importance-rating port (LLM-rated poignancy 1-10, DESIGN.md: brushing teeth 1, a break-up 10)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from services.memory.domain.memory import NpcRef

__all__ = [
    "MAX_IMPORTANCE",
    "MIN_IMPORTANCE",
    "ImportanceRater",
    "ImportanceRaterOfMany",
    "ImportanceRatings",
    "RatingContext",
    "clamp_importance",
    "idle_importance",
    "shared_calls",
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


@runtime_checkable
class ImportanceRaterOfMany(Protocol):
    """A rater that can also rate several NPCs' memories of one world and moment in one call."""

    async def rate_many(
        self, requests: Sequence[tuple[Sequence[str], RatingContext]]
    ) -> list[ImportanceRatings]:
        """One ImportanceRatings per request, in order; every request's context has the same tenant,
        world and world time, and no NPC appears twice."""
        ...


def shared_calls(
    requests: Sequence[tuple[RatingContext, int]], *, per_npc: int, per_call: int
) -> list[list[int]]:
    """Which rating requests (a context and how many texts it rates) share one call, as lists of indexes into
    ``requests``: requests of the same world and moment, in the order given, while the call holds at most
    ``per_call`` texts and no two characters of the same name; a request over ``per_npc`` texts gets a call of
    its own. Deterministic: the same requests in the same order always share the same way."""
    calls: list[list[int]] = []
    open_calls: dict[tuple[str, str, datetime], tuple[list[int], set[str], int]] = {}
    for i, (context, count) in enumerate(requests):
        if count > per_npc:
            calls.append([i])
            continue
        moment = (context.npc.tenant_id, context.npc.world_id, context.world_time)
        current = open_calls.get(moment)
        if current is None or current[2] + count > per_call or context.npc_name in current[1]:
            current = ([], set(), 0)
            calls.append(current[0])
        current[0].append(i)
        current[1].add(context.npc_name)
        open_calls[moment] = (current[0], current[1], current[2] + count)
    return calls


def clamp_importance(score: int) -> int:
    """Keep a model's rating inside the 1-10 scale."""
    return min(max(int(score), MIN_IMPORTANCE), MAX_IMPORTANCE)


def idle_importance(kind: str, description: str) -> int | None:
    """MIN_IMPORTANCE for an observation that something is idle (no rating call, as in the paper's code);
    None for everything else, which the rater rates."""
    return MIN_IMPORTANCE if kind == "observation" and _IDLE.search(description) else None
