"""world_state settings."""

from __future__ import annotations

from npcworld.settings import CommonSettings

__all__ = ["Settings"]


class Settings(CommonSettings):
    """Connection settings (the world clock and tile maps arrive with the world-state issue)."""
