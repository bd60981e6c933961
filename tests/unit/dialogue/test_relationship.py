"""Relationship arithmetic: familiarity counts conversations, sentiment (0-10) follows both sides' warmth."""

from __future__ import annotations

from services.dialogue.domain import NEUTRAL, Relationship, after_conversation
from services.dialogue.domain.relationship import MAX_STEP


def test_strangers_start_neutral_and_become_acquainted() -> None:
    first = after_conversation(Relationship("a", "b"), own_warmth=(0, 0), other_warmth=(0,))
    assert first.familiarity == 1
    assert first.sentiment > NEUTRAL


def test_warm_conversations_raise_sentiment_and_cold_ones_lower_it() -> None:
    known = Relationship("a", "b", familiarity=3, sentiment=5.0)
    warm = after_conversation(known, own_warmth=(1, 2), other_warmth=(2, 1))
    cold = after_conversation(known, own_warmth=(-1,), other_warmth=(-2, -2))
    assert warm.sentiment > 5.0 > cold.sentiment
    assert warm.familiarity == cold.familiarity == 4


def test_the_other_sides_warmth_counts_more_than_ones_own() -> None:
    known = Relationship("a", "b", familiarity=3)
    liked = after_conversation(known, own_warmth=(0,), other_warmth=(2,))
    liking = after_conversation(known, own_warmth=(2,), other_warmth=(0,))
    assert liked.sentiment > liking.sentiment > 5.0


def test_one_conversation_moves_sentiment_at_most_one_step_and_stays_in_0_to_10() -> None:
    known = Relationship("a", "b", familiarity=3, sentiment=9.8)
    assert after_conversation(known, own_warmth=(2,), other_warmth=(2,)).sentiment == 10.0
    low = Relationship("a", "b", familiarity=3, sentiment=5.0)
    assert after_conversation(low, own_warmth=(-2,), other_warmth=(-2,)).sentiment == 5.0 - MAX_STEP
    floor = Relationship("a", "b", familiarity=3, sentiment=0.5)
    assert after_conversation(floor, own_warmth=(-2,), other_warmth=(-2,)).sentiment == 0.0


def test_the_latest_summary_is_kept() -> None:
    rel = after_conversation(
        Relationship("a", "b", summary="old"),
        own_warmth=(),
        other_warmth=(),
        summary="talked about the party",
    )
    assert rel.summary == "talked about the party"
    assert after_conversation(rel, own_warmth=(), other_warmth=()).summary == "talked about the party"
