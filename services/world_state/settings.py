"""world_state settings."""

from __future__ import annotations

from pydantic import Field

from npcworld.egress import AllowHostsSetting, AllowList, parse_allow_list
from npcworld.settings import CommonSettings

__all__ = ["Settings"]


class Settings(CommonSettings):
    """Connection settings plus the world clock's ticker and the calls to worlds' validators."""

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
    stepped_waits_for_players: bool = Field(
        default=False,
        validation_alias="world_stepped_waits_for_players",
        description="WORLD_STEPPED_WAITS_FOR_PLAYERS: a stepped clock also waits for player traffic (chats,"
        " posted perceptions) stored before its step; off: players never hold a step back",
    )
    webhook_allow_hosts: AllowHostsSetting = Field(
        default="",
        description="host names, IPs or CIDRs (comma-separated) validators may be called at despite the"
        " egress policy (WEBHOOK_ALLOW_HOSTS, as for webhooks): development validators only",
    )
    validator_concurrency: int = Field(
        default=32, ge=1, le=500, description="VALIDATOR_CONCURRENCY: validator calls in flight at once"
    )

    def allow_list(self) -> AllowList:
        return parse_allow_list(self.webhook_allow_hosts)
