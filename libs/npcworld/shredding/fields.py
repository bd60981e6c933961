"""Which payload fields carry a player's words, and whose words they are.

The owner is read from the payload itself (a chat's ``player_id``, a relationship's ``player:<id>``, a chat
memory's ``player <id>`` subject or a memory's ``told_by`` ``player:<id>``), except for a retrieval's query,
which belongs to the player whose line caused the retrieval (``CAUSED_BY_PLAYER``: the store looks the cause
up).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["CAUSED_BY_PLAYER", "SEALED_FIELDS", "owner_of"]


def _player_id(payload: Mapping[str, Any]) -> str | None:
    value = payload.get("player_id")
    return value if isinstance(value, str) and value else None


def _prefixed(field: str, prefix: str) -> Callable[[Mapping[str, Any]], str | None]:
    def owner(payload: Mapping[str, Any]) -> str | None:
        value = payload.get(field)
        if isinstance(value, str) and value.startswith(prefix) and len(value) > len(prefix):
            return value[len(prefix):]
        return None

    return owner


# Event type → the fields sealed with the owner's key. NpcReplied's own text is sealed too: it is the
# transcript of the player's chat and often repeats what the player said.
SEALED_FIELDS: Mapping[str, tuple[str, ...]] = {
    "PlayerSpoke": ("text",),
    "NpcReplied": ("text", "heard"),
    "RelationshipChanged": ("summary",),
    "MemoryRecorded": ("description",),
    "MemoriesAccessed": ("query",),
}
def _memory_owner(payload: Mapping[str, Any]) -> str | None:
    # A chat's memories have the player as subject; a memory told by a player names it in ``told_by``.
    return _prefixed("subject", "player ")(payload) or _prefixed("told_by", "player:")(payload)


_OWNERS: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = {
    "PlayerSpoke": _player_id,
    "NpcReplied": _player_id,
    "RelationshipChanged": _prefixed("other_id", "player:"),
    "MemoryRecorded": _memory_owner,
}
# A retrieval made while replying to a player queries with the player's line.
CAUSED_BY_PLAYER = frozenset({"MemoriesAccessed"})


def owner_of(event_type: str, payload: Mapping[str, Any]) -> str | None:
    """The player whose words the payload's sealed fields hold (None: nobody's, or found by the cause)."""
    owner = _OWNERS.get(event_type)
    return owner(payload) if owner else None
