"""gateway settings."""

from __future__ import annotations

from pydantic import Field

from npcworld.egress import AllowHostsSetting, AllowList, parse_allow_list
from npcworld.settings import CommonSettings
from services.gateway.limits import EdgeLimits

__all__ = ["Settings"]


class Settings(CommonSettings):
    """Connection settings plus API limits (env names: the field names in upper case)."""

    max_page_size: int = Field(default=500, ge=1, le=10000)
    memory_api_url: str = Field(default="http://127.0.0.1:8101", pattern=r"^https?://")  # MEMORY_API_URL
    # WEBHOOKS_API_URL: the webhooks service's internal API, which keeps the delivery log.
    webhooks_api_url: str = Field(default="http://127.0.0.1:8102", pattern=r"^https?://")
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
    gateway_max_body_bytes: int = Field(
        default=1024 * 1024, ge=1024, description="larger request bodies get 413 before they are read"
    )
    gateway_body_timeout_seconds: float = Field(
        default=10.0, gt=0, le=600, description="a body not all there this long after the request gets 408"
    )
    gateway_max_headers: int = Field(default=100, ge=10, le=10000, description="more headers get 431")
    gateway_max_header_bytes: int = Field(
        default=16 * 1024, ge=1024, description="more bytes of header names and values get 431"
    )
    webhook_allow_hosts: AllowHostsSetting = Field(
        default="",
        description="host names, IPs or CIDRs (comma-separated) webhooks may be registered for despite the"
        " egress policy (WEBHOOK_ALLOW_HOSTS, read by the dispatcher too): development receivers only",
    )

    def edge_limits(self) -> EdgeLimits:
        return EdgeLimits(self.gateway_max_body_bytes, self.gateway_body_timeout_seconds,
                          self.gateway_max_headers, self.gateway_max_header_bytes)

    def allow_list(self) -> AllowList:
        return parse_allow_list(self.webhook_allow_hosts)
