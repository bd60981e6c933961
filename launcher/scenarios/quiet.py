"""Waiting for a running backend to settle when only its API can be seen: until the world's event log has
grown by nothing for ``quiet_seconds`` (a quiet-time guess; the private backend waits exactly instead)."""

from __future__ import annotations

import asyncio
import time

import httpx

from launcher.scenarios.driver import StepError

__all__ = ["QuietSettler"]


class QuietSettler:
    def __init__(self, client: httpx.AsyncClient, quiet_seconds: float = 2.0, timeout: float = 300.0) -> None:
        self.client, self.quiet_seconds, self.timeout = client, quiet_seconds, timeout
        self.cursor: dict[str, str | None] = {}

    async def settle(self, world_id: str) -> None:
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
        newest = 0
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
            if not page["next_cursor"]:
                return newest
            self.cursor[world_id] = page["next_cursor"]
