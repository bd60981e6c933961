"""Composition root shared by every service process: settings → pool → consumer loop + health endpoint."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from psycopg_pool import AsyncConnectionPool

from npcworld import aio
from npcworld.db import apply_migrations, database_reachable, open_pool
from npcworld.lanes import Lane
from npcworld.messaging import ConsumerLoop, Routes, ensure_topics
from npcworld.messaging.reconnect import Backoff
from npcworld.projection import Projection
from npcworld.settings import CommonSettings, StackEndpoints, resolve_endpoints
from npcworld.telemetry import configure_telemetry
from npcworld.telemetry.health import HealthServer

__all__ = ["ServiceContext", "configure_logging", "database_reachable", "run_service", "serve",
           "start_dependencies"]

logger = logging.getLogger(__name__)
D = TypeVar("D")


@dataclass(frozen=True)
class ServiceContext:
    """What a service's dependency factory may build on."""

    settings: CommonSettings
    endpoints: StackEndpoints
    pool: AsyncConnectionPool


DepsFactory = Callable[[ServiceContext], Awaitable[Any]]


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiokafka").setLevel(logging.WARNING)


def run_service(
    name: str,
    settings: CommonSettings,
    routes: Routes[Any],
    *,
    deps: Any = None,
    deps_factory: DepsFactory | None = None,
    projection: Projection | None = None,
    events_per_transaction: int | None = None,
    beside: Iterable[Lane] = (),
    paces_steps: bool = True,
) -> None:
    """Run a service until SIGTERM or SIGINT (blocking). ``events_per_transaction``, ``beside``
    and ``paces_steps``: see ``ConsumerLoop`` (None: a poll is one transaction; a service whose handlers
    wait on a model takes 1)."""
    configure_logging(settings.log_level)
    configure_telemetry(name)
    aio.run(serve(name, settings, routes, deps=deps, deps_factory=deps_factory, projection=projection,
                  events_per_transaction=events_per_transaction, beside=beside, paces_steps=paces_steps))


async def serve(
    name: str,
    settings: CommonSettings,
    routes: Routes[Any],
    *,
    deps: Any = None,
    deps_factory: DepsFactory | None = None,
    projection: Projection | None = None,
    stop: asyncio.Event | None = None,
    events_per_transaction: int | None = None,
    beside: Iterable[Lane] = (),
    paces_steps: bool = True,
) -> None:
    """Migrate, create topics, then consume until ``stop`` is set (or a signal arrives).

    Postgres or the broker being away at start is waited out like an outage later on (with backoff)."""
    endpoints = resolve_endpoints(settings)
    stop = stop or _stop_on_signals()
    pool = await start_dependencies(name, endpoints, stop)
    if pool is None:
        return
    try:
        if deps_factory is not None:
            deps = await deps_factory(ServiceContext(settings, endpoints, pool))
        loop = ConsumerLoop(name, routes, deps, projection=projection, pool=pool,
                            bootstrap=endpoints.kafka_bootstrap_servers,
                            events_per_transaction=events_per_transaction,
                            ingest_share=settings.ingest_share,
                            claims_keep_seconds=settings.claims_keep_seconds, beside=beside,
                            paces_steps=paces_steps)

        async def readiness() -> dict[str, bool]:
            return {"database": await database_reachable(pool), "consumer": loop.started.is_set()}

        health = HealthServer(settings.health_port, readiness, settings.health_host)
        await health.start()
        try:
            await loop.run(stop)
        finally:
            await health.stop()
    finally:
        await pool.close()


async def start_dependencies(
    name: str, endpoints: StackEndpoints, stop: asyncio.Event, *, pool_size: int = 4, topics: bool = True
) -> AsyncConnectionPool | None:
    """Apply migrations, create the topics (unless ``topics`` is false) and open a pool, waiting with
    backoff while Postgres or the broker is away; None when ``stop`` is set first."""
    backoff = Backoff(f"{name} start-up")
    await backoff.call(lambda: asyncio.to_thread(apply_migrations, endpoints.database_url), stop)
    if topics:
        await backoff.call(lambda: ensure_topics(endpoints.kafka_bootstrap_servers), stop)
    if stop.is_set():
        return None
    return await backoff.call(lambda: open_pool(endpoints.database_url, max_size=pool_size, name=name), stop)


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop
