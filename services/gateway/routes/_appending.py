"""Appending a request's event wherever its stream ends, for streams many requests extend at once, and
folding what a request appended into the gateway's read models."""

from __future__ import annotations

from npcworld.contracts import Envelope
from npcworld.errors import AlreadyStoredError, ConcurrencyError
from npcworld.eventstore import UnitOfWork
from npcworld.eventstore.store import STREAM_IS
from services.gateway.handlers import PROJECTION

__all__ = ["append_at_end", "fold_appended"]


async def append_at_end(uow: UnitOfWork, stream_id: str, event: Envelope, tries: int = 3) -> None:
    """Append wherever the stream ends, in the caller's transaction (which should commit right after).

    Players chatting with one NPC, or a studio posting its perceptions, extend one stream at once. Racing
    for the next version made every loser retry, one winner per round: 12 concurrent chats to one NPC
    needed 12 rounds and some answered 409. A transaction lock on the stream's name queues them instead
    (``UnitOfWork.queue_for``, held until commit). The retry stays for writers that do not take the lock.

    A request run again under its ``Idempotency-Key`` after its first run stored the event (and was then cut
    short: the gateway killed before the answer was stored) makes the same event (``ids_repeatable_from``),
    which is found stored and not appended twice.
    """
    await uow.queue_for(event.tenant_id, stream_id)
    for attempt in range(tries):
        try:
            await uow.append(stream_id, [event])
            return
        except AlreadyStoredError:
            if await _stored(uow, stream_id, event):
                return
            raise
        except ConcurrencyError:
            if attempt == tries - 1:
                raise


async def _stored(uow: UnitOfWork, stream_id: str, event: Envelope) -> bool:
    """Whether ``event`` is stored in the tenant's ``stream_id`` as this same event (by id, type, NPC)."""
    cur = await uow.conn.execute(
        f"SELECT 1 FROM events WHERE event_id = %s AND {STREAM_IS} AND type = %s"
        " AND npc_id IS NOT DISTINCT FROM %s",
        (event.event_id, event.tenant_id, stream_id, event.type, event.npc_id),
    )
    return await cur.fetchone() is not None


async def fold_appended(uow: UnitOfWork) -> None:
    """Fold the events the request appended into the gateway's read models, in its transaction (and claim
    them for the gateway's consumer), so the studio reads its own writes at once."""
    await PROJECTION.apply_appended(uow.conn, uow.appended)
