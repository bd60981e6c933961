"""world_state settings."""

from __future__ import annotations

from pydantic import Field

from npcworld.settings import CommonSettings

__all__ = ["Settings"]


class Settings(CommonSettings):
    """Connection settings plus the world clock's ticker."""

    ticker_enabled: bool = Field(
        default=True,
        description="WORLD_TICKER_ENABLED: run the clock ticker here",
        validation_alias="world_ticker_enabled",
    )
    tick_poll_seconds: float = Field(
        default=0.01,
        gt=0,
        le=5,
        validation_alias="world_tick_poll_seconds",
        description="how often the ticker looks for due clocks",
    )
    stepped_max_wait_seconds: float = Field(
        default=600,
        gt=0,
        le=86400,
        validation_alias="world_stepped_max_wait_seconds",
        description="a stepped clock ticks anyway after waiting this long for a consumer that is behind",
    )
    stepped_quiet_checks: int = Field(default=1, ge=1, le=100, validation_alias="world_stepped_quiet_checks")
