"""gateway projection entrypoint: ``python -m services.gateway.consumer`` (the API: ``services.gateway.api``).

Folds the other services' events into the gateway's read models (services/gateway/handlers.py). It reacts to
nothing and no cognition reads what it writes, so stepped clocks do not wait for it (``paces_steps=False``);
reads wait for it instead, boundedly (services/gateway/freshness.py).
"""

from __future__ import annotations

from npcworld.service import run_service
from services.gateway.handlers import CONSUMER, PROJECTION, ROUTES
from services.gateway.settings import Settings


def main() -> None:
    run_service(CONSUMER, Settings(), ROUTES, projection=PROJECTION, paces_steps=False)


if __name__ == "__main__":
    main()
