"""Reflection service settings from the environment; defaults are the embedded mode; bad values fail early."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from npcworld.contracts import MemoryKind
from npcworld.errors import ConfigError
from npcworld.llm.settings import LLMSettings
from npcworld.memory_client.settings import MemoryClientSettings
from npcworld.settings import CommonSettings

__all__ = ["ReflectionSettings", "Settings", "sqlalchemy_broker_url"]


class ReflectionSettings(BaseSettings):
    """Environment variables of the reflection consumer and its Celery worker."""

    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False, populate_by_name=True)

    # DESIGN.md "Reflection": reflect when the importance since the last reflection exceeds 150.
    reflection_threshold: int = Field(default=150, ge=1, le=100_000, validation_alias="REFLECTION_THRESHOLD")
    reflection_counted_kinds: tuple[MemoryKind, ...] = Field(
        default=("observation", "dialogue"), min_length=1, validation_alias="REFLECTION_COUNTED_KINDS"
    )
    # The paper's numbers: 100 most recent memories, 30 retrieved per question.
    reflection_recent: int = Field(default=100, ge=1, le=200, validation_alias="REFLECTION_RECENT")
    reflection_retrieve_k: int = Field(default=30, ge=1, le=100, validation_alias="REFLECTION_RETRIEVE_K")
    # A run still pending after this many seconds is enqueued again (its Celery message may be lost).
    reflection_redispatch_after_s: float = Field(
        default=600.0, gt=0, validation_alias="REFLECTION_REDISPATCH_AFTER_S"
    )
    reflection_queue: str = Field(default="reflection", min_length=1, validation_alias="REFLECTION_QUEUE")
    reflection_job_retries: int = Field(default=5, ge=0, le=100, validation_alias="REFLECTION_JOB_RETRIES")
    reflection_worker_concurrency: int = Field(
        default=1, ge=1, le=64, validation_alias="REFLECTION_WORKER_CONCURRENCY"
    )
    reflection_worker_pool: Literal["prefork", "solo"] = Field(
        default="prefork", validation_alias="REFLECTION_WORKER_POOL"
    )


class Settings(CommonSettings, LLMSettings, MemoryClientSettings, ReflectionSettings):
    """Everything the reflection processes read: connections, the LLM provider, the memory API
    (MEMORY_API_URL) and reflection tuning."""

    def broker_url(self, database_url: str) -> str:
        """CELERY_BROKER_URL when set (Redis, RabbitMQ), else kombu's SQLAlchemy transport on Postgres."""
        return self.celery_broker_url or sqlalchemy_broker_url(database_url)


def sqlalchemy_broker_url(database_url: str) -> str:
    """The kombu SQLAlchemy-transport URL for a libpq-style DATABASE_URL (psycopg 3 driver).

    Raises:
        ConfigError: the URL is not a PostgreSQL URL.
    """
    parts = urlsplit(database_url)
    if parts.scheme not in ("postgresql", "postgres", "postgresql+psycopg"):
        raise ConfigError(
            f"DATABASE_URL must be a postgresql:// URL to derive the Celery broker, got {parts.scheme!r}"
        )
    return urlunsplit(parts._replace(scheme="sqla+postgresql+psycopg"))
