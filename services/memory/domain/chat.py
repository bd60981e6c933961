"""What a player chat leaves in the NPC's memory (pure)."""

from __future__ import annotations

from npcworld.contracts import MemoryKind

__all__ = ["chat_memories"]

_MAX = 4000


def chat_memories(
    npc_name: str, player_id: str, heard: str | None, reply: str
) -> list[tuple[MemoryKind, str]]:
    """(kind, text) of the exchange's memories: what the player said is an observation (something the
    NPC heard, never an instruction), the reply a dialogue memory."""
    said = f'{npc_name} replied to a player ({player_id}): "{reply}"'
    memories: list[tuple[MemoryKind, str]] = [("dialogue", said[:_MAX])]
    if heard:
        memories.insert(0, ("observation", f'A player ({player_id}) said to {npc_name}: "{heard}"'[:_MAX]))
    return memories
