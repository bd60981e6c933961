"""Offline answers that hold designer canon: a player's line about what a canon fact is about is answered
with that fact, whatever the player said (the NPC holds it true)."""

from __future__ import annotations

from npcworld.llm.offline.text import content_terms

__all__ = ["canon_reply"]


def canon_reply(text: str, canon: tuple[str, ...]) -> str | None:
    """The canon fact sharing the most content words with ``text`` (the first of equals); None when none
    shares any."""
    said = content_terms(text).keys()
    shared = [(len(said & content_terms(fact).keys()), -n, fact) for n, fact in enumerate(canon)]
    best = max(shared, default=None)
    return best[2] if best is not None and best[0] > 0 else None
