"""Nudges: a consumer that digested some of a world's own events says so, and the stepped clock looks again.

The stepped clock's probe (``services.world_state.quiescence``) asks the database whether the last step is
digested, polling at 5 ms and backing off to 100 ms while the step's cascade runs, so a step waited on
average half a poll after its last consumer committed: ~50 ms a step on a loaded machine, a fifth of a quiet
step's time there. Now each consumer loop that paces steps NOTIFYs ``npcworld_digested`` in the transaction
of every batch of the world's own events it claims (heard at commit), and a probe with ``Nudges``
checks again when one is heard, at most once per ``MIN_GAP_S``. The polls stay, as the fallback for
anything that sends no nudge (a lost notification, a reflection job's end, the outbox); a probe whose
listener is not connected polls as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import psycopg

from npcworld.messaging.reconnect import Backoff

__all__ = ["CHANNEL", "MIN_GAP_S", "Nudges"]

CHANNEL = "npcworld_digested"
# Nudges come from every consumer of every world; a probe checks at most this often because of them.
MIN_GAP_S = 0.01


class Nudges:
    """Listens for nudges on a connection of its own (reconnected with backoff)."""

    def __init__(self, database_url: str, name: str = "stepped clock") -> None:
        self.database_url = database_url
        self.name = name
        self._heard = asyncio.Event()
        self._last_wake = 0.0
        self.listening = False

    async def run(self, stop: asyncio.Event) -> None:
        """Listen until ``stop`` is set; a lost connection is opened again (meanwhile waits just time out)."""
        backoff = Backoff(f"{self.name}'s nudges (polling as usual meanwhile)")
        while not stop.is_set():
            try:
                async with await psycopg.AsyncConnection.connect(self.database_url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self.listening = True
                    backoff.succeeded()
                    while not stop.is_set():
                        async for _ in conn.notifies(timeout=1.0):
                            self._heard.set()
            except (psycopg.Error, OSError) as exc:
                self.listening = False
                await backoff.failed(exc, stop)
            finally:
                self.listening = False

    async def wait(self, timeout: float) -> bool:
        """Whether a nudge was heard (since the last wait) before ``timeout`` seconds passed. A nudge heard
        less than ``MIN_GAP_S`` after the last one that woke a waiter wakes it only once that gap is over."""
        deadline = time.monotonic() + timeout
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._heard.wait(), timeout)
        if not self._heard.is_set():
            return False
        gap = self._last_wake + MIN_GAP_S - time.monotonic()
        if gap > 0:
            await asyncio.sleep(min(gap, max(0.0, deadline - time.monotonic())))
        self._heard.clear()
        self._last_wake = time.monotonic()
        return True
