"""A studio's rules over decided actions: the first rule an action breaks vetoes or replaces it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from npcworld.contracts import ActionDecided, ActionRule
from services.world_state.domain.rules import judge

T0 = datetime(2023, 2, 13, 9, tzinfo=UTC)


def act(description: str, place: str = "w:Town:Mine:shaft") -> ActionDecided:
    return ActionDecided(description=description, location_path=place, start=T0, duration_minutes=15)


MINE = ActionRule(rule_id="no-mine", places=("w:Town:Mine",), reason="the mine collapsed")
FIRE = ActionRule(rule_id="no-arson", words=("burn", "fire"), verdict="replace",
                  replacement="sweep the floor", replacement_place="w:Town:Inn")
KIDS = ActionRule(rule_id="kids-home", npc_ids=("tim",), places=("w:Town:Tavern",))


def test_an_action_inside_a_forbidden_place_is_vetoed_and_one_elsewhere_stands() -> None:
    verdict = judge([MINE], "ada", act("dig for silver"))
    assert verdict is not None and verdict.rule.rule_id == "no-mine" and verdict.replacement is None
    assert judge([MINE], "ada", act("dig for silver", "w:Town:Minefield")) is None  # a prefix of a name only
    assert judge([MINE], "ada", act("dig", "w:Town:Mine")) is not None


def test_a_forbidden_word_is_replaced_by_the_rules_action_and_place() -> None:
    verdict = judge([FIRE], "ada", act("Burn down the barn", "w:Town:Barn"))
    assert verdict is not None and verdict.replacement is not None
    instead = verdict.replacement
    assert (instead.description, instead.location_path) == ("sweep the floor", "w:Town:Inn")
    assert verdict.replacement.start == T0 and verdict.replacement.duration_minutes == 15
    assert judge([FIRE], "ada", act("sit by the fireplace")) is None  # whole words only


def test_a_rule_for_some_npcs_leaves_the_others_alone_and_the_first_broken_rule_decides() -> None:
    assert judge([KIDS], "tim", act("have a drink", "w:Town:Tavern:bar")) is not None
    assert judge([KIDS], "ada", act("have a drink", "w:Town:Tavern:bar")) is None
    both = act("burn the mine's props")
    assert judge([MINE, FIRE], "ada", both).rule.rule_id == "no-mine"  # type: ignore[union-attr]
    assert judge([FIRE, MINE], "ada", both).rule.rule_id == "no-arson"  # type: ignore[union-attr]


def test_a_replace_rule_without_a_replacement_is_refused() -> None:
    with pytest.raises(ValidationError, match="needs a replacement"):
        ActionRule(rule_id="x", verdict="replace")
