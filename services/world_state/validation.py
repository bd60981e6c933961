"""A world's validator in the consumer loop: called before the poll's transaction opens (the gather step of
the ``ActionDecided`` route), its answer taken inside the transaction if the validator is still the one that
was called.

No call is made inside a transaction: an action whose validator was not called (it was set meanwhile, or
the gather step failed) gets the validator's default, and the event says why.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from npcworld.contracts import ActionDecided, ActionValidator, Envelope
from services.world_state.deps import WorldStateDeps
from services.world_state.domain import WorldTree
from services.world_state.domain.rules import judge
from services.world_state.domain.validation import Failure, Settled, applies, settle
from services.world_state.repository import WorldRepository
from services.world_state.validator_client import Consulted
from services.world_state.validator_store import ValidatorStore

__all__ = ["gather_validations", "validated"]

_NOT_CONSULTED = Failure("error", "the validator was not called (it was set while the action was being"
                                  " decided, or the call could not be made before the transaction)")


async def gather_validations(
    events: Sequence[Envelope[ActionDecided]], deps: WorldStateDeps, pool: AsyncConnectionPool
) -> Mapping[uuid.UUID, Consulted]:
    """Call the validators of a poll's decided actions, concurrently, each within its deadline; nothing
    is written. An action a declarative rule decides is not sent (rules are judged first)."""
    client = deps.validators
    if client is None:
        return {}
    gate = asyncio.Semaphore(deps.validator_concurrency)
    consulted: dict[uuid.UUID, Consulted] = {}

    async def one(event: Envelope[ActionDecided]) -> None:
        async with pool.connection() as conn:
            found = await _to_consult(conn, event)
        if found is not None:
            validator, secret = found
            async with gate:
                outcome = await client.consult(validator, secret, event)
            consulted[event.event_id] = Consulted(validator, outcome)

    await asyncio.gather(*(one(e) for e in events))
    return consulted


async def _to_consult(
    conn: AsyncConnection[Any], event: Envelope[ActionDecided]
) -> tuple[ActionValidator, str | None] | None:
    action = event.payload
    assert event.npc_id is not None
    store = ValidatorStore(conn)
    validator = await store.get(event.tenant_id, event.world_id)
    if validator is None or not applies(validator, event.npc_id, action):
        return None
    if judge(await WorldRepository(conn).rules(event.tenant_id, event.world_id), event.npc_id, action):
        return None
    return validator, await store.secret(event.tenant_id, validator.validator_id)


async def validated(
    event: Envelope, conn: AsyncConnection[Any], tree: WorldTree, action: ActionDecided,
    consulted: Consulted | None,
) -> Settled:
    """What the world's validator made of ``action`` (no validator, or one that does not see it: the
    action stands), from the answer ``consulted`` before the transaction."""
    assert event.npc_id is not None
    validator = await ValidatorStore(conn).get(event.tenant_id, event.world_id)
    if validator is None or not applies(validator, event.npc_id, action):
        return Settled((), action)
    fresh = consulted is not None and consulted.validator == validator
    outcome = consulted.outcome if consulted is not None and fresh else _NOT_CONSULTED
    return settle(validator, outcome, action, tree)

