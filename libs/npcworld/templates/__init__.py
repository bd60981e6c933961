"""Built-in world templates (JSON files here): the world tree, a tile map with collision, NPC personas.

A template is loaded by creating a world with ``template`` set to its name; world-state turns it into a
``WorldDefined`` event and one ``NpcCreated`` per persona. ``town-<npcs>-<seed>`` names a generated town
(``npcworld.templates.generator``), built the same in every process that loads it.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from npcworld.contracts import ArenaDef, NpcCreated, SectorDef, TileMap, WorldDefined
from npcworld.errors import NotFoundError

__all__ = ["Template", "TemplateSector", "list_templates", "load_template", "template_exists"]


class TemplateSector(BaseModel):
    """A building or open area of a template: its lot rectangle, whether it is walled, and its doors."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    area: tuple[int, int, int, int]
    walls: bool = True
    doors: tuple[tuple[int, int], ...] = ()
    arenas: tuple[ArenaDef, ...] = Field(min_length=1)


class Template(BaseModel):
    """A world template as stored in ``<name>.json``; ``stories`` names what the simulation report tracks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    start_time: datetime
    step_seconds: float = 10
    width: int = Field(ge=1, le=1000)
    height: int = Field(ge=1, le=1000)
    sectors: tuple[TemplateSector, ...]
    npcs: tuple[NpcCreated, ...]
    stories: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def tile_map(self) -> TileMap:
        """Walkable everywhere except the walls of walled sectors (their doors stay open)."""
        grid = [["."] * self.width for _ in range(self.height)]
        for sector in self.sectors:
            if not sector.walls:
                continue
            x0, y0, x1, y1 = sector.area
            doors = set(sector.doors)
            for x in range(x0, x1 + 1):
                for y in range(y0, y1 + 1):
                    if (x in (x0, x1) or y in (y0, y1)) and (x, y) not in doors:
                        grid[y][x] = "#"
        return TileMap(width=self.width, height=self.height, rows=tuple("".join(r) for r in grid))

    def definition(self, template_name: str) -> WorldDefined:
        sectors = tuple(SectorDef(name=s.name, arenas=s.arenas) for s in self.sectors)
        return WorldDefined(
            sectors=sectors,
            tile_map=self.tile_map(),
            source="template",
            template=template_name,
            step_seconds=self.step_seconds,
        )

    def personas(self, world_id: str) -> tuple[NpcCreated, ...]:
        """The NPCs with their places prefixed by the world id (``world:sector:arena``)."""

        def local(path: str) -> str:
            return f"{world_id}:{path}"

        return tuple(
            npc.model_copy(
                update={
                    "location": local(npc.location) if npc.location else None,
                    "known_places": tuple(local(p) for p in npc.known_places),
                }
            )
            for npc in self.npcs
        )


def list_templates() -> list[str]:
    """Names of the built-in templates."""
    files = resources.files(__name__).iterdir()
    return sorted(f.name.removesuffix(".json") for f in files if f.name.endswith(".json"))


def template_exists(name: str) -> bool:
    """A built-in template's name, or a generated town's (``town-<npcs>-<seed>``, 25 to 10,000 NPCs)."""
    from npcworld.templates.generator import parse_generated

    return name in list_templates() or parse_generated(name) is not None


@cache
def load_template(name: str) -> Template:
    """Parse a built-in template, or generate the town a generated town's name describes.

    Raises:
        NotFoundError: no template of that name.
    """
    from npcworld.templates.generator import generate_town, parse_generated

    if (generated := parse_generated(name)) is not None:
        return Template.model_validate(generate_town(*generated))
    if name not in list_templates():
        raise NotFoundError(f"no world template {name!r} (known: {', '.join(list_templates())})")
    raw: dict[str, Any] = json.loads(resources.files(__name__).joinpath(f"{name}.json").read_text())
    return Template.model_validate(raw)
