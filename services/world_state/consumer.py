"""world_state entrypoint: ``python -m services.world_state.consumer``."""

from __future__ import annotations

from npcworld.service import run_service
from services.world_state.handlers import CONSUMER, HANDLERS, PROJECTION
from services.world_state.settings import Settings


def main() -> None:
    run_service(CONSUMER, Settings(), HANDLERS, deps=None, projection=PROJECTION)


if __name__ == "__main__":
    main()
