"""The event store: the append-only system of record, and the unit of work around it."""

from npcworld.eventstore.store import EventFilter, EventStore, StoredEvent
from npcworld.eventstore.unit_of_work import UnitOfWork

__all__ = ["EventFilter", "EventStore", "StoredEvent", "UnitOfWork"]
