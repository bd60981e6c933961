"""What a player chat leaves in the NPC's memory (pure)."""

from __future__ import annotations

from npcworld.contracts import MemoryKind
from services.memory.domain.canon import claim_text

__all__ = ["chat_memories"]

_MAX = 4000


def chat_memories(
    npc_name: str, player_id: str, heard: str | None, reply: str, against: str | None = None, *,
    times: int = 1,
) -> list[tuple[MemoryKind, str]]:
    """(kind, text) of the exchange's memories: what the player said is an observation (something the
    NPC heard, never an instruction), the reply a dialogue memory. ``against``: the canon fact what the
    player said contradicts; then it is remembered as the player's claim, with the fact. ``times``: how
    often this player has now said it (from 2 on, the memory says so: still the one player's word)."""
    said = f'{npc_name} replied to a player ({player_id}): "{reply}"'
    memories: list[tuple[MemoryKind, str]] = [("dialogue", said[:_MAX])]
    if heard:
        player = f"A player ({player_id})"
        text = (claim_text(player, npc_name, heard, against) if against
                else f'{player} said to {npc_name}: "{heard}"')
        if times > 1:
            text += f" ({player_id} has told {npc_name} this {times} times)"
        memories.insert(0, ("observation", text[:_MAX]))
    return memories
