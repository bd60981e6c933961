"""Memory service settings from the environment; defaults are the embedded mode, bad values fail at start."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from npcworld.embeddings import LOCAL_MODEL_ID, Embedder, LocalMiniLMEmbedder, OpenAIEmbedder
from npcworld.llm.settings import LLMSettings
from npcworld.settings import CommonSettings

__all__ = ["MemorySettings", "Settings"]


class MemorySettings(BaseSettings):
    """Environment variables of the memory service (names as in DESIGN.md where it names them)."""

    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False, populate_by_name=True)

    database_url: str | None = Field(default=None, validation_alias="DATABASE_URL")
    embeddings_provider: Literal["local", "openai"] = Field(
        default="local", validation_alias="EMBEDDINGS_PROVIDER"
    )
    openai_base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    openai_api_key: str | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    embedding_model: str = Field(default="", validation_alias="EMBEDDING_MODEL")
    embedding_dimensions: int = Field(default=0, ge=0, le=16000, validation_alias="EMBEDDING_DIMENSIONS")
    # onnxruntime threads per call of the local model. One thread costs the least CPU per text (6.8 ms for a
    # 25-token sentence against 9.4 ms with two on the 2-core machine): the memory service shares the machine
    # with every other process, so CPU is what a busy town runs out of. More answer one call a little sooner.
    embedding_threads: int = Field(default=1, ge=1, le=64, validation_alias="EMBEDDING_THREADS")
    # Streams up to this size are scored exactly in one SQL scan; larger ones use the HNSW index.
    exact_scan_max: int = Field(default=5000, ge=0, validation_alias="MEMORY_EXACT_SCAN_MAX")
    # Index path (bench/memory_retrieval.py): the top MEMORY_CANDIDATE_POOL by relevance from HNSW and the top
    # MEMORY_PRIOR_POOL by importance + recency, then the memories whose importance + recency could still beat
    # the k-th best, at most MEMORY_RANGE_CAP per importance level, most recent first.
    candidate_pool: int = Field(default=128, ge=1, le=1000, validation_alias="MEMORY_CANDIDATE_POOL")
    prior_pool: int = Field(default=200, ge=1, le=5000, validation_alias="MEMORY_PRIOR_POOL")
    range_cap: int = Field(default=200, ge=1, le=100000, validation_alias="MEMORY_RANGE_CAP")
    # The least relevant memory (for min-max normalisation) comes from a plain HNSW search for the negated
    # query; this is its ef_search. A miss there shifts every relevance score: 40 gave recall@10 0.983 at
    # 100k, 100 gave 0.993 (bench/memory_retrieval.py).
    farthest_ef_search: int = Field(default=100, ge=1, le=1000, validation_alias="MEMORY_FARTHEST_EF_SEARCH")
    hnsw_ef_search: int = Field(default=100, ge=1, le=1000, validation_alias="MEMORY_HNSW_EF_SEARCH")
    # Streams with at least this many memories get an HNSW index of their own (built in the background);
    # there is no index over every stream, so a stream past exact_scan_max without one is sorted exactly.
    own_index_min: int = Field(default=5000, ge=1, validation_alias="MEMORY_OWN_INDEX_MIN")
    index_interval_seconds: float = Field(
        default=60.0, gt=0, validation_alias="MEMORY_INDEX_INTERVAL_SECONDS"
    )
    # Loopback unless a deployment says otherwise (compose sets 0.0.0.0 and NPCWORLD_SERVICE_TOKEN).
    memory_api_host: str = Field(default="127.0.0.1", min_length=1, validation_alias="MEMORY_API_HOST")
    memory_api_port: int = Field(default=8101, ge=0, le=65535, validation_alias="MEMORY_API_PORT")
    duplicate_window_hours: float = Field(
        default=24.0, gt=0, validation_alias="MEMORY_DUPLICATE_WINDOW_HOURS"
    )

    @model_validator(mode="after")
    def _check_provider(self) -> MemorySettings:
        if self.embeddings_provider == "openai":
            if not self.embedding_model:
                raise ValueError("EMBEDDING_MODEL is required when EMBEDDINGS_PROVIDER=openai")
            if self.embedding_dimensions <= 0:
                raise ValueError("EMBEDDING_DIMENSIONS is required when EMBEDDINGS_PROVIDER=openai")
        elif self.embedding_model not in ("", LOCAL_MODEL_ID):
            raise ValueError(
                f"EMBEDDING_MODEL must be {LOCAL_MODEL_ID} (or unset) with EMBEDDINGS_PROVIDER=local"
            )
        return self

    def build_embedder(self) -> Embedder:
        """The embedder these settings describe (nothing loads or connects until first use)."""
        if self.embeddings_provider == "openai":
            return OpenAIEmbedder(
                model=self.embedding_model,
                dimensions=self.embedding_dimensions,
                base_url=self.openai_base_url,
                api_key=self.openai_api_key,
            )
        return LocalMiniLMEmbedder(threads=self.embedding_threads)


class Settings(CommonSettings, LLMSettings, MemorySettings):
    """Everything the memory process reads: connections, the LLM provider and memory tuning."""
