"""Settings shared by every process; embedded mode when the production variables are unset."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from npcworld.errors import ConfigError

__all__ = ["CommonSettings", "StackEndpoints", "resolve_endpoints"]


class CommonSettings(BaseSettings):
    """Connection settings; every service's Settings class extends this one."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore", case_sensitive=False)

    database_url: str | None = Field(default=None, description="PostgreSQL with pgvector; unset = embedded")
    kafka_bootstrap_servers: str | None = Field(default=None, description="Kafka bootstrap; unset = embedded")
    celery_broker_url: str | None = Field(default=None, description="Celery broker; unset = Postgres")
    npcworld_home: Path = Field(default=Path(".npcworld"), description="data dir of the embedded stack")
    health_port: int = Field(default=0, ge=0, le=65535, description="port of /healthz /readyz /metrics")
    health_host: str = Field(
        default="127.0.0.1", min_length=1,
        description="address of /healthz /readyz /metrics (0.0.0.0 in a container)",
    )
    npcworld_service_token: str | None = Field(
        default=None, description="shared credential of internal APIs (npcworld.service_auth); required"
        " where one listens beyond loopback")
    ingest_share: float = Field(
        default=0.5, gt=0, le=1, description="INGEST_SHARE: the share of a consumer's time that posted"
        " perceptions' work may take while the world's events keep coming (1 = unpaced)")
    claims_keep_seconds: float = Field(
        default=600.0, ge=0, description="CLAIMS_KEEP_SECONDS: how long a consumer's claims of settled events"
        " stay rows (with their processed_at) before they are folded into its watermark")
    log_level: str = Field(default="INFO", pattern="^(DEBUG|INFO|WARNING|ERROR)$")


class StackEndpoints:
    """Where Postgres and Kafka are, whichever mode supplied them."""

    def __init__(self, database_url: str, kafka_bootstrap_servers: str, embedded: bool) -> None:
        self.database_url = database_url
        self.kafka_bootstrap_servers = kafka_bootstrap_servers
        self.embedded = embedded


def resolve_endpoints(settings: CommonSettings) -> StackEndpoints:
    """Production variables when set, otherwise the embedded stack recorded by ``npcworld up``.

    Raises:
        ConfigError: neither is available; the message says what to set or run.
    """
    db, kafka = settings.database_url, settings.kafka_bootstrap_servers
    if db and kafka:
        return StackEndpoints(db, kafka, embedded=False)
    state_file = settings.npcworld_home / "stack.json"
    if not state_file.exists():
        missing = " and ".join(
            n for n, v in (("DATABASE_URL", db), ("KAFKA_BOOTSTRAP_SERVERS", kafka)) if not v
        )
        raise ConfigError(
            f"{missing} not set and no embedded stack in {settings.npcworld_home}: "
            "start one with `npcworld up` or set the variable"
        )
    state = json.loads(state_file.read_text())
    return StackEndpoints(
        db or state["database_url"], kafka or state["kafka_bootstrap_servers"], embedded=True
    )
