"""Where a memory came from and how far the NPC relies on it (docs/studio-controls.md "Memory provenance").

A player's line is that player's claim: told, low trust. It is corroborated (medium trust) only when the NPC
perceived the same thing itself before hearing it; being told again, by the same player or by any number of
player ids, never corroborates it (one person can hold any number of ids and sessions). Another NPC's line
is told at medium trust: it may pass on a claim, but never with more trust than its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from npcworld.contracts import MemorySource, Trust

__all__ = ["DESIGNER", "INFERRED", "PERCEIVED", "PLANNED", "Provenance", "corroborated", "told_by_npc",
           "told_by_player"]

_WORD = re.compile(r"[a-z0-9']+")
_STOP = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "and", "or", "is", "was", "are", "were", "be",
    "been", "has", "had", "have", "it", "its", "this", "that", "these", "those", "by", "with", "as", "from",
    "i", "you", "he", "she", "they", "we", "his", "her", "their", "our", "my", "your", "did", "does", "do",
    "so", "very", "really", "actually", "heard", "say", "says", "said", "told", "tell", "think", "know",
    "just", "now", "last", "night", "today", "yesterday", "there", "here", "all", "s", "t",
})
_NEGATIONS = frozenset({"not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "cannot"})
# A claim with fewer content words than this says too little to be matched against a perception.
_MIN_WORDS = 2


@dataclass(frozen=True)
class Provenance:
    """A memory's source, who told it (``npc:<id>`` / ``player:<id>``) and its trust."""

    source: MemorySource = "perceived"
    told_by: str | None = None
    trust: Trust = "high"


PERCEIVED = Provenance()
DESIGNER = Provenance("designer")
PLANNED = Provenance("inferred")  # the NPC's own intentions
INFERRED = Provenance("inferred", trust="medium")  # a reflection can be wrong; its evidence is never low


def told_by_npc(npc_id: str) -> Provenance:
    """What another NPC said: told, medium trust."""
    return Provenance("told", f"npc:{npc_id}", "medium")


def told_by_player(player_id: str, *, corroborated: bool = False) -> Provenance:
    """What a player said: the player's claim (low trust), medium once the NPC had perceived the same."""
    return Provenance("told", f"player:{player_id}", "medium" if corroborated else "low")


def _content(text: str) -> set[str]:
    words = (w.removesuffix("'s").strip("'") for w in _WORD.findall(text.lower()))
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in words if w and w not in _STOP and w not in _NEGATIONS and not w.endswith("n't")}


def _negated(text: str) -> bool:
    words = _WORD.findall(text.lower())
    return sum(1 for w in words if w in _NEGATIONS or w.endswith("n't")) % 2 == 1


def corroborated(claim: str, perceived: Iterable[str]) -> bool:
    """Whether one of the NPC's ``perceived`` memories says what ``claim`` says: every content word of the
    claim (at least two) is in it, and both or neither are negated. Word-level, like the canon check: a
    paraphrase is not matched, so a true claim may stay low; a false one is not raised by it.

    Args:
        claim: the line the NPC was told.
        perceived: descriptions of the NPC's own perceptions.
    """
    said = _content(claim)
    if len(said) < _MIN_WORDS:
        return False
    negated = _negated(claim)
    return any(said <= _content(seen) and _negated(seen) == negated for seen in perceived)
