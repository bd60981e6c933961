"""world_state entrypoint: ``python -m services.world_state.consumer`` (consumer loop and clock ticker)."""

from __future__ import annotations

import asyncio
import signal

from npcworld import aio
from npcworld.service import ServiceContext, configure_logging, serve, start_dependencies
from npcworld.settings import resolve_endpoints
from npcworld.telemetry import configure_telemetry
from services.world_state.handlers import CONSUMER, PROJECTION, ROUTES, WorldStateDeps
from services.world_state.quiescence import PipelineProbe
from services.world_state.settings import Settings
from services.world_state.ticker import Ticker
from services.world_state.trees import TreeCache
from services.world_state.validator_client import ValidatorClient


async def run(settings: Settings, stop: asyncio.Event) -> None:
    """The consumer loop and, unless disabled, the ticker, until ``stop`` is set."""
    async with ValidatorClient.open(settings.allow_list()) as validators:
        await _run(settings, stop, validators)


async def _run(settings: Settings, stop: asyncio.Event, validators: ValidatorClient) -> None:
    endpoints = resolve_endpoints(settings)
    trees = TreeCache()

    async def deps_factory(_: ServiceContext) -> WorldStateDeps:
        return WorldStateDeps(trees, validators, settings.validator_concurrency)

    tasks = [serve(CONSUMER, settings, ROUTES, deps_factory=deps_factory, projection=PROJECTION, stop=stop)]
    # Postgres away at start is waited out (and later on too: the loop and the ticker back off).
    pool = await start_dependencies("world_state-ticker", endpoints, stop, pool_size=3, topics=False)
    if pool is None:
        return
    try:
        if settings.ticker_enabled:
            probe = PipelineProbe(
                pool, quiet_checks=settings.stepped_quiet_checks, players=settings.stepped_waits_for_players
            )
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

    aio.run(go())


if __name__ == "__main__":
    main()
