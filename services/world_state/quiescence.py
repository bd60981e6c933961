"""Has the pipeline digested the last step? Stepped clocks wait for this before the next tick.

The pipeline is idle when, in one database snapshot:

- every live consumer loop (one that heartbeated in ``consumer_heartbeats`` lately) has processed or
  dead-lettered every stored event of the types it handles (``processed_events`` is written in the same
  transaction as the handler's effects, so "processed" means its new events are stored too);
- the outbox is empty (everything stored reached Kafka);
- no reflection run is waiting for its Celery job (jobs work outside any consumer transaction).

This is exact rather than a guess from quiet time: a consumer waiting in its retry backoff holds no
transaction but still owes its events, so the clock waits for it instead of stepping on without cognition.
Only events after the last idle point are checked (``since``), so a check costs a few index lookups.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

from npcworld.messaging.heartbeat import LIVE_SECONDS, owed_sql

__all__ = ["PipelineProbe", "PipelineState"]

# How far back the first check looks when the probe has no idle point yet.
_FIRST_LOOKBACK = 20_000
_NO_END = 2**62

_SNAPSHOT = f"""
WITH {owed_sql()}
SELECT (SELECT coalesce(max(seq), 0) FROM events),
       (SELECT count(*) FROM outbox),
       (SELECT count(*) FROM reflection_npcs WHERE pending_run IS NOT NULL),
       (SELECT coalesce(array_agg(DISTINCT consumer ORDER BY consumer), '{{}}') FROM owed),
       (SELECT count(*) FROM owed)
"""


@dataclass(frozen=True)
class PipelineState:
    """One snapshot: the newest event, what is still owed, and by whom."""

    max_seq: int
    outbox: int
    pending_reflections: int
    behind: tuple[str, ...]
    owed: int

    @property
    def idle(self) -> bool:
        return self.outbox == 0 and self.pending_reflections == 0 and self.owed == 0


class PipelineProbe:
    """Polls the database until the pipeline is idle for ``quiet_checks`` consecutive snapshots."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        *,
        interval: float = 0.005,
        quiet_checks: int = 1,
        alive_seconds: float = LIVE_SECONDS,
    ) -> None:
        self.pool = pool
        self.interval = interval
        self.quiet_checks = quiet_checks
        self.alive_seconds = alive_seconds
        self.since: int | None = None
        self.last: PipelineState | None = None

    async def snapshot(self) -> PipelineState:
        async with self.pool.connection() as conn:
            if self.since is None:
                row = await (await conn.execute("SELECT coalesce(max(seq), 0) FROM events")).fetchone()
                self.since = max(0, int(row[0]) - _FIRST_LOOKBACK) if row else 0
            params = {"since": self.since, "until": _NO_END, "alive": self.alive_seconds}
            cur = await conn.execute(_SNAPSHOT, params)
            row = await cur.fetchone()
        assert row is not None
        state = PipelineState(int(row[0]), int(row[1]), int(row[2]), tuple(row[3]), int(row[4]))
        if state.idle:
            self.since = state.max_seq  # everything up to here is digested; later checks start after it
        self.last = state
        return state

    async def wait_idle(self, timeout: float) -> bool:
        """True once idle; False if ``timeout`` seconds pass first (``last`` says what was still owed)."""
        deadline = time.monotonic() + timeout
        quiet, last_seq = 0, -1
        while True:
            state = await self.snapshot()
            # consecutive idle snapshots only count while nothing new was stored in between
            quiet = (quiet + 1 if quiet and state.max_seq == last_seq else 1) if state.idle else 0
            if quiet >= self.quiet_checks:
                return True
            last_seq = state.max_seq
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(self.interval)

    def describe(self) -> str:
        """What the last snapshot was waiting for, for a log line."""
        s = self.last
        if s is None:
            return "no snapshot yet"
        return (
            f"{s.owed} events owed by {', '.join(s.behind) or 'nobody'}, {s.outbox} unpublished, "
            f"{s.pending_reflections} reflection runs pending"
        )
