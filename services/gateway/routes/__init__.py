"""Route modules of the gateway, one per resource; each exposes ``router`` (a FastAPI APIRouter).

A new resource adds its module to ``ROUTER_MODULES``; ``create_app`` includes them in this order.
"""

from __future__ import annotations

import importlib

from fastapi import APIRouter

__all__ = ["ROUTER_MODULES", "routers"]

ROUTER_MODULES: tuple[str, ...] = ("worlds", "keys", "sessions", "webhooks", "stream", "usage", "memories",
                                    "simulation", "rules", "validators", "canon", "dialogue", "chat_stream",
                                    "plans", "designer", "players")


def routers() -> list[APIRouter]:
    """Every resource router, imported when the app is built (never at package import)."""
    return [importlib.import_module(f"services.gateway.routes.{name}").router for name in ROUTER_MODULES]
