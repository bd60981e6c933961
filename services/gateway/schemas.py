"""Request and response bodies of the REST API (never the tables)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from services.gateway.fields import Text, ZonedDatetime

__all__ = ["EventOut", "ForkIn", "NpcIn", "NpcOut", "PerceptionIn", "WorldIn", "WorldOut"]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WorldIn(_In):
    name: Text = Field(min_length=1, max_length=200)
    start_time: ZonedDatetime = Field(description="World time at which the world starts (ISO 8601 with zone)")
    world_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,100}$")
    template: str | None = Field(
        default=None, max_length=100, description="Built-in template to load (GET /v1/templates lists them)"
    )


class WorldOut(BaseModel):
    world_id: str
    name: str
    template: str | None
    start_time: datetime | None
    forked_from: str | None
    npc_count: int


class NpcIn(_In):
    npc_id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$")
    name: Text = Field(min_length=1, max_length=200)
    age: int | None = Field(default=None, ge=0, le=1000)
    traits: list[Text] = Field(default_factory=list, max_length=20)
    occupation: str | None = Field(default=None, max_length=200)
    seed: str = Field(
        default="", max_length=10000, description="Persona paragraph; ';' separates seed memories"
    )
    location: str | None = Field(default=None, max_length=300)


class NpcOut(BaseModel):
    npc_id: str
    name: str
    age: int | None
    traits: list[str]
    occupation: str | None
    location: str | None


class PerceptionIn(_In):
    description: Text = Field(min_length=1, max_length=2000)
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    location: str | None = None
    world_time: ZonedDatetime


class ForkIn(_In):
    at: ZonedDatetime = Field(description="World time to fork at (ISO 8601 with zone)")
    new_world_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,100}$")


class EventOut(BaseModel):
    seq: int = Field(description="position in the event store; the SSE event id")
    stream_id: str
    event: dict[str, Any]
