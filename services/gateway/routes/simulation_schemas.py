"""Request and response bodies of the simulation routes (never the tables)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from npcworld.contracts import SectorDef
from services.gateway.fields import Text, ZonedDatetime, blank_names

__all__ = [
    "ClockIn",
    "ClockOut",
    "DefinitionIn",
    "NpcStateOut",
    "ObjectOut",
    "ObjectStateIn",
    "PositionIn",
    "PositionsIn",
    "TemplateOut",
    "TreeOut",
]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TemplateOut(BaseModel):
    name: str
    title: str
    description: str
    npc_count: int
    start_time: datetime
    step_seconds: float


class DefinitionIn(_In):
    sectors: list[SectorDef] = Field(min_length=1, description="sectors → arenas → objects; no tile map")

    @field_validator("sectors")
    @classmethod
    def _names_say_something(cls, sectors: list[SectorDef]) -> list[SectorDef]:
        blank = blank_names(sectors, "sectors")
        if blank:
            raise ValueError(f"must not be blank (whitespace only): {', '.join(blank[:5])}")
        return sectors


class ObjectStateIn(_In):
    object_path: Text = Field(min_length=1, max_length=400, description="world:sector:arena:object")
    state: Text = Field(min_length=1, max_length=400, examples=["burning"])


class PositionIn(_In):
    npc_id: Text = Field(min_length=1, max_length=100)
    path: Text = Field(min_length=1, max_length=400, description="world:sector:arena[:object] the NPC is in")


class PositionsIn(_In):
    moves: list[PositionIn] = Field(min_length=1, max_length=1000)


class ClockIn(_In):
    paused: bool | None = None
    mode: Literal["realtime", "fast", "stepped"] | None = None
    speed: float | None = Field(
        default=None, gt=0, le=100000, description="world seconds per wall second (fast)"
    )
    step_seconds: float | None = Field(default=None, gt=0, le=86400)
    until: ZonedDatetime | None = Field(
        default=None, description="stop by itself on reaching this world time"
    )
    focus: list[Annotated[str, Field(min_length=1, max_length=500)]] | None = Field(
        default=None,
        max_length=200,
        description="level of detail: the places (world tree paths: a sector, an arena…) where NPCs run in "
        "full detail; NPCs elsewhere run coarse (hourly actions, no per-step perception or reactions) until "
        "they come into one. `null` turns it off (every NPC in full detail, the default); omitted: unchanged",
    )


class ClockOut(BaseModel):
    world_time: datetime
    step: int
    step_seconds: float
    mode: Literal["realtime", "fast", "stepped"]
    speed: float | None
    paused: bool
    focus: list[str] | None = Field(
        default=None, description="level of detail: the focus places; null when every NPC is in full detail"
    )


class ObjectOut(BaseModel):
    path: str
    state: str


class TreeOut(BaseModel):
    world_id: str
    source: str
    template: str | None
    tiled: bool
    sectors: list[dict[str, Any]]
    objects: list[ObjectOut]
    tile_rows: list[str] | None = None


class NpcStateOut(BaseModel):
    npc_id: str
    location: str | None
    tile: tuple[int, int] | None
    walking_to: str | None
    steps_left: int
    action: str | None
    emoji: str
    action_end: datetime | None
    latest_action: dict[str, Any] | None
    plan: dict[str, Any] | None
    known_places: list[str]
