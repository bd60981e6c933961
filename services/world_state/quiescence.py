"""Has the pipeline digested the last step? Stepped clocks wait for this before the next tick.

A wait covers what was stored when it began (its ``bound``) in the worlds it is for, and everything those
events caused (same ``correlation_id``: a reaction's events carry its cause's correlation). The pipeline is
idle for them when, in one database snapshot:

- every live consumer loop that paces steps (one that heartbeated in ``consumer_heartbeats`` lately; the
  gateway's, which keeps a read model no cognition reads, does not) has processed or
  dead-lettered every such event of the types it handles (``processed_events`` is written in the same
  transaction as the handler's effects, so "processed" means its new events are stored too, and nothing
  owed means no chain can grow any further);
- none of them waits in the outbox (everything stored reached Kafka);
- no service holds work of those worlds for a job (``held_work``: a reflection run waiting for its Celery
  job works outside any consumer transaction).

This is exact rather than a guess from quiet time: a consumer waiting in its retry backoff holds no
transaction but still owes its events, so the clock waits for it instead of stepping on without cognition.
Events stored after the wait began with a cause of their own (a player's chat, another world's step) are
the next wait's, and a stepped clock's probe (``players=False``) leaves player traffic out altogether (chats
and posted perceptions and what they cause: ``npcworld.lanes``): consumers take it after the world's own
events, and more of it than the machine digests would otherwise hold every step back. Steady client
traffic, or a busy world next door, never holds a clock back. Only events
after the last idle point are checked (``since``), so a check costs a few index lookups.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

from npcworld.eventstore.claims import watermark
from npcworld.lanes import player_traffic_sql
from npcworld.messaging.heartbeat import LIVE_SECONDS

__all__ = ["PipelineProbe", "PipelineState", "WorldKey"]

# How far back the first check looks when the probe has no idle point yet.
_FIRST_LOOKBACK = 20_000
# Polls start this fast (a quick step is seen at once) and slow down to the cap while the pipeline works.
_POLL_FIRST_S = 0.005
_POLL_MAX_S = 0.1

WorldKey = tuple[str, str]  # (tenant_id, world_id)

_IN_SCOPE = (
    "(%(everywhere)s OR ({alias}.tenant_id, {alias}.world_id) IN"
    " (SELECT * FROM unnest(%(tenants)s::text[], %(worlds)s::text[])))"
)

_SNAPSHOT = f"""
WITH bound AS (
    SELECT coalesce(%(bound)s::bigint, (SELECT max(seq) FROM events), 0) AS seq
), live AS (
    SELECT DISTINCT h.consumer, h.types, {watermark("h.consumer")} AS mark FROM consumer_heartbeats h
     WHERE seen_at > now() - make_interval(secs => %(alive)s) AND paces_steps
), caused AS (
    SELECT DISTINCT correlation_id FROM events
     WHERE seq > %(since)s AND seq <= (SELECT seq FROM bound)
), scoped AS (
    SELECT e.seq, e.event_id, e.type FROM events e
     WHERE e.seq > %(since)s
       AND (e.seq <= (SELECT seq FROM bound) OR e.correlation_id IN (SELECT correlation_id FROM caused))
       AND {_IN_SCOPE.format(alias="e")}
       AND (%(players)s OR NOT {player_traffic_sql("e")})
), owed AS (
    SELECT live.consumer, s.event_id
      FROM scoped s JOIN live ON s.type = ANY (live.types) AND s.seq > live.mark
     WHERE NOT EXISTS (SELECT 1 FROM processed_events p
                        WHERE p.consumer = live.consumer AND p.event_id = s.event_id)
       AND NOT EXISTS (SELECT 1 FROM dead_letters d
                        WHERE d.consumer = live.consumer AND d.event_id = s.event_id)
)
SELECT (SELECT seq FROM bound),
       (SELECT count(*) FROM outbox o JOIN scoped s ON s.seq = o.seq),
       (SELECT count(*) FROM held_work h WHERE h.until = 'job' AND {_IN_SCOPE.format(alias="h")}),
       (SELECT coalesce(array_agg(DISTINCT consumer ORDER BY consumer), '{{}}') FROM owed),
       (SELECT count(*) FROM owed)
"""


@dataclass(frozen=True)
class PipelineState:
    """One snapshot: the newest event the wait covers (``max_seq``), what is still owed, and by whom."""

    max_seq: int
    outbox: int
    held_for_jobs: int
    behind: tuple[str, ...]
    owed: int

    @property
    def idle(self) -> bool:
        return self.outbox == 0 and self.held_for_jobs == 0 and self.owed == 0


class PipelineProbe:
    """Polls the database until the pipeline is idle for ``quiet_checks`` consecutive snapshots."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        *,
        interval: float = _POLL_FIRST_S,
        quiet_checks: int = 1,
        alive_seconds: float = LIVE_SECONDS,
        players: bool = True,
    ) -> None:
        self.pool = pool
        self.players = players  # False: player traffic (npcworld.lanes) is not waited for
        self.interval = interval
        self.quiet_checks = quiet_checks
        self.alive_seconds = alive_seconds
        self.since: int | None = None
        self.last: PipelineState | None = None
        self._scope: tuple[WorldKey, ...] | None = None

    async def snapshot(
        self, worlds: Sequence[WorldKey] | None = None, bound: int | None = None
    ) -> PipelineState:
        """What events stored up to ``bound`` (None: now) in ``worlds`` (None: every world) and their
        consequences still wait for."""
        scope = None if worlds is None else tuple(sorted(worlds))
        if scope != self._scope:  # another set of worlds: what was digested for the old one says nothing
            self._scope, self.since = scope, None
        async with self.pool.connection() as conn:
            if self.since is None:
                row = await (await conn.execute("SELECT coalesce(max(seq), 0) FROM events")).fetchone()
                self.since = max(0, int(row[0]) - _FIRST_LOOKBACK) if row else 0
            params = {
                "since": self.since,
                "bound": bound,
                "alive": self.alive_seconds,
                "everywhere": scope is None,
                "players": self.players,
                "tenants": [t for t, _ in scope or ()],
                "worlds": [w for _, w in scope or ()],
            }
            cur = await conn.execute(_SNAPSHOT, params)
            row = await cur.fetchone()
        assert row is not None
        state = PipelineState(int(row[0]), int(row[1]), int(row[2]), tuple(row[3]), int(row[4]))
        if state.idle:
            self.since = state.max_seq  # everything up to here is digested; later checks start after it
        self.last = state
        return state

    async def wait_idle(self, timeout: float, worlds: Sequence[WorldKey] | None = None) -> bool:
        """True once what was stored when the wait began (in ``worlds``; None: everywhere) and what it caused
        is digested; False if ``timeout`` seconds pass first (``last`` says what was still owed)."""
        deadline = time.monotonic() + timeout
        quiet, bound, interval = 0, None, self.interval
        while True:
            state = await self.snapshot(worlds, bound)
            bound = state.max_seq
            quiet = quiet + 1 if state.idle else 0
            if quiet >= self.quiet_checks:
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(interval)
            interval = min(_POLL_MAX_S, interval * 2)

    def describe(self) -> str:
        """What the last snapshot was waiting for, for a log line."""
        s = self.last
        if s is None:
            return "no snapshot yet"
        return (
            f"{s.owed} events owed by {', '.join(s.behind) or 'nobody'}, {s.outbox} unpublished, "
            f"{s.held_for_jobs} held for a job (reflection runs)"
        )
