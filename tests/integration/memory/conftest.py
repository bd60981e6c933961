"""Memory-service fixtures: the real local embedder and service deps with a fake importance rater."""

from __future__ import annotations

import pytest

from npcworld.embeddings import LocalMiniLMEmbedder
from services.memory.deps import MemoryDeps
from services.memory.settings import MemorySettings
from tests.unit.memory.fakes import FakeImportanceRater


@pytest.fixture(scope="session")
def local_embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


@pytest.fixture
def deps(local_embedder: LocalMiniLMEmbedder) -> MemoryDeps:
    return MemoryDeps(embedder=local_embedder, rater=FakeImportanceRater(), settings=MemorySettings())
