"""A private, throwaway backend for ``npcworld test``: the embedded Postgres + pgvector and broker under a
temporary directory, the relay, every service but webhooks (no scenario step sends one) and the gateway on
free ports (what ``npcworld run`` starts, without the demo); and the exact wait for a world's pipeline to be
idle that its database allows."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
from psycopg_pool import AsyncConnectionPool

from launcher.embedded import EmbeddedStack
from launcher.embedded.procs import STACK_MARKER
from launcher.private_ports import free_port, private_api_env
from launcher.process_group import ProcessGroup
from launcher.scenarios.driver import StepError
from launcher.supervisor import SERVICE_MODULES, process_commands
from npcworld.db import open_pool
from services.world_state.quiescence import PipelineProbe

__all__ = ["PrivateBackend", "ProbeSettler", "new_tenant"]

_START_TIMEOUT_S = 180.0
_SERVICES = tuple(s for s in SERVICE_MODULES if s != "webhooks")


class PrivateBackend:
    """Started by ``start``, removed with all its data by ``stop``; ``env`` adds to every process's
    environment (the LLM mode and provider)."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.stack = EmbeddedStack(root / "stack", kafka_port=free_port())
        self.port = free_port()
        self.extra_env = env
        self.group: ProcessGroup | None = None
        self.database_url = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        state = self.stack.up()
        self.database_url = state.database_url
        env = {
            **state.client_env(dict(os.environ)),
            **private_api_env(),  # private, like the stack: a live backend may hold the default ports
            "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
            STACK_MARKER: str(self.stack.home),  # what a guardian stops if this run is killed
            **self.extra_env,
        }
        commands = {n: c for n, c in process_commands(self.port).items() if not n.startswith("webhooks")}
        self.group = ProcessGroup(commands, env, self.root / "stack" / "logs")
        self.group.start()
        asyncio.run(self._ready())

    async def _ready(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        async with httpx.AsyncClient(timeout=2) as client:
            while not await _answers(client, f"{self.url}/readyz"):
                self._alive(deadline)
                await asyncio.sleep(0.2)
        pool = await open_pool(self.database_url, max_size=1, name="npcworld-test")
        try:
            while True:
                async with pool.connection() as conn:
                    cur = await conn.execute(
                        "SELECT count(DISTINCT consumer) FROM consumer_heartbeats WHERE consumer = ANY(%s)",
                        (list(_SERVICES),))
                    row = await cur.fetchone()
                if row is not None and row[0] >= len(_SERVICES):
                    return
                self._alive(deadline)
                await asyncio.sleep(0.2)
        finally:
            await pool.close()

    def _alive(self, deadline: float) -> None:
        assert self.group is not None
        dead = [s.name for s in self.group.states() if not s.up]
        if dead or time.monotonic() > deadline:
            why = f"{', '.join(dead)} exited" if dead else f"not ready after {_START_TIMEOUT_S:.0f} s"
            raise RuntimeError(f"the private backend did not start ({why}); logs in {self.root}/stack/logs")

    def stop(self, keep_logs: Path | None = None) -> None:
        """Kill everything at once (nothing of it is kept) and remove the directory."""
        if self.group is not None:
            forced = threading.Event()
            forced.set()
            self.group.stop(force=forced)
        self.stack.down(force=True)
        if keep_logs is not None and (self.root / "stack" / "logs").exists():
            shutil.copytree(self.root / "stack" / "logs", keep_logs, dirs_exist_ok=True)
        shutil.rmtree(self.root, ignore_errors=True)


async def _answers(client: httpx.AsyncClient, url: str) -> bool:
    try:
        return (await client.get(url)).status_code == 200
    except httpx.HTTPError:
        return False


async def new_tenant(pool: AsyncConnectionPool, name: str) -> tuple[str, str]:
    """A tenant of the private backend and its API key (every scope)."""
    from services.gateway.repository import GatewayRepository

    async with pool.connection() as conn, conn.transaction():
        return await GatewayRepository(conn).create_tenant(name)


class ProbeSettler:
    """Waits exactly (services/world_state/quiescence.py) until a world's pipeline has digested what was
    stored and what it caused; an event a service gave up on meanwhile (a dead letter) is a step error
    naming why."""

    def __init__(self, pool: AsyncConnectionPool, tenant_id: str, timeout: float = 120.0) -> None:
        self.pool, self.tenant_id, self.timeout = pool, tenant_id, timeout
        self.probe = PipelineProbe(pool)
        self.seen_dead = 0  # the tenant is the scenario's own: every dead letter of its world is news

    async def settle(self, world_id: str, caused_by: Sequence[str] = ()) -> None:
        """``caused_by`` needs no wait of its own here: the wait covers what those events caused."""
        if not await self.probe.wait_idle(self.timeout, [(self.tenant_id, world_id)]):
            raise StepError(f"not digested within {self.timeout:.0f} s: {self.probe.describe()}")
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT d.id, d.consumer, coalesce(d.event_type, '?'), d.reason FROM dead_letters d"
                " JOIN events e ON e.event_id = d.event_id"
                " WHERE d.id > %s AND in_world(e.tenant_id, e.world_id, %s, %s) ORDER BY d.id",
                (self.seen_dead, self.tenant_id, world_id))
            rows = await cur.fetchall()
        if rows:
            self.seen_dead = max(r[0] for r in rows)
            raise StepError("; ".join(f"{r[1]} gave up on {r[2]}: {r[3]}" for r in rows))
