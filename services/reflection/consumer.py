"""reflection entrypoint: ``python -m services.reflection.consumer`` (composition root of the consumer)."""

from __future__ import annotations

from npcworld.service import ServiceContext, run_service
from services.reflection.celery_app import CeleryJobQueue, create_celery
from services.reflection.deps import ConsumerDeps
from services.reflection.handlers import ROUTES
from services.reflection.settings import Settings

CONSUMER = "reflection"


async def build_deps(ctx: ServiceContext) -> ConsumerDeps:
    settings = ctx.settings
    assert isinstance(settings, Settings)
    app = create_celery(settings, settings.broker_url(ctx.endpoints.database_url))
    return ConsumerDeps(queue=CeleryJobQueue(app, settings.reflection_queue), settings=settings)


def main() -> None:
    run_service(CONSUMER, Settings(), ROUTES, deps_factory=build_deps)


if __name__ == "__main__":
    main()
