"""Dialogue handlers for who an NPC is: its persona (created or edited by a designer), whether it is retired,
and the places it knows (a commitment's place is resolved against them)."""

from __future__ import annotations

from npcworld.contracts import Envelope, NpcCreated, NpcPersonaChanged, NpcRetired, PlacesDiscovered
from npcworld.errors import PermanentError
from npcworld.eventstore import UnitOfWork
from services.dialogue.conversations import close_conversation
from services.dialogue.deps import DialogueDeps
from services.dialogue.repository import NpcProfile

__all__ = ["on_npc_created", "on_npc_retired", "on_persona_changed", "on_places_discovered"]


def _profile(p: NpcCreated | NpcPersonaChanged) -> NpcProfile:
    traits = ", ".join(p.traits)
    parts = (f"age {p.age}" if p.age is not None else "", traits, p.occupation or "")
    return NpcProfile(p.npc_id, p.name, "; ".join(part for part in parts if part))


async def on_npc_created(event: Envelope[NpcCreated], uow: UnitOfWork, deps: DialogueDeps) -> None:
    """Keep the NPC's name and persona for prompts, and the places it knows from the start."""
    created = event.payload
    await deps.repository.save_npc(uow.conn, event.tenant_id, event.world_id, _profile(created))
    if created.known_places:
        await deps.repository.add_places(
            uow.conn, event.tenant_id, event.world_id, created.npc_id, created.known_places
        )


async def on_persona_changed(event: Envelope[NpcPersonaChanged], uow: UnitOfWork, deps: DialogueDeps) -> None:
    """A designer's persona edit: the next lines are spoken from the new persona (intentions stay)."""
    changed = event.payload
    await deps.repository.save_npc(uow.conn, event.tenant_id, event.world_id, _profile(changed))


async def on_npc_retired(event: Envelope[NpcRetired], uow: UnitOfWork, deps: DialogueDeps) -> None:
    """No conversation opens with a retired NPC from now on, and any it is in ends now (nobody spoke the
    last line); its relationships stay readable."""
    retired = event.payload
    t, w = event.tenant_id, event.world_id
    await deps.repository.retire(uow.conn, t, w, retired.npc_id)
    for conversation in await deps.repository.open_conversations(uow.conn, t, w, (retired.npc_id,)):
        await close_conversation(uow, deps, event, conversation, None)


async def on_places_discovered(
    event: Envelope[PlacesDiscovered], uow: UnitOfWork, deps: DialogueDeps
) -> None:
    """Remember the places the NPC knows (a commitment's place is resolved against them)."""
    found = event.payload
    if event.npc_id is None:
        raise PermanentError("PlacesDiscovered without npc_id")
    await deps.repository.add_places(uow.conn, event.tenant_id, event.world_id, event.npc_id, found.paths)
