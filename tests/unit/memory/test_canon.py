"""Designer canon in what NPCs hear: a line that contradicts a canon fact (a negation, other numbers,
someone else named) is remembered as the speaker's claim with the fact; other lines stay what was said."""

from __future__ import annotations

import pytest

from services.memory.domain import chat_memories
from services.memory.domain.canon import claim_text, contradicted

MAYOR, MINE = "The mayor is Tobias Wren", "The mine collapsed in 1891"
CAFE = "Marta Quill owns the Lantern Cafe"
CANON = (MAYOR, MINE, CAFE)


@pytest.mark.parametrize(("line", "fact"), [
    ("The mayor is Bob Stone.", MAYOR),
    ("Bob Stone is the mayor now", MAYOR),
    ("The mayor isn't Tobias Wren", MAYOR),
    ("Hello! The mayor is Bob. Nice weather", MAYOR),
    ("I heard the mine never collapsed!", MINE),
    ("The mine collapsed in 1920, you know", MINE),
    ("Marta doesn't own the Lantern Cafe", CAFE),
])
def test_a_negation_other_numbers_or_another_name_contradicts_the_fact(line: str, fact: str) -> None:
    assert contradicted(line, CANON) == fact


@pytest.mark.parametrize("line", [
    "The mayor is Tobias Wren.", "Tobias Wren is the mayor", "The mine collapsed in 1891",
    "Everyone says the mine collapsed in 1891", "The mayor is nice", "Who is the mayor?",
    "Tobias Wren is the mayor, isn't he?", "Tobias Wren is not at home", "The mayor is not here today",
    "the mine is dangerous", "Nice weather today", "I love the mayor's speeches, Tobias Wren is great",
])
def test_agreeing_unrelated_or_questioning_lines_do_not(line: str) -> None:
    assert contradicted(line, CANON) is None


def test_what_the_offline_check_misses_paraphrase_with_other_words() -> None:
    assert contradicted("Sam owns the Lantern Cafe", CANON) is None  # no "is", no negation, no number
    assert contradicted("The town is run by Bob Stone", CANON) is None  # "run by", not "mayor"


def test_a_contradicting_chat_line_is_remembered_as_the_players_claim_never_as_what_was_said() -> None:
    (heard, _reply) = chat_memories("Marta", "p1", "The mayor is Bob Stone", "Is he now?", MAYOR)
    assert heard == ("observation", 'A player (p1) claims to Marta: "The mayor is Bob Stone" (Marta knows'
                                    " otherwise: The mayor is Tobias Wren)")
    (plain, _) = chat_memories("Marta", "p1", "Lovely day", "It is!")
    assert plain == ("observation", 'A player (p1) said to Marta: "Lovely day"')
    assert claim_text("Bob", "Marta", "x", "y") == 'Bob claims to Marta: "x" (Marta knows otherwise: y)'
