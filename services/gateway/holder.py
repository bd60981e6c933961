"""Which gateway process runs a request: a claim under an ``Idempotency-Key`` names its holder.

Each gateway process takes a session-level advisory lock named after itself on a connection of its own and
keeps it while it serves (reconnected with backoff). Postgres frees the lock when that connection ends, so
when the process is killed (or loses the database) mid-request, a retry of the same request finds the lock
of the claim's holder free and runs the request again (``IdempotencyStore.claim``) instead of answering 409
"still in progress" until the key expires. Running it again doubles nothing an append stored: the request's
events get the ids its first run gave them (``npcworld.ids.ids_repeatable_from``).

The process takes the lock under a new name each time its connection is opened again: requests cut short
by the database going away could not give their claims back, and claims under the name held before are
free to be taken over, although the process itself lives on.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import psycopg

from npcworld.messaging.reconnect import Backoff

__all__ = ["HOLDER_LOCK_CLASS", "RequestHolder"]

HOLDER_LOCK_CLASS = 0x4E5048  # "NPH": pg_advisory_lock(class, hashtext(holder))


class RequestHolder:
    """This process's name on the claims it makes, and the lock that says it is alive."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self._process = f"gateway-{uuid.uuid4().hex}"
        self._held = 0
        self.name = f"{self._process}-0"  # the lock's name; a new one each time the lock is taken again
        self.holding = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, wait: float = 5.0) -> None:
        """Start holding the lock; waits up to ``wait`` seconds for it (the API serves either way)."""
        self._task = asyncio.create_task(self._hold(), name="request-holder")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.holding.wait(), wait)

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _hold(self) -> None:
        backoff = Backoff("gateway's request-holder lock (retries of cut requests wait meanwhile)")
        while not self._stop.is_set():
            try:
                async with await psycopg.AsyncConnection.connect(self.database_url, autocommit=True) as conn:
                    name = f"{self._process}-{self._held}"
                    await conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (HOLDER_LOCK_CLASS, name))
                    self.name, self._held = name, self._held + 1
                    self.holding.set()
                    backoff.succeeded()
                    async for _ in conn.notifies():  # returns or raises when the connection ends
                        pass
            except (psycopg.Error, OSError) as exc:
                self.holding.clear()
                await backoff.failed(exc, self._stop)
            else:
                self.holding.clear()
