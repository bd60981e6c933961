"""Reads of the gateway's read models wait, boundedly, for its projection consumer to fold what the world
has stored (the library's "what a consumer still owes", for one consumer and one world).

The events the gateway appends itself are folded in their own transaction and owe nothing; this covers what
the other services stored (a step's moves, a plan, a relationship). While no live gateway consumer beats,
there is nobody to wait for and reads answer at once. Past the bound, a read answers with what the model
holds, says how many events it is behind in an ``X-Read-Model-Behind`` header, and the lag is logged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from typing import Any

from fastapi import Request
from psycopg import AsyncConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from npcworld.eventstore.claims import covered_sql
from npcworld.messaging.heartbeat import LIVE_SECONDS
from services.gateway.handlers import CONSUMER, PROJECTION

__all__ = ["BEHIND_HEADER", "ReadModelLagHeader", "ReadModelWatch", "settled"]

BEHIND_HEADER = "X-Read-Model-Behind"

logger = logging.getLogger(__name__)

# The first check of a world looks this far back in the store (later ones start after the last caught-up
# point), so a check costs a few index lookups.
_FIRST_LOOKBACK = 20_000

_OWED = """
SELECT EXISTS (SELECT 1 FROM consumer_heartbeats WHERE consumer = %(c)s
                  AND seen_at > now() - make_interval(secs => %(alive)s)),
       (SELECT coalesce(max(seq), 0) FROM events WHERE in_world(tenant_id, world_id, %(t)s, %(w)s)),
       (SELECT count(*) FROM events e
         WHERE in_world(e.tenant_id, e.world_id, %(t)s, %(w)s) AND e.seq > %(since)s
           AND e.type = ANY(%(types)s)
           AND NOT EXISTS (SELECT 1 FROM processed_events p
                            WHERE p.consumer = %(c)s AND p.event_id = e.event_id)
           AND NOT EXISTS (SELECT 1 FROM dead_letters d
                            WHERE d.consumer = %(c)s AND d.event_id = e.event_id)
           AND NOT """ + covered_sql("%(c)s", "e.seq") + """)
"""


class ReadModelWatch:
    """One gateway process's caught-up points per world (the newest sequence number it saw folded)."""

    def __init__(self, *, bound_s: float = 2.0, size: int = 4096) -> None:
        self.bound_s = bound_s
        self.size = size
        self.types = sorted(PROJECTION.appliers)
        self._since: OrderedDict[tuple[str, str], int] = OrderedDict()

    async def settle(self, conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> int:
        """Wait until the gateway's consumer has folded every event of the world stored now (at most
        ``bound_s``); returns how many it still owes (0: the read model is current)."""
        deadline, pause = time.monotonic() + self.bound_s, 0.005
        while True:
            live, newest, owed = await self._check(conn, tenant_id, world_id)
            if not live:
                return 0
            if not owed:
                self._caught_up(tenant_id, world_id, newest)
                return 0
            if time.monotonic() >= deadline:
                logger.warning("gateway read model of %s/%s is %d events behind after %.1f s",
                               tenant_id, world_id, owed, self.bound_s)
                return owed
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)

    async def _check(
        self, conn: AsyncConnection[Any], tenant_id: str, world_id: str
    ) -> tuple[bool, int, int]:
        key = (tenant_id, world_id)
        since = self._since.get(key)
        if since is None:
            row = await (await conn.execute("SELECT coalesce(max(seq), 0) FROM events")).fetchone()
            since = max(0, int(row[0]) - _FIRST_LOOKBACK) if row else 0
        params = {"c": CONSUMER, "alive": LIVE_SECONDS, "t": tenant_id, "w": world_id, "since": since,
                  "types": self.types}
        row = await (await conn.execute(_OWED, params)).fetchone()
        assert row is not None
        return bool(row[0]), int(row[1]), int(row[2])

    def _caught_up(self, tenant_id: str, world_id: str, seq: int) -> None:
        key = (tenant_id, world_id)
        self._since[key] = max(seq, self._since.get(key, 0))
        self._since.move_to_end(key)
        while len(self._since) > self.size:
            self._since.popitem(last=False)


async def settled(request: Request, conn: AsyncConnection[Any], tenant_id: str, world_id: str) -> None:
    """``ReadModelWatch.settle`` with the app's watch (a bare app, as in some tests, waits for nothing)."""
    watch = getattr(request.app.state, "views", None)
    if isinstance(watch, ReadModelWatch) and (behind := await watch.settle(conn, tenant_id, world_id)):
        request.state.read_model_behind = behind


class ReadModelLagHeader:
    """Adds ``X-Read-Model-Behind: N`` to an answer given from a read model still N events behind."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            behind = scope.get("state", {}).get("read_model_behind")
            if message["type"] == "http.response.start" and behind:
                message["headers"] = [*message.get("headers", []), (BEHIND_HEADER.lower().encode(),
                                                                   str(behind).encode())]
            await send(message)

        await self.app(scope, receive, sending)
