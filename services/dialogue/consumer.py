"""dialogue entrypoint: ``python -m services.dialogue.consumer`` (the composition root)."""

from __future__ import annotations

from npcworld.llm import build_llm
from npcworld.memory_client.http import HttpMemoryReader
from npcworld.service import ServiceContext, run_service
from services.dialogue.deps import DialogueDeps
from services.dialogue.handlers import ROUTES
from services.dialogue.settings import Settings

CONSUMER = "dialogue"


async def build_deps(ctx: ServiceContext) -> DialogueDeps:
    settings = ctx.settings
    assert isinstance(settings, Settings)
    return DialogueDeps(
        llm=build_llm(settings, ctx.pool),
        memory=HttpMemoryReader(settings.memory_api_url),
        rules=settings.rules(),
        retrieve_k=settings.retrieve_k,
    )


def main() -> None:
    # Players' chats are handled beside the world's events: a step's tick then never waits here for the
    # chats in progress (their replies wait on retrievals and the model), which under steady chat traffic
    # was the longest wait of a quiet step.
    run_service(CONSUMER, Settings(), ROUTES, deps_factory=build_deps, beside=("interactive",))


if __name__ == "__main__":
    main()
