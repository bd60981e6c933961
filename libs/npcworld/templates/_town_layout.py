"""The tile layout of a generated town: rows of equal lots, each row with a street below it.

A lot is 8 by 6 tiles: walls round it (unless open, like a park) with two doors onto the street, and two rooms
of 3 by 4 tiles inside. Lots stand one tile apart and rows two tiles (the street) apart, so every door opens
onto walkable ground that joins every street.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["LOT_HEIGHT", "LOT_WIDTH", "grid_for", "lot_origin", "lot_sector", "map_size", "streets_sector"]

LOT_WIDTH, LOT_HEIGHT = 8, 6
_PITCH_X, _PITCH_Y = LOT_WIDTH + 1, LOT_HEIGHT + 2  # a footpath column between lots, a street below a row

Rooms = tuple[tuple[str, tuple[str, ...]], ...]


def grid_for(lots: int) -> tuple[int, int]:
    """Columns and rows of lots for a roughly square map holding ``lots``."""
    cols = max(1, math.ceil(math.sqrt(lots * _PITCH_Y / _PITCH_X)))
    return cols, max(1, math.ceil(lots / cols))


def map_size(cols: int, rows: int) -> tuple[int, int]:
    return 1 + cols * _PITCH_X, 1 + rows * _PITCH_Y


def lot_origin(index: int, cols: int) -> tuple[int, int, int]:
    """The top-left tile of lot ``index`` and the row (street) it stands on."""
    row, col = divmod(index, cols)
    return 1 + col * _PITCH_X, 1 + row * _PITCH_Y, row


def lot_sector(name: str, origin: tuple[int, int], rooms: Rooms, walls: bool = True) -> dict[str, Any]:
    """A lot as a template sector: its rectangle, doors (when walled) and two rooms with their objects."""
    x0, y0 = origin
    x1, y1 = x0 + LOT_WIDTH - 1, y0 + LOT_HEIGHT - 1
    arenas = []
    for i, (room, objects) in enumerate(rooms[:2]):
        ax0 = x0 + 1 + 3 * i
        spots = ((ax0, y0 + 1), (ax0 + 2, y0 + 2), (ax0, y0 + 3))
        arenas.append({
            "name": room,
            "area": [ax0, y0 + 1, ax0 + 2, y1 - 1],
            "objects": [{"name": o, "tile": list(t)} for o, t in zip(objects, spots, strict=False)],
        })
    doors = [[x0 + 2, y1], [x0 + 5, y1]] if walls else []
    return {"name": name, "area": [x0, y0, x1, y1], "walls": walls, "doors": doors, "arenas": arenas}


def streets_sector(name: str, streets: list[str], width: int, height: int) -> dict[str, Any]:
    """The open ground: one arena per street (the two tile rows below each row of lots) and the footpaths
    (everything else; listed last, so a tile on a street is addressed to the street)."""
    arenas: list[dict[str, Any]] = []
    for row, street in enumerate(streets):
        y = 1 + row * _PITCH_Y + LOT_HEIGHT
        lamp = [min(width - 1, 4 + 9 * (row % 5)), y]
        arenas.append({"name": street, "area": [0, y, width - 1, y + 1],
                       "objects": [{"name": "lamp post", "tile": lamp}]})
    arenas.append({"name": "footpaths", "area": [0, 0, width - 1, height - 1], "objects": []})
    whole = [0, 0, width - 1, height - 1]
    return {"name": name, "area": whole, "walls": False, "doors": [], "arenas": arenas}
