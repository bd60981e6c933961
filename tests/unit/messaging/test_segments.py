"""A poll is cut before a gathered event that follows an event written here, so each gather reads it."""

from __future__ import annotations

from dataclasses import dataclass

from npcworld.messaging.segments import gather_segments, record_type

GATHERED = frozenset({"UtteranceSpoken", "PlayerSpoke"})
APPLIED = frozenset({"UtteranceSpoken", "PlayerSpoke", "NpcCreated", "PlacesDiscovered"})


def cuts(*types: str | None) -> list[tuple[int, int]]:
    return gather_segments(list(types), GATHERED, APPLIED)


def test_a_line_after_the_npcs_profile_in_the_same_poll_is_gathered_after_the_profile_is_applied() -> None:
    assert cuts("NpcCreated", "PlacesDiscovered", "UtteranceSpoken") == [(0, 2), (2, 3)]


def test_gathered_events_one_after_another_stay_together_and_writers_after_them_join_them() -> None:
    assert cuts("PlayerSpoke", "PlayerSpoke", "UtteranceSpoken", "NpcCreated") == [(0, 4)]
    assert cuts("PlayerSpoke", "NpcCreated", "PlayerSpoke", "NpcCreated", "NpcCreated", "PlayerSpoke") == [
        (0, 2), (2, 5), (5, 6)
    ]


def test_events_not_applied_here_and_undecodable_records_cut_nothing() -> None:
    assert cuts("WorldTicked", None, "PlayerSpoke") == [(0, 3)]
    assert cuts() == [(0, 0)]


@dataclass
class Record:
    headers: list[tuple[str, bytes]]
    value: bytes | None = None


def test_the_type_comes_from_the_relays_header_and_an_unreadable_record_has_none() -> None:
    assert record_type(Record([("lane", b"world"), ("event_type", b"NpcCreated")])) == "NpcCreated"
    assert record_type(Record([], b"not json")) is None
