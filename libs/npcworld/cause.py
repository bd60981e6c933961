"""The event being handled: work done for it elsewhere (a model call, a retrieval) names it as its cause.

The consumer loop, a gather step and a reflection job set the cause while they work for one event
(``handling``); the LLM layer records it with each call (``llm_calls.cause_event_id``) and the memory client
sends it with each retrieval (``CAUSE_HEADER``), so the ``MemoriesAccessed`` a retrieval appends is caused by
that event and shares its correlation. ``npcworld why`` follows these links from any event back to the
perception or request that started it.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["CAUSE_HEADER", "Cause", "current_cause", "handling", "parse_header"]

CAUSE_HEADER = "X-Npcworld-Cause"


@dataclass(frozen=True)
class Cause:
    """The handled event's id and its correlation id (the chain it belongs to)."""

    event_id: uuid.UUID
    correlation_id: uuid.UUID

    def header(self) -> str:
        return f"{self.event_id}/{self.correlation_id}"


_current: ContextVar[Cause | None] = ContextVar("npcworld_cause", default=None)


def current_cause() -> Cause | None:
    """The event this task is working for, if any."""
    return _current.get()


@contextlib.contextmanager
def handling(event_id: uuid.UUID, correlation_id: uuid.UUID) -> Iterator[Cause]:
    """Work inside this block is done for the event ``event_id`` (of chain ``correlation_id``)."""
    cause = Cause(event_id, correlation_id)
    token = _current.set(cause)
    try:
        yield cause
    finally:
        _current.reset(token)


def parse_header(value: str | None) -> Cause | None:
    """The cause a request names in ``CAUSE_HEADER`` (None when absent or malformed: a retrieval without a
    cause is still served, it just starts a chain of its own)."""
    if not value:
        return None
    try:
        event_id, correlation_id = value.split("/", 1)
        return Cause(uuid.UUID(event_id), uuid.UUID(correlation_id))
    except ValueError:
        return None
