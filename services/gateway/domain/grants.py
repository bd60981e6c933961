"""What an API key may do: its scopes (with what each implies) and the worlds it is limited to.

Scopes, narrowest first:

- ``chat``: talk with NPCs (a player session token holds only this, for one world and one player);
- ``play``: what a game server does: chat and post perceptions; implies ``chat``;
- ``read``: read worlds, NPCs, events, memories, plans and usage;
- ``write``: world administration: create, change, fork and delete worlds and NPCs, clocks, webhooks;
  implies ``play``;
- ``voice``: whisper an NPC's inner voice (a directive it acts on);
- ``admin``: manage the tenant's keys; implies ``voice`` (which needed ``admin`` before it had a scope of
  its own).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["IMPLIES", "SCOPES", "Grant", "effective_scopes"]

SCOPES = ("read", "chat", "play", "write", "voice", "admin")
IMPLIES: dict[str, tuple[str, ...]] = {"play": ("chat",), "write": ("play",), "admin": ("voice",)}


def effective_scopes(scopes: Iterable[str]) -> frozenset[str]:
    """``scopes`` with everything they imply."""
    found, todo = set(), list(scopes)
    while todo:
        scope = todo.pop()
        if scope not in found:
            found.add(scope)
            todo.extend(IMPLIES.get(scope, ()))
    return frozenset(found)


@dataclass(frozen=True)
class Grant:
    """A key's scopes (as given) and the worlds it is limited to (None: every world of its tenant)."""

    scopes: frozenset[str]
    worlds: frozenset[str] | None = None
    player_id: str | None = None  # a player session: it speaks only as this player

    def allows(self, scope: str) -> bool:
        return scope in effective_scopes(self.scopes)

    def reaches(self, world_id: str) -> bool:
        return self.worlds is None or world_id in self.worlds
