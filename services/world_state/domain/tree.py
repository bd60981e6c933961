"""The world tree (world → sectors → arenas → objects) with path resolution and tile addresses."""

from __future__ import annotations

from dataclasses import dataclass

from npcworld.contracts import WorldDefined
from services.world_state.domain.tilemap import Grid, Tile

__all__ = ["WorldTree", "arena_of"]


def arena_of(path: str) -> str:
    """The ``world:sector:arena`` prefix of a path (an object path names its arena first)."""
    return ":".join(path.split(":")[:3])


@dataclass(frozen=True)
class WorldTree:
    """Every place of a world by path; in tiled worlds also each arena's tiles and each object's tile."""

    world_id: str
    arenas: dict[str, tuple[int, int, int, int] | None]
    objects: dict[str, tuple[str, Tile | None]]
    grid: Grid | None

    @classmethod
    def from_definition(cls, world_id: str, definition: WorldDefined) -> WorldTree:
        arenas: dict[str, tuple[int, int, int, int] | None] = {}
        objects: dict[str, tuple[str, Tile | None]] = {}
        for sector in definition.sectors:
            for arena in sector.arenas:
                arena_path = f"{world_id}:{sector.name}:{arena.name}"
                arenas[arena_path] = arena.area
                for obj in arena.objects:
                    objects[f"{arena_path}:{obj.name}"] = (obj.state, obj.tile)
        grid = Grid.from_map(definition.tile_map) if definition.tile_map else None
        return cls(world_id, arenas, objects, grid)

    def knows(self, path: str) -> bool:
        return path in self.arenas or path in self.objects

    def resolve(self, path: str) -> str | None:
        """The known place a path names, tolerating another world prefix (``x:sector:arena``); else None."""
        if self.knows(path):
            return path
        parts = path.split(":")
        if len(parts) >= 3:
            local = ":".join([self.world_id, *parts[1:]])
            if self.knows(local):
                return local
        return None

    def target_tile(self, path: str) -> Tile | None:
        """Where an NPC heading for ``path`` stands: next to the object, or the arena's centre."""
        if self.grid is None:
            return None
        if path in self.objects:
            tile = self.objects[path][1]
            if tile is not None:
                return self.grid.nearest_walkable(tile)
        area = self.arenas.get(arena_of(path))
        if area is None:
            return None
        x0, y0, x1, y1 = area
        return self.grid.nearest_walkable(((x0 + x1) // 2, (y0 + y1) // 2))

    def address(self, tile: Tile) -> str | None:
        """The arena path whose rectangle holds ``tile`` (the first one in definition order)."""
        x, y = tile
        for path, area in self.arenas.items():
            if area is not None and area[0] <= x <= area[2] and area[1] <= y <= area[3]:
                return path
        return None
