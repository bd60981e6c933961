"""webhooks entrypoint: ``python -m services.webhooks.consumer`` (composition root of the dispatcher and
of the internal API that serves the delivery log, ``services.webhooks.api``).

It reads the event store by sequence rather than through the Kafka consumer loop: deliveries are rows
written in the same transaction that advances the dispatch cursor, so a crash loses none and a restart
resumes where the cursor stands.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import Iterator

import uvicorn
from psycopg_pool import AsyncConnectionPool

from npcworld import aio
from npcworld.db import database_reachable
from npcworld.messaging import Heartbeat
from npcworld.messaging.reconnect import Backoff
from npcworld.service import configure_logging, start_dependencies
from npcworld.service_auth import required_token
from npcworld.settings import resolve_endpoints
from npcworld.telemetry import configure_telemetry
from npcworld.telemetry.health import HealthServer
from services.webhooks.api import create_app
from services.webhooks.dispatcher import Dispatcher
from services.webhooks.settings import Settings

CONSUMER = "webhooks"


async def serve(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Migrate, then dispatch until ``stop`` is set (or SIGTERM/SIGINT arrives)."""
    endpoints = resolve_endpoints(settings)
    url = endpoints.database_url
    token = required_token(settings.webhooks_api_host, "webhooks service's internal API")
    if stop is None:
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    # Postgres away (at start or later) is waited out with backoff; the dispatcher reads no Kafka.
    pool = await start_dependencies(CONSUMER, endpoints, stop, topics=False)
    if pool is None:
        return
    try:
        dispatcher = Dispatcher(pool, settings, url)

        async def readiness() -> dict[str, bool]:
            return {"database": await database_reachable(pool), "dispatcher": dispatcher.started.is_set()}

        health = HealthServer(settings.health_port, readiness, settings.health_host)
        heartbeat = Heartbeat(pool, CONSUMER, ())  # reads the store itself: owes no Kafka events
        await health.start()
        await Backoff(f"{CONSUMER} heartbeat").call(heartbeat.start, stop)
        api = asyncio.create_task(_serve_api(settings, pool, token, stop))
        try:
            await dispatcher.run(stop)
        finally:
            stop.set()
            await api
            await heartbeat.stop()
            await health.stop()
    finally:
        await pool.close()


class _ApiServer(uvicorn.Server):
    """Uvicorn inside our event loop: the process's stop event, not uvicorn, owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _serve_api(
    settings: Settings, pool: AsyncConnectionPool, token: str | None, stop: asyncio.Event
) -> None:
    """Serve the delivery log until ``stop``. A port still taken (a previous process not gone yet) is
    waited out with backoff while deliveries go on: the log is for reading, dispatching needs none of it."""
    backoff = Backoff(f"webhooks internal API on {settings.webhooks_api_host}:{settings.webhooks_api_port}")
    while True:
        try:
            sock = socket.create_server((settings.webhooks_api_host, settings.webhooks_api_port))
            break
        except OSError as exc:
            await backoff.failed(exc, stop)
            if stop.is_set():
                return
    backoff.succeeded()
    server = _ApiServer(uvicorn.Config(create_app(pool, token=token), log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    await asyncio.wait([task, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    await task
    sock.close()


def main() -> None:
    settings = Settings()
    configure_logging(settings.log_level)
    configure_telemetry(CONSUMER)
    aio.run(serve(settings))


if __name__ == "__main__":
    main()
