"""Memory settings: embedded defaults, and a bad combination fails at start naming the variable."""

from __future__ import annotations

import pydantic
import pytest

from npcworld.embeddings import LocalMiniLMEmbedder, OpenAIEmbedder
from services.memory.settings import MemorySettings


def test_defaults_are_the_local_embedding_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EMBEDDINGS_PROVIDER", raising=False)
    assert isinstance(MemorySettings().build_embedder(), LocalMiniLMEmbedder)


def test_openai_embeddings_need_a_model_and_dimensions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBEDDINGS_PROVIDER", "openai")
    monkeypatch.delenv("EMBEDDING_MODEL", raising=False)
    with pytest.raises(pydantic.ValidationError, match="EMBEDDING_MODEL"):
        MemorySettings()
    monkeypatch.setenv("EMBEDDING_MODEL", "text-embedding-3-small")
    monkeypatch.setenv("EMBEDDING_DIMENSIONS", "1536")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    embedder = MemorySettings().build_embedder()
    assert isinstance(embedder, OpenAIEmbedder)
    assert (embedder.model, embedder.dimensions) == ("text-embedding-3-small", 1536)


def test_an_unknown_provider_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBEDDINGS_PROVIDER", "word2vec")
    with pytest.raises(pydantic.ValidationError, match="EMBEDDINGS_PROVIDER"):
        MemorySettings()
