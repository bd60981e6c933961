"""Entrypoint of the outbox relay process."""

from __future__ import annotations

import asyncio
import logging
import signal

from npcworld import aio
from npcworld.db import database_reachable
from npcworld.messaging import make_producer
from npcworld.outbox import OutboxRelay
from npcworld.service import start_dependencies
from npcworld.settings import CommonSettings, resolve_endpoints
from npcworld.telemetry import configure_telemetry
from npcworld.telemetry.health import HealthServer

__all__ = ["run_relay"]

logger = logging.getLogger(__name__)


def run_relay(republish_from: int | None = None) -> None:
    """Relay until SIGTERM/SIGINT; optionally republish history first."""
    configure_telemetry("relay")
    aio.run(_run(CommonSettings(), republish_from))


async def _run(settings: CommonSettings, republish_from: int | None) -> None:
    endpoints = resolve_endpoints(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # Postgres away at start is waited out, like an outage later on (the relay itself does the topics).
    pool = await start_dependencies("relay", endpoints, stop, topics=False)
    if pool is None:
        return
    relay = OutboxRelay(pool, endpoints.kafka_bootstrap_servers)

    async def readiness() -> dict[str, bool]:
        return {"database": await database_reachable(pool), "relay": relay.ready.is_set()}

    health = HealthServer(settings.health_port, readiness, settings.health_host)
    await health.start()
    try:
        if republish_from is not None:
            producer = make_producer(endpoints.kafka_bootstrap_servers, "npcworld-republish")
            await producer.start()
            try:
                count = await relay.republish(producer, republish_from)
                logger.info("republished %d events", count)
            finally:
                await producer.stop()
        await relay.run(stop)
    finally:
        await health.stop()
        await pool.close()
