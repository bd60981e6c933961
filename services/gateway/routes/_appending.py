"""Appending a request's event wherever its stream ends, for streams many requests extend at once, and
folding what a request appended into the gateway's read models."""

from __future__ import annotations

from npcworld.contracts import Envelope
from npcworld.errors import ConcurrencyError
from npcworld.eventstore import UnitOfWork
from services.gateway.handlers import PROJECTION

__all__ = ["append_at_end", "fold_appended"]


async def append_at_end(uow: UnitOfWork, stream_id: str, event: Envelope, tries: int = 3) -> None:
    """Append wherever the stream ends, in the caller's transaction (which should commit right after).

    Players chatting with one NPC, or a studio posting its perceptions, extend one stream at once. Racing
    for the next version made every loser retry, one winner per round: 12 concurrent chats to one NPC
    needed 12 rounds and some answered 409. A transaction lock on the stream's name queues them instead
    (``UnitOfWork.queue_for``, held until commit). The retry stays for writers that do not take the lock.
    """
    await uow.queue_for(event.tenant_id, stream_id)
    for attempt in range(tries):
        try:
            await uow.append(stream_id, [event])
            return
        except ConcurrencyError:
            if attempt == tries - 1:
                raise


async def fold_appended(uow: UnitOfWork) -> None:
    """Fold the events the request appended into the gateway's read models, in its transaction (and claim
    them for the gateway's consumer), so the studio reads its own writes at once."""
    await PROJECTION.apply_appended(uow.conn, uow.appended)
