"""Commitment bookkeeping: clock times become the next world time, place names become known places."""

from __future__ import annotations

from datetime import UTC, datetime

from npcworld.contracts import Commitment
from services.dialogue.domain import (
    CommitmentDraft,
    merge_commitments,
    resolve_commitment,
    resolve_place,
    resolve_start,
)

NOW = datetime(2023, 2, 14, 15, 30, tzinfo=UTC)
KNOWN = ["smallville:Hobbs Cafe", "smallville:Hobbs Cafe:counter", "smallville:Oak Hill College:library"]


def test_a_clock_time_later_today_is_today_and_an_earlier_one_is_tomorrow() -> None:
    assert resolve_start("17:00", NOW) == datetime(2023, 2, 14, 17, 0, tzinfo=UTC)
    assert resolve_start("09:00", NOW) == datetime(2023, 2, 15, 9, 0, tzinfo=UTC)
    assert resolve_start("25:00", NOW) is None
    assert resolve_start(None, NOW) is None


def test_a_place_name_resolves_to_the_most_general_known_path() -> None:
    assert resolve_place("Hobbs Cafe", KNOWN, None) == "smallville:Hobbs Cafe"
    assert resolve_place("the library", KNOWN, None) == "smallville:Oak Hill College:library"


def test_an_unknown_place_falls_back_to_where_the_conversation_happens_never_an_invented_one() -> None:
    here = "smallville:Johnson Park"
    assert resolve_place("the Moon Palace", KNOWN, here) == here
    assert resolve_place(None, KNOWN, here) == here


def test_a_resolved_commitment_carries_the_speaker_place_start_and_duration() -> None:
    c = resolve_commitment(
        "sam",
        CommitmentDraft("go to Isabella's party", "Hobbs Cafe", "17:00", 120),
        now=NOW,
        known_places=KNOWN,
        here=None,
    )
    assert c == Commitment(
        npc_id="sam",
        description="go to Isabella's party",
        location_path="smallville:Hobbs Cafe",
        start=datetime(2023, 2, 14, 17, tzinfo=UTC),
        duration_minutes=120,
    )


def test_a_repeated_promise_is_counted_once() -> None:
    a = Commitment(npc_id="sam", description="Go to the party", location_path="x", start=NOW)
    b = Commitment(npc_id="sam", description="go to the party", location_path="x", start=NOW)
    c = Commitment(npc_id="isabella", description="go to the party", location_path="x", start=NOW)
    assert merge_commitments([a, b, c]) == (a, c)


def test_a_dated_clock_time_is_that_day_unless_it_is_past() -> None:
    assert resolve_start("17:00", NOW, "2023-02-16") == datetime(2023, 2, 16, 17, 0, tzinfo=UTC)
    assert resolve_start("17:00", NOW, "2023-02-14") == datetime(2023, 2, 14, 17, 0, tzinfo=UTC)
    assert resolve_start("09:00", NOW, "2023-02-10") == datetime(2023, 2, 15, 9, 0, tzinfo=UTC)
    assert resolve_start("17:00", NOW, "14 February") == datetime(2023, 2, 14, 17, 0, tzinfo=UTC)
