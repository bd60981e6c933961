"""Base class of every event payload: frozen, strict, tied to one topic and schema version."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from npcworld.contracts.topics import Topic

__all__ = ["EventPayload"]


class EventPayload(BaseModel):
    """A payload model; subclasses name their event type, schema version and topic."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_type: ClassVar[str]
    schema_version: ClassVar[int] = 1
    topic: ClassVar[Topic]
