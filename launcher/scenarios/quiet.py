"""Waiting for a running backend to settle when only its API can be seen: until every event the step stored
has caused at least one other (a perception its memory, a chat its reply) and then the world's event log has
grown by nothing for ``quiet_seconds``. A guess from quiet time: the private backend waits exactly instead."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import httpx

from launcher.scenarios.driver import StepError

__all__ = ["QuietSettler"]


class QuietSettler:
    def __init__(self, client: httpx.AsyncClient, quiet_seconds: float = 2.0, timeout: float = 300.0,
                 cause_timeout: float = 60.0) -> None:
        self.client, self.quiet_seconds, self.timeout = client, quiet_seconds, timeout
        self.cause_timeout = cause_timeout
        self.cursor: dict[str, str | None] = {}
        self.causes: set[str] = set()  # causation ids of the events read so far
        self.newest: dict[str, int] = {}  # the newest event's seq, by world

    async def settle(self, world_id: str, caused_by: Sequence[str] = ()) -> None:
        deadline = time.monotonic() + self.cause_timeout
        await self._newest(world_id)
        while not set(caused_by) <= self.causes:
            if time.monotonic() > deadline:
                raise StepError(f"nothing in world {world_id} was caused by {', '.join(caused_by)} within "
                                f"{self.cause_timeout:g} s (a service gave up on it? npcworld dlq list)")
            await asyncio.sleep(0.25)
            await self._newest(world_id)
        deadline = time.monotonic() + self.timeout
        last, quiet_since = await self._newest(world_id), time.monotonic()
        while time.monotonic() - quiet_since < self.quiet_seconds:
            if time.monotonic() > deadline:
                raise StepError(f"world {world_id} kept changing for {self.timeout:.0f} s")
            await asyncio.sleep(0.25)
            newest = await self._newest(world_id)
            if newest != last:
                last, quiet_since = newest, time.monotonic()

    async def _newest(self, world_id: str) -> int:
        """The newest event's ``seq`` (pages from the last full page seen, so the log is read once)."""
        newest = self.newest.get(world_id, 0)
        while True:
            cursor = self.cursor.get(world_id)
            params = {"limit": "500", **({"cursor": cursor} if cursor else {})}
            try:
                r = await self.client.get(f"/v1/worlds/{world_id}/events", params=params)
            except httpx.HTTPError as exc:
                raise StepError(f"reading the event log: {type(exc).__name__}: {exc}") from exc
            if r.status_code != 200:
                raise StepError(f"reading the event log answered {r.status_code}: {r.text[:300]}")
            page = r.json()
            if page["items"]:
                newest = max(newest, page["items"][-1]["seq"])
                self.causes.update(str(i["event"].get("causation_id")) for i in page["items"])
            if not page["next_cursor"]:
                self.newest[world_id] = newest
                return newest
            self.cursor[world_id] = page["next_cursor"]
