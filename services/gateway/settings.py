"""gateway settings."""

from __future__ import annotations

from pydantic import Field

from npcworld.egress import AllowHostsSetting, AllowList, parse_allow_list
from npcworld.settings import CommonSettings

__all__ = ["Settings"]


class Settings(CommonSettings):
    """Connection settings plus API limits (env names: the field names in upper case)."""

    max_page_size: int = Field(default=500, ge=1, le=10000)
    memory_api_url: str = Field(default="http://127.0.0.1:8101", pattern=r"^https?://")  # MEMORY_API_URL
    gateway_rate_limit_per_second: float = Field(
        default=50.0, gt=0, description="default refill rate per key"
    )
    gateway_rate_limit_burst: int = Field(default=100, ge=1, description="default bucket size per key")
    gateway_idempotency_ttl_seconds: float = Field(
        default=86400.0, gt=0, description="how long keys are kept"
    )
    gateway_operator_key: str | None = Field(
        default=None,
        min_length=16,
        description="bearer secret for POST /v1/tenants; unset = tenants only via CLI",
    )
    gateway_sse_poll_seconds: float = Field(
        default=1.0, gt=0, le=60, description="stream poll without NOTIFY"
    )
    gateway_sse_keepalive_seconds: float = Field(default=15.0, gt=0, le=300)
    webhook_allow_hosts: AllowHostsSetting = Field(
        default="",
        description="host names, IPs or CIDRs (comma-separated) webhooks may be registered for despite the"
        " egress policy (WEBHOOK_ALLOW_HOSTS, read by the dispatcher too): development receivers only",
    )

    def allow_list(self) -> AllowList:
        return parse_allow_list(self.webhook_allow_hosts)
