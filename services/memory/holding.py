"""Stepped worlds: a step's memory writes wait for its StepCompleted and are then applied in a fixed order.

During a step several services retrieve memories while the memory service records that same step's
observations, utterances and plans; which retrieval saw which new memory used to depend on consumer timing.
Holding the writes until the step's barrier makes every retrieval of a step see exactly the memories of
the earlier steps, so the same seed gives the same simulation. Worlds on a real-time clock (or none) are
written at once, as before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from npcworld.contracts import ClockChanged, Envelope
from npcworld.eventstore import UnitOfWork
from npcworld.stepping import steps
from services.memory.batching import prefetch_embeddings
from services.memory.deps import MemoryDeps

__all__ = ["held_in_stepped_worlds", "release_held"]

Handler = Callable[[Envelope, UnitOfWork, MemoryDeps], Awaitable[None]]


def held_in_stepped_worlds(handler: Handler) -> Handler:
    """``handler`` as is in other worlds; in a stepped world the event waits for the step's end."""

    async def hold_or_handle(event: Envelope, uow: UnitOfWork, deps: MemoryDeps) -> None:
        if await deps.repository.is_stepped(uow.conn, event.tenant_id, event.world_id):
            await deps.repository.hold(uow.conn, event)
        else:
            await handler(event, uow, deps)

    hold_or_handle.__doc__ = handler.__doc__
    return hold_or_handle


async def release_held(
    event: Envelope, uow: UnitOfWork, deps: MemoryDeps, handlers: Mapping[str, Handler]
) -> int:
    """Run the world's held events through their handlers (one embedding call for all); returns how many.

    Called for StepCompleted, and for a ClockChanged that stops the stepping. Each held event stays the
    cause of what its handler writes."""
    if isinstance(event.payload, ClockChanged) and steps(event.payload):
        return 0
    held = await deps.repository.take_held(uow.conn, event.tenant_id, event.world_id, accesses=False)
    if not held:
        return 0
    await prefetch_embeddings(held, deps)
    for original in held:
        caused = UnitOfWork(uow.conn, uow.store, cause=original)
        await handlers[original.type](original, caused, deps)
        uow.appended.extend(caused.appended)
    return len(held)
