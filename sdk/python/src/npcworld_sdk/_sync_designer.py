"""The sync client's designer edits: change an NPC's persona, retire an NPC, correct or forget a memory
(``Client`` holds them with the rest). Each is an event on the server, so forks and replays keep it."""

from __future__ import annotations

from npcworld_sdk._models import Accepted, NpcOut, NpcPatch
from npcworld_sdk._request import params, path
from npcworld_sdk._sync_base import SyncBase

__all__ = ["Designer"]


class Designer(SyncBase):
    """Designers' edits of NPCs and their memories (the ``write`` scope)."""

    def update_npc(self, world_id: str, npc_id: str, patch: NpcPatch) -> NpcOut:
        """Change the persona fields set in ``patch`` (``NpcPatch(occupation=None)`` clears one); the NPC
        as it is now. A retired NPC is a ``ConflictError``."""
        return self.fetch(
            NpcOut,
            "PATCH",
            path("/v1/worlds/{}/npcs/{}", world_id, npc_id),
            json=patch.model_dump(mode="json", exclude_unset=True),
        )

    def retire_npc(self, world_id: str, npc_id: str, *, reason: str | None = None) -> None:
        """The NPC stops perceiving, planning, acting and talking; its history stays readable."""
        url = path("/v1/worlds/{}/npcs/{}", world_id, npc_id)
        self.request("DELETE", url, params=params(reason=reason))

    def correct_memory(self, world_id: str, npc_id: str, memory_id: str, description: str) -> Accepted:
        """Replace a memory's text; the memory service re-embeds it a moment later (answer: the event)."""
        return self.fetch(
            Accepted,
            "PATCH",
            path("/v1/worlds/{}/npcs/{}/memories/{}", world_id, npc_id, memory_id),
            json={"description": description},
        )

    def forget_memory(self, world_id: str, npc_id: str, memory_id: str) -> Accepted:
        """Remove a memory from retrieval and listings (applied by the memory service a moment later)."""
        return self.fetch(
            Accepted, "DELETE", path("/v1/worlds/{}/npcs/{}/memories/{}", world_id, npc_id, memory_id)
        )
