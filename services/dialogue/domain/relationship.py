"""Relationship state per ordered pair: familiarity (conversations held) and sentiment 0-10.

Sentiment is Project Sid's social-awareness score (0 hostile, 5 neutral, 10 devoted); each conversation
moves it by the warmth both sides showed, at most ``MAX_STEP`` per conversation, so one exchange never
flips a relationship.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["MAX_STEP", "NEUTRAL", "Relationship", "after_conversation"]

NEUTRAL = 5.0
MAX_STEP = 1.5
# How much the other side's warmth counts against one's own (people warm to those who are warm to them).
OTHER_WEIGHT = 0.6
# A first conversation counts a little in itself: strangers who talk become acquaintances.
ACQUAINTANCE_BONUS = 0.25


@dataclass(frozen=True)
class Relationship:
    """How ``npc_id`` regards ``other_id``."""

    npc_id: str
    other_id: str
    familiarity: int = 0
    sentiment: float = NEUTRAL
    summary: str = ""


def _mean(values: Sequence[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def after_conversation(
    current: Relationship, *, own_warmth: Sequence[int], other_warmth: Sequence[int], summary: str = ""
) -> Relationship:
    """The relationship after one more conversation.

    Args:
        own_warmth: warmth (-2..2) of each of ``npc_id``'s utterances in the conversation.
        other_warmth: warmth (-2..2) of each of the other's utterances.
        summary: what the conversation was about (kept as the latest word on the relationship).

    Returns:
        familiarity + 1; sentiment moved by ``(1 - OTHER_WEIGHT)·own + OTHER_WEIGHT·other`` mean warmth
        (plus a small bonus for a first conversation), clipped to ±MAX_STEP and to 0..10.
    """
    step = (1 - OTHER_WEIGHT) * _mean(own_warmth) + OTHER_WEIGHT * _mean(other_warmth)
    if current.familiarity == 0:
        step += ACQUAINTANCE_BONUS
    step = max(-MAX_STEP, min(MAX_STEP, step))
    sentiment = round(max(0.0, min(10.0, current.sentiment + step)), 2)
    return Relationship(
        current.npc_id, current.other_id, current.familiarity + 1, sentiment, summary or current.summary
    )
