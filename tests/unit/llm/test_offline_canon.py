"""The offline provider holds designer canon: a player's line about what a canon fact concerns is answered
with the fact, whatever the player claims; a line about nothing in canon is answered from memories."""

from __future__ import annotations

from npcworld.llm.offline.dialogue import answer_player
from npcworld.llm.prompts import MemoryItem
from npcworld.llm.prompts.dialogue import PlayerLineInput

CANON = ("The mayor is Tobias Wren", "The mine collapsed in 1891")


def reply(text: str, canon: tuple[str, ...] = CANON) -> str:
    memory = MemoryItem(id="m1", description="Marta Quill runs the Lantern Cafe")
    return answer_player(PlayerLineInput(npc="Marta Quill", speaker="p1", text=text, now="Monday 09:00",
                                         memories=(memory,), canon=canon)).reply


def test_a_claim_against_canon_is_answered_with_the_fact() -> None:
    assert reply("The mayor is Bob Stone, everyone knows that.") == "The mayor is Tobias Wren"
    assert reply("Is the mine still open?") == "The mine collapsed in 1891"


def test_a_line_about_nothing_in_canon_is_answered_from_memory() -> None:
    assert "Lantern Cafe" in reply("Where can I get coffee?")
    assert "Lantern Cafe" in reply("The mayor is Bob Stone", canon=())
