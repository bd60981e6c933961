"""webhooks entrypoint: ``python -m services.webhooks.consumer`` (composition root of the dispatcher).

It reads the event store by sequence rather than through the Kafka consumer loop: deliveries are rows
written in the same transaction that advances the dispatch cursor, so a crash loses none and a restart
resumes where the cursor stands.
"""

from __future__ import annotations

import asyncio
import signal

from npcworld.db import database_reachable
from npcworld.messaging import Heartbeat
from npcworld.messaging.reconnect import Backoff
from npcworld.service import configure_logging, start_dependencies
from npcworld.settings import resolve_endpoints
from npcworld.telemetry import configure_telemetry
from npcworld.telemetry.health import HealthServer
from services.webhooks.dispatcher import Dispatcher
from services.webhooks.settings import Settings

CONSUMER = "webhooks"


async def serve(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Migrate, then dispatch until ``stop`` is set (or SIGTERM/SIGINT arrives)."""
    endpoints = resolve_endpoints(settings)
    url = endpoints.database_url
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
        try:
            await dispatcher.run(stop)
        finally:
            await heartbeat.stop()
            await health.stop()
    finally:
        await pool.close()


def main() -> None:
    settings = Settings()
    configure_logging(settings.log_level)
    configure_telemetry(CONSUMER)
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
