"""Offline importance: poignancy 1-10 from the importance lexicon, the highest matching level wins."""

from __future__ import annotations

from npcworld.llm.offline.lexicon import IMPORTANCE_LEXICON, UNMATCHED_SCORE, UNMATCHED_WITH_PERSON_SCORE
from npcworld.llm.offline.text import entities, matches, words
from npcworld.llm.prompts import ImportanceInput, ImportanceOutput

__all__ = ["rate_importance", "score_memory"]


def score_memory(description: str, npc_name: str = "") -> int:
    """Poignancy of one memory: the highest lexicon level it matches.

    Text matching nothing scores 2 (3 when it names someone other than the NPC: people matter more
    than objects); the same text always gets the same score.
    """
    tokens = words(description)
    levels = [level for pattern, level in IMPORTANCE_LEXICON if matches(pattern, tokens)]
    if levels:
        return max(levels)
    others = entities(description, exclude=npc_name.split())
    return UNMATCHED_WITH_PERSON_SCORE if others else UNMATCHED_SCORE


def rate_importance(inputs: ImportanceInput) -> ImportanceOutput:
    """Answer the ``importance`` prompt: one score per memory, in order."""
    return ImportanceOutput(scores=tuple(score_memory(m, inputs.npc_name) for m in inputs.memories))
