"""End-of-conversation rules: either side ends it, the turn cap, the per-pair cooldown, turn order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.dialogue.domain import (
    DEFAULT_COOLDOWN,
    DEFAULT_MAX_UTTERANCES,
    Conversation,
    Line,
    TurnRules,
    ends_after,
    finish,
    may_start,
    record_line,
)

T0 = datetime(2023, 2, 13, 15, 0, tzinfo=UTC)
RULES = TurnRules()


def talk(n: int, rules: TurnRules = RULES) -> Conversation:
    c = Conversation("c1", "isabella", "sam", T0)
    for i in range(n):
        c = record_line(c, Line("isabella" if i % 2 == 0 else "sam", f"line {i}"), rules)
    return c


def test_defaults_follow_design_16_utterances_and_800_steps_of_10_seconds() -> None:
    assert DEFAULT_MAX_UTTERANCES == 16
    assert timedelta(seconds=8000) == DEFAULT_COOLDOWN


def test_either_side_may_end_the_conversation_before_the_cap() -> None:
    assert ends_after(talk(1), speaker_ends=True, rules=RULES)
    assert ends_after(talk(2), speaker_ends=True, rules=RULES)
    assert not ends_after(talk(2), speaker_ends=False, rules=RULES)


def test_the_turn_cap_ends_a_conversation_nobody_ends() -> None:
    assert not ends_after(talk(15), speaker_ends=False, rules=RULES)
    assert ends_after(talk(16), speaker_ends=False, rules=RULES)


def test_the_turn_cap_is_configurable_and_no_line_goes_past_it() -> None:
    rules = TurnRules(max_utterances=4)
    c = talk(4, rules)
    assert ends_after(c, speaker_ends=False, rules=rules)
    with pytest.raises(ValueError, match="over"):
        record_line(c, Line("isabella", "one more"), rules)
    with pytest.raises(ValueError):
        TurnRules(max_utterances=1)


def test_participants_alternate_and_strangers_cannot_speak() -> None:
    c = talk(1)
    with pytest.raises(ValueError, match="turn"):
        record_line(c, Line("isabella", "again"), RULES)
    with pytest.raises(ValueError, match="not in conversation"):
        record_line(c, Line("klaus", "hi"), RULES)


def test_a_pair_that_just_talked_waits_for_the_cooldown() -> None:
    ended = T0
    refusal = may_start(
        "isabella", "sam", T0 + timedelta(hours=1), open_conversations=(), last_ended=ended, rules=RULES
    )
    assert refusal == "cooldown"
    assert (
        may_start(
            "isabella",
            "sam",
            T0 + timedelta(hours=2, minutes=14),
            open_conversations=(),
            last_ended=ended,
            rules=RULES,
        )
        is None
    )


def test_an_npc_already_in_a_conversation_cannot_start_another() -> None:
    ongoing = Conversation("c0", "sam", "klaus", T0)
    assert (
        may_start(
            "isabella",
            "sam",
            T0 + timedelta(minutes=5),
            open_conversations=(ongoing,),
            last_ended=None,
            rules=RULES,
        )
        == "busy"
    )
    done = finish(ongoing, T0 + timedelta(minutes=2), "sam")
    assert (
        may_start(
            "isabella",
            "sam",
            T0 + timedelta(minutes=5),
            open_conversations=(done,),
            last_ended=None,
            rules=RULES,
        )
        is None
    )


def test_an_abandoned_conversation_stops_blocking_after_an_hour() -> None:
    ongoing = Conversation("c0", "sam", "klaus", T0)
    assert (
        may_start(
            "isabella",
            "sam",
            T0 + timedelta(hours=2),
            open_conversations=(ongoing,),
            last_ended=None,
            rules=RULES,
        )
        is None
    )


def test_nobody_talks_to_themselves() -> None:
    assert may_start("sam", "sam", T0, open_conversations=(), last_ended=None, rules=RULES) == "same_npc"
