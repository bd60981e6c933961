"""SQL of the delivery log the internal API serves: a subscription's deliveries, one with its attempts, and
queueing one again. Every query is scoped by tenant, world and subscription."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from npcworld.delivery_log import AttemptView, DeliveryDetail, DeliveryStatus, DeliveryView
from npcworld.errors import NotFoundError

__all__ = ["DeliveryLog"]

_DELIVERY = (
    "delivery_id, webhook_id, event_id, seq, event_type, status, attempts, next_attempt_at,"
    " last_status_code, last_error, created_at, delivered_at"
)
_SCOPE = "tenant_id = %(t)s AND world_id = %(w)s AND webhook_id = %(h)s"


class DeliveryLog:
    def __init__(self, conn: AsyncConnection[Any], tenant_id: str, world_id: str, webhook_id: str) -> None:
        self.conn = conn
        self.scope = {"t": tenant_id, "w": world_id, "h": webhook_id}

    async def page(self, status: DeliveryStatus | None, after: int, limit: int) -> list[DeliveryView]:
        """Deliveries after the id ``after``, oldest first."""
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(
                f"SELECT {_DELIVERY} FROM wh_deliveries WHERE {_SCOPE} AND delivery_id > %(after)s"
                " AND (%(s)s::text IS NULL OR status = %(s)s) ORDER BY delivery_id LIMIT %(limit)s",
                self.scope | {"after": after, "s": status, "limit": limit},
            )
            return [DeliveryView.model_validate(r) for r in await cur.fetchall()]

    async def get(self, delivery_id: int) -> DeliveryDetail:
        async with self.conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(f"SELECT {_DELIVERY} FROM wh_deliveries WHERE {_SCOPE} AND delivery_id = %(d)s",
                              self.scope | {"d": delivery_id})
            row = await cur.fetchone()
            if row is None:
                raise NotFoundError(f"delivery {delivery_id} not found")
            await cur.execute(
                "SELECT attempt, status_code, error, duration_ms, attempted_at FROM wh_delivery_attempts"
                " WHERE delivery_id = %s ORDER BY attempted_at, attempt",
                (delivery_id,),
            )
            attempts = tuple(AttemptView.model_validate(a) for a in await cur.fetchall())
        return DeliveryDetail(delivery=DeliveryView.model_validate(row), attempts=attempts)

    async def redeliver(self, delivery_id: int) -> DeliveryView:
        """Queue the delivery again now with a fresh attempt budget (its attempt log is kept). It goes out
        once the dispatcher has folded every event stored before this: a URL changed just before is used."""
        cur = await self.conn.execute(
            "UPDATE wh_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(),"
            " delivered_at = NULL, redrive_after_seq = (SELECT coalesce(max(seq), 0) FROM events)"
            f" WHERE {_SCOPE} AND delivery_id = %(d)s RETURNING delivery_id",
            self.scope | {"d": delivery_id},
        )
        if await cur.fetchone() is None:
            raise NotFoundError(f"delivery {delivery_id} not found")
        return (await self.get(delivery_id)).delivery
