"""Insights to reflection memories: evidence numbers to memory ids, and the depth in the reflection tree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

__all__ = ["CitedInsight", "ShownMemory", "cite_evidence", "merge_insights", "prompt_order"]


@dataclass(frozen=True)
class ShownMemory:
    """A memory as shown to the model: numbered by its position (1-based) in the prompt."""

    memory_id: str
    created_at: datetime
    depth: int = 0


@dataclass(frozen=True)
class CitedInsight:
    """An insight with the ids of the memories it cites and its depth (1 + the deepest cited memory)."""

    text: str
    question: int
    evidence: tuple[str, ...]
    depth: int


def prompt_order(memories: Sequence[ShownMemory]) -> list[ShownMemory]:
    """Oldest first, ties by id: the numbered list reads as a story and the same memories always give
    the same prompt (so a recorded run replays by request hash)."""
    return sorted(memories, key=lambda m: (m.created_at, m.memory_id))


def cite_evidence(
    question: int, shown: Sequence[ShownMemory], answers: Sequence[tuple[str, Sequence[int]]]
) -> list[CitedInsight]:
    """Map each answer's evidence numbers (1-based, as shown) to memory ids.

    DESIGN.md "Reflection": insights cite the memories that support them, forming a reflection tree; a
    reflection's depth is 1 + the largest depth among the memories it cites (observations have depth 0).

    Args:
        question: index of the question the answers belong to.
        shown: the memories in the order they were numbered in the prompt.
        answers: (insight text, evidence numbers) pairs.

    Returns:
        One insight per answer, evidence ids in the order cited, duplicates dropped.

    Raises:
        ValueError: an evidence number points outside the shown memories, or an answer cites nothing.
    """
    cited: list[CitedInsight] = []
    for text, numbers in answers:
        if not numbers:
            raise ValueError(f"insight {text!r} cites no memory")
        bad = [n for n in numbers if not 1 <= n <= len(shown)]
        if bad:
            raise ValueError(f"insight {text!r} cites {bad}, outside 1..{len(shown)}")
        memories = list({shown[n - 1].memory_id: shown[n - 1] for n in numbers}.values())
        depth = 1 + max(m.depth for m in memories)
        cited.append(CitedInsight(text, question, tuple(m.memory_id for m in memories), depth))
    return cited


def merge_insights(per_question: Sequence[Sequence[CitedInsight]]) -> list[CitedInsight]:
    """All questions' insights in order; an insight whose text an earlier question already produced is
    dropped, so the NPC does not store the same reflection twice in one run."""
    seen: set[str] = set()
    merged: list[CitedInsight] = []
    for insights in per_question:
        for insight in insights:
            key = " ".join(insight.text.lower().split())
            if key not in seen:
                seen.add(key)
                merged.append(insight)
    return merged
