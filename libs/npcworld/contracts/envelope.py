"""The one envelope every event travels in, and its JSON encoding.

``Envelope[P]`` names an envelope whose payload is a ``P``: handlers declare the payload class they take
(``event: Envelope[PlayerSpoke]``) and the route that calls them checks it once
(``npcworld.messaging.routes``). On the wire nothing changes: the payload is decoded by ``type``
(``npcworld.contracts.registry``), and a bare ``Envelope`` is one of any payload.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, Generic

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny
from typing_extensions import TypeIs, TypeVar

from npcworld.contracts.base import EventPayload
from npcworld.ids import event_id as new_event_id

__all__ = ["Envelope", "P", "TraceContext", "carries"]

# Covariant: an envelope is frozen, so an ``Envelope[PlayerSpoke]`` is an ``Envelope`` wherever one is read.
# The default keeps a bare ``Envelope`` (decoding, the store, the outbox) one of any payload.
P = TypeVar("P", bound=EventPayload, covariant=True, default=EventPayload)
Q = TypeVar("Q", bound=EventPayload)


class TraceContext(BaseModel):
    """W3C trace context captured when the event was created."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    traceparent: str | None = None
    tracestate: str | None = None


class Envelope(BaseModel, Generic[P]):
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
    payload: SerializeAsAny[P]

    @classmethod
    def new(
        cls,
        payload: Q,
        *,
        tenant_id: str,
        world_id: str,
        world_time: datetime,
        npc_id: str | None = None,
        cause: Envelope | None = None,
        trace: TraceContext | None = None,
    ) -> Envelope[Q]:
        """Build an envelope with a fresh time-ordered id (``npcworld.ids.event_id``); ``cause`` links
        causation and correlation."""
        event_id = new_event_id()
        envelope: Envelope[Q] = Envelope(
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
        return envelope

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


def carries(event: Envelope, payload: type[Q]) -> TypeIs[Envelope[Q]]:
    """Whether ``event``'s payload is a ``payload`` (narrowing the envelope, for code that takes events of
    several classes from one source: a replay, a table of held events)."""
    return isinstance(event.payload, payload)
