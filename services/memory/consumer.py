"""memory entrypoint: ``python -m services.memory.consumer`` (composition root of the memory service).

One process runs the consumer loop (events in → memories), the internal HTTP API (retrieval) on
MEMORY_API_PORT, sharing the embedder and settings, and the task that turns the accesses retrievals noted
into MemoriesAccessed events (``services.memory.accesses``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator

import uvicorn

from npcworld import aio
from npcworld.db import database_reachable, open_pool
from npcworld.embeddings import Embedder, PrefetchingEmbedder
from npcworld.llm import build_llm
from npcworld.messaging.reconnect import Backoff
from npcworld.service import configure_logging, start_dependencies
from npcworld.service_auth import required_token
from npcworld.settings import resolve_endpoints
from npcworld.telemetry import configure_telemetry
from npcworld.telemetry.health import HealthServer
from services.memory.accesses import flush_accesses_forever
from services.memory.api import create_app
from services.memory.batching import MemoryConsumerLoop
from services.memory.deps import MemoryDeps
from services.memory.gathering import DRY_RUN_CONNECTIONS
from services.memory.handlers import ROUTES
from services.memory.importance import LLMImportanceRater
from services.memory.indexing import maintain_indexes
from services.memory.projection import build_projection
from services.memory.settings import Settings

__all__ = ["CONSUMER", "main", "serve_memory"]

CONSUMER = "memory"
logger = logging.getLogger(__name__)


class _ApiServer(uvicorn.Server):
    """Uvicorn inside our event loop: the process's stop event, not uvicorn, owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_memory(
    settings: Settings,
    *,
    stop: asyncio.Event,
    embedder: Embedder | None = None,
    consumer: str = CONSUMER,
    started: asyncio.Event | None = None,
) -> None:
    """Run the consumer loop and the internal API until ``stop`` is set (``started``: API accepting)."""
    endpoints = resolve_endpoints(settings)
    url = endpoints.database_url
    token = required_token(settings.memory_api_host, "memory service's internal API")
    # Postgres away at start is waited out with backoff (later outages: the loop backs off, the API
    # answers errors that its callers retry).
    pool = await start_dependencies("memory-api", endpoints, stop, pool_size=8, topics=False)
    if pool is None:
        return
    # Call records of the importance ratings get a pool of their own. The consumer rates inside its
    # transaction, holding row locks that API retrievals may be waiting for; were the records written
    # through the API's pool, a burst of such retrievals could hold every connection while the consumer
    # waits for one: a wait cycle Postgres cannot see, broken only by the pool's timeout.
    llm_pool = await Backoff("memory-llm pool").call(
        lambda: open_pool(url, max_size=2, name="memory-llm"), stop)
    if llm_pool is None:
        await pool.close()
        return
    try:
        deps = MemoryDeps(
            embedder=PrefetchingEmbedder(embedder or settings.build_embedder()),
            rater=LLMImportanceRater(build_llm(settings, llm_pool)),
            settings=settings,
            rate_before_transaction=True,  # two phases with every provider (docs/reliability.md)
            consumer=consumer,
        )
        config = uvicorn.Config(
            create_app(deps, pool=pool, token=token), host=settings.memory_api_host,
            port=settings.memory_api_port, log_level="warning", lifespan="on",
        )
        api = _ApiServer(config)
        consumer_task = asyncio.create_task(_consume(consumer, settings, deps, stop))
        api_task = asyncio.create_task(api.serve())
        upkeep = asyncio.create_task(maintain_indexes(url, deps, stop))
        accesses = asyncio.create_task(flush_accesses_forever(pool, deps, stop))
        while not api.started and not api_task.done() and not consumer_task.done():
            await asyncio.sleep(0.02)  # uvicorn exposes no start event
        if api.started and started is not None:
            started.set()
        await asyncio.wait([consumer_task, api_task, asyncio.create_task(stop.wait())],
                           return_when=asyncio.FIRST_COMPLETED)
        stop.set()
        api.should_exit = True
        await asyncio.gather(consumer_task, api_task, upkeep, accesses)
    finally:
        await pool.close()
        await llm_pool.close()


async def _consume(name: str, settings: Settings, deps: MemoryDeps, stop: asyncio.Event) -> None:
    """npcworld.service.serve with the memory consumer loop (which embeds each poll in one call)."""
    endpoints = resolve_endpoints(settings)
    # Beside the loop's batches: a step's release and the dry runs that read for it (DRY_RUN_CONNECTIONS).
    pool = await start_dependencies(name, endpoints, stop, pool_size=4 + DRY_RUN_CONNECTIONS)
    if pool is None:
        return
    try:
        loop = MemoryConsumerLoop(name, ROUTES, deps, projection=build_projection(deps, name), pool=pool,
                                  bootstrap=endpoints.kafka_bootstrap_servers,
                                  world_first=deps.world_first, ingest_share=settings.ingest_share,
                                  claims_keep_seconds=settings.claims_keep_seconds)

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


def main() -> None:
    settings = Settings()
    configure_logging(settings.log_level)
    configure_telemetry(CONSUMER)

    async def go() -> None:
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        await serve_memory(settings, stop=stop)

    aio.run(go())


if __name__ == "__main__":
    main()
