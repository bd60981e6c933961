"""Where a poll is cut so that each gather step reads what the poll's earlier events wrote.

A gather step (``npcworld.messaging.routes``) reads outside the transaction, so it sees only what is
committed. An earlier event of the same poll whose apply step writes state (a projection, or a route that
does not gather) commits only with its transaction: a gather for a later event read the state from before
it, and that event's apply step, finding what the gather read changed, worked it out again inside the
transaction (its model calls made while the transaction held back the outbox relay). So a poll is processed
in segments, gathered and applied one after another: a segment ends before a gathered event that follows
such a writer. Gathered events one after another stay in one segment: each route's gather orders them as
its apply steps will, and a route whose gathers run concurrently (player replies) keeps its concurrency.
"""

from __future__ import annotations

from collections.abc import Container, Sequence

from npcworld.contracts import decode_envelope
from npcworld.errors import PermanentError
from npcworld.messaging.record import KafkaRecord, header

__all__ = ["gather_segments", "record_type"]


def gather_segments(
    types: Sequence[str | None], gathered: Container[str], applied: Container[str]
) -> list[tuple[int, int]]:
    """Half-open ranges covering ``types`` in order (one, ``(0, 0)``, when empty): a range ends before a
    gathered type that follows, in the same range, a type applied here that is not gathered. ``None``: a
    record whose type is unknown (it is dead-lettered, not applied)."""
    segments: list[tuple[int, int]] = []
    start, written = 0, False
    for i, kind in enumerate(types):
        if kind is None:
            continue
        if kind in gathered:
            if written:
                segments.append((start, i))
                start, written = i, False
        elif kind in applied:
            written = True
    segments.append((start, len(types)))
    return segments


def record_type(record: KafkaRecord) -> str | None:
    """The record's event type: its ``event_type`` header (the relay sets it), else from its value."""
    if (kind := header(record, "event_type")) is not None:
        return kind
    try:
        return decode_envelope(record.value or b"").type
    except PermanentError:
        return None
