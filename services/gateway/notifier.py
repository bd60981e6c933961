"""Wakes stream readers when events are appended: one LISTEN connection per gateway process.

The event store's outbox trigger NOTIFYs ``npcworld_outbox`` at commit; readers also poll, so a lost
connection or a notification that arrives before the row is settled only delays them by one poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import psycopg

from npcworld.messaging.reconnect import Backoff

__all__ = ["AppendNotifier"]

logger = logging.getLogger(__name__)
_CHANNEL = "npcworld_outbox"


class AppendNotifier:
    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self._appended = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._listen(), name="append-notifier")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def wait(self, timeout: float) -> None:
        """Return after the next append or after ``timeout`` seconds, whichever comes first."""
        appended = self._appended
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(appended.wait(), timeout)

    def _wake(self) -> None:
        appended, self._appended = self._appended, asyncio.Event()
        appended.set()

    async def _listen(self) -> None:
        backoff = Backoff("append notifier (streams fall back to polling)")
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.database_url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {_CHANNEL}")
                    backoff.succeeded()
                    async for _ in conn.notifies():
                        self._wake()
            except psycopg.OperationalError as exc:
                await backoff.failed(exc)
