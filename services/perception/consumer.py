"""perception entrypoint: ``python -m services.perception.consumer``."""

from __future__ import annotations

from npcworld.service import run_service
from services.perception.handlers import CONSUMER, PROJECTION, ROUTES, PerceptionDeps
from services.perception.layouts import LayoutCache
from services.perception.settings import Settings


def main() -> None:
    settings = Settings()
    deps = PerceptionDeps(
        LayoutCache(), radius=settings.vision_radius, bandwidth=settings.attention_bandwidth
    )
    run_service(CONSUMER, settings, ROUTES, deps=deps, projection=PROJECTION)


if __name__ == "__main__":
    main()
