"""gateway settings."""

from __future__ import annotations

from pydantic import Field

from npcworld.settings import CommonSettings

__all__ = ["Settings"]


class Settings(CommonSettings):
    """Connection settings plus API limits."""

    max_page_size: int = Field(default=500, ge=1, le=10000)
