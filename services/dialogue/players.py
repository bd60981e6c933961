"""Players as people an NPC knows: a relationship per player, kept by the studio's player id across sessions.

A chat is one exchange: it counts toward familiarity and moves sentiment by the warmth of the NPC's reply,
the same rule as a conversation between NPCs (``domain.relationship``). The player's words stay something
the NPC heard: they change the relationship only through how the NPC itself answered.
"""

from __future__ import annotations

from npcworld.contracts import Envelope, PlayerSpoke, RelationshipChanged
from npcworld.contracts.players import PlayerForgotten
from npcworld.errors import PermanentError
from services.dialogue.deps import DialogueDeps
from services.dialogue.domain import after_conversation
from services.dialogue.repository import Conn, NpcProfile
from services.dialogue.speaking import Reply, Scene

__all__ = ["PLAYER_PREFIX", "after_chat", "familiarity_with", "forget_player", "is_forgotten", "player_other",
           "player_scene"]

# Relationship ``other_id`` of a player; NPC ids cannot hold a colon, so the two never meet.
PLAYER_PREFIX = "player:"


def player_other(player_id: str) -> str:
    return f"{PLAYER_PREFIX}{player_id}"


async def familiarity_with(conn: Conn, deps: DialogueDeps, event: Envelope[PlayerSpoke]) -> int:
    """How many chats the envelope's NPC has had with the speaking player (0 for an interview)."""
    said = event.payload
    assert event.npc_id is not None
    if said.mode != "chat":
        return 0
    other = player_other(said.player_id)
    rel = await deps.repository.relationship(conn, event.tenant_id, event.world_id, event.npc_id, other)
    return rel.familiarity


async def after_chat(
    conn: Conn, deps: DialogueDeps, event: Envelope[PlayerSpoke], reply: Reply
) -> RelationshipChanged:
    """Save the NPC's relationship with the player after this exchange; the event that records it."""
    said = event.payload
    assert event.npc_id is not None
    t, w, other = event.tenant_id, event.world_id, player_other(said.player_id)
    current = await deps.repository.relationship(conn, t, w, event.npc_id, other)
    summary = f"Chatted with player {said.player_id}; they last said: \"{said.text[:300]}\""
    rel = after_conversation(current, own_warmth=[reply.warmth], other_warmth=[], summary=summary)
    await deps.repository.save_relationship(conn, t, w, rel, event.world_time)
    return RelationshipChanged(other_id=other, familiarity=rel.familiarity, sentiment=rel.sentiment,
                               summary=summary)


async def is_forgotten(conn: Conn, deps: DialogueDeps, event: Envelope[PlayerSpoke]) -> bool:
    """Whether the speaking player has been forgotten since (the NPC then neither replies nor keeps it)."""
    said = event.payload
    return await deps.repository.player_forgotten(conn, event.tenant_id, said.player_id)


async def forget_player(conn: Conn, deps: DialogueDeps, event: Envelope[PlayerForgotten]) -> None:
    """``PlayerForgotten``: every NPC of the world drops its relationship with the player."""
    forgotten = event.payload
    await deps.repository.delete_relationships(conn, event.tenant_id, event.world_id,
                                               player_other(forgotten.player_id))


async def player_scene(conn: Conn, event: Envelope[PlayerSpoke], deps: DialogueDeps) -> Scene:
    """The NPC spoken to, and the player (or interviewer) as the one it answers."""
    said = event.payload
    if event.npc_id is None:
        raise PermanentError("PlayerSpoke without npc_id")
    npc = await deps.repository.profile(conn, event.tenant_id, event.world_id, event.npc_id)
    player = NpcProfile(said.player_id, said.interviewer or f"a visitor ({said.player_id})")
    return Scene(event.tenant_id, event.world_id, event.world_time, npc, player)
