"""Parsed world layouts kept per process, keyed by the event that defined them."""

from __future__ import annotations

from uuid import UUID

from services.perception.domain import Layout
from services.perception.repository import PerceptionRepository

__all__ = ["LayoutCache"]


class LayoutCache:
    """Parses a world's definition once; a redefinition (new event id) replaces the entry."""

    def __init__(self) -> None:
        self._layouts: dict[tuple[str, str], tuple[UUID, Layout]] = {}

    async def get(self, repo: PerceptionRepository, tenant_id: str, world_id: str) -> Layout | None:
        stored = await repo.definition(tenant_id, world_id)
        if stored is None:
            return None
        cached = self._layouts.get((tenant_id, world_id))
        if cached is None or cached[0] != stored[0]:
            cached = (stored[0], Layout.from_definition(world_id, stored[1]))
            self._layouts[(tenant_id, world_id)] = cached
        return cached[1]
