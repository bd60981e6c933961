"""Probes for integration tests: which of a consumer's connections are in a transaction when it calls the
model (a model call inside a transaction holds it open for seconds)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus
from psycopg_pool import AsyncConnectionPool

from npcworld.cause import current_cause
from npcworld.llm import LLM

__all__ = ["ProbedLLM", "TrackedPool"]


class TrackedPool:
    """The consumer's pool, noting which of its connections are checked out."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool
        self.in_use: set[AsyncConnection[Any]] = set()

    @asynccontextmanager
    async def connection(self, timeout: float | None = None) -> AsyncIterator[AsyncConnection[Any]]:
        async with self.pool.connection(timeout=timeout) as conn:
            self.in_use.add(conn)
            try:
                yield conn
            finally:
                self.in_use.discard(conn)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pool, name)


class ProbedLLM:
    """The LLM layer, recording for each call whether the consumer held a transaction open meanwhile."""

    def __init__(self, llm: LLM, pool: TrackedPool, calls: list[tuple[str, bool]],
                 chains: list[uuid.UUID | None] | None = None) -> None:
        self.llm, self.pool, self.calls, self.chains = llm, pool, calls, chains

    async def complete(self, kind: str, *args: Any, **kwargs: Any) -> Any:
        open_txn = any(c.info.transaction_status != TransactionStatus.IDLE for c in self.pool.in_use)
        self.calls.append((kind, open_txn))
        if self.chains is not None:  # the chain (correlation id) each call was made for, beside it
            cause = current_cause()
            self.chains.append(cause.correlation_id if cause else None)
        return await self.llm.complete(kind, *args, **kwargs)
