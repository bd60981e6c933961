"""world_state entrypoint: ``python -m services.world_state.consumer`` (consumer loop and clock ticker)."""

from __future__ import annotations

import asyncio
import signal

from npcworld.db import apply_migrations, open_pool
from npcworld.service import ServiceContext, configure_logging, serve
from npcworld.settings import resolve_endpoints
from npcworld.telemetry import configure_telemetry
from services.world_state.handlers import CONSUMER, HANDLERS, PROJECTION, WorldStateDeps
from services.world_state.quiescence import PipelineProbe
from services.world_state.settings import Settings
from services.world_state.ticker import Ticker
from services.world_state.trees import TreeCache


async def run(settings: Settings, stop: asyncio.Event) -> None:
    """The consumer loop and, unless disabled, the ticker, until ``stop`` is set."""
    url = resolve_endpoints(settings).database_url
    await asyncio.to_thread(apply_migrations, url)
    trees = TreeCache()

    async def deps_factory(_: ServiceContext) -> WorldStateDeps:
        return WorldStateDeps(trees)

    tasks = [serve(CONSUMER, settings, HANDLERS, deps_factory=deps_factory, projection=PROJECTION, stop=stop)]
    pool = await open_pool(url, max_size=3, name="world_state-ticker")
    try:
        if settings.ticker_enabled:
            probe = PipelineProbe(pool, quiet_checks=settings.stepped_quiet_checks)
            ticker = Ticker(
                pool,
                trees,
                probe,
                poll_seconds=settings.tick_poll_seconds,
                stepped_max_wait=settings.stepped_max_wait_seconds,
            )
            tasks.append(ticker.run(stop))
        await asyncio.gather(*tasks)
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
        await run(settings, stop)

    asyncio.run(go())


if __name__ == "__main__":
    main()
