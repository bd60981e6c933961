"""Importance rating through the LLM layer: the ``importance`` prompt, up to 50 memories of one NPC per call,
and ``importance_batch`` for several NPCs of one world and moment (up to 100 memories in all)."""

from __future__ import annotations

from collections.abc import Sequence

from npcworld.llm.ports import LLM
from npcworld.llm.prompts import (
    MAX_MEMORIES,
    ImportanceBatchInput,
    ImportanceBatchOutput,
    ImportanceInput,
    ImportanceOutput,
)
from services.memory.domain import ImportanceRatings, RatingContext

__all__ = ["LLMImportanceRater"]


class LLMImportanceRater:
    """The ImportanceRater port on top of the LLM layer (offline provider, live model or replay)."""

    def __init__(self, llm: LLM) -> None:
        self._llm = llm

    async def rate(self, descriptions: Sequence[str], context: RatingContext) -> ImportanceRatings:
        scores: list[int] = []
        model = ""
        for start in range(0, len(descriptions), MAX_MEMORIES):
            batch = tuple(descriptions[start : start + MAX_MEMORIES])
            result = await self._llm.complete(
                "importance",
                ImportanceInput(npc_name=context.npc_name[:200], memories=batch),
                ImportanceOutput,
                tenant_id=context.npc.tenant_id,
                world_id=context.npc.world_id,
                npc_id=context.npc.npc_id,
                world_time=context.world_time,
            )
            scores.extend(result.value.scores)
            model = result.model
        return ImportanceRatings(tuple(scores), model)

    async def rate_many(
        self, requests: Sequence[tuple[Sequence[str], RatingContext]]
    ) -> list[ImportanceRatings]:
        """Rate several NPCs' memories of one world and moment in one ``importance_batch`` call (one
        request: the ``importance`` prompt). The call is the world's, not one NPC's (``npc_id`` unset)."""
        if len(requests) == 1:
            return [await self.rate(*requests[0])]
        first = requests[0][1]
        people = tuple(ImportanceInput(npc_name=c.npc_name[:200], memories=tuple(t)) for t, c in requests)
        result = await self._llm.complete(
            "importance_batch",
            ImportanceBatchInput(people=people),
            ImportanceBatchOutput,
            tenant_id=first.npc.tenant_id,
            world_id=first.npc.world_id,
            world_time=first.world_time,
        )
        return [ImportanceRatings(tuple(scores), result.model) for scores in result.value.scores]
