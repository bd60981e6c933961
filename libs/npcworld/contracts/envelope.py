"""The one envelope every event travels in, and its JSON encoding."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from npcworld.contracts.base import EventPayload
from npcworld.ids import uuid7

__all__ = ["Envelope", "TraceContext"]


class TraceContext(BaseModel):
    """W3C trace context captured when the event was created."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    traceparent: str | None = None
    tracestate: str | None = None


class Envelope(BaseModel):
    """Metadata shared by every event plus its typed payload."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_id: uuid.UUID
    type: str
    schema_version: int = Field(ge=1)
    tenant_id: str = Field(min_length=1, max_length=100)
    world_id: str = Field(min_length=1, max_length=100)
    npc_id: str | None = Field(default=None, max_length=100)
    world_time: datetime
    recorded_at: datetime
    causation_id: uuid.UUID | None = None
    correlation_id: uuid.UUID
    forked_from: uuid.UUID | None = Field(
        default=None,
        description="set on copies made by a world fork: projections apply them, reactions skip them",
    )
    trace: TraceContext = TraceContext()
    payload: SerializeAsAny[EventPayload]

    @classmethod
    def new(
        cls,
        payload: EventPayload,
        *,
        tenant_id: str,
        world_id: str,
        world_time: datetime,
        npc_id: str | None = None,
        cause: Envelope | None = None,
        trace: TraceContext | None = None,
    ) -> Envelope:
        """Build an envelope with a fresh time-ordered id; ``cause`` links causation and correlation."""
        event_id = uuid7()
        return cls(
            event_id=event_id,
            type=payload.event_type,
            schema_version=payload.schema_version,
            tenant_id=tenant_id,
            world_id=world_id,
            npc_id=npc_id,
            world_time=world_time,
            recorded_at=datetime.now(UTC),
            causation_id=cause.event_id if cause else None,
            correlation_id=cause.correlation_id if cause else event_id,
            trace=trace or TraceContext(),
            payload=payload,
        )

    @property
    def key(self) -> str | None:
        """The partition key the topic catalogue prescribes for this event."""
        match self.payload.topic.key:
            case "npc_id":
                return self.npc_id
            case "world_id":
                return self.world_id
            case _:
                return None

    def to_json(self) -> bytes:
        """Encode as compact JSON bytes (the Kafka message value)."""
        return self.model_dump_json().encode()

    def header_fields(self) -> dict[str, Any]:
        """Everything but the payload, as JSON-compatible values."""
        return self.model_dump(mode="json", exclude={"payload"})
