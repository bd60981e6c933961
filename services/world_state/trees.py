"""Parsed world trees kept per process, keyed by the event that defined them (a definition never changes)."""

from __future__ import annotations

from uuid import UUID

from services.world_state.domain import WorldTree
from services.world_state.repository import WorldRepository

__all__ = ["TreeCache"]


class TreeCache:
    """Parses a world's definition once; a redefinition (new event id) replaces the entry."""

    def __init__(self) -> None:
        self._trees: dict[tuple[str, str], tuple[UUID, WorldTree]] = {}

    async def get(self, repo: WorldRepository, tenant_id: str, world_id: str) -> WorldTree | None:
        stored = await repo.definition(tenant_id, world_id)
        if stored is None:
            return None
        defined_by, definition = stored
        cached = self._trees.get((tenant_id, world_id))
        if cached is None or cached[0] != defined_by:
            cached = (defined_by, WorldTree.from_definition(world_id, definition))
            self._trees[(tenant_id, world_id)] = cached
        return cached[1]
