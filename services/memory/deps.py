"""What the memory handlers and retrieval need, built once by the entrypoint and passed down."""

from __future__ import annotations

from dataclasses import dataclass, field

from npcworld.embeddings import Embedder
from npcworld.lanes import WorldFirst
from services.memory.domain import ImportanceRater
from services.memory.repository import MemoryRepository
from services.memory.settings import MemorySettings

__all__ = ["MemoryDeps"]


@dataclass(frozen=True)
class MemoryDeps:
    """The memory service's ports and settings."""

    embedder: Embedder
    rater: ImportanceRater
    repository: MemoryRepository = field(default_factory=MemoryRepository)
    settings: MemorySettings = field(default_factory=MemorySettings)
    # A poll's ratings are made before its transaction (a dry run of the handlers finds them); the service
    # always does so (two-phase handlers), False is for tests that watch ratings made inside.
    rate_before_transaction: bool = False
    # Shared by the consumer loop and the internal API: retrievals for ingest traffic let the world go first.
    world_first: WorldFirst = field(default_factory=WorldFirst)
    # The consumer the service's own events are claimed for where they are appended and folded.
    consumer: str = "memory"
