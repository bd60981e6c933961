"""All SQL of the webhook dispatcher: fan-out of settled events into delivery rows (folding the
subscription events it passes), claims and results."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from psycopg import AsyncConnection

from npcworld.contracts import EVENT_TYPES, WEBHOOK_EVENT_TYPES, WebhookDeleted
from npcworld.eventstore import EventStore
from npcworld.shredding import reveal
from services.webhooks.domain import Outcome
from services.webhooks.subscriptions import PROJECTION

__all__ = ["Claimed", "DispatchRepository"]

# Same rule as the gateway's event reads: only rows whose writing transaction is older than every
# running one, so the cursor never passes a sequence number that commits late.
_SETTLED = "age(xmin) > age(pg_snapshot_xmin(pg_current_snapshot())::xid)"
# Events in (lo, hi] to every matching subscription that started before them; the subscriptions' own events
# are folded (services/webhooks/subscriptions.py), never delivered.
_FAN_OUT = """
INSERT INTO wh_deliveries (webhook_id, tenant_id, world_id, event_id, seq, event_type)
SELECT s.webhook_id, e.tenant_id, e.world_id, e.event_id, e.seq, e.type
FROM events e JOIN wh_subscriptions s ON s.tenant_id = e.tenant_id AND s.world_id = e.world_id
WHERE e.seq > %(lo)s AND e.seq <= %(hi)s AND e.seq > s.from_seq AND s.active
  AND (cardinality(s.event_types) = 0 OR e.type = ANY(s.event_types)) AND e.type <> ALL(%(own)s)
ORDER BY e.seq
ON CONFLICT (webhook_id, event_id) DO NOTHING
"""
# Waiting to be sent: pending, its subscription (and secret) still there, and (a redelivery) every event
# stored before it was asked for already folded, so it goes out with the subscription as it was then.
_WAITING = """
status = 'pending'
AND redrive_after_seq <= (SELECT seq FROM wh_dispatch_cursor WHERE name = 'webhooks')
AND EXISTS (SELECT 1 FROM wh_subscriptions s WHERE s.webhook_id = wh_deliveries.webhook_id)
AND EXISTS (SELECT 1 FROM egress_secrets x WHERE x.owner_id = wh_deliveries.webhook_id)
"""
_DUE = f"{_WAITING} AND next_attempt_at <= now()"
# A claim moves next_attempt_at past the attempt's deadline: if this process dies mid-attempt, the
# row becomes due again once the lease lapses, so nothing is lost.
_CLAIM = f"""
UPDATE wh_deliveries d SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => %s)
FROM (SELECT delivery_id FROM wh_deliveries WHERE {_DUE}
      ORDER BY next_attempt_at LIMIT %s FOR UPDATE SKIP LOCKED) due,
     wh_subscriptions s, egress_secrets x, events e
WHERE d.delivery_id = due.delivery_id AND s.webhook_id = d.webhook_id AND x.owner_id = d.webhook_id
  AND x.tenant_id = d.tenant_id AND e.seq = d.seq
RETURNING d.delivery_id, d.attempts, d.event_id, d.seq, d.event_type, d.world_id, s.url, x.secret,
          (to_jsonb(e) - 'seq' - 'stream_id' - 'version' - 'trace' - 'traceparent')::text
