"""Composition root shared by every service process: settings → pool → consumer loop + health endpoint."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from psycopg_pool import AsyncConnectionPool

from npcworld.db import apply_migrations, open_pool
from npcworld.messaging import ConsumerLoop, Handler, Prepare, ensure_topics
from npcworld.projection import Projection
from npcworld.settings import CommonSettings, StackEndpoints, resolve_endpoints
from npcworld.telemetry import configure_telemetry
from npcworld.telemetry.health import HealthServer

__all__ = ["ServiceContext", "configure_logging", "run_service", "serve"]

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
    handlers: Mapping[str, Handler[Any]],
    *,
    deps: Any = None,
    deps_factory: DepsFactory | None = None,
    projection: Projection | None = None,
    prepare: Prepare[Any] | None = None,
) -> None:
    """Run a service until SIGTERM or SIGINT (blocking)."""
    configure_logging(settings.log_level)
    configure_telemetry(name)
    asyncio.run(serve(name, settings, handlers, deps=deps, deps_factory=deps_factory, projection=projection,
                      prepare=prepare))


async def serve(
    name: str,
    settings: CommonSettings,
    handlers: Mapping[str, Handler[Any]],
    *,
    deps: Any = None,
    deps_factory: DepsFactory | None = None,
    projection: Projection | None = None,
    stop: asyncio.Event | None = None,
    prepare: Prepare[Any] | None = None,
) -> None:
    """Migrate, create topics, then consume until ``stop`` is set (or a signal arrives)."""
    endpoints = resolve_endpoints(settings)
    await asyncio.to_thread(apply_migrations, endpoints.database_url)
    await ensure_topics(endpoints.kafka_bootstrap_servers)
    stop = stop or _stop_on_signals()
    pool = await open_pool(endpoints.database_url, max_size=4, name=name)
    try:
        if deps_factory is not None:
            deps = await deps_factory(ServiceContext(settings, endpoints, pool))
        loop = ConsumerLoop(name, handlers, deps, projection=projection, pool=pool,
                            bootstrap=endpoints.kafka_bootstrap_servers, prepare=prepare)

        async def readiness() -> dict[str, bool]:
            async with pool.connection() as conn:
                await conn.execute("SELECT 1")
            return {"database": True, "consumer": loop.started.is_set()}

        health = HealthServer(settings.health_port, readiness)
        await health.start()
        try:
            await loop.run(stop)
        finally:
            await health.stop()
    finally:
        await pool.close()


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop
