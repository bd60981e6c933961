"""webhooks settings: connections plus the retry schedule and HTTP limits of deliveries."""

from __future__ import annotations

from pydantic import Field

from npcworld.egress import AllowHostsSetting, AllowList, parse_allow_list
from npcworld.settings import CommonSettings
from services.webhooks.domain import RetryPolicy

__all__ = ["Settings"]


class Settings(CommonSettings):
    """Env names: the field names in upper case (WEBHOOK_MAX_ATTEMPTS, ...)."""

    webhook_max_attempts: int = Field(default=8, ge=1, le=50)
    webhook_backoff_base_seconds: float = Field(default=2.0, gt=0, le=3600)
    webhook_backoff_max_seconds: float = Field(default=600.0, gt=0, le=86400)
    webhook_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
    webhook_poll_seconds: float = Field(default=1.0, gt=0, le=60)
    webhook_concurrency: int = Field(default=16, ge=1, le=500)
    webhook_fanout_batch: int = Field(default=1000, ge=1, le=100000)
    webhooks_api_host: str = Field(default="127.0.0.1", min_length=1, validation_alias="WEBHOOKS_API_HOST")
    webhooks_api_port: int = Field(default=8102, ge=0, le=65535, validation_alias="WEBHOOKS_API_PORT")
    webhook_allow_hosts: AllowHostsSetting = Field(
        default="",
        description="host names, IPs or CIDRs (comma-separated) deliveries may reach despite the egress"
        " policy: development receivers only; empty = none",
    )

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            self.webhook_max_attempts, self.webhook_backoff_base_seconds, self.webhook_backoff_max_seconds
        )

    def allow_list(self) -> AllowList:
        return parse_allow_list(self.webhook_allow_hosts)
