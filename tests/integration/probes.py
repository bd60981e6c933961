"""Probes for integration tests: whether the task calling the model holds one of the consumer's connections in
a transaction (a model call inside a transaction holds it open for seconds). Only the calling task's own
connections count: the consumer may meanwhile hold another transaction open for other events (its ingest
batch beside, or events left on the shared topics by an earlier test), which the call does not hold."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool

from npcworld.cause import current_cause
from npcworld.llm import LLM
from npcworld.slow_calls import current_transaction

__all__ = ["ProbedLLM", "TrackedPool"]


class TrackedPool:
    """The consumer's pool, noting which of its connections are checked out and by which task."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool
        self.in_use: dict[AsyncConnection[Any], asyncio.Task[Any] | None] = {}

    @asynccontextmanager
    async def connection(self, timeout: float | None = None) -> AsyncIterator[AsyncConnection[Any]]:
        async with self.pool.connection(timeout=timeout) as conn:
            self.in_use[conn] = asyncio.current_task()
            try:
                yield conn
            finally:
                self.in_use.pop(conn, None)

    def in_transaction(self) -> bool:
        """Whether the calling task holds one of the pool's connections with a transaction open."""
        me = asyncio.current_task()
        return any(task is me and conn.info.transaction_status != TransactionStatus.IDLE
                   for conn, task in list(self.in_use.items()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pool, name)


class ProbedLLM:
    """The LLM layer, recording for each call whether the consumer held a transaction open meanwhile."""

    def __init__(self, llm: LLM, pool: TrackedPool, calls: list[tuple[str, bool]],
                 chains: list[uuid.UUID | None] | None = None, worlds: list[str] | None = None) -> None:
        self.llm, self.pool, self.calls, self.chains, self.worlds = llm, pool, calls, chains, worlds

    async def complete(self, kind: str, *args: Any, **kwargs: Any) -> Any:
        # Its own connection in a transaction, or (for a task the handler started) the stretch the consumer
        # loop marks as inside its transaction.
        self.calls.append((kind, self.pool.in_transaction() or current_transaction() is not None))
        if self.chains is not None:  # the chain (correlation id) each call was made for, beside it
            cause = current_cause()
            self.chains.append(cause.correlation_id if cause else None)
        if self.worlds is not None:  # the world each call was made for, beside it
            self.worlds.append(kwargs["world_id"])
        return await self.llm.complete(kind, *args, **kwargs)
