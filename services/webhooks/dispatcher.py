"""The dispatcher loop: fan settled events out into deliveries, then POST the due ones, signed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

import httpx
import psycopg
from psycopg_pool import AsyncConnectionPool

from npcworld.egress import PinnedTransport
from npcworld.errors import EgressRefusedError
from npcworld.messaging.reconnect import DEPENDENCY_ERRORS, Backoff
from npcworld.telemetry import tracer
from services.webhooks.domain import SIGNATURE_HEADER, after_attempt, signature_header
from services.webhooks.repository import Claimed, DispatchRepository
from services.webhooks.settings import Settings

__all__ = ["Dispatcher", "delivery_body"]

logger = logging.getLogger(__name__)
_CHANNEL = "npcworld_outbox"


def delivery_body(claimed: Claimed) -> bytes:
    """What a receiver gets: the event's id (for dedupe), its store sequence and the whole envelope."""
    return json.dumps(
        {
            "event_id": str(claimed.event_id),
            "delivery_id": claimed.delivery_id,
            "seq": claimed.seq,
            "type": claimed.event_type,
            "world_id": claimed.world_id,
            "event": claimed.envelope,
        },
        separators=(",", ":"),
    ).encode()


class Dispatcher:
    def __init__(self, pool: AsyncConnectionPool, settings: Settings, database_url: str) -> None:
        self.pool = pool
        self.settings = settings
        self.database_url = database_url
        self.policy = settings.retry_policy()
        self.wake = asyncio.Event()
        self.started = asyncio.Event()
        self._stop = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> None:
        """Fan out and send until ``stop`` is set; appends (NOTIFY) and due retries wake it.

        A lost Postgres is waited out with backoff (``npcworld.messaging.reconnect``): fan-out is one
        transaction per batch, so a cut one rolls back and is done again; an attempt already made keeps
        its outcome in memory until it can be recorded, so the receiver is not called twice for it.
        """
        self._stop = stop
        listener = asyncio.create_task(self._listen())
        backoff = Backoff("webhooks dispatcher")
        try:
            # Every connection resolves the receiver's host, checks each address against the egress
            # policy and connects to a checked one (docs/webhooks.md, "Where deliveries may go").
            transport = PinnedTransport(self.settings.allow_list())
            async with httpx.AsyncClient(
                timeout=self.settings.webhook_timeout_seconds, transport=transport
            ) as client:
                self.started.set()
                while not stop.is_set():
                    try:
                        await self._fan_out()
                        sent = await self._send_due(client)
                        if not sent:
                            await self._idle(stop)
                    except DEPENDENCY_ERRORS as exc:
                        await backoff.failed(exc, stop)
                        continue
                    backoff.succeeded()
        finally:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener

    async def _fan_out(self) -> None:
        while True:
            async with self.pool.connection() as conn, conn.transaction():
                passed = await DispatchRepository(conn).fan_out(self.settings.webhook_fanout_batch)
            if passed < self.settings.webhook_fanout_batch:
                return

    async def _send_due(self, client: httpx.AsyncClient) -> int:
        lease = self.settings.webhook_timeout_seconds + 30.0
        async with self.pool.connection() as conn:
            due = await DispatchRepository(conn).claim_due(self.settings.webhook_concurrency, lease)
        await asyncio.gather(*(self._attempt(client, c) for c in due))
        return len(due)

    async def _attempt(self, client: httpx.AsyncClient, claimed: Claimed) -> None:
        body = delivery_body(claimed)
        stamp = int(time.time())
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature_header(claimed.secret, stamp, body),
            "Npcworld-Event-Id": str(claimed.event_id),
            "Npcworld-Event-Type": claimed.event_type,
            "Npcworld-Delivery-Id": str(claimed.delivery_id),
            "Npcworld-Timestamp": str(stamp),
        }
        started = time.perf_counter()
        status_code: int | None = None
        error: str | None = None
        refused = False
        with tracer().start_as_current_span(
            "webhook.deliver", attributes={"event_id": str(claimed.event_id)}
        ):
            try:
                response = await client.post(claimed.url, content=body, headers=headers)
                status_code = response.status_code
                if not response.is_success:
                    error = f"HTTP {status_code}"
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}"[:500]
            except EgressRefusedError as exc:  # permanent: the receiver's address is refused
                error, refused = f"refused by the egress policy: {exc}"[:500], True
        outcome = after_attempt(self.policy, claimed.attempt, status_code, permanent=refused)
        elapsed = (time.perf_counter() - started) * 1000

        async def record() -> None:
            async with self.pool.connection() as conn:
                await DispatchRepository(conn).record(claimed, (status_code, error, elapsed), outcome)

        # The receiver has been called: its outcome is recorded even if a stop came meanwhile.
        await Backoff(f"webhook delivery {claimed.delivery_id}").call(
            record, self._stop, at_least_once=True
        )
        if outcome.status == "failed":
            logger.warning(
                "webhook delivery %s failed after %d attempts (event_id=%s world_id=%s): %s",
                claimed.delivery_id,
                claimed.attempt,
                claimed.event_id,
                claimed.world_id,
                error,
            )

    async def _idle(self, stop: asyncio.Event) -> None:
        async with self.pool.connection() as conn:
            due = await DispatchRepository(conn).seconds_to_next_due()
        timeout = min(self.settings.webhook_poll_seconds, due if due is not None else float("inf"))
        waiters = [asyncio.create_task(self.wake.wait()), asyncio.create_task(stop.wait())]
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        for waiter in waiters:
            waiter.cancel()
        self.wake.clear()

    async def _listen(self) -> None:
        backoff = Backoff("webhook dispatcher's LISTEN connection (polling meanwhile)")
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.database_url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {_CHANNEL}")
                    backoff.succeeded()
                    async for _ in conn.notifies():
                        self.wake.set()
            except psycopg.OperationalError as exc:
                await backoff.failed(exc)
