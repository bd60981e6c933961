"""A studio's rules over decided actions (``ActionRulesSet``): which decided action a rule vetoes or replaces.

Pure: the rules and the action are arguments. The first rule that matches decides; no rule, the action stands.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from npcworld.contracts import ActionDecided, ActionRule, ActionVetoed
from services.world_state.domain.clock import in_focus
from services.world_state.domain.validation import Settled

__all__ = ["Verdict", "judge", "ruled"]


@dataclass(frozen=True)
class Verdict:
    """What a rule made of an action: ``replacement`` is the action taken instead (None: none, vetoed)."""

    rule: ActionRule
    replacement: ActionDecided | None


def judge(rules: Sequence[ActionRule], npc_id: str, action: ActionDecided) -> Verdict | None:
    """The verdict of the first rule ``action`` of ``npc_id`` breaks; None when it breaks none."""
    for rule in rules:
        if _matches(rule, npc_id, action):
            if rule.verdict == "veto":
                return Verdict(rule, None)
            assert rule.replacement is not None
            instead = action.model_copy(update={
                "description": rule.replacement,
                "location_path": rule.replacement_place or action.location_path,
                "object_state": None,
                "emoji": "",
            })
            return Verdict(rule, instead)
    return None


def ruled(verdict: Verdict, action: ActionDecided) -> Settled:
    """The veto a rule's verdict on ``action`` records, and the action taken instead (None: none)."""
    instead = verdict.replacement
    vetoed = ActionVetoed(
        rule_id=verdict.rule.rule_id, reason=verdict.rule.reason, description=action.description,
        location_path=action.location_path, replaced_by=instead.description if instead else None,
    )
    return Settled((vetoed,), instead)


def _matches(rule: ActionRule, npc_id: str, action: ActionDecided) -> bool:
    if rule.npc_ids and npc_id not in rule.npc_ids:
        return False
    if rule.places and not in_focus(action.location_path, rule.places):
        return False
    return not rule.words or any(_has_word(action.description, w) for w in rule.words)


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE) is not None
