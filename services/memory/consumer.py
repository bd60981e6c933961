"""memory entrypoint: ``python -m services.memory.consumer`` (composition root of the memory service)."""

from __future__ import annotations

from npcworld.llm import build_llm
from npcworld.service import ServiceContext, run_service
from services.memory.deps import MemoryDeps
from services.memory.handlers import HANDLERS
from services.memory.importance import LLMImportanceRater
from services.memory.settings import Settings

CONSUMER = "memory"


async def build_deps(ctx: ServiceContext) -> MemoryDeps:
    settings = ctx.settings
    assert isinstance(settings, Settings)
    llm = build_llm(settings, ctx.pool)
    return MemoryDeps(embedder=settings.build_embedder(), rater=LLMImportanceRater(llm), settings=settings)


def main() -> None:
    run_service(CONSUMER, Settings(), HANDLERS, deps_factory=build_deps)


if __name__ == "__main__":
    main()
