"""What an NPC perceives in one step: vision radius, attention bandwidth, own arena only, changes only.

Numbers from DESIGN.md ("What the reference implementation actually does"): vision radius 8 tiles,
attention bandwidth 8 (the nearest events first), only events in the NPC's own arena; spatial memory
grows with every place within the vision radius.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from services.perception.domain.layout import Layout, Tile

__all__ = [
    "ATTENTION_BANDWIDTH",
    "VISION_RADIUS",
    "Body",
    "Percept",
    "StepPerception",
    "new_percepts",
    "perceive",
    "perceive_step",
    "seen_entity",
    "visible_places",
]

VISION_RADIUS = 8
ATTENTION_BANDWIDTH = 8


@dataclass(frozen=True)
class Body:
    """An NPC as perception sees it: where it is and what it is doing."""

    npc_id: str
    name: str
    arena: str | None
    tile: Tile | None
    activity: str | None


@dataclass(frozen=True)
class Percept:
    """One perceived entity: an object's state or another NPC's activity."""

    entity: str
    description: str
    subject: str
    predicate: str
    object: str
    location: str
    distance: float


def seen_entity(subject: str, location: str) -> str:
    """The entity an observation made by ``perceive`` is about (the key of what an NPC has seen): an object
    of the arena by its path, another NPC as ``npc:<id>``."""
    return subject if subject.startswith(f"{location}:") else f"npc:{subject}"


def _distance(a: Tile | None, b: Tile | None) -> float:
    if a is None or b is None:
        return 0.0
    return float(max(abs(a[0] - b[0]), abs(a[1] - b[1])))


def perceive(
    viewer: Body,
    bodies: list[Body],
    objects: dict[str, str],
    layout: Layout,
    radius: int = VISION_RADIUS,
    bandwidth: int = ATTENTION_BANDWIDTH,
) -> list[Percept]:
    """The ``bandwidth`` nearest things in the viewer's arena within ``radius`` tiles (untiled: whole arena).

    Args:
        viewer: the perceiving NPC.
        bodies: every NPC of the world (the viewer is skipped).
        objects: object path → current free-text state.
        layout: the world's places.

    Returns:
        Percepts, nearest first; ties by entity for a deterministic order.
    """
    if viewer.arena is None:
        return []
    arena = viewer.arena
    found: list[Percept] = []
    for path in layout.arena_objects(arena):
        tile = layout.objects[path]
        d = _distance(viewer.tile, tile)
        if layout.tiled and tile is not None and d > radius:
            continue
        name, state = path.rsplit(":", 1)[1], objects.get(path, "idle")
        found.append(Percept(seen_entity(path, arena), f"{name} is {state}", path, "is", state, arena, d))
    for body in bodies:
        if body.npc_id == viewer.npc_id or body.arena != arena:
            continue
        d = _distance(viewer.tile, body.tile)
        if layout.tiled and d > radius:
            continue
        activity = body.activity or "here"
        found.append(
            Percept(seen_entity(body.npc_id, arena), f"{body.name} is {activity}", body.npc_id, "is",
                    activity, arena, d)
        )
    found.sort(key=lambda p: (p.distance, p.entity))
    return found[:bandwidth]


def new_percepts(percepts: list[Percept], seen: dict[str, str]) -> list[Percept]:
    """Only what changed since the viewer last perceived it (an unchanged state is not observed again)."""
    return [p for p in percepts if seen.get(p.entity) != p.description]


def visible_places(viewer: Body, layout: Layout, radius: int = VISION_RADIUS) -> set[str]:
    """Arenas and objects within the vision radius (untiled worlds: the viewer's arena and its objects)."""
    if viewer.arena is None:
        return set()
    if not layout.tiled or viewer.tile is None:
        return {viewer.arena, *layout.arena_objects(viewer.arena)}
    x, y = viewer.tile
    places = {viewer.arena}
    for dx in range(-radius, radius + 1):
        for dy in range(-radius, radius + 1):
            arena = layout.tile_arena.get((x + dx, y + dy))
            if arena is not None:
                places.add(arena)
    for path, tile in layout.objects.items():
        if tile is not None and _distance(viewer.tile, tile) <= radius:
            places.add(path)
    return places


@dataclass(frozen=True)
class StepPerception:
    """What one NPC takes in during a step: new percepts and places it had not seen before."""

    npc_id: str
    percepts: tuple[Percept, ...]
    places: tuple[str, ...]


def perceive_step(
    bodies: list[Body],
    objects: dict[str, str],
    layout: Layout,
    seen: dict[str, dict[str, str]],
    known: dict[str, set[str]],
    radius: int = VISION_RADIUS,
    bandwidth: int = ATTENTION_BANDWIDTH,
    viewers: Collection[str] | None = None,
) -> list[StepPerception]:
    """Every NPC's perception of one step, in NPC order; NPCs that take in nothing new are left out.

    Args:
        seen: npc → entity → what it last perceived of that entity.
        known: npc → places in its spatial memory.
        viewers: the NPCs that perceive this step (level of detail: those in full detail); None: all.
            Every body can still be seen.
    """
    out = []
    for viewer in bodies:
        if viewers is not None and viewer.npc_id not in viewers:
            continue
        fresh = new_percepts(
            perceive(viewer, bodies, objects, layout, radius, bandwidth), seen.get(viewer.npc_id, {})
        )
        places = sorted(visible_places(viewer, layout, radius) - known.get(viewer.npc_id, set()))
        if fresh or places:
            out.append(StepPerception(viewer.npc_id, tuple(fresh), tuple(places)))
    return out
