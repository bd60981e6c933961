"""Parsed world layouts kept per process, keyed by the event that defined them."""

from __future__ import annotations

from uuid import UUID

from services.perception.domain import Layout
from services.perception.repository import PerceptionRepository

__all__ = ["LayoutCache"]


class LayoutCache:
    """Parses a world's definition once; a redefinition (new event id) replaces the entry."""

    def __init__(self) -> None:
        self._layouts: dict[str, tuple[UUID, Layout]] = {}

    async def get(self, repo: PerceptionRepository, world_id: str) -> Layout | None:
        stored = await repo.definition(world_id)
        if stored is None:
            return None
        cached = self._layouts.get(world_id)
        if cached is None or cached[0] != stored[0]:
            cached = (stored[0], Layout.from_definition(world_id, stored[1]))
            self._layouts[world_id] = cached
        return cached[1]
