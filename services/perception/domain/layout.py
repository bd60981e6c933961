"""Where things are in a defined world: arena rectangles, object tiles, and the arena of each tile."""

from __future__ import annotations

from dataclasses import dataclass

from npcworld.contracts import WorldDefined

__all__ = ["Layout", "Tile"]

Tile = tuple[int, int]


@dataclass(frozen=True)
class Layout:
    """The part of a world definition perception needs; ``tiled`` is False for studio worlds."""

    world_id: str
    arenas: tuple[str, ...]
    objects: dict[str, Tile | None]
    tile_arena: dict[Tile, str]
    tiled: bool

    @classmethod
    def from_definition(cls, world_id: str, definition: WorldDefined) -> Layout:
        arenas: list[str] = []
        objects: dict[str, Tile | None] = {}
        tile_arena: dict[Tile, str] = {}
        tiled = definition.tile_map is not None
        for sector in definition.sectors:
            for arena in sector.arenas:
                path = f"{world_id}:{sector.name}:{arena.name}"
                arenas.append(path)
                for obj in arena.objects:
                    objects[f"{path}:{obj.name}"] = obj.tile
                if tiled and arena.area is not None:
                    x0, y0, x1, y1 = arena.area
                    for x in range(x0, x1 + 1):
                        for y in range(y0, y1 + 1):
                            tile_arena.setdefault((x, y), path)  # the first arena in definition order wins
        return cls(world_id, tuple(arenas), objects, tile_arena, tiled)

    def arena_objects(self, arena: str) -> list[str]:
        return [path for path in self.objects if path.startswith(arena + ":")]
