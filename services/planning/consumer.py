"""planning entrypoint: ``python -m services.planning.consumer`` (the service's composition root)."""

from __future__ import annotations

from npcworld.llm import build_llm
from npcworld.memory_client.http import HttpMemoryReader
from npcworld.service import ServiceContext, run_service
from services.planning.deps import PlanningDeps
from services.planning.handlers import CONSUMER, EVENTS_PER_TRANSACTION, ROUTES
from services.planning.settings import Settings


async def build_deps(ctx: ServiceContext) -> PlanningDeps:
    settings = ctx.settings
    assert isinstance(settings, Settings)
    return PlanningDeps(llm=build_llm(settings, ctx.pool), memory=HttpMemoryReader(settings.memory_api_url),
                        max_npcs_per_tick=settings.max_npcs_per_tick)


def main() -> None:
    # An ingest batch waits on memory's retrievals (served after the world's work there): it is handled
    # beside the world's events, which each NPC's advisory lock keeps apart from it.
    run_service(CONSUMER, Settings(), ROUTES, deps_factory=build_deps,
                events_per_transaction=EVENTS_PER_TRANSACTION, beside=("ingest",))


if __name__ == "__main__":
    main()
