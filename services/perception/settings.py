"""perception settings."""

from __future__ import annotations

from pydantic import Field

from npcworld.settings import CommonSettings

__all__ = ["Settings"]


class Settings(CommonSettings):
    """Connection settings plus vision radius and attention bandwidth (DESIGN.md: 8 tiles, 8 events)."""

    vision_radius: int = Field(default=8, ge=1, le=100, validation_alias="perception_vision_radius")
    attention_bandwidth: int = Field(
        default=8, ge=1, le=100, validation_alias="perception_attention_bandwidth"
    )
