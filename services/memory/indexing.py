"""Background upkeep of per-stream HNSW indexes: build one for each large stream, drop those of gone streams.

A stream past MEMORY_OWN_INDEX_MIN memories is searched in an index of its own, so a query never walks
other NPCs' vectors, and no index holds the vectors of streams that are ranked by an exact scan; until it is
built, the stream's relevance search sorts it exactly. One process at a time does the upkeep
(an advisory lock), and each build runs CONCURRENTLY, so writes continue meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import psycopg

from services.memory.deps import MemoryDeps

__all__ = ["maintain_indexes", "maintain_indexes_once"]

logger = logging.getLogger(__name__)
_LOCK = 0x6D656D6F7279  # "memory"


async def maintain_indexes_once(database_url: str, deps: MemoryDeps) -> int:
    """One upkeep pass; returns how many indexes were built (0 when another process holds the lock)."""
    built = 0
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (_LOCK,))).fetchone()
        if not row or not row[0]:
            return 0
        try:
            dropped = await deps.repository.drop_orphan_indexes(conn)
            if dropped:
                logger.info("dropped %d per-stream indexes of deleted streams", dropped)
            min_count = deps.settings.own_index_min
            for stream in await deps.repository.streams_needing_own_index(conn, min_count):
                logger.info("building an HNSW index for npc_id=%s (%d memories)",
                            stream.npc.npc_id, stream.memory_count)
                await deps.repository.build_own_index(conn, stream)
                built += 1
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))
    return built


async def maintain_indexes(database_url: str, deps: MemoryDeps, stop: asyncio.Event) -> None:
    """Run upkeep passes every MEMORY_INDEX_INTERVAL_SECONDS until ``stop`` is set."""
    while not stop.is_set():
        try:
            await maintain_indexes_once(database_url, deps)
        except Exception:  # the loop boundary: a failed build is retried on the next pass
            logger.exception("per-stream index upkeep failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), deps.settings.index_interval_seconds)
