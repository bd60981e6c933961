"""The memory streams a transaction will write, queued for at its start in one order.

A memory writer queues for each NPC's stream before appending to it (``record_memories``), holding its place
until it commits. The memory service writes from transactions handled side by side (the world's batch, a
step's release, player traffic's ingest and chats beside them), each over several NPCs in an order of its
own: one that held Ines's stream and waited for Kofi's while another held Kofi's and waited for Ines's was a
deadlock, broken by Postgres only after a second and by failing one of them (a step's release then fell back
to rating its memories inside the StepCompleted's transaction). Queuing for every stream a transaction will
write first, in the store's one order (``EventStore.queue_for_all``), makes them queue behind each other
instead.
"""

from __future__ import annotations

from collections.abc import Iterable

from npcworld.contracts import Envelope, NpcCreated, UtteranceSpoken
from npcworld.eventstore import EventStore
from services.memory.domain import NpcRef, memory_stream_id
from services.memory.repository import Conn

__all__ = ["queue_for_streams", "stream_written"]

_STORE = EventStore()


def stream_written(event: Envelope) -> tuple[str, str] | None:
    """The (tenant, memory stream) whose memories ``event``'s handler records (None: it records none
    there): an utterance is remembered by its listener, a new NPC's seed by the NPC, the rest by the
    event's NPC."""
    payload, npc = event.payload, event.npc_id
    if isinstance(payload, UtteranceSpoken):
        npc = payload.listener_id
    elif isinstance(payload, NpcCreated):
        npc = payload.npc_id
    if npc is None:
        return None
    return event.tenant_id, memory_stream_id(NpcRef(event.tenant_id, event.world_id, npc))


async def queue_for_streams(conn: Conn, events: Iterable[Envelope]) -> None:
    """Queue, in the store's one order, for the streams these events' handlers will record into."""
    await _STORE.queue_for_all(conn, [s for e in events if (s := stream_written(e)) is not None])
