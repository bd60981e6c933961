"""Embedding spaces never mix: a stream embedded with one model refuses vectors of another."""

from __future__ import annotations

import pytest

from npcworld.embeddings import EmbeddingSpace, EmbeddingSpaceMismatchError, check_space
from npcworld.errors import PermanentError


def test_an_empty_stream_accepts_any_space() -> None:
    check_space(None, EmbeddingSpace("m", 384), "NPC 'x'")


def test_the_same_space_is_accepted() -> None:
    check_space(EmbeddingSpace("m", 384), EmbeddingSpace("m", 384), "NPC 'x'")


def test_another_model_is_refused_with_a_message_naming_both_and_the_fix() -> None:
    with pytest.raises(EmbeddingSpaceMismatchError, match="re-embed") as info:
        check_space(
            EmbeddingSpace("all-MiniLM", 384), EmbeddingSpace("text-embedding-3-small", 1536), "NPC 'x'"
        )
    assert "all-MiniLM (384 dims)" in str(info.value) and "text-embedding-3-small (1536 dims)" in str(
        info.value
    )
    assert isinstance(info.value, PermanentError)