"""


@dataclass(frozen=True)
class Claimed:
    """A delivery claimed for one attempt, with what to send and where."""

    delivery_id: int
    attempt: int
    event_id: UUID
    seq: int
    event_type: str
    world_id: str
    url: str
    secret: str
    envelope: dict[str, Any]


class DispatchRepository:
    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self.conn = conn

    async def fan_out(self, batch: int) -> int:
        """Turn the next settled events into deliveries and advance the cursor; returns events passed.

        Run in one transaction: the cursor row lock keeps concurrent dispatchers from double work.
        """
        cur = await self.conn.execute("SELECT seq FROM wh_dispatch_cursor WHERE name = 'webhooks' FOR UPDATE")
        row = await cur.fetchone()
        assert row is not None, "migration 0030 creates the dispatch cursor"
        start = int(row[0])
        cur = await self.conn.execute(
            f"SELECT seq, {_SETTLED} FROM events WHERE seq > %s ORDER BY seq LIMIT %s", (start, batch)
        )
        upto, passed = start, 0
        for seq, settled in await cur.fetchall():
            if not settled:
                break
            upto, passed = int(seq), passed + 1
        if passed:
            await self._fold_and_fan_out(start, upto)
            await self.conn.execute("UPDATE wh_dispatch_cursor SET seq = %s WHERE name = 'webhooks'", (upto,))
        return passed

    async def _fold_and_fan_out(self, start: int, upto: int) -> None:
        """Fan (start, upto] out, folding each subscription event where it stands in the store: a
        subscription registered or changed at seq n applies from n + 1 on, never before."""
        cur = await self.conn.execute(
            "SELECT seq FROM events WHERE seq > %s AND seq <= %s AND type = ANY(%s) ORDER BY seq",
            (start, upto, list(WEBHOOK_EVENT_TYPES)),
        )
        lo = start
        for (seq,) in await cur.fetchall():
            await self._fan_out_range(lo, seq)
            [stored] = await EventStore().read_all(self.conn, seq - 1, 1)
            await PROJECTION.apply_appended(self.conn, [stored.envelope])  # folds and claims it
            event = stored.envelope
            if isinstance(event.payload, WebhookDeleted) and event.forked_from is None:
                await self.conn.execute(
                    "UPDATE wh_deliveries SET status = 'failed', last_error = 'webhook deleted'"
                    " WHERE webhook_id = %s AND status = 'pending'",
                    (event.payload.webhook_id,),
                )
            lo = seq
        await self._fan_out_range(lo, upto)

    async def _fan_out_range(self, lo: int, hi: int) -> None:
        if hi > lo:
            await self.conn.execute(_FAN_OUT, {"lo": lo, "hi": hi, "own": list(WEBHOOK_EVENT_TYPES)})

    async def claim_due(self, limit: int, lease_seconds: float) -> list[Claimed]:
        cur = await self.conn.execute(_CLAIM, (lease_seconds, limit))
        claimed = [
            Claimed(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], json.loads(r[8]))
            for r in await cur.fetchall()
        ]
        # A player's words go out while the player's key exists; after it is erased, "[forgotten]".
        await reveal(self.conn, [(c.event_type, c.envelope["payload"]) for c in claimed])
        for c in claimed:  # with every field, as the API shows it (the log leaves out empty defaults)
            if (cls := EVENT_TYPES.get(c.event_type)) is not None:
                c.envelope["payload"] = cls.filled(c.envelope["payload"])
        return claimed

    async def record(
        self, claimed: Claimed, result: tuple[int | None, str | None, float], outcome: Outcome
    ) -> None:
        """Log the attempt and move the delivery on, unless a redelivery reset it meanwhile."""
        status_code, error, duration_ms = result
        await self.conn.execute(
            "INSERT INTO wh_delivery_attempts (delivery_id, attempt, status_code, error, duration_ms)"
            " VALUES (%s, %s, %s, %s, %s)",
            (claimed.delivery_id, claimed.attempt, status_code, error, duration_ms),
        )
        await self.conn.execute(
            "UPDATE wh_deliveries SET status = %s, last_status_code = %s, last_error = %s,"
            " next_attempt_at = now() + make_interval(secs => %s),"
            " delivered_at = CASE WHEN %s = 'delivered' THEN now() END"
            " WHERE delivery_id = %s AND attempts = %s AND status = 'pending'",
            (
                outcome.status,
                status_code,
                error,
                outcome.retry_in or 0.0,
                outcome.status,
                claimed.delivery_id,
                claimed.attempt,
            ),
        )

    async def seconds_to_next_due(self) -> float | None:
        cur = await self.conn.execute(
            f"SELECT extract(epoch FROM min(next_attempt_at) - now()) FROM wh_deliveries WHERE {_WAITING}"
        )
        row = await cur.fetchone()
        return None if row is None or row[0] is None else max(0.0, float(row[0]))
