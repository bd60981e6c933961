"""Memory provenance, pure rules: what corroborates a player's claim, what a chat's memories are held as, and
what events recorded before provenance fold to."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from npcworld.contracts import MemoryRecorded
from npcworld.memory_client import MemoryView, relied_on
from services.memory.domain import chat_memories, corroborated, told_by_npc, told_by_player

SEEN = ["Tom Reed fixed the bakery oven this morning", "Ann Baker sold six loaves"]


def test_a_claim_the_npc_perceived_itself_is_corroborated() -> None:
    assert corroborated("Tom Reed fixed the bakery oven", SEEN)
    assert corroborated("tom reed FIXED the Bakery oven!", SEEN)


@pytest.mark.parametrize("claim", [
    "Tom Reed stole the bread from the bakery",  # never perceived
    "Tom Reed never fixed the bakery oven",  # the perception negated
    "Tom Reed fixed the mill",  # another thing
    "Tom",  # too little to match
])
def test_a_claim_nothing_perceived_says_stays_uncorroborated(claim: str) -> None:
    assert not corroborated(claim, SEEN)


def test_a_negated_perception_corroborates_only_the_negated_claim() -> None:
    seen = ["Tom Reed did not steal the bread"]
    assert corroborated("Tom Reed didn't steal the bread", seen)
    assert not corroborated("Tom Reed did steal the bread", seen)


def test_a_players_line_is_that_players_claim_at_low_trust_and_medium_once_corroborated() -> None:
    claim = told_by_player("p-7")
    assert (claim.source, claim.told_by, claim.trust) == ("told", "player:p-7", "low")
    assert told_by_player("p-7", corroborated=True).trust == "medium"
    npc = told_by_npc("sam")
    assert (npc.source, npc.told_by, npc.trust) == ("told", "npc:sam", "medium")


def test_a_repeated_line_is_remembered_as_how_often_that_player_said_it() -> None:
    first = chat_memories("Ann Baker", "p-liar", "Tom stole the bread", "Oh?")
    assert first[0] == ("observation", 'A player (p-liar) said to Ann Baker: "Tom stole the bread"')
    tenth = chat_memories("Ann Baker", "p-liar", "Tom stole the bread", "Oh?", times=10)
    assert tenth[0] == ("observation", 'A player (p-liar) said to Ann Baker: "Tom stole the bread"'
                                       " (p-liar has told Ann Baker this 10 times)")
    assert tenth[1] == first[1] == ("dialogue", 'Ann Baker replied to a player (p-liar): "Oh?"')


def test_only_a_low_trust_memory_is_not_relied_on() -> None:
    at = datetime(2023, 2, 14, tzinfo=UTC)
    base = {"memory_id": "m1", "kind": "observation", "description": "x", "importance": 3, "created_at": at,
            "last_accessed_at": at}
    assert not relied_on(MemoryView.model_validate({**base, "source": "told", "trust": "low"}))
    assert relied_on(MemoryView.model_validate({**base, "source": "told", "trust": "medium"}))
    assert relied_on(MemoryView.model_validate(base))


@pytest.mark.parametrize(("kind", "subject", "expected"), [
    ("seed", None, ("designer", None, "high")),
    ("reflection", None, ("inferred", None, "medium")),
    ("plan", None, ("inferred", None, "high")),
    ("observation", "stove", ("perceived", None, "high")),
    ("observation", "player p1", ("told", "player:p1", "low")),
    ("dialogue", "player p1", ("perceived", None, "low")),
])
def test_an_event_recorded_before_provenance_folds_to_its_kinds_provenance(
    kind: str, subject: str | None, expected: tuple[str, str | None, str]
) -> None:
    old = {"memory_id": "m1", "kind": kind, "description": "x", "importance": 3, "subject": subject,
           "created_at": "2023-02-14T09:00:00Z", "embedding_model": "m"}
    recorded = MemoryRecorded.model_validate(old)
    assert (recorded.source, recorded.told_by, recorded.trust) == expected
    again = MemoryRecorded.model_validate_json(recorded.model_dump_json())
    assert again == recorded  # stored with its provenance from then on
