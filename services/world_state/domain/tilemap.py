"""The collision grid of a built-in world and A* path finding over it (4-neighbour moves, a tile per step)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from npcworld.contracts import TileMap

__all__ = ["Grid", "Tile", "find_path"]

Tile = tuple[int, int]


@dataclass(frozen=True)
class Grid:
    """Walkable tiles of a tile map (``#`` blocks)."""

    width: int
    height: int
    blocked: frozenset[Tile]

    @classmethod
    def from_map(cls, tile_map: TileMap) -> Grid:
        blocked = {(x, y) for y, row in enumerate(tile_map.rows) for x, ch in enumerate(row) if ch == "#"}
        return cls(tile_map.width, tile_map.height, frozenset(blocked))

    def walkable(self, tile: Tile) -> bool:
        x, y = tile
        return 0 <= x < self.width and 0 <= y < self.height and tile not in self.blocked

    def neighbours(self, tile: Tile) -> list[Tile]:
        x, y = tile
        return [t for t in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)) if self.walkable(t)]

    def nearest_walkable(self, tile: Tile) -> Tile:
        """The walkable tile closest to ``tile`` (itself when walkable); ties broken by position."""
        if self.walkable(tile):
            return tile
        x, y = tile
        for radius in range(1, max(self.width, self.height)):
            ring = [
                (x + dx, y + dy)
                for dx in range(-radius, radius + 1)
                for dy in range(-radius, radius + 1)
                if max(abs(dx), abs(dy)) == radius
            ]
            found = sorted(t for t in ring if self.walkable(t))
            if found:
                return found[0]
        raise ValueError("the tile map has no walkable tile")


def find_path(grid: Grid, start: Tile, goal: Tile) -> list[Tile]:
    """Shortest 4-connected path from ``start`` to ``goal`` (both included), or [] when unreachable.

    A* with the Manhattan distance (admissible on a 4-neighbour grid); ties broken by tile order so the
    same inputs always give the same path.
    """
    if start == goal:
        return [start]
    if not grid.walkable(goal):
        return []

    def h(t: Tile) -> int:
        return abs(t[0] - goal[0]) + abs(t[1] - goal[1])

    frontier: list[tuple[int, int, Tile]] = [(h(start), 0, start)]
    came_from: dict[Tile, Tile] = {}
    cost: dict[Tile, int] = {start: 0}
    while frontier:
        _, g, current = heapq.heappop(frontier)
        if current == goal:
            path = [current]
            while current in came_from:
                current = came_from[current]
                path.append(current)
            return path[::-1]
        if g > cost[current]:
            continue
        for nxt in grid.neighbours(current):
            new_cost = g + 1
            if new_cost < cost.get(nxt, 1 << 30):
                cost[nxt] = new_cost
                came_from[nxt] = current
                heapq.heappush(frontier, (new_cost + h(nxt), new_cost, nxt))
    return []
