"""Where the memory service's internal API is: ``MEMORY_API_URL`` (other services mix this into Settings)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["DEFAULT_MEMORY_API_URL", "MemoryClientSettings"]

DEFAULT_MEMORY_API_URL = "http://127.0.0.1:8101"


class MemoryClientSettings(BaseSettings):
    """``memory_api_url`` from MEMORY_API_URL (default: the memory service on this machine, port 8101)."""

    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False)

    memory_api_url: str = Field(
        default=DEFAULT_MEMORY_API_URL, pattern=r"^https?://", description="memory service internal API"
    )
