"""Replaying a world from its event log (pure): where each NPC is and what it does at a world time.

The log's ``NpcCreated`` (the starting place), ``NpcsMoved`` (the arena and tile after each step) and
``ActionStarted`` (what the NPC now does, with its emoji) are turned into ``Change`` records in log order;
the state at a time is every change up to it applied in order. The world page sends the same changes to
the browser, whose scrubber applies them the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

__all__ = ["Change", "NpcFrame", "Place", "changes_of", "places_of", "short", "state_at", "tree_of"]


class _Event(Protocol):
    @property
    def seq(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def npc_id(self) -> str | None: ...
    @property
    def world_time(self) -> datetime: ...
    @property
    def payload(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Change:
    """One NPC's position and/or action changed at ``at`` (None fields: unchanged)."""

    seq: int
    at: datetime
    npc_id: str
    path: str | None = None
    tile: tuple[int, int] | None = None
    description: str | None = None
    emoji: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "t": int(self.at.timestamp() * 1000), "npc": self.npc_id}
        for name in ("path", "tile", "description", "emoji"):
            value = getattr(self, name)
            if value is not None:
                out[name] = list(value) if name == "tile" else value
        return out


@dataclass(frozen=True)
class NpcFrame:
    npc_id: str
    name: str
    path: str | None = None
    tile: tuple[int, int] | None = None
    description: str = ""
    emoji: str = ""
    since: datetime | None = None


@dataclass(frozen=True)
class Place:
    """An arena of the world tree: ``world:sector:arena`` with its tile rectangle in tiled worlds."""

    path: str
    sector: str
    arena: str
    area: tuple[int, int, int, int] | None

    def centre(self) -> tuple[int, int] | None:
        if self.area is None:
            return None
        x0, y0, x1, y1 = self.area
        return (x0 + x1) // 2, (y0 + y1) // 2


def _tile(value: Any) -> tuple[int, int] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        return int(value[0]), int(value[1])
    return None


def _area(value: Any) -> tuple[int, int, int, int] | None:
    if isinstance(value, list | tuple) and len(value) == 4:
        return int(value[0]), int(value[1]), int(value[2]), int(value[3])
    return None


def changes_of(events: Iterable[_Event]) -> list[Change]:
    """The position and action changes the events make, in log order."""
    out: list[Change] = []
    for e in sorted(events, key=lambda e: e.seq):
        p = e.payload
        if e.type == "NpcCreated":
            out.append(Change(e.seq, e.world_time, str(p["npc_id"]), path=p.get("location")))
        elif e.type == "NpcsMoved":
            out += [Change(e.seq, e.world_time, str(m["npc_id"]), path=m.get("path"),
                           tile=_tile(m.get("tile"))) for m in p.get("moves", ())]
        elif e.type == "ActionStarted" and e.npc_id:
            out.append(Change(e.seq, e.world_time, e.npc_id, path=p.get("arrived_at"),
                              description=str(p.get("description", "")), emoji=str(p.get("emoji", ""))))
    return out


def state_at(
    names: dict[str, str], changes: Sequence[Change], at: datetime | None = None,
    start: dict[str, NpcFrame] | None = None,
) -> dict[str, NpcFrame]:
    """Each NPC of ``names`` (id → name) as the changes up to ``at`` (None: all of them) leave it, starting
    from ``start`` (the state before the first change)."""
    state: dict[str, list[Any]] = {}
    for n, name in names.items():
        f = (start or {}).get(n) or NpcFrame(n, name)
        state[n] = [f.path, f.tile, f.description, f.emoji, f.since]
    for c in changes:
        if at is not None and c.at > at:
            break
        frame = state.get(c.npc_id)
        if frame is None:
            continue
        if c.path is not None:
            frame[0], frame[1] = c.path, c.tile
        elif c.tile is not None:
            frame[1] = c.tile
        if c.description is not None:
            frame[2], frame[3], frame[4] = c.description, c.emoji or "", c.at
    return {n: NpcFrame(n, names[n], *frame) for n, frame in state.items()}


def places_of(world_id: str, sectors: Sequence[dict[str, Any]]) -> list[Place]:
    """Every arena of a ``WorldDefined`` payload's sectors."""
    return [
        Place(f"{world_id}:{s['name']}:{a['name']}", s["name"], a["name"],
              _area(a.get("area")))
        for s in sectors for a in s.get("arenas", ())
    ]


Tree = list[tuple[str, list[tuple[Place, list[NpcFrame]]]]]


def tree_of(places: Sequence[Place], frames: Iterable[NpcFrame]) -> Tree:
    """Sectors → arenas → the NPCs in each (an NPC at an object is in the object's arena)."""
    here: dict[str, list[NpcFrame]] = {}
    for f in frames:
        if f.path:
            arena = ":".join(f.path.split(":")[:3])
            here.setdefault(arena, []).append(f)
    sectors: dict[str, list[tuple[Place, list[NpcFrame]]]] = {}
    for p in places:
        sectors.setdefault(p.sector, []).append((p, sorted(here.get(p.path, []), key=lambda f: f.npc_id)))
    return list(sectors.items())


def short(frame: NpcFrame, width: int = 40) -> str:
    """The emoji summary of what an NPC does, as the replay shows it above the NPC."""
    text = frame.description if len(frame.description) <= width else frame.description[: width - 1] + "…"
    return f"{frame.emoji} {text}".strip()
