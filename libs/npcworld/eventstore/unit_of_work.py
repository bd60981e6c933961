"""A unit of work: one database transaction in which a handler reads, writes and appends events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar

from psycopg import AsyncConnection

from npcworld.contracts import Envelope, EventPayload
from npcworld.eventstore.store import EventStore
from npcworld.telemetry import current_trace, instruments

__all__ = ["UnitOfWork"]

P = TypeVar("P", bound=EventPayload)


class UnitOfWork:
    """Wraps a connection that is inside a transaction; the caller commits or rolls back.

    ``cause`` is the event being handled (None for a command from the API): events created here
    inherit its tenant, world and correlation id, and name it as their causation.
    """

    def __init__(self, conn: AsyncConnection[Any], store: EventStore, cause: Envelope | None = None) -> None:
        self.conn = conn
        self.store = store
        self.cause = cause
        self.appended: list[Envelope] = []

    def new_event(
        self,
        payload: P,
        *,
        npc_id: str | None = None,
        world_time: datetime | None = None,
        tenant_id: str | None = None,
        world_id: str | None = None,
    ) -> Envelope[P]:
        """Build an envelope for ``payload``; unspecified fields come from the cause."""
        cause = self.cause
        tenant = tenant_id or (cause.tenant_id if cause else None)
        world = world_id or (cause.world_id if cause else None)
        when = world_time or (cause.world_time if cause else None)
        if tenant is None or world is None or when is None:
            raise ValueError("tenant_id, world_id and world_time are required without a causing event")
        return Envelope.new(
            payload,
            tenant_id=tenant,
            world_id=world,
            world_time=when,
            npc_id=npc_id if npc_id is not None else (cause.npc_id if cause else None),
            cause=cause,
            trace=current_trace(),
        )

    async def queue_for(self, tenant_id: str, stream_id: str) -> None:
        """Queue for a stream in this unit's transaction (``EventStore.queue_for``)."""
        await self.store.queue_for(self.conn, tenant_id, stream_id)

    async def append(
        self, stream_id: str, events: Sequence[Envelope], expected_version: int | None = None
    ) -> list[int]:
        """Append to the event store and outbox inside this unit's transaction."""
        seqs = await self.store.append(self.conn, stream_id, events, expected_version)
        self.appended.extend(events)
        instruments().appended.add(len(events))
        return seqs
