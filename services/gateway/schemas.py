"""Request and response bodies of the REST API (never the tables)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.gateway.fields import Text, ZonedDatetime

__all__ = [
    "Accepted",
    "EventOut",
    "ForkIn",
    "NotReady",
    "NpcIn",
    "NpcOut",
    "PerceptionIn",
    "Problem",
    "ProblemField",
    "ReplyPending",
    "WorldIn",
    "WorldOut",
]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WorldIn(_In):
    name: Text = Field(min_length=1, max_length=200)
    start_time: ZonedDatetime = Field(description="World time at which the world starts (ISO 8601 with zone)")
    world_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{1,100}$")
    template: str | None = Field(
        default=None, max_length=100, description="Built-in template to load (GET /v1/templates lists them)"
    )


class WorldReadiness(BaseModel):
    """How far the world's set-up calls (creation, NPCs, tree) have been taken in by the world state."""

    ready: bool = Field(description="the clock exists and every NPC is known to the world state")
    clock: bool = Field(description="GET/POST .../clock answer (a studio world has one from its creation)")
    tree: bool = Field(description="the world tree is in (positions, object states and /tree answer)")
    npcs_known: int = Field(description="NPCs the world state has taken in, of npc_count")


class WorldOut(BaseModel):
    world_id: str
    name: str
    template: str | None
    start_time: datetime | None
    forked_from: str | None
    npc_count: int
    readiness: WorldReadiness | None = Field(
        default=None, description="set-up progress (GET of one world only): poll it after the set-up calls"
    )


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
    retired: bool = Field(default=False, description="retired by a designer: it no longer acts or perceives")


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


class Accepted(BaseModel):
    """A 202: the event is stored; what the services make of it shows up in the event log."""

    event_id: str = Field(description="the appended event")


class ReplyPending(Accepted):
    """A chat or interview whose reply has not come yet (``wait=false``, or the timeout passed)."""

    status: Literal["pending"] = Field(description="the reply will follow the event in the event log")


class NotReady(BaseModel):
    status: Literal["not ready"]
    database: bool = Field(description="whether the database answered")


class ProblemField(BaseModel):
    field: str = Field(description="a dotted body path, a query or header name, or `request`")
    message: str


class Problem(BaseModel):
    """RFC 9457 problem details: the body of every error answer, as ``application/problem+json``."""

    type: str = Field(description="always `about:blank`: the status and title say what happened")
    title: str = Field(description="the status's reason phrase (or a short summary)")
    status: int = Field(ge=400, le=599, description="the HTTP status again")
    detail: str = Field(description="what was wrong with this request, for a person to read")
    errors: list[ProblemField] = Field(
        default_factory=list, description="one entry per offending field (on 422, and on a 409 about a field)"
    )
